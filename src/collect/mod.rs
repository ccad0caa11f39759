//! Collectors and the Sampler thread that runs them once per interval.

pub mod all_netns;
pub mod btf;
pub mod conn_log;
pub mod conn_owners;
pub mod conntrack;
pub mod containers;
pub mod ctnetlink;
pub mod deadline;
pub mod drops;
pub mod ethtool;
pub mod firewall;
pub mod flows;
pub mod inet_diag;
pub mod interrupts;
pub mod link;
pub mod neigh;
pub mod netns;
pub mod nic_queues;
pub mod owners;
pub mod priority;
pub mod processes;
pub mod routes;
pub mod rtnl;
pub mod snmp;
pub mod sock_destroy;
pub mod sockets;
pub mod softirqs;
pub mod softnet;
pub mod stack;
pub mod sysctl;
pub mod tcp_destroy;
pub mod unowned_bytes;

use crate::model::closed::ClosedSample;
use crate::model::firewall::FirewallSample;
use crate::model::neigh::NeighSample;
use crate::model::processes::{Container, ProcessInfo};
use crate::model::routes::RoutesSample;
use crate::model::{ConntrackSample, LatePart, Sample};
use anyhow::{Context, Result, bail};
use deadline::Deadlined;
use netns::Target;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// What the sampler thread reports.
#[derive(Debug)]
pub enum SamplerEvent {
    Sample(Box<Sample>),
    /// A tick failed; the sampler keeps going and tries again next tick.
    Error(String),
}

/// Which eBPF programs a sampler loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bpf {
    /// None (`--no-bpf`).
    Off,
    /// Only the connection log's (owners and errors of short connections):
    /// `conns` and `capture -w`, which show nothing of drops or flows.
    ConnLog,
    /// Every program: drop reasons, flow counts, owners.
    All,
}

/// How a sampler takes its first sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Once every eBPF program is loaded: a recording's, a snapshot's or an
    /// exporter's first sample counts from the start.
    Whole,
    /// At once, the drop-reason and connection-owner programs loaded after
    /// it (150 ms of the verifier's time), and the second sample
    /// `QUICK_SECOND` later: the live view's first screen has data, and
    /// its rates follow shortly.
    Quick,
}

/// When a quick start takes its second sample, after the first (at most
/// the interval).
pub const QUICK_SECOND: Duration = Duration::from_millis(250);

/// What a quick start's first sample says of its eBPF parts.
pub const BPF_WAITING: &str = "its eBPF program loads after the first sample";

/// What the viewers want collected beyond the cheap every-tick counters.
/// Shared between the UI (or `snapshot`) and the sampler thread: the UI sets
/// a flag, the sampler reads it at the start of each tick. Only costly
/// collections live here.
#[derive(Debug, Default)]
pub struct Demand {
    /// Dump the conntrack entry list (the Conntrack tab is open, or a
    /// snapshot asked). The collector still dumps at most about once a second.
    pub conntrack_entries: AtomicBool,
    /// The sampling interval in milliseconds, once the setup screen (F2)
    /// changed it; 0: the one the sampler started with.
    pub interval_ms: AtomicU64,
    /// `--all-netns`: sample every network namespace, not only the
    /// watched one (read at each tick).
    pub all_netns: AtomicBool,
    /// Read the firewall's rules every tick (the Drops tab is open, or a
    /// snapshot asked), not only while NETFILTER_DROP drops happen.
    pub firewall_rules: AtomicBool,
    /// Count no flows in the kernel: there is no capture to give them to
    /// (`--no-capture`). Read once, when the collectors start.
    pub no_flow_counts: AtomicBool,
    /// Look up no socket's owner: nothing shown names a process
    /// (`snapshot --section interfaces,tcp,dns`), and on a host with a
    /// million open files a scan of them costs seconds. Read at each tick.
    pub no_owners: AtomicBool,
}

impl Demand {
    pub fn set_conntrack_entries(&self, on: bool) {
        self.conntrack_entries.store(on, Ordering::Relaxed);
    }

    pub fn set_all_netns(&self, on: bool) {
        self.all_netns.store(on, Ordering::Relaxed);
    }

