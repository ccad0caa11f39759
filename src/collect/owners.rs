//! Which process holds a socket, as `ss -p` finds it: every /proc/PID/fd
//! link "socket:[INODE]".
//!
//! Reading every fd link of every process each tick is what makes `ss -p`
//! slow, so the map is cached: a scan happens only when a live socket inode
//! is neither known nor known to be unowned, and even then only fd numbers
//! not seen before are read. Entries go when their socket or process does.

use crate::model::sockets::{ProcessName, SocketUser};
use crate::text;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::ErrorKind;

#[derive(Default)]
pub struct OwnerCache {
    /// The first process found holding each socket, inline: a million
    /// sockets are a million owners, and a Vec each was a million more
    /// allocations (32 B apiece) kept.
    by_inode: HashMap<u32, SocketUser>,
    /// Every holder of the sockets more than one process holds (the
    /// first included), in the order found.
    shared: HashMap<u32, Vec<SocketUser>>,
    /// (pid, fd) -> socket inode, for fds already read.
    seen: HashMap<(u32, u32), u32>,
    /// Inodes no readable process held at the last scan.
    unowned: HashSet<u32>,
    /// Each process's name, shared by all its sockets' owners.
    comm: HashMap<u32, ProcessName>,
    /// The last scan met a /proc/PID/fd it could not read.
    denied: bool,
    scans: u64,
}

impl OwnerCache {
    /// Brings the map up to date for the sockets alive now.
    pub fn update(&mut self, live: &HashSet<u32>) {
        self.by_inode.retain(|inode, _| live.contains(inode));
        self.shared.retain(|inode, _| live.contains(inode));
        self.seen.retain(|_, inode| live.contains(inode));
        self.unowned.retain(|inode| live.contains(inode));
        let unknown = live
            .iter()
            .any(|i| *i != 0 && !self.by_inode.contains_key(i) && !self.unowned.contains(i));
        if unknown {
            self.scan();
            self.unowned = live
                .iter()
                .filter(|i| **i != 0 && !self.by_inode.contains_key(i))
                .copied()
                .collect();
        }
    }

    /// The processes holding `inode` (empty when none is known).
    pub fn users(&self, inode: u32) -> &[SocketUser] {
        if let Some(users) = self.shared.get(&inode) {
            return users;
        }
        self.by_inode.get(&inode).map_or(&[], std::slice::from_ref)
    }

    /// Whether a socket without a known owner may be owned by a process
    /// netlens may not look at.
    pub fn denied(&self) -> bool {
        self.denied
    }

    /// Full scans so far (for tests of the cache).
    pub fn scans(&self) -> u64 {
        self.scans
    }

    fn scan(&mut self) {
        self.scans += 1;
        self.denied = false;
        let Ok(proc_dir) = fs::read_dir("/proc") else {
            self.denied = true;
            return;
        };
        let mut alive = HashSet::new();
        for entry in proc_dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            alive.insert(pid);
            let fd_dir = format!("/proc/{pid}/fd");
            let fds = match fs::read_dir(&fd_dir) {
                Ok(fds) => fds,
                Err(error) => {
                    if error.kind() == ErrorKind::PermissionDenied {
                        self.denied = true;
                    }
                    continue; // gone, or a kernel thread
                }
            };
            for fd_entry in fds.flatten() {
                let Some(fd) = fd_entry
                    .file_name()
                    .to_str()
                    .and_then(|s| s.parse::<u32>().ok())
                else {
                    continue;
                };
                if self.seen.contains_key(&(pid, fd)) {
                    continue;
                }
                let Ok(target) = fs::read_link(fd_entry.path()) else {
                    continue;
                };
                let Some(inode) = socket_inode(target.as_os_str().as_encoded_bytes()) else {
                    continue;
                };
                let process = self.comm.entry(pid).or_insert_with(|| comm(pid)).clone();
                self.seen.insert((pid, fd), inode);
                self.add(inode, SocketUser { process, pid, fd });
            }
        }
        // A process that is gone holds nothing (and its pid may be reused).
        self.comm.retain(|pid, _| alive.contains(pid));
        self.seen.retain(|(pid, _), _| alive.contains(pid));
        self.shared.retain(|_, users| {
            users.retain(|u| alive.contains(&u.pid));
            !users.is_empty()
        });
        let shared = &self.shared;
        self.by_inode.retain(|inode, user| {
            // The first holder is gone: the next one still there leads.
            if !alive.contains(&user.pid) {
                match shared.get(inode).and_then(|users| users.first()) {
                    Some(next) => *user = next.clone(),
                    None => return false,
                }
            }
            true
        });
        self.shared.retain(|_, users| users.len() > 1);
    }

    /// One more holder of `inode`.
    fn add(&mut self, inode: u32, user: SocketUser) {
        match self.by_inode.entry(inode) {
            Entry::Vacant(entry) => {
                entry.insert(user);
            }
            Entry::Occupied(first) => {
                self.shared
                    .entry(inode)
                    .or_insert_with(|| vec![first.get().clone()])
                    .push(user);
            }
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
fn comm(pid: u32) -> ProcessName {
    fs::read(format!("/proc/{pid}/comm"))
        .map(|bytes| {
            let name = text::bounded_name_bytes(bytes.strip_suffix(b"\n").unwrap_or(&bytes));
            ProcessName::from(name.as_str())
        })
        .unwrap_or_else(|_| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn parses_socket_links() {
        assert_eq!(socket_inode(b"socket:[4242]"), Some(4242));
        assert_eq!(socket_inode(b"pipe:[4242]"), None);
        assert_eq!(socket_inode(b"socket:[x]"), None);
    }

    #[test]
    fn finds_our_own_socket_and_scans_only_for_new_inodes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let fd = listener.as_raw_fd() as u32;
        let inode = fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino() as u32;
        let mut cache = OwnerCache::default();
        let live: HashSet<u32> = [inode].into();
        cache.update(&live);
        let users = cache.users(inode);
        assert!(
            users
                .iter()
                .any(|u| u.pid == std::process::id() && u.fd == fd),
            "{users:?}"
        );
        assert_eq!(cache.scans(), 1);
        cache.update(&live);
        assert_eq!(cache.scans(), 1, "a known inode needs no scan");
        // An inode nobody holds is scanned for once, then remembered.
        let ghost: HashSet<u32> = [inode, u32::MAX - 1].into();
        cache.update(&ghost);
        cache.update(&ghost);
        assert_eq!(cache.scans(), 2);
        assert!(cache.users(u32::MAX - 1).is_empty());
    }
}
