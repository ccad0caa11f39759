//! How nft prints values: its datatypes (nftables' src/datatype.c and
//! the symbol tables of proto.c, ct.c, meta.c), and bit helpers.

use std::fmt::Write;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A value's data type, as far as printing it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// Decimal, big-endian (header fields).
    Integer,
    /// Decimal, host byte order (meta and ct keys).
    HostInteger,
    /// `0x..`, big-endian: raw payload (`@nh,8,8`).
    Hex,
    /// `0x%08x`, host byte order: meta mark, ct mark.
    Mark,
    IpAddr,
    Ip6Addr,
    EtherAddr,
    /// Big-endian ethertype: `ip`, `ip6`, `arp`, `8021q`.
    EtherType,
    ArpOp,
    InetProto,
    InetService,
    IcmpType,
    Icmp6Type,
    IcmpCode,
    Icmpv6Code,
    IcmpxCode,
    TcpFlag,
    Dscp,
    Ecn,
    CtState,
    CtStatus,
    CtDir,
    PktType,
    NfProto,
    IfName,
    IfIndex,
    IfType,
    DevGroup,
    /// tc handle `major:minor`.
    ClassId,
    Boolean,
}

impl Ty {
    /// nft's bitmask types: printed as flag lists.
    pub fn is_bitmask(self) -> bool {
        matches!(self, Ty::TcpFlag | Ty::CtState | Ty::CtStatus)
    }

    /// Types nft prints `addr/len` for.
    pub fn has_prefix(self) -> bool {
        matches!(self, Ty::IpAddr | Ty::Ip6Addr)
    }

    /// Types whose bytes are in host order (compared as such when sorting).
    pub fn host_order(self) -> bool {
        matches!(
            self,
            Ty::HostInteger
                | Ty::Mark
                | Ty::CtState
                | Ty::CtStatus
                | Ty::IfIndex
                | Ty::IfType
                | Ty::DevGroup
                | Ty::ClassId
                | Ty::IfName
        )
    }

    /// The type of an nft datatype id (NFTA_SET_DATA_TYPE of a map).
    pub fn from_id(id: u32) -> Ty {
        match id {
            2 => Ty::NfProto,
            7 => Ty::IpAddr,
            8 => Ty::Ip6Addr,
            9 => Ty::EtherAddr,
            10 => Ty::EtherType,
            12 => Ty::InetProto,
            13 => Ty::InetService,
            14 => Ty::IcmpType,
            15 => Ty::TcpFlag,
            19 => Ty::Mark,
            20 => Ty::IfIndex,
            26 => Ty::CtState,
            28 => Ty::CtStatus,
            29 => Ty::Icmp6Type,
            31 => Ty::PktType,
            36 => Ty::Dscp,
            41 => Ty::IfName,
            _ => Ty::HostInteger,
        }
    }
}

/// Flag names of the bitmask types, in nft's order.
fn flags(ty: Ty) -> &'static [(&'static str, u64)] {
    match ty {
        Ty::TcpFlag => &[
            ("fin", 0x01),
            ("syn", 0x02),
            ("rst", 0x04),
            ("psh", 0x08),
            ("ack", 0x10),
            ("urg", 0x20),
            ("ecn", 0x40),
            ("cwr", 0x80),
        ],
        Ty::CtState => &[
            ("invalid", 1),
            ("established", 2),
            ("related", 4),
            ("new", 8),
            ("untracked", 64),
        ],
        Ty::CtStatus => &[
            ("expected", 1),
            ("seen-reply", 2),
            ("assured", 4),
            ("confirmed", 8),
            ("snat", 16),
            ("dnat", 32),
            ("dying", 512),
        ],
        _ => &[],
    }
}

