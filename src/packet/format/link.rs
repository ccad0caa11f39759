//! Link layers: Ethernet, BSD loopback, raw IP, Linux cooked (SLL, SLL2),
//! NFLOG, and a few framings tcpdump's test captures use.

use super::{Ctx, R, Trunc, be16, be32, ip, u8_at};
use std::fmt::Write;

use crate::packet::decode::linktype::*;

pub fn print(ctx: &mut Ctx, linktype: u32, data: &[u8], length: usize) -> R {
    match linktype {
        ETHERNET => ether(ctx, data, length),
        NULL | LOOP => {
            ctx.proto = "null";
            let raw = be32(data, 0)?;
            let family = if linktype == NULL {
                let swapped = raw.swap_bytes();
                if raw & 0xffff_0000 != 0 { swapped } else { raw }
            } else {
                raw
            };
            let rest = &data[4..];
            let length = length.saturating_sub(4);
            match family {
                2 => ip::ip4(ctx, rest, length),
                24 | 28 | 30 => ip::ip6(ctx, rest, length),
                _ => {
                    ctx.f(format_args!("AF {family} {length}"));
                    Ok(())
                }
            }
        }
        RAW | 12 | 14 | IPV4 | IPV6 => match u8_at(data, 0)? >> 4 {
            4 => ip::ip4(ctx, data, length),
            6 => ip::ip6(ctx, data, length),
            v => {
                ctx.f(format_args!("ip v{v}"));
                Ok(())
            }
        },
        SLL => {
            ctx.proto = "sll";
            if data.len() < 16 {
                return Err(Trunc);
            }
            let protocol = be16(data, 14)?;
            ethertype(ctx, protocol, &data[16..], length.saturating_sub(16), data)
        }
        SLL2 => {
            ctx.proto = "sll2";
            if data.len() < 20 {
                return Err(Trunc);
            }
            let protocol = be16(data, 0)?;
            let ifindex = be32(data, 4)?;
            let lookup = ctx.host.ifname;
            let name = ctx
                .ifnames
                .entry(ifindex)
                .or_insert_with(|| lookup(ifindex).unwrap_or_else(|| "?".into()))
                .clone();
            let kind = match data[10] {
                0 => "In",
                1 => "B",
                2 => "M",
                3 => "P",
                4 => "Out",
                _ => "?",
            };
            ctx.f(format_args!("{name:<5} {kind:<3} "));
            ethertype(ctx, protocol, &data[20..], length.saturating_sub(20), data)
        }
        NFLOG => nflog(ctx, data, length),
        IPNET => {
            // Solaris ipnet: 24-byte header, address family at byte 1.
            ctx.proto = "ipnet";
            if data.len() < 24 {
                return Err(Trunc);
            }
            let rest = &data[24..];
            let length = length.saturating_sub(24);
            match data[1] {
                2 => ip::ip4(ctx, rest, length),
                26 => ip::ip6(ctx, rest, length),
                family => {
                    ctx.f(format_args!("IPv? (family {family})"));
                    Ok(())
                }
            }
        }
        BRCM_PREPEND => {
            ctx.proto = "brcm";
            if data.len() < 4 {
                return Err(Trunc);
            }
            ether(ctx, &data[4..], length.saturating_sub(4))
        }
        IPOIB => {
            ctx.proto = "ipoib";
            // 40 bytes of link addresses, then the type and 2 reserved bytes.
            let protocol = be16(data, 40)?;
            if data.len() < 44 {
                return Err(Trunc);
            }
            ethertype(ctx, protocol, &data[44..], length.saturating_sub(44), data)
        }
        ARCNET_LINUX => arcnet(ctx, data, length),
        other => {
            let _ = write!(ctx.out, "unsupported link type {other}");
            Ok(())
        }
    }
}

