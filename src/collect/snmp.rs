//! /proc/net/snmp, /proc/net/netstat, /proc/net/snmp6 and /proc/net/sockstat of the watched
//! namespace. They are opened through /proc/thread-self/net: /proc/self/net
//! follows the thread group leader, which stays in netlens' own namespace
//! when only the sampler thread entered another one.

use crate::model::sockets::Sockstat;
use anyhow::{Context, Result};
use std::collections::BTreeMap;

const SNMP: &str = "/proc/thread-self/net/snmp";
const NETSTAT: &str = "/proc/thread-self/net/netstat";
const SOCKSTAT: &str = "/proc/thread-self/net/sockstat";
const SNMP6: &str = "/proc/thread-self/net/snmp6";

/// Every counter of snmp, netstat and snmp6, as "Group.Name": the TCP tab
/// shows `COUNTERS`, the catalogue's findings watch the rest.
pub fn read_counters() -> Result<BTreeMap<String, u64>> {
    let snmp = std::fs::read_to_string(SNMP).with_context(|| format!("cannot read {SNMP}"))?;
    let mut all = parse_pairs(&snmp);
    // netstat is missing on some kernels built without it, snmp6 without
    // IPv6: not fatal.
    if let Ok(netstat) = std::fs::read_to_string(NETSTAT) {
        all.extend(parse_pairs(&netstat));
    }
    if let Ok(snmp6) = std::fs::read_to_string(SNMP6) {
        all.extend(parse_snmp6(&snmp6));
    }
    Ok(all)
}

/// The groups of /proc/net/snmp6, longest first: its lines are
/// "Ip6InReceives 12", group and name run together.
const SNMP6_GROUPS: [&str; 4] = ["UdpLite6", "Udp6", "Icmp6", "Ip6"];

/// /proc/net/snmp6's "Ip6InDiscards 3" lines as "Ip6.InDiscards" -> 3.
pub fn parse_snmp6(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let Some(group) = SNMP6_GROUPS.iter().find(|g| name.starts_with(*g)) else {
            continue;
        };
        if let Ok(value) = value.parse::<u64>() {
            out.insert(format!("{group}.{}", &name[group.len()..]), value);
        }
    }
    out
}

/// The "Group: Name Name…" / "Group: value value…" line pairs both files
/// use, as "Group.Name" -> value. Negative values (Tcp MaxConn is -1) and
/// anything that is not a number are left out; a header and a value line
/// that do not match are paired as far as both go.
pub fn parse_pairs(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let (Some((group, names)), Some((group2, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        if group != group2 {
            continue;
        }
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(value) = value.parse::<u64>() {
                out.insert(format!("{group}.{name}"), value);
            }
        }
    }
    out
}

pub fn read_sockstat() -> Result<Sockstat> {
    let text =
        std::fs::read_to_string(SOCKSTAT).with_context(|| format!("cannot read {SOCKSTAT}"))?;
    Ok(parse_sockstat(&text))
}

/// "TCP: inuse 1 orphan 0 tw 2 alloc 1 mem 0" and friends.
pub fn parse_sockstat(text: &str) -> Sockstat {
    let mut out = Sockstat::default();
    for line in text.lines() {
        let Some((group, rest)) = line.split_once(':') else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        for pair in words.chunks(2) {
            let [key, value] = pair else { continue };
            let Ok(value) = value.parse::<u64>() else {
                continue;
            };
            match (group, *key) {
                ("sockets", "used") => out.sockets_used = value,
                ("TCP", "inuse") => out.tcp_inuse = value,
                ("TCP", "orphan") => out.tcp_orphan = value,
                ("TCP", "tw") => out.tcp_tw = value,
                ("TCP", "alloc") => out.tcp_alloc = value,
                ("TCP", "mem") => out.tcp_mem_pages = value,
                ("UDP", "inuse") => out.udp_inuse = value,
                ("UDP", "mem") => out.udp_mem_pages = value,
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snmp;

    #[test]
    fn pairs_parse_and_skip_negative() {
        let text = "Tcp: RtoAlgorithm MaxConn ActiveOpens RetransSegs\n\
                    Tcp: 1 -1 39 7\n\
                    Udp: InDatagrams InErrors\n\
                    Udp: 75 2\n";
        let map = parse_pairs(text);
        assert_eq!(map.get(snmp::TCP_ACTIVE_OPENS), Some(&39));
        assert_eq!(map.get(snmp::TCP_RETRANS_SEGS), Some(&7));
        assert_eq!(map.get("Tcp.MaxConn"), None);
        assert_eq!(map.get(snmp::UDP_IN_ERRORS), Some(&2));
    }

    #[test]
    fn netstat_format_and_mismatched_groups() {
        let text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\n\
                    TcpExt: 3 10 12\n\
                    IpExt: InOctets\n\
                    Bogus: 5\n";
        let map = parse_pairs(text);
        assert_eq!(map.get(snmp::TCP_EXT_LISTEN_OVERFLOWS), Some(&10));
        assert_eq!(map.get(snmp::TCP_EXT_LISTEN_DROPS), Some(&12));
        assert!(!map.keys().any(|k| k.starts_with("IpExt")));
    }

    #[test]
    fn snmp6_lines_split_group_and_name() {
        let map = parse_snmp6(
            "Ip6InDiscards 3\nUdpLite6NoPorts 4\nUdp6NoPorts 5\nIcmp6InType1 6\nbogus\n",
        );
        assert_eq!(map.get(snmp::IP6_IN_DISCARDS), Some(&3));
        assert_eq!(map.get("UdpLite6.NoPorts"), Some(&4));
        assert_eq!(map.get("Udp6.NoPorts"), Some(&5));
        assert_eq!(map.get("Icmp6.InType1"), Some(&6));
        assert_eq!(map.len(), 4);
    }

    #[test]
    fn sockstat_fields() {
        let text = "sockets: used 12\nTCP: inuse 1 orphan 3 tw 2 alloc 4 mem 5\n\
                    UDP: inuse 6 mem 7\nUDPLITE: inuse 0\n";
        let s = parse_sockstat(text);
        assert_eq!(
            s,
            Sockstat {
                sockets_used: 12,
                tcp_inuse: 1,
                tcp_orphan: 3,
                tcp_tw: 2,
                tcp_alloc: 4,
                tcp_mem_pages: 5,
                udp_inuse: 6,
                udp_mem_pages: 7,
            }
        );
    }

    #[test]
    fn reads_this_namespace() {
        let counters = read_counters().expect("snmp is readable");
        assert!(counters.contains_key(snmp::TCP_OUT_SEGS));
        assert!(counters.contains_key(snmp::TCP_EXT_LISTEN_OVERFLOWS));
        assert!(counters.contains_key(snmp::IP6_IN_DISCARDS), "{counters:?}");
        read_sockstat().expect("sockstat is readable");
    }
}
