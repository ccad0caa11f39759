//! Per-process traffic for the exporter (`export --per-process`, off by
//! default: a series per pid is unbounded label cardinality on a busy
//! host). Counters since the exporter started, summed from each sample's
//! per-process byte rates (model::processes) times its interval, so they
//! only grow; a process that no longer holds a socket leaves the page.

use super::render::{escape, family};
use crate::model::Sample;
use crate::model::processes::process_rows;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Default, Clone, PartialEq)]
struct Totals {
    command: String,
    cgroup: String,
    container: String,
    sent: f64,
    received: f64,
    udp: f64,
    retrans: f64,
}

/// A counter family: name, help, unit and its value for one process.
type Family = (
    &'static str,
    &'static str,
    Option<&'static str>,
    fn(&Totals) -> f64,
);

#[derive(Debug, Default)]
pub struct Accumulator {
    by_pid: BTreeMap<u32, Totals>,
}

impl Accumulator {
    /// Adds the interval from `previous` to `current`.
    pub fn add(&mut self, previous: &Sample, current: &Sample) {
        let seconds = current.mono - previous.mono;
        let rows = process_rows(Some(previous), current);
        let alive: std::collections::HashSet<u32> = rows.iter().map(|r| r.pid).collect();
        self.by_pid.retain(|pid, _| alive.contains(pid));
        for row in rows {
            let totals = self.by_pid.entry(row.pid).or_insert_with(|| Totals {
                command: row.command.clone(),
                cgroup: row.cgroup.clone().unwrap_or_default(),
                container: row
                    .container
                    .as_ref()
                    .map(|c| c.label())
                    .unwrap_or_default(),
                ..Totals::default()
            });
            let over_interval = |rate: Option<f64>| rate.unwrap_or(0.0) * seconds;
            totals.sent += over_interval(row.tcp_send_per_s);
            totals.received += over_interval(row.tcp_recv_per_s);
            totals.udp += over_interval(row.udp_per_s);
            totals.retrans += over_interval(row.retrans_per_s);
        }
    }

    /// The families, one series per process.
    pub fn render(&self, out: &mut String, ns: &str) {
        let families: [Family; 4] = [
            (
                "netlens_process_tcp_sent_bytes",
                "TCP bytes a process's sockets sent that the peers acknowledged (tcp_info bytes_acked), since the exporter started",
                Some("bytes"),
                |t| t.sent,
            ),
            (
                "netlens_process_tcp_received_bytes",
                "TCP bytes a process's sockets received (tcp_info bytes_received), since the exporter started",
                Some("bytes"),
                |t| t.received,
            ),
            (
                "netlens_process_udp_bytes",
                "Captured UDP bytes of a process's flows, both ways (0 without capture), since the exporter started",
                Some("bytes"),
                |t| t.udp,
            ),
            (
                "netlens_process_tcp_retransmits",
                "TCP segments a process's sockets retransmitted (tcpi_total_retrans), since the exporter started",
                None,
                |t| t.retrans,
            ),
        ];
        for (name, help, unit, value) in families {
            family(out, name, "counter", unit, help);
            for (pid, totals) in &self.by_pid {
                let _ = writeln!(
                    out,
                    "{name}_total{{netns=\"{}\",pid=\"{pid}\",command=\"{}\",cgroup=\"{}\",container=\"{}\"}} {}",
                    escape(ns),
                    escape(&totals.command),
                    escape(&totals.cgroup),
                    escape(&totals.container),
                    value(totals).round()
                );
            }
        }
    }
}
