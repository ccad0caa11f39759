//! Reverse names (PTR) for the addresses on screen, only when asked (N in
//! the live view, --resolve): an asynchronous cache in front of one
//! resolver thread. A lookup never waits: it answers from the cache, or
//! queues the address and answers None (the caller shows the address).
//!
//! The thread sends PTR queries over UDP to one server (--dns-server, else
//! the first nameserver of /etc/resolv.conf) at most `rate` a second, gives
//! an unanswered one up after `timeout`, and caches names for
//! `NAME_TTL`, NXDOMAIN or an empty answer for `NEGATIVE_TTL` and a
//! timeout for `TIMEOUT_TTL`; the cache holds at most `max_entries`
//! addresses (the oldest go first).

use super::prober::random_id;
use crate::packet::dns_wire;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const DEFAULT_RATE: u32 = 20;
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
pub const DEFAULT_MAX_ENTRIES: usize = 4096;
pub const NAME_TTL: Duration = Duration::from_secs(600);
pub const NEGATIVE_TTL: Duration = Duration::from_secs(300);
pub const TIMEOUT_TTL: Duration = Duration::from_secs(60);
/// Addresses waiting for their query at most; more are asked again later.
const MAX_QUEUED: usize = 1024;
/// How long the thread waits on its socket before looking at its queue.
const TICK: Duration = Duration::from_millis(20);
/// The longest name kept (a DNS name is at most 253 bytes).
const MAX_NAME: usize = 253;

#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub server: SocketAddr,
    /// Queries a second at most.
    pub rate: u32,
    pub timeout: Duration,
    pub max_entries: usize,
}

impl Options {
    pub fn new(server: SocketAddr) -> Self {
        Options {
            server,
            rate: DEFAULT_RATE,
            timeout: DEFAULT_TIMEOUT,
            max_entries: DEFAULT_MAX_ENTRIES,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Pending,
    Name(String),
    NoName,
}

#[derive(Debug)]
struct Entry {
    state: State,
    added: Instant,
    until: Option<Instant>,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<IpAddr, Entry>,
}

/// What the resolver did, for the status line and the tests.
#[derive(Debug, Default)]
pub struct Counters {
    pub sent: AtomicU64,
    pub answered: AtomicU64,
    pub timed_out: AtomicU64,
}

pub struct ReverseNames {
    cache: Arc<Mutex<Cache>>,
    wants: SyncSender<IpAddr>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    pub counters: Arc<Counters>,
    pub options: Options,
}

fn lock(cache: &Mutex<Cache>) -> MutexGuard<'_, Cache> {
    cache.lock().unwrap_or_else(|p| p.into_inner())
}

impl ReverseNames {
    /// Binds a UDP socket of the server's family and starts the thread.
    pub fn start(options: Options) -> std::io::Result<Self> {
        let local: IpAddr = match options.server {
            SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
            SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
        };
        let socket = UdpSocket::bind((local, 0))?;
        socket.connect(options.server)?;
        socket.set_read_timeout(Some(TICK))?;
        let cache = Arc::new(Mutex::new(Cache::default()));
        let (wants, queue) = sync_channel(MAX_QUEUED);
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let worker = Worker {
            socket,
            cache: Arc::clone(&cache),
            queue,
            stop: Arc::clone(&stop),
            counters: Arc::clone(&counters),
            options,
        };
        let thread = std::thread::Builder::new()
            .name("netlens-ptr".into())
            .spawn(move || worker.run())?;
        Ok(ReverseNames {
            cache,
            wants,
            stop,
            thread: Some(thread),
            counters,
            options,
        })
    }

    /// The name of `ip` if known; otherwise None, and a query is queued
    /// unless one is under way or a recent one found nothing. Never waits
    /// for the network.
    pub fn lookup(&self, ip: IpAddr) -> Option<String> {
        let now = Instant::now();
        let mut cache = lock(&self.cache);
        if let Some(entry) = cache.entries.get(&ip) {
            let fresh = entry.until.is_none_or(|until| now < until);
            if fresh {
                return match &entry.state {
                    State::Name(name) => Some(name.clone()),
                    _ => None,
                };
            }
            cache.entries.remove(&ip);
        }
        if cache.entries.len() >= self.options.max_entries {
            cache.evict(self.options.max_entries, now);
        }
        match self.wants.try_send(ip) {
            Ok(()) => {
                cache.entries.insert(
                    ip,
                    Entry {
                        state: State::Pending,
                        added: now,
                        until: None,
                    },
                );
            }
            // The queue is full: asked again on a later frame.
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
        }
        None
    }

