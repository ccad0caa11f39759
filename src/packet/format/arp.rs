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

/// The operation's name and a space, as arp_print's tok2str gives it.
fn operation(ctx: &mut Ctx, op: u16) {
    let name = match op {
        1 => "Request",
        2 => "Reply",
        3 => "Reverse Request",
        4 => "Reverse Reply",
        8 => "Inverse Request",
        9 => "Inverse Reply",
        10 => "NACK Reply",
        _ => return ctx.f(format_args!("Unknown ({op}) ")),
    };
    ctx.f(format_args!("{name} "));
}

fn hardware(ctx: &mut Ctx, hrd: u16) {
    match hardware_name(hrd) {
        Some(name) => ctx.s(name),
        None => ctx.f(format_args!("Unknown Hardware ({hrd})")),
    }
}

fn protocol(ctx: &mut Ctx, pro: u16) {
    match super::link::ethertype_name(pro) {
        Some(name) => ctx.s(name),
        None => ctx.f(format_args!("Unknown Protocol (0x{pro:04x})")),
    }
}

/// The IPv4 address at `at`.
fn ip_at(ctx: &mut Ctx, data: &[u8], at: usize) -> R {
    ipv4(ctx.out, bytes(data, at, 4)?);
    Ok(())
}

/// Hardware type 19: ATM ARP (RFC 2225), which tcpdump prints with its
/// own header layout (type-and-length bytes, then six addresses).
const ATM: u16 = 19;

pub fn arp(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "arp";
    if be16(data, 0)? == ATM {
        return atm_arp(ctx, data, length);
    }
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
        hardware(ctx, hrd);
        ctx.f(format_args!(" (len {hln}), "));
        protocol(ctx, pro);
        ctx.f(format_args!(" (len {pln}), length {length}"));
        return Ok(());
    }
    operation(ctx, op);
    let ip_at = |ctx: &mut Ctx, at: usize| ip_at(ctx, data, at);
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

/// ATM ARP as tcpdump's atmarp_print prints it without -v.
fn atm_arp(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    // The type-and-length bytes carry a type in their top two bits.
    let len = |at: usize| -> Result<usize, Trunc> { Ok(usize::from(u8_at(data, at)? & 0x3f)) };
    let hrd = be16(data, 0)?;
    let pro = be16(data, 2)?;
    let (shln, ssln) = (len(4)?, len(5)?);
    let op = be16(data, 6)?;
    let spln = usize::from(u8_at(data, 8)?);
    let (thln, tsln) = (len(9)?, len(10)?);
    let tpln = usize::from(u8_at(data, 11)?);
    let sha = 12;
    let ssa = sha + shln;
    let spa = ssa + ssln;
    let tha = spa + spln;
    let tsa = tha + thln;
    let tpa = tsa + tsln;
    if data.len() < tpa + tpln {
        return Err(Trunc);
    }
    ctx.s("ARP, ");
    if !(pro == 0x0800 || pro == 0x1000) || spln != 4 || tpln != 4 {
        hardware(ctx, hrd);
        ctx.s(", ");
        protocol(ctx, pro);
        ctx.f(format_args!(" (len {spln}/{tpln}), length {length}"));
        return Ok(());
    }
    operation(ctx, op);
    let ip_at = |ctx: &mut Ctx, at: usize| ip_at(ctx, data, at);
    // An ATM address and its subaddress: "<No address>" when empty.
    let atm_at = |ctx: &mut Ctx, at: usize, n: usize, sub_at: usize, sub_n: usize| -> R {
        if n == 0 {
            ctx.s("<No address>");
            return Ok(());
        }
        linkaddr(ctx.out, bytes(data, at, n)?);
        if sub_n != 0 {
            ctx.s(",");
            linkaddr(ctx.out, bytes(data, sub_at, sub_n)?);
        }
        Ok(())
    };
    match op {
        1 => {
            ctx.s("who-has ");
            ip_at(ctx, tpa)?;
            if thln != 0 {
                ctx.s(" (");
                atm_at(ctx, tha, thln, tsa, tsln)?;
                ctx.s(")");
            }
            ctx.s(" tell ");
            ip_at(ctx, spa)?;
        }
        2 => {
            ip_at(ctx, spa)?;
            ctx.s(" is-at ");
            atm_at(ctx, sha, shln, ssa, ssln)?;
        }
        8 => {
            ctx.s("who-is ");
            atm_at(ctx, tha, thln, tsa, tsln)?;
            ctx.s(" tell ");
            atm_at(ctx, sha, shln, ssa, ssln)?;
        }
        9 => {
            atm_at(ctx, sha, shln, ssa, ssln)?;
            // Sic: tcpdump prints no space before "at" here.
            ctx.s("at ");
            ip_at(ctx, spa)?;
        }
        10 => {
            ctx.s("for ");
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

#[cfg(test)]
mod tests {
    use crate::packet::format::{Formatter, Host, Timestamp};

    /// The line for an Ethernet frame carrying `arp`, without the time.
    fn line(arp: &[u8]) -> String {
        let mut frame = vec![0xff; 6];
        frame.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
        frame.extend_from_slice(arp);
        let mut out = String::new();
        let ts = Timestamp {
            sec: 0,
            frac: 0,
            nanos: false,
        };
        Formatter::new(Host::UTC).line(1, ts, &frame, frame.len() as u32, &mut out);
        out.split_once(' ').unwrap().1.to_string()
    }

    #[test]
    fn atm_arp_uses_its_own_layout() {
        // hrd 19, IPv4, a 20-byte source ATM address, op 1, no target ATM
        // address: 12 + 20 + 4 + 4 bytes.
        let mut arp = vec![0, 19, 0x08, 0x00, 20, 0, 0, 1, 4, 0, 0, 4];
        arp.extend_from_slice(&[0x47; 20]);
        arp.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2]);
        assert_eq!(
            line(&arp),
            "ARP, Request who-has 198.18.0.2 tell 198.18.0.1, length 40"
        );
        // A reply names the ATM address.
        arp[7] = 2;
        assert!(line(&arp).starts_with("ARP, Reply 198.18.0.1 is-at 47:47:"));
        // Not IPv4: the types and the protocol address lengths only.
        arp[2] = 0x86;
        arp[3] = 0xdd;
        assert_eq!(line(&arp), "ARP, ATM, IPv6 (len 4/4), length 40");
    }

    #[test]
    fn atm_arp_with_addresses_past_the_capture_is_truncated() {
        // The frame from tcpdump's arp-oobr test: hardware type 19 with an
        // Ethernet ARP body, so the ATM lengths run far past the capture.
        let arp = [
            0x00, 0x13, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x00, 0x1f, 0x29, 0xda, 0x2d, 0x79,
            0xc0, 0xa8, 0x01, 0x68, 0, 0, 0, 0, 0, 0, 0xc0, 0xa8, 0x01, 0x01,
        ];
        assert_eq!(line(&arp), " [|arp]");
    }
}
