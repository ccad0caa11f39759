//! Servers' response times as a sample carries them: per server address,
//! cumulative counts in log-scale buckets (as every counter here is
//! cumulative: a window is two samples' difference), the handshake's round
//! trip beside them, HTTP statuses where the payload was plain, and the
//! slowest recent request. `packet::responses` fills it from the capture.

use crate::model::socket_table::SocketTable;
use serde::{Deserialize, Serialize};

/// Buckets per doubling: a bucket spans 2^(1/8) = 9%, so the value
/// reported (its geometric middle) is within 4.5% of every value in it.
pub const BUCKETS_PER_OCTAVE: f64 = 8.0;
/// Bucket 0 holds every time under this; bucket k starts at
/// FLOOR_MS * 2^(k/8).
pub const FLOOR_MS: f64 = 0.01;
/// Buckets: 0.01 ms to about 11 minutes.
pub const BUCKETS: u16 = 8 * 26;

/// The bucket of a time in milliseconds.
pub fn bucket_of(ms: f64) -> u16 {
    if ms.is_nan() || ms <= FLOOR_MS {
        return 0;
    }
    let k = ((ms / FLOOR_MS).log2() * BUCKETS_PER_OCTAVE).floor() as i64 + 1;
    k.clamp(0, i64::from(BUCKETS - 1)) as u16
}

/// The time a bucket stands for: its geometric middle.
pub fn bucket_ms(bucket: u16) -> f64 {
    if bucket == 0 {
        return FLOOR_MS / 2.0;
    }
    FLOOR_MS * ((f64::from(bucket) - 0.5) / BUCKETS_PER_OCTAVE).exp2()
}

/// One server's exchanges since the capture began.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ResponseSample {
    /// The server's address and port, "198.18.0.1:8080".
    pub server: String,
    /// The server is on this host (or its namespace): its times are its
    /// own; else each holds a network round trip too.
    pub local: bool,
    /// Requests answered.
    pub answered: u64,
    /// Sum of the response times, milliseconds.
    pub sum_ms: f64,
    /// (bucket, requests, their sum in ms) for the buckets not empty, by
    /// bucket: a percentile is the mean of its bucket's requests, exact
    /// when they are alike and never off by more than the bucket's 9%.
    pub buckets: Vec<(u16, u64, f64)>,
    /// Handshake round trips of its connections: count and sum (ms).
    pub rtt_count: u64,
    pub rtt_sum_ms: f64,
    /// Plain HTTP answers by status, by status.
    pub statuses: Vec<(u16, u64)>,
    /// The slowest request of the last few seconds.
    pub slowest: Option<SlowRequest>,
}

/// A slow request, for the evidence.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SlowRequest {
    /// When its answer began (wall clock).
    pub t: f64,
    pub ms: f64,
    /// "GET /path" and the status, for plain HTTP.
    pub request: Option<String>,
    pub status: Option<u16>,
}

/// One server's requests between two samples, summed up.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseWindow {
    pub answered: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The mean handshake round trip of the connections begun in the
    /// window, else of all of them.
    pub rtt_ms: Option<f64>,
    /// The server's own time at the middle: the response time, less one
    /// round trip when the capture is at the client.
    pub server_p50_ms: f64,
    /// The server is on this host: a listener here owns its port, or the
    /// handshakes' timing says the capture is at the server.
    pub local: bool,
}

impl ResponseSample {
    /// The requests answered since `before` (the same server in an
    /// earlier sample; None: since the capture began). None when none.
    /// `here`: a listener of this host owns the server's address.
    pub fn window(&self, before: Option<&ResponseSample>, here: bool) -> Option<ResponseWindow> {
        let local = self.local || here;
        let mut counts: Vec<(u16, u64, f64)> = self.buckets.clone();
        if let Some(before) = before {
            for (bucket, n, sum) in &mut counts {
                if let Some((_, m, earlier)) = before.buckets.iter().find(|(b, ..)| b == bucket) {
                    *n = n.saturating_sub(*m);
                    *sum -= earlier;
                }
            }
        }
        let answered: u64 = counts.iter().map(|(_, n, _)| n).sum();
        if answered == 0 {
            return None;
        }
        let quantile = |q: f64| {
            let rank = ((answered as f64) * q).ceil().max(1.0) as u64;
            let mut seen = 0;
            for &(bucket, n, sum) in &counts {
                seen += n;
                if seen >= rank {
                    let mean = sum / n as f64;
                    // Float drift from the subtraction stays in the bucket.
                    let (low, high) = (bucket_ms(bucket) / 1.05, bucket_ms(bucket) * 1.05);
                    return if mean.is_finite() {
                        mean.clamp(low, high)
                    } else {
                        bucket_ms(bucket)
                    };
                }
            }
            0.0
        };
        let sum = self.sum_ms - before.map_or(0.0, |b| b.sum_ms);
        let rtts = self.rtt_count - before.map_or(0, |b| b.rtt_count.min(self.rtt_count));
        let rtt_ms = if rtts > 0 {
            Some((self.rtt_sum_ms - before.map_or(0.0, |b| b.rtt_sum_ms)) / rtts as f64)
        } else {
            (self.rtt_count > 0).then(|| self.rtt_sum_ms / self.rtt_count as f64)
        };
        let p50_ms = quantile(0.50);
        let server_p50_ms = match (local, rtt_ms) {
            (false, Some(rtt)) => (p50_ms - rtt).max(0.0),
            _ => p50_ms,
        };
        Some(ResponseWindow {
            answered,
            mean_ms: (sum / answered as f64).max(0.0),
            p50_ms,
            p90_ms: quantile(0.90),
            p99_ms: quantile(0.99),
            max_ms: quantile(1.0),
            rtt_ms,
            server_p50_ms,
            local,
        })
    }
}