/// The name of one symbolic value, if the type has names.
fn symbol(ty: Ty, value: u64) -> Option<&'static str> {
    let table: &[(&str, u64)] = match ty {
        Ty::IcmpType => &[
            ("echo-reply", 0),
            ("destination-unreachable", 3),
            ("source-quench", 4),
            ("redirect", 5),
            ("echo-request", 8),
            ("router-advertisement", 9),
            ("router-solicitation", 10),
            ("time-exceeded", 11),
            ("parameter-problem", 12),
            ("timestamp-request", 13),
            ("timestamp-reply", 14),
            ("info-request", 15),
            ("info-reply", 16),
            ("address-mask-request", 17),
            ("address-mask-reply", 18),
        ],
        Ty::Icmp6Type => &[
            ("destination-unreachable", 1),
            ("packet-too-big", 2),
            ("time-exceeded", 3),
            ("parameter-problem", 4),
            ("echo-request", 128),
            ("echo-reply", 129),
            ("mld-listener-query", 130),
            ("mld-listener-report", 131),
            ("mld-listener-done", 132),
            ("nd-router-solicit", 133),
            ("nd-router-advert", 134),
            ("nd-neighbor-solicit", 135),
            ("nd-neighbor-advert", 136),
            ("nd-redirect", 137),
            ("router-renumbering", 138),
            ("ind-neighbor-solicit", 141),
            ("ind-neighbor-advert", 142),
            ("mld2-listener-report", 143),
        ],
        Ty::IcmpCode => &[
            ("net-unreachable", 0),
            ("host-unreachable", 1),
            ("prot-unreachable", 2),
            ("port-unreachable", 3),
            ("frag-needed", 4),
            ("net-prohibited", 9),
            ("host-prohibited", 10),
            ("admin-prohibited", 13),
        ],
        Ty::Icmpv6Code => &[
            ("no-route", 0),
            ("admin-prohibited", 1),
            ("addr-unreachable", 3),
            ("port-unreachable", 4),
            ("policy-fail", 5),
            ("reject-route", 6),
        ],
        Ty::IcmpxCode => &[
            ("no-route", 0),
            ("port-unreachable", 1),
            ("host-unreachable", 2),
            ("admin-prohibited", 3),
        ],
        Ty::Dscp => &[
            ("cs0", 0x00),
            ("cs1", 0x08),
            ("cs2", 0x10),
            ("cs3", 0x18),
            ("cs4", 0x20),
            ("cs5", 0x28),
            ("cs6", 0x30),
            ("cs7", 0x38),
            ("lephb", 0x01),
            ("af11", 0x0a),
            ("af12", 0x0c),
            ("af13", 0x0e),
            ("af21", 0x12),
            ("af22", 0x14),
            ("af23", 0x16),
            ("af31", 0x1a),
            ("af32", 0x1c),
            ("af33", 0x1e),
            ("af41", 0x22),
            ("af42", 0x24),
            ("af43", 0x26),
            ("va", 0x2c),
            ("ef", 0x2e),
        ],
        Ty::Ecn => &[("not-ect", 0), ("ect1", 1), ("ect0", 2), ("ce", 3)],
        Ty::EtherType => &[
            ("ip", 0x0800),
            ("arp", 0x0806),
            ("ip6", 0x86dd),
            ("8021q", 0x8100),
            ("8021ad", 0x88a8),
        ],
        Ty::ArpOp => &[
            ("request", 1),
            ("reply", 2),
            ("rrequest", 3),
            ("rreply", 4),
            ("inrequest", 8),
            ("inreply", 9),
            ("nak", 10),
        ],
        Ty::CtDir => &[("original", 0), ("reply", 1)],
        Ty::PktType => &[
            ("host", 0),
            ("broadcast", 1),
            ("multicast", 2),
            ("other", 3),
        ],
        Ty::NfProto => &[("ipv4", 2), ("ipv6", 10)],
        Ty::IfType => &[
            ("ether", 1),
            ("ppp", 512),
            ("ipip", 768),
            ("ipip6", 769),
            ("loopback", 772),
            ("sit", 776),
            ("ipgre", 778),
        ],
        Ty::Boolean => &[("missing", 0), ("exists", 1)],
        Ty::InetProto => &INET_PROTOCOLS,
        _ => &[],
    };
    table
        .iter()
        .find(|(_, number)| *number == value)
        .map(|(name, _)| *name)
}

/// /etc/protocols as Debian's netbase ships it: nft prints these names.
const INET_PROTOCOLS: [(&str, u64); 56] = [
    ("ip", 0),
    ("icmp", 1),
    ("igmp", 2),
    ("ggp", 3),
    ("ipencap", 4),
    ("st", 5),
    ("tcp", 6),
    ("egp", 8),
    ("igp", 9),
    ("pup", 12),
    ("udp", 17),
    ("hmp", 20),
    ("xns-idp", 22),
    ("rdp", 27),
    ("iso-tp4", 29),
    ("dccp", 33),
    ("xtp", 36),
    ("ddp", 37),
    ("idpr-cmtp", 38),
    ("ipv6", 41),
    ("ipv6-route", 43),
    ("ipv6-frag", 44),
    ("idrp", 45),
    ("rsvp", 46),
    ("gre", 47),
    ("esp", 50),
    ("ah", 51),
    ("skip", 57),
    ("ipv6-icmp", 58),
    ("ipv6-nonxt", 59),
    ("ipv6-opts", 60),
    ("rspf", 73),
    ("vmtp", 81),
    ("eigrp", 88),
    ("ospf", 89),
    ("ax.25", 93),
    ("ipip", 94),
    ("etherip", 97),
    ("encap", 98),
    ("pim", 103),
    ("ipcomp", 108),
    ("vrrp", 112),
    ("l2tp", 115),
    ("isis", 124),
    ("sctp", 132),
    ("fc", 133),
    ("mobility-header", 135),
    ("udplite", 136),
    ("mpls-in-ip", 137),
    ("manet", 138),
    ("hip", 139),
    ("shim6", 140),
    ("wesp", 141),
    ("rohc", 142),
    ("ethernet", 143),
    ("mptcp", 262),
];

