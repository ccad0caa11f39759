//! ARP, as tcpdump prints it without -v.

use super::{Ctx, R, Trunc, be16, bytes, ipv4, linkaddr, text, u8_at};

fn hardware_name(hrd: u16) -> Option<&'static str> {
    Some(match hrd {
        1 => "Ethernet",
        6 => "TokenRing",
        7 => "ArcNet",
        15 => "FrameRelay",
        19 => "ATM",
        23 => "Strip",
        24 => "IEEE 1394",
        32 => "InfiniBand",
        _ => return None,
    })
}

pub fn arp(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "arp";
    let hrd = be16(data, 0)?;
    let pro = be16(data, 2)?;
    let hln = usize::from(u8_at(data, 4)?);
    let pln = usize::from(u8_at(data, 5)?);
    let op = be16(data, 6)?;
    let sha = 8;
    let spa = sha + hln;
    let tha = spa + pln;
    let tpa = tha + hln;
    if data.len() < tpa + pln {
        return Err(Trunc);
    }
    ctx.s("ARP, ");
    let ip_like = pro == 0x0800 || pro == 0x1000;
    if !ip_like || pln != 4 || hln == 0 {
        match hardware_name(hrd) {
            Some(name) => ctx.f(format_args!("{name} (len {hln}), ")),
            None => ctx.f(format_args!("Unknown Hardware ({hrd}) (len {hln}), ")),
        }
        match super::link::ethertype_name(pro) {
            Some(name) => ctx.f(format_args!("{name} (len {pln})")),
            None => ctx.f(format_args!("Unknown Protocol (0x{pro:04x}) (len {pln})")),
        }
        ctx.f(format_args!(", length {length}"));
        return Ok(());
    }
    let op_name = match op {
        1 => Some("Request"),
        2 => Some("Reply"),
        3 => Some("Reverse Request"),
        4 => Some("Reverse Reply"),
        8 => Some("Inverse Request"),
        9 => Some("Inverse Reply"),
        10 => Some("NACK Reply"),
        _ => None,
    };
    match op_name {
        Some(name) => ctx.f(format_args!("{name} ")),
        None => ctx.f(format_args!("Unknown ({op}) ")),
    }
    let ip_at = |ctx: &mut Ctx, at: usize| -> R {
        ipv4(ctx.out, bytes(data, at, 4)?);
        Ok(())
    };
    let hw_at = |ctx: &mut Ctx, at: usize| -> R {
        linkaddr(ctx.out, bytes(data, at, hln)?);
        Ok(())
    };
    match op {
        1 => {
            ctx.s("who-has ");
            ip_at(ctx, tpa)?;
            if bytes(data, tha, hln)?.iter().any(|b| *b != 0) {
                ctx.s(" (");
                hw_at(ctx, tha)?;
                ctx.s(")");
            }
            ctx.s(" tell ");
            ip_at(ctx, spa)?;
        }
        2 => {
            ip_at(ctx, spa)?;
            ctx.s(" is-at ");
            hw_at(ctx, sha)?;
        }
        3 => {
            ctx.s("who-is ");
            hw_at(ctx, tha)?;
            ctx.s(" tell ");
            hw_at(ctx, sha)?;
        }
        4 => {
            hw_at(ctx, tha)?;
            ctx.s(" at ");
            ip_at(ctx, tpa)?;
        }
        8 => {
            ctx.s("who-is ");
            hw_at(ctx, tha)?;
            ctx.s(" tell ");
            hw_at(ctx, sha)?;
        }
        9 => {
            hw_at(ctx, sha)?;
            ctx.s(" at ");
            ip_at(ctx, spa)?;
        }
        _ => {
            text::hexdump(ctx.out, data, data.len());
            return Ok(());
        }
    }
    ctx.f(format_args!(", length {length}"));
    Ok(())
}
