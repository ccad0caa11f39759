//! The xt matches and targets iptables-nft leaves to x_tables, as nft
//! 1.0.6 prints them: through the extension's iptables-translate text
//! when it has one (reproduced here for the common ones), else
//! `xt match NAME` / `xt target NAME`.

use super::expr::Log;
use super::proto::Proto;
use super::types::{self, Ty};

/// xt_statistic modes and flag.
const STATISTIC_RANDOM: u16 = 0;
const STATISTIC_NTH: u16 = 1;
const STATISTIC_INVERT: u16 = 1;

/// xt_conntrack match flags and state bits.
const CT_STATE: u16 = 1 << 0;
const CT_DIRECTION: u16 = 1 << 12;
const CT_STATE_ALIAS: u16 = 1 << 13;
const CT_STATE_SNAT: u16 = 1 << 6;
const CT_STATE_DNAT: u16 = 1 << 7;

/// The statement for one xt expression. `family` is the table's
/// (NFPROTO_*), `transport` the protocol the rule matched before it.
pub fn render(
    family: u8,
    target: bool,
    name: &str,
    rev: u32,
    info: &[u8],
    transport: Option<Proto>,
) -> String {
    let translated = match (target, name) {
        (false, "addrtype") if rev == 1 => addrtype(info),
        (false, "icmp") if family == 2 => icmp(info),
        (false, "length") => length(info),
        (false, "ttl") if family == 2 => ttl(info),
        (false, "pkttype") => pkttype(info),
        (false, "iprange") if rev == 1 => iprange(family, info),
        (false, "dscp") => dscp(family, info),
        (false, "mac") => mac(info),
        (true, "LOG") => log(info),
        (true, "MARK") if rev == 2 => mark(info),
        (true, "CONNMARK") if rev == 2 => connmark(info),
        (true, "TCPMSS") => tcpmss(info),
        (true, "NFQUEUE") if rev == 3 => nfqueue(info),
        (true, "DNAT" | "SNAT") => nat(family, name, rev, info),
        (true, "REDIRECT") => redirect(info),
        (false, "statistic") => statistic(info),
        // The comment goes to the translation's comment, not its text.
        (false, "comment") => Some(String::new()),
        (false, "conntrack") => conntrack(info),
        (false, "multiport") => multiport(info, transport),
        (true, "REJECT") => reject(family, info),
        (true, "MASQUERADE") => masquerade(info),
        _ => None,
    };
    translated.unwrap_or_else(|| {
        let kind = if target { "target" } else { "match" };
        format!("xt {kind} {name}")
    })
}

fn u16_at(info: &[u8], offset: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(
        info.get(offset..offset + 2)?.try_into().ok()?,
    ))
}

fn u32_at(info: &[u8], offset: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(
        info.get(offset..offset + 4)?.try_into().ok()?,
    ))
}

/// libxt_addrtype's translation (revision 1).
fn addrtype(info: &[u8]) -> Option<String> {
    const NAMES: [&str; 9] = [
        "unspec",
        "unicast",
        "local",
        "broadcast",
        "anycast",
        "multicast",
        "blackhole",
        "unreachable",
        "prohibit",
    ];
    let (source, dest, flags) = (u16_at(info, 0)?, u16_at(info, 2)?, u32_at(info, 4)?);
    let (which, mask, invert) = match source {
        0 => ("daddr", dest, flags & 2 != 0),
        _ => ("saddr", source, flags & 1 != 0),
    };
    let iface = match flags & 0xc {
        4 => " . iif",
        8 => " . oif",
        _ => "",
    };
    let mut names = Vec::new();
    for (bit, name) in NAMES.iter().enumerate() {
        if mask & (1 << bit) != 0 {
            names.push(*name);
        }
    }
    // Types nft has no name for, and both addresses at once, stay xt.
    if (source != 0 && dest != 0) || names.is_empty() || mask >> NAMES.len() != 0 {
        return None;
    }
    let list = match names.len() {
        1 => names.join(""),
        _ => format!("{{ {} }}", names.join(", ")),
    };
    let not = if invert { "!= " } else { "" };
    Some(format!("fib {which}{iface} type {not}{list}"))
}

