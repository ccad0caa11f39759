//! ICMP, ICMPv6 and IGMP, as tcpdump prints them without -v.

use super::ip::IpInfo;
use super::{Ctx, R, be16, be32, bytes, icmp6_info, ipv4, ipv6, u8_at};

pub fn icmp(ctx: &mut Ctx, data: &[u8], length: usize, _ip: &IpInfo) -> R {
    ctx.proto = "icmp";
    let kind = u8_at(data, 0)?;
    let code = u8_at(data, 1)?;
    let mut text = String::new();
    // The quoted IP header of an error starts at byte 8.
    let quoted_dst = |text: &mut String| -> R {
        ipv4(text, bytes(data, 8 + 16, 4)?);
        Ok(())
    };
    match kind {
        0 | 8 => {
            let id = be16(data, 4)?;
            let seq = be16(data, 6)?;
            let what = if kind == 8 { "request" } else { "reply" };
            text = format!("echo {what}, id {id}, seq {seq}");
        }
        3 => match code {
            0 => {
                text.push_str("net ");
                quoted_dst(&mut text)?;
                text.push_str(" unreachable");
            }
            1 => {
                text.push_str("host ");
                quoted_dst(&mut text)?;
                text.push_str(" unreachable");
            }
            2 => {
                quoted_dst(&mut text)?;
                text.push_str(&format!(" protocol {} unreachable", u8_at(data, 8 + 9)?));
            }
            3 => {
                let proto = u8_at(data, 8 + 9)?;
                let hlen = usize::from(u8_at(data, 8)? & 0x0f) * 4;
                let dport = be16(data, 8 + hlen + 2)?;
                let mut dst = String::new();
                quoted_dst(&mut dst)?;
                text = match proto {
                    6 => format!("{dst} tcp port {dport} unreachable"),
                    17 => format!("{dst} udp port {dport} unreachable"),
                    _ => format!("{dst} protocol {proto} port {dport} unreachable"),
                };
            }
            4 => {
                let mtu = be16(data, 6)?;
                quoted_dst(&mut text)?;
                if mtu != 0 {
                    text.push_str(&format!(" unreachable - need to frag (mtu {mtu})"));
                } else {
                    text.push_str(" unreachable - need to frag");
                }
            }
            _ => {
                let fmt = match code {
                    5 => Some(("", " unreachable - source route failed")),
                    6 => Some(("net ", " unreachable - unknown")),
                    7 => Some(("host ", " unreachable - unknown")),
                    8 => Some(("", " unreachable - source host isolated")),
                    9 => Some(("net ", " unreachable - admin prohibited")),
                    10 => Some(("host ", " unreachable - admin prohibited")),
                    11 => Some(("net ", " unreachable - tos prohibited")),
                    12 => Some(("host ", " unreachable - tos prohibited")),
                    13 => Some(("host ", " unreachable - admin prohibited filter")),
                    14 => Some(("host ", " unreachable - host precedence violation")),
                    15 => Some(("host ", " unreachable - precedence cutoff")),
                    _ => None,
                };
                match fmt {
                    Some((before, after)) => {
                        text.push_str(before);
                        quoted_dst(&mut text)?;
                        text.push_str(after);
                    }
                    None => {
                        quoted_dst(&mut text)?;
                        text.push_str(&format!(" unreachable - #{code}"));
                    }
                }
            }
        },
        11 => {
            bytes(data, 8 + 16, 4)?;
            text = match code {
                0 => "time exceeded in-transit".into(),
                1 => "ip reassembly time exceeded".into(),
                _ => format!("time exceeded-#{code}"),
            };
        }
        12 => {
            text = if code != 0 {
                format!("parameter problem - code {code}")
            } else {
                format!("parameter problem - octet {}", u8_at(data, 4)?)
            };
        }
        18 => text = format!("address mask is 0x{:08x}", be32(data, 8)?),
        13 => {
            let (id, seq) = (be16(data, 4)?, be16(data, 6)?);
            text = format!("time stamp query id {id} seq {seq}");
        }
        14 => {
            bytes(data, 16, 4)?;
            let (id, seq) = (be16(data, 4)?, be16(data, 6)?);
            text = format!(
                "time stamp reply id {id} seq {seq}: org {}, recv {}, xmit {}",
                clock(be32(data, 8)?),
                clock(be32(data, 12)?),
                clock(be32(data, 16)?)
            );
        }
        9 => text = router_advertisement(data)?,
        5 => {
            let gw = bytes(data, 4, 4)?;
            let mut dst = String::new();
            quoted_dst(&mut dst)?;
            let mut gateway = String::new();
            ipv4(&mut gateway, gw);
            text = match code {
                0 => format!("redirect {dst} to net {gateway}"),
                1 => format!("redirect {dst} to host {gateway}"),
                2 => format!("redirect-tos {dst} to net {gateway}"),
                3 => format!("redirect-tos {dst} to host {gateway}"),
                _ => format!("redirect-#{code} {dst} to {gateway}"),
            };
        }
        _ => {
            text = match kind {
                4 => "source quench".into(),
                10 => "router solicitation".into(),
                15 => "information request".into(),
                16 => "information reply".into(),
                17 => "address mask request".into(),
                _ => format!("type-#{kind}"),
            };
        }
    }
    ctx.f(format_args!("ICMP {text}, length {length}"));
    Ok(())
}

