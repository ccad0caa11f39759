//! `snapshot --json`'s `cpus`, `softnet_knobs` and `neighbours` sections
//! (the man page's SNAPSHOT OUTPUT lists the keys).

use crate::model::Sample;
use crate::model::cpu::{CpuRate, cpu_rates};
use crate::model::neigh::{NeighCount, NeighRates, NeighTable, PickTable, table_rates};
use serde::Serialize;
use std::collections::BTreeMap;

/// One CPU: rates over the interval and the raw counters.
#[derive(Serialize)]
pub struct CpuJson {
    cpu: u32,
    net_rx_per_s: Option<f64>,
    net_tx_per_s: Option<f64>,
    softirq_percent: Option<f64>,
    processed_per_s: Option<f64>,
    dropped_per_s: Option<f64>,
    time_squeeze_per_s: Option<f64>,
    received_rps_per_s: Option<f64>,
    flow_limit_count_per_s: Option<f64>,
    net_rx: u64,
    net_tx: u64,
    processed: Option<u32>,
    dropped: Option<u32>,
    time_squeeze: Option<u32>,
    received_rps: Option<u32>,
    flow_limit_count: Option<u32>,
    backlog_len: Option<u32>,
}

/// Every CPU by number; None when the sample has no CPU data (an old
/// recording).
pub fn cpus(previous: &Sample, current: &Sample) -> Option<Vec<CpuJson>> {
    let now = current.cpu.as_ref()?;
    let rates = cpu_rates(Some(previous), current);
    Some(
        now.cpus
            .iter()
            .map(|c| {
                let r = rates
                    .iter()
                    .find(|r| r.cpu == c.cpu)
                    .copied()
                    .unwrap_or(CpuRate::default());
                let s = c.softnet;
                CpuJson {
                    cpu: c.cpu,
                    net_rx_per_s: r.net_rx,
                    net_tx_per_s: r.net_tx,
                    softirq_percent: r.softirq_percent,
                    processed_per_s: r.processed,
                    dropped_per_s: r.dropped,
                    time_squeeze_per_s: r.time_squeeze,
                    received_rps_per_s: r.received_rps,
                    flow_limit_count_per_s: r.flow_limit_count,
                    net_rx: c.net_rx,
                    net_tx: c.net_tx,
                    processed: s.map(|s| s.processed),
                    dropped: s.map(|s| s.dropped),
                    time_squeeze: s.map(|s| s.time_squeeze),
                    received_rps: s.and_then(|s| s.received_rps),
                    flow_limit_count: s.and_then(|s| s.flow_limit_count),
                    backlog_len: s.and_then(|s| s.backlog_len),
                }
            })
            .collect(),
    )
}

/// The backlog and budget knobs read with the CPUs.
pub fn knobs(current: &Sample) -> Option<&BTreeMap<String, String>> {
    current.cpu.as_ref().map(|c| &*c.knobs)
}

#[derive(Serialize)]
pub struct TableJson {
    #[serde(flatten)]
    raw: NeighTable,
    fill_percent: Option<f64>,
    allocs_per_s: Option<f64>,
    destroys_per_s: Option<f64>,
    forced_gc_runs_per_s: Option<f64>,
    unresolved_discards_per_s: Option<f64>,
    table_fulls_per_s: Option<f64>,
}

#[derive(Serialize)]
pub struct NeighJson<'a> {
    arp: Option<TableJson>,
    ndisc: Option<TableJson>,
    /// Entries of the watched namespace by state, over all interfaces.
    by_state: BTreeMap<&'a str, u64>,
    entries: &'a [NeighCount],
}

fn table_json(table: &NeighTable, rates: Option<NeighRates>) -> TableJson {
    let r = rates.unwrap_or_default();
    TableJson {
        raw: *table,
        fill_percent: table.fill_percent(),
        allocs_per_s: r.allocs,
        destroys_per_s: r.destroys,
        forced_gc_runs_per_s: r.forced_gc_runs,
        unresolved_discards_per_s: r.unresolved_discards,
        table_fulls_per_s: r.table_fulls,
    }
}

/// None when the sample has no neighbour data (an old recording).
pub fn neighbours<'a>(previous: &Sample, current: &'a Sample) -> Option<NeighJson<'a>> {
    let now = current.neighbours.as_ref()?;
    let table = |pick: PickTable| {
        Some(table_json(
            pick(now)?,
            table_rates(Some(previous), current, pick),
        ))
    };
    let mut by_state = BTreeMap::new();
    for entry in &now.entries {
        *by_state.entry(entry.state.as_str()).or_default() += entry.count;
    }
    Some(NeighJson {
        arp: table(|n| n.arp.as_ref()),
        ndisc: table(|n| n.ndisc.as_ref()),
        by_state,
        entries: &now.entries,
    })
}
