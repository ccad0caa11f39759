//! softnet-drops and softirq-imbalance: the per-CPU backlog
//! (/proc/net/softnet_stat) dropping or running out of budget, and one CPU
//! doing the receive work of the whole host.

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::model::Sample;
use crate::model::cpu::{CpuRate, cpu_rates, sort_busiest, total};

pub const SOFTNET_DROPS: &str = "softnet-drops";
pub const SOFTIRQ_IMBALANCE: &str = "softirq-imbalance";

pub fn evaluate(previous: Option<&Sample>, current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    let mut rates = cpu_rates(previous, current);
    sort_busiest(&mut rates);
    let knob = |name: &str| {
        current
            .cpu
            .as_ref()?
            .knobs
            .get(name)
            .and_then(|v| v.parse::<u64>().ok())
    };
    let mut found = Vec::new();
    found.extend(drops(&rates, limits, knob));
    found.extend(imbalance(&rates, limits));
    found
}

/// "from 1000 to 2000" for a knob read live, else "(host-wide)".
fn raise(name: &str, value: Option<u64>) -> String {
    match value {
        Some(now) => format!("{name} from {now} to {}", now.saturating_mul(2)),
        None => format!("{name} (host-wide; set it in the host)"),
    }
}

fn drops(
    rates: &[CpuRate],
    limits: &Thresholds,
    knob: impl Fn(&str) -> Option<u64>,
) -> Option<Finding> {
    let dropping = |r: &CpuRate| {
        r.dropped
            .filter(|&d| d > limits.softnet_drop_per_s && d > 0.0)
    };
    let squeezed = |r: &CpuRate| {
        r.time_squeeze
            .filter(|&s| s > limits.softnet_squeeze_per_s && s > 0.0)
    };
    let worst = rates
        .iter()
        .filter(|r| dropping(r).is_some() || squeezed(r).is_some())
        .max_by(|a, b| {
            let key = |r: &CpuRate| (dropping(r).unwrap_or(0.0), squeezed(r).unwrap_or(0.0));
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
    let others = rates
        .iter()
        .filter(|r| r.cpu != worst.cpu && (dropping(r).is_some() || squeezed(r).is_some()))
        .count();
    let cpu = worst.cpu;
    let mut what = format!(
        "CPU{cpu}: backlog dropped {:.0} packets/s, time_squeeze {:.0}/s, processed {:.0}/s",
        worst.dropped.unwrap_or(0.0),
        worst.time_squeeze.unwrap_or(0.0),
        worst.processed.unwrap_or(0.0),
    );
    if others > 0 {
        what.push_str(&format!(" (+{others} more CPUs)"));
    }
    let severity = if dropping(worst).is_some() {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let budget = raise("net.core.netdev_budget", knob("net.core.netdev_budget"));
    let backlog = raise(
        "net.core.netdev_max_backlog",
        knob("net.core.netdev_max_backlog"),
    );
    let hint = if severity == Severity::Crit {
        format!(
            "the per-CPU backlog is full: raise {backlog}; spread the receive work over more \
             CPUs with RSS queues (ethtool -L) or RPS (/sys/class/net/IF/queues/rx-N/rps_cpus)"
        )
    } else {
        format!(
            "NET_RX ran out of budget before the backlog was empty: raise {budget} (or \
             netdev_budget_usecs); spread the work with RSS queues or RPS"
        )
    };
    Some(Finding {
        hold: Hold::default(),
        id: SOFTNET_DROPS,
        severity,
        summary: what,
        hint,
        evidence: Evidence {
            netns: None,
            tab: "interfaces",
            row: format!("CPU{cpu}"),
        },
    })
}

/// `rates` busiest first.
fn imbalance(rates: &[CpuRate], limits: &Thresholds) -> Option<Finding> {
    if rates.len() < 2 {
        return None;
    }
    let all = total(rates).processed?;
    if all < limits.softirq_imbalance_min_pps || all <= 0.0 {
        return None;
    }
    let busiest = rates.first()?;
    let share = busiest.processed? * 100.0 / all;
    if share < limits.softirq_imbalance_percent {
        return None;
    }
    // One CPU doing the work at 13% si is a healthy host: it matters once
    // that CPU nears its limit, before its backlog drops (softnet-drops).
    if busiest.softirq_percent? < limits.softirq_imbalance_si_percent {
        return None;
    }
    let cpu = busiest.cpu;
    let si = busiest
        .softirq_percent
        .map_or(String::new(), |p| format!(", si {p:.0}%"));
    Some(Finding {
        hold: Hold::default(),
        id: SOFTIRQ_IMBALANCE,
        severity: Severity::Warn,
        summary: format!(
            "CPU{cpu} does {share:.0}% of the receive work: {:.0} of {all:.0} packets/s, NET_RX \
             {:.0}/s{si}; {} CPUs in all",
            busiest.processed.unwrap_or(0.0),
            busiest.net_rx.unwrap_or(0.0),
            rates.len()
        ),
        hint: "one queue or one interrupt takes all the packets: more RSS queues (ethtool -L IF \
               combined N), spread their interrupts (/proc/irq/N/smp_affinity_list, irqbalance), \
               or RPS for a single-queue device (rps_cpus)"
            .into(),
        evidence: Evidence {
            netns: None,
            tab: "interfaces",
            row: format!("CPU{cpu}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cpu::{CpuCounters, CpuSample, Softnet};

    /// A recorded sequence: (processed, dropped, time_squeeze) per CPU per
    /// second.
    fn sequence(rows: &[&[(u32, u32, u32)]]) -> Vec<Sample> {
        rows.iter()
            .enumerate()
            .map(|(t, cpus)| Sample {
                mono: t as f64,
                cpu: Some(CpuSample {
                    cpus: cpus
                        .iter()
                        .enumerate()
                        .map(|(n, &(processed, dropped, time_squeeze))| CpuCounters {
                            cpu: n as u32,
                            net_rx: u64::from(processed / 10),
                            // 1% si per 1,000 packets/s since the start.
                            softirq_ticks: u64::from(processed / 1000),
                            total_ticks: 100 * t as u64,
                            softnet: Some(Softnet {
                                processed,
                                dropped,
                                time_squeeze,
                                ..Default::default()
                            }),
                            ..Default::default()
                        })
                        .collect(),
                    knobs: [(
                        "net.core.netdev_max_backlog".to_string(),
                        "1000".to_string(),
                    )]
                    .into(),
                    nics: Vec::new(),
                }),
                ..Default::default()
            })
            .collect()
    }

    fn run(samples: &[Sample]) -> Vec<Vec<Finding>> {
        samples
            .windows(2)
            .map(|w| evaluate(Some(&w[0]), &w[1], &Thresholds::DEFAULT))
            .collect()
    }

    #[test]
    fn backlog_drops_on_one_cpu_are_critical_with_the_live_backlog() {
        let found = run(&sequence(&[
            &[(1000, 0, 0), (1000, 0, 0)],
            &[(2000, 0, 0), (90_000, 250, 3)],
            &[(3000, 0, 0), (180_000, 500, 6)],
        ]));
        for f in &found {
            let drop = f
                .iter()
                .find(|f| f.id == SOFTNET_DROPS)
                .expect("softnet-drops");
            assert_eq!(drop.severity, Severity::Crit);
            assert!(
                drop.summary
                    .starts_with("CPU1: backlog dropped 250 packets/s"),
                "{}",
                drop.summary
            );
            assert!(
                drop.hint.contains("netdev_max_backlog from 1000 to 2000"),
                "{}",
                drop.hint
            );
            // 89,000 of 90,000 packets/s on CPU1: imbalanced too.
            assert!(f.iter().any(|f| f.id == SOFTIRQ_IMBALANCE));
        }
    }

    #[test]
    fn squeezes_warn_and_a_counter_wrap_is_no_spike() {
        let found = run(&sequence(&[&[(u32::MAX - 100, 0, 100)], &[(400, 0, 150)]]));
        let f = found[0].iter().find(|f| f.id == SOFTNET_DROPS).unwrap();
        assert_eq!(f.severity, Severity::Warn);
        assert!(
            f.summary.contains("time_squeeze 50/s, processed 501/s"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn one_cpu_doing_the_work_matters_once_it_nears_its_limit() {
        // 83% of the packets on CPU1 both times; its si 40%, then 60%.
        let at = |cpu0: u32, cpu1: u32| {
            run(&sequence(&[
                &[(0, 0, 0), (0, 0, 0)],
                &[(cpu0, 0, 0), (cpu1, 0, 0)],
            ]))
        };
        assert!(at(8000, 40_000).iter().all(Vec::is_empty));
        let busy = at(12_000, 60_000);
        let f = busy[0]
            .iter()
            .find(|f| f.id == SOFTIRQ_IMBALANCE)
            .expect("softirq-imbalance at 60% si");
        assert!(
            f.summary
                .starts_with("CPU1 does 83% of the receive work: 60000 of 72000 packets/s"),
            "{}",
            f.summary
        );
        assert!(f.summary.contains("si 60%"), "{}", f.summary);
    }

    #[test]
    fn a_healthy_busy_spread_stays_quiet() {
        // 40,000 packets/s over two CPUs, a few squeezes under the threshold.
        let found = run(&sequence(&[
            &[(0, 7, 0), (0, 0, 0)],
            &[(20_000, 7, 5), (20_000, 0, 2)],
            &[(40_000, 7, 10), (40_000, 0, 4)],
        ]));
        assert!(found.iter().all(Vec::is_empty), "{found:?}");
        // One CPU doing it all, but at a rate that does not matter.
        let slow = run(&sequence(&[
            &[(0, 0, 0), (0, 0, 0)],
            &[(5000, 0, 0), (10, 0, 0)],
        ]));
        assert!(slow.iter().all(Vec::is_empty), "{slow:?}");
    }
}
