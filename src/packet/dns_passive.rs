//! Passive DNS: every query seen by the capture is matched to its response
//! by client, server, id and question; latency is the time between the two
//! packets' capture timestamps. A query without a response becomes a
//! timeout once the client's timeout has passed. DNS over UDP port 53.

use super::dns_wire as wire;
use crate::model::dns::{DnsResult, Outcome};
use crate::packet::decode::Summary;
use foldhash::{HashMap, HashMapExt};
use std::net::SocketAddr;

/// Queries waiting for a response at most (a flood must not grow memory).
pub const MAX_PENDING: usize = 10_000;
/// Settled results kept until taken at most; the rest are counted.
pub const MAX_DONE: usize = 2_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    client: SocketAddr,
    server: SocketAddr,
    id: u16,
    name: String,
    qtype: String,
}

#[derive(Debug)]
pub struct Matcher {
    pending: HashMap<Key, f64>,
    done: Vec<DnsResult>,
    dropped: u64,
    timeout_s: f64,
}

impl Matcher {
    pub fn new(timeout_s: f64) -> Self {
        Self {
            pending: HashMap::new(),
            done: Vec::new(),
            dropped: 0,
            timeout_s,
        }
    }

    pub fn set_timeout(&mut self, timeout_s: f64) {
        self.timeout_s = timeout_s;
    }

    /// Looks at one captured packet (`ts`: capture time, Unix seconds).
    pub fn feed(&mut self, s: &Summary, data: &[u8], ts: f64) {
        if s.proto != 17 || !(s.dport == 53 || s.sport == 53) {
            return;
        }
        let Some(tl) = s.tl else { return };
        let start = tl + 8;
        let end = (start + s.payload_len as usize).min(data.len());
        let Some(payload) = data.get(start..end) else {
            return;
        };
        let Some(message) = wire::parse(payload) else {
            return;
        };
        let src = SocketAddr::new(s.src_ip(), s.sport);
        let dst = SocketAddr::new(s.dst_ip(), s.dport);
        if !message.response && s.dport == 53 {
            let key = Key {
                client: src,
                server: dst,
                id: message.id,
                name: message.name,
                qtype: message.qtype,
            };
            if self.pending.len() >= MAX_PENDING && !self.pending.contains_key(&key) {
                self.dropped += 1;
                return;
            }
            // A retransmission keeps the first time: the client waited since.
            self.pending.entry(key).or_insert(ts);
        } else if message.response && s.sport == 53 {
            let key = Key {
                client: dst,
                server: src,
                id: message.id,
                name: message.name,
                qtype: message.qtype,
            };
            let Some(sent) = self.pending.remove(&key) else {
                return; // the query was before capture began, or filtered
            };
            let result = DnsResult {
                t: sent,
                server: key.server.to_string(),
                name: key.name,
                qtype: key.qtype,
                latency_ms: Some(((ts - sent) * 1000.0).max(0.0)),
                outcome: Outcome::from_rcode(message.rcode),
                answers: message.answers,
            };
            self.push(result);
        }
    }

    /// Turns queries older than the timeout into timeouts. A query sent
    /// at or before `lost_after` (when the capture last found packets
    /// dropped) may have lost its answer to the drop: it is counted as not
    /// carried, never as a timeout the server did not cause.
    pub fn expire(&mut self, now: f64, lost_after: f64) {
        let timeout = self.timeout_s;
        let expired: Vec<Key> = self
            .pending
            .iter()
            .filter(|(_, sent)| now - **sent >= timeout)
            .map(|(key, _)| key.clone())
            .collect();
        for key in expired {
            let Some(sent) = self.pending.remove(&key) else {
                continue;
            };
            if sent <= lost_after {
                self.dropped += 1;
                continue;
            }
            self.push(DnsResult {
                t: sent,
                server: key.server.to_string(),
                name: key.name,
                qtype: key.qtype,
                latency_ms: None,
                outcome: Outcome::Timeout,
                answers: Vec::new(),
            });
        }
    }

