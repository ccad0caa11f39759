//! The live capture engine: a thread that enters the watched namespace,
//! reads the ring, filters, accounts flows and (while the Flows tab is open)
//! prints tcpdump lines in batches.
//!
//! The flow table sits behind a mutex that the thread holds only while it
//! drains ready ring blocks; `summary()` takes the bounded view a Sample
//! carries. Printed lines wait there too, for the Flows tab to take with
//! each sample (`take_lines`); the channel only says, at most ten times a
//! second, that a flow screen has packets to take, or that capture stopped.

mod lines;
mod recent;
mod replayed;
mod tap;

pub use lines::LINES_KEPT;
pub use tap::{PACKETS_PER_SECOND, PacketBatch, PacketTap, RawPacket};

use super::ring::{self, Ring, RingOptions, RingStats, Wake, permission_message};
use super::sampling;
use crate::collect::netns::{self, Target};
use crate::model::capture::{CaptureSample, SAMPLE_FLOWS};
use crate::packet::decode::{Summary, summarize};
use crate::packet::filter::Filter;
use crate::packet::flows::{FlowKey, FlowTable, group_flows, top_flows};
use crate::packet::format::{Formatter, Timestamp};
use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Flow table bound (100k flows keep the table within its memory budget) and
/// how long an idle flow stays.
pub const MAX_FLOWS: usize = 100_000;
pub const IDLE_TIMEOUT_S: f64 = 120.0;
/// Lines printed per batch at most (1,000 a second); the rest are counted,
/// not printed: nobody reads faster, and at 200k pps 5,000 lines a second
/// were an eighth of the live view's CPU (`netlens capture` prints all).
pub const LINES_PER_BATCH: usize = 100;
/// How often batches go out.
const BATCH_EVERY: Duration = Duration::from_millis(100);
/// How often the ring's statistics and the sampling rate are updated, and
/// the longest the thread sleeps with nothing to do.
const STATS_EVERY: Duration = Duration::from_secs(1);
/// Ticks of STATS_EVERY a smaller ring must do before the ring shrinks.
const SHRINK_AFTER_TICKS: u32 = 30;
/// The passive DNS timeout until told the client's (glibc's default).
const DNS_TIMEOUT_S: f64 = 5.0;

/// One packet as the Flows tab lists it and `w` writes it.
#[derive(Debug, Clone)]
pub struct CapturedPacket {
    pub line: String,
    pub ts: Timestamp,
    pub orig_len: u32,
    pub data: Box<[u8]>,
    /// The interface it crossed; 0 when unknown (a replayed capture).
    pub ifindex: u32,
}

#[derive(Debug)]
pub enum CaptureEvent {
    /// Printed lines (`Capture::take_lines`, or a replayed batch).
    Packets {
        packets: Vec<CapturedPacket>,
        /// Packets that matched but were not printed (over the batch cap).
        unprinted: u64,
    },
    /// The watched flow has packets to take (`Capture::take_watched`).
    Watched,
    /// The capture stopped (interface gone, socket error).
    Failed(String),
}

/// Packets of the watched flow waiting for the drill-down to take them.
pub const WATCH_BACKLOG: usize = 20_000;

/// The flow a drill-down watches: its packets since the last take.
struct Watch {
    key: FlowKey,
    packets: Vec<RawPacket>,
    /// Packets not kept because the drill-down did not take them in time.
    missed: u64,
}

enum Control {
    Filter(Option<Filter>),
}

