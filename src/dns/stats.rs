//! Per-server and per-name figures from a set of results: count, latency
//! percentiles, timeouts and failure rates. Pure functions, shared by the
//! DNS tab, the findings and the exporter.

use super::{DnsResult, Outcome};
use std::collections::BTreeMap;

/// Histogram bucket upper bounds in milliseconds (the last bucket is
/// everything slower). The exporter uses the same bounds in seconds.
pub const BUCKETS_MS: [f64; 12] = [
    1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// The server ("ip:port") or the question ("PTR 4.3.2.1.in-addr.arpa").
    pub key: String,
    pub count: u64,
    /// Latencies of answered queries, ascending.
    pub latencies: Vec<f64>,
    pub timeouts: u64,
    pub servfail: u64,
    pub nxdomain: u64,
    pub refused: u64,
    pub errors: u64,
    /// ICMP port unreachable (refused by the host, not by a DNS server).
    pub unreachable: u64,
    /// For names: the query type is PTR.
    pub ptr: bool,
    /// For names: the servers asked.
    pub servers: Vec<String>,
}

impl Stats {
    /// Nearest-rank percentile of the answered latencies (p in 0..=100).
    pub fn percentile(&self, p: f64) -> Option<f64> {
        percentile(&self.latencies, p)
    }

    pub fn max(&self) -> Option<f64> {
        self.latencies.last().copied()
    }

    /// A share of all queries, in percent.
    pub fn rate(&self, n: u64) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            n as f64 * 100.0 / self.count as f64
        }
    }

    /// Queries that failed: timeouts, SERVFAIL, REFUSED, port unreachable,
    /// errors (NXDOMAIN is an answer, but a failing name all the same for
    /// the user).
    pub fn failures(&self) -> u64 {
        self.timeouts
            + self.servfail
            + self.nxdomain
            + self.refused
            + self.errors
            + self.unreachable
    }

    fn add(&mut self, result: &DnsResult) {
        self.count += 1;
        match result.outcome {
            Outcome::Timeout => self.timeouts += 1,
            Outcome::Servfail => self.servfail += 1,
            Outcome::Nxdomain => self.nxdomain += 1,
            Outcome::Refused => self.refused += 1,
            Outcome::Error => self.errors += 1,
            Outcome::Unreachable => self.unreachable += 1,
            Outcome::Ok => {}
        }
        if let Some(latency) = result.latency_ms {
            self.latencies.push(latency);
        }
    }

    fn finish(&mut self) {
        self.latencies.sort_by(f64::total_cmp);
    }
}

pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// One Stats per server, in server order.
pub fn by_server<'a>(results: impl IntoIterator<Item = &'a DnsResult>) -> Vec<Stats> {
    let mut map: BTreeMap<&str, Stats> = BTreeMap::new();
    for result in results {
        map.entry(&result.server)
            .or_insert_with(|| Stats {
                key: result.server.clone(),
                ..Default::default()
            })
            .add(result);
    }
    finish(map.into_values())
}

/// One Stats per question ("QTYPE name"), with the servers asked.
pub fn by_name<'a>(results: impl IntoIterator<Item = &'a DnsResult>) -> Vec<Stats> {
    let mut map: BTreeMap<(String, String), Stats> = BTreeMap::new();
    for result in results {
        let stats = map
            .entry((result.name.clone(), result.qtype.clone()))
            .or_insert_with(|| Stats {
                key: format!("{} {}", result.qtype, result.name),
                ptr: result.qtype == "PTR",
                ..Default::default()
            });
        stats.add(result);
        if !stats.servers.contains(&result.server) {
            stats.servers.push(result.server.clone());
        }
    }
    finish(map.into_values())
}

fn finish(all: impl Iterator<Item = Stats>) -> Vec<Stats> {
    all.map(|mut s| {
        s.finish();
        s
    })
    .collect()
}

/// Names by their slowest answer, slowest first (answered names only).
pub fn slowest(names: &[Stats], n: usize) -> Vec<&Stats> {
    let mut answered: Vec<&Stats> = names.iter().filter(|s| s.max().is_some()).collect();
    answered.sort_by(|a, b| b.max().unwrap_or(0.0).total_cmp(&a.max().unwrap_or(0.0)));
    answered.truncate(n);
    answered
}

/// Names with failures, most failures first.
pub fn failing(names: &[Stats], n: usize) -> Vec<&Stats> {
    let mut failing: Vec<&Stats> = names.iter().filter(|s| s.failures() > 0).collect();
    failing.sort_by(|a, b| b.failures().cmp(&a.failures()).then(a.key.cmp(&b.key)));
    failing.truncate(n);
    failing
}

/// Counts per bucket of BUCKETS_MS (not cumulative), plus one for slower.
pub fn histogram(latencies: &[f64]) -> [u64; BUCKETS_MS.len() + 1] {
    let mut counts = [0u64; BUCKETS_MS.len() + 1];
    for &latency in latencies {
        let bucket = BUCKETS_MS
            .iter()
            .position(|&bound| latency <= bound)
            .unwrap_or(BUCKETS_MS.len());
        counts[bucket] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(server: &str, name: &str, latency: Option<f64>, outcome: Outcome) -> DnsResult {
        DnsResult {
            t: 0.0,
            server: server.into(),
            name: name.into(),
            qtype: "A".into(),
            latency_ms: latency,
            outcome,
            answers: vec![],
        }
    }

    #[test]
    fn percentiles_rates_and_lists() {
        let mut all: Vec<DnsResult> = (1..=100)
            .map(|i| r("s1", "a.test", Some(i as f64), Outcome::Ok))
            .collect();
        all.push(r("s1", "b.test", None, Outcome::Timeout));
        all.push(r("s2", "c.test", Some(3.0), Outcome::Nxdomain));
        let servers = by_server(&all);
        assert_eq!(servers.len(), 2);
        let s1 = &servers[0];
        assert_eq!((s1.count, s1.timeouts), (101, 1));
        assert_eq!(s1.percentile(50.0), Some(50.0));
        assert_eq!(s1.percentile(90.0), Some(90.0));
        assert_eq!(s1.percentile(99.0), Some(99.0));
        assert_eq!(s1.max(), Some(100.0));
        assert_eq!(servers[1].rate(servers[1].nxdomain), 100.0);
        let names = by_name(&all);
        assert_eq!(slowest(&names, 1)[0].key, "A a.test");
        let failing = failing(&names, 5);
        assert_eq!(failing.len(), 2);
        assert_eq!(percentile(&[], 50.0), None);
        let h = histogram(&[0.5, 1.0, 1.5, 300.0, 9000.0]);
        assert_eq!((h[0], h[1], h[8], h[12]), (2, 1, 1, 1));
    }
}
