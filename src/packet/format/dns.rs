//! DNS as tcpdump prints it without -v: `36909+ A? name. (30)` for queries,
//! `36909 1/0/0 A 1.2.3.4 (46)` for responses.

use super::dns_name::{class_name, fqdn, nskip, type_name};
use super::{Ctx, R, Trunc, be16, be32, bytes, ipv4, ipv6, printn, u8_at};

const OPS: [&str; 16] = [
    "",
    " inv_q",
    " stat",
    " op3",
    " notify",
    " update",
    " op6",
    " op7",
    " op8",
    " updateA",
    " updateD",
    " updateDA",
    " updateM",
    " updateMA",
    " zoneInit",
    " zoneRef",
];

const RESP: [&str; 24] = [
    "",
    " FormErr",
    " ServFail",
    " NXDomain",
    " NotImp",
    " Refused",
    " YXDomain",
    " YXRRSet",
    " NXRRSet",
    " NotAuth",
    " NotZone",
    " Resp11",
    " Resp12",
    " Resp13",
    " Resp14",
    " NoChange",
    " BadVers",
    "Resp17",
    " Resp18",
    " Resp19",
    " Resp20",
    "Resp21",
    " Resp22",
    " BadCookie",
];

/// A question: " A? name." Returns the offset after it, None to truncate.
fn qprint(ctx: &mut Ctx, bp: &[u8], cp: usize, mdns: bool) -> R<Option<usize>> {
    let Some(after) = nskip(bp, cp) else {
        return Ok(None);
    };
    if bp.len() < after + 4 {
        return Ok(None);
    }
    let qtype = be16(bp, after)?;
    let raw_class = be16(bp, after + 2)?;
    match type_name(qtype) {
        Some(n) => ctx.f(format_args!(" {n}")),
        None => ctx.f(format_args!(" Type{qtype}")),
    }
    let class = if mdns { raw_class & 0x7fff } else { raw_class };
    if class != 1 {
        match class_name(class) {
            Some(n) => ctx.f(format_args!(" {n}")),
            None => ctx.f(format_args!(" (Class {class})")),
        }
    }
    if mdns {
        ctx.s(if raw_class & 0x8000 != 0 {
            " (QU)"
        } else {
            " (QM)"
        });
    }
    ctx.s("? ");
    Ok(fqdn(ctx, bp, cp)?.map(|p| p + 4))
}