struct Shared {
    table: FlowTable,
    stats: RingStats,
    packets: u64,
    bytes: u64,
    /// See CaptureSample::newest_packet_t.
    newest_packet_t: f64,
    filter: String,
    error: Option<String>,
    active: bool,
    recent: recent::Recent,
    watch: Option<Watch>,
    /// Passive DNS: queries matched to responses as packets pass.
    dns: crate::packet::dns_passive::Matcher,
    /// Wall time (Unix seconds) before which every captured packet has been
    /// fed: the last drain's start less the ring's block timeout. Queries
    /// expire by this clock, not the wall clock, so a response still
    /// waiting in the ring of a busy host is not turned into a timeout.
    fed_until: f64,
    /// Wall time of the last statistics tick that found packets dropped
    /// by the ring (0: none): a query sent before it may have lost its
    /// answer, so it is not a timeout.
    dropped_at: f64,
    /// Wall time of the last statistics tick: drops are known up to it.
    /// Queries expire only up to here too, so none is called a timeout
    /// before the drops in its wait have been looked at.
    checked_at: f64,
    /// A recorder's copy of the packets, while one is attached.
    tap: Option<tap::Tap>,
    /// The ring keeps one in so many packets that are not control ones.
    sample_every: u32,
    /// The kernel counts every packet of the captured interfaces, so the
    /// capture may sample (see `Capture::set_kernel_counts`).
    kernel_counts_all: bool,
    /// The kernel's "not counted" packets when last told.
    not_counted: u64,
    /// Printed lines the Flows tab has not taken yet (at most LINES_KEPT).
    lines: Vec<CapturedPacket>,
    /// Packets not printed since the last take (over the rate cap).
    unprinted: u64,
}

/// Accounts one packet that passed the filter (live and replay alike).
/// A sampled packet counts as `shared.table.weight` packets.
fn account(shared: &mut Shared, s: &Summary, p: &RawPacketRef) {
    let (ts, data) = (p.ts, p.data);
    shared.packets += shared.table.weight;
    shared.bytes += shared.table.weight * u64::from(s.wire_len);
    shared.newest_packet_t = shared.newest_packet_t.max(ts.as_secs_f64());
    shared.table.add_packet(s, data, ts.as_secs_f64());
    shared.keep(p, s);
}

/// A packet being accounted: its bytes borrowed from the ring or a
/// replayed batch.
#[derive(Clone, Copy)]
struct RawPacketRef<'a> {
    ts: Timestamp,
    orig_len: u32,
    data: &'a [u8],
    ifindex: u32,
}

impl Shared {
    fn new(table: FlowTable, filter: String, error: Option<String>) -> Self {
        Self {
            table,
            stats: RingStats::default(),
            packets: 0,
            bytes: 0,
            newest_packet_t: 0.0,
            filter,
            error,
            active: false,
            recent: recent::Recent::default(),
            watch: None,
            dns: crate::packet::dns_passive::Matcher::new(DNS_TIMEOUT_S),
            fed_until: 0.0,
            dropped_at: 0.0,
            checked_at: 0.0,
            tap: None,
            sample_every: 1,
            kernel_counts_all: false,
            not_counted: 0,
            lines: Vec::new(),
            unprinted: 0,
        }
    }

    /// Turns the DNS queries whose wait is over into timeouts, by what was
    /// fed and checked for drops (`fed_until`, `checked_at`).
    fn expire_dns(&mut self) {
        let until = self.fed_until.min(self.checked_at);
        self.dns.expire(until, self.dropped_at);
    }

    /// Every packet is owed to someone: flow counts (the kernel does not
    /// count them all), a filter's flows, a drill-down, a recording.
    fn owes_every_packet(&self, filtering: bool) -> bool {
        !self.kernel_counts_all || filtering || self.watch.is_some() || self.tap.is_some()
    }

    /// Keeps a copy of the packet in the recent ones and in the watch when
    /// it belongs to the watched flow.
    fn keep(&mut self, p: &RawPacketRef, s: &Summary) {
        self.recent.push(p);
        if let Some(watch) = self.watch.as_mut()
            && FlowKey::of(s).is_some_and(|(k, _)| k == watch.key)
        {
            if watch.packets.len() < WATCH_BACKLOG {
                watch.packets.push(p.to_packet());
            } else {
                watch.missed += 1;
            }
        }
    }
}

