//! TCP: flags, relative sequence numbers, window, options, length, and the
//! few payload printers tcpdump runs by port without -v.

mod mptcp;
mod options;

use super::ip::IpInfo;
use super::{Ctx, R, TcpKey, Trunc, be16, be32, dns, text};
use options::{OptError, Segment, options};

const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const PUSH: u8 = 0x08;
const ACK: u8 = 0x10;
const URG: u8 = 0x20;
const ECE: u8 = 0x40;
const CWR: u8 = 0x80;

/// tcpdump's flag letters, in its order: "S." for SYN-ACK.
pub fn flag_string(flags: u8, out: &mut String) {
    if flags == 0 {
        out.push_str("none");
        return;
    }
    for (bit, letter) in [
        (FIN, 'F'),
        (SYN, 'S'),
        (RST, 'R'),
        (PUSH, 'P'),
        (ACK, '.'),
        (URG, 'U'),
        (ECE, 'E'),
        (CWR, 'W'),
    ] {
        if flags & bit != 0 {
            out.push(letter);
        }
    }
}

pub fn tcp(ctx: &mut Ctx, data: &[u8], length: usize, ip: &IpInfo) -> R {
    ctx.proto = "tcp";
    if data.len() < 4 {
        ip.write_src(ctx.out);
        ctx.s(" > ");
        ip.write_dst(ctx.out);
        ctx.s(":");
        return Err(Trunc);
    }
    let sport = be16(data, 0)?;
    let dport = be16(data, 2)?;
    if ip.direct {
        ip.write_src(ctx.out);
        ctx.f(format_args!(".{sport} > "));
        ip.write_dst(ctx.out);
        ctx.f(format_args!(".{dport}: "));
    } else {
        ctx.f(format_args!("{sport} > {dport}: "));
    }
    if data.len() < 20 {
        return Err(Trunc);
    }
    let mut hlen = usize::from(data[12] >> 4) * 4;
    if hlen < 20 {
        ctx.f(format_args!(
            " tcp {} [bad hdr length {hlen} - too short, < 20]",
            length.wrapping_sub(hlen) as u32
        ));
        return Ok(());
    }
    let mut seq = be32(data, 4)?;
    let mut ack = be32(data, 8)?;
    let win = be16(data, 14)?;
    let urp = be16(data, 18)?;
    let flags = data[13];
    ctx.s("Flags [");
    flag_string(flags, ctx.out);
    ctx.s("]");

    let (mut thseq, mut thack, mut rev) = (0u32, 0u32, false);
    if flags & ACK != 0 {
        let alen = if ip.v6 { 16 } else { 4 };
        let (src, dst) = (&ip.src[..alen], &ip.dst[..alen]);
        rev = sport > dport || (sport == dport && src > dst);
        let mut key = TcpKey {
            src: [0; 16],
            dst: [0; 16],
            ports: 0,
        };
        if rev {
            key.src[..alen].copy_from_slice(dst);
            key.dst[..alen].copy_from_slice(src);
            key.ports = u32::from(dport) << 16 | u32::from(sport);
        } else {
            key.src[..alen].copy_from_slice(src);
            key.dst[..alen].copy_from_slice(dst);
            key.ports = u32::from(sport) << 16 | u32::from(dport);
        }
        // IPv4 and IPv6 tables are separate in tcpdump; the key length keeps
        // them apart here (v4 keys have zero tails, v6 ones rarely do).
        key.src[15] ^= u8::from(ip.v6);
        let entry = ctx.tcp.map.get(&key).copied();
        let (s, a) = match entry {
            Some(pair) if flags & SYN == 0 => {
                if rev {
                    seq = seq.wrapping_sub(pair.1);
                    ack = ack.wrapping_sub(pair.0);
                } else {
                    seq = seq.wrapping_sub(pair.0);
                    ack = ack.wrapping_sub(pair.1);
                }
                pair
            }
            _ => {
                let pair = if rev {
                    (ack.wrapping_sub(1), seq)
                } else {
                    (seq, ack.wrapping_sub(1))
                };
                ctx.tcp.map.insert(key, pair);
                pair
            }
        };
        thseq = s;
        thack = a;
    }
    if hlen > length {
        ctx.f(format_args!(
            " [bad hdr length {hlen} - too long, > {length}]"
        ));
        return Ok(());
    }
    let payload = length - hlen;
    if payload > 0 || flags & (SYN | FIN | RST) != 0 {
        ctx.f(format_args!(", seq {seq}"));
        if payload > 0 {
            ctx.f(format_args!(":{}", seq.wrapping_add(payload as u32)));
        }
    }
    if flags & ACK != 0 {
        ctx.f(format_args!(", ack {ack}"));
    }
    ctx.f(format_args!(", win {win}"));
    if flags & URG != 0 {
        ctx.f(format_args!(", urg {urp}"));
    }
    if hlen > 20 {
        hlen -= 20;
        ctx.s(", options [");
        let seg = Segment {
            flags,
            rev,
            thseq,
            thack,
            whole: length <= data.len(),
        };
        if let Err(bad) = options(ctx, data, hlen, &seg) {
            match bad {
                OptError::Trunc | OptError::Cut(false) => return Err(Trunc),
                OptError::Cut(true) => {
                    let proto = ctx.proto;
                    ctx.f(format_args!(" [|{proto}]>"));
                    return Ok(());
                }
                OptError::Bad(ch) => {
                    ctx.s("[bad opt]");
                    if ch {
                        ctx.s("]");
                    }
                    return Ok(());
                }
            }
        }
        ctx.s("]");
    }
    ctx.f(format_args!(", length {payload}"));
    if payload == 0 {
        return Ok(());
    }
    let header_len = usize::from(data[12] >> 4) * 4;
    if data.len() < header_len {
        ctx.f(format_args!(
            " [remaining caplen({}) < header length({header_len})]",
            data.len()
        ));
        return Err(Trunc);
    }
    let body = &data[header_len..];
    let port = |p: u16| sport == p || dport == p;
    if port(43) {
        ctx.s(": ");
        text::txtproto(ctx, body, payload, "whois", None)
    } else if port(25) {
        ctx.s(": ");
        text::txtproto(ctx, body, payload, "smtp", None)
    } else if port(6379) {
        text::resp(ctx, body, payload)
    } else if port(22) {
        text::ssh(ctx, body, payload)
    } else if port(21) {
        ctx.s(": ");
        text::txtproto(ctx, body, payload, "ftp", None)
    } else if port(80) || port(8080) {
        ctx.s(": ");
        text::txtproto(ctx, body, payload, "http", Some(text::HTTP_METHODS))
    } else if port(554) || port(8554) {
        ctx.s(": ");
        text::txtproto(ctx, body, payload, "rtsp", Some(text::RTSP_METHODS))
    } else if port(53) {
        dns::domain(ctx, body, payload, true, false)
    } else {
        Ok(())
    }
}