/// An answer record. Ok(None) means tcpdump's NULL (truncate); the
/// snapend sentinel (`bp.len()`) is returned where tcpdump returns snapend.
fn rprint(ctx: &mut Ctx, bp: &[u8], cp: usize, mdns: bool) -> R<Option<usize>> {
    let Some(mut cp) = nskip(bp, cp) else {
        return Ok(Some(bp.len()));
    };
    if bp.len() < cp + 10 {
        return Ok(Some(bp.len()));
    }
    let typ = be16(bp, cp)?;
    cp += 2;
    let raw_class = be16(bp, cp)?;
    cp += 2;
    let class = if mdns { raw_class & 0x7fff } else { raw_class };
    if class != 1 && typ != 41 {
        match class_name(class) {
            Some(n) => ctx.f(format_args!(" {n}")),
            None => ctx.f(format_args!(" (Class {class})")),
        }
    }
    if mdns && raw_class & 0x8000 != 0 {
        ctx.s(" (Cache flush)");
    }
    let mut opt_flags = 0u16;
    if typ == 41 {
        cp += 2;
        opt_flags = be16(bp, cp)?;
        cp += 2;
    } else {
        cp += 4;
    }
    let len = usize::from(be16(bp, cp)?);
    cp += 2;
    let rp = cp + len;
    match type_name(typ) {
        Some(n) => ctx.f(format_args!(" {n}")),
        None => ctx.f(format_args!(" Type{typ}")),
    }
    if rp > bp.len() {
        return Ok(None);
    }
    match typ {
        1 => {
            let Ok(a) = bytes(bp, cp, 4) else {
                return Ok(None);
            };
            ctx.s(" ");
            ipv4(ctx.out, a);
        }
        2 | 5 | 12 | 39 => {
            ctx.s(" ");
            if fqdn(ctx, bp, cp)?.is_none() {
                return Ok(None);
            }
        }
        15 => {
            ctx.s(" ");
            if bp.len() < cp + 2 {
                return Ok(None);
            }
            if fqdn(ctx, bp, cp + 2)?.is_none() {
                return Ok(None);
            }
            ctx.f(format_args!(" {}", be16(bp, cp)?));
        }
        16 => {
            while cp < rp {
                ctx.s(" \"");
                let n = usize::from(u8_at(bp, cp)?);
                printn(ctx.out, bp, cp + 1, n)?;
                cp += 1 + n;
                ctx.s("\"");
            }
        }
        33 => {
            ctx.s(" ");
            if bp.len() < cp + 6 {
                return Ok(None);
            }
            if fqdn(ctx, bp, cp + 6)?.is_none() {
                return Ok(None);
            }
            ctx.f(format_args!(
                ":{} {} {}",
                be16(bp, cp + 4)?,
                be16(bp, cp)?,
                be16(bp, cp + 2)?
            ));
        }
        28 => {
            let Ok(a) = bytes(bp, cp, 16) else {
                return Ok(None);
            };
            ctx.s(" ");
            ipv6(ctx.out, a);
        }
        256 => {
            if bp.len() < cp + len || len < 4 {
                return Ok(None);
            }
            ctx.f(format_args!(" {} {} ", be16(bp, cp)?, be16(bp, cp + 2)?));
            printn(ctx.out, bp, cp + 4, len - 4)?;
        }
        41 => {
            ctx.f(format_args!(" UDPsize={class}"));
            if opt_flags & 0x8000 != 0 {
                ctx.s(" DO");
            }
            if cp < rp {
                ctx.s(" [");
                while cp < rp {
                    match eopt(ctx, bp, cp)? {
                        Some(next) => cp = next,
                        None => return Ok(None),
                    }
                    if cp < rp {
                        ctx.s(",");
                    }
                }
                ctx.s("]");
            }
        }
        _ => {}
    }
    Ok(Some(rp))
}

fn eopt(ctx: &mut Ctx, bp: &[u8], cp: usize) -> R<Option<usize>> {
    let opt = be16(bp, cp)?;
    let name = match opt {
        1 => "LLQ",
        2 => "UL",
        3 => "NSID",
        5 => "DAU",
        6 => "DHU",
        7 => "N3U",
        8 => "ECS",
        9 => "EXPIRE",
        10 => "COOKIE",
        11 => "KEEPALIVE",
        12 => "PADDING",
        13 => "CHAIN",
        14 => "KEY-TAG",
        16 => "CLIENT-TAG",
        17 => "SERVER-TAG",
        _ => "",
    };
    if name.is_empty() {
        ctx.f(format_args!("Opt{opt}"));
    } else {
        ctx.s(name);
    }
    let len = usize::from(be16(bp, cp + 2)?);
    let d = cp + 4;
    bytes(bp, d, len)?;
    if len > 0 {
        ctx.s(" ");
        match opt {
            10 => {
                if len < 8 || (len > 8 && len < 16) || len > 40 {
                    ctx.s(" (invalid)");
                } else {
                    for i in 0..len {
                        if i == 8 {
                            ctx.s(" ");
                        }
                        ctx.f(format_args!("{:02x}", u8_at(bp, d + i)?));
                    }
                }
            }
            11 => {
                if len != 2 {
                    ctx.s(" (invalid)");
                } else {
                    ctx.f(format_args!("{:.1} sec", f64::from(be16(bp, d)?) / 10.0));
                }
            }
            9 => {
                if len != 4 {
                    ctx.s(" (invalid)");
                } else {
                    ctx.f(format_args!("{} sec", be32(bp, d)?));
                }
            }
            12 => ctx.f(format_args!("({len})")),
            14 => {
                if !len.is_multiple_of(2) {
                    ctx.s(" (invalid)");
                } else {
                    let mut i = 0;
                    while i < len {
                        if i > 0 {
                            ctx.s(" ");
                        }
                        ctx.f(format_args!("{}", be16(bp, d + i)?));
                        i += 2;
                    }
                }
            }
            8 => ecs(ctx, bp, d, len)?,
            _ => {
                for i in 0..len {
                    ctx.f(format_args!("{:02x}", u8_at(bp, d + i)?));
                }
            }
        }
    }
    Ok(Some(d + len))
}

