//! `--all-netns` series: the `netns` (and `container`) labels of a row in
//! any namespace, and one small set of series per namespace.
//!
//! Cardinality: per namespace, `netlens_netns_info` and four counters or
//! gauges below, plus the interface series (`node_network_*`,
//! `node_qdisc_*`) of each of its interfaces; sockets are never a label.

use super::render::{escape, family};
use crate::model::netns::PRIMARY;
use crate::model::{InterfaceSample, Sample};
use std::collections::HashMap;
use std::fmt::Write;

/// `netns="…"`, with `,container="…"` when the row's namespace has one.
pub fn labels(sample: &Sample, id: u16) -> String {
    let info = sample.namespaces.iter().find(|n| n.id == id);
    let label = match info {
        Some(info) => info.label.as_str(),
        None if id == PRIMARY => sample.netns.as_str(),
        None => "?",
    };
    match info.and_then(|i| i.container.as_deref()) {
        Some(container) => format!(
            "netns=\"{}\",container=\"{}\"",
            escape(label),
            escape(container)
        ),
        None => format!("netns=\"{}\"", escape(label)),
    }
}

pub fn iface_labels(sample: &Sample, iface: &InterfaceSample) -> String {
    labels(sample, iface.netns)
}

/// The per-namespace series (none without `--all-netns`).
pub fn render(out: &mut String, sample: &Sample) {
    if sample.namespaces.is_empty() {
        return;
    }
    family(
        out,
        "netlens_netns_info",
        "gauge",
        None,
        "1 for each network namespace sampled (--all-netns), with its nsfs inode",
    );
    for info in &sample.namespaces {
        let _ = writeln!(
            out,
            "netlens_netns_info{{{},inode=\"{}\"}} 1",
            labels(sample, info.id),
            info.inode
        );
    }
    family(
        out,
        "netlens_netns_sockets",
        "gauge",
        None,
        "TCP and UDP sockets in the namespace",
    );
    // One pass (a namespace's rows are together), not one per namespace.
    let mut counts: HashMap<u16, usize> = HashMap::new();
    for (netns, run) in sample.sockets.netns_runs() {
        *counts.entry(netns).or_default() += run.len();
    }
    for info in &sample.namespaces {
        let count = counts.get(&info.id).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "netlens_netns_sockets{{{}}} {count}",
            labels(sample, info.id)
        );
    }
    family(
        out,
        "netlens_netns_conntrack_entries",
        "gauge",
        None,
        "Connections conntrack tracks in the namespace (nf_conntrack_count; absent without nf_conntrack)",
    );
    for info in &sample.namespaces {
        if let Some(count) = info.conntrack_count {
            let _ = writeln!(
                out,
                "netlens_netns_conntrack_entries{{{}}} {count}",
                labels(sample, info.id)
            );
        }
    }
    type Field = fn(&crate::model::netns::NamespaceInfo) -> u64;
    let counters: [(&str, &str, Field); 2] = [
        (
            "netlens_netns_tcp_retransmits",
            "Tcp.RetransSegs of the namespace",
            |n| n.retrans_segs,
        ),
        (
            "netlens_netns_drops",
            "The namespace's stack drop counters summed (IP discards, listen and backlog drops, UDP receive errors)",
            |n| n.drops,
        ),
    ];
    for (name, help, field) in counters {
        family(out, name, "counter", None, help);
        for info in &sample.namespaces {
            let _ = writeln!(
                out,
                "{name}_total{{{}}} {}",
                labels(sample, info.id),
                field(info)
            );
        }
    }
}
