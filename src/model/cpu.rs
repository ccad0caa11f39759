//! Below the sockets: per-CPU softirq and backlog counters, the knobs that
//! govern them, and each NIC's queues. Raw counters as the kernel gives
//! them; `CpuRates` turns two samples into per-second figures.

use super::Sample;
use super::rates::counter_rate;
use super::shared::Shared;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One tick of the per-CPU network work.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuSample {
    /// One row per CPU, by CPU number.
    pub cpus: Vec<CpuCounters>,
    /// netdev_max_backlog, netdev_budget, netdev_budget_usecs,
    /// rps_sock_flow_entries (net.core.*), read live; unreadable ones left out.
    #[serde(default)]
    pub knobs: Shared<BTreeMap<String, String>>,
    /// Each interface's queues and interrupts, by interface name.
    #[serde(default)]
    pub nics: Vec<NicQueues>,
}

/// One CPU's counters. The softnet ones are 32-bit in the kernel and wrap.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CpuCounters {
    pub cpu: u32,
    /// /proc/softirqs NET_RX and NET_TX: softirqs run on this CPU.
    pub net_rx: u64,
    pub net_tx: u64,
    /// /proc/stat's softirq column and the sum of the busy and idle columns
    /// (user..steal), in USER_HZ ticks: their ratio is top's si%.
    pub softirq_ticks: u64,
    pub total_ticks: u64,
    /// /proc/net/softnet_stat; None when the CPU has no row there.
    pub softnet: Option<Softnet>,
}

/// One CPU's row of /proc/net/softnet_stat. received_rps and
/// flow_limit_count are None on kernels whose rows are too short for them.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Softnet {
    pub processed: u32,
    pub dropped: u32,
    pub time_squeeze: u32,
    pub received_rps: Option<u32>,
    pub flow_limit_count: Option<u32>,
    /// Packets waiting in the backlog now (a level; kernels from 5.10).
    #[serde(default)]
    pub backlog_len: Option<u32>,
}

/// One interface's queues: ethtool channels and rings, RPS/XPS masks per
/// queue, and the interrupt lines of its queues.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NicQueues {
    pub name: String,
    pub channels: Option<Channels>,
    pub ring: Option<Ring>,
    /// "rx-0" -> rps_cpus mask ("00000000,0000000f" as sysfs has it).
    pub rps_cpus: Shared<BTreeMap<String, String>>,
    /// "tx-0" -> xps_cpus mask.
    pub xps_cpus: Shared<BTreeMap<String, String>>,
    pub irqs: Vec<Irq>,
}

/// ethtool -l: queue counts now and at most.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Channels {
    pub rx: u32,
    pub tx: u32,
    pub other: u32,
    pub combined: u32,
    pub max_rx: u32,
    pub max_tx: u32,
    pub max_other: u32,
    pub max_combined: u32,
}

/// ethtool -g: ring sizes now and at most.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Ring {
    pub rx: u32,
    pub rx_max: u32,
    pub tx: u32,
    pub tx_max: u32,
}

/// One /proc/interrupts line: its number, its name and its count per CPU.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Irq {
    pub irq: String,
    pub name: String,
    pub per_cpu: Vec<u64>,
}

/// Per-second figures of one CPU over one interval. None where the counter
/// is missing or went backwards.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuRate {
    pub cpu: u32,
    pub net_rx: Option<f64>,
    pub net_tx: Option<f64>,
    /// Softirq time as a % of this CPU's time (top's si%).
    pub softirq_percent: Option<f64>,
    pub processed: Option<f64>,
    pub dropped: Option<f64>,
    pub time_squeeze: Option<f64>,
    pub received_rps: Option<f64>,
    pub flow_limit_count: Option<f64>,
}

/// A 32-bit counter's rise, across one wrap.
fn rate32(previous: u32, current: u32, seconds: f64) -> Option<f64> {
    (seconds > 0.0 && seconds.is_finite())
        .then(|| f64::from(current.wrapping_sub(previous)) / seconds)
}

