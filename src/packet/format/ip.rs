//! IPv4 and IPv6 (with extension headers), and the demultiplexer to the
//! transport printers.

use super::{Ctx, R, Trunc, be16, be32, gre, icmp, ipv4, ipv6, sctp, tcp, u8_at, udp};

/// What the transport printers need from the network layer.
#[derive(Debug, Clone, Copy)]
pub struct IpInfo {
    pub v6: bool,
    pub src: [u8; 16],
    pub dst: [u8; 16],
    /// The transport header directly follows the IP header (tcpdump then
    /// prints addresses with the ports).
    pub direct: bool,
    /// IPv4 total length and header length, for ICMP quoting and checks.
    pub fragmented: bool,
}

impl IpInfo {
    pub fn write_src(&self, out: &mut String) {
        if self.v6 {
            ipv6(out, &self.src)
        } else {
            ipv4(out, &self.src[..4])
        }
    }
    pub fn write_dst(&self, out: &mut String) {
        if self.v6 {
            ipv6(out, &self.dst)
        } else {
            ipv4(out, &self.dst[..4])
        }
    }
    /// "src > dst: "
    pub fn write_pair(&self, ctx: &mut Ctx) {
        self.write_src(ctx.out);
        ctx.s(" > ");
        self.write_dst(ctx.out);
        ctx.s(": ");
    }
}

pub fn ip4(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "ip";
    // tcpdump checks the version before it prints "IP".
    let vhl = u8_at(data, 0)?;
    if vhl >> 4 != 4 {
        if vhl >> 4 == 6 {
            ctx.s("IP6, wrong link-layer encapsulation (invalid)");
        } else {
            ctx.f(format_args!("IP{} (invalid)", vhl >> 4));
        }
        return Ok(());
    }
    ctx.s("IP ");
    if length < 20 {
        ctx.f(format_args!("truncated-ip {length}"));
        return Ok(());
    }
    let hlen = usize::from(vhl & 0x0f) * 4;
    if hlen < 20 {
        ctx.f(format_args!("bad-hlen {hlen}"));
        return Ok(());
    }
    let len = usize::from(be16(data, 2)?);
    if length < len {
        ctx.f(format_args!(
            "truncated-ip - {} bytes missing! ",
            len - length
        ));
    }
    // tcpdump as distributions build it (without GUESS_TSO) does not take
    // a zero length for a TSO send either.
    if len < hlen {
        ctx.f(format_args!("bad-len {len}"));
        return Ok(());
    }
    // The snapshot ends at the end of the IP packet.
    let data = &data[..data.len().min(len)];
    let off = be16(data, 6)?;
    let proto = u8_at(data, 9)?;
    let src = super::bytes(data, 12, 4)?;
    let dst = super::bytes(data, 16, 4)?;
    let mut info = IpInfo {
        v6: false,
        src: [0; 16],
        dst: [0; 16],
        direct: true,
        fragmented: off & 0x2000 != 0,
    };
    info.src[..4].copy_from_slice(src);
    info.dst[..4].copy_from_slice(dst);
    let payload_len = len - hlen;
    if off & 0x1fff == 0 {
        if !matches!(proto, 6 | 17 | 132 | 33) {
            info.write_pair(ctx);
        }
        let payload = data.get(hlen..).unwrap_or(&[]);
        if data.len() < hlen {
            // Options cut off by the capture.
            return Err(Trunc);
        }
        demux(ctx, payload, payload_len, proto, &info)
    } else {
        info.write_src(ctx.out);
        ctx.s(" > ");
        info.write_dst(ctx.out);
        ctx.f(format_args!(": ip-proto-{proto}"));
        Ok(())
    }
}

pub fn demux(ctx: &mut Ctx, data: &[u8], length: usize, proto: u8, info: &IpInfo) -> R {
    match proto {
        6 => tcp::tcp(ctx, data, length, info),
        17 => udp::udp(ctx, data, length, info),
        1 if !info.v6 => icmp::icmp(ctx, data, length, info),
        1 => {
            ctx.s("[ICMP requires IPv4] (invalid)");
            Ok(())
        }
        58 if info.v6 => icmp::icmp6(ctx, data, length, info),
        58 => {
            ctx.s("[ICMPv6 requires IPv6] (invalid)");
            Ok(())
        }
        4 => ip4(ctx, data, length),
        41 => ip6(ctx, data, length),
        2 if !info.v6 => icmp::igmp(ctx, data, length),
        47 => gre::gre(ctx, data, length),
        132 => sctp::sctp(ctx, data, length, info),
        59 => {
            ctx.s("no next header");
            Ok(())
        }
        _ => {
            ctx.f(format_args!(" ip-proto-{proto} {length}"));
            Ok(())
        }
    }
}