/// The bytes as an unsigned number, in the type's byte order (up to 16
/// bytes; more are cut).
pub fn number(ty: Ty, bytes: &[u8]) -> u128 {
    let bytes = &bytes[..bytes.len().min(16)];
    let fold = |acc: u128, byte: &u8| (acc << 8) | u128::from(*byte);
    if ty.host_order() && cfg!(target_endian = "little") {
        bytes.iter().rev().fold(0, fold)
    } else {
        bytes.iter().fold(0, fold)
    }
}

/// A value of `ty` as nft prints it.
pub fn format(ty: Ty, bytes: &[u8]) -> String {
    let n = number(ty, bytes);
    match ty {
        Ty::IpAddr => match <[u8; 4]>::try_from(bytes) {
            Ok(octets) => Ipv4Addr::from(octets).to_string(),
            Err(_) => hex(bytes),
        },
        Ty::Ip6Addr => match <[u8; 16]>::try_from(bytes) {
            Ok(octets) => Ipv6Addr::from(octets).to_string(),
            Err(_) => hex(bytes),
        },
        Ty::EtherAddr => {
            let parts: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
            parts.join(":")
        }
        Ty::IfName => {
            let end = bytes.iter().position(|b| *b == 0);
            let text = crate::text::escape_control(&String::from_utf8_lossy(
                &bytes[..end.unwrap_or(bytes.len())],
            ))
            .into_owned();
            // No terminating NUL compared: a prefix match, `"eth*"`.
            let star = if end.is_none() { "*" } else { "" };
            format!("\"{text}{star}\"")
        }
        Ty::IfIndex => match interface_name(n as u32) {
            Some(name) => format!("\"{name}\""),
            None => n.to_string(),
        },
        Ty::DevGroup if n == 0 => "\"default\"".to_string(),
        Ty::Mark => format!("0x{n:08x}"),
        Ty::Hex => format!("0x{n:x}"),
        Ty::ClassId => match n {
            0 => "none".to_string(),
            0xffff_ffff => "root".to_string(),
            _ => format!("{:x}:{:x}", n >> 16, n & 0xffff),
        },
        Ty::TcpFlag | Ty::CtState | Ty::CtStatus => match symbol_flag(ty, n as u64) {
            Some(name) => name.to_string(),
            None => format!("0x{n:x}"),
        },
        Ty::Dscp | Ty::EtherType | Ty::IfType => match symbol(ty, n as u64) {
            Some(name) => name.to_string(),
            None if ty == Ty::EtherType => format!("0x{n:04x}"),
            None => format!("0x{n:02x}"),
        },
        _ => match symbol(ty, n as u64) {
            Some(name) => name.to_string(),
            None => n.to_string(),
        },
    }
}

fn symbol_flag(ty: Ty, value: u64) -> Option<&'static str> {
    flags(ty)
        .iter()
        .find(|(_, bit)| *bit == value)
        .map(|(name, _)| *name)
}

/// A bitmask as nft lists its flags, joined by `separator`; None when a
/// set bit has no name.
pub fn flag_list(ty: Ty, value: u128, separator: &str) -> Option<String> {
    let mut names = Vec::new();
    let mut left = value;
    for (name, bit) in flags(ty) {
        if value & u128::from(*bit) != 0 {
            names.push(*name);
            left &= !u128::from(*bit);
        }
    }
    (left == 0 && !names.is_empty()).then(|| names.join(separator))
}

/// `0x` and the bytes in hex, as nft prints an unknown value.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::from("0x");
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The name of interface `index` in this thread's namespace, escaped.
fn interface_name(index: u32) -> Option<String> {
    crate::collect::link::interface_name(index)
        .map(|name| crate::text::escape_control(&name).into_owned())
}

/// A verdict code (NF_DROP, NFT_JUMP...) and chain as nft prints them.
pub fn verdict(code: i32, chain: Option<&str>) -> String {
    let chain = chain.unwrap_or_default();
    match code {
        0 => "drop".to_string(),
        1 => "accept".to_string(),
        2 => "stolen".to_string(),
        3 => "queue".to_string(),
        -1 => "continue".to_string(),
        -2 => "break".to_string(),
        -3 => format!("jump {chain}"),
        -4 => format!("goto {chain}"),
        -5 => "return".to_string(),
        _ => format!("unknown verdict value {}", code as u32),
    }
}

