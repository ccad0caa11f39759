//! The /proc walk behind socket owners: the fds of the processes in the
//! watched namespace, each read once.
//!
//! A host may hold a million open files elsewhere; reading every fd link
//! of every process (what `ss -p` does) took 9 s per new socket. So:
//! - A process is looked at only if it is in the watched namespace: one
//!   stat of /proc/PID/ns/net, remembered with the process's start time
//!   (a reused pid has another, and is checked again: at each scan for a
//!   process in the namespace, at a recheck for one outside). `--all-netns`
//!   watches every process.
//! - An fd read once is remembered: a socket by its inode, anything else
//!   as "not one of ours". Only new fd numbers are read at the next scan.
//! - An fd number closed and reused between two scans is the hole: its
//!   listing looks the same. A socket fd is trusted only while its inode
//!   is among the live sockets (a socket that ended was closed, so its fd
//!   is read again); a non-socket fd and a process outside the namespace
//!   are checked again only by a recheck, which the caller runs while some
//!   live socket stays without an owner, at most every few seconds. So a
//!   reused fd costs one recheck, and the cost is bounded by the rate.
//! - Listing a process's fds costs the kernel about half a microsecond an
//!   fd whether or not any is read, 0.5 s at a million. A scan for new
//!   sockets may list only the processes that opened sockets at recent
//!   scans (a server's workers: `Reach::Openers`), stopping once every new
//!   socket has a holder. The caller lists every process when a socket
//!   they did not hold is still live at the next sample (most such
//!   sockets were short connections, closed by then), and at least every
//!   few seconds: so a second holder of a new socket in a process not
//!   listed (a fork, a passed fd) shows within those seconds.

use super::Change;
use super::Inodes;
use crate::model::sockets::{ProcessName, SocketUser};
use crate::text;
use foldhash::{HashMap, HashSet};
use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// What is known of one process.
struct Proc {
    /// Field 22 of /proc/PID/stat: a reused pid has another.
    start: u64,
    /// In the watched namespace (or every process is watched).
    watched: bool,
    /// Read with its first socket.
    comm: Option<ProcessName>,
    /// fd -> socket inode.
    sockets: HashMap<u32, u32>,
    /// fds known not to be sockets.
    others: FdSet,
    /// Its fds were listed once.
    read: bool,
}

/// fd numbers as bits: 20,000 fds are 2.5 KB, not a hash map's 300 KB.
#[derive(Default)]
struct FdSet(Vec<u64>);

impl FdSet {
    fn insert(&mut self, fd: u32) {
        let word = fd as usize / 64;
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (fd % 64);
    }

    fn contains(&self, fd: u32) -> bool {
        self.0
            .get(fd as usize / 64)
            .is_some_and(|w| w & (1 << (fd % 64)) != 0)
    }
}

/// How much of /proc a scan reads.
#[derive(Debug, Clone, Copy)]
pub enum Reach<'a> {
    /// Every watched process: the fds not read before.
    Every,
    /// Every watched process, and again every fd and process remembered
    /// as not ours.
    Recheck,
    /// The recent openers alone, until each of these inodes has a holder.
    Openers(&'a Inodes),
}

/// Processes remembered as recent openers, at most.
const OPENERS: usize = 64;

/// A process that opened a socket since it was last read is an opener
/// for this many scans after.
const OPENER_SCANS: u64 = 100;

pub struct ProcWalk {
    /// "/proc"; a tree of files and symlinks shaped like it in tests.
    root: PathBuf,
    /// The watched namespace's nsfs inode; None: every process.
    netns: Option<u64>,
    /// netlens itself: its sampler thread is in the namespace though its
    /// main thread (what /proc/PID/ns/net shows) may not be.
    own_pid: u32,
    procs: HashMap<u32, Proc>,
    /// The processes a scan found with sockets opened since their last
    /// read, and that scan's number, newest first: what `Reach::Openers`
    /// reads.
    openers: Vec<(u32, u64)>,
    scans: u64,
    /// fd links read so far (for tests of the cache).
    pub readlinks: u64,
    /// fd directories listed so far (for tests of the scan's reach).
    pub fd_dirs_read: u64,
    /// The last scan met a process it could not look at.
    pub denied: bool,
}

impl ProcWalk {
    pub fn new(netns: Option<u64>) -> Self {
        Self::with_root("/proc".into(), netns, std::process::id())
    }

    pub fn with_root(root: PathBuf, netns: Option<u64>, own_pid: u32) -> Self {
        Self {
            root,
            netns,
            own_pid,
            procs: HashMap::default(),
            openers: Vec::new(),
            scans: 0,
            readlinks: 0,
            fd_dirs_read: 0,
            denied: false,
        }
    }

