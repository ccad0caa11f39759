//! Which process holds a socket, as `ss -p` finds it: the /proc/PID/fd
//! links "socket:[INODE]" of the processes in the watched namespace
//! (`procfs`), or where the eBPF iterators load, the same processes and
//! their socket fds listed in the kernel (`bpf`).
//!
//! The lookup runs on a thread of its own beside the sampler: a sample
//! waits for a scan at most until its tick's deadline, as for its other
//! parts (a host with a million open files once froze the sampler 9 s per
//! new socket), then takes the owners known. A socket whose owner is
//! still being looked for is `Pending`; it fills in at a later sample. The
//! thread keeps the sampler's priority: the sampler waits on it.

pub mod bpf;
pub mod procfs;

use crate::model::sockets::{Owners, ProcessName, SocketUser};
use procfs::{ProcWalk, Reach};
use std::collections::hash_map::Entry;
// foldhash: a sample looks up every socket's inode here, a million a
// second at scale; SipHash made the owner map the sampler's top function.
use foldhash::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// While a live socket stays without an owner, fds and processes
/// remembered as not ours are read again at most this often (or 20 times
/// as long as the last recheck took, so rechecks use at most 5% of a core).
const RECHECK: Duration = Duration::from_secs(5);

/// Socket inodes (foldhash: see the import).
pub type Inodes = HashSet<u32>;

/// What a scan found changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Opened { inode: u32, user: SocketUser },
    Closed { inode: u32, pid: u32, fd: u32 },
}

/// What is known of a socket's owner.
#[derive(Debug, PartialEq, Eq)]
pub enum Owner {
    Known(Owners),
    /// The last scan found no process (that netlens may look at) holding it.
    Unowned,
    /// Not looked for yet: a scan is under way or about to be.
    Pending,
}

/// A socket's first holder: the process and its fd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Holder {
    pid: u32,
    fd: u32,
}

/// Every known holder of every socket, shared by the lookup thread (which
/// writes it between scans) and the sampler (which reads it each tick).
#[derive(Default)]
pub struct OwnerMap {
    /// The first process found holding each socket, inline: a million
    /// sockets are a million owners, so 8 bytes (the name is in `names`),
    /// where a SocketUser was 24 and a Vec each a million allocations.
    by_inode: HashMap<u32, Holder>,
    /// The name of each process in `by_inode`, and how many of its
    /// sockets are there.
    names: HashMap<u32, (ProcessName, u32)>,
    /// Every holder of the sockets more than one process holds (the
    /// first included), in the order found.
    shared: HashMap<u32, Vec<SocketUser>>,
    /// Live inodes no process held at the last scan.
    unowned: Inodes,
    /// Inodes whose holders changed since the sampler last asked
    /// (`take_touched`); `all_touched` after a reset.
    touched: Inodes,
    all_touched: bool,
    /// The last scan met a process it could not look at.
    denied: bool,
    scans: u64,
    /// How owners are found: the iterator, or /proc and why.
    source: String,
}

impl OwnerMap {
    pub fn owner(&self, inode: u32) -> Owner {
        if let Some(users) = self.shared.get(&inode) {
            return Owner::Known(users.iter().cloned().collect());
        }
        match self.by_inode.get(&inode) {
            Some(holder) => Owner::Known([self.user(*holder)].into_iter().collect()),
            None if self.unowned.contains(&inode) => Owner::Unowned,
            None => Owner::Pending,
        }
    }

    /// Not looked for yet (`Owner::Pending`), without building the owners.
    fn is_pending(&self, inode: u32) -> bool {
        !self.by_inode.contains_key(&inode)
            && !self.unowned.contains(&inode)
            && !self.shared.contains_key(&inode)
    }

    /// The inodes whose holders changed since the last call, or None when
    /// any may have (the map was reset): the sampler keeps the owners of
    /// the others from its last dump instead of looking each one up.
    pub fn take_touched(&mut self) -> Option<Inodes> {
        let touched = std::mem::take(&mut self.touched);
        (!std::mem::replace(&mut self.all_touched, false)).then_some(touched)
    }

    /// Whether a socket without a known owner may be owned by a process
    /// netlens may not look at.
    pub fn denied(&self) -> bool {
        self.denied
    }

    /// "bpf task_file iterator", or "/proc" and why not the iterator.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Scans so far (for tests of the cache).
    pub fn scans(&self) -> u64 {
        self.scans
    }

    pub fn apply(&mut self, change: Change) {
        match change {
            Change::Opened { inode, user } => self.add(inode, user),
            Change::Closed { inode, pid, fd } => self.remove(inode, pid, fd),
        }
    }