pub fn ip6(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "ip6";
    // tcpdump checks the whole fixed header is captured before "IP6".
    if data.len() < 40 {
        return Err(Trunc);
    }
    ctx.s("IP6 ");
    if length < 40 {
        ctx.f(format_args!("truncated-ip6 {length}"));
        return Ok(());
    }
    let version = u8_at(data, 0)? >> 4;
    if version != 6 {
        ctx.f(format_args!("version error: {version} != 6"));
        return Ok(());
    }
    let payload_len = usize::from(be16(data, 4)?);
    let mut len = if payload_len != 0 {
        let len = payload_len + 40;
        if length < len {
            ctx.f(format_args!(
                "truncated-ip6 - {} bytes missing!",
                len - length
            ));
        }
        len
    } else {
        // Zero: maybe a Jumbo Payload; tcpdump walks the extension headers
        // with everything captured, then decides (below).
        length + 40
    };
    let mut data = &data[..data.len().min(len)];
    let mut nh = u8_at(data, 6)?;
    let mut info = IpInfo {
        v6: true,
        src: [0; 16],
        dst: [0; 16],
        direct: matches!(nh, 6 | 17),
        fragmented: false,
    };
    info.src.copy_from_slice(super::bytes(data, 8, 16)?);
    info.dst.copy_from_slice(super::bytes(data, 24, 16)?);
    let mut cp = 0usize;
    let mut advance = 40usize;
    // The previous header (255: the IPv6 header itself), and what the
    // walk has found, as tcpdump's ip6_print tracks them.
    let mut previous = 255u8;
    let mut found_extension_header = false;
    let mut found_hbh = false;
    let mut jumbo: Option<usize> = None;
    while cp < data.len() && advance > 0 {
        if len < advance {
            return Err(Trunc);
        }
        cp += advance;
        len -= advance;
        if cp == 40 && !matches!(nh, 6 | 17 | 33 | 132) {
            info.write_pair(ctx);
        }
        match nh {
            0 => {
                if found_hbh {
                    ctx.s("[The Hop-by-Hop Options header was already found] (invalid)");
                    return Ok(());
                }
                if previous != 255 {
                    ctx.s("[The Hop-by-Hop Options header don't follow the IPv6 header] (invalid)");
                    return Ok(());
                }
                ctx.proto = "hbhopt";
                let hdr_len = (usize::from(u8_at(data, cp + 1)?) + 1) * 8;
                // tcpdump checks the whole header is captured before "HBH ".
                let header = super::bytes(data, cp, hdr_len).ok();
                let options = match header {
                    Some(header) => {
                        ctx.s("HBH ");
                        hop_options(ctx, &header[2..], payload_len == 0)
                    }
                    None => Err(()),
                };
                if options.is_err() {
                    ctx.s(" [|hbhopt]");
                }
                jumbo = options.ok().flatten();
                if payload_len == 0 && jumbo.is_none() {
                    ctx.s("[No valid Jumbo Payload Hop-by-Hop option found] (invalid)");
                    return Ok(());
                }
                let Some(header) = header.filter(|_| options.is_ok()) else {
                    return Ok(());
                };
                found_extension_header = true;
                found_hbh = true;
                nh = header[0];
                advance = hdr_len;
            }
            60 => {
                ctx.proto = "dstopt";
                let hdr_len = (usize::from(u8_at(data, cp + 1)?) + 1) * 8;
                // The options themselves print only with -v.
                if super::bytes(data, cp, hdr_len).is_err() {
                    ctx.s(" [|dstopt]");
                    return Ok(());
                }
                ctx.s("DSTOPT ");
                found_extension_header = true;
                nh = u8_at(data, cp)?;
                advance = hdr_len;
            }
            44 => {
                ctx.proto = "frag6";
                let offlg = be16(data, cp + 2)?;
                let offset = offlg & 0xfff8;
                // tcpdump's size_t arithmetic: a short payload wraps.
                let rest = (40 + payload_len as u64).wrapping_sub(cp as u64 + 8);
                ctx.f(format_args!("frag ({offset}|{rest})"));
                found_extension_header = true;
                info.fragmented = offlg & 1 != 0;
                if offset != 0 {
                    return Ok(());
                }
                ctx.s(" ");
                nh = u8_at(data, cp)?;
                advance = 8;
                if cp + advance >= data.len() {
                    return Ok(());
                }
            }
            43 => {
                // tcpdump checks the header's first byte before "RT6".
                u8_at(data, cp)?;
                advance = routing(ctx, data, cp)?;
                if advance == 0 {
                    return Ok(());
                }
                found_extension_header = true;
                nh = u8_at(data, cp)?;
            }
            _ => {
                if let Some(jumbo_len) = jumbo {
                    let total = jumbo_len + 40;
                    if total < cp {
                        return Err(Trunc);
                    }
                    if length < total {
                        ctx.f(format_args!(
                            "truncated-ip6 - {} bytes missing!",
                            total - length
                        ));
                    }
                    data = &data[..data.len().min(total)];
                    len = total - cp;
                } else if payload_len == 0 {
                    // No payload to hold an extension header: truncated.
                    // Without one, the packet is its 40-byte header.
                    if found_extension_header {
                        return Err(Trunc);
                    }
                    data = &data[..data.len().min(40)];
                    len = 0;
                }
                let payload = &data[cp.min(data.len())..];
                return demux(ctx, payload, len, nh, &info);
            }
        }
        previous = nh;
        ctx.proto = "ip6";
    }
    Ok(())
}