/// An MLDv1 message as tcpdump's mld6_print: right after the type name,
/// and nothing when the 24 bytes are not all captured.
fn listener(ctx: &mut Ctx, data: &[u8]) -> R {
    if data.len() < 24 {
        return Ok(());
    }
    ctx.f(format_args!("max resp delay: {} ", be16(data, 4)?));
    ctx.s("addr: ");
    ipv6(ctx.out, bytes(data, 8, 16)?);
    Ok(())
}

/// Milliseconds since midnight UT, as tcpdump's icmp_tstamp_print.
fn clock(ms: u32) -> String {
    let (msec, sec) = (ms % 1000, ms / 1000);
    let (min, sec) = (sec / 60, sec % 60);
    let (hrs, min) = (min / 60, min % 60);
    format!("{hrs:02}:{min:02}:{sec:02}.{msec:03}")
}

/// "router advertisement lifetime 30:00 2: {198.18.0.1 0} {...}", cut as
/// tcpdump's fixed buffer (MAXHOSTNAMELEN + 100 bytes) cuts it.
fn router_advertisement(data: &[u8]) -> R<String> {
    const BUF: usize = 64 + 100 - 1;
    bytes(data, 4, 4)?;
    let lifetime = be16(data, 6)?;
    let mut text = String::from("router advertisement lifetime ");
    text.push_str(&match lifetime {
        0..60 => format!("{lifetime}"),
        60..3600 => format!("{}:{:02}", lifetime / 60, lifetime % 60),
        _ => format!(
            "{}:{:02}:{:02}",
            lifetime / 3600,
            (lifetime % 3600) / 60,
            lifetime % 60
        ),
    });
    let count = u8_at(data, 4)?;
    text.push_str(&format!(" {count}:"));
    let size = u8_at(data, 5)?;
    if size != 2 {
        text.push_str(&format!(" [size {size}]"));
    } else {
        for i in 0..usize::from(count) {
            let entry = bytes(data, 8 + i * 8, 8)?;
            if text.len() < BUF {
                let mut addr = String::new();
                ipv4(&mut addr, &entry[..4]);
                let pref = u32::from_be_bytes([entry[4], entry[5], entry[6], entry[7]]);
                text.push_str(&format!(" {{{addr} {pref}}}"));
            }
        }
    }
    text.truncate(BUF);
    Ok(text)
}

fn icmp6_type(kind: u8) -> Option<&'static str> {
    Some(match kind {
        1 => "destination unreachable",
        2 => "packet too big",
        3 => "time exceeded in-transit",
        4 => "parameter problem",
        128 => "echo request",
        129 => "echo reply",
        130 => "multicast listener query",
        131 => "multicast listener report",
        132 => "multicast listener done",
        133 => "router solicitation",
        134 => "router advertisement",
        135 => "neighbor solicitation",
        136 => "neighbor advertisement",
        137 => "redirect",
        138 => "router renumbering",
        139 => "who-are-you request",
        140 => "who-are-you reply",
        141 => "inverse neighbor solicitation",
        142 => "inverse neighbor advertisement",
        143 => "multicast listener report v2",
        144 => "ha discovery request",
        145 => "ha discovery reply",
        146 => "mobile router solicitation",
        147 => "mobile router advertisement",
        155 => "RPL",
        200 => "mtrace response",
        201 => "mtrace message",
        _ => return None,
    })
}

