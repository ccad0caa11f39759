//! The connection log for scripts: the tcplife-style table and JSON object
//! of one closed connection (`netlens conns`, `snapshot --json`'s closed[]).

use crate::model::closed::{ClosedConn, ClosedSample};
use crate::model::failed::{FailCounts, FailKey, FailKind, Failures};
use crate::model::processes::{ClosedContainers, container_label};
use serde::Serialize;

/// One closed connection as JSON; keys documented in the man page.
#[derive(Serialize)]
pub struct ClosedJson<'a> {
    pub t: f64,
    pub pid: Option<u32>,
    pub comm: &'a str,
    pub local: String,
    pub peer: String,
    pub accepted: bool,
    pub bytes_sent: Option<u64>,
    pub bytes_received: Option<u64>,
    pub duration_ms: Option<f64>,
    pub rtt_ms: f64,
    pub retrans: u32,
    pub ending: &'static str,
    /// The failure kind (`FailKind`); null when it did not fail.
    pub failure: Option<&'static str>,
    /// "web (podman)" when the process runs in a container.
    pub container: Option<String>,
    pub cookie: u64,
}

/// The log's health for one sample: what was left out or lost.
#[derive(Serialize)]
pub struct ClosedLogJson<'a> {
    pub lost: u64,
    pub overflow: u64,
    pub error: Option<&'a str>,
    /// Why no eBPF program names short connections' owners; null when one does.
    pub owners_unavailable: Option<&'a str>,
}

/// `containers` of the sample the connection ended in.
pub fn json<'a>(conn: &'a ClosedConn, containers: &ClosedContainers) -> ClosedJson<'a> {
    ClosedJson {
        t: conn.t,
        pid: conn.pid(),
        comm: conn.process(),
        local: conn.local.to_string(),
        peer: conn.peer.to_string(),
        accepted: conn.accepted,
        bytes_sent: conn.bytes_sent,
        bytes_received: conn.bytes_received,
        duration_ms: conn.duration_s.map(|s| (s * 1000.0).round()),
        rtt_ms: f64::from(conn.rtt_us) / 1000.0,
        retrans: conn.retrans,
        ending: conn.ending.name(),
        failure: FailKind::of_ending(conn.ending).map(FailKind::name),
        container: containers.of_conn(conn).map(container_label),
        cookie: conn.cookie,
    }
}

pub fn log_json(closed: &ClosedSample) -> ClosedLogJson<'_> {
    ClosedLogJson {
        lost: closed.lost,
        overflow: closed.overflow,
        error: closed.error.as_deref(),
        owners_unavailable: closed.owners_unavailable.as_deref(),
    }
}

/// The table's header, tcplife's columns plus RTT, retransmits and ending.
pub fn header() -> String {
    format!(
        "{:<8} {:>7} {:<15} {:<22} {:<22} {:>10} {:>10} {:>8} {:>7} {:>4} {}",
        "TIME", "PID", "COMM", "LOCAL", "PEER", "TX_B", "RX_B", "MS", "RTT_MS", "RETR", "HOW"
    )
}

/// One row of the table; "-" where a value is unknown (a duration when
/// the connection lived and died between two samples).
pub fn line(conn: &ClosedConn) -> String {
    let unknown = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    format!(
        "{:<8} {:>7} {:<15} {:<22} {:<22} {:>10} {:>10} {:>8} {:>7.2} {:>4} {}",
        crate::clock::local_hms(conn.t),
        conn.pid().map_or("-".to_string(), |p| p.to_string()),
        crate::text::escape_control(conn.process()),
        conn.local.to_string(),
        conn.peer.to_string(),
        unknown(conn.bytes_sent),
        unknown(conn.bytes_received),
        conn.duration_s
            .map_or("-".to_string(), |s| format!("{:.0}", s * 1000.0)),
        f64::from(conn.rtt_us) / 1000.0,
        conn.retrans,
        conn.ending.name(),
    )
}

/// One group of failures as JSON (`snapshot --json`'s failed[]); keys
/// documented in the man page.
#[derive(Serialize)]
pub struct FailedJson<'a> {
    #[serde(flatten)]
    pub key: &'a FailKey,
    #[serde(flatten)]
    pub counts: FailCounts,
    /// Per second over the interval; null without one.
    pub rate: Option<f64>,
}

/// Every group of `failures`, most frequent first.
pub fn failed_json(failures: &Failures) -> Vec<FailedJson<'_>> {
    let mut groups: Vec<FailedJson> = failures
        .groups()
        .iter()
        .map(|(key, counts)| FailedJson {
            key,
            counts: *counts,
            rate: failures.rate(counts),
        })
        .collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.counts.count));
    groups
}