fn ecs(ctx: &mut Ctx, bp: &[u8], d: usize, len: usize) -> R {
    if len < 4 {
        ctx.s(" (invalid)");
        return Ok(());
    }
    let family = be16(bp, d)?;
    let src_len = usize::from(u8_at(bp, d + 2)?);
    let scope_len = usize::from(u8_at(bp, d + 3)?);
    let bits = match family {
        1 => 32,
        2 => 128,
        _ => {
            ctx.s(" (invalid)");
            return Ok(());
        }
    };
    if len - 4 > bits / 8 || src_len > bits || scope_len > bits || src_len.div_ceil(8) != len - 4 {
        ctx.s(" (invalid)");
        return Ok(());
    }
    let mut padded = [0u8; 16];
    padded[..len - 4].copy_from_slice(bytes(bp, d + 4, len - 4)?);
    if family == 1 {
        ipv4(ctx.out, &padded[..4]);
    } else {
        ipv6(ctx.out, &padded);
    }
    ctx.f(format_args!("/{src_len}/{scope_len}"));
    Ok(())
}

/// domain_print: the whole message. `length` excludes UDP/TCP headers.
pub fn domain(ctx: &mut Ctx, data: &[u8], length: usize, over_tcp: bool, mdns: bool) -> R {
    ctx.proto = "domain";
    let mut bp = data;
    let mut length = length;
    if over_tcp {
        if length < 2 {
            ctx.f(format_args!(
                " [DNS over TCP: length {length} < 2] (invalid)"
            ));
            return Ok(());
        }
        length -= 2;
        let prefix = usize::from(be16(bp, 0)?);
        if prefix != length {
            ctx.f(format_args!(
                " [prefix length({prefix}) != length({length})] (invalid)"
            ));
            return Ok(());
        }
        bp = &bp[2..];
        ctx.s(" ");
    }
    // The message ends at its length even if more was captured.
    let bp = &bp[..bp.len().min(length)];
    if length < 12 {
        ctx.f(format_args!("domain [length {length} < 12] (invalid)"));
        return Ok(());
    }
    let id = be16(bp, 0)?;
    let flags = be16(bp, 2)?;
    let qdcount = be16(bp, 4)?;
    let ancount = be16(bp, 6)?;
    let nscount = be16(bp, 8)?;
    let arcount = be16(bp, 10)?;
    let mut rcode = flags & 0x000f;
    extended_rcode(bp, qdcount, ancount, nscount, arcount, &mut rcode);
    let opcode = usize::from((flags >> 11) & 0xf);
    let trunc_here = || -> R { Err(Trunc) };
    if flags & 0x8000 != 0 {
        let rc = usize::from(rcode);
        let rtext = if rc < RESP.len() {
            RESP[rc].to_string()
        } else {
            format!(" Resp{}", rc & 0xfff)
        };
        ctx.f(format_args!(
            "{id}{}{rtext}{}{}{}{}",
            OPS[opcode],
            if flags & 0x0400 != 0 { "*" } else { "" },
            if flags & 0x0080 != 0 { "" } else { "-" },
            if flags & 0x0200 != 0 { "|" } else { "" },
            if flags & 0x0020 != 0 { "$" } else { "" },
        ));
        if qdcount != 1 {
            ctx.f(format_args!(" [{qdcount}q]"));
        }
        let mut cp = 12usize;
        for i in 0..qdcount {
            if i != 0 {
                ctx.s(",");
            }
            match nskip(bp, cp) {
                Some(next) => cp = next + 4,
                None => return trunc_here(),
            }
        }
        ctx.f(format_args!(" {ancount}/{nscount}/{arcount}"));
        let mut left = ancount;
        if left > 0 {
            match rprint(ctx, bp, cp, mdns)? {
                Some(next) => cp = next,
                None => return trunc_here(),
            }
            left -= 1;
            while cp < bp.len() && left > 0 {
                ctx.s(",");
                match rprint(ctx, bp, cp, mdns)? {
                    Some(next) => cp = next,
                    None => return trunc_here(),
                }
                left -= 1;
            }
        }
        if left > 0 {
            return trunc_here();
        }
    } else {
        ctx.f(format_args!(
            "{id}{}{}{}",
            OPS[opcode],
            if flags & 0x0100 != 0 { "+" } else { "" },
            if flags & 0x0010 != 0 { "%" } else { "" },
        ));
        if flags & 0x6cf != 0 {
            ctx.f(format_args!(" [b2&3=0x{flags:x}]"));
        }
        if opcode == 1 {
            if qdcount != 0 {
                ctx.f(format_args!(" [{qdcount}q]"));
            }
            if ancount != 1 {
                ctx.f(format_args!(" [{ancount}a]"));
            }
        } else {
            if ancount != 0 {
                ctx.f(format_args!(" [{ancount}a]"));
            }
            if qdcount != 1 {
                ctx.f(format_args!(" [{qdcount}q]"));
            }
        }
        if nscount != 0 {
            ctx.f(format_args!(" [{nscount}n]"));
        }
        if arcount != 0 {
            ctx.f(format_args!(" [{arcount}au]"));
        }
        let mut cp = 12usize;
        let mut left = qdcount;
        if left > 0 {
            match qprint(ctx, bp, cp, mdns)? {
                Some(next) => cp = next,
                None => return trunc_here(),
            }
            left -= 1;
            while cp < bp.len() && left > 0 {
                match qprint(ctx, bp, cp, mdns)? {
                    Some(next) => cp = next,
                    None => return trunc_here(),
                }
                left -= 1;
            }
        }
        if left > 0 {
            return trunc_here();
        }
    }
    ctx.f(format_args!(" ({length})"));
    Ok(())
}