/// Finds the upper-layer header inside a quoted IPv6 packet.
fn quoted_upper(data: &[u8], start: usize) -> R<(u8, usize)> {
    let mut nh = u8_at(data, start + 6)?;
    let mut at = start + 40;
    loop {
        match nh {
            0 | 43 | 60 => {
                let next = u8_at(data, at)?;
                let len = (usize::from(u8_at(data, at + 1)?) + 1) * 8;
                nh = next;
                at += len;
            }
            44 => {
                let next = u8_at(data, at)?;
                let offset = be16(data, at + 2)? & 0xfff8;
                if offset != 0 {
                    return Err(super::Trunc);
                }
                nh = next;
                at += 8;
            }
            _ => return Ok((nh, at)),
        }
    }
}

pub fn icmp6(ctx: &mut Ctx, data: &[u8], length: usize, _ip: &IpInfo) -> R {
    ctx.proto = "icmp6";
    if length == 0 {
        ctx.s("ICMP6, length 0 (invalid)");
        return Ok(());
    }
    let kind = u8_at(data, 0)?;
    match icmp6_type(kind) {
        Some(name) => ctx.f(format_args!("ICMP6, {name}")),
        None => ctx.f(format_args!("ICMP6, unknown icmp6 type ({kind})")),
    }
    // tcpdump names the type before it fetches the code.
    let code = u8_at(data, 1)?;
    let oip = 8usize;
    match kind {
        1 => {
            let name = match code {
                0 => "unreachable route".to_string(),
                1 => "unreachable prohibited".into(),
                2 => "beyond scope".into(),
                3 => "unreachable address".into(),
                4 => "unreachable port".into(),
                _ => {
                    // tcpdump shows the message in hex and stops there.
                    ctx.f(format_args!(", unknown unreach code ({code})"));
                    super::text::hex_print(ctx.out, data, length);
                    return Ok(());
                }
            };
            ctx.f(format_args!(", {name}"));
            match code {
                0 | 1 | 3 => {
                    ctx.s(" ");
                    ipv6(ctx.out, bytes(data, oip + 24, 16)?);
                }
                2 => {
                    ctx.s(" ");
                    ipv6(ctx.out, bytes(data, oip + 24, 16)?);
                    ctx.s(", source address ");
                    ipv6(ctx.out, bytes(data, oip + 8, 16)?);
                }
                4 => {
                    let (proto, at) = quoted_upper(data, oip)?;
                    let dport = be16(data, at + 2)?;
                    let mut dst = String::new();
                    ipv6(&mut dst, bytes(data, oip + 24, 16)?);
                    match proto {
                        6 => ctx.f(format_args!(", {dst} tcp port {dport}")),
                        17 => ctx.f(format_args!(", {dst} udp port {dport}")),
                        _ => ctx.f(format_args!(
                            ", {dst} protocol {proto} port {dport} unreachable"
                        )),
                    }
                }
                _ => {}
            }
        }
        2 => ctx.f(format_args!(", mtu {}", be32(data, 4)?)),
        3 => match code {
            0 => {
                ctx.s(" for ");
                ipv6(ctx.out, bytes(data, oip + 24, 16)?);
            }
            1 => ctx.s(" (reassembly)"),
            _ => ctx.f(format_args!(", unknown code ({code})")),
        },
        4 => {
            // tcpdump checks the quoted packet's destination is captured.
            bytes(data, oip + 24, 16)?;
            let pointer = be32(data, 4)?;
            match code {
                0 => ctx.f(format_args!(", erroneous - octet {pointer}")),
                1 => ctx.f(format_args!(", next header - octet {pointer}")),
                2 => ctx.f(format_args!(", option - octet {pointer}")),
                3 => ctx.f(format_args!(", incomplete header chain - octet {pointer}")),
                _ => ctx.f(format_args!(", code-#{code}")),
            }
        }
        128 | 129 => {
            ctx.f(format_args!(
                ", id {}, seq {}",
                be16(data, 4)?,
                be16(data, 6)?
            ));
        }
        // MLD: tcpdump's mld6_print says nothing when the 24-byte message
        // is not all captured; a longer query is MLDv2.
        130 if length == 24 => listener(ctx, data)?,
        130 if length >= 28 => {
            ctx.s(" v2");
            let group = bytes(data, 8, 16)?;
            ctx.s(" [gaddr ");
            ipv6(ctx.out, group);
            let sources = usize::from(be16(data, 26)?);
            if sources > 0 {
                if length < 28 + sources * 16 {
                    ctx.s(" [invalid number of sources]");
                } else {
                    ctx.f(format_args!(", {sources} source(s)"));
                }
            }
            ctx.s("]");
        }
        130 => ctx.f(format_args!(" unknown-version (len {length}) ")),
        131 | 132 => listener(ctx, data)?,
        144 | 146 => ctx.f(format_args!(", id 0x{:04x}", be16(data, 4)?)),
        // Their fields print only with -v.
        145 | 147 => {}
        143 => {
            if length < 8 {
                ctx.f(format_args!(" [invalid len {length}]"));
            } else {
                ctx.f(format_args!(", {} group record(s)", be16(data, 6)?));
            }
        }
        // tcpdump fetches an address before printing its label.
        135 => {
            let target = bytes(data, 8, 16)?;
            ctx.s(", who has ");
            ipv6(ctx.out, target);
        }
        136 => {
            let target = bytes(data, 8, 16)?;
            ctx.s(", tgt is ");
            ipv6(ctx.out, target);
        }
        138 => icmp6_info::router_renumbering(ctx, data)?,
        139 | 140 => icmp6_info::node_information(ctx, data, length)?,
        133 | 134 | 137 => {
            if kind == 137 {
                let (destination, target) = (bytes(data, 24, 16)?, bytes(data, 8, 16)?);
                ctx.s(", ");
                ipv6(ctx.out, destination);
                ctx.s(" to ");
                ipv6(ctx.out, target);
            }
        }
        _ => {
            ctx.f(format_args!(", length {length}"));
            // Types tcpdump has no printer for: their bytes in hex.
            if !matches!(kind, 141 | 142 | 155) {
                super::text::hex_print(ctx.out, data, length);
            }
            return Ok(());
        }
    }
    ctx.f(format_args!(", length {length}"));
    Ok(())
}

