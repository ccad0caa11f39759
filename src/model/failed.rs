//! Failed connections: the connection log's TCP connections that failed
//! (refused, timed out or unreachable before they were established, reset
//! or timed out after) and the DNS queries that got no good answer,
//! grouped by kind, process, container and destination, with counts, the
//! newest interval's rate and the first and last time seen.
//!
//! Built from samples alone (their connection logs and DNS results), so
//! the live view, a replay, `snapshot` and the exporter agree: each adds
//! the samples it has, in order.

use super::Sample;
use super::closed::{ClosedConn, Ending};
use super::dns::{DnsResult, Outcome};
use serde::Serialize;
use std::collections::HashMap;

/// Groups kept at most; failures of further groups are counted in
/// `Failures::overflow` (a scan of many destinations cannot grow it).
pub const MAX_GROUPS: usize = 2000;

/// What failed, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailKind {
    /// An RST (or an ICMP port unreachable) answered the SYN.
    Refused,
    /// The SYNs went unanswered.
    SynTimeout,
    /// An ICMP destination unreachable ended the connect, or no neighbour
    /// answered.
    Unreachable,
    /// A reset ended an established connection.
    Reset,
    /// Retransmissions or probes of an established connection went
    /// unanswered.
    Timeout,
    /// A DNS query without a good answer, by what came back.
    Dns(Outcome),
}

impl FailKind {
    /// The kind of a connection's ending; None when it did not fail (a FIN,
    /// or an abort this host's application chose).
    pub fn of_ending(ending: Ending) -> Option<FailKind> {
        match ending {
            Ending::Refused => Some(FailKind::Refused),
            Ending::SynTimeout => Some(FailKind::SynTimeout),
            Ending::Unreachable => Some(FailKind::Unreachable),
            Ending::RstReceived | Ending::Rst => Some(FailKind::Reset),
            Ending::Timeout => Some(FailKind::Timeout),
            Ending::Fin | Ending::RstSent => None,
        }
    }

    /// The name in tables, JSON and the exporter's `kind` label.
    pub fn name(self) -> &'static str {
        match self {
            FailKind::Refused => "refused",
            FailKind::SynTimeout => "syn-timeout",
            FailKind::Unreachable => "unreachable",
            FailKind::Reset => "reset",
            FailKind::Timeout => "timeout",
            FailKind::Dns(Outcome::Timeout) => "dns-no-answer",
            FailKind::Dns(Outcome::Nxdomain) => "dns-nxdomain",
            FailKind::Dns(Outcome::Servfail) => "dns-servfail",
            FailKind::Dns(Outcome::Refused) => "dns-refused",
            FailKind::Dns(Outcome::Unreachable) => "dns-unreachable",
            FailKind::Dns(Outcome::Error | Outcome::Ok) => "dns-error",
        }
    }

    pub fn is_dns(self) -> bool {
        matches!(self, FailKind::Dns(_))
    }
}

impl Serialize for FailKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// What a group is: everything but its counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct FailKey {
    pub kind: FailKind,
    /// The process that held the socket (see `ClosedConn::users`); None
    /// when unknown, and for DNS (a result does not name its asker).
    pub pid: Option<u32>,
    /// Its command, "-" when unknown.
    pub comm: String,
    /// The process's container ("web (podman)"), when it runs in one.
    pub container: Option<String>,
    /// Where the connection went ("addr:port"; for an accepted one, this
    /// host's address); the server asked for DNS.
    pub destination: String,
    /// Whether this host accepted the connection (else it connected).
    pub accepted: bool,
    /// DNS: the question, "NAME TYPE".
    pub question: Option<String>,
}

/// A group's counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FailCounts {
    pub count: u64,
    /// In the newest interval added.
    #[serde(skip)]
    pub recent: u64,
    /// Unix seconds.
    pub first_seen: f64,
    pub last_seen: f64,
}

/// The failures of the samples added so far.
#[derive(Debug, Clone, Default)]
pub struct Failures {
    groups: Vec<(FailKey, FailCounts)>,
    index: HashMap<FailKey, usize>,
    /// Failures of groups beyond `MAX_GROUPS`, left out.
    pub overflow: u64,
    /// Seconds the newest sample's interval lasted (its `recent` counts'
    /// time); 0 before two samples.
    pub interval_s: f64,
    /// The newest sample added: its monotonic time.
    pub last_mono: Option<f64>,
}

