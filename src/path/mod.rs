//! The path prober behind `netlens trace` and the Path view: probes with a
//! rising TTL (1..max_ttl) in rounds, as traceroute --tcp, mtr and trippy
//! do, matching each ICMP time exceeded or destination unreachable to its
//! probe by the header it quotes, until the destination's own answer ends
//! the path. It runs on its own thread (entering the watched namespace),
//! so the UI never waits on it, and fills a `model::path::PathReport`.
//!
//! The destination's SYN-ACK to a TCP probe meets no socket here, so the
//! local kernel answers it with a RST: the destination drops the half-open
//! connection, as it does for traceroute --tcp.

pub mod destination;
mod names;
pub mod socket;
pub mod wire;

use crate::collect::netns::Target;
use crate::model::path::{PathReport, ProbeKind};
use anyhow::{Result, bail};
use socket::RawSocket;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wire::{ProbeSpec, Reply, ReplyKind, SEQ_SPAN};

/// The most probes per second `--rate` allows.
pub const MAX_RATE: f64 = 1000.0;

/// What to probe and for how long.
#[derive(Debug, Clone)]
pub struct TraceOptions {
    /// The destination as the user gave it.
    pub target: String,
    pub addr: IpAddr,
    /// TCP and UDP: the destination port.
    pub port: u16,
    pub kind: ProbeKind,
    pub max_ttl: u8,
    /// Rounds to send; None: until `duration` or stopped.
    pub count: Option<u32>,
    pub duration: Option<Duration>,
    /// Probes per second, at most.
    pub rate: f64,
    /// How long a probe may go unanswered before it counts as lost.
    pub timeout: Duration,
    /// One round starts at most this often.
    pub interval: Duration,
    pub netns: Target,
    /// Reverse names through the system resolver.
    pub resolve: bool,
}