    /// `None` watches every process from the next scan on.
    pub fn set_netns(&mut self, netns: Option<u64>) {
        if netns != self.netns {
            self.netns = netns;
            self.procs.clear(); // their `watched` is for the other setting
        }
    }

    /// Whether any process opened sockets at a recent scan.
    pub fn has_openers(&self) -> bool {
        !self.openers.is_empty()
    }

    /// Forgets that `fd` of `pid` was read (its socket ended).
    pub fn forget(&mut self, pid: u32, fd: u32) {
        if let Some(proc) = self.procs.get_mut(&pid) {
            proc.sockets.remove(&fd);
        }
    }

    /// Reads what changed since the last scan into `changes`, as far as
    /// `reach` says; returns whether every watched process was read (a
    /// scan of the openers knows nothing of the others: it neither drops
    /// the processes gone nor says a socket has no holder). Stops early
    /// (changes so far kept) once `stop` is set.
    pub fn scan(
        &mut self,
        live: &Inodes,
        reach: Reach,
        stop: &AtomicBool,
        changes: &mut Vec<Change>,
    ) -> bool {
        self.scans += 1;
        if let Reach::Openers(wanted) = reach {
            let openers: Vec<u32> = self.openers.iter().map(|(pid, _)| *pid).collect();
            let mut missing = wanted.clone();
            for pid in openers {
                if missing.is_empty() || stop.load(Ordering::Relaxed) {
                    break;
                }
                let first = changes.len();
                self.read_process(pid, live, false, changes);
                for change in &changes[first..] {
                    if let Change::Opened { inode, .. } = change {
                        missing.remove(inode);
                    }
                }
            }
            self.forget_old_openers();
            return false;
        }
        let recheck = matches!(reach, Reach::Recheck);
        self.denied = false;
        let Ok(dir) = fs::read_dir(&self.root) else {
            self.denied = true;
            return false;
        };
        let mut alive = HashSet::default();
        for entry in dir.flatten() {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            // A process outside the namespace costs nothing until a
            // recheck: reading every process's stat at each scan was 3 ms
            // per 1,000 processes (so a pid reused by a process in the
            // namespace is seen at the next recheck).
            if !recheck && self.procs.get(&pid).is_some_and(|p| !p.watched) {
                alive.insert(pid);
                continue;
            }
            if self.read_process(pid, live, recheck, changes) {
                alive.insert(pid);
            }
        }
        let gone: Vec<u32> = self
            .procs
            .keys()
            .filter(|pid| !alive.contains(pid))
            .copied()
            .collect();
        for pid in gone {
            self.drop_process(pid, changes);
        }
        self.forget_old_openers();
        true
    }

    /// Reads process `pid` (its fds if it is watched); false when it is
    /// gone (then dropped).
    fn read_process(
        &mut self,
        pid: u32,
        live: &Inodes,
        recheck: bool,
        changes: &mut Vec<Change>,
    ) -> bool {
        let Some(start) = self.start_time(pid) else {
            self.drop_process(pid, changes);
            return false;
        };
        let known = self.procs.get(&pid).map(|p| p.start);
        if known.is_some_and(|s| s != start) {
            self.drop_process(pid, changes); // the pid was reused
        }
        if known != Some(start) {
            let watched = self.watched(pid);
            self.procs.insert(pid, Proc::new(start, watched));
        } else if recheck && !self.procs[&pid].watched {
            let watched = self.watched(pid);
            self.procs.get_mut(&pid).expect("present").watched = watched;
        }
        if self.procs[&pid].watched {
            let first = changes.len();
            let read_before = self.procs[&pid].read;
            self.read_fds(pid, live, recheck, changes);
            let opened = changes[first..]
                .iter()
                .any(|c| matches!(c, Change::Opened { .. }));
            // A process read for the first time shows all its sockets:
            // that is not opening them.
            if opened && read_before {
                self.openers.retain(|(p, _)| *p != pid);
                self.openers.insert(0, (pid, self.scans));
            }
        }
        true
    }

    fn forget_old_openers(&mut self) {
        let scans = self.scans;
        self.openers
            .retain(|(_, at)| scans.saturating_sub(*at) <= OPENER_SCANS);
        self.openers.truncate(OPENERS);
    }

    fn drop_process(&mut self, pid: u32, changes: &mut Vec<Change>) {
        self.openers.retain(|(p, _)| *p != pid);
        if let Some(proc) = self.procs.remove(&pid) {
            for (fd, inode) in proc.sockets {
                changes.push(Change::Closed { inode, pid, fd });
            }
        }
    }

