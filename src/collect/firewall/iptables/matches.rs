//! The matches' options as iptables-save 1.8.9 prints them (the save
//! functions of extensions/libxt_*.c), for the revisions iptables 1.8.9
//! puts in the kernel. Any other match, or revision, prints as
//! `-m NAME` alone: netlens does not decode it.

use std::fmt::Write;
use std::net::Ipv4Addr;

use crate::text::escape_control;

use super::blob::{Ext, Family, be16_at, c_string, u16_at, u32_at};
use super::render::{ipv6_text, push_quoted, v4_prefix, v6_prefix};

/// XT_CONNTRACK_STATE_ALIAS: a conntrack match `-m state` made.
const CT_STATE_ALIAS: u16 = 1 << 13;

/// ` -m NAME` and its options.
pub(super) fn save(family: Family, m: &Ext, out: &mut String) {
    let alias = m.name == "conntrack"
        && (1..=3).contains(&m.revision)
        && u16_at(m.data, 146).is_some_and(|flags| flags & CT_STATE_ALIAS != 0);
    out.push_str(" -m ");
    if alias {
        out.push_str("state");
    } else {
        out.push_str(&escape_control(&m.name));
    }
    let mut options = String::new();
    if decode(family, m, &mut options).is_some() {
        out.push_str(&options);
    }
}

/// The options of the matches netlens decodes; None for the others and
/// for data too short.
fn decode(family: Family, m: &Ext, out: &mut String) -> Option<()> {
    let d = m.data;
    match (m.name.as_str(), m.revision) {
        ("tcp", 0) => tcp(d, out),
        ("udp", 0) => {
            ports(
                out,
                "--sport",
                [u16_at(d, 0)?, u16_at(d, 2)?],
                *d.get(8)? & 0x01 != 0,
            );
            ports(
                out,
                "--dport",
                [u16_at(d, 4)?, u16_at(d, 6)?],
                *d.get(8)? & 0x02 != 0,
            );
            Some(())
        }
        ("icmp", 0) if family == Family::V4 => icmp(d, out, "--icmp-type", true),
        ("icmp6", 0) if family == Family::V6 => icmp(d, out, "--icmpv6-type", false),
        ("multiport", 1) => multiport(d, out),
        ("statistic", 0) => statistic(d, out),
        ("conntrack", 1..=3) => conntrack(family, m.revision, d, out),
        ("comment", 0) => {
            out.push_str(" --comment");
            push_quoted(out, &c_string(d.get(..255)?));
            Some(())
        }
        ("limit", 0) => limit(d, out),
        ("mark" | "connmark", 1) => {
            if *d.get(8)? != 0 {
                out.push_str(" !");
            }
            out.push_str(" --mark");
            mark_mask(out, u32_at(d, 0)?, u32_at(d, 4)?);
            Some(())
        }
        ("addrtype", 1) => addrtype(d, out),
        ("iprange", 1) => iprange(family, d, out),
        ("mac", 0) => {
            let mac = d.get(..6)?;
            if u32_at(d, 8)? != 0 {
                out.push_str(" !");
            }
            let hex: Vec<String> = mac.iter().map(|b| format!("{b:02x}")).collect();
            let _ = write!(out, " --mac-source {}", hex.join(":"));
            Some(())
        }
        ("length", 0) => {
            let (min, max) = (u16_at(d, 0)?, u16_at(d, 2)?);
            let bang = if *d.get(4)? != 0 { " !" } else { "" };
            let _ = write!(out, "{bang} --length {}", range(min, max, ":"));
            Some(())
        }
        ("owner", 1) => owner(d, out),
        _ => None,
    }
}

/// `min` or `min{sep}max`.
fn range<T: PartialEq + std::fmt::Display>(min: T, max: T, sep: &str) -> String {
    if min == max {
        min.to_string()
    } else {
        format!("{min}{sep}{max}")
    }
}

/// tcp_save / udp_save's ports: only when not the whole range.
fn ports(out: &mut String, option: &str, [min, max]: [u16; 2], invert: bool) {
    if min != 0 || max != 0xFFFF {
        let bang = if invert { " !" } else { "" };
        let _ = write!(out, "{bang} {option} {}", range(min, max, ":"));
    }
}

