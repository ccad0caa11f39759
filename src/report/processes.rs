//! `snapshot --json`'s `processes` section: each process holding sockets,
//! with its traffic over the interval (model::processes).

use crate::model::Sample;
use crate::model::filter::Where;
use crate::model::processes::{Container, ProcessRow, process_rows};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
pub struct ProcessJson {
    pid: u32,
    command: String,
    user: String,
    cgroup: Option<String>,
    /// The container it runs in: runtime, id, name, pod, k8s_namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    container: Option<Container>,
    tcp_send_bytes_per_s: Option<f64>,
    tcp_recv_bytes_per_s: Option<f64>,
    /// Captured UDP bytes per second, both ways; null with capture off.
    udp_bytes_per_s: Option<f64>,
    sockets: usize,
    states: BTreeMap<&'static str, usize>,
    retrans_per_s: Option<f64>,
    max_rtt_ms: Option<f64>,
}

fn json(row: ProcessRow) -> ProcessJson {
    ProcessJson {
        pid: row.pid,
        tcp_send_bytes_per_s: row.tcp_send_per_s,
        tcp_recv_bytes_per_s: row.tcp_recv_per_s,
        udp_bytes_per_s: row.udp_per_s,
        sockets: row.sockets,
        retrans_per_s: row.retrans_per_s,
        max_rtt_ms: row.worst_rtt_us.map(|us| f64::from(us) / 1000.0),
        states: row.states,
        command: row.command,
        user: row.user,
        cgroup: row.cgroup,
        container: row.container,
    }
}

/// Every process of `current` that `filter` keeps, busiest first.
pub fn processes(previous: &Sample, current: &Sample, filter: Where<'_>) -> Vec<ProcessJson> {
    process_rows(Some(previous), current)
        .into_iter()
        .filter(|row| filter.keeps(row, current))
        .map(json)
        .collect()
}