/// The running capture (or why there is none). Dropping it stops the thread.
pub struct Capture {
    shared: Arc<Mutex<Shared>>,
    iface: String,
    linktype: u32,
    snaplen: u32,
    lines: Arc<AtomicBool>,
    control: Option<mpsc::Sender<Control>>,
    stop: Arc<AtomicBool>,
    /// Ends the thread's wait: to stop, or to take a new filter.
    wake: Option<Arc<Wake>>,
    thread: Option<JoinHandle<()>>,
    /// Set for a capture that replays a recording.
    replayed: Option<Mutex<replayed::Replayed>>,
}

/// Why a capture could not start: `fatal` for what the user typed wrong (an
/// unknown interface), not fatal for a missing privilege.
#[derive(Debug)]
pub struct OpenError {
    pub fatal: bool,
    pub message: String,
}

impl Capture {
    /// Starts capturing in `target`. An unknown interface is an error; a
    /// missing privilege gives a Capture that says so (the other tabs keep
    /// working).
    pub fn spawn(
        target: &Target,
        options: RingOptions,
        filter: Option<Filter>,
    ) -> Result<(Self, UnboundedReceiver<CaptureEvent>)> {
        let namespace = target.open()?;
        let label = target.label().to_string();
        let shared = Arc::new(Mutex::new(Shared::new(
            FlowTable::new(MAX_FLOWS, IDLE_TIMEOUT_S),
            filter
                .as_ref()
                .map(|f| f.text().to_string())
                .unwrap_or_default(),
            None,
        )));
        let (events, receiver) = unbounded_channel();
        let (control, controls) = mpsc::channel();
        let (ready, is_ready) = mpsc::channel::<Result<(u32, u32), OpenError>>();
        let lines = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(Wake::new().context("cannot start the capture")?);
        let thread = {
            let shared = Arc::clone(&shared);
            let lines = Arc::clone(&lines);
            let stop = Arc::clone(&stop);
            let wake = Arc::clone(&wake);
            let options = options.clone();
            std::thread::Builder::new()
                .name("capture".into())
                .spawn(move || {
                    let opened = namespace
                        .as_ref()
                        .map_or(Ok(()), |file| netns::enter(file, &label))
                        .map_err(|e| OpenError {
                            fatal: true,
                            message: format!("{e:#}"),
                        })
                        .and_then(|()| open(&options, &label));
                    match opened {
                        Ok(ring) => {
                            let _ = ready.send(Ok((ring.linktype(), ring.snaplen())));
                            let mut engine = Engine {
                                ring,
                                smaller_ticks: 0,
                                filter,
                                shared,
                                events,
                                lines,
                                stop,
                                wake,
                                controls,
                                formatter: Formatter::new(crate::capture::HOST),
                            };
                            engine.run();
                        }
                        Err(error) => {
                            let _ = ready.send(Err(error));
                        }
                    }
                })
                .context("cannot start the capture thread")?
        };
        let (linktype, snaplen) = match is_ready
            .recv()
            .context("the capture thread died during setup")?
        {
            Ok(link) => {
                lock(&shared).active = true;
                link
            }
            Err(error) if error.fatal => anyhow::bail!("{}", error.message),
            Err(error) => {
                lock(&shared).error = Some(error.message);
                (0, 0)
            }
        };
        Ok((
            Self {
                shared,
                iface: options.label().to_string(),
                linktype,
                snaplen,
                lines,
                control: Some(control),
                stop,
                wake: Some(wake),
                thread: Some(thread),
                replayed: None,
            },
            receiver,
        ))
    }

    /// A capture that is off, with the reason (for --no-capture).
    pub fn off(reason: &str) -> Self {
        let shared = Arc::new(Mutex::new(Shared::new(
            FlowTable::new(1, IDLE_TIMEOUT_S),
            String::new(),
            Some(reason.to_string()),
        )));
        Self {
            shared,
            iface: String::new(),
            linktype: 0,
            snaplen: 0,
            lines: Arc::default(),
            control: None,
            stop: Arc::default(),
            wake: None,
            thread: None,
            replayed: None,
        }
    }

