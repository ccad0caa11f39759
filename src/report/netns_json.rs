//! `namespaces[]` of `snapshot --json` under `--all-netns`: each namespace's
//! label and rates (see `model::netns`).

use crate::model::Sample;
use crate::model::netns::{NamespaceInfo, NamespaceRates, all_namespace_rates};
use serde::Serialize;

#[derive(Serialize)]
pub struct NamespaceJson<'a> {
    id: u16,
    label: &'a str,
    inode: u64,
    container: Option<&'a str>,
    pid: Option<u32>,
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
    established: usize,
    listening: usize,
    retrans_per_s: Option<f64>,
    drops_per_s: Option<f64>,
    retrans_segs: u64,
    drops: u64,
}

pub fn namespaces<'a>(previous: &Sample, current: &'a Sample) -> Vec<NamespaceJson<'a>> {
    current
        .namespaces
        .iter()
        .zip(all_namespace_rates(Some(previous), current))
        .map(|(info, rates)| one(info, rates))
        .collect()
}

fn one(info: &NamespaceInfo, r: NamespaceRates) -> NamespaceJson<'_> {
    NamespaceJson {
        id: info.id,
        label: &info.label,
        inode: info.inode,
        container: info.container.as_deref(),
        pid: info.pid,
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
        retrans_per_s: r.retrans,
        drops_per_s: r.drops,
        retrans_segs: info.retrans_segs,
        drops: info.drops,
    }
}
