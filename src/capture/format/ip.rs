//! IPv4 and IPv6 (with extension headers), and the demultiplexer to the
//! transport printers.

use super::{Ctx, R, Trunc, be16, be32, icmp, ipv4, ipv6, tcp, u8_at, udp};

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
    // tcpdump checks the first byte is captured before printing "IP".
    u8_at(data, 0)?;
    ctx.s("IP ");
    let vhl = u8_at(data, 0)?;
    if vhl >> 4 != 4 {
        if vhl >> 4 == 6 {
            ctx.s("IP6, wrong link-layer encapsulation");
        } else {
            ctx.f(format_args!("IP{}", vhl >> 4));
        }
        return Ok(());
    }
    if length < 20 {
        ctx.f(format_args!("truncated-ip {length}"));
        return Ok(());
    }
    let hlen = usize::from(vhl & 0x0f) * 4;
    if hlen < 20 {
        ctx.f(format_args!("bad-hlen {hlen}"));
        return Ok(());
    }
    let mut len = usize::from(be16(data, 2)?);
    if length < len {
        ctx.f(format_args!(
            "truncated-ip - {} bytes missing! ",
            len - length
        ));
    }
    if len < hlen {
        if len != 0 {
            ctx.f(format_args!("bad-len {len}"));
            return Ok(());
        }
        // A TSO send: the length field is zero.
        len = length;
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
        58 => icmp::icmp6(ctx, data, length, info),
        4 => ip4(ctx, data, length),
        41 => ip6(ctx, data, length),
        2 if !info.v6 => icmp::igmp(ctx, data, length),
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
                ctx.s("HBH ");
                if found_hbh || previous != 255 {
                    ctx.s(if found_hbh {
                        "[The Hop-by-Hop Options header was already found] (invalid)"
                    } else {
                        "[The Hop-by-Hop Options header don't follow the IPv6 header] (invalid)"
                    });
                    return Ok(());
                }
                if payload_len == 0 {
                    jumbo = jumbo_payload(data, cp);
                    if jumbo.is_none() {
                        ctx.s("[No valid Jumbo Payload Hop-by-Hop option found] (invalid)");
                        return Ok(());
                    }
                }
                advance = options(ctx, data, cp)?;
                found_extension_header = true;
                found_hbh = true;
                nh = u8_at(data, cp)?;
            }
            60 => {
                ctx.s("DSTOPT ");
                advance = options(ctx, data, cp)?;
                found_extension_header = true;
                nh = u8_at(data, cp)?;
            }
            44 => {
                let offlg = be16(data, cp + 2)?;
                let offset = offlg & 0xfff8;
                let rest = (40 + payload_len).saturating_sub(cp + 8);
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
                let hdr_len = usize::from(u8_at(data, cp + 1)?);
                let kind = u8_at(data, cp + 2)?;
                let segleft = u8_at(data, cp + 3)?;
                ctx.f(format_args!(
                    "srcrt (len={hdr_len}, type={kind}, segleft={segleft}"
                ));
                if kind == 0 || kind == 2 {
                    let _rsv = be32(data, cp + 4)?;
                    let count = hdr_len / 2;
                    for i in 0..count {
                        let addr = super::bytes(data, cp + 8 + i * 16, 16)?;
                        ctx.f(format_args!(", [{i}]"));
                        ipv6(ctx.out, addr);
                    }
                }
                ctx.s(") ");
                found_extension_header = true;
                nh = u8_at(data, cp)?;
                advance = (hdr_len + 1) * 8;
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

/// A valid Jumbo Payload option (type 0xc2, 4 bytes, at least 65536) in
/// the hop-by-hop header at `cp`: its payload length.
fn jumbo_payload(data: &[u8], cp: usize) -> Option<usize> {
    let end = cp + (usize::from(*data.get(cp + 1)?) + 1) * 8;
    let mut at = cp + 2;
    while at < end {
        let kind = *data.get(at)?;
        if kind == 0 {
            at += 1;
            continue;
        }
        let len = usize::from(*data.get(at + 1)?);
        if kind == 0xc2 {
            let value = be32(data, at + 2).ok()?;
            return (len == 4 && value >= 65536).then_some(value as usize);
        }
        at += 2 + len;
    }
    None
}

/// Hop-by-hop and destination options: silent without -v, except that
/// truncation and bad lengths show.
fn options(ctx: &mut Ctx, data: &[u8], cp: usize) -> R<usize> {
    let _ = ctx;
    let hdr_len = (usize::from(u8_at(data, cp + 1)?) + 1) * 8;
    // The whole header must be captured for tcpdump to walk it.
    super::bytes(data, cp, hdr_len)?;
    Ok(hdr_len)
}
