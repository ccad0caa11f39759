//! `namespaces[]` of `snapshot --json` under `--all-netns`: each namespace's
//! label and rates (see `model::netns`).

use crate::findings::{Finding, count_in_netns};
use crate::model::Sample;
use crate::model::netns::{NamespaceInfo, NamespaceRates, all_namespace_rates};
use crate::model::rates::links_interval;
use serde::Serialize;

#[derive(Serialize)]
pub struct NamespaceJson<'a> {
    id: u16,
    label: &'a str,
    inode: u64,
    container: Option<&'a str>,
    pid: Option<u32>,
    /// The seconds its interface rates span: between the two reads of its
    /// links, which on a busy host need not fall at the sample's ticks
    /// (rate x interval is the counters' delta).
    interval: f64,
    /// Summed over its interfaces but loopback.
    rx_bytes_per_s: Option<f64>,
    tx_bytes_per_s: Option<f64>,
    rx_packets_per_s: Option<f64>,
    tx_packets_per_s: Option<f64>,
    /// The host-side ends of its veths, and their rates summed.
    host_peers: Vec<String>,
    host_peer_rx_bytes_per_s: Option<f64>,
    host_peer_tx_bytes_per_s: Option<f64>,
    sockets: usize,
    /// TCP sockets by state (as `ss -tan` in it lists them), and UDP.
    established: usize,
    listening: usize,
    time_wait: usize,
    tcp_other: usize,
    udp: usize,
    retrans_per_s: Option<f64>,
    drops_per_s: Option<f64>,
    retrans_segs: u64,
    drops: u64,
    /// Its nf_conntrack_count; null without nf_conntrack.
    conntrack_count: Option<u64>,
    /// Findings shown now about its sockets, processes or interfaces.
    findings: usize,
}

pub fn namespaces<'a>(
    previous: &Sample,
    current: &'a Sample,
    found: &[Finding],
) -> Vec<NamespaceJson<'a>> {
    current
        .namespaces
        .iter()
        .zip(all_namespace_rates(Some(previous), current))
        .map(|(info, rates)| {
            let interval = links_interval(previous, current, info.id);
            one(info, rates, interval, found)
        })
        .collect()
}

fn one<'a>(
    info: &'a NamespaceInfo,
    r: NamespaceRates,
    interval: f64,
    found: &[Finding],
) -> NamespaceJson<'a> {
    let (tcp_other, udp) = (r.tcp_other(), r.sockets - r.tcp);
    NamespaceJson {
        id: info.id,
        label: &info.label,
        inode: info.inode,
        container: info.container.as_deref(),
        pid: info.pid,
        interval,
        rx_bytes_per_s: r.rx_bytes,
        tx_bytes_per_s: r.tx_bytes,
        rx_packets_per_s: r.rx_packets,
        tx_packets_per_s: r.tx_packets,
        host_peers: r.host_peers,
        host_peer_rx_bytes_per_s: r.peer_rx_bytes,
        host_peer_tx_bytes_per_s: r.peer_tx_bytes,
        sockets: r.sockets,
        established: r.established,
        listening: r.listening,
        time_wait: r.time_wait,
        tcp_other,
        udp,
        retrans_per_s: r.retrans,
        drops_per_s: r.drops,
        retrans_segs: info.retrans_segs,
        drops: info.drops,
        conntrack_count: info.conntrack_count,
        findings: count_in_netns(found, info.id),
    }
}