    pub fn set_firewall_rules(&self, on: bool) {
        self.firewall_rules.store(on, Ordering::Relaxed);
    }

    pub fn set_no_flow_counts(&self, on: bool) {
        self.no_flow_counts.store(on, Ordering::Relaxed);
    }

    pub fn set_no_owners(&self, on: bool) {
        self.no_owners.store(on, Ordering::Relaxed);
    }

    pub fn no_owners(&self) -> bool {
        self.no_owners.load(Ordering::Relaxed)
    }

    pub fn firewall_rules(&self) -> bool {
        self.firewall_rules.load(Ordering::Relaxed)
    }

    pub fn all_netns(&self) -> bool {
        self.all_netns.load(Ordering::Relaxed)
    }

    pub fn conntrack_entries(&self) -> bool {
        self.conntrack_entries.load(Ordering::Relaxed)
    }

    pub fn set_interval(&self, interval: Duration) {
        let ms = u64::try_from(interval.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        self.interval_ms.store(ms, Ordering::Relaxed);
    }

    /// The interval to sleep: the changed one, else `started`.
    pub fn interval(&self, started: Duration) -> Duration {
        match self.interval_ms.load(Ordering::Relaxed) {
            0 => started,
            ms => Duration::from_millis(ms),
        }
    }
}

/// The processes holding sockets, since when a container look-up has been
/// outstanding past its wait (if one has), and the containers of the
/// cgroups asked for.
type ProcessesAnswer = (Vec<ProcessInfo>, Option<Instant>, HashMap<u64, Container>);

/// What the processes thread looks up: the sockets' owners (pid and
/// command), and the cgroup v2 ids of the closed connections' owners.
type ProcessesJob = (Vec<(u32, String)>, Vec<u64>);

/// The watched namespace's interfaces' names by index, shared by the
/// parts that label rows with them.
type InterfaceNames = Arc<HashMap<u32, String>>;

/// The interval a sampler starts with unless told: the deadline's base.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// Every collector, created inside the watched namespace.
pub struct Collectors {
    label: String,
    /// On threads of their own, waited for until a deadline: the links
    /// (read first) until `links_deadline`, the others until the tick's.
    links: Deadlined<(), link::LinkRead>,
    neighbours: Deadlined<InterfaceNames, NeighboursAndRoutes>,
    conntrack: Deadlined<bool, ConntrackSample>,
    /// The firewall's rules: None when not read this tick.
    firewall: Deadlined<bool, Option<FirewallSample>>,
    /// When the watched namespace last had NETFILTER_DROP drops, and their
    /// count then: the rules are read while they happen.
    netfilter_drops: (u64, Option<Instant>),
    processes: Deadlined<ProcessesJob, ProcessesAnswer>,
    /// The interval in force: the parts' deadline is within it.
    interval: Duration,
    demand: Arc<Demand>,
    stack: stack::StackCollector,
    /// Host-wide proc files (CPUs, neighbour statistics) and knobs,
    /// shared with the neighbours' thread.
    host_files: Arc<softnet::HostFiles>,
    drops: drops::DropsCollector,
    flows: flows::FlowCounter,
    conn_log: conn_log::ConnLog,
    /// Every other namespace, once `Demand::all_netns` asked for them.
    all: Option<all_netns::AllNamespaces>,
    /// The eBPF programs a quick start loads after its first sample.
    bpf_after_first: Option<Bpf>,
}

impl Collectors {
    /// Must run on a thread that is already in the watched namespace.
    /// Counts no drop reasons (no eBPF program is loaded).
    pub fn new(label: &str) -> Result<Self> {
        Self::with_demand(
            label,
            Arc::default(),
            sysctl::HostKnobs::open(),
            Bpf::Off,
            Start::Whole,
        )
    }

