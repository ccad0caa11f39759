//! Response times per server address, summed over its connections as the
//! capture sees their exchanges (`exchanges`): what a sample carries
//! (`model::responses`), kept cumulative and bounded.

use super::exchanges::Exchange;
use crate::model::responses::{ResponseSample, SlowRequest, bucket_of};
use foldhash::{HashMap, HashMapExt};

/// Servers tracked at most; past it new servers are not (`untracked`).
pub const SERVERS_MAX: usize = 4096;
/// Servers a sample carries at most, the most answered first.
pub const SAMPLE_SERVERS: usize = 64;
/// A slow request stays the example this long unless a slower one comes.
const SLOWEST_KEPT_S: f64 = 10.0;

#[derive(Debug, Default)]
pub struct Responses {
    servers: HashMap<String, ResponseSample>,
    /// Exchanges of servers past `SERVERS_MAX`.
    pub untracked: u64,
}

impl Responses {
    pub fn new() -> Self {
        Self {
            servers: HashMap::with_capacity(16),
            untracked: 0,
        }
    }

    /// Counts one answered request of `server` ("addr:port"); `local`:
    /// the capture is at the server (`Handshake::at_server`); `rtt_ms`,
    /// the connection's handshake round trip, comes with its first.
    pub fn add(&mut self, server: &str, x: &Exchange, local: bool, rtt_ms: Option<f64>) {
        if !self.servers.contains_key(server) && self.servers.len() >= SERVERS_MAX {
            self.untracked += 1;
            return;
        }
        let s = self
            .servers
            .entry(server.to_string())
            .or_insert_with(|| ResponseSample {
                server: server.to_string(),
                ..Default::default()
            });
        s.local = local;
        s.answered += 1;
        s.sum_ms += x.ms;
        let bucket = bucket_of(x.ms);
        match s.buckets.binary_search_by_key(&bucket, |&(b, ..)| b) {
            Ok(i) => {
                s.buckets[i].1 += 1;
                s.buckets[i].2 += x.ms;
            }
            Err(i) => s.buckets.insert(i, (bucket, 1, x.ms)),
        }
        if let Some(rtt) = rtt_ms {
            s.rtt_count += 1;
            s.rtt_sum_ms += rtt;
        }
        let status = x.http.as_ref().and_then(|h| h.status);
        if let Some(code) = status {
            match s.statuses.binary_search_by_key(&code, |&(c, _)| c) {
                Ok(i) => s.statuses[i].1 += 1,
                Err(i) => s.statuses.insert(i, (code, 1)),
            }
        }
        let replace = s
            .slowest
            .as_ref()
            .is_none_or(|old| x.ms >= old.ms || x.t - old.t > SLOWEST_KEPT_S);
        if replace {
            s.slowest = Some(SlowRequest {
                t: x.t,
                ms: x.ms,
                request: x.http.as_ref().map(|h| format!("{} {}", h.method, h.path)),
                status,
            });
        }
    }

    /// The servers a sample carries: the most answered first.
    pub fn sample(&self) -> Vec<ResponseSample> {
        let mut all: Vec<&ResponseSample> = self.servers.values().collect();
        all.sort_by(|a, b| b.answered.cmp(&a.answered).then(a.server.cmp(&b.server)));
        all.into_iter().take(SAMPLE_SERVERS).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(t: f64, ms: f64) -> Exchange {
        Exchange { t, ms, http: None }
    }

    #[test]
    fn servers_are_bounded_and_the_slowest_recent_request_is_kept() {
        let mut r = Responses::new();
        r.add("198.18.0.1:80", &exchange(1.0, 300.0), true, Some(0.1));
        r.add("198.18.0.1:80", &exchange(2.0, 5.0), true, None);
        let s = &r.sample()[0];
        assert_eq!((s.answered, s.rtt_count), (2, 1));
        assert_eq!(s.slowest.as_ref().unwrap().ms, 300.0);
        // Ten seconds on, a faster one is the example.
        r.add("198.18.0.1:80", &exchange(12.5, 7.0), true, None);
        assert_eq!(r.sample()[0].slowest.as_ref().unwrap().ms, 7.0);
        for port in 0..SERVERS_MAX {
            r.add(
                &format!("198.18.1.1:{port}"),
                &exchange(3.0, 1.0),
                true,
                None,
            );
        }
        assert_eq!(r.untracked, 1);
        assert_eq!(r.sample().len(), SAMPLE_SERVERS);
        assert_eq!(r.sample()[0].server, "198.18.0.1:80");
    }
}
