//! The conntrack findings: conntrack-full and conntrack-drops. Pure
//! functions of two samples, like the rest of `findings`.

use crate::findings::{
    CONNTRACK_DROPS, CONNTRACK_FULL, Evidence, Finding, Hold, Severity, Thresholds,
};
use crate::model::Sample;
use crate::model::conntrack_rates::ConntrackRates;

/// What to do about a full table, with the sizes to set computed from the
/// live max and buckets.
fn full_fix(max: Option<u64>, buckets: Option<u64>) -> String {
    let raise = match max {
        Some(max) => {
            let to = max.saturating_mul(2);
            let buckets_now = buckets.map_or_else(|| "?".into(), |b| b.to_string());
            format!(
                "raise net.netfilter.nf_conntrack_max from {max} to {to} (and \
                 nf_conntrack_buckets from {buckets_now} to about {})",
                to / 4
            )
        }
        None => "raise net.netfilter.nf_conntrack_max (and nf_conntrack_buckets, about \
                 max/4)"
            .into(),
    };
    format!(
        "{raise}, shorten the timeouts of the states that fill it (`sysctl -a | grep \
         'nf_conntrack_.*timeout'`), or stop tracking stateless paths with a NOTRACK \
         rule (nft: `notrack` in a raw/prerouting chain; iptables -t raw -j CT --notrack)"
    )
}

fn evidence() -> Evidence {
    Evidence {
        netns: None,
        tab: "conntrack",
        row: "header".into(),
    }
}