impl CpuRate {
    pub fn between(previous: &CpuCounters, current: &CpuCounters, seconds: f64) -> Self {
        let ticks = current.total_ticks.checked_sub(previous.total_ticks);
        let softirq = current.softirq_ticks.checked_sub(previous.softirq_ticks);
        let softirq_percent = match (softirq, ticks) {
            (Some(s), Some(t)) if t > 0 => Some((s as f64 * 100.0 / t as f64).min(100.0)),
            _ => None,
        };
        let (p, c) = (previous.softnet, current.softnet);
        let field = |get: fn(&Softnet) -> Option<u32>| {
            let (p, c) = (get(p.as_ref()?)?, get(c.as_ref()?)?);
            rate32(p, c, seconds)
        };
        Self {
            cpu: current.cpu,
            net_rx: counter_rate(previous.net_rx, current.net_rx, seconds),
            net_tx: counter_rate(previous.net_tx, current.net_tx, seconds),
            softirq_percent,
            processed: field(|s| Some(s.processed)),
            dropped: field(|s| Some(s.dropped)),
            time_squeeze: field(|s| Some(s.time_squeeze)),
            received_rps: field(|s| s.received_rps),
            flow_limit_count: field(|s| s.flow_limit_count),
        }
    }

    /// What "busiest" sorts by: packets processed, else NET_RX softirqs.
    pub fn load(&self) -> f64 {
        self.processed.or(self.net_rx).unwrap_or(0.0)
    }
}

/// Every CPU's rates between two samples, by CPU number (a CPU missing from
/// `previous` gets no rates). Empty when either sample has no CPU data or
/// the interval is unusable.
pub fn cpu_rates(previous: Option<&Sample>, current: &Sample) -> Vec<CpuRate> {
    let (Some(previous), Some(now)) = (previous, current.cpu.as_ref()) else {
        return Vec::new();
    };
    let Some(before) = previous.cpu.as_ref() else {
        return Vec::new();
    };
    let seconds = current.mono - previous.mono;
    now.cpus
        .iter()
        .map(|c| match before.cpus.iter().find(|p| p.cpu == c.cpu) {
            Some(p) => CpuRate::between(p, c, seconds),
            None => CpuRate {
                cpu: c.cpu,
                ..Default::default()
            },
        })
        .collect()
}

/// The totals row: each figure summed over the CPUs that have it; si% is
/// the mean over CPUs (top's si% of the whole host).
pub fn total(rates: &[CpuRate]) -> CpuRate {
    let sum = |get: fn(&CpuRate) -> Option<f64>| {
        let known: Vec<f64> = rates.iter().filter_map(get).collect();
        (!known.is_empty()).then(|| known.iter().sum())
    };
    let percent: Vec<f64> = rates.iter().filter_map(|r| r.softirq_percent).collect();
    CpuRate {
        cpu: u32::MAX,
        net_rx: sum(|r| r.net_rx),
        net_tx: sum(|r| r.net_tx),
        softirq_percent: (!percent.is_empty())
            .then(|| percent.iter().sum::<f64>() / percent.len() as f64),
        processed: sum(|r| r.processed),
        dropped: sum(|r| r.dropped),
        time_squeeze: sum(|r| r.time_squeeze),
        received_rps: sum(|r| r.received_rps),
        flow_limit_count: sum(|r| r.flow_limit_count),
    }
}

/// Busiest first (packets processed, else NET_RX), then by CPU number.
pub fn sort_busiest(rates: &mut [CpuRate]) {
    rates.sort_by(|a, b| b.load().total_cmp(&a.load()).then(a.cpu.cmp(&b.cpu)));
}

impl Irq {
    pub fn total(&self) -> u64 {
        self.per_cpu.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: u32, processed: u32, net_rx: u64) -> CpuCounters {
        CpuCounters {
            cpu,
            net_rx,
            softirq_ticks: u64::from(processed) / 10,
            total_ticks: 1000 + u64::from(processed),
            softnet: Some(Softnet {
                processed,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn softnet_rates_cross_a_32_bit_wrap() {
        let before = cpu(0, u32::MAX - 9, 5);
        let after = cpu(0, 10, 25);
        let rate = CpuRate::between(&before, &after, 2.0);
        assert_eq!(rate.processed, Some(10.0));
        assert_eq!(rate.net_rx, Some(10.0));
        assert_eq!(rate.received_rps, None);
    }

    #[test]
    fn busiest_first_and_totals() {
        let sample = |mono, rows: Vec<CpuCounters>| Sample {
            mono,
            cpu: Some(CpuSample {
                cpus: rows,
                ..Default::default()
            }),
            ..Default::default()
        };
        let a = sample(1.0, vec![cpu(0, 0, 0), cpu(1, 0, 0)]);
        let b = sample(2.0, vec![cpu(0, 100, 3), cpu(1, 5000, 40)]);
        let mut rates = cpu_rates(Some(&a), &b);
        sort_busiest(&mut rates);
        assert_eq!(rates[0].cpu, 1);
        let all = total(&rates);
        assert_eq!(all.processed, Some(5100.0));
        assert_eq!(all.net_rx, Some(43.0));
        assert!(cpu_rates(None, &b).is_empty());
    }
}
