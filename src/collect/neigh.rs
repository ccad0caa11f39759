//! The neighbour tables: /proc/net/stat/arp_cache and ndisc_cache (opened
//! in the host's namespace: the tables are shared by every namespace and
//! their statistics exist only there), the gc_thresh knobs, and the
//! watched namespace's entries by interface and state from an
//! RTM_GETNEIGH dump per family, as `ip -4 neigh` and `ip -6 neigh` list
//! them.

use super::rtnl::Rtnl;
use super::softnet::{HostFiles, reread};
use crate::model::neigh::{NeighCount, NeighSample, NeighTable};
use anyhow::Result;
use netlink_packet_route::neighbour::{NeighbourMessage, NeighbourState};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use std::collections::{BTreeMap, HashMap};

/// The garbage collector's thresholds of both tables (host-wide: only the
/// host's namespace has them).
pub const KNOBS: &[&str] = &[
    "net.ipv4.neigh.default.gc_thresh1",
    "net.ipv4.neigh.default.gc_thresh2",
    "net.ipv4.neigh.default.gc_thresh3",
    "net.ipv6.neigh.default.gc_thresh1",
    "net.ipv6.neigh.default.gc_thresh2",
    "net.ipv6.neigh.default.gc_thresh3",
];

/// Parses a neighbour table's statistics file: a header naming the
/// columns, then one row of hex counters per CPU. Counters are summed over
/// the rows; entries is the table's size, the same in every row. Columns
/// are found by name, so older layouts (no table_fulls before 4.x) read too.
pub fn parse_stat(text: &str) -> Option<NeighTable> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    let column = |name| header.iter().position(|h| *h == name);
    let mut table = NeighTable::default();
    let mut rows = 0;
    for line in lines.take(super::softirqs::MAX_CPUS) {
        let values: Vec<u64> = line
            .split_whitespace()
            .map(|v| u64::from_str_radix(v, 16).unwrap_or(0))
            .collect();
        if values.len() != header.len() {
            continue;
        }
        let get = |name| column(name).map_or(0, |i| values[i]);
        table.entries = get("entries");
        table.allocs += get("allocs");
        table.destroys += get("destroys");
        table.forced_gc_runs += get("forced_gc_runs");
        table.unresolved_discards += get("unresolved_discards");
        table.table_fulls += get("table_fulls");
        rows += 1;
    }
    (rows > 0).then_some(table)
}

/// `ip neigh`'s name of a state.
pub fn state_name(state: NeighbourState) -> String {
    match state {
        NeighbourState::Incomplete => "INCOMPLETE".into(),
        NeighbourState::Reachable => "REACHABLE".into(),
        NeighbourState::Stale => "STALE".into(),
        NeighbourState::Delay => "DELAY".into(),
        NeighbourState::Probe => "PROBE".into(),
        NeighbourState::Failed => "FAILED".into(),
        NeighbourState::Noarp => "NOARP".into(),
        NeighbourState::Permanent => "PERMANENT".into(),
        NeighbourState::None => "NONE".into(),
        other => format!("0x{:x}", u16::from(other)),
    }
}

/// The statistics, thresholds and entries; `names` are the interfaces'
/// by index.
pub fn collect(
    rtnl: &mut Rtnl,
    files: &HostFiles,
    names: &HashMap<u32, String>,
) -> Result<NeighSample> {
    let table = |file: &Option<std::fs::File>, family: &str| {
        let mut table = parse_stat(&reread(&mut file.as_ref()?)?)?;
        let knob = |n: u8| {
            files
                .knob(&format!("net.{family}.neigh.default.gc_thresh{n}"))?
                .parse()
                .ok()
        };
        (table.gc_thresh1, table.gc_thresh2, table.gc_thresh3) = (knob(1), knob(2), knob(3));
        Some(table)
    };
    let mut counts: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for (family, label) in [
        (AddressFamily::Inet, "inet"),
        (AddressFamily::Inet6, "inet6"),
    ] {
        let mut request = NeighbourMessage::default();
        request.header.family = family;
        for reply in rtnl.dump(RouteNetlinkMessage::GetNeighbour(request))? {
            let RouteNetlinkMessage::NewNeighbour(entry) = reply else {
                continue;
            };
            let index = entry.header.ifindex;
            let interface = names
                .get(&index)
                .map_or_else(|| format!("if{index}"), String::clone);
            let key = (label.to_string(), interface, state_name(entry.header.state));
            *counts.entry(key).or_default() += 1;
        }
    }
    Ok(NeighSample {
        arp: table(&files.arp_cache, "ipv4"),
        ndisc: table(&files.ndisc_cache, "ipv6"),
        entries: counts
            .into_iter()
            .map(|((family, interface, state), count)| NeighCount {
                family,
                interface,
                state,
                count,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::collect::proc_fixture as data;

    #[test]
    fn arp_cache_sums_cpus_and_keeps_entries() {
        let t = parse_stat(&data("arp_cache")).unwrap();
        assert_eq!(t.entries, 0x400);
        assert_eq!(t.allocs, 0x2e4 + 0x27f);
        assert_eq!(t.forced_gc_runs, 4);
        assert_eq!(t.unresolved_discards, 0x11);
        assert_eq!(t.table_fulls, 2);
    }

    #[test]
    fn an_older_layout_without_table_fulls() {
        let t = parse_stat(&data("arp_cache_old")).unwrap();
        assert_eq!((t.entries, t.allocs, t.table_fulls), (5, 0x10, 0));
        assert_eq!(t.unresolved_discards, 1);
        assert_eq!(parse_stat("entries allocs\n"), None);
    }
}
