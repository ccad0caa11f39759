//! The neighbour tables (ARP for IPv4, NDP for IPv6): the kernel's table
//! statistics, their gc_thresh limits, and the entries by interface and state
//! as `ip neigh show` lists them.

use super::Sample;
use super::rates::counter_rate;
use super::shared::Shared;
use serde::{Deserialize, Serialize};

/// One tick of the neighbour tables.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NeighSample {
    /// /proc/net/stat/arp_cache; None where it cannot be read (it exists in
    /// the host's namespace only).
    pub arp: Option<NeighTable>,
    /// /proc/net/stat/ndisc_cache.
    pub ndisc: Option<NeighTable>,
    /// Entries of the watched namespace counted by family, interface and
    /// state (RTM_GETNEIGH). Sorted.
    pub entries: Shared<Vec<NeighCount>>,
}

/// One table's statistics (summed over CPUs; entries is a level) and its
/// garbage collector thresholds (net.ipv4.neigh.default.gc_thresh1/2/3).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct NeighTable {
    pub entries: u64,
    pub allocs: u64,
    pub destroys: u64,
    pub forced_gc_runs: u64,
    pub unresolved_discards: u64,
    pub table_fulls: u64,
    pub gc_thresh1: Option<u64>,
    pub gc_thresh2: Option<u64>,
    pub gc_thresh3: Option<u64>,
}

/// How many entries one interface has in one state.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct NeighCount {
    /// "inet" or "inet6", as `ip -4/-6 neigh` calls them.
    pub family: String,
    pub interface: String,
    /// As `ip neigh` prints it: REACHABLE, STALE, DELAY, PROBE, FAILED,
    /// INCOMPLETE, NOARP, PERMANENT.
    pub state: String,
    pub count: u64,
}

/// Per-second rates of one table's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NeighRates {
    pub allocs: Option<f64>,
    pub destroys: Option<f64>,
    pub forced_gc_runs: Option<f64>,
    pub unresolved_discards: Option<f64>,
    pub table_fulls: Option<f64>,
}

impl NeighRates {
    pub fn between(previous: &NeighTable, current: &NeighTable, seconds: f64) -> Self {
        let rate = |p, c| counter_rate(p, c, seconds);
        Self {
            allocs: rate(previous.allocs, current.allocs),
            destroys: rate(previous.destroys, current.destroys),
            forced_gc_runs: rate(previous.forced_gc_runs, current.forced_gc_runs),
            unresolved_discards: rate(previous.unresolved_discards, current.unresolved_discards),
            table_fulls: rate(previous.table_fulls, current.table_fulls),
        }
    }
}

/// Which table: arp or ndisc.
pub type PickTable = fn(&NeighSample) -> Option<&NeighTable>;

/// The rates of the table `pick` chooses (arp or ndisc) between two samples.
pub fn table_rates(
    previous: Option<&Sample>,
    current: &Sample,
    pick: PickTable,
) -> Option<NeighRates> {
    let previous = previous?;
    let before = pick(previous.neighbours.as_ref()?)?;
    let now = pick(current.neighbours.as_ref()?)?;
    Some(NeighRates::between(
        before,
        now,
        current.mono - previous.mono,
    ))
}

impl NeighTable {
    /// entries as a % of gc_thresh3 (the hard limit), if known.
    pub fn fill_percent(&self) -> Option<f64> {
        let limit = self.gc_thresh3.filter(|&l| l > 0)?;
        Some(self.entries as f64 * 100.0 / limit as f64)
    }
}

impl NeighSample {
    /// Entries in `state` over every interface and family.
    pub fn count_in(&self, state: &str) -> u64 {
        self.entries
            .iter()
            .filter(|e| e.state == state)
            .map(|e| e.count)
            .sum()
    }
}