/// struct xt_tcp.
fn tcp(d: &[u8], out: &mut String) -> Option<()> {
    let inv = *d.get(11)?;
    ports(
        out,
        "--sport",
        [u16_at(d, 0)?, u16_at(d, 2)?],
        inv & 0x01 != 0,
    );
    ports(
        out,
        "--dport",
        [u16_at(d, 4)?, u16_at(d, 6)?],
        inv & 0x02 != 0,
    );
    let (option, mask, cmp) = (*d.get(8)?, *d.get(9)?, *d.get(10)?);
    // XT_TCP_INV_FLAGS is 0x04, XT_TCP_INV_OPTION 0x08.
    if option != 0 || inv & 0x08 != 0 {
        let bang = if inv & 0x08 != 0 { " !" } else { "" };
        let _ = write!(out, "{bang} --tcp-option {option}");
    }
    if mask != 0 || inv & 0x04 != 0 {
        let bang = if inv & 0x04 != 0 { " !" } else { "" };
        let _ = write!(
            out,
            "{bang} --tcp-flags {} {}",
            tcp_flags(mask),
            tcp_flags(cmp)
        );
    }
    Some(())
}

/// print_tcpf: the flags by name, NONE for none.
fn tcp_flags(flags: u8) -> String {
    const NAMES: [&str; 6] = ["FIN", "SYN", "RST", "PSH", "ACK", "URG"];
    let set: Vec<&str> = (0..6)
        .filter(|bit| flags & (1 << bit) != 0)
        .filter_map(|bit| NAMES.get(bit).copied())
        .collect();
    if set.is_empty() {
        "NONE".to_string()
    } else {
        set.join(",")
    }
}

/// struct ipt_icmp / ip6t_icmp: type, code range, invert flag.
fn icmp(d: &[u8], out: &mut String, option: &str, any: bool) -> Option<()> {
    let (kind, low, high, inv) = (*d.first()?, *d.get(1)?, *d.get(2)?, *d.get(3)?);
    if inv & 0x01 != 0 {
        out.push_str(" !");
    }
    // icmp_save's "special hack for 'any' case"; icmp6 has none.
    if any && kind == 0xFF {
        let _ = write!(out, " {option} any");
        return Some(());
    }
    let _ = write!(out, " {option} {kind}");
    if low != 0 || high != 0xFF {
        let _ = write!(out, "/{low}");
    }
    Some(())
}

/// struct xt_multiport_v1: flags, count, ports[15], pflags[15], invert.
fn multiport(d: &[u8], out: &mut String) -> Option<()> {
    let (flags, count) = (*d.first()?, usize::from(*d.get(1)?).min(15));
    if *d.get(47)? != 0 {
        out.push_str(" !");
    }
    out.push_str(match flags {
        0 => " --sports ",
        1 => " --dports ",
        2 => " --ports ",
        _ => "",
    });
    let mut i = 0;
    while i < count {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{}", u16_at(d, 2 + 2 * i)?);
        // A range takes two ports, the first one flagged.
        if *d.get(32 + i)? != 0 {
            i += 1;
            let _ = write!(out, ":{}", u16_at(d, 2 + 2 * i)?);
        }
        i += 1;
    }
    Some(())
}

/// struct xt_statistic_info: mode, flags, then probability or every and
/// packet.
fn statistic(d: &[u8], out: &mut String) -> Option<()> {
    let bang = if u16_at(d, 2)? & 0x01 != 0 { " !" } else { "" };
    match u16_at(d, 0)? {
        0 => {
            let probability = f64::from(u32_at(d, 4)?) / f64::from(0x8000_0000u32);
            let _ = write!(out, " --mode random{bang} --probability {probability:.11}");
        }
        1 => {
            let every = u32_at(d, 4)?.wrapping_add(1);
            let packet = u32_at(d, 8)?;
            let _ = write!(out, " --mode nth{bang} --every {every} --packet {packet}");
        }
        _ => {}
    }
    Some(())
}