    /// After a scan: when it read every process (`complete`), the live
    /// sockets still without an owner have none to be found; after one
    /// that stopped early, only those found leave the unowned.
    pub fn finish_scan(&mut self, live: &Inodes, complete: bool, denied: bool) {
        if complete {
            self.unowned = live
                .iter()
                .filter(|i| !self.by_inode.contains_key(i))
                .copied()
                .collect();
            self.denied = denied;
        } else {
            let known = &self.by_inode;
            self.unowned.retain(|i| !known.contains_key(i));
        }
        self.scans += 1;
    }

    /// One scan by `walk`, applied at once: what the lookup thread does
    /// for a sample, without the thread (for tests and benches).
    pub fn scan_now(&mut self, walk: &mut ProcWalk, live: &Inodes, reach: Reach) {
        let mut changes = Vec::new();
        let complete = walk.scan(live, reach, &AtomicBool::new(false), &mut changes);
        for change in changes {
            self.apply(change);
        }
        self.finish_scan(live, complete, walk.denied);
    }

    fn user(&self, holder: Holder) -> SocketUser {
        let process = self.names.get(&holder.pid).map(|(name, _)| name.clone());
        SocketUser {
            process: process.unwrap_or_else(|| "?".into()),
            pid: holder.pid,
            fd: holder.fd,
        }
    }

    /// One more holder of `inode`.
    fn add(&mut self, inode: u32, user: SocketUser) {
        self.unowned.remove(&inode);
        self.touched.insert(inode);
        match self.by_inode.entry(inode) {
            Entry::Vacant(entry) => {
                entry.insert(Holder {
                    pid: user.pid,
                    fd: user.fd,
                });
                let name = self
                    .names
                    .entry(user.pid)
                    .or_insert((user.process.clone(), 0));
                // A pid reused since: the newest name.
                name.0 = user.process;
                name.1 += 1;
            }
            Entry::Occupied(first) => {
                let first = *first.get();
                let first = self.user(first);
                self.shared
                    .entry(inode)
                    .or_insert_with(|| vec![first])
                    .push(user);
            }
        }
    }

    /// `inode` no longer has `holder` first in `by_inode`.
    fn unname(&mut self, holder: Holder) {
        if let Entry::Occupied(mut name) = self.names.entry(holder.pid) {
            name.get_mut().1 -= 1;
            if name.get().1 == 0 {
                name.remove();
            }
        }
    }

    /// `fd` of `pid` no longer holds `inode`: the next holder, if any, leads.
    fn remove(&mut self, inode: u32, pid: u32, fd: u32) {
        self.touched.insert(inode);
        let holds = |u: &SocketUser| u.pid == pid && u.fd == fd;
        if let Some(users) = self.shared.get_mut(&inode) {
            users.retain(|u| !holds(u));
            let next = users.first().cloned();
            if users.len() <= 1 {
                self.shared.remove(&inode);
            }
            if let Some(old) = self.by_inode.remove(&inode) {
                self.unname(old);
            }
            if let Some(next) = next {
                self.add(inode, next);
            }
        } else if self
            .by_inode
            .get(&inode)
            .is_some_and(|h| h.pid == pid && h.fd == fd)
            && let Some(old) = self.by_inode.remove(&inode)
        {
            self.unname(old);
        }
    }

    /// Knows nothing (the scans and the source stay).
    fn reset(&mut self) {
        let (scans, source) = (self.scans, std::mem::take(&mut self.source));
        *self = Self {
            scans,
            source,
            all_touched: true,
            ..Self::default()
        };
    }

    /// Forgets a socket that ended; returns the (pid, fd)s that held it.
    fn remove_inode(&mut self, inode: u32) -> Vec<(u32, u32)> {
        self.touched.insert(inode);
        let first = self.by_inode.remove(&inode);
        if let Some(first) = first {
            self.unname(first);
        }
        let users = self.shared.remove(&inode).unwrap_or_default();
        let first = first.map(|h| (h.pid, h.fd));
        first
            .into_iter()
            .chain(users.iter().map(|u| (u.pid, u.fd)))
            .collect()
    }
}

/// The live sockets of one sample.
struct Request {
    live: Inodes,
    /// `--all-netns`: every process may hold them.
    all_netns: bool,
}

