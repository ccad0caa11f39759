//! The per-CPU and neighbour series of `netlens export`. node_exporter's
//! names where it has the metric: its softnet collector
//! (node_softnet_processed_total ... by cpu), its softirqs collector
//! (node_softirqs_functions_total by cpu and type) and its arp collector
//! (node_arp_entries by device, node_arp_states by device and state). The
//! tables' statistics and limits are netlens_neigh_*.

use super::render::{escape, family};
use crate::model::Sample;
use crate::model::neigh::NeighTable;
use std::collections::BTreeMap;
use std::fmt::Write;

pub fn render(out: &mut String, sample: &Sample, ns: &str) {
    let ns = escape(ns);
    cpus(out, sample, &ns);
    neighbours(out, sample, &ns);
}

fn cpus(out: &mut String, sample: &Sample, ns: &str) {
    let Some(cpu) = sample.cpu.as_ref() else {
        return;
    };
    type Get = fn(&crate::model::cpu::Softnet) -> Option<u32>;
    let softnet: [(&str, &str, Get); 5] = [
        (
            "node_softnet_processed",
            "Packets processed by the CPU's NET_RX",
            |s| Some(s.processed),
        ),
        (
            "node_softnet_dropped",
            "Packets dropped: the CPU's backlog was full",
            |s| Some(s.dropped),
        ),
        (
            "node_softnet_times_squeezed",
            "Times NET_RX ran out of budget with work left",
            |s| Some(s.time_squeeze),
        ),
        (
            "node_softnet_received_rps",
            "Packets steered to the CPU by RPS",
            |s| s.received_rps,
        ),
        (
            "node_softnet_flow_limit_count",
            "Packets dropped by the flow limit",
            |s| s.flow_limit_count,
        ),
    ];
    for (name, help, get) in softnet {
        let rows: Vec<(u32, u32)> = cpu
            .cpus
            .iter()
            .filter_map(|c| Some((c.cpu, get(c.softnet.as_ref()?)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        family(out, name, "counter", None, help);
        for (n, value) in rows {
            let _ = writeln!(out, "{name}_total{{cpu=\"{n}\",netns=\"{ns}\"}} {value}");
        }
    }
    let backlog: Vec<(u32, u32)> = cpu
        .cpus
        .iter()
        .filter_map(|c| Some((c.cpu, c.softnet?.backlog_len?)))
        .collect();
    if !backlog.is_empty() {
        let name = "node_softnet_backlog_len";
        family(out, name, "gauge", None, "Packets in the CPU's backlog now");
        for (n, value) in backlog {
            let _ = writeln!(out, "{name}{{cpu=\"{n}\",netns=\"{ns}\"}} {value}");
        }
    }
    let name = "node_softirqs_functions";
    family(out, name, "counter", None, "Softirqs run per CPU, by type");
    for c in &cpu.cpus {
        for (kind, value) in [("NET_RX", c.net_rx), ("NET_TX", c.net_tx)] {
            let _ = writeln!(
                out,
                "{name}_total{{cpu=\"{}\",type=\"{kind}\",netns=\"{ns}\"}} {value}",
                c.cpu
            );
        }
    }
}

fn neighbours(out: &mut String, sample: &Sample, ns: &str) {
    let Some(neigh) = sample.neighbours.as_ref() else {
        return;
    };
    let mut by_device: BTreeMap<&str, u64> = BTreeMap::new();
    for e in neigh.entries.iter().filter(|e| e.family == "inet") {
        *by_device.entry(&e.interface).or_default() += e.count;
    }
    family(
        out,
        "node_arp_entries",
        "gauge",
        None,
        "ARP entries by device",
    );
    for (device, count) in &by_device {
        let device = escape(device);
        let _ = writeln!(
            out,
            "node_arp_entries{{device=\"{device}\",netns=\"{ns}\"}} {count}"
        );
    }
    family(
        out,
        "node_arp_states",
        "gauge",
        None,
        "ARP entries by device and state",
    );
    for e in neigh.entries.iter().filter(|e| e.family == "inet") {
        let (device, state) = (escape(&e.interface), e.state.to_lowercase());
        let _ = writeln!(
            out,
            "node_arp_states{{device=\"{device}\",state=\"{state}\",netns=\"{ns}\"}} {}",
            e.count
        );
    }
    let tables: Vec<(&str, &NeighTable)> =
        [("arp", neigh.arp.as_ref()), ("ndisc", neigh.ndisc.as_ref())]
            .into_iter()
            .filter_map(|(n, t)| Some((n, t?)))
            .collect();
    if tables.is_empty() {
        return;
    }
    type Get = fn(&NeighTable) -> Option<u64>;
    let gauges: [(&str, &str, Get); 2] = [
        (
            "netlens_neigh_entries",
            "Entries in the neighbour table (every namespace)",
            |t| Some(t.entries),
        ),
        (
            "netlens_neigh_gc_thresh3",
            "The table's hard limit (gc_thresh3)",
            |t| t.gc_thresh3,
        ),
    ];
    for (name, help, get) in gauges {
        family(out, name, "gauge", None, help);
        for (table, t) in &tables {
            if let Some(v) = get(t) {
                let _ = writeln!(out, "{name}{{table=\"{table}\",netns=\"{ns}\"}} {v}");
            }
        }
    }
    type Count = fn(&NeighTable) -> u64;
    let counters: [(&str, &str, Count); 3] = [
        (
            "netlens_neigh_table_fulls",
            "Neighbour table overflows",
            |t| t.table_fulls,
        ),
        (
            "netlens_neigh_forced_gc_runs",
            "Forced garbage collections",
            |t| t.forced_gc_runs,
        ),
        (
            "netlens_neigh_unresolved_discards",
            "Packets dropped waiting for resolution",
            |t| t.unresolved_discards,
        ),
    ];
    for (name, help, get) in counters {
        family(out, name, "counter", None, help);
        for (table, t) in &tables {
            let _ = writeln!(
                out,
                "{name}_total{{table=\"{table}\",netns=\"{ns}\"}} {}",
                get(t)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cpu::{CpuCounters, CpuSample, Softnet};
    use crate::model::neigh::{NeighCount, NeighSample};

    #[test]
    fn node_exporter_names_for_softnet_softirqs_and_arp() {
        let sample = Sample {
            cpu: Some(CpuSample {
                cpus: vec![CpuCounters {
                    cpu: 3,
                    net_rx: 77,
                    softnet: Some(Softnet {
                        processed: 12,
                        dropped: 1,
                        time_squeeze: 2,
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            neighbours: Some(NeighSample {
                arp: Some(NeighTable {
                    entries: 5,
                    table_fulls: 9,
                    gc_thresh3: Some(1024),
                    ..Default::default()
                }),
                ndisc: None,
                entries: vec![NeighCount {
                    family: "inet".into(),
                    interface: "eth0".into(),
                    state: "REACHABLE".into(),
                    count: 4,
                }]
                .into(),
            }),
            ..Default::default()
        };
        let mut out = String::new();
        render(&mut out, &sample, "host");
        for line in [
            "# TYPE node_softnet_processed counter",
            "node_softnet_processed_total{cpu=\"3\",netns=\"host\"} 12",
            "node_softnet_dropped_total{cpu=\"3\",netns=\"host\"} 1",
            "node_softnet_times_squeezed_total{cpu=\"3\",netns=\"host\"} 2",
            "node_softirqs_functions_total{cpu=\"3\",type=\"NET_RX\",netns=\"host\"} 77",
            "node_arp_entries{device=\"eth0\",netns=\"host\"} 4",
            "node_arp_states{device=\"eth0\",state=\"reachable\",netns=\"host\"} 4",
            "netlens_neigh_gc_thresh3{table=\"arp\",netns=\"host\"} 1024",
            "netlens_neigh_table_fulls_total{table=\"arp\",netns=\"host\"} 9",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} missing:\n{out}");
        }
        assert!(
            !out.contains("received_rps"),
            "no series for a missing column"
        );
    }
}