/// libipt_icmp's translation of a whole ICMP type (any code).
fn icmp(info: &[u8]) -> Option<String> {
    let (kind, low, high, invert) = (*info.first()?, *info.get(1)?, *info.get(2)?, *info.get(3)?);
    if kind == 0xff {
        return Some("ip protocol icmp".to_string());
    }
    // iptables names no code ranges but the whole type's, nor types 15, 16.
    if (low, high) != (0, 0xff) || matches!(kind, 15 | 16) {
        return None;
    }
    let name = types::format(Ty::IcmpType, &[kind]);
    if name.parse::<u8>().is_ok() {
        return None;
    }
    let not = if invert & 1 != 0 { " !=" } else { "" };
    Some(format!("icmp type{not} {name}"))
}

/// libxt_LOG's translation: nft's own log statement (xt_log_info).
fn log(info: &[u8]) -> Option<String> {
    let prefix = super::string(info.get(2..32)?);
    let log = Log {
        prefix: (!prefix.is_empty()).then_some(prefix),
        level: Some(u32::from(*info.first()?)).filter(|level| *level <= 7),
        flags: u32::from(*info.get(1)?),
        ..Log::default()
    };
    Some(super::stmt::log_text(&log))
}

/// libxt_MARK's translation (xt_mark_tginfo2).
fn mark(info: &[u8]) -> Option<String> {
    let (mark, mask) = (u32_at(info, 0)?, u32_at(info, 4)?);
    Some(match (mark, mask) {
        (_, u32::MAX) => format!("meta mark set 0x{mark:x}"),
        (0, _) => format!("meta mark set mark and 0x{:x}", !mask),
        (_, _) if mark == mask => format!("meta mark set mark or 0x{mark:x}"),
        (_, 0) => format!("meta mark set mark xor 0x{mark:x}"),
        _ => return None,
    })
}

/// libxt_CONNMARK's translation (xt_connmark_tginfo2) of setting a mark
/// and of --save-mark and --restore-mark without masks or shifts.
fn connmark(info: &[u8]) -> Option<String> {
    let (ctmark, ctmask, nfmask) = (u32_at(info, 0)?, u32_at(info, 4)?, u32_at(info, 8)?);
    let (shift, mode) = (*info.get(13)?, *info.get(14)?);
    let plain = ctmask == u32::MAX && nfmask == u32::MAX && shift == 0;
    match mode {
        0 if ctmask == u32::MAX => Some(format!("ct mark set 0x{ctmark:x}")),
        1 if plain => Some("ct mark set mark".to_string()),
        2 if plain => Some("meta mark set ct mark".to_string()),
        _ => None,
    }
}

/// libxt_TCPMSS's translation.
fn tcpmss(info: &[u8]) -> Option<String> {
    Some(match u16_at(info, 0)? {
        0xffff => "tcp option maxseg size set rt mtu".to_string(),
        mss => format!("tcp option maxseg size set {mss}"),
    })
}

/// libxt_NFQUEUE's translation (revision 3).
fn nfqueue(info: &[u8]) -> Option<String> {
    let (queue, total, flags) = (u16_at(info, 0)?, u16_at(info, 2)?, u16_at(info, 4)?);
    let mut out = format!("queue num {queue}");
    if total > 1 {
        out.push_str(&format!("-{}", u32::from(queue) + u32::from(total) - 1));
    }
    let names: Vec<&str> = [(1, "bypass"), (2, "fanout")]
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    if !names.is_empty() {
        out.push_str(&format!(" {}", names.join(",")));
    }
    Some(out)
}

/// NF_NAT_RANGE_* flags.
const NAT_MAP_IPS: u32 = 1;
const NAT_PROTO_SPECIFIED: u32 = 2;
const NAT_RANDOM: u32 = 4;
const NAT_PERSISTENT: u32 = 8;
const NAT_RANDOM_FULLY: u32 = 16;

/// ` random`, ` fully-random`, ` persistent` as libxt_NAT adds them.
fn nat_flags(flags: u32) -> String {
    let names: Vec<&str> = [
        (NAT_RANDOM, "random"),
        (NAT_RANDOM_FULLY, "fully-random"),
        (NAT_PERSISTENT, "persistent"),
    ]
    .iter()
    .filter(|(bit, _)| flags & bit != 0)
    .map(|(_, name)| *name)
    .collect();
    match names.is_empty() {
        true => String::new(),
        false => format!(" {}", names.join(",")),
    }
}

/// `:port` or `:low-high`, network byte order.
fn ports(info: &[u8], at: usize) -> Option<String> {
    let low = u16::from_be_bytes(info.get(at..at + 2)?.try_into().ok()?);
    let high = u16::from_be_bytes(info.get(at + 2..at + 4)?.try_into().ok()?);
    Some(match high == low {
        true => format!(":{low}"),
        false => format!(":{low}-{high}"),
    })
}

