//! TCP: flags, relative sequence numbers, window, options, length, and the
//! few payload printers tcpdump runs by port without -v.

use super::ip::IpInfo;
use super::{Ctx, R, TcpKey, Trunc, be16, be32, bytes, dns, text, u8_at};

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

enum OptError {
    Trunc,
    /// Cut inside an option's value, found by tcpdump's LENCHECK: it jumps
    /// to the printer's own trunc label, which appends '>' after " [|tcp]"
    /// when an option was already printed (true here). A field read past the
    /// capture elsewhere is `Trunc`, which ends the line without it.
    Cut(bool),
    /// "[bad opt]"; true when an option was already printed.
    Bad(bool),
}

impl From<Trunc> for OptError {
    fn from(_: Trunc) -> Self {
        OptError::Trunc
    }
}

/// What the option printers need of the segment besides its bytes.
struct Segment {
    flags: u8,
    /// SACK blocks are relative to this side's sequence base.
    rev: bool,
    thseq: u32,
    thack: u32,
    /// The whole segment (as the IP length gives it) was captured: the
    /// MD5 signature could be checked if tcpdump had the secret.
    whole: bool,
}

fn options(ctx: &mut Ctx, data: &[u8], mut hlen: usize, seg: &Segment) -> Result<(), OptError> {
    let Segment {
        flags,
        rev,
        thseq,
        thack,
        whole,
    } = *seg;
    let mut cp = 20usize;
    let mut first = true;
    while hlen > 0 {
        if !first {
            ctx.s(",");
        }
        let printed = !first;
        let opt = u8_at(data, cp)?;
        cp += 1;
        let len = if opt == 0 || opt == 1 {
            1
        } else {
            let len = usize::from(u8_at(data, cp)?);
            cp += 1;
            if len < 2 || len > hlen {
                return Err(OptError::Bad(printed));
            }
            hlen -= 1;
            len
        };
        hlen -= 1;
        let mut datalen = 0usize;
        let check = |l: usize, hlen: usize| -> Result<(), OptError> {
            if l > hlen {
                return Err(OptError::Bad(printed));
            }
            match bytes(data, cp, l) {
                Ok(_) => Ok(()),
                Err(Trunc) => Err(OptError::Cut(printed)),
            }
        };
        let name = match opt {
            0 => "eol",
            1 => "nop",
            2 => "mss",
            3 => "wscale",
            4 => "sackOK",
            5 => "sack",
            6 => "echo",
            7 => "echoreply",
            8 => "TS",
            11 => "cc",
            12 => "ccnew",
            13 => "",
            19 => "md5",
            20 => "scps",
            28 => "uto",
            29 => "tcp-ao",
            30 => "mptcp",
            34 => "tfo",
            254 => "exp",
            _ => "",
        };
        if name.is_empty() && opt != 13 {
            ctx.f(format_args!("unknown-{opt}"));
        } else {
            ctx.s(name);
        }
        match opt {
            2 => {
                datalen = 2;
                check(datalen, hlen)?;
                ctx.f(format_args!(" {}", be16(data, cp)?));
            }
            3 => {
                datalen = 1;
                check(datalen, hlen)?;
                ctx.f(format_args!(" {}", u8_at(data, cp)?));
            }
            5 => {
                datalen = len - 2;
                if !datalen.is_multiple_of(8) {
                    ctx.s(" invalid sack");
                } else {
                    ctx.f(format_args!(" {} ", datalen / 8));
                    let mut i = 0;
                    while i < datalen {
                        check(i + 4, hlen)?;
                        let mut s = be32(data, cp + i)?;
                        check(i + 8, hlen)?;
                        let mut e = be32(data, cp + i + 4)?;
                        let base = if rev { thseq } else { thack };
                        s = s.wrapping_sub(base);
                        e = e.wrapping_sub(base);
                        ctx.f(format_args!("{{{s}:{e}}}"));
                        i += 8;
                    }
                }
            }
            11 | 12 | 13 | 6 | 7 => {
                datalen = 4;
                check(datalen, hlen)?;
                ctx.f(format_args!(" {}", be32(data, cp)?));
            }
            8 => {
                datalen = 8;
                check(datalen, hlen)?;
                ctx.f(format_args!(
                    " val {} ecr {}",
                    be32(data, cp)?,
                    be32(data, cp + 4)?
                ));
            }
            19 => {
                datalen = 16;
                check(datalen, hlen)?;
                // tcpdump (built with libcrypto, as Debian's is) says why it
                // cannot verify the signature before printing it.
                ctx.s(if whole {
                    " shared secret not supplied with -M, can't check - "
                } else {
                    " snaplen too short, can't check - "
                });
                for i in 0..16 {
                    ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
                }
            }
            20 => {
                datalen = 2;
                check(datalen, hlen)?;
                ctx.f(format_args!(
                    " cap {:02x} id {}",
                    u8_at(data, cp)?,
                    u8_at(data, cp + 1)?
                ));
            }
            29 => {
                datalen = len - 2;
                if datalen < 2 {
                    ctx.s(" (invalid)");
                } else {
                    check(1, hlen)?;
                    ctx.f(format_args!(" keyid {}", u8_at(data, cp)?));
                    check(2, hlen)?;
                    ctx.f(format_args!(" rnextkeyid {}", u8_at(data, cp + 1)?));
                    if datalen > 2 {
                        ctx.s(" mac 0x");
                        for i in 2..datalen {
                            check(i + 1, hlen)?;
                            ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
                        }
                    }
                }
            }
            0 | 1 | 4 => {}
            28 => {
                datalen = 2;
                check(datalen, hlen)?;
                let raw = be16(data, cp)?;
                let value = if raw & 1 != 0 {
                    u32::from(raw >> 1) * 60
                } else {
                    u32::from(raw >> 1)
                };
                ctx.f(format_args!(" 0x{raw:x} {value}"));
            }
            30 => {
                datalen = len - 2;
                check(datalen, hlen)?;
                let end = (cp - 2 + len).min(data.len());
                if !mptcp(ctx, &data[cp - 2..end], len, flags)? {
                    return Err(OptError::Bad(printed));
                }
            }
            34 => {
                datalen = len - 2;
                check(datalen, hlen)?;
                ctx.s(" ");
                fastopen(ctx, data, cp, datalen, false)?;
            }
            254 => {
                datalen = len - 2;
                check(datalen, hlen)?;
                if datalen < 2 {
                    return Err(OptError::Bad(printed));
                }
                let magic = be16(data, cp)?;
                ctx.s("-");
                if magic == 0xf989 {
                    fastopen(ctx, data, cp + 2, datalen - 2, true)?;
                } else {
                    ctx.f(format_args!("{magic:04x}"));
                }
            }
            _ => {
                datalen = len - 2;
                if datalen > 0 {
                    ctx.s(" 0x");
                }
                for i in 0..datalen {
                    check(i + 1, hlen)?;
                    ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
                }
            }
        }
        cp += datalen;
        hlen -= datalen;
        let mut spec = datalen + 1;
        if opt != 0 && opt != 1 {
            spec += 1;
        }
        if spec != len {
            ctx.f(format_args!("[len {len}]"));
        }
        first = false;
        if opt == 0 {
            break;
        }
    }
    Ok(())
}