/// struct xt_rateinfo: avg (1/10000 s between packets), burst.
fn limit(d: &[u8], out: &mut String) -> Option<()> {
    const RATES: [(&str, u32); 4] = [
        ("day", 10_000 * 24 * 60 * 60),
        ("hour", 10_000 * 60 * 60),
        ("min", 10_000 * 60),
        ("sec", 10_000),
    ];
    let (avg, burst) = (u32_at(d, 0)?, u32_at(d, 4)?);
    out.push_str(" --limit");
    if avg == 0 {
        out.push_str(" inf");
    } else {
        // print_rate: the largest unit that still divides into the period.
        let mut unit = 0;
        while let Some((_, mult)) = RATES.get(unit + 1) {
            if avg > *mult || mult / avg < mult % avg {
                break;
            }
            unit += 1;
        }
        let (name, mult) = RATES.get(unit)?;
        let _ = write!(out, " {}/{name}", mult / avg);
    }
    if burst != 5 {
        let _ = write!(out, " --limit-burst {burst}");
    }
    Some(())
}

/// xtables_print_mark_mask.
pub(super) fn mark_mask(out: &mut String, mark: u32, mask: u32) {
    if mask == u32::MAX {
        let _ = write!(out, " 0x{mark:x}");
    } else {
        let _ = write!(out, " 0x{mark:x}/0x{mask:x}");
    }
}

/// struct xt_addrtype_info_v1: source, dest, flags.
fn addrtype(d: &[u8], out: &mut String) -> Option<()> {
    const TYPES: [&str; 12] = [
        "UNSPEC",
        "UNICAST",
        "LOCAL",
        "BROADCAST",
        "ANYCAST",
        "MULTICAST",
        "BLACKHOLE",
        "UNREACHABLE",
        "PROHIBIT",
        "THROW",
        "NAT",
        "XRESOLVE",
    ];
    let (source, dest, flags) = (u16_at(d, 0)?, u16_at(d, 2)?, u32_at(d, 4)?);
    for (types, option, invert) in [(source, "--src-type", 0x1), (dest, "--dst-type", 0x2)] {
        if types != 0 {
            let bang = if flags & invert != 0 { " !" } else { "" };
            let names: Vec<&str> = (0..TYPES.len())
                .filter(|bit| types & (1 << bit) != 0)
                .filter_map(|bit| TYPES.get(bit).copied())
                .collect();
            let _ = write!(out, "{bang} {option} {}", names.join(","));
        }
    }
    if flags & 0x4 != 0 {
        out.push_str(" --limit-iface-in");
    }
    if flags & 0x8 != 0 {
        out.push_str(" --limit-iface-out");
    }
    Some(())
}

/// An address of a union nf_inet_addr at `at`.
fn inet_addr(family: Family, d: &[u8], at: usize) -> Option<String> {
    Some(match family {
        Family::V4 => Ipv4Addr::from(<[u8; 4]>::try_from(d.get(at..at + 4)?).ok()?).to_string(),
        Family::V6 => ipv6_text(d.get(at..at + 16)?.try_into().ok()?),
    })
}

/// struct xt_iprange_mtinfo: src_min, src_max, dst_min, dst_max, flags.
fn iprange(family: Family, d: &[u8], out: &mut String) -> Option<()> {
    let flags = *d.get(64)?;
    for (at, option, on, invert) in [
        (0, "--src-range", 0x01, 0x10),
        (32, "--dst-range", 0x02, 0x20),
    ] {
        if flags & on != 0 {
            let bang = if flags & invert != 0 { " !" } else { "" };
            let (min, max) = (inet_addr(family, d, at)?, inet_addr(family, d, at + 16)?);
            let _ = write!(out, "{bang} {option} {min}-{max}");
        }
    }
    Some(())
}

/// struct xt_owner_match_info: uid and gid ranges, match, invert.
fn owner(d: &[u8], out: &mut String) -> Option<()> {
    let (matched, invert) = (*d.get(16)?, *d.get(17)?);
    // owner_mt_save's order: socket, uid, gid, supplementary groups.
    for (flag, option, at) in [
        (0x4, "--socket-exists", None),
        (0x1, "--uid-owner", Some(0)),
        (0x2, "--gid-owner", Some(8)),
        (0x8, "--suppl-groups", None),
    ] {
        if matched & flag == 0 {
            continue;
        }
        let bang = if invert & flag != 0 { " !" } else { "" };
        let _ = write!(out, "{bang} {option}");
        if let Some(at) = at {
            let _ = write!(out, " {}", range(u32_at(d, at)?, u32_at(d, at + 4)?, "-"));
        }
    }
    Some(())
}