/// libxt_NAT's translation of DNAT and SNAT: nf_nat_range(2) for
/// revisions 1 and 2, nf_nat_ipv4_multi_range_compat for 0.
fn nat(family: u8, name: &str, rev: u32, info: &[u8]) -> Option<String> {
    let (ty, size) = match family {
        2 => (Ty::IpAddr, 4),
        10 => (Ty::Ip6Addr, 16),
        _ => return None,
    };
    // (flags, lowest address, highest address, ports)
    let (flags, low, high, port) = match rev {
        0 if family == 2 => (u32_at(info, 4)?, 8, 12, 16),
        1 | 2 => (u32_at(info, 0)?, 4, 20, 36),
        _ => return None,
    };
    let mut range = String::new();
    if flags & NAT_MAP_IPS != 0 {
        let (low, high) = (info.get(low..low + size)?, info.get(high..high + size)?);
        range = types::format(ty, low);
        if high != low {
            range = format!("{range}-{}", types::format(ty, high));
        }
        if family == 10 && flags & NAT_PROTO_SPECIFIED != 0 {
            range = format!("[{range}]");
        }
    }
    if flags & NAT_PROTO_SPECIFIED != 0 {
        range.push_str(&ports(info, port)?);
    }
    let kind = name.to_ascii_lowercase();
    Some(format!("{kind} to {range}{}", nat_flags(flags)))
}

/// libipt_REDIRECT's translation (nf_nat_ipv4_multi_range_compat).
fn redirect(info: &[u8]) -> Option<String> {
    let flags = u32_at(info, 4)?;
    let mut out = String::from("redirect");
    if flags & NAT_PROTO_SPECIFIED != 0 {
        out.push_str(&format!(" to {}", ports(info, 16)?));
    }
    Some(out + &nat_flags(flags & NAT_RANDOM))
}

/// `!= ` when a match is inverted.
fn not(invert: bool) -> &'static str {
    if invert { "!= " } else { "" }
}

/// libxt_length's translation.
fn length(info: &[u8]) -> Option<String> {
    let (min, max, invert) = (u16_at(info, 0)?, u16_at(info, 2)?, *info.get(4)? != 0);
    let range = match min == max {
        true => min.to_string(),
        false => format!("{min}-{max}"),
    };
    Some(format!("meta length {}{range}", not(invert)))
}

/// libipt_ttl's translation.
fn ttl(info: &[u8]) -> Option<String> {
    let ttl = *info.get(1)?;
    let op = match info.first()? {
        0 => "",
        1 => "!= ",
        2 => "lt ",
        3 => "gt ",
        _ => return None,
    };
    Some(format!("ip ttl {op}{ttl}"))
}

/// libxt_pkttype's translation of broadcast and multicast.
fn pkttype(info: &[u8]) -> Option<String> {
    let name = match u32_at(info, 0)? {
        1 => "broadcast",
        2 => "multicast",
        _ => return None,
    };
    Some(format!("pkttype {}{name}", not(u32_at(info, 4)? != 0)))
}

/// libxt_iprange's translation of one range (xt_iprange_mtinfo).
fn iprange(family: u8, info: &[u8]) -> Option<String> {
    let (proto, ty, size) = match family {
        2 => ("ip", Ty::IpAddr, 4),
        10 => ("ip6", Ty::Ip6Addr, 16),
        _ => return None,
    };
    let flags = *info.get(64)?;
    let (which, at, invert) = match flags & 3 {
        1 => ("saddr", 0, flags & 0x10 != 0),
        2 => ("daddr", 32, flags & 0x20 != 0),
        _ => return None,
    };
    let low = types::format(ty, info.get(at..at + size)?);
    let high = types::format(ty, info.get(at + 16..at + 16 + size)?);
    Some(format!("{proto} {which} {}{low}-{high}", not(invert)))
}

/// libxt_dscp's translation.
fn dscp(family: u8, info: &[u8]) -> Option<String> {
    let proto = match family {
        2 => "ip",
        10 => "ip6",
        _ => return None,
    };
    let (value, invert) = (*info.first()?, *info.get(1)? != 0);
    Some(format!("{proto} dscp {}0x{value:02x}", not(invert)))
}