/// The lookup thread and the map it fills.
pub struct OwnerLookup {
    map: Arc<Mutex<OwnerMap>>,
    requests: Option<Sender<Request>>,
    /// Requests sent, and (shared with the thread) requests answered.
    sent: u64,
    answered: Arc<(Mutex<u64>, Condvar)>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl OwnerLookup {
    /// `netns`: the watched namespace's nsfs inode (its processes are
    /// looked at); None: every process. Called on the sampler thread, the
    /// lookup thread inherits its namespace. `bpf`: try the iterator first
    /// (NETLENS_OWNERS=proc also says no). `iterator_after_first`: the
    /// first look-up walks /proc and the iterator loads after it (a quick
    /// start: the verifier's time is not the first sample's).
    pub fn start(netns: Option<u64>, bpf: bool, iterator_after_first: bool) -> Self {
        let map = Arc::new(Mutex::new(OwnerMap::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (requests, received) = mpsc::channel();
        let answered = Arc::new((Mutex::new(0), Condvar::new()));
        let bpf = bpf && std::env::var("NETLENS_OWNERS").as_deref() != Ok("proc");
        let worker = Worker {
            walk: ProcWalk::new(netns),
            kernel: None,
            bpf,
            netns,
            all_netns: false,
            live: HashSet::default(),
            // The first socket left without an owner by the namespace's
            // processes is looked for at once; later ones within the rule.
            next_recheck: Instant::now(),
            next_full: Instant::now(),
            not_at_openers: Inodes::default(),
            stop: Arc::clone(&stop),
            answered: Arc::clone(&answered),
        };
        let shared = Arc::clone(&map);
        let thread = std::thread::Builder::new()
            .name("owners".into())
            .spawn(move || {
                let mut worker = worker;
                if iterator_after_first {
                    lock(&shared).source = format!("/proc ({})", super::BPF_WAITING);
                } else {
                    worker.load_kernel(&shared);
                }
                worker.run(&shared, &received, iterator_after_first);
            })
            .ok();
        Self {
            map,
            requests: thread.as_ref().map(|_| requests),
            sent: 0,
            answered,
            stop,
            thread,
        }
    }

    /// Asks for the owners of the sockets in `live`, and waits at most
    /// `wait` for the answer.
    pub fn request(&mut self, live: Inodes, all_netns: bool, wait: Duration) {
        let Some(requests) = &self.requests else {
            return;
        };
        if requests.send(Request { live, all_netns }).is_err() {
            return;
        }
        self.sent += 1;
        let (answered, changed) = &*self.answered;
        let answered = answered.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = changed.wait_timeout_while(answered, wait, |n| *n < self.sent);
    }

    /// The owners known now.
    pub fn map(&self) -> MutexGuard<'_, OwnerMap> {
        lock(&self.map)
    }
}

impl Drop for OwnerLookup {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        drop(self.requests.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock(map: &Mutex<OwnerMap>) -> MutexGuard<'_, OwnerMap> {
    map.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Worker {
    walk: ProcWalk,
    /// The iterator, when it loads; the /proc walk otherwise.
    kernel: Option<bpf::Walk>,
    /// The iterator may be tried.
    bpf: bool,
    netns: Option<u64>,
    all_netns: bool,
    /// The live sockets of the newest request.
    live: Inodes,
    next_recheck: Instant,
    /// A scan for new sockets reads every process from then on (else
    /// maybe the recent openers alone: `scan_reach`).
    next_full: Instant,
    /// The sockets the last scan of the openers did not find.
    not_at_openers: Inodes,
    stop: Arc<AtomicBool>,
    /// Requests answered, for `OwnerLookup::request` to wait on.
    answered: Arc<(Mutex<u64>, Condvar)>,
}

impl Worker {
    /// The iterator for the namespace(s) watched now, or why not.
    fn load_kernel(&mut self, map: &Mutex<OwnerMap>) {
        let netns = if self.all_netns { None } else { self.netns };
        let loaded = if self.bpf {
            // nsfs inodes are 32-bit (ns.inum); 0 asks for every namespace.
            bpf::load(netns.map_or(0, |n| n as u32))
        } else {
            Err("eBPF not asked for".into())
        };
        let source = match loaded {
            Ok(walk) => {
                self.kernel = Some(walk);
                "bpf task_file iterator".to_string()
            }
            Err(why) => {
                self.kernel = None;
                format!("/proc ({why})")
            }
        };
        lock(map).source = source;
        crate::memory::release_freed_memory();
    }

    /// Answers `requests`; `load_after_first`: loads the iterator once the
    /// first is answered.
    fn run(mut self, map: &Mutex<OwnerMap>, requests: &Receiver<Request>, load_after_first: bool) {
        let mut load_after_first = load_after_first;
        let mut received = 0;
        while let Ok(request) = requests.recv() {
            received += 1;
            self.retire(map, request);
            // Samples that came during a long scan: only the newest is
            // looked up, but every socket that ended is forgotten.
            while let Ok(newer) = requests.try_recv() {
                received += 1;
                self.retire(map, newer);
            }
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            self.look_up(map);
            let (answered, changed) = &*self.answered;
            *answered.lock().unwrap_or_else(PoisonError::into_inner) = received;
            changed.notify_all();
            if std::mem::take(&mut load_after_first) {
                self.load_kernel(map);
            }
        }
    }

    /// Forgets the sockets that ended since the last request: their fds
    /// were closed, and are read again if listed.
    fn retire(&mut self, map_mutex: &Mutex<OwnerMap>, request: Request) {
        let mut map = lock(map_mutex);
        if request.all_netns != self.all_netns {
            self.all_netns = request.all_netns;
            self.walk
                .set_netns(if request.all_netns { None } else { self.netns });
            map.reset();
            drop(map);
            self.load_kernel(map_mutex);
            map = lock(map_mutex);
        }
        for inode in self.live.iter().filter(|i| !request.live.contains(i)) {
            for (pid, fd) in map.remove_inode(*inode) {
                self.walk.forget(pid, fd);
                if let Some(kernel) = &mut self.kernel {
                    kernel.forget(pid, fd);
                }
            }
        }
        map.unowned.retain(|i| request.live.contains(i));
        self.live = request.live;
    }

    /// Scans when a live socket's owner is not known, or (a recheck) when
    /// some stayed without one and the last recheck is long enough ago;
    /// how far, `scan_reach` says.
    fn look_up(&mut self, map: &Mutex<OwnerMap>) {
        let (wanted, unowned) = {
            let map = lock(map);
            let wanted: Inodes = self
                .live
                .iter()
                .filter(|i| map.is_pending(**i))
                .copied()
                .collect();
            (wanted, !map.unowned.is_empty())
        };
        let now = Instant::now();
        let recheck = unowned && now >= self.next_recheck;
        if wanted.is_empty() && !recheck {
            return;
        }
        let reach = scan_reach(
            recheck,
            now >= self.next_full || !self.walk.has_openers(),
            &wanted,
            &self.not_at_openers,
        );
        let mut changes = Vec::new();
        // The iterator reads every process each time.
        let (complete, failed) = match self.kernel.as_mut().map(|k| k.scan(recheck, &mut changes)) {
            Some(Ok(())) => (true, None),
            Some(Err(why)) => (false, Some(why)),
            None => {
                let complete = self.walk.scan(&self.live, reach, &self.stop, &mut changes);
                if complete {
                    self.next_full = Instant::now() + RECHECK.max(now.elapsed() * 20);
                }
                (complete, None)
            }
        };
        if let Some(why) = failed {
            // The iterator stopped working: /proc from scratch.
            self.kernel = None;
            let mut map = lock(map);
            map.reset();
            map.source = format!("/proc (the iterator failed: {why})");
            return;
        }
        if recheck {
            self.next_recheck = Instant::now() + RECHECK.max(now.elapsed() * 20);
        }
        let denied = self.kernel.is_none() && self.walk.denied;
        let mut map = lock(map);
        for change in changes {
            map.apply(change);
        }
        map.finish_scan(&self.live, complete, denied);
        self.not_at_openers = match reach {
            Reach::Openers(_) => wanted.into_iter().filter(|i| map.is_pending(*i)).collect(),
            Reach::Every | Reach::Recheck => Inodes::default(),
        };
    }
}

/// How far a scan for the `wanted` sockets reads /proc: every process
/// for a recheck, when a scan of every process is due (`every_due`: at
/// least every `RECHECK`, or there is no recent opener), or when a socket
/// the last scan of the openers did not find is still wanted (a socket of
/// another process; most of those it misses were short connections, gone
/// by now). Else the recent openers alone: a server's new connections are
/// its workers', and listing the fds of every process is 0.5 s of the
/// kernel's time at a million.
fn scan_reach<'a>(
    recheck: bool,
    every_due: bool,
    wanted: &'a Inodes,
    not_at_openers: &Inodes,
) -> Reach<'a> {
    if recheck {
        Reach::Recheck
    } else if every_due || wanted.iter().any(|i| not_at_openers.contains(i)) {
        Reach::Every
    } else {
        Reach::Openers(wanted)
    }
}

#[cfg(test)]
mod tests;
