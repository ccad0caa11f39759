//! DNS probe latency histograms and probe outcome counters for the
//! exporter: cumulative since the exporter started (Prometheus counters and
//! histograms only grow), one series per server, name and query type (and
//! outcome), from the probe results each sample carries.

use super::render::{DnsProbeHistogram, DnsProbeOutcomes, DnsSeries};
use crate::dns::stats::BUCKETS_MS;
use crate::dns::{DnsSample, Outcome};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
struct Series {
    /// Per bucket of BUCKETS_MS, not cumulative.
    buckets: [u64; BUCKETS_MS.len()],
    count: u64,
    sum_seconds: f64,
}

#[derive(Debug, Default)]
pub struct Accumulator {
    series: BTreeMap<(String, String, String), Series>,
    /// Probes by (server, name, qtype, outcome label).
    outcomes: BTreeMap<(String, String, String, &'static str), u64>,
}

impl Accumulator {
    /// Adds the probes of one sample: every probe to the outcome counts,
    /// the answered ones to the latency histogram (a timeout has no
    /// latency).
    pub fn add(&mut self, dns: &DnsSample) {
        for r in &dns.probes {
            *self
                .outcomes
                .entry((
                    r.server.clone(),
                    r.name.clone(),
                    r.qtype.clone(),
                    r.outcome.label(),
                ))
                .or_default() += 1;
            let (Outcome::Ok | Outcome::Nxdomain, Some(ms)) = (r.outcome, r.latency_ms) else {
                continue;
            };
            let series = self
                .series
                .entry((r.server.clone(), r.name.clone(), r.qtype.clone()))
                .or_default();
            if let Some(bucket) = BUCKETS_MS.iter().position(|&bound| ms <= bound) {
                series.buckets[bucket] += 1;
            }
            series.count += 1;
            series.sum_seconds += ms / 1000.0;
        }
    }

    /// What the exporter serves: the histograms and the outcome counts.
    pub fn series(&self) -> DnsSeries {
        DnsSeries {
            histograms: self.histograms(),
            outcomes: self
                .outcomes
                .iter()
                .map(|((server, name, qtype, outcome), count)| DnsProbeOutcomes {
                    server: server.clone(),
                    name: name.clone(),
                    qtype: qtype.clone(),
                    outcome,
                    count: *count,
                })
                .collect(),
        }
    }

    pub fn histograms(&self) -> Vec<DnsProbeHistogram> {
        self.series
            .iter()
            .map(|((server, name, qtype), s)| {
                let mut total = 0;
                let buckets = BUCKETS_MS
                    .iter()
                    .zip(s.buckets)
                    .map(|(bound, n)| {
                        total += n;
                        (bound / 1000.0, total)
                    })
                    .collect();
                DnsProbeHistogram {
                    server: server.clone(),
                    name: name.clone(),
                    qtype: qtype.clone(),
                    buckets,
                    count: s.count,
                    sum_seconds: s.sum_seconds,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::DnsResult;

    #[test]
    fn cumulative_buckets_and_only_answers() {
        let r = |ms: Option<f64>, outcome| DnsResult {
            t: 0.0,
            server: "127.0.0.1:53".into(),
            name: "a.test".into(),
            qtype: "A".into(),
            latency_ms: ms,
            outcome,
            answers: vec![],
        };
        let mut acc = Accumulator::default();
        acc.add(&DnsSample {
            probes: vec![
                r(Some(0.5), Outcome::Ok),
                r(Some(300.0), Outcome::Ok),
                r(None, Outcome::Timeout),
                r(Some(9000.0), Outcome::Ok),
            ],
            ..Default::default()
        });
        let h = &acc.histograms()[0];
        assert_eq!(h.count, 3);
        assert_eq!(h.buckets[0], (0.001, 1));
        assert_eq!(h.buckets[8], (0.5, 2));
        assert_eq!(h.buckets.last().unwrap().1, 2, "9 s is only in +Inf");
        assert!((h.sum_seconds - 9.3005).abs() < 1e-9);
        let outcomes = acc.series().outcomes;
        let count = |o: &str| outcomes.iter().find(|c| c.outcome == o).map(|c| c.count);
        assert_eq!(
            (count("ok"), count("timeout"), count("servfail")),
            (Some(3), Some(1), None)
        );
    }
}