fn fastopen(ctx: &mut Ctx, data: &[u8], cp: usize, datalen: usize, exp: bool) -> R {
    if exp {
        ctx.s("tfo");
    }
    if datalen == 0 {
        ctx.s(" cookiereq");
    } else if !datalen.is_multiple_of(2) || !(4..=16).contains(&datalen) {
        ctx.s(" (invalid)");
    } else {
        ctx.s(" cookie ");
        for i in 0..datalen {
            ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
        }
    }
    Ok(())
}

fn be64(b: &[u8], i: usize) -> R<u64> {
    Ok(u64::from(be32(b, i)?) << 32 | u64::from(be32(b, i + 4)?))
}

/// MPTCP option (RFC 6824/8684). Ok(false) means tcpdump's "[bad opt]".
fn mptcp(ctx: &mut Ctx, opt: &[u8], len: usize, flags: u8) -> R<bool> {
    if len < 3 {
        return Ok(false);
    }
    let subtype = (u8_at(opt, 2)? >> 4).min(9);
    let names = [
        "capable",
        "join",
        "dss",
        "add-addr",
        "rem-addr",
        "prio",
        "fail",
        "fast-close",
        "tcprst",
        "unknown",
    ];
    ctx.f(format_args!(" {len} {}", names[usize::from(subtype)]));
    match subtype {
        0 => {
            let syn = flags & SYN != 0;
            let only_ack = flags & (SYN | ACK) == ACK;
            if !((len == 12 && syn)
                || (len == 20 && only_ack)
                || (len == 24 && only_ack)
                || (len == 22 && only_ack)
                || (len == 4 && syn))
            {
                return Ok(false);
            }
            let version = u8_at(opt, 2)? & 0x0f;
            if version > 1 {
                ctx.f(format_args!(" Unknown Version ({version})"));
                return Ok(true);
            }
            ctx.f(format_args!(" v{version}"));
            if u8_at(opt, 3)? & 0x80 != 0 {
                ctx.s(" csum");
            }
            if len == 12 || len >= 20 {
                ctx.f(format_args!(" {{0x{:x}", be64(opt, 4)?));
                if len >= 20 {
                    ctx.f(format_args!(",0x{:x}", be64(opt, 12)?));
                }
                ctx.s("}");
            }
        }
        1 => {
            if !((len == 12 && flags & SYN != 0)
                || (len == 16 && flags & (SYN | ACK) == SYN | ACK)
                || (len == 24 && flags & ACK != 0))
            {
                return Ok(false);
            }
            if len != 24 {
                if u8_at(opt, 2)? & 0x01 != 0 {
                    ctx.s(" backup");
                }
                ctx.f(format_args!(" id {}", u8_at(opt, 3)?));
            }
            match len {
                12 => ctx.f(format_args!(
                    " token 0x{:x} nonce 0x{:x}",
                    be32(opt, 4)?,
                    be32(opt, 8)?
                )),
                16 => ctx.f(format_args!(
                    " hmac 0x{:x} nonce 0x{:x}",
                    be64(opt, 4)?,
                    be32(opt, 12)?
                )),
                _ => {
                    ctx.s(" hmac 0x");
                    for i in 0..20 {
                        ctx.f(format_args!("{:02x}", u8_at(opt, 4 + i)?));
                    }
                }
            }
        }
        2 => {
            if len < 4 {
                return Ok(false);
            }
            let f = u8_at(opt, 3)?;
            if f & 0x10 != 0 {
                ctx.s(" fin");
            }
            let mut p = 4usize;
            let mut left = len - 4;
            if f & 0x01 != 0 {
                ctx.s(" ack ");
                if f & 0x02 != 0 {
                    if left < 8 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be64(opt, p)?));
                    p += 8;
                    left -= 8;
                } else {
                    if left < 4 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be32(opt, p)?));
                    p += 4;
                    left -= 4;
                }
            }
            if f & 0x04 != 0 {
                ctx.s(" seq ");
                if f & 0x08 != 0 {
                    if left < 8 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be64(opt, p)?));
                    p += 8;
                    left -= 8;
                } else {
                    if left < 4 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be32(opt, p)?));
                    p += 4;
                    left -= 4;
                }
                if left < 4 {
                    return Ok(false);
                }
                ctx.f(format_args!(" subseq {}", be32(opt, p)?));
                p += 4;
                left -= 4;
                if left < 2 {
                    return Ok(false);
                }
                ctx.f(format_args!(" len {}", be16(opt, p)?));
                p += 2;
                left -= 2;
                if left >= 2 {
                    ctx.f(format_args!(" csum 0x{:x}", be16(opt, p)?));
                    left -= 2;
                }
            }
            if left != 0 {
                return Ok(false);
            }
        }
        3 => {
            if ![8, 10, 16, 18, 20, 22, 28, 30].contains(&len) {
                return Ok(false);
            }
            let echo = u8_at(opt, 2)? & 0x0f;
            ctx.s(match echo {
                6 => " v0-ip6",
                4 => " v0-ip4",
                1 => " v1-echo",
                0 => " v1",
                _ => " [bad version/echo]",
            });
            ctx.f(format_args!(" id {}", u8_at(opt, 3)?));
            if len <= 18 {
                ctx.s(" ");
                super::ipv4(ctx.out, bytes(opt, 4, 4)?);
                if len == 10 || len == 18 {
                    ctx.f(format_args!(":{}", be16(opt, 8)?));
                }
                if len == 16 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 8)?));
                }
                if len == 18 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 10)?));
                }
            } else {
                ctx.s(" ");
                super::ipv6(ctx.out, bytes(opt, 4, 16)?);
                if len == 22 || len == 30 {
                    ctx.f(format_args!(":{}", be16(opt, 20)?));
                }
                if len == 28 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 20)?));
                }
                if len == 30 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 22)?));
                }
            }
        }
        4 => {
            if len < 4 {
                return Ok(false);
            }
            ctx.s(" id");
            for i in 0..len - 3 {
                ctx.f(format_args!(" {}", u8_at(opt, 3 + i)?));
            }
        }
        5 => {
            if len != 3 && len != 4 {
                return Ok(false);
            }
            if u8_at(opt, 2)? & 0x01 != 0 {
                ctx.s(" backup");
            } else {
                ctx.s(" non-backup");
            }
            if len == 4 {
                ctx.f(format_args!(" id {}", u8_at(opt, 3)?));
            }
        }
        6 => {
            if len != 12 {
                return Ok(false);
            }
            ctx.f(format_args!(" seq {}", be64(opt, 4)?));
        }
        7 => {
            if len != 12 {
                return Ok(false);
            }
            ctx.f(format_args!(" key 0x{:x}", be64(opt, 4)?));
        }
        _ => {}
    }
    Ok(true)
}