/// A running trace; dropping it stops the probing.
pub struct Prober {
    report: Arc<Mutex<PathReport>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Prober {
    /// Opens the sockets (in the namespace) and starts probing; a missing
    /// capability or namespace is an error here, not a dead thread.
    pub fn start(options: TraceOptions) -> Result<Prober> {
        let IpAddr::V4(dst) = options.addr else {
            bail!("IPv6 destinations are not supported yet: give an IPv4 address");
        };
        let mut report = PathReport::new(
            options.target.clone(),
            options.addr,
            (options.kind != ProbeKind::Icmp).then_some(options.port),
            options.kind,
        );
        report.netns = options.netns.label().to_string();
        let report = Arc::new(Mutex::new(report));
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel();
        let namespace = options.netns.open()?;
        let (shared, stopping) = (report.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("netlens-trace".into())
            .spawn(move || {
                let opened = namespace
                    .as_ref()
                    .map_or(Ok(()), |file| {
                        crate::collect::netns::enter(file, options.netns.label())
                    })
                    .and_then(|()| Sockets::open(&options, dst));
                match opened {
                    Ok(sockets) => {
                        let _ = ready_tx.send(Ok(()));
                        Run::new(options, sockets, shared, stopping).probe();
                    }
                    Err(error) => {
                        let _ = ready_tx.send(Err(error));
                    }
                }
            })?;
        let mut prober = Prober {
            report,
            stop,
            thread: Some(thread),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(prober),
            Ok(Err(error)) => Err(error),
            Err(_) => {
                prober.stop();
                bail!("the trace thread ended before it started")
            }
        }
    }

    /// The path as probed so far.
    pub fn report(&self) -> PathReport {
        self.report
            .lock()
            .map(|r| r.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    pub fn is_done(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops sending and waits for the thread.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Waits until the rounds are done (or `stop_early` turns true), then
    /// returns the report.
    pub fn wait(mut self, stop_early: &AtomicBool) -> PathReport {
        while !self.is_done() {
            if stop_early.load(Ordering::Relaxed) {
                self.stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        self.report()
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Sockets {
    spec: ProbeSpec,
    send: RawSocket,
    icmp: RawSocket,
    tcp: Option<RawSocket>,
}

impl Sockets {
    fn open(options: &TraceOptions, dst: Ipv4Addr) -> Result<Sockets> {
        let send = RawSocket::sender()?;
        let icmp = RawSocket::receiver(wire::IPPROTO_ICMP)?;
        let tcp = match options.kind {
            ProbeKind::Tcp => Some(RawSocket::receiver(wire::IPPROTO_TCP)?),
            _ => None,
        };
        let src = socket::source_for(dst, options.port)?;
        // Probes of two traces at once differ in id and source ports.
        let unique = std::process::id() ^ (nanos_now() >> 8);
        let spec = ProbeSpec {
            kind: options.kind,
            src,
            dst,
            dport: options.port,
            id: unique as u16,
            port_base: 33_000 + (unique % 6) as u16 * SEQ_SPAN,
        };
        Ok(Sockets {
            spec,
            send,
            icmp,
            tcp,
        })
    }
}

fn nanos_now() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
}

/// A probe awaiting its fate.
struct Outstanding {
    ttl: u8,
    sent: Instant,
}

/// The probing loop's state.
struct Run {
    options: TraceOptions,
    sockets: Sockets,
    report: Arc<Mutex<PathReport>>,
    stop: Arc<AtomicBool>,
    outstanding: HashMap<u16, Outstanding>,
    next_seq: u16,
    /// The TTL the destination (or an unreachable) answered at: no probe
    /// goes further.
    end_ttl: Option<u8>,
    /// The next TTL to send in this round; None between rounds.
    next_ttl: Option<u8>,
    rounds: u32,
    round_started: Option<Instant>,
    next_send: Instant,
    started: Instant,
    names: names::Resolver,
}

impl Run {
    fn new(
        options: TraceOptions,
        sockets: Sockets,
        report: Arc<Mutex<PathReport>>,
        stop: Arc<AtomicBool>,
    ) -> Run {
        let now = Instant::now();
        Run {
            names: names::Resolver::new(options.resolve),
            options,
            sockets,
            report,
            stop,
            outstanding: HashMap::new(),
            next_seq: 0,
            end_ttl: None,
            next_ttl: None,
            rounds: 0,
            round_started: None,
            next_send: now,
            started: now,
        }
    }

    fn probe(mut self) {
        let mut buffer = vec![0u8; 2048];
        while !self.stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            self.expire(now);
            let sending = self.sending(now);
            if !sending && self.outstanding.is_empty() {
                break;
            }
            if sending && now >= self.next_send {
                self.send_next(now);
            }
            let wake = self.wake_at(sending);
            let mut sockets = vec![&self.sockets.icmp];
            sockets.extend(self.sockets.tcp.as_ref());
            socket::wait_readable(&sockets, wake.saturating_duration_since(Instant::now()));
            self.read_replies(&mut buffer);
            self.merge_names();
        }
        self.names.finish();
        self.merge_names();
        self.with_report(|report| report.done = true);
    }

    /// Whether more probes are to be sent.
    fn sending(&self, now: Instant) -> bool {
        if self.report_has_error() {
            return false;
        }
        if let Some(limit) = self.options.duration
            && now.duration_since(self.started) >= limit
        {
            return false;
        }
        match self.options.count {
            Some(count) => self.rounds < count || self.next_ttl.is_some(),
            None => true,
        }
    }

    fn report_has_error(&self) -> bool {
        self.report.lock().is_ok_and(|r| r.error.is_some())
    }

    fn wake_at(&self, sending: bool) -> Instant {
        let expiry = self
            .outstanding
            .values()
            .map(|p| p.sent + self.options.timeout)
            .min();
        let mut wake = Instant::now() + Duration::from_millis(100);
        if sending {
            let start = self.round_start_at().unwrap_or(self.next_send);
            wake = wake.min(self.next_send.max(start));
        }
        expiry.map_or(wake, |e| wake.min(e))
    }

    /// When the next round may start (one round per interval at most);
    /// None: during a round, or before the first.
    fn round_start_at(&self) -> Option<Instant> {
        match (self.next_ttl, self.round_started) {
            (None, Some(started)) => Some(started + self.options.interval),
            _ => None,
        }
    }

    fn last_ttl(&self) -> u8 {
        self.end_ttl.unwrap_or(self.options.max_ttl)
    }

    fn send_next(&mut self, now: Instant) {
        if self.next_ttl.is_none() {
            if self.round_start_at().is_some_and(|start| now < start) {
                return;
            }
            self.rounds += 1;
            self.round_started = Some(now);
            self.next_ttl = Some(1);
            let rounds = self.rounds;
            self.with_report(|report| report.rounds = rounds);
        }
        let Some(ttl) = self.next_ttl else { return };
        if ttl > self.last_ttl() {
            // The end was found during this round: nothing lies beyond it.
            self.next_ttl = None;
            return;
        }
        let Some(seq) = self.free_seq() else {
            // Every sequence number awaits a reply: wait for some to expire.
            return;
        };
        let packet = wire::build_probe(&self.sockets.spec, ttl, seq);
        match self.sockets.send.send_to(&packet, self.sockets.spec.dst) {
            Ok(()) => {
                self.outstanding.insert(seq, Outstanding { ttl, sent: now });
                self.with_report(|report| report.hop_mut(ttl).pending += 1);
            }
            Err(error) if error.raw_os_error() == Some(libc::EPERM) => {
                // A local firewall refused it: report and stop sending.
                let text = format!("sending a probe failed: {error} (a local firewall rule?)");
                self.with_report(|report| report.error = Some(text));
            }
            // A full send buffer or an unreachable route: counted lost.
            Err(_) => {
                self.outstanding.insert(seq, Outstanding { ttl, sent: now });
                self.with_report(|report| report.hop_mut(ttl).pending += 1);
            }
        }
        self.next_send = now + Duration::from_secs_f64(1.0 / self.options.rate);
        self.next_ttl = (ttl < self.last_ttl()).then_some(ttl + 1);
    }

    fn free_seq(&mut self) -> Option<u16> {
        for _ in 0..SEQ_SPAN {
            let seq = self.next_seq;
            self.next_seq = (self.next_seq + 1) % SEQ_SPAN;
            if !self.outstanding.contains_key(&seq) {
                return Some(seq);
            }
        }
        None
    }

    fn expire(&mut self, now: Instant) {
        let timeout = self.options.timeout;
        let expired: Vec<u16> = self
            .outstanding
            .iter()
            .filter(|(_, p)| now.duration_since(p.sent) >= timeout)
            .map(|(seq, _)| *seq)
            .collect();
        for seq in expired {
            if let Some(probe) = self.outstanding.remove(&seq) {
                let last = self.last_ttl();
                self.with_report(|report| {
                    if probe.ttl <= last && usize::from(probe.ttl) <= report.hops.len() {
                        let hop = report.hop_mut(probe.ttl);
                        hop.pending = hop.pending.saturating_sub(1);
                        hop.lost();
                    }
                });
            }
        }
    }

    fn read_replies(&mut self, buffer: &mut [u8]) {
        let spec = self.sockets.spec;
        let mut replies = Vec::new();
        while let Some(packet) = self.sockets.icmp.recv(buffer) {
            replies.extend(wire::match_icmp(&spec, packet));
        }
        if let Some(tcp) = &self.sockets.tcp {
            while let Some(packet) = tcp.recv(buffer) {
                replies.extend(wire::match_tcp(&spec, packet));
            }
        }
        let now = Instant::now();
        for reply in replies {
            self.answered(reply, now);
        }
    }

    fn answered(&mut self, reply: Reply, now: Instant) {
        let Some(probe) = self.outstanding.remove(&reply.seq) else {
            return;
        };
        let rtt_ms = now.duration_since(probe.sent).as_secs_f64() * 1000.0;
        if !matches!(reply.kind, ReplyKind::TimeExceeded) {
            // The path ends here: the destination, or a router saying it
            // cannot go on. No probe goes further from now on.
            let end = self.end_ttl.map_or(probe.ttl, |e| e.min(probe.ttl));
            self.end_ttl = Some(end);
        }
        let last = self.last_ttl();
        if probe.ttl > last {
            return;
        }
        let from = IpAddr::V4(reply.from);
        self.names.want(from);
        self.with_report(|report| {
            report.hops.truncate(usize::from(last));
            let hop = report.hop_mut(probe.ttl);
            hop.pending = hop.pending.saturating_sub(1);
            hop.answered(from, rtt_ms);
            match reply.kind {
                ReplyKind::Destination => report.reached = true,
                ReplyKind::Unreachable(why) => hop.unreachable = Some(why),
                ReplyKind::TimeExceeded => {}
            }
        });
    }

    fn merge_names(&mut self) {
        let names = self.names.take().clone();
        if names.is_empty() {
            return;
        }
        self.with_report(|report| {
            for hop in &mut report.hops {
                if let Some(name) = hop.addr.and_then(|a| names.get(&a)) {
                    hop.name = Some(name.clone());
                }
            }
        });
    }

    fn with_report(&self, change: impl FnOnce(&mut PathReport)) {
        let mut report = self.report.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut report);
    }
}