impl Failures {
    /// The failures of `samples`, in order.
    pub fn of<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Failures {
        let mut failures = Failures::default();
        for sample in samples {
            failures.add(sample);
        }
        failures
    }

    /// The failures of `current`'s interval alone (its counts are the
    /// recent ones, its rates over the time since `previous`).
    /// Only the connections `keep` keeps.
    pub fn of_interval(
        previous: &Sample,
        current: &Sample,
        keep: impl Fn(&ClosedConn) -> bool,
    ) -> Failures {
        let mut failures = Failures {
            last_mono: Some(previous.mono),
            ..Failures::default()
        };
        failures.add_filtered(current, keep);
        failures
    }

    /// Adds one sample's failed connections and DNS results; its counts
    /// become the `recent` ones.
    pub fn add(&mut self, sample: &Sample) {
        self.add_filtered(sample, |_| true);
    }

    /// As `add`, with only the connections `keep` keeps (DNS results are
    /// added whole).
    pub fn add_filtered(&mut self, sample: &Sample, keep: impl Fn(&ClosedConn) -> bool) {
        self.interval_s = self.last_mono.map_or(0.0, |last| sample.mono - last);
        self.last_mono = Some(sample.mono);
        for (_, counts) in &mut self.groups {
            counts.recent = 0;
        }
        let containers = super::processes::ClosedContainers::of(sample);
        for conn in sample.closed.iter().flat_map(|log| &log.conns) {
            let Some(kind) = FailKind::of_ending(conn.ending) else {
                continue;
            };
            if !keep(conn) {
                continue;
            }
            let destination = if conn.accepted { conn.local } else { conn.peer };
            let key = FailKey {
                kind,
                pid: conn.pid(),
                comm: conn.process().to_string(),
                container: containers
                    .of_conn(conn)
                    .map(super::processes::container_label),
                destination: destination.to_string(),
                accepted: conn.accepted,
                question: None,
            };
            self.count(key, conn.t);
        }
        let dns = sample.dns.iter();
        let results = dns.flat_map(|d| d.probes.iter().chain(&d.passive));
        for result in results.filter(|r| r.outcome != Outcome::Ok) {
            self.count(dns_key(result), result.t);
        }
    }

    fn count(&mut self, key: FailKey, t: f64) {
        let index = match self.index.get(&key) {
            Some(&index) => index,
            None if self.groups.len() >= MAX_GROUPS => {
                self.overflow += 1;
                return;
            }
            None => {
                let counts = FailCounts {
                    count: 0,
                    recent: 0,
                    first_seen: t,
                    last_seen: t,
                };
                self.index.insert(key.clone(), self.groups.len());
                self.groups.push((key, counts));
                self.groups.len() - 1
            }
        };
        let counts = &mut self.groups[index].1;
        counts.count += 1;
        counts.recent += 1;
        counts.first_seen = counts.first_seen.min(t);
        counts.last_seen = counts.last_seen.max(t);
    }

    /// Every group, in the order first seen.
    pub fn groups(&self) -> &[(FailKey, FailCounts)] {
        &self.groups
    }

    /// A group's failures per second over the newest interval; None before
    /// two samples.
    pub fn rate(&self, counts: &FailCounts) -> Option<f64> {
        (self.interval_s > 0.0).then(|| counts.recent as f64 / self.interval_s)
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.overflow == 0
    }
}

