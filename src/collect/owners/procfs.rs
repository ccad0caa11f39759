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

pub struct ProcWalk {
    /// "/proc"; a tree of files and symlinks shaped like it in tests.
    root: PathBuf,
    /// The watched namespace's nsfs inode; None: every process.
    netns: Option<u64>,
    /// netlens itself: its sampler thread is in the namespace though its
    /// main thread (what /proc/PID/ns/net shows) may not be.
    own_pid: u32,
    procs: HashMap<u32, Proc>,
    /// fd links read so far (for tests of the cache).
    pub readlinks: u64,
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
            readlinks: 0,
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

    /// Forgets that `fd` of `pid` was read (its socket ended).
    pub fn forget(&mut self, pid: u32, fd: u32) {
        if let Some(proc) = self.procs.get_mut(&pid) {
            proc.sockets.remove(&fd);
        }
    }

    /// Reads what changed since the last scan into `changes`. `recheck`
    /// also reads again every fd and namespace remembered as not ours.
    /// Stops early (changes so far kept) once `stop` is set.
    pub fn scan(
        &mut self,
        live: &Inodes,
        recheck: bool,
        stop: &AtomicBool,
        changes: &mut Vec<Change>,
    ) {
        self.denied = false;
        let Ok(dir) = fs::read_dir(&self.root) else {
            self.denied = true;
            return;
        };
        let mut alive = HashSet::default();
        for entry in dir.flatten() {
            if stop.load(Ordering::Relaxed) {
                return;
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
            let Some(start) = self.start_time(pid) else {
                continue; // gone
            };
            alive.insert(pid);
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
                self.read_fds(pid, live, recheck, changes);
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
    }

    fn drop_process(&mut self, pid: u32, changes: &mut Vec<Change>) {
        if let Some(proc) = self.procs.remove(&pid) {
            for (fd, inode) in proc.sockets {
                changes.push(Change::Closed { inode, pid, fd });
            }
        }
    }

    /// Reads the fds not read before (with `recheck`: every fd but the
    /// live sockets'), and notes the sockets closed since.
    fn read_fds(&mut self, pid: u32, live: &Inodes, recheck: bool, out: &mut Vec<Change>) {
        let fd_dir = self.root.join(pid.to_string()).join("fd");
        let entries = match fs::read_dir(&fd_dir) {
            Ok(entries) => entries,
            Err(error) => {
                self.denied |= error.kind() == ErrorKind::PermissionDenied;
                return; // gone, or a kernel thread
            }
        };
        let proc = self.procs.get_mut(&pid).expect("inserted by scan");
        let mut sockets = HashMap::with_capacity_and_hasher(proc.sockets.len(), Default::default());
        let mut others = FdSet::default();
        for entry in entries.flatten() {
            let Some(fd) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let known = proc.sockets.remove(&fd);
            let trusted = match known {
                Some(inode) => live.contains(&inode),
                None => !recheck && proc.others.contains(fd),
            };
            if trusted {
                match known {
                    Some(inode) => sockets.insert(fd, inode),
                    None => {
                        others.insert(fd);
                        None
                    }
                };
                continue;
            }
            self.readlinks += 1;
            let Ok(target) = fs::read_link(entry.path()) else {
                continue; // closed meanwhile
            };
            let now = socket_inode(target.as_os_str().as_encoded_bytes());
            match now {
                Some(inode) => {
                    sockets.insert(fd, inode);
                }
                None => others.insert(fd),
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
        for (fd, inode) in proc.sockets.drain() {
            out.push(Change::Closed { inode, pid, fd });
        }
        proc.sockets = sockets;
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