pub fn igmp(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "igmp";
    let kind = u8_at(data, 0)?;
    match kind {
        0x11 => {
            let mrc = u8_at(data, 1)?;
            ctx.s("igmp query");
            if length >= 12 {
                ctx.s(" v3");
            } else if mrc != 0 {
                ctx.s(" v2");
                if mrc != 100 {
                    ctx.f(format_args!(" [max resp time {mrc}]"));
                }
            } else {
                ctx.s(" v1");
            }
            let group = bytes(data, 4, 4)?;
            if group != [0, 0, 0, 0] {
                ctx.s(" [gaddr ");
                ipv4(ctx.out, group);
                ctx.s("]");
            }
            if length != 8 && length < 12 {
                ctx.f(format_args!(" [len {length}]"));
            }
        }
        0x12 | 0x16 => {
            ctx.f(format_args!(
                "igmp v{} report ",
                if kind == 0x12 { 1 } else { 2 }
            ));
            ipv4(ctx.out, bytes(data, 4, 4)?);
        }
        0x17 => {
            ctx.s("igmp leave ");
            ipv4(ctx.out, bytes(data, 4, 4)?);
        }
        0x22 => {
            ctx.f(format_args!(
                "igmp v3 report, {} group record(s)",
                be16(data, 6)?
            ));
        }
        _ => ctx.f(format_args!("igmp-{kind}")),
    }
    Ok(())
}