/// The OPT record's extended rcode bits, found the way tcpdump finds them.
fn extended_rcode(bp: &[u8], qd: u16, an: u16, ns: u16, ar: u16, rcode: &mut u16) {
    let mut cp = 12usize;
    for _ in 0..qd {
        let Some(next) = nskip(bp, cp) else { return };
        cp = next + 4;
        if cp >= bp.len() {
            return;
        }
    }
    for _ in 0..(u32::from(an) + u32::from(ns)) {
        let Some(next) = nskip(bp, cp) else { return };
        cp = next + 8;
        if cp + 2 > bp.len() {
            return;
        }
        let Ok(rdlen) = be16(bp, cp) else { return };
        cp += 2 + usize::from(rdlen);
        if cp >= bp.len() {
            return;
        }
    }
    for _ in 0..ar {
        let Some(next) = nskip(bp, cp) else { return };
        cp = next;
        if cp + 2 > bp.len() {
            return;
        }
        let Ok(typ) = be16(bp, cp) else { return };
        cp += 4;
        if cp + 1 > bp.len() {
            return;
        }
        if typ == 41 {
            if let Ok(ext) = u8_at(bp, cp) {
                *rcode |= u16::from(ext) << 4;
            }
            return;
        }
        cp += 4;
        if cp + 2 > bp.len() {
            return;
        }
        let Ok(rdlen) = be16(bp, cp) else { return };
        cp += 2 + usize::from(rdlen);
        if cp >= bp.len() {
            return;
        }
    }
}
