//! The active prober (opt-in: only with --dns-probe or the tab's key). One
//! thread per server, in the watched namespace, each sending one query at a
//! time (so each server is measured on its own, never queued behind
//! another), every probe once per interval. No cache, no retries, no system
//! configuration: a fresh UDP socket per query to exactly the server given.

use super::{DnsResult, Outcome, ProbeSpec};
use crate::collect::netns::{self, Target};
use crate::packet::dns_wire as wire;
use anyhow::{Context, Result};
use std::hash::{BuildHasher, Hasher};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Results waiting to be taken at most (no consumer must not mean no bound).
const MAX_PENDING: usize = 10_000;
/// Queries remembered as sent, to tell our own apart on the wire.
const SENT_KEPT: usize = 4_096;
/// How far apart (seconds) the probe's clock and the capture's timestamp of
/// the same query may be.
const SAME_QUERY_S: f64 = 1.0;

/// How often a waiting thread looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);

struct Shared {
    specs: Vec<ProbeSpec>,
    results: Vec<DnsResult>,
    /// The queries sent lately: (time, server, name, qtype).
    sent: std::collections::VecDeque<(f64, String, String, String)>,
}

pub struct Prober {
    shared: Arc<Mutex<Shared>>,
    servers: Vec<SocketAddr>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl Prober {
    /// Starts one thread per server in `target`'s namespace. Probes may be
    /// empty: `add` starts them later.
    pub fn spawn(
        target: &Target,
        servers: Vec<SocketAddr>,
        specs: Vec<ProbeSpec>,
        interval: Duration,
        timeout: Duration,
    ) -> Result<Self> {
        let namespace = target.open()?.map(Arc::new);
        let shared = Arc::new(Mutex::new(Shared {
            specs,
            results: Vec::new(),
            sent: std::collections::VecDeque::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for server in &servers {
            let (server, shared, stop) = (*server, Arc::clone(&shared), Arc::clone(&stop));
            let namespace = namespace.clone();
            let label = target.label().to_string();
            let thread = std::thread::Builder::new()
                .name("dns-probe".into())
                .spawn(move || {
                    if let Some(file) = namespace.as_deref()
                        && let Err(error) = netns::enter(file, &label)
                    {
                        eprintln!("netlens: DNS prober: {error:#}");
                        return;
                    }
                    run(server, &shared, &stop, interval, timeout);
                })
                .context("cannot start a DNS prober thread")?;
            threads.push(thread);
        }
        Ok(Self {
            shared,
            servers,
            stop,
            threads,
        })
    }

    /// Adds a probe from the next round on (a duplicate is ignored).
    pub fn add(&self, spec: ProbeSpec) {
        let mut shared = lock(&self.shared);
        if !shared.specs.contains(&spec) {
            shared.specs.push(spec);
        }
    }

    /// The results completed since the last call.
    pub fn take(&self) -> Vec<DnsResult> {
        std::mem::take(&mut lock(&self.shared).results)
    }

    /// Whether a query seen on the wire is one of our probes (same server
    /// and question, sent within a second of it): the DNS tab counts it once,
    /// as the probe, not a second time as traffic.
    pub fn sent(&self, seen: &DnsResult) -> bool {
        lock(&self.shared)
            .sent
            .iter()
            .any(|(t, server, name, qtype)| {
                (t - seen.t).abs() < SAME_QUERY_S
                    && *server == seen.server
                    && *name == seen.name
                    && *qtype == seen.qtype
            })
    }

    pub fn specs(&self) -> Vec<String> {
        lock(&self.shared)
            .specs
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    pub fn servers(&self) -> &[SocketAddr] {
        &self.servers
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn run(
    server: SocketAddr,
    shared: &Mutex<Shared>,
    stop: &AtomicBool,
    interval: Duration,
    timeout: Duration,
) {
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let specs = lock(shared).specs.clone();
        for spec in &specs {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            {
                let mut shared = lock(shared);
                if shared.sent.len() >= SENT_KEPT {
                    shared.sent.pop_front();
                }
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64());
                let question = (spec.name.clone(), spec.qtype.label().to_string());
                shared
                    .sent
                    .push_back((now, server.to_string(), question.0, question.1));
            }
            let result = query(server, spec, timeout, random_id(), stop);
            let mut shared = lock(shared);
            if shared.results.len() < MAX_PENDING {
                shared.results.push(result);
            }
        }
        // On the interval's schedule; a round longer than the interval (a
        // timeout) is followed at once by the next, never by a burst.
        next += interval;
        let now = Instant::now();
        if next < now {
            next = now;
        }
        while Instant::now() < next && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(STOP_CHECK.min(next - Instant::now()));
        }
    }
}

/// A query id nobody can guess from the last one.
pub fn random_id() -> u16 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish() as u16
}

/// Sends one query to `server` and waits for its answer up to `timeout`.
pub fn query(
    server: SocketAddr,
    spec: &ProbeSpec,
    timeout: Duration,
    id: u16,
    stop: &AtomicBool,
) -> DnsResult {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut result = DnsResult {
        t,
        server: server.to_string(),
        name: spec.name.clone(),
        qtype: spec.qtype.label().to_string(),
        latency_ms: None,
        outcome: Outcome::Error,
        answers: Vec::new(),
    };
    let Ok(packet) = wire::build_query(id, &spec.name, spec.qtype.code()) else {
        return result;
    };
    let local: SocketAddr = if server.is_ipv4() {
        "0.0.0.0:0".parse().expect("literal")
    } else {
        "[::]:0".parse().expect("literal")
    };
    let socket = match UdpSocket::bind(local).and_then(|s| s.connect(server).map(|()| s)) {
        Ok(socket) => socket,
        Err(_) => return result,
    };
    let start = Instant::now();
    if socket.send(&packet).is_err() {
        return result;
    }
    let deadline = start + timeout;
    let mut buffer = [0u8; 4096];
    loop {
        let now = Instant::now();
        if now >= deadline || stop.load(Ordering::Relaxed) {
            result.outcome = Outcome::Timeout;
            return result;
        }
        let wait = (deadline - now)
            .min(STOP_CHECK)
            .max(Duration::from_millis(1));
        let _ = socket.set_read_timeout(Some(wait));
        match socket.recv(&mut buffer) {
            Ok(n) => {
                let elapsed = start.elapsed();
                let Some(reply) = wire::parse(&buffer[..n]) else {
                    continue;
                };
                // Only our answer counts: same id, same question.
                if !reply.response
                    || reply.id != id
                    || reply.name != spec.name
                    || reply.qtype != spec.qtype.label()
                {
                    continue;
                }
                result.latency_ms = Some(elapsed.as_secs_f64() * 1000.0);
                result.outcome = Outcome::from_rcode(reply.rcode);
                result.answers = reply.answers;
                return result;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            // ICMP port unreachable: nothing listens there (on Linux a
            // connected UDP socket reads it as ECONNREFUSED).
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                result.outcome = Outcome::Unreachable;
                return result;
            }
            Err(_) => return result,
        }
    }
}