/// libxt_mac's translation.
fn mac(info: &[u8]) -> Option<String> {
    let address = types::format(Ty::EtherAddr, info.get(..6)?);
    Some(format!(
        "ether saddr {}{address}",
        not(u32_at(info, 8)? != 0)
    ))
}

/// libxt_statistic's translation.
fn statistic(info: &[u8]) -> Option<String> {
    let invert = u16_at(info, 2)? & STATISTIC_INVERT != 0;
    match u16_at(info, 0)? {
        STATISTIC_RANDOM => Some(format!(
            "meta random & 2147483647 {} {}",
            if invert { ">=" } else { "<" },
            u32_at(info, 4)?
        )),
        STATISTIC_NTH => Some(format!(
            "numgen inc mod {} {}{}",
            u32_at(info, 4)?.wrapping_add(1),
            if invert { "!= " } else { "" },
            u32_at(info, 8)?
        )),
        _ => None,
    }
}

/// libxt_conntrack's translation of --ctstate and --ctdir (revisions 2
/// and 3 share the fields' layout); None for the other options.
fn conntrack(info: &[u8]) -> Option<String> {
    let match_flags = u16_at(info, 146)?;
    let invert_flags = u16_at(info, 148)?;
    let state = u16_at(info, 150)?;
    if match_flags & !(CT_STATE | CT_STATE_ALIAS | CT_DIRECTION) != 0 {
        return None;
    }
    let mut parts = Vec::new();
    if match_flags & CT_DIRECTION != 0 {
        let reply = invert_flags & CT_DIRECTION != 0;
        parts.push(format!(
            "ct direction {}",
            if reply { "reply" } else { "original" }
        ));
    }
    if match_flags & CT_STATE != 0 {
        let not = if invert_flags & CT_STATE != 0 {
            "! "
        } else {
            ""
        };
        let nat = state & (CT_STATE_SNAT | CT_STATE_DNAT);
        if nat != 0 && nat != state {
            return None;
        }
        let names: &[(u16, &str)] = if nat != 0 {
            &[(CT_STATE_SNAT, "snat"), (CT_STATE_DNAT, "dnat")]
        } else {
            &[
                (1, "invalid"),
                (8, "new"),
                (4, "related"),
                (2, "established"),
                (1 << 8, "untracked"),
            ]
        };
        let list: Vec<&str> = names
            .iter()
            .filter(|(bit, _)| state & bit != 0)
            .map(|(_, name)| *name)
            .collect();
        let key = if nat != 0 { "status" } else { "state" };
        parts.push(format!("ct {key} {not}{}", list.join(",")));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// libxt_multiport's translation (revision 1), for one direction.
fn multiport(info: &[u8], transport: Option<Proto>) -> Option<String> {
    let proto = match transport? {
        p @ (Proto::Tcp | Proto::Udp | Proto::Udplite | Proto::Sctp | Proto::Dccp) => p.name(),
        _ => return None,
    };
    let direction = match info.first()? {
        0 => "sport",
        1 => "dport",
        _ => return None,
    };
    let count = usize::from(*info.get(1)?).min(15);
    let port = |i: usize| u16_at(info, 2 + 2 * i);
    let range = |i: usize| info.get(32 + i).is_some_and(|flag| *flag != 0);
    let invert = *info.get(47)? != 0;
    let mut items = Vec::new();
    let mut i = 0;
    while i < count {
        if range(i) {
            items.push(format!("{}-{}", port(i)?, port(i + 1)?));
            i += 2;
        } else {
            items.push(port(i)?.to_string());
            i += 1;
        }
    }
    let not = if invert { "!= " } else { "" };
    let list = if items.len() > 1 {
        format!("{{ {} }}", items.join(", "))
    } else {
        items.join("")
    };
    Some(format!("{proto} {direction} {not}{list}"))
}

/// libipt_REJECT's and libip6t_REJECT's translations.
fn reject(family: u8, info: &[u8]) -> Option<String> {
    let with = u32_at(info, 0)?;
    let (default, reset, names): (u32, u32, &[&str]) = match family {
        2 => (
            3,
            7,
            &[
                "net-unreachable",
                "host-unreachable",
                "prot-unreachable",
                "port-unreachable",
                "",
                "net-prohibited",
                "host-prohibited",
                "",
                "admin-prohibited",
            ],
        ),
        10 => (
            4,
            6,
            &[
                "no-route",
                "admin-prohibited",
                "",
                "addr-unreachable",
                "port-unreachable",
                "",
                "",
                "policy-fail",
                "reject-route",
            ],
        ),
        _ => return None,
    };
    let icmp = if family == 2 { "icmp" } else { "icmpv6" };
    match with {
        w if w == default => Some("reject".to_string()),
        w if w == reset => Some("reject with tcp reset".to_string()),
        w => match names.get(w as usize) {
            Some(name) if !name.is_empty() => Some(format!("reject with {icmp} type {name}")),
            _ => None,
        },
    }
}

/// libipt_MASQUERADE's translation (nf_nat_ipv4_multi_range_compat).
fn masquerade(info: &[u8]) -> Option<String> {
    let flags = u32_at(info, 4)?;
    let mut out = String::from("masquerade");
    if flags & NAT_PROTO_SPECIFIED != 0 {
        out.push_str(&format!(" to {}", ports(info, 16)?));
    }
    Some(out + &nat_flags(flags & (NAT_RANDOM | NAT_RANDOM_FULLY)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistic_random_half() {
        let mut info = vec![0u8; 24];
        info[4..8].copy_from_slice(&1_073_741_824u32.to_ne_bytes());
        assert_eq!(
            render(2, false, "statistic", 0, &info, None),
            "meta random & 2147483647 < 1073741824"
        );
        info[2] = 1;
        info[0] = 1;
        info[4..8].copy_from_slice(&3u32.to_ne_bytes());
        info[8..12].copy_from_slice(&2u32.to_ne_bytes());
        assert_eq!(
            render(2, false, "statistic", 0, &info, None),
            "numgen inc mod 4 != 2"
        );
    }

    #[test]
    fn conntrack_states_and_fallbacks() {
        let mut info = vec![0u8; 168];
        info[146..148].copy_from_slice(&(CT_STATE | CT_STATE_ALIAS).to_ne_bytes());
        info[150..152].copy_from_slice(&6u16.to_ne_bytes());
        assert_eq!(
            render(2, false, "conntrack", 3, &info, None),
            "ct state related,established"
        );
        info[146..148].copy_from_slice(&(CT_STATE | 2).to_ne_bytes());
        assert_eq!(
            render(2, false, "conntrack", 3, &info, None),
            "xt match conntrack"
        );
        assert_eq!(render(2, false, "recent", 0, &[], None), "xt match recent");
        assert_eq!(
            render(2, false, "conntrack", 3, &[1, 2], None),
            "xt match conntrack"
        );
    }

    #[test]
    fn reject_and_multiport() {
        assert_eq!(
            render(2, true, "REJECT", 0, &3u32.to_ne_bytes(), None),
            "reject"
        );
        assert_eq!(
            render(2, true, "REJECT", 0, &1u32.to_ne_bytes(), None),
            "reject with icmp type host-unreachable"
        );
        assert_eq!(
            render(10, true, "REJECT", 0, &6u32.to_ne_bytes(), None),
            "reject with tcp reset"
        );
        let mut info = vec![0u8; 48];
        info[0] = 1;
        info[1] = 3;
        for (i, port) in [1u16, 2, 5].iter().enumerate() {
            info[2 + 2 * i..4 + 2 * i].copy_from_slice(&port.to_ne_bytes());
        }
        info[33] = 1;
        assert_eq!(
            render(2, false, "multiport", 1, &info, Some(Proto::Udp)),
            "udp dport { 1, 2-5 }"
        );
        assert_eq!(
            render(2, false, "multiport", 1, &info, None),
            "xt match multiport"
        );
    }

    #[test]
    fn log_mark_icmp_addrtype() {
        let mut info = vec![4u8, 0];
        info.extend(b"xx\0");
        info.resize(32, 0);
        assert_eq!(render(2, true, "LOG", 0, &info, None), "log prefix \"xx\"");
        let mut info = 5u32.to_ne_bytes().to_vec();
        info.extend(u32::MAX.to_ne_bytes());
        assert_eq!(render(2, true, "MARK", 2, &info, None), "meta mark set 0x5");
        let icmp = |info: &[u8]| render(2, false, "icmp", 0, info, None);
        assert_eq!(icmp(&[8, 0, 0xff, 0]), "icmp type echo-request");
        assert_eq!(icmp(&[8, 0, 0, 0]), "xt match icmp");
        let mut info = 0u16.to_ne_bytes().to_vec();
        info.extend(4u16.to_ne_bytes());
        info.extend(0u32.to_ne_bytes());
        assert_eq!(
            render(2, false, "addrtype", 1, &info, None),
            "fib daddr type local"
        );
    }
}