/// Each server's window between two samples' lists, busiest first, with
/// the process listening there (`sockets`: the newer sample's).
pub fn windows<'a>(
    now: &'a [ResponseSample],
    before: Option<&[ResponseSample]>,
    sockets: &'a SocketTable,
) -> Vec<(
    &'a ResponseSample,
    ResponseWindow,
    Option<&'a super::sockets::SocketUser>,
)> {
    let mut out: Vec<_> = now
        .iter()
        .filter_map(|s| {
            let earlier = before.and_then(|b| b.iter().find(|p| p.server == s.server));
            let owner = server_owner(sockets, &s.server);
            Some((s, s.window(earlier, owner.is_some())?, owner))
        })
        .collect();
    out.sort_by_key(|(_, w, _)| std::cmp::Reverse(w.answered));
    out
}

/// The process listening where `server` ("addr:port") answers: a TCP
/// listener on that port bound to that address or to any.
pub fn server_owner<'a>(
    sockets: &'a SocketTable,
    server: &str,
) -> Option<&'a super::sockets::SocketUser> {
    use super::sockets::Proto;
    const LISTEN: u8 = 10;
    let server: std::net::SocketAddr = server.parse().ok()?;
    let ip = server.ip().to_canonical();
    sockets
        .iter()
        .filter(|s| s.proto == Proto::Tcp && s.state == LISTEN)
        .filter(|s| s.local.port() == server.port())
        .filter(|s| s.local.ip().is_unspecified() || s.local.ip().to_canonical() == ip)
        .find_map(|s| s.users.first())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(times_ms: &[f64]) -> ResponseSample {
        let mut s = ResponseSample {
            server: "198.18.0.1:80".into(),
            local: true,
            ..Default::default()
        };
        for &ms in times_ms {
            let b = bucket_of(ms);
            match s.buckets.iter_mut().find(|(k, ..)| *k == b) {
                Some((_, n, sum)) => {
                    *n += 1;
                    *sum += ms;
                }
                None => s.buckets.push((b, 1, ms)),
            }
            s.answered += 1;
            s.sum_ms += ms;
        }
        s.buckets.sort_by_key(|&(b, ..)| b);
        s
    }

    #[test]
    fn a_bucket_stands_within_five_percent_of_its_values() {
        for ms in [0.02, 0.3, 1.0, 7.5, 42.0, 100.0, 250.0, 999.0, 60_000.0] {
            let shown = bucket_ms(bucket_of(ms));
            assert!((shown / ms - 1.0).abs() < 0.045, "{ms} shows as {shown}");
        }
        assert_eq!(bucket_of(0.0), 0);
        assert_eq!(bucket_of(f64::NAN), 0);
        assert_eq!(bucket_of(1e12), BUCKETS - 1);
    }

    #[test]
    fn percentiles_come_from_the_window_only() {
        let before = sample(&[5.0; 100]);
        let mut times = vec![5.0; 100];
        times.extend([100.0; 90]);
        times.extend([400.0; 10]);
        let now = sample(&times);
        let w = now.window(Some(&before), false).unwrap();
        assert_eq!(w.answered, 100);
        // Alike requests: their bucket's mean is exact.
        assert!((w.p50_ms - 100.0).abs() < 1e-6, "{w:?}");
        assert!((w.p90_ms - 100.0).abs() < 1e-6, "{w:?}");
        assert!((w.p99_ms - 400.0).abs() < 1e-6, "{w:?}");
        // Spread within a bucket: within its 9%.
        let spread = sample(&[95.0, 98.0, 101.0, 103.0]);
        let p50 = spread.window(None, false).unwrap().p50_ms;
        assert!((p50 / 100.0 - 1.0).abs() < 0.09, "{p50}");
        assert!((w.mean_ms - 130.0).abs() < 1e-9, "{w:?}");
        assert_eq!(now.window(Some(&now), false), None);
    }

    #[test]
    fn at_the_client_the_server_time_leaves_the_round_trip_out() {
        let mut s = sample(&[130.0; 10]);
        s.local = false;
        s.rtt_count = 2;
        s.rtt_sum_ms = 60.0;
        let w = s.window(None, false).unwrap();
        assert_eq!(w.rtt_ms, Some(30.0));
        assert!((w.server_p50_ms - 100.0).abs() < 1e-6, "{w:?}");
    }
}