pub fn ether(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "ether";
    if data.len() < 14 {
        return Err(Trunc);
    }
    let mut kind = be16(data, 12)?;
    let mut off = 14;
    // VLAN tags print only with -e; skip them.
    while matches!(kind, 0x8100 | 0x88a8 | 0x9100 | 0x9200) {
        kind = be16(data, off + 2)?;
        off += 4;
    }
    if kind <= 1500 {
        // 802.3 length field: LLC. tcpdump prints the LLC/SNAP layer.
        return llc(ctx, &data[off..], length.saturating_sub(off), data);
    }
    ethertype(ctx, kind, &data[off..], length.saturating_sub(off), data)
}

/// Hands the payload to the protocol printer named by an ethertype.
pub fn ethertype(ctx: &mut Ctx, kind: u16, data: &[u8], length: usize, frame: &[u8]) -> R {
    let length = length.max(data.len());
    match kind {
        0x0800 => ip::ip4(ctx, data, length),
        0x86dd => ip::ip6(ctx, data, length),
        0x0806 | 0x8035 => super::arp::arp(ctx, data, length),
        _ => {
            let name = ethertype_name(kind);
            if frame.len() >= 12 && !std::ptr::eq(frame, data) && frame.len() - data.len() >= 12 {
                // Unknown types print the MAC addresses, as tcpdump does without -e.
                super::linkaddr(ctx.out, &frame[6..12]);
                ctx.s(" > ");
                super::linkaddr(ctx.out, &frame[0..6]);
                ctx.s(", ");
            }
            match name {
                Some(n) => ctx.f(format_args!("ethertype {n} (0x{kind:04x})")),
                None => ctx.f(format_args!("ethertype Unknown (0x{kind:04x})")),
            }
            ctx.f(format_args!(
                ", length {}: ",
                length + (frame.len() - data.len())
            ));
            super::text::hexdump(ctx.out, data, length);
            Ok(())
        }
    }
}

fn llc(ctx: &mut Ctx, data: &[u8], length: usize, frame: &[u8]) -> R {
    ctx.proto = "llc";
    let dsap = u8_at(data, 0)?;
    let ssap = u8_at(data, 1)?;
    let control = u8_at(data, 2)?;
    if dsap == 0xaa && ssap == 0xaa && control == 3 {
        return snap(ctx, data, length, frame);
    }
    ctx.f(format_args!(
        "LLC, dsap 0x{:02x}, ssap 0x{:02x}, length {length}",
        dsap & 0xfe,
        ssap & 0xfe
    ));
    Ok(())
}

/// SNAP after an LLC header (`data` starts at the LLC header): the
/// encapsulated ethertypes netlens prints, or tcpdump's SNAP line and a hex
/// dump of the LLC payload for the others.
fn snap(ctx: &mut Ctx, data: &[u8], length: usize, frame: &[u8]) -> R {
    ctx.proto = "snap";
    if data.len() < 8 || length < 8 {
        return Err(Trunc);
    }
    let oui = u32::from_be_bytes([0, data[3], data[4], data[5]]);
    let kind = be16(data, 6)?;
    let length = length - 8;
    // OUI 0 (encapsulated Ethernet) and 0x0000f8 (Cisco bridged) carry an
    // ethertype.
    if matches!(oui, 0x000000 | 0x0000f8) && matches!(kind, 0x0800 | 0x86dd | 0x0806 | 0x8035) {
        return ethertype(ctx, kind, &data[8..], length, data);
    }
    if frame.len() >= 12 {
        super::linkaddr(ctx.out, &frame[6..12]);
        ctx.s(" > ");
        super::linkaddr(ctx.out, &frame[0..6]);
        ctx.s(" ");
    }
    if oui == 0 {
        let name = ethertype_name(kind).unwrap_or("Unknown");
        ctx.f(format_args!(
            "SNAP, ethertype {name} (0x{kind:04x}), length {length}: "
        ));
    } else {
        let name = match oui {
            0x00000c => "Cisco",
            0x0000f8 => "Cisco bridged",
            0x080007 => "Appletalk",
            _ => "Unknown",
        };
        let pid = if oui == 0x0000f8 {
            ethertype_name(kind).unwrap_or("Unknown")
        } else {
            "Unknown"
        };
        ctx.f(format_args!(
            "SNAP, oui {name} (0x{oui:06x}), pid {pid} (0x{kind:04x}), length {length}: "
        ));
    }
    super::text::hexdump(ctx.out, data, length + 8);
    Ok(())
}