    /// Reads the fds not read before (with `recheck`: every fd but the
    /// live sockets'), and notes the sockets closed since. The fds known
    /// stay in place: at a million sockets, rebuilding each process's map
    /// at every scan was most of the scan's own time.
    fn read_fds(&mut self, pid: u32, live: &Inodes, recheck: bool, out: &mut Vec<Change>) {
        let fd_dir = self.root.join(pid.to_string()).join("fd");
        let entries = match fs::read_dir(&fd_dir) {
            Ok(entries) => entries,
            Err(error) => {
                self.denied |= error.kind() == ErrorKind::PermissionDenied;
                return; // gone, or a kernel thread
            }
        };
        self.fd_dirs_read += 1;
        let proc = self.procs.get_mut(&pid).expect("inserted by scan");
        proc.read = true;
        // The socket fds listed now (`listed` of them), and the others.
        let (mut seen, mut listed) = (FdSet::default(), 0);
        let mut others = FdSet::default();
        for entry in entries.flatten() {
            let Some(fd) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let known = proc.sockets.get(&fd).copied();
            let trusted = match known {
                Some(inode) => live.contains(&inode),
                None => !recheck && proc.others.contains(fd),
            };
            if trusted {
                match known {
                    Some(_) => {
                        seen.insert(fd);
                        listed += 1;
                    }
                    None => others.insert(fd),
                }
                continue;
            }
            self.readlinks += 1;
            let Ok(target) = fs::read_link(entry.path()) else {
                continue; // closed meanwhile: unseen, so closed below
            };
            let now = socket_inode(target.as_os_str().as_encoded_bytes());
            match now {
                Some(inode) => {
                    proc.sockets.insert(fd, inode);
                    seen.insert(fd);
                    listed += 1;
                }
                None => {
                    proc.sockets.remove(&fd);
                    others.insert(fd);
                }
            }
            if known == now {
                continue;
            }
            if let Some(inode) = known {
                out.push(Change::Closed { inode, pid, fd });
            }
            if let Some(inode) = now {
                let process = proc
                    .comm
                    .get_or_insert_with(|| comm(&self.root, pid))
                    .clone();
                out.push(Change::Opened {
                    inode,
                    user: SocketUser { process, pid, fd },
                });
            }
        }
        // Socket fds no longer listed were closed.
        if listed < proc.sockets.len() {
            proc.sockets.retain(|fd, inode| {
                let open = seen.contains(*fd);
                if !open {
                    out.push(Change::Closed {
                        inode: *inode,
                        pid,
                        fd: *fd,
                    });
                }
                open
            });
        }
        proc.others = others;
    }

    /// Field 22 (starttime) of /proc/PID/stat; the name (field 2) may hold
    /// spaces and parentheses, so fields are counted after its last ')'.
    fn start_time(&self, pid: u32) -> Option<u64> {
        let stat = fs::read(self.root.join(pid.to_string()).join("stat")).ok()?;
        let close = stat.iter().rposition(|b| *b == b')')?;
        let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
        rest.split_ascii_whitespace().nth(19)?.parse().ok()
    }

    fn watched(&mut self, pid: u32) -> bool {
        let Some(netns) = self.netns else {
            return true;
        };
        if pid == self.own_pid {
            return true;
        }
        let path = self.root.join(pid.to_string()).join("ns").join("net");
        match fs::metadata(path) {
            Ok(meta) => meta.ino() == netns,
            Err(error) => {
                self.denied |= error.kind() == ErrorKind::PermissionDenied;
                false
            }
        }
    }
}

impl Proc {
    fn new(start: u64, watched: bool) -> Self {
        Self {
            start,
            watched,
            comm: None,
            sockets: HashMap::default(),
            others: FdSet::default(),
            read: false,
        }
    }
}

/// "socket:[12345]" -> 12345.
pub fn socket_inode(link: &[u8]) -> Option<u32> {
    let digits = link.strip_prefix(b"socket:[")?.strip_suffix(b"]")?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The process's name as its owner set it (prctl PR_SET_NAME: any 15
/// bytes), bounded and without control characters.
fn comm(root: &std::path::Path, pid: u32) -> ProcessName {
    fs::read(root.join(pid.to_string()).join("comm"))
        .map(|bytes| {
            let name = text::bounded_name_bytes(bytes.strip_suffix(b"\n").unwrap_or(&bytes));
            ProcessName::from(name.as_str())
        })
        .unwrap_or_else(|_| "?".into())
}