    fn push(&mut self, result: DnsResult) {
        if self.done.len() < MAX_DONE {
            self.done.push(result);
        } else {
            self.dropped += 1;
        }
    }

    /// The results settled since the last call, and how many were dropped.
    pub fn take(&mut self) -> (Vec<DnsResult>, u64) {
        (
            std::mem::take(&mut self.done),
            std::mem::take(&mut self.dropped),
        )
    }

    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
/// A raw IPv4/UDP packet (linktype 101) carrying `payload`.
pub(crate) fn packet(
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    payload: &[u8],
) -> Vec<u8> {
    let total = 20 + 8 + payload.len();
    let mut p = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0,
        0,
        64,
        17,
        0,
        0,
    ];
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(&sport.to_be_bytes());
    p.extend_from_slice(&dport.to_be_bytes());
    p.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(payload);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::decode::summarize;

    fn feed(m: &mut Matcher, p: &[u8], ts: f64) {
        m.feed(&summarize(101, p, p.len() as u32), p, ts);
    }

    fn response(query: &[u8], rcode: u8) -> Vec<u8> {
        let mut r = query.to_vec();
        r[2] |= 0x80; // QR
        r[3] = (r[3] & 0xf0) | rcode;
        r
    }

    const CLIENT: [u8; 4] = [198, 18, 0, 1];
    const SERVER: [u8; 4] = [198, 18, 0, 53];

    #[test]
    fn matches_by_id_and_question_and_times_out() {
        let mut m = Matcher::new(5.0);
        let q1 = wire::build_query(7, "fast.test", 1).unwrap();
        let q2 = wire::build_query(8, "9.0.18.198.in-addr.arpa", 12).unwrap();
        let q3 = wire::build_query(9, "gone.test", 1).unwrap();
        feed(&mut m, &packet(CLIENT, 40000, SERVER, 53, &q1), 100.0);
        feed(&mut m, &packet(CLIENT, 40001, SERVER, 53, &q2), 100.0);
        feed(&mut m, &packet(CLIENT, 40002, SERVER, 53, &q3), 100.5);
        // A response with the wrong id and one from the wrong port: ignored.
        let mut wrong = response(&q1, 0);
        wrong[1] ^= 1;
        feed(&mut m, &packet(SERVER, 53, CLIENT, 40000, &wrong), 100.01);
        feed(
            &mut m,
            &packet(SERVER, 53, CLIENT, 40009, &response(&q1, 0)),
            100.01,
        );
        feed(
            &mut m,
            &packet(SERVER, 53, CLIENT, 40000, &response(&q1, 0)),
            100.02,
        );
        feed(
            &mut m,
            &packet(SERVER, 53, CLIENT, 40002, &response(&q3, 3)),
            100.8,
        );
        let (done, dropped) = m.take();
        assert_eq!(dropped, 0);
        assert_eq!(done.len(), 2);
        assert_eq!(done[0].name, "fast.test");
        assert_eq!(done[0].server, "198.18.0.53:53");
        assert_eq!(done[0].outcome, Outcome::Ok);
        assert!((done[0].latency_ms.unwrap() - 20.0).abs() < 1e-6);
        assert_eq!(done[1].outcome, Outcome::Nxdomain);
        assert!((done[1].latency_ms.unwrap() - 300.0).abs() < 1e-6);
        m.expire(104.9, 0.0);
        assert!(m.take().0.is_empty(), "not yet the client's timeout");
        m.expire(105.0, 0.0);
        let (done, _) = m.take();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].qtype, "PTR");
        assert_eq!(done[0].name, "9.0.18.198.in-addr.arpa");
        assert_eq!(done[0].outcome, Outcome::Timeout);
        assert_eq!(done[0].latency_ms, None);
        assert_eq!(m.pending(), 0);
    }
}
