//! The load launcher: iperf3-, wrk-, hping3- and pktgen-style load, run
//! headless by `netlens load ...` or from the Load tab, on its own threads.
//!
//! Every run is bounded: a duration (at most [`MAX_DURATION`]) or a count,
//! and a [`Stop`] flag ends it at once. It only ever sends to the address
//! it was given: no redirects, no discovery, no broadcast.

pub mod format;
pub mod http;
pub mod http_parse;
pub mod iperf3;
pub mod pktgen;
pub mod probe;
pub mod serve;
pub mod tcp;
pub mod udp;

use anyhow::{Context, Result, bail};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The longest run netlens starts.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);

/// A shared flag that ends a run at once; runs poll it at least every 100 ms.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Sleeps until `until` in short slices; false when stopped first.
    pub fn sleep_until(&self, until: Instant) -> bool {
        loop {
            if self.is_stopped() {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            std::thread::sleep((until - now).min(Duration::from_millis(50)));
        }
    }
}

/// One interval report of a running load.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Seconds since the run started, at the start and end of the interval.
    pub start: f64,
    pub end: f64,
    /// The headline rate the Load tab charts (bits/s, requests/s, ms...).
    pub value: f64,
    /// What `--json` prints for it (one line).
    pub json: serde_json::Value,
    /// What the text output prints for it (one line).
    pub text: String,
}

/// Where a run sends its interval reports.
pub type Report<'a> = &'a (dyn Fn(Interval) + Sync);

/// The result of a finished run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The summary object (`--json`'s final line).
    pub json: serde_json::Value,
    /// The summary as the text output prints it (several lines).
    pub text: String,
    /// One short line for the list of past runs.
    pub headline: String,
}

/// What to run; built from the command line or the Load tab's form.
#[derive(Debug, Clone)]
pub enum Spec {
    Tcp(tcp::TcpSpec),
    Udp(udp::UdpSpec),
    Http(http::HttpSpec),
    Pktgen(pktgen::PktgenSpec),
    Probe(probe::ProbeSpec),
}

impl Spec {
    /// Runs to completion (or until `stop`), reporting each interval.
    pub fn run(&self, stop: &Stop, report: Report) -> Result<Outcome> {
        match self {
            Spec::Tcp(spec) => tcp::run(spec, stop, report),
            Spec::Udp(spec) => udp::run(spec, stop, report),
            Spec::Http(spec) => http::run(spec, stop, report),
            Spec::Pktgen(spec) => pktgen::run(spec, stop, report),
            Spec::Probe(spec) => probe::run(spec, stop, report),
        }
    }

    /// The addresses this run sends to (for the loopback check).
    pub fn destination(&self) -> Option<std::net::IpAddr> {
        match self {
            Spec::Tcp(spec) => Some(spec.to.ip()),
            Spec::Udp(spec) => Some(spec.to.ip()),
            Spec::Http(spec) => Some(spec.addr.ip()),
            Spec::Pktgen(spec) => Some(spec.dst),
            Spec::Probe(spec) => Some(spec.to.ip()),
        }
    }

    /// How long the run lasts at most, for the progress gauge.
    pub fn planned(&self) -> Duration {
        match self {
            Spec::Tcp(spec) => spec.duration,
            Spec::Udp(spec) => spec.duration,
            Spec::Http(spec) => spec.duration,
            Spec::Pktgen(spec) => spec.duration,
            Spec::Probe(spec) => spec.every * spec.count,
        }
    }
}

/// Resolves "HOST:PORT" to the one address the run will use (IPv4 first).
pub fn resolve(text: &str) -> Result<SocketAddr> {
    let text = text.trim();
    if text.is_empty() {
        bail!("no target given: use HOST:PORT, e.g. 127.0.0.1:5201");
    }
    if !text.contains(':') {
        bail!("'{text}' has no port: use HOST:PORT, e.g. 127.0.0.1:5201");
    }
    // An address literal never goes to the resolver: a malformed one
    // ("[::1", "256.1.1.1:80") would otherwise become a DNS query.
    let host = &text[..text.rfind(':').unwrap_or(0)];
    let literal = text.starts_with('[')
        || text.matches(':').count() > 1
        || host.chars().all(|c| c.is_ascii_digit() || c == '.');
    if literal {
        let addr: SocketAddr = text.parse().map_err(|_| {
            anyhow::anyhow!(
                "'{text}' is not a valid address: use IPV4:PORT or [IPV6]:PORT, e.g. 127.0.0.1:5201"
            )
        })?;
        return check_target(text, addr);
    }
    let addrs: Vec<SocketAddr> = text
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve '{text}' (use HOST:PORT)"))?
        .collect();
    let addr = addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .with_context(|| format!("'{text}' resolves to no address"))?;
    check_target(text, addr)
}

/// A host address and a port one can send to.
fn check_target(text: &str, addr: SocketAddr) -> Result<SocketAddr> {
    if addr.port() == 0 {
        bail!("'{text}': port 0 is not a port to send to");
    }
    if addr.ip().is_unspecified() || addr.ip().is_multicast() {
        bail!("'{text}' is not a host address to send to");
    }
    if let std::net::IpAddr::V4(v4) = addr.ip()
        && v4.is_broadcast()
    {
        bail!("'{text}' is a broadcast address; netlens sends only to one host");
    }
    Ok(addr)
}

/// Checks a run's duration against [`MAX_DURATION`].
pub fn check_duration(duration: Duration) -> Result<Duration> {
    if duration > MAX_DURATION {
        bail!(
            "a run lasts at most {}s; {}s is too long",
            MAX_DURATION.as_secs(),
            duration.as_secs()
        );
    }
    if duration.is_zero() {
        bail!("the duration must be greater than zero");
    }
    Ok(duration)
}

/// Seconds as f64 with a floor, so a rate never divides by zero.
pub fn seconds(elapsed: Duration) -> f64 {
    elapsed.as_secs_f64().max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_needs_a_port_and_a_host() {
        assert!(resolve("127.0.0.1:5201").is_ok());
        assert_eq!(
            resolve("localhost:80").unwrap().ip().to_string(),
            "127.0.0.1"
        );
        for bad in [
            "",
            "127.0.0.1",
            "127.0.0.1:0",
            "0.0.0.0:80",
            "255.255.255.255:9",
            "224.0.0.1:9",
            "[::1:80",
            "198.18.0.1:99999",
        ] {
            assert!(resolve(bad).is_err(), "{bad}");
        }
        // Malformed literals are refused as such, never looked up.
        for bad in ["[::1", "[::1:80", "256.1.1.1:80", "198.18.0:80", "::1:80"] {
            let error = resolve(bad).unwrap_err().to_string();
            assert!(error.contains("not a valid address"), "{bad}: {error}");
        }
        assert_eq!(resolve("[::1]:80").unwrap().to_string(), "[::1]:80");
    }

    #[test]
    fn durations_are_capped() {
        assert!(check_duration(Duration::from_secs(10)).is_ok());
        assert!(check_duration(Duration::from_secs(3601)).is_err());
        assert!(check_duration(Duration::ZERO).is_err());
    }

    #[test]
    fn stop_ends_a_sleep() {
        let stop = Stop::new();
        stop.stop();
        let start = Instant::now();
        assert!(!stop.sleep_until(start + Duration::from_secs(10)));
        assert!(start.elapsed() < Duration::from_secs(1));
    }
}