fn dns_key(result: &DnsResult) -> FailKey {
    FailKey {
        kind: FailKind::Dns(result.outcome),
        pid: None,
        comm: "-".to_string(),
        container: None,
        destination: result.server.clone(),
        accepted: false,
        question: Some(format!("{} {}", result.name, result.qtype)),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::closed::ClosedSample;
    use crate::model::dns::DnsSample;
    use crate::model::sockets::{ProcessName, SocketUser};

    /// A connection of `curl` (pid `pid`) to `peer` that ended so.
    pub(crate) fn conn(t: f64, ending: Ending, pid: u32, peer: &str) -> ClosedConn {
        ClosedConn {
            t,
            cookie: 1,
            local: "198.18.0.1:40000".parse().unwrap(),
            peer: peer.parse().unwrap(),
            users: vec![SocketUser {
                process: ProcessName::from("curl"),
                pid,
                fd: 3,
            }],
            cgroup: None,
            cgroup_container: None,
            accepted: false,
            bytes_sent: Some(0),
            bytes_received: Some(0),
            duration_s: None,
            rtt_us: 0,
            retrans: 0,
            ending,
        }
    }

    pub(crate) fn sample(mono: f64, conns: Vec<ClosedConn>, dns: Vec<DnsResult>) -> Sample {
        Sample {
            mono,
            t: 1000.0 + mono,
            closed: Some(ClosedSample {
                conns,
                ..ClosedSample::default()
            }),
            dns: Some(DnsSample {
                passive: dns,
                ..DnsSample::default()
            }),
            ..Sample::default()
        }
    }

    fn query(t: f64, name: &str, outcome: Outcome) -> DnsResult {
        DnsResult {
            t,
            server: "198.18.0.53:53".into(),
            name: name.into(),
            qtype: "A".into(),
            latency_ms: None,
            outcome,
            answers: Vec::new(),
        }
    }

    #[test]
    fn failures_are_grouped_by_kind_process_and_destination_with_rates() {
        let first = sample(
            0.0,
            vec![
                conn(1000.1, Ending::Refused, 7, "198.18.0.2:81"),
                conn(1000.2, Ending::Refused, 7, "198.18.0.2:81"),
                conn(1000.3, Ending::Fin, 7, "198.18.0.2:80"),
                conn(1000.4, Ending::RstSent, 7, "198.18.0.2:80"),
                conn(1000.5, Ending::Unreachable, 8, "198.18.0.9:80"),
            ],
            vec![
                query(1000.6, "nosuch.test", Outcome::Nxdomain),
                query(1000.7, "ok.test", Outcome::Ok),
            ],
        );
        let second = sample(
            2.0,
            vec![
                conn(1001.5, Ending::Refused, 7, "198.18.0.2:81"),
                conn(1001.6, Ending::RstReceived, 7, "198.18.0.2:80"),
                conn(1001.7, Ending::SynTimeout, 7, "198.18.0.2:82"),
            ],
            vec![query(1001.8, "slow.test", Outcome::Timeout)],
        );
        let failures = Failures::of([&first, &second]);
        let find = |kind: FailKind, destination: &str| {
            failures
                .groups()
                .iter()
                .find(|(k, _)| k.kind == kind && k.destination == destination)
                .map(|(_, c)| *c)
        };
        let refused = find(FailKind::Refused, "198.18.0.2:81").unwrap();
        assert_eq!((refused.count, refused.recent), (3, 1));
        assert_eq!((refused.first_seen, refused.last_seen), (1000.1, 1001.5));
        assert_eq!(failures.rate(&refused), Some(0.5));
        assert_eq!(
            find(FailKind::Unreachable, "198.18.0.9:80").unwrap().count,
            1
        );
        assert_eq!(find(FailKind::Reset, "198.18.0.2:80").unwrap().count, 1);
        assert_eq!(
            find(FailKind::SynTimeout, "198.18.0.2:82").unwrap().count,
            1
        );
        let nxdomain = find(FailKind::Dns(Outcome::Nxdomain), "198.18.0.53:53").unwrap();
        assert_eq!(nxdomain.count, 1);
        let timeout = failures
            .groups()
            .iter()
            .find(|(k, _)| k.kind.name() == "dns-no-answer")
            .unwrap();
        assert_eq!(timeout.0.question.as_deref(), Some("slow.test A"));
        // FIN and this host's own abort are no failures; neither is an
        // answered query.
        assert_eq!(failures.groups().len(), 6);
    }

    #[test]
    fn groups_beyond_the_bound_are_counted_not_kept() {
        let conns = (0..MAX_GROUPS + 10)
            .map(|i| {
                let peer = format!("198.18.{}.{}:80", i / 250, i % 250);
                conn(1000.0, Ending::Refused, 7, &peer)
            })
            .collect();
        let failures = Failures::of([&sample(0.0, conns, Vec::new())]);
        assert_eq!(failures.groups().len(), MAX_GROUPS);
        assert_eq!(failures.overflow, 10);
        assert_eq!(failures.rate(&failures.groups()[0].1), None);
    }
}