    /// As `new`, collecting also what `demand` asks for; `host_knobs` were
    /// opened before the thread entered the namespace; `bpf` says which
    /// eBPF programs load (a failure only leaves its reason in each
    /// sample); `start`: whether they load now or after the first sample
    /// (`load_bpf_after_first`).
    pub fn with_demand(
        label: &str,
        demand: Arc<Demand>,
        mut host_knobs: sysctl::HostKnobs,
        bpf: Bpf,
        start: Start,
    ) -> Result<Self> {
        let drop_reasons = bpf == Bpf::All;
        // Not deferred (20 ms): its counts must cover every packet the
        // capture, which starts with the sampler, sees.
        let flows = if demand.no_flow_counts.load(Ordering::Relaxed) {
            flows::FlowCounter::off(flows::NO_CAPTURE)
        } else {
            flows::FlowCounter::new(drop_reasons)
        };
        let later = start == Start::Quick && bpf != Bpf::Off;
        let host_files = Arc::new(std::mem::take(&mut host_knobs.host_files));
        // One parse of the kernel's BTF for the loads below, freed after.
        let kernel_btf = (bpf != Bpf::Off && !later).then(btf::kernel);
        let (drops, conn_log) = if later {
            (
                drops::DropsCollector::waiting(label, BPF_WAITING),
                conn_log::ConnLog::open_without_owners(BPF_WAITING),
            )
        } else {
            (
                drops::DropsCollector::new(drop_reasons, label),
                conn_log::ConnLog::open(bpf != Bpf::Off),
            )
        };
        let collectors = Self {
            neighbours: neighbours_part(Arc::clone(&host_files))?,
            host_files,
            label: label.to_string(),
            links: links_part()?,
            conntrack: conntrack_part()?,
            firewall: firewall_part()?,
            netfilter_drops: (0, None),
            processes: processes_part()?,
            interval: DEFAULT_INTERVAL,
            demand,
            stack: stack::StackCollector::new(host_knobs, drop_reasons, later)?,
            drops,
            flows,
            conn_log,
            all: None,
            bpf_after_first: later.then_some(bpf),
        };
        if kernel_btf.is_some() {
            drop(kernel_btf);
            crate::memory::release_freed_memory();
        }
        if collectors.bpf_after_first.is_none() {
            crate::memory::release_code_pages();
        }
        Ok(collectors)
    }

    /// A quick start's eBPF programs, once its first sample is out.
    pub fn load_bpf_after_first(&mut self) {
        let Some(bpf) = self.bpf_after_first.take() else {
            return;
        };
        let kernel_btf = btf::kernel();
        self.drops = drops::DropsCollector::new(bpf == Bpf::All, &self.label);
        self.conn_log.load_owners();
        drop(kernel_btf);
        crate::memory::release_freed_memory();
        crate::memory::release_code_pages();
    }