pub fn ethertype_name(kind: u16) -> Option<&'static str> {
    Some(match kind {
        0x0800 => "IPv4",
        0x0806 => "ARP",
        0x86dd => "IPv6",
        0x8100 => "802.1Q",
        0x88a8 => "802.1Q-QinQ",
        0x9100 => "802.1Q-9100",
        0x9200 => "802.1Q-9200",
        0x8035 => "Reverse ARP",
        0x8847 => "MPLS unicast",
        0x8848 => "MPLS multicast",
        0x8863 => "PPPoE D",
        0x8864 => "PPPoE S",
        0x88cc => "LLDP",
        0x0200 => "PUP",
        0x1000 => "Trailer",
        0x6558 => "TEB",
        0x8137 => "IPX",
        0x809b => "Appletalk",
        0x80f3 => "Appletalk ARP",
        0x888e => "EAPOL",
        0x88e5 => "MACsec",
        0x8809 => "Slow Protocols",
        0x8808 => "MAC control",
        0x88f7 => "PTP",
        0x9000 => "Loopback",
        0x6002 => "MOP RC",
        0x6001 => "MOP DL",
        0x6003 => "DN",
        0x6004 => "LAT",
        0x8038 => "DEC LanBridge",
        0x0600 => "NS",
        0x8892 => "PROFINET",
        0x88a2 => "AoE",
        0x8906 => "FCoE",
        0x8914 => "FIP",
        0x893a => "IEEE1905.1",
        0x88e7 => "PBB",
        0x8902 => "CFM",
        _ => return None,
    })
}

fn nflog(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "nflog";
    let family = u8_at(data, 0)?;
    let _version = u8_at(data, 1)?;
    let mut off = 4;
    // TLVs in host (little-endian) order, padded to 4 bytes.
    loop {
        let tlv_len = u16::from_le_bytes([u8_at(data, off)?, u8_at(data, off + 1)?]) as usize;
        let tlv_type = u16::from_le_bytes([u8_at(data, off + 2)?, u8_at(data, off + 3)?]);
        if tlv_len < 4 {
            return Err(Trunc);
        }
        if tlv_type == 9 {
            let start = off + 4;
            let end = (off + tlv_len).min(data.len());
            let payload = data.get(start..end).ok_or(Trunc)?;
            let plen = tlv_len - 4;
            return match family {
                2 => ip::ip4(ctx, payload, plen),
                10 => ip::ip6(ctx, payload, plen),
                _ => {
                    ctx.f(format_args!("pf {family}, length {length}"));
                    Ok(())
                }
            };
        }
        off += (tlv_len + 3) & !3;
        if off >= data.len() {
            return Ok(());
        }
    }
}

fn arcnet(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    ctx.proto = "arcnet";
    let kind = u8_at(data, 4)?;
    let mut header = match kind {
        240 | 241 => 5,
        _ => 8,
    };
    if header == 8 && u8_at(data, 5)? == 0xff {
        header += 4;
    }
    if data.len() < header {
        return Err(Trunc);
    }
    let rest = &data[header..];
    let rest_len = length.saturating_sub(header);
    match kind {
        212 | 240 => ip::ip4(ctx, rest, rest_len),
        196 => ip::ip6(ctx, rest, rest_len),
        213 | 241 | 214 => super::arp::arp(ctx, rest, rest_len),
        _ => {
            ctx.f(format_args!("arcnet type 0x{kind:02x}"));
            Ok(())
        }
    }
}
