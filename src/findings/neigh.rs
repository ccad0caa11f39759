//! neigh-table-full: the ARP or NDP table at its limit. The kernel says
//! "neighbour table overflow" and drops new neighbours (table_fulls) once
//! entries reach gc_thresh3; forced garbage collections (forced_gc_runs)
//! come before that, from gc_thresh2.

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::model::Sample;
use crate::model::neigh::{PickTable, table_rates};

pub const NEIGH_TABLE_FULL: &str = "neigh-table-full";

pub fn evaluate(previous: Option<&Sample>, current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    let tables: [(&str, &str, PickTable); 2] = [
        ("arp", "ipv4", |n| n.arp.as_ref()),
        ("ndisc", "ipv6", |n| n.ndisc.as_ref()),
    ];
    let Some(now) = current.neighbours.as_ref() else {
        return Vec::new();
    };
    tables
        .into_iter()
        .filter_map(|(name, family, pick)| {
            let table = pick(now)?;
            let rates = table_rates(previous, current, pick).unwrap_or_default();
            let fulls = rates.table_fulls.filter(|&r| r > 0.0);
            let forced = rates
                .forced_gc_runs
                .filter(|&r| r > limits.neigh_forced_gc_per_s && r > 0.0);
            let fill = table
                .fill_percent()
                .filter(|&p| p >= limits.neigh_table_warn_percent);
            if fulls.is_none() && forced.is_none() && fill.is_none() {
                return None;
            }
            let limit = table
                .gc_thresh3
                .map_or("gc_thresh3 unknown".to_string(), |l| {
                    format!("gc_thresh3 {l}")
                });
            let mut summary = format!("{name} table: {} entries ({limit})", table.entries);
            if let Some(f) = fulls {
                summary.push_str(&format!(", table full {f:.1}/s (neighbour table overflow)"));
            }
            if let Some(f) = forced {
                summary.push_str(&format!(", forced GC {f:.1}/s"));
            }
            if let Some(d) = rates.unresolved_discards.filter(|&d| d > 0.0) {
                summary.push_str(&format!(", unresolved discards {d:.1}/s"));
            }
            let thresholds = match (table.gc_thresh1, table.gc_thresh2, table.gc_thresh3) {
                (Some(a), Some(b), Some(c)) => format!(
                    "raise net.{family}.neigh.default.gc_thresh1/2/3 from {a}/{b}/{c} to {}/{}/{}",
                    a.saturating_mul(2),
                    b.saturating_mul(2),
                    c.saturating_mul(2)
                ),
                _ => format!("raise net.{family}.neigh.default.gc_thresh1/2/3 (host-wide)"),
            };
            Some(Finding {
                hold: Hold::default(),
                id: NEIGH_TABLE_FULL,
                severity: if fulls.is_some() {
                    Severity::Crit
                } else {
                    Severity::Warn
                },
                summary,
                hint: format!(
                    "{thresholds}, or put fewer peers on one L2 segment (smaller subnets, routed \
                     instead of bridged); see ip -s neigh show"
                ),
                evidence: Evidence {
                    netns: None,
                    tab: "interfaces",
                    row: name.to_string(),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::neigh::{NeighSample, NeighTable};

    fn sample(t: f64, entries: u64, forced_gc_runs: u64, table_fulls: u64) -> Sample {
        Sample {
            mono: t,
            neighbours: Some(NeighSample {
                arp: Some(NeighTable {
                    entries,
                    forced_gc_runs,
                    table_fulls,
                    gc_thresh1: Some(128),
                    gc_thresh2: Some(512),
                    gc_thresh3: Some(1024),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn found(a: &Sample, b: &Sample) -> Vec<Finding> {
        evaluate(Some(a), b, &Thresholds::DEFAULT)
    }

    #[test]
    fn overflows_are_critical_and_name_the_thresholds() {
        let f = found(&sample(0.0, 1024, 10, 0), &sample(2.0, 1024, 14, 6));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Crit);
        assert_eq!(
            f[0].summary,
            "arp table: 1024 entries (gc_thresh3 1024), table full 3.0/s (neighbour table \
             overflow), forced GC 2.0/s"
        );
        assert!(
            f[0].hint.contains("from 128/512/1024 to 256/1024/2048"),
            "{}",
            f[0].hint
        );
    }

    #[test]
    fn near_the_limit_or_forced_gc_warns() {
        let near = found(&sample(0.0, 900, 0, 0), &sample(1.0, 930, 0, 0));
        assert_eq!(near[0].severity, Severity::Warn);
        let gc = found(&sample(0.0, 300, 0, 0), &sample(1.0, 300, 1, 0));
        assert_eq!(gc[0].severity, Severity::Warn);
    }

    #[test]
    fn a_healthy_table_stays_quiet() {
        let seq = [
            sample(0.0, 40, 3, 1),
            sample(1.0, 45, 3, 1),
            sample(2.0, 41, 3, 1),
        ];
        for w in seq.windows(2) {
            assert!(found(&w[0], &w[1]).is_empty());
        }
        assert!(evaluate(None, &seq[0], &Thresholds::DEFAULT).is_empty());
    }
}