    pub fn collect(&mut self) -> Result<Sample> {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let mut mono = boottime_seconds();
        let tick_mono = mono;
        let started = Instant::now();
        let deadline = deadline::tick_deadline(started, self.interval);
        // Run meanwhile on their own threads.
        self.conntrack.start(self.demand.conntrack_entries());
        self.firewall.start(self.want_firewall());
        // The links first, near `mono`: their rates are over the time
        // between two reads, which the socket dumps after (long, and of
        // varying length with many sockets or namespaces) would stretch.
        let mut late = Vec::new();
        self.links.start(());
        let links_late = links_deadline(started, self.interval);
        let read = take_late(self.links.finish(links_late), &mut late);
        if let Some(error) = read.error {
            bail!("interface dump failed: {error}");
        }
        // This tick's read times the sample; an earlier one's (the last
        // good one of a late part, or a stuck job's answer) keeps its own
        // time, the interval rates are taken over (`rates::links_interval`).
        let links_mono = if read.mono >= tick_mono {
            mono = read.mono;
            None
        } else {
            (read.mono > 0.0).then_some(read.mono)
        };
        let mut interfaces = read.interfaces;
        // A fifth of the tick for attaching to new interfaces: with
        // thousands, attaching to all at once would hold this sample.
        let flow_counts = self.flows.collect(&interfaces, self.interval / 5);
        // Drained before the dump: the previous dumps know the sockets
        // that ended since, with their owners.
        let mut closed = self.conn_log.drain(t, mono);
        if self.demand.all_netns() && self.all.is_none() {
            self.all = Some(all_netns::AllNamespaces::new()?);
        }
        self.stack.set_all_netns(self.all.is_some());
        self.stack.set_owners(!self.demand.no_owners());
        let mut others = all_netns::Collected::default();
        let (label, all) = (&self.label, &mut self.all);
        let (sockets, tcp, dump_mono) = self
            .stack
            .collect_with(deadline, |counters, sockets| {
                let Some(all) = all else {
                    return Ok(());
                };
                others = all.collect(all_netns::Primary { label, counters }, sockets)?;
                Ok(())
            })
            .context("socket dump failed")?;
        let sockets_mono = Some(dump_mono);
        // The cookies are the watched namespace's, its sockets first.
        let named = self.conn_log.observe(&sockets, self.stack.cookies(), mono);
        closed.add_unowned(named);
        let cpu = softnet::collect(&self.host_files, &interfaces);
        // Shared with the neighbours' thread, not copied for it.
        let ifnames: InterfaceNames = Arc::new(
            interfaces
                .iter()
                .map(|i| (i.index, i.name.clone()))
                .collect(),
        );
        self.neighbours.start(Arc::clone(&ifnames));
        self.processes.start((
            processes::owners(&sockets, &closed),
            processes::owner_cgroups(&closed),
        ));
        // After the watched namespace's, already in (namespace, index) order.
        interfaces.append(&mut others.interfaces);
        let drops = Some(self.drops.collect(&ifnames));
        self.note_netfilter_drops(drops.as_ref());
        let (neighbours, routes) = take_late(self.neighbours.finish(deadline), &mut late);
        let mut conntrack = take_late(self.conntrack.finish(deadline), &mut late);
        // This tick's read is timed by the sample; a late part's keeps its
        // own time, over which no rate is taken (`stats_interval`).
        if conntrack.read_mono.is_some_and(|read| read >= tick_mono) {
            conntrack.read_mono = None;
        }
        let firewall = take_late(self.firewall.finish(deadline), &mut late);
        let (processes, containers, cgroups) =
            take_late(self.processes.finish(deadline), &mut late);
        late.extend(containers.map(|since| late_since("containers", since)));
        label_by_cgroup(&mut closed, &processes, &cgroups);
        if let Some(primary) = others.namespaces.first_mut() {
            primary.conntrack_count = conntrack.count;
        }
        Ok(Sample {
            t,
            mono,
            netns: self.label.clone(),
            drops,
            firewall,
            interfaces,
            conntrack,
            sockets,
            tcp: Some(tcp),
            capture: None,
            dns: None,
            cpu,
            neighbours,
            routes,
            processes: processes.into(),
            closed: Some(closed),
            namespaces: others.namespaces,
            sockets_dropped: false,
            flow_counts: Some(flow_counts),
            late,
            age: None,
            links_mono,
            sockets_mono,
        })
    }
}

impl Collectors {
    /// Whether this tick reads the firewall's rules: asked for, or the
    /// namespace dropped in netfilter within `FIREWALL_AFTER_DROPS` (so the
    /// findings can name the rule; a big ruleset is not read every second
    /// for nothing).
    fn want_firewall(&self) -> bool {
        self.demand.firewall_rules()
            || self
                .netfilter_drops
                .1
                .is_some_and(|at| at.elapsed() < FIREWALL_AFTER_DROPS)
    }