    /// The pcap link type of captured packets.
    pub fn linktype(&self) -> u32 {
        self.linktype
    }

    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// Whether packets are being printed into lines (the Flows tab is open).
    pub fn set_lines(&self, on: bool) {
        self.lines.store(on, Ordering::Relaxed);
    }

    /// Applies a new filter from now on (flows already counted stay).
    pub fn set_filter(&self, filter: Option<Filter>) {
        lock(&self.shared).filter = filter
            .as_ref()
            .map(|f| f.text().to_string())
            .unwrap_or_default();
        if self.set_replay_filter(filter.clone()) {
            return;
        }
        if let Some(control) = &self.control {
            let _ = control.send(Control::Filter(filter));
        }
        if let Some(wake) = &self.wake {
            wake.wake();
        }
    }

    /// What the kernel's flow counter counts, each sample: `all` when it
    /// counts every packet of the captured interfaces, `not_counted` its
    /// running total of packets its map had no room for. The capture
    /// samples only while all are counted and none went uncounted since
    /// the last call.
    pub fn set_kernel_counts(&self, all: bool, not_counted: u64) {
        let mut shared = lock(&self.shared);
        let grew = not_counted > shared.not_counted;
        shared.not_counted = not_counted;
        shared.kernel_counts_all = all && !grew;
    }

    /// Seconds after which a DNS query seen without a response counts as
    /// a timeout (the client's resolver timeout).
    pub fn set_dns_timeout(&self, seconds: f64) {
        lock(&self.shared).dns.set_timeout(seconds);
    }

    /// Passive DNS results settled since the last call, and how many were
    /// dropped by the bound.
    pub fn take_dns(&self) -> (Vec<crate::model::dns::DnsResult>, u64) {
        let mut shared = lock(&self.shared);
        shared.expire_dns();
        shared.dns.take()
    }

    /// Whether packets are being captured now.
    pub fn is_active(&self) -> bool {
        lock(&self.shared).active
    }

    /// Why there is no capture, if there is none.
    pub fn error(&self) -> Option<String> {
        lock(&self.shared).error.clone()
    }

    /// Watches one flow for a drill-down (None stops): its packets still in
    /// the recent ones come first, then every new one, for `take_watched`.
    pub fn watch(&self, key: Option<FlowKey>) {
        let mut shared = lock(&self.shared);
        shared.watch = key.map(|key| {
            let linktype = self.linktype;
            let packets = shared
                .recent
                .iter()
                .filter(|p| {
                    let s = summarize(linktype, p.data, p.orig_len);
                    FlowKey::of(&s).is_some_and(|(k, _)| k == key)
                })
                .map(|p| p.to_packet())
                .collect();
            Watch {
                key,
                packets,
                missed: 0,
            }
        });
    }

    /// The watched flow's packets since the last call, and how many were
    /// missed (not taken in time).
    pub fn take_watched(&self) -> (Vec<RawPacket>, u64) {
        let mut shared = lock(&self.shared);
        match shared.watch.as_mut() {
            Some(w) => (
                std::mem::take(&mut w.packets),
                std::mem::take(&mut w.missed),
            ),
            None => (Vec::new(), 0),
        }
    }