/// xt_conntrack_mtinfo1/2/3 (conntrack_dump with numeric output).
fn conntrack(family: Family, revision: u8, d: &[u8], out: &mut String) -> Option<()> {
    let (flags, inv) = (u16_at(d, 146)?, u16_at(d, 148)?);
    let (state, status) = if revision == 1 {
        (u16::from(*d.get(150)?), u16::from(*d.get(151)?))
    } else {
        (u16_at(d, 150)?, u16_at(d, 152)?)
    };
    let bang = |bit: u16| if inv & bit != 0 { " !" } else { "" };
    if flags & 0x1 != 0 {
        let option = if flags & CT_STATE_ALIAS != 0 {
            "--state"
        } else {
            "--ctstate"
        };
        const STATES: [(u16, &str); 7] = [
            (1 << 0, "INVALID"),
            (1 << 3, "NEW"),
            (1 << 2, "RELATED"),
            (1 << 1, "ESTABLISHED"),
            (1 << 8, "UNTRACKED"),
            (1 << 6, "SNAT"),
            (1 << 7, "DNAT"),
        ];
        let _ = write!(out, "{} {option}{}", bang(0x1), names(state, &STATES));
    }
    if flags & 0x2 != 0 {
        let _ = write!(out, "{} --ctproto {}", bang(0x2), u16_at(d, 136)?);
    }
    for (bit, option, at) in [
        (0x04, "--ctorigsrc", 0),
        (0x08, "--ctorigdst", 32),
        (0x10, "--ctreplsrc", 64),
        (0x20, "--ctrepldst", 96),
    ] {
        if flags & bit != 0 {
            let addr = inet_addr(family, d, at)?;
            let mask = d.get(at + 16..at + 32)?;
            let mask = match family {
                Family::V4 => {
                    let mask: [u8; 4] = mask.get(..4)?.try_into().ok()?;
                    match v4_prefix(mask) {
                        Some(32) => String::new(),
                        Some(bits) => format!("/{bits}"),
                        None => format!("/{}", Ipv4Addr::from(mask)),
                    }
                }
                Family::V6 => {
                    let mask: [u8; 16] = mask.try_into().ok()?;
                    match v6_prefix(mask) {
                        Some(128) => String::new(),
                        Some(bits) => format!("/{bits}"),
                        None => format!("/{}", ipv6_text(mask)),
                    }
                }
            };
            let _ = write!(out, "{} {option} {addr}{mask}", bang(bit));
        }
    }
    for (bit, option, at, high_at) in [
        (0x100, "--ctorigsrcport", 138, 154),
        (0x200, "--ctorigdstport", 140, 156),
        (0x400, "--ctreplsrcport", 142, 158),
        (0x800, "--ctrepldstport", 144, 160),
    ] {
        if flags & bit != 0 {
            // Revision 3 has port ranges in host order, 1 and 2 a __be16.
            let (low, high) = if revision == 3 {
                (u16_at(d, at)?, u16_at(d, high_at)?)
            } else {
                (be16_at(d, at)?, 0)
            };
            let ports = if high == 0 {
                low.to_string()
            } else {
                range(low, high, ":")
            };
            let _ = write!(out, "{} {option} {ports}", bang(bit));
        }
    }
    if flags & 0x40 != 0 {
        const STATUS: [(u16, &str); 4] = [
            (1 << 0, "EXPECTED"),
            (1 << 1, "SEEN_REPLY"),
            (1 << 2, "ASSURED"),
            (1 << 3, "CONFIRMED"),
        ];
        let names = if status == 0 {
            " NONE".to_string()
        } else {
            names(status, &STATUS)
        };
        let _ = write!(out, "{} --ctstatus{names}", bang(0x40));
    }
    if flags & 0x80 != 0 {
        let _ = write!(
            out,
            "{} --ctexpire {}",
            bang(0x80),
            range(u32_at(d, 128)?, u32_at(d, 132)?, ":")
        );
    }
    if flags & 0x1000 != 0 {
        let dir = if inv & 0x1000 != 0 {
            "REPLY"
        } else {
            "ORIGINAL"
        };
        let _ = write!(out, " --ctdir {dir}");
    }
    Some(())
}

/// print_state / print_status: " A,B" of the names whose bit is set.
fn names(mask: u16, table: &[(u16, &str)]) -> String {
    let set: Vec<&str> = table
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    if set.is_empty() {
        String::new()
    } else {
        format!(" {}", set.join(","))
    }
}
