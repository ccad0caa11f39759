//! GRE (IP protocol 47) as tcpdump 4.99's print-gre.c prints it without -v:
//! "GREv0, key=0x2a, seq 7, length N: " and then the inner packet (IPv4,
//! IPv6, or an Ethernet frame for TEB); GREv1 (PPTP) with its call, seq and
//! ack, and the PPP payload when it carries IPv4 or IPv6.

use super::{Ctx, R, Trunc, be16, be32, ip, link, text};

const CHECKSUM: u16 = 0x8000;
const ROUTING: u16 = 0x4000;
const KEY: u16 = 0x2000;
const SEQUENCE: u16 = 0x1000;
const ACK: u16 = 0x0080;

/// Takes `n` bytes of the header: Trunc when not captured or past `length`.
fn take<'a>(data: &mut &'a [u8], length: &mut usize, n: usize) -> R<&'a [u8]> {
    if *length < n || data.len() < n {
        return Err(Trunc);
    }
    let (head, rest) = data.split_at(n);
    *data = rest;
    *length -= n;
    Ok(head)
}

pub fn gre(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "gre";
    let flags = be16(data, 0)?;
    if length < 2 {
        return Err(Trunc);
    }
    let version = flags & 0x7;
    ctx.f(format_args!("GREv{version}"));
    match version {
        0 => version0(ctx, data, length),
        1 => version1(ctx, data, length),
        _ => {
            ctx.s(" ERROR: unknown-version");
            Ok(())
        }
    }
}

fn version0(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    let (mut rest, mut left) = (data, length);
    let flags = be16(take(&mut rest, &mut left, 2)?, 0)?;
    let protocol = be16(take(&mut rest, &mut left, 2)?, 0)?;
    if flags & (CHECKSUM | ROUTING) != 0 {
        take(&mut rest, &mut left, 2)?; // checksum: printed with -v only
        let offset = be16(take(&mut rest, &mut left, 2)?, 0)?;
        ctx.f(format_args!(", off 0x{offset:x}"));
    }
    if flags & KEY != 0 {
        let key = be32(take(&mut rest, &mut left, 4)?, 0)?;
        ctx.f(format_args!(", key=0x{key:x}"));
    }
    if flags & SEQUENCE != 0 {
        let seq = be32(take(&mut rest, &mut left, 4)?, 0)?;
        ctx.f(format_args!(", seq {seq}"));
    }
    if flags & ROUTING != 0 {
        // Source route entries (RFC 1701, obsolete): skipped up to the
        // empty one that ends them.
        loop {
            let entry = take(&mut rest, &mut left, 4)?;
            let (family, sre_length) = (be16(entry, 0)?, usize::from(entry[3]));
            if family == 0 && sre_length == 0 {
                break;
            }
            take(&mut rest, &mut left, sre_length)?;
        }
    }
    ctx.f(format_args!(", length {length}: "));
    match protocol {
        0x0800 => ip::ip4(ctx, rest, left),
        0x86dd => ip::ip6(ctx, rest, left),
        0x6558 => link::ether(ctx, rest, left),
        _ => {
            ctx.f(format_args!("gre-proto-0x{protocol:x}"));
            Ok(())
        }
    }
}

fn version1(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    let (mut rest, mut left) = (data, length);
    let flags = be16(take(&mut rest, &mut left, 2)?, 0)?;
    let protocol = be16(take(&mut rest, &mut left, 2)?, 0)?;
    if flags & KEY != 0 {
        let key = be32(take(&mut rest, &mut left, 4)?, 0)?;
        ctx.f(format_args!(", call {}", key & 0xffff));
    }
    if flags & SEQUENCE != 0 {
        let seq = be32(take(&mut rest, &mut left, 4)?, 0)?;
        ctx.f(format_args!(", seq {seq}"));
    }
    if flags & ACK != 0 {
        let ack = be32(take(&mut rest, &mut left, 4)?, 0)?;
        ctx.f(format_args!(", ack {ack}"));
    }
    if flags & SEQUENCE == 0 {
        ctx.s(", no-payload");
    }
    ctx.f(format_args!(", length {length}"));
    if flags & SEQUENCE == 0 {
        return Ok(());
    }
    ctx.s(": ");
    match protocol {
        0x880b => ppp(ctx, rest, left),
        _ => {
            ctx.f(format_args!("gre-proto-0x{protocol:x}"));
            Ok(())
        }
    }
}

/// PPP in PPTP: an optional 0xff03 address and control, a one- or two-byte
/// protocol; IPv4 and IPv6 are printed, other protocols as tcpdump prints
/// a protocol it does not know.
fn ppp(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "ppp";
    if data.len() < 2 || length < 2 {
        return Err(Trunc);
    }
    let (mut rest, mut left) = (data, length);
    if rest[0] == 0xff && rest[1] == 0x03 {
        take(&mut rest, &mut left, 2)?;
    }
    let first = *rest.first().ok_or(Trunc)?;
    let protocol = if first & 1 == 1 {
        take(&mut rest, &mut left, 1)?;
        u16::from(first)
    } else {
        be16(take(&mut rest, &mut left, 2)?, 0)?
    };
    match protocol {
        0x0021 => ip::ip4(ctx, rest, left),
        0x0057 => ip::ip6(ctx, rest, left),
        _ => {
            ctx.f(format_args!("unknown PPP protocol (0x{protocol:04x}) "));
            text::hex_print(ctx.out, rest, left);
            Ok(())
        }
    }
}
