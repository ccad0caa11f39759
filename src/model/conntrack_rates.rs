//! Conntrack rates from two samples, and the aggregates the tab shows: top
//! sources and destination ports, counts by state and protocol.

use super::Sample;
use super::conntrack::stats_interval;
use super::conntrack::{ConntrackEntry, ConntrackStats};
use super::rates::counter_rate;
use std::collections::HashMap;
use std::net::IpAddr;

/// Per-second rates of the summed per-CPU statistics. None when a counter is
/// unknown in either sample or went backwards.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConntrackRates {
    pub found: Option<f64>,
    pub invalid: Option<f64>,
    pub insert: Option<f64>,
    pub insert_failed: Option<f64>,
    pub drop: Option<f64>,
    pub early_drop: Option<f64>,
    pub error: Option<f64>,
    pub search_restart: Option<f64>,
    pub clash_resolve: Option<f64>,
}

impl ConntrackRates {
    pub fn between(previous: &ConntrackStats, current: &ConntrackStats, seconds: f64) -> Self {
        let rate = |p: u64, c: u64| counter_rate(p, c, seconds);
        Self {
            found: rate(previous.found, current.found),
            invalid: rate(previous.invalid, current.invalid),
            insert: rate(previous.insert, current.insert),
            insert_failed: rate(previous.insert_failed, current.insert_failed),
            drop: rate(previous.drop, current.drop),
            early_drop: rate(previous.early_drop, current.early_drop),
            error: rate(previous.error, current.error),
            search_restart: rate(previous.search_restart, current.search_restart),
            clash_resolve: rate(previous.clash_resolve, current.clash_resolve),
        }
    }

    /// Rates of `current` against `previous`; all None without a previous
    /// sample, without stats in either, or across a namespace change.
    pub fn for_samples(previous: Option<&Sample>, current: &Sample) -> Self {
        let Some(previous) = previous.filter(|p| p.netns == current.netns) else {
            return Self::default();
        };
        match (&previous.conntrack.stats, &current.conntrack.stats) {
            (Some(before), Some(after)) => {
                Self::between(before, after, stats_interval(previous, current))
            }
            _ => Self::default(),
        }
    }
}

/// How many entries have each key, biggest first (ties by key), at most `n`.
fn top<K: Ord + Clone + std::hash::Hash>(
    keys: impl Iterator<Item = K>,
    n: usize,
) -> Vec<(K, usize)> {
    let mut counts: HashMap<K, usize> = HashMap::new();
    for key in keys {
        *counts.entry(key).or_default() += 1;
    }
    let mut list: Vec<(K, usize)> = counts.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    list.truncate(n);
    list
}

/// The aggregates shown beside the entry list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub top_sources: Vec<(IpAddr, usize)>,
    /// Original destination ports (what clients asked for, before DNAT).
    pub top_dports: Vec<(u16, usize)>,
    pub by_state: Vec<(&'static str, usize)>,
    pub by_proto: Vec<(String, usize)>,
}

impl Summary {
    pub fn of(entries: &[ConntrackEntry], n: usize) -> Self {
        Self {
            top_sources: top(entries.iter().map(|e| e.orig.src), n),
            top_dports: top(entries.iter().filter_map(|e| e.orig.dport), n),
            by_state: top(entries.iter().map(|e| e.state_name()), usize::MAX),
            by_proto: top(entries.iter().map(|e| e.proto), usize::MAX)
                .into_iter()
                .map(|(proto, n)| (super::conntrack::proto_name(proto), n))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::conntrack::{ConntrackSample, Tuple};

    fn stats(found: u64, drop: u64) -> ConntrackStats {
        ConntrackStats {
            found,
            drop,
            ..Default::default()
        }
    }

    fn sample(mono: f64, netns: &str, stats: Option<ConntrackStats>) -> Sample {
        Sample {
            mono,
            netns: netns.into(),
            conntrack: ConntrackSample {
                stats,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn rates_over_the_interval() {
        let a = sample(10.0, "host", Some(stats(100, 0)));
        let b = sample(12.0, "host", Some(stats(300, 8)));
        let r = ConntrackRates::for_samples(Some(&a), &b);
        assert_eq!(r.found, Some(100.0));
        assert_eq!(r.drop, Some(4.0));
        assert_eq!(r.invalid, Some(0.0));
    }

    /// A late conntrack part repeats an earlier read: no rate over it,
    /// and the next read's rate spans the whole time since that read.
    #[test]
    fn a_late_read_gives_no_rate_and_the_next_spans_both_ticks() {
        let a = sample(10.0, "host", Some(stats(100, 0)));
        let mut late = sample(11.0, "host", Some(stats(100, 0)));
        late.conntrack.read_mono = Some(10.0);
        let r = ConntrackRates::for_samples(Some(&a), &late);
        assert_eq!((r.found, r.drop), (None, None));
        let b = sample(12.0, "host", Some(stats(300, 8)));
        let r = ConntrackRates::for_samples(Some(&late), &b);
        assert_eq!((r.found, r.drop), (Some(100.0), Some(4.0)));
    }

    #[test]
    fn no_rates_without_both_samples_or_across_namespaces() {
        let a = sample(10.0, "host", Some(stats(100, 0)));
        let b = sample(11.0, "other", Some(stats(300, 0)));
        assert_eq!(
            ConntrackRates::for_samples(Some(&a), &b),
            ConntrackRates::default()
        );
        assert_eq!(
            ConntrackRates::for_samples(None, &a),
            ConntrackRates::default()
        );
        let c = sample(12.0, "host", None);
        assert_eq!(
            ConntrackRates::for_samples(Some(&a), &c),
            ConntrackRates::default()
        );
    }

    #[test]
    fn wrapped_counter_is_unknown_not_a_spike() {
        let a = sample(10.0, "host", Some(stats(u32::MAX as u64, 0)));
        let b = sample(11.0, "host", Some(stats(5, 0)));
        assert_eq!(ConntrackRates::for_samples(Some(&a), &b).found, None);
    }

    #[test]
    fn summary_counts_and_ranks() {
        let entry = |src: &str, dport: u16, proto: u8, state: Option<u8>| ConntrackEntry {
            proto,
            tcp_state: state,
            orig: Tuple {
                src: src.parse().unwrap(),
                dst: "198.18.0.2".parse().unwrap(),
                sport: Some(1000),
                dport: Some(dport),
            },
            reply: Tuple {
                src: "198.18.0.2".parse().unwrap(),
                dst: src.parse().unwrap(),
                sport: Some(dport),
                dport: Some(1000),
            },
            status: 0,
            timeout: 1,
            mark: 0,
            zone: 0,
            packets: None,
            bytes: None,
        };
        let entries = vec![
            entry("198.18.0.1", 80, 6, Some(3)),
            entry("198.18.0.1", 80, 6, Some(7)),
            entry("198.18.0.5", 53, 17, None),
            entry("198.18.0.1", 443, 6, Some(3)),
        ];
        let s = Summary::of(&entries, 1);
        assert_eq!(s.top_sources, vec![("198.18.0.1".parse().unwrap(), 3)]);
        assert_eq!(s.top_dports, vec![(80, 2)]);
        assert_eq!(
            s.by_state,
            vec![("ESTABLISHED", 2), ("TIME_WAIT", 1), ("UNREPLIED", 1)]
        );
        assert_eq!(s.by_proto, vec![("tcp".to_string(), 3), ("udp".into(), 1)]);
    }
}