/// Bits `start..start + count` of big-endian `bytes`, right-aligned in
/// `count.div_ceil(8)` big-endian bytes; missing bits read as zero.
pub fn bits(bytes: &[u8], start: u32, count: u32) -> Vec<u8> {
    let size = count.div_ceil(8) as usize;
    let mut out = vec![0u8; size];
    let pad = size as u32 * 8 - count;
    for i in 0..count {
        let from = start.saturating_add(i);
        let set = bytes
            .get((from / 8) as usize)
            .is_some_and(|byte| byte & (0x80 >> (from % 8)) != 0);
        if set {
            let to = pad + i;
            if let Some(byte) = out.get_mut((to / 8) as usize) {
                *byte |= 0x80 >> (to % 8);
            }
        }
    }
    out
}

/// `bytes` holding `used` bits right-aligned, moved to the top of `total`.
pub fn shift_left(bytes: &[u8], total: u32, used: u32) -> Vec<u8> {
    let size = (total / 8) as usize;
    let mut out = vec![0u8; size];
    let value_bits = bytes.len() as u32 * 8;
    for i in 0..used {
        let from = value_bits.saturating_sub(used) + i;
        if bytes
            .get((from / 8) as usize)
            .is_some_and(|b| b & (0x80 >> (from % 8)) != 0)
            && let Some(byte) = out.get_mut((i / 8) as usize)
        {
            *byte |= 0x80 >> (i % 8);
        }
    }
    out
}

/// The leading one bits of `mask` when it is a prefix mask (ones, then
/// zeros only), in big-endian bit order.
pub fn prefix_len(mask: &[u8]) -> Option<u32> {
    let ones: u32 = mask.iter().map(|b| b.count_ones()).sum();
    let expected = bits_prefix(mask.len(), ones);
    (expected == mask).then_some(ones)
}

fn bits_prefix(size: usize, ones: u32) -> Vec<u8> {
    (0..size)
        .map(|i| {
            let before = i as u32 * 8;
            match ones.saturating_sub(before) {
                0 => 0,
                n if n >= 8 => 0xff,
                n => 0xffu8 << (8 - n),
            }
        })
        .collect()
}

/// The first and one-past-last set bit of big-endian `mask`, when its
/// ones are contiguous.
pub fn mask_range(mask: &[u8]) -> Option<(u32, u32)> {
    let total = mask.len() as u32 * 8;
    let set = |bit: u32| mask[(bit / 8) as usize] & (0x80 >> (bit % 8)) != 0;
    let first = (0..total).find(|bit| set(*bit))?;
    let end = (first..total).find(|bit| !set(*bit)).unwrap_or(total);
    (end..total).all(|bit| !set(bit)).then_some((first, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_nft_prints_them() {
        assert_eq!(format(Ty::IpAddr, &[198, 18, 0, 1]), "198.18.0.1");
        assert_eq!(format(Ty::InetService, &[0x1f, 0x90]), "8080");
        assert_eq!(format(Ty::InetProto, &[58]), "ipv6-icmp");
        assert_eq!(format(Ty::InetProto, &[253]), "253");
        assert_eq!(format(Ty::Mark, &16u32.to_ne_bytes()), "0x00000010");
        assert_eq!(format(Ty::IfName, b"lo\0\0"), "\"lo\"");
        assert_eq!(format(Ty::IfName, b"eth"), "\"eth*\"");
        assert_eq!(format(Ty::IfName, b"a\x1b\0"), "\"a\\x1b\"");
        assert_eq!(format(Ty::IcmpType, &[8]), "echo-request");
        assert_eq!(format(Ty::TcpFlag, &[0x12]), "0x12");
        assert_eq!(format(Ty::Dscp, &[0x10]), "cs2");
        assert_eq!(
            format(Ty::EtherAddr, &[2, 0, 0, 0, 0, 1]),
            "02:00:00:00:00:01"
        );
        assert_eq!(
            flag_list(Ty::CtState, 6, ","),
            Some("established,related".into())
        );
        assert_eq!(flag_list(Ty::CtState, 0x80, ","), None);
        assert_eq!(verdict(-3, Some("x")), "jump x");
    }

    #[test]
    fn bit_helpers() {
        assert_eq!(bits(&[0xab, 0xcd], 4, 8), vec![0xbc]);
        assert_eq!(bits(&[0xfc], 0, 6), vec![0x3f]);
        assert_eq!(bits(&[0x01], 0, 16), vec![0x01, 0x00]);
        assert_eq!(prefix_len(&[0xff, 0xfe, 0, 0]), Some(15));
        assert_eq!(prefix_len(&[0xff, 0x01, 0, 0]), None);
        assert_eq!(mask_range(&[0xfc]), Some((0, 6)));
        assert_eq!(mask_range(&[0x0f, 0xf0]), Some((4, 12)));
        assert_eq!(mask_range(&[0x17]), None);
        assert_eq!(mask_range(&[0]), None);
    }
}