    /// Every fresh name in the cache, without asking for any (the row
    /// filter's `host:NAME` matches them; at most `max_entries`).
    pub fn known(&self) -> HashMap<IpAddr, String> {
        let now = Instant::now();
        let cache = lock(&self.cache);
        let fresh = |entry: &&Entry| entry.until.is_none_or(|until| now < until);
        cache
            .entries
            .iter()
            .filter(|(_, entry)| fresh(entry))
            .filter_map(|(ip, entry)| match &entry.state {
                State::Name(name) => Some((*ip, name.clone())),
                _ => None,
            })
            .collect()
    }

    /// Addresses in the cache (named, pending or without a name).
    pub fn cached(&self) -> usize {
        lock(&self.cache).entries.len()
    }

    /// Waits up to `limit` for the pending lookups of `addrs` (snapshot and
    /// trace, which print once); returns the names found.
    pub fn wait_for(&self, addrs: &[IpAddr], limit: Duration) -> HashMap<IpAddr, String> {
        for ip in addrs {
            let _ = self.lookup(*ip);
        }
        let deadline = Instant::now() + limit;
        loop {
            let pending = {
                let cache = lock(&self.cache);
                addrs.iter().any(|ip| {
                    cache
                        .entries
                        .get(ip)
                        .is_some_and(|e| e.state == State::Pending)
                })
            };
            if !pending || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(TICK);
        }
        addrs
            .iter()
            .filter_map(|ip| Some((*ip, self.lookup(*ip)?)))
            .collect()
    }
}

impl Drop for ReverseNames {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Cache {
    /// Makes room: the expired entries, else the oldest eighth.
    fn evict(&mut self, max: usize, now: Instant) {
        self.entries
            .retain(|_, e| e.until.is_none_or(|until| now < until));
        if self.entries.len() < max {
            return;
        }
        let mut ages: Vec<Instant> = self.entries.values().map(|e| e.added).collect();
        let cut = (ages.len() / 8).max(1);
        ages.select_nth_unstable(cut - 1);
        let threshold = ages[cut - 1];
        let mut taken = 0;
        self.entries.retain(|_, e| {
            let take = taken < cut && e.added <= threshold;
            taken += usize::from(take);
            !take
        });
    }

    fn settle(&mut self, ip: IpAddr, state: State, ttl: Duration) {
        // An entry evicted meanwhile is not brought back.
        if let Some(entry) = self.entries.get_mut(&ip) {
            entry.state = state;
            entry.until = Some(Instant::now() + ttl);
        }
    }
}

struct Worker {
    socket: UdpSocket,
    cache: Arc<Mutex<Cache>>,
    queue: Receiver<IpAddr>,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    options: Options,
}

impl Worker {
    fn run(self) {
        let rate = f64::from(self.options.rate.max(1));
        let mut tokens = 1.0f64;
        let mut refilled = Instant::now();
        let mut waiting: VecDeque<IpAddr> = VecDeque::new();
        let mut in_flight: HashMap<u16, (IpAddr, String, Instant)> = HashMap::new();
        let mut buf = [0u8; 4096];
        while !self.stop.load(Ordering::Relaxed) {
            while let Ok(ip) = self.queue.try_recv() {
                waiting.push_back(ip);
            }
            // The token bucket: `rate` a second, a burst of at most one
            // second's worth.
            let now = Instant::now();
            tokens = (tokens + now.duration_since(refilled).as_secs_f64() * rate).min(rate);
            refilled = now;
            while tokens >= 1.0 {
                let Some(ip) = waiting.pop_front() else { break };
                let name = super::reverse_name(ip);
                let id = random_id();
                let Ok(query) = dns_wire::build_query(id, &name, super::QType::Ptr.code()) else {
                    continue;
                };
                tokens -= 1.0;
                if self.socket.send(&query).is_ok() {
                    self.counters.sent.fetch_add(1, Ordering::Relaxed);
                    in_flight.insert(id, (ip, name, now));
                } else {
                    lock(&self.cache).settle(ip, State::NoName, TIMEOUT_TTL);
                }
            }
            if let Ok(n) = self.socket.recv(&mut buf) {
                self.answer(&buf[..n], &mut in_flight);
            }
            let timeout = self.options.timeout;
            let now = Instant::now();
            in_flight.retain(|_, (ip, _, sent)| {
                let alive = now.duration_since(*sent) < timeout;
                if !alive {
                    self.counters.timed_out.fetch_add(1, Ordering::Relaxed);
                    lock(&self.cache).settle(*ip, State::NoName, TIMEOUT_TTL);
                }
                alive
            });
            if in_flight.is_empty() && waiting.is_empty() {
                // Idle: wait for the next address (bounded, to see `stop`).
                if let Ok(ip) = self.queue.recv_timeout(Duration::from_millis(100)) {
                    waiting.push_back(ip);
                }
            }
        }
    }