    /// Remembers when the watched namespace's NETFILTER_DROP count last
    /// grew.
    fn note_netfilter_drops(&mut self, drops: Option<&crate::model::drops::DropsSample>) {
        let Some(drops) = drops.filter(|d| d.unavailable.is_none()) else {
            return;
        };
        let count: u64 = drops
            .rows
            .iter()
            .filter(|r| {
                r.reason == crate::model::drops::NETFILTER_DROP
                    && r.netns_inode == drops.netns_inode
            })
            .map(|r| r.packets)
            .sum();
        if count > self.netfilter_drops.0 {
            self.netfilter_drops.1 = Some(Instant::now());
        }
        self.netfilter_drops.0 = count;
    }
}

/// How long the rules are read after the last NETFILTER_DROP drop.
const FIREWALL_AFTER_DROPS: Duration = Duration::from_secs(60);

/// How long a tick waits for the links, which everything after reads:
/// half the interval, so a blocked dump leaves the rest of the tick its
/// time.
fn links_deadline(started: Instant, interval: Duration) -> Instant {
    started + interval / 2
}

/// The links on a thread of their own: the dumps take the RTNL lock, which
/// a driver or another tool may hold for seconds, and ethtool asks the
/// driver itself.
fn links_part() -> Result<Deadlined<(), link::LinkRead>> {
    let mut collector = link::LinkCollector::new()?;
    Deadlined::spawn_at("interfaces", false, move |()| collector.read())
}

/// What the neighbours' thread reads: each None when its dump failed.
type NeighboursAndRoutes = (Option<NeighSample>, Option<RoutesSample>);

/// The neighbour tables and the routes on a thread of their own (a socket
/// of its own: one dump at a time); a failed dump leaves its section
/// empty, not the tick.
fn neighbours_part(
    files: Arc<softnet::HostFiles>,
) -> Result<Deadlined<InterfaceNames, NeighboursAndRoutes>> {
    let mut rtnl = rtnl::Rtnl::new()?;
    let mut routes = routes::RoutesCollector::default();
    Deadlined::spawn_at(
        "neighbours",
        false,
        move |names: Arc<HashMap<u32, String>>| {
            (
                neigh::collect(&mut rtnl, &files, &names).ok(),
                routes.collect(&mut rtnl, &names).ok(),
            )
        },
    )
}

/// The conntrack collector on a thread of its own: a dump of a huge table
/// takes long, and ctnetlink may wait on the kernel.
fn conntrack_part() -> Result<Deadlined<bool, ConntrackSample>> {
    let mut collector = conntrack::ConntrackCollector::new();
    Deadlined::spawn("conntrack", move |entries| collector.collect(entries))
}

/// The firewall's rules on a thread of their own: a ruleset of tens of
/// thousands of rules takes a while to dump and render. None when the
/// tick does not ask.
fn firewall_part() -> Result<Deadlined<bool, Option<FirewallSample>>> {
    let mut collector = firewall::FirewallCollector::new();
    Deadlined::spawn("firewall", move |wanted: bool| {
        wanted.then(|| collector.collect())
    })
}

/// The sockets' owners on a thread of their own: /proc of a process stuck
/// in the kernel, or a user's container store, may not answer.
fn processes_part() -> Result<Deadlined<ProcessesJob, ProcessesAnswer>> {
    let mut table = processes::ProcessTable::default();
    Deadlined::spawn("processes", move |(owners, cgroups): ProcessesJob| {
        // First: the containers it names stay cached by `collect_owners`.
        let cgroups = table.cgroup_containers(&cgroups);
        let list = table.collect_owners(owners);
        (list, table.containers_late_since(), cgroups)
    })
}

/// Gives each closed connection whose process is not known to run in a
/// container (gone before it was looked up) the container of its cgroup.
fn label_by_cgroup(
    closed: &mut ClosedSample,
    processes: &[ProcessInfo],
    cgroups: &HashMap<u64, Container>,
) {
    let contained: HashSet<u32> = processes
        .iter()
        .filter(|p| p.container.is_some())
        .map(|p| p.pid)
        .collect();
    for conn in &mut closed.conns {
        if conn.pid().is_some_and(|pid| contained.contains(&pid)) {
            continue;
        }
        let container = conn.cgroup.and_then(|id| cgroups.get(&id));
        conn.cgroup_container = container.map(|c| Box::new(c.clone()));
    }
}

/// The data of `answer`, its lateness (if late) pushed onto `late`.
fn take_late<T>(answer: deadline::Answer<T>, late: &mut Vec<LatePart>) -> T {
    late.extend(answer.late);
    answer.data
}

fn late_since(part: &str, since: Instant) -> LatePart {
    LatePart {
        part: part.to_string(),
        age_ms: u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// A copy of a /proc file from tests/data/proc, for the parsers' tests.
#[cfg(test)]
pub(crate) fn proc_fixture(name: &str) -> String {
    let path = format!("{}/tests/data/proc/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// CLOCK_BOOTTIME: monotonic and counts suspend, so rates stay right.
/// Raises the soft descriptor limit to the hard one (the soft 1024 a
/// shell gives would let a few hundred namespaces or scrapers exhaust it)
/// and returns the soft limit in force.
pub fn raise_descriptor_limit() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write `limit`.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}

pub fn boottime_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// The collector thread. It sleeps its interval but wakes at once when the
/// Sampler is dropped.
pub struct Sampler {
    demand: Arc<Demand>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Enters `target`, builds the collectors and starts sampling. Returns
    /// only after that setup worked, so a bad namespace or a missing
    /// permission is an error here, before any terminal setup.
    pub fn spawn(
        target: Target,
        interval: Duration,
    ) -> Result<(Self, UnboundedReceiver<SamplerEvent>)> {
        Self::spawn_with(target, interval, Arc::default(), Bpf::All, Start::Whole)
    }

    /// As `spawn`, with `demand` set before the first sample is taken (a
    /// one-shot `snapshot` that wants conntrack entries sets it here);
    /// `bpf` says which eBPF programs load, `start` when.
    pub fn spawn_with(
        target: Target,
        interval: Duration,
        demand: Arc<Demand>,
        bpf: Bpf,
        start: Start,
    ) -> Result<(Self, UnboundedReceiver<SamplerEvent>)> {
        let thread_demand = Arc::clone(&demand);
        let namespace = target.open()?;
        let (events, receiver) = unbounded_channel();
        let (stop, stopped) = mpsc::channel::<()>();
        let (ready, is_ready) = mpsc::channel::<Result<()>>();
        let thread = std::thread::Builder::new()
            .name("sampler".into())
            .spawn(move || {
                priority::lower_this_thread();
                // Still in netlens' own namespace: open the host-wide knobs.
                let host_knobs = sysctl::HostKnobs::open();
                let setup = namespace
                    .as_ref()
                    .map_or(Ok(()), |file| netns::enter(file, target.label()))
                    .and_then(|()| {
                        Collectors::with_demand(
                            target.label(),
                            thread_demand,
                            host_knobs,
                            bpf,
                            start,
                        )
                    });
                match setup {
                    Ok(collectors) => {
                        let _ = ready.send(Ok(()));
                        run(collectors, interval, &events, &stopped, start);
                    }
                    Err(error) => {
                        let _ = ready.send(Err(error));
                    }
                }
            })
            .context("cannot start the sampler thread")?;
        is_ready
            .recv()
            .context("the sampler thread died during setup")??;
        Ok((
            Self {
                demand,
                stop: Some(stop),
                thread: Some(thread),
            },
            receiver,
        ))
    }
}

impl Sampler {
    /// The flags the viewer sets to ask for costly collections.
    pub fn demand(&self) -> Arc<Demand> {
        Arc::clone(&self.demand)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(
    mut collectors: Collectors,
    interval: Duration,
    events: &UnboundedSender<SamplerEvent>,
    stopped: &mpsc::Receiver<()>,
    start: Start,
) {
    // Ticks on a fixed schedule so the interval does not drift by the
    // collection time.
    let mut next = Instant::now();
    let mut first = true;
    loop {
        collectors.interval = collectors.demand.interval(interval);
        let event = match collectors.collect() {
            Ok(sample) => SamplerEvent::Sample(Box::new(sample)),
            Err(error) => SamplerEvent::Error(format!("{error:#}")),
        };
        if events.send(event).is_err() {
            return;
        }
        let wanted = collectors.demand.interval(interval);
        if std::mem::take(&mut first) && start == Start::Quick {
            collectors.load_bpf_after_first();
            next += wanted.min(QUICK_SECOND);
        } else {
            next += wanted;
        }
        let now = Instant::now();
        if next < now {
            next = now; // fell behind (suspend, overload): do not burst
        }
        match stopped.recv_timeout(next - now) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