    /// The bounded view a Sample carries.
    pub fn summary(&self) -> CaptureSample {
        let shared = lock(&self.shared);
        CaptureSample {
            active: shared.active,
            error: shared.error.clone(),
            iface: self.iface.clone(),
            filter: shared.filter.clone(),
            packets: shared.packets,
            bytes: shared.bytes,
            kernel_received: shared.stats.received,
            kernel_dropped: shared.stats.dropped,
            flows_active: shared.table.len() as u64,
            flows_evicted: shared.table.evicted,
            flows: top_flows(shared.table.flows(), SAMPLE_FLOWS)
                .into_iter()
                .map(Into::into)
                .collect(),
            hosts: group_flows(shared.table.flows(), true, SAMPLE_FLOWS),
            services: group_flows(shared.table.flows(), false, SAMPLE_FLOWS),
            refused: shared.table.refusals.sample(),
            responses: shared.table.responses.sample(),
            newest_packet_t: shared.newest_packet_t,
            kernel_counts: None,
            sample_every: shared.sample_every,
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(wake) = &self.wake {
            wake.wake();
        }
        drop(self.control.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn open(options: &RingOptions, netns: &str) -> Result<Ring, OpenError> {
    if let Some(name) = &options.iface {
        super::ring::ifindex(name, netns).map_err(|e| OpenError {
            fatal: true,
            message: format!("{e:#}"),
        })?;
    }
    Ring::open(options, netns).map_err(|e| {
        let message = format!("{e:#}");
        OpenError {
            fatal: false,
            message: if message == permission_message() {
                message
            } else {
                format!("capture unavailable: {message}")
            },
        }
    })
}

/// What capture is asked to do (cli's CaptureArgs converts to this).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureOptions {
    /// Capture on this interface only; None: every interface.
    pub iface: Option<String>,
    /// A pcap-filter expression to apply.
    pub filter: Option<String>,
    /// Do not capture at all.
    pub off: bool,
    /// Keep whole packets instead of the first bytes.
    pub payload: bool,
}

/// Starts the capture the options ask for: None when off; a bad filter or
/// an unknown interface is an error. The receiver carries the events: a
/// flow screen's packets to take, capture stopped.
pub fn start(
    target: &Target,
    options: &CaptureOptions,
) -> Result<(Option<Capture>, Option<UnboundedReceiver<CaptureEvent>>)> {
    if options.off {
        return Ok((None, None));
    }
    let filter = match &options.filter {
        Some(text) => Some(Filter::parse(text)?),
        None => None,
    };
    // The ring follows the rate from its smallest size (`Engine::size_ring`).
    let ring = RingOptions {
        buffer: ring::BUFFER_LEAST,
        ..RingOptions::new(options.iface.as_deref(), options.payload)
    };
    let (capture, events) = Capture::spawn(target, ring, filter)?;
    Ok((Some(capture), Some(events)))
}

struct Engine {
    ring: Ring,
    /// Ticks in a row a smaller ring would have done.
    smaller_ticks: u32,
    filter: Option<Filter>,
    shared: Arc<Mutex<Shared>>,
    events: UnboundedSender<CaptureEvent>,
    lines: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    wake: Arc<Wake>,
    controls: mpsc::Receiver<Control>,
    formatter: Formatter,
}

/// Sets how sparsely the ring samples: every packet while one is owed,
/// else from the packets that passed the filter in the last `seconds`
/// (None: keep the rate). A filter the kernel refuses leaves the old one,
/// which `sample_every` then still names.
fn pace(ring: &mut Ring, shared: &mut Shared, filtering: bool, passed: Option<(u64, f64)>) {
    let every = ring.sample_every();
    let next = match passed {
        _ if shared.owes_every_packet(filtering) => 1,
        Some((passed, seconds)) => sampling::next_every(every, passed, seconds),
        None => every,
    };
    let _ = ring.set_sample_every(next);
    shared.sample_every = ring.sample_every();
}

impl Engine {
    /// Marks the capture stopped by `error` and tells the UI.
    fn fail(&self, error: &anyhow::Error) {
        let message = format!("{error:#}");
        let mut shared = lock(&self.shared);
        shared.active = false;
        shared.error = Some(message.clone());
        drop(shared);
        let _ = self.events.send(CaptureEvent::Failed(message));
    }

    /// Sizes the ring to the bytes it carried in the last `seconds`
    /// (`ring::buffer_for`): larger at once, twice as large when the
    /// kernel dropped packets, smaller once the smaller size has done for
    /// SHRINK_AFTER_TICKS. Called right after a drain.
    fn size_ring(&mut self, carried: u64, seconds: f64, dropped: bool) -> Result<()> {
        let current = self.ring.buffer();
        let rate = (carried as f64 / seconds.max(0.001)) as u64;
        let mut wanted = ring::buffer_for(rate);
        if dropped {
            wanted = wanted.max(current.saturating_mul(2));
        }
        if wanted < current {
            self.smaller_ticks += 1;
            if self.smaller_ticks < SHRINK_AFTER_TICKS {
                return Ok(());
            }
        }
        self.smaller_ticks = 0;
        self.ring.set_buffer(wanted)
    }

    fn run(&mut self) {
        let linktype = self.ring.linktype();
        let mut batch: Vec<CapturedPacket> = Vec::with_capacity(LINES_PER_BATCH);
        let mut unprinted = 0u64;
        let mut last_send = Instant::now();
        let mut last_stats = Instant::now();
        let mut passed_before = 0u64;
        let mut carried_before = 0u64;
        let mut dropped_before = 0u64;
        let mut line = String::with_capacity(256);
        // Lines or a flow screen's packets wait to go out: wake when they
        // are due; else only for a packet, the statistics or `wake`.
        let mut soon = false;
        while !self.stop.load(Ordering::Relaxed) {
            loop {
                match self.controls.try_recv() {
                    Ok(Control::Filter(filter)) => self.filter = filter,
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => return,
                }
            }
            let wait = if soon {
                BATCH_EVERY.saturating_sub(last_send.elapsed())
            } else {
                STATS_EVERY.saturating_sub(last_stats.elapsed())
            };
            let wait = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX).max(1);
            if let Err(error) = self.ring.wait_or_woken(wait, Some(&self.wake)) {
                self.fail(&error);
                return;
            }
            let print = self.lines.load(Ordering::Relaxed);
            let watched = {
                let mut shared = lock(&self.shared);
                let shared = &mut *shared;
                let fed_until = unix_now() - f64::from(ring::BLOCK_TIMEOUT_MS) / 1000.0;
                if shared.owes_every_packet(self.filter.is_some()) {
                    pace(&mut self.ring, shared, self.filter.is_some(), None);
                }
                let every = self.ring.sample_every();
                let filter = &self.filter;
                let formatter = &mut self.formatter;
                self.ring.drain(|p| {
                    shared.table.weight = sampling::weight(every, linktype, p.data);
                    let s = summarize(linktype, p.data, p.orig_len);
                    // Before the display filter: DNS figures do not depend
                    // on what the Flows tab is filtering for.
                    if s.proto == 17 && (s.sport == 53 || s.dport == 53) {
                        shared.dns.feed(&s, p.data, p.ts.as_secs_f64());
                    }
                    if let Some(f) = filter
                        && !f.matches(&s, p.data)
                    {
                        return;
                    }
                    let raw = RawPacketRef {
                        ts: p.ts,
                        orig_len: p.orig_len,
                        data: p.data,
                        ifindex: p.ifindex,
                    };
                    account(shared, &s, &raw);
                    if let Some(tap) = shared.tap.as_mut() {
                        tap.offer(p.ts, p.orig_len, p.data, p.ifindex);
                    }
                    if !print {
                        return;
                    }
                    if batch.len() >= LINES_PER_BATCH {
                        unprinted += 1;
                        return;
                    }
                    line.clear();
                    formatter.line(linktype, p.ts, p.data, p.orig_len, &mut line);
                    batch.push(CapturedPacket {
                        line: line.clone(),
                        ts: p.ts,
                        orig_len: p.orig_len,
                        data: p.data.into(),
                        ifindex: p.ifindex,
                    });
                });
                shared.fed_until = fed_until;
                shared.watched_waiting()
            };
            if last_stats.elapsed() >= STATS_EVERY {
                let seconds = last_stats.elapsed().as_secs_f64();
                last_stats = Instant::now();
                let stats = self.ring.stats();
                let passed = stats.received - passed_before;
                passed_before = stats.received;
                let carried = self.ring.carried() - carried_before;
                let dropped = stats.dropped > dropped_before;
                if let Err(error) = self.size_ring(carried, seconds, dropped) {
                    self.fail(&error);
                    return;
                }
                carried_before = self.ring.carried();
                dropped_before = self.ring.stats().dropped;
                let now = unix_now();
                let mut shared = lock(&self.shared);
                let filtering = self.filter.is_some();
                pace(
                    &mut self.ring,
                    &mut shared,
                    filtering,
                    Some((passed, seconds)),
                );
                shared.stats = stats;
                shared.table.expire(now);
                shared.checked_at = now;
                if dropped {
                    shared.dropped_at = now;
                }
                shared.expire_dns();
            }
            let due = last_send.elapsed() >= BATCH_EVERY;
            if due {
                last_send = Instant::now();
                // The batch keeps its full size: grown a push at a time
                // after each send, it was reallocated about seven times a
                // batch, a sixth of this thread's CPU under a flood.
                let mut shared = lock(&self.shared);
                shared.add_lines(&mut batch, std::mem::take(&mut unprinted));
                let watched = shared.watched_waiting();
                drop(shared);
                if watched && self.events.send(CaptureEvent::Watched).is_err() {
                    return;
                }
            }
            soon = !batch.is_empty() || unprinted > 0 || (watched && !due);
        }
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dns::Outcome;
    use crate::packet::dns_passive::packet;

    fn query(capture: &Capture, id: u16, sent: f64) {
        let query = crate::packet::dns_wire::build_query(id, "slow.test", 1).unwrap();
        let query = packet([198, 18, 0, 1], 40000 + id, [198, 18, 0, 53], 53, &query);
        let s = summarize(101, &query, query.len() as u32);
        lock(&capture.shared).dns.feed(&s, &query, sent);
    }

    /// A capture whose queries time out after a second, and a time ten
    /// seconds ago by the wall clock to send them at.
    fn waiting_capture() -> (Capture, f64) {
        let capture = Capture::replayed(1, 384, "lo");
        capture.set_dns_timeout(1.0);
        (capture, unix_now() - 10.0)
    }

    /// On a busy host the capture thread runs late: a response may still
    /// wait in the ring when the sampler asks for results. The query is a
    /// timeout only once the packets up to its deadline have been fed and
    /// the ring's drops up to then looked at.
    #[test]
    fn a_query_expires_by_the_packets_fed_not_the_wall_clock() {
        let (capture, sent) = waiting_capture();
        query(&capture, 7, sent);
        let set = |fed: f64, checked: f64| {
            let mut shared = lock(&capture.shared);
            (shared.fed_until, shared.checked_at) = (sent + fed, sent + checked);
        };
        set(0.5, 5.0);
        let (done, _) = capture.take_dns();
        assert!(done.is_empty(), "expired by the wall clock: {done:?}");
        set(5.0, 0.5);
        let (done, _) = capture.take_dns();
        assert!(done.is_empty(), "expired before drops were looked at");
        set(1.0, 1.0);
        let (done, dropped) = capture.take_dns();
        assert_eq!((done.len(), dropped), (1, 0));
        assert_eq!(done[0].outcome, Outcome::Timeout);
    }

    /// A query whose wait saw the ring drop packets may have lost its
    /// answer to the drop: not carried, not a timeout.
    #[test]
    fn a_query_waiting_through_ring_drops_is_not_a_timeout() {
        let (capture, sent) = waiting_capture();
        query(&capture, 7, sent);
        query(&capture, 8, sent + 2.0);
        {
            let mut shared = lock(&capture.shared);
            shared.dropped_at = sent + 0.7;
            (shared.fed_until, shared.checked_at) = (sent + 4.0, sent + 4.0);
        }
        let (done, dropped) = capture.take_dns();
        assert_eq!(dropped, 1, "the query sent before the drop");
        assert_eq!(done.len(), 1, "{done:?}");
        assert_eq!(done[0].t, sent + 2.0);
        assert_eq!(done[0].outcome, Outcome::Timeout);
    }
}