pub fn evaluate(previous: Option<&Sample>, current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    // Any early_drop, drop or insert_failed per second above this is "rising".
    let rising = |rate: Option<f64>| rate.filter(|r| *r > limits.conntrack_drop_per_s);
    let ct = &current.conntrack;
    if !ct.available {
        return Vec::new();
    }
    let rates = ConntrackRates::for_samples(previous, current);
    let mut findings = Vec::new();
    let usage = ct.usage_percent();
    let early_drop = rising(rates.early_drop);
    let near_full = usage.filter(|u| *u >= limits.conntrack_full_warn_percent);
    if near_full.is_some() || early_drop.is_some() {
        // Near full and already dropping is as bad as full.
        let dropping = rising(rates.drop).is_some();
        let severity = if usage.is_some_and(|u| u >= limits.conntrack_full_crit_percent)
            || early_drop.is_some()
            || (near_full.is_some() && dropping)
        {
            Severity::Crit
        } else {
            Severity::Warn
        };
        let mut summary = format!(
            "{} of {} entries ({:.0}%)",
            ct.count.unwrap_or_default(),
            ct.max.unwrap_or_default(),
            usage.unwrap_or_default()
        );
        for (label, rate) in [
            ("drop", rising(rates.drop)),
            ("early_drop", early_drop),
            ("insert_failed", rising(rates.insert_failed)),
        ] {
            if let Some(rate) = rate {
                summary.push_str(&format!(", {rate:.1} {label}/s"));
            }
        }
        findings.push(Finding {
            hold: Hold::default(),
            id: CONNTRACK_FULL,
            severity,
            summary,
            hint: full_fix(ct.max, ct.buckets),
            evidence: evidence(),
        });
    }
    let drop = rising(rates.drop);
    let insert_failed = rising(rates.insert_failed);
    if drop.is_some() || insert_failed.is_some() {
        let mut parts = Vec::new();
        for (label, rate) in [
            ("drop", drop),
            ("insert_failed", insert_failed),
            ("invalid", rising(rates.invalid)),
        ] {
            if let Some(rate) = rate {
                parts.push(format!("{rate:.1} {label}/s"));
            }
        }
        let hint = if near_full.is_some() || early_drop.is_some() {
            "packets are dropped because the table is full: see conntrack-full"
        } else if insert_failed.is_some() {
            "entries lose an insert race (typical: UDP DNS A and AAAA queries from one socket \
             at once): `options single-request-reopen` in resolv.conf, or NOTRACK for that \
             traffic; check `conntrack -S` per CPU"
        } else {
            "conntrack drops packets it cannot track: check `conntrack -S` per CPU and the \
             kernel log (`dmesg | grep nf_conntrack`)"
        };
        findings.push(Finding {
            hold: Hold::default(),
            id: CONNTRACK_DROPS,
            severity: Severity::Warn,
            summary: format!("conntrack dropping: {}", parts.join(", ")),
            hint: hint.into(),
            evidence: evidence(),
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::conntrack::{ConntrackSample, ConntrackStats};

    fn pair(
        count: u64,
        max: u64,
        before: ConntrackStats,
        after: ConntrackStats,
    ) -> (Sample, Sample) {
        let sample = |mono, stats| Sample {
            mono,
            conntrack: ConntrackSample {
                available: true,
                count: Some(count),
                max: Some(max),
                stats: Some(stats),
                ..Default::default()
            },
            ..Default::default()
        };
        (sample(1.0, before), sample(2.0, after))
    }

    fn ids(findings: &[Finding]) -> Vec<(&str, Severity)> {
        findings.iter().map(|f| (f.id, f.severity)).collect()
    }

    #[test]
    fn healthy_table_is_quiet() {
        let s = ConntrackStats::default();
        let (a, b) = pair(100, 1000, s, s);
        assert!(evaluate(Some(&a), &b, &Thresholds::DEFAULT).is_empty());
    }

    #[test]
    fn usage_thresholds() {
        let s = ConntrackStats::default();
        let (a, b) = pair(800, 1000, s, s);
        assert_eq!(
            ids(&evaluate(Some(&a), &b, &Thresholds::DEFAULT)),
            [(CONNTRACK_FULL, Severity::Warn)]
        );
        let (a, b) = pair(799, 1000, s, s);
        assert!(evaluate(Some(&a), &b, &Thresholds::DEFAULT).is_empty());
        let (a, b) = pair(950, 1000, s, s);
        let found = evaluate(Some(&a), &b, &Thresholds::DEFAULT);
        assert_eq!(ids(&found), [(CONNTRACK_FULL, Severity::Crit)]);
        assert_eq!(found[0].summary, "950 of 1000 entries (95%)");
        assert!(found[0].hint.contains("NOTRACK"));
    }

    #[test]
    fn full_table_with_drops_raises_both() {
        let after = ConntrackStats {
            drop: 12,
            ..Default::default()
        };
        let (a, b) = pair(64, 64, ConntrackStats::default(), after);
        let found = evaluate(Some(&a), &b, &Thresholds::DEFAULT);
        assert_eq!(
            ids(&found),
            [
                (CONNTRACK_FULL, Severity::Crit),
                (CONNTRACK_DROPS, Severity::Warn)
            ]
        );
        assert_eq!(found[0].summary, "64 of 64 entries (100%), 12.0 drop/s");
        assert!(found[1].hint.contains("conntrack-full"));
    }

    #[test]
    fn nearly_full_and_dropping_is_crit() {
        let after = ConntrackStats {
            drop: 1,
            ..Default::default()
        };
        let (a, b) = pair(850, 1000, ConntrackStats::default(), after);
        assert_eq!(
            ids(&evaluate(Some(&a), &b, &Thresholds::DEFAULT)),
            [
                (CONNTRACK_FULL, Severity::Crit),
                (CONNTRACK_DROPS, Severity::Warn)
            ]
        );
    }

    #[test]
    fn early_drop_means_full_even_below_threshold() {
        let after = ConntrackStats {
            early_drop: 3,
            ..Default::default()
        };
        let (a, b) = pair(10, 1000, ConntrackStats::default(), after);
        assert_eq!(
            ids(&evaluate(Some(&a), &b, &Thresholds::DEFAULT)),
            [(CONNTRACK_FULL, Severity::Crit)]
        );
    }

    #[test]
    fn insert_failed_alone_is_a_drop_finding_with_its_own_hint() {
        let after = ConntrackStats {
            insert_failed: 2,
            invalid: 1,
            ..Default::default()
        };
        let (a, b) = pair(10, 1000, ConntrackStats::default(), after);
        let found = evaluate(Some(&a), &b, &Thresholds::DEFAULT);
        assert_eq!(ids(&found), [(CONNTRACK_DROPS, Severity::Warn)]);
        assert_eq!(
            found[0].summary,
            "conntrack dropping: 2.0 insert_failed/s, 1.0 invalid/s"
        );
        assert!(found[0].hint.contains("single-request-reopen"));
    }

    #[test]
    fn unavailable_or_first_sample_raises_nothing_from_rates() {
        let after = ConntrackStats {
            drop: 5,
            ..Default::default()
        };
        let (a, mut b) = pair(10, 1000, ConntrackStats::default(), after);
        assert!(evaluate(None, &b, &Thresholds::DEFAULT).is_empty());
        b.conntrack.available = false;
        assert!(evaluate(Some(&a), &b, &Thresholds::DEFAULT).is_empty());
    }
}