/// tcpdump's ip6_opt_process for hop-by-hop options, without -v: silent
/// but for malformed options, which it names before giving up (Err). Ok
/// holds the Jumbo Payload length when the first Jumbo option is valid
/// (the IPv6 payload length was 0 and it is at least 65536).
fn hop_options(ctx: &mut Ctx, opts: &[u8], payload_len_zero: bool) -> Result<Option<usize>, ()> {
    let len = opts.len();
    let mut i = 0;
    let mut seen_jumbo = false;
    let mut jumbo = None;
    while i < len {
        let kind = opts[i];
        let optlen = if kind == 0 {
            1
        } else if i + 1 < len {
            usize::from(opts[i + 1]) + 2
        } else {
            return Err(());
        };
        if i + optlen > len {
            return Err(());
        }
        let value_len = opts.get(i + 1).copied().unwrap_or(0);
        let left = len - i;
        match kind {
            0 | 1 => {}
            5 if left < 4 => return named(ctx, "(rtalert: trunc)"),
            5 if value_len != 2 => {
                return named(ctx, &format!("(rtalert: invalid len {value_len})"));
            }
            0xc2 if left < 6 => return named(ctx, "(jumbo: trunc)"),
            0xc2 if value_len != 4 => {
                return named(ctx, &format!("(jumbo: invalid len {value_len})"));
            }
            0xc2 => {
                let value =
                    u32::from_be_bytes([opts[i + 2], opts[i + 3], opts[i + 4], opts[i + 5]]);
                if !seen_jumbo && payload_len_zero && value >= 65536 {
                    jumbo = Some(value as usize);
                }
                seen_jumbo = true;
            }
            0xc9 if left < 18 => return named(ctx, "(homeaddr: trunc)"),
            0xc9 if value_len < 16 => {
                return named(ctx, &format!("(homeaddr: invalid len {value_len})"));
            }
            _ => {}
        }
        i += optlen;
    }
    Ok(jumbo)
}

/// Prints what is wrong with an option; the header is then cut short.
fn named(ctx: &mut Ctx, what: &str) -> Result<Option<usize>, ()> {
    ctx.s(what);
    Err(())
}

/// A routing header as tcpdump 4.99's rt6_print prints it: "RT6 (len=2,
/// type=0 [Deprecated], segleft=1, [0]addr) ". Ok(its length), or Ok(0)
/// when it ended the line as invalid.
fn routing(ctx: &mut Ctx, data: &[u8], cp: usize) -> R<usize> {
    ctx.proto = "rt6";
    ctx.s("RT6");
    let hdr_len = usize::from(u8_at(data, cp + 1)?);
    ctx.f(format_args!(" (len={hdr_len}"));
    let kind = u8_at(data, cp + 2)?;
    ctx.f(format_args!(", type={kind}"));
    if kind == 0 {
        ctx.s(" [Deprecated]");
    }
    ctx.f(format_args!(", segleft={}", u8_at(data, cp + 3)?));
    let addresses = match kind {
        0 | 2 => {
            let reserved = be32(data, cp + 4)?;
            if reserved != 0 {
                ctx.f(format_args!(", rsv=0x{reserved:x}"));
            }
            if hdr_len % 2 == 1 {
                ctx.f(format_args!(" (invalid length {hdr_len}) (invalid)"));
                return Ok(0);
            }
            hdr_len / 2
        }
        4 => {
            let last_entry = u8_at(data, cp + 4)?;
            ctx.f(format_args!(", last-entry={last_entry}"));
            let flags = u8_at(data, cp + 5)?;
            if flags != 0 {
                ctx.f(format_args!(", flags=0x{flags:x}"));
            }
            ctx.f(format_args!(", tag={:x}", be16(data, cp + 6)?));
            if hdr_len % 2 == 1 {
                ctx.f(format_args!(" (invalid length {hdr_len}) (invalid)"));
                return Ok(0);
            }
            usize::from(last_entry) + 1
        }
        _ => {
            ctx.s(" (unknown type) (invalid)");
            return Ok(0);
        }
    };
    for i in 0..addresses {
        let addr = super::bytes(data, cp + 8 + i * 16, 16)?;
        ctx.f(format_args!(", [{i}]"));
        ipv6(ctx.out, addr);
    }
    ctx.s(") ");
    Ok((hdr_len + 1) * 8)
}