    /// Takes a response: it must answer a query in flight, id and name.
    fn answer(&self, bytes: &[u8], in_flight: &mut HashMap<u16, (IpAddr, String, Instant)>) {
        let Some(parsed) = dns_wire::parse(bytes) else {
            return;
        };
        let Some((ip, name, _)) = in_flight.get(&parsed.id) else {
            return;
        };
        if !parsed.response || !parsed.name.eq_ignore_ascii_case(name) {
            return;
        }
        let ip = *ip;
        in_flight.remove(&parsed.id);
        self.counters.answered.fetch_add(1, Ordering::Relaxed);
        let found = parsed.answers.iter().find_map(|a| clean_name(a));
        let mut cache = lock(&self.cache);
        match found {
            Some(host) => cache.settle(ip, State::Name(host), NAME_TTL),
            None => cache.settle(ip, State::NoName, NEGATIVE_TTL),
        }
    }
}

/// A name from the network made safe to print: lowercase letters, digits,
/// '-', '_' and '.', no trailing dot, at most 253 bytes; else None (a
/// terminal escape in a PTR record must not reach the screen).
pub fn clean_name(text: &str) -> Option<String> {
    let name = text.trim_end_matches('.');
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    ok.then(|| name.to_ascii_lowercase())
}

/// The server for reverse names: the first --dns-server, else the first
/// nameserver of /etc/resolv.conf (port 53).
pub fn server(dns_servers: &[String]) -> Result<SocketAddr, String> {
    if let Some(first) = dns_servers.first() {
        return super::parse_server(first);
    }
    let config = super::config::read_system();
    config
        .nameservers
        .iter()
        .find_map(|ns| super::parse_server(ns).ok())
        .ok_or_else(|| "reverse names: no nameserver in /etc/resolv.conf".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_network_are_made_safe() {
        assert_eq!(
            clean_name("Host.Example.TEST."),
            Some("host.example.test".into())
        );
        assert_eq!(clean_name("bad\x1b[31m.test."), None);
        assert_eq!(clean_name("."), None);
        assert_eq!(clean_name(&"a".repeat(300)), None);
        assert_eq!(clean_name("with space.test"), None);
    }

    #[test]
    fn the_cache_stays_bounded_oldest_first() {
        let mut cache = Cache::default();
        let now = Instant::now();
        for i in 0..16u32 {
            cache.entries.insert(
                IpAddr::V4(Ipv4Addr::from(0xc612_0000 + i)),
                Entry {
                    state: State::NoName,
                    added: now + Duration::from_millis(u64::from(i)),
                    until: None,
                },
            );
        }
        cache.evict(16, now);
        assert_eq!(cache.entries.len(), 14);
        assert!(
            !cache
                .entries
                .contains_key(&IpAddr::V4(Ipv4Addr::from(0xc612_0000)))
        );
        assert!(
            cache
                .entries
                .contains_key(&IpAddr::V4(Ipv4Addr::from(0xc612_000f)))
        );
    }
}
