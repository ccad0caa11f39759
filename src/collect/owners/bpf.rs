//! Socket owners from ebpf/owners.bpf.o, two task iterators run in the
//! kernel: `watched_tasks` lists the processes with a thread in the
//! watched namespace (one pass over the host's threads), and
//! `socket_owners` lists one process's TCP and UDP sockets of that
//! namespace (pid, fd, inode, name), run once per such process through the
//! link's task filter (Linux 6.1). The fds of other processes are never
//! visited: one pass over a host's million fds was 0.6 s of CPU. Each scan
//! compares the list with the last one.

use super::Change;
use crate::collect::btf::chain;
use crate::model::sockets::{ProcessName, SocketUser};
use crate::text;
use aya::programs::{Iter, ProgramFd};
use aya::{Ebpf, EbpfLoader};
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// The object, aligned for the ELF parser. Rebuilt by ebpf/build.sh; CI
/// checks it matches its source.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../ebpf/owners.bpf.o");

/// One record as the C program writes it (`struct record`): tgid, fd,
/// inode (u32 each, native endian), then the 16-byte comm.
const RECORD: usize = 28;

/// A run that visits a million objects without output returns EAGAIN and
/// resumes at the next read: a pass over every fd of a big host takes a
/// few such reads, this many at most.
const MAX_RETRIES: u32 = 64;

/// The loaded iterators; each scan opens new iterators from them.
pub struct Walk {
    /// Owns the programs.
    _ebpf: Ebpf,
    tasks: ProgramFd,
    sockets: ProgramFd,
    /// The watched namespace; 0: every namespace, listed in one pass.
    netns: u32,
    /// (pid, fd) -> inode at the last scan.
    last: HashMap<(u32, u32), u32>,
}

/// Loads the iterators for `netns` (an nsfs inode; 0: every namespace),
/// or says in one line why they cannot run.
pub fn load(netns: u32) -> Result<Walk, String> {
    let kernel_btf =
        crate::collect::btf::kernel().map_err(|e| format!("kernel has no BTF: {e}"))?;
    let btf: &aya::Btf = &kernel_btf;
    let mut ebpf = EbpfLoader::new()
        .btf(Some(btf))
        .override_global("watched_netns", &netns, true)
        .load(OBJECT)
        .map_err(|e| format!("cannot load the socket-owner iterators: {}", chain(&e)))?;
    let mut fds = Vec::new();
    for (name, target) in [("watched_tasks", "task"), ("socket_owners", "task_file")] {
        let program: &mut Iter = ebpf
            .program_mut(name)
            .ok_or_else(|| format!("the socket-owner object has no {name} program"))?
            .try_into()
            .map_err(|e| chain(&e))?;
        program
            .load(target, btf)
            .map_err(|e| format!("cannot load the {target} iterator: {}", chain(&e)))?;
        let fd = program.fd().map_err(|e| chain(&e))?;
        fds.push(fd.try_clone().map_err(|e| format!("{name}: {e}"))?);
    }
    let sockets = fds.pop().expect("two programs");
    let tasks = fds.pop().expect("two programs");
    let mut walk = Walk {
        _ebpf: ebpf,
        tasks,
        sockets,
        netns,
        last: HashMap::new(),
    };
    walk.prove()?;
    Ok(walk)
}

impl Walk {
    /// Every socket's holders now, as changes since the last scan: those
    /// of the processes in the watched namespace, or with `host_wide` of
    /// every process (a process elsewhere may hold one of its sockets, as
    /// `ss -p` would find: a recheck, for sockets left without an owner).
    pub fn scan(&mut self, host_wide: bool, changes: &mut Vec<Change>) -> Result<(), String> {
        if self.netns == 0 || host_wide {
            let bytes = run(self.sockets.as_fd(), None).map_err(|e| read_error(&e))?;
            self.compare(&bytes, None, changes);
            return Ok(());
        }
        let pids = self.processes()?;
        let mut bytes = Vec::new();
        for pid in &pids {
            bytes.extend(self.sockets_of(*pid)?);
        }
        self.compare(&bytes, Some(&pids), changes);
        Ok(())
    }

    /// Forgets that `fd` of `pid` held a socket (it ended): listed again,
    /// it is a new holder.
    pub fn forget(&mut self, pid: u32, fd: u32) {
        self.last.remove(&(pid, fd));
    }

    /// A first run of each iterator: a failure here is a fallback, not a
    /// later error. This thread is in the watched namespace, so netlens
    /// itself is listed, under the pid it knows itself by (not so in a
    /// pid namespace of its own, where the kernel's pids are not its).
    fn prove(&mut self) -> Result<(), String> {
        let own = std::process::id();
        if !self.processes()?.contains(&own) {
            return Err("netlens's pid is not the kernel's (a pid namespace)".into());
        }
        self.sockets_of(own).map(drop)
    }

    /// The processes with a thread in the watched namespace.
    fn processes(&self) -> Result<BTreeSet<u32>, String> {
        let bytes = run(self.tasks.as_fd(), None).map_err(|e| read_error(&e))?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes(b.try_into().expect("4 bytes")))
            .collect())
    }

    /// The records of `pid`'s sockets of the watched namespace.
    fn sockets_of(&self, pid: u32) -> Result<Vec<u8>, String> {
        let bytes = match run(self.sockets.as_fd(), Some(pid)) {
            Ok(bytes) => bytes,
            // It ended since it was listed.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Vec::new(),
            Err(e) => return Err(read_error(&e)),
        };
        // A kernel without the task filter would list every process.
        let other = bytes.chunks_exact(RECORD).any(|r| word(r, 0) != pid);
        if other {
            return Err("the kernel ignores the iterator's task filter (Linux 6.1)".into());
        }
        Ok(bytes)
    }

    /// The changes from the last scan's records to `bytes`, the records of
    /// the processes `scanned` (None: all): the others' stay as they were.
    fn compare(
        &mut self,
        bytes: &[u8],
        scanned: Option<&BTreeSet<u32>>,
        changes: &mut Vec<Change>,
    ) {
        let mut now = HashMap::with_capacity(bytes.len() / RECORD);
        if let Some(scanned) = scanned {
            now.extend(
                self.last
                    .iter()
                    .filter(|((pid, _), _)| !scanned.contains(pid)),
            );
        }
        let mut names: HashMap<u32, ProcessName> = HashMap::new();
        for record in bytes.chunks_exact(RECORD) {
            let (pid, fd, inode) = (word(record, 0), word(record, 4), word(record, 8));
            now.insert((pid, fd), inode);
            if self.last.get(&(pid, fd)) == Some(&inode) {
                continue;
            }
            let process = names
                .entry(pid)
                .or_insert_with(|| comm(&record[12..]))
                .clone();
            if let Some(old) = self.last.get(&(pid, fd)) {
                changes.push(Change::Closed {
                    inode: *old,
                    pid,
                    fd,
                });
            }
            changes.push(Change::Opened {
                inode,
                user: SocketUser { process, pid, fd },
            });
        }
        for ((pid, fd), inode) in &self.last {
            if !now.contains_key(&(*pid, *fd)) {
                let (pid, fd, inode) = (*pid, *fd, *inode);
                changes.push(Change::Closed { inode, pid, fd });
            }
        }
        self.last = now;
    }
}

fn word(record: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(record[at..at + 4].try_into().expect("4 bytes"))
}

/// `union bpf_attr` for BPF_LINK_CREATE of an iterator: aya 0.14's
/// `Iter::attach` passes no `iter_info`, so no task filter.
#[repr(C)]
struct LinkCreate {
    prog_fd: u32,
    target_fd: u32,
    attach_type: u32,
    flags: u32,
    iter_info: u64,
    iter_info_len: u32,
    /// Zero, not padding left undefined.
    _pad: u32,
}

/// `union bpf_iter_link_info` (16 bytes): `task.tid`, `task.pid`,
/// `task.pid_fd`, then zeros.
type IterLinkInfo = [u32; 4];

const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_ITER_CREATE: libc::c_long = 33;
const BPF_TRACE_ITER: u32 = 28;

/// An iterator's output at most this large in all (a million sockets'
/// records are ~40 MB).
const MAX_OUTPUT: usize = 256 << 20;

/// One run of an iterator program: its whole output. `pid`: only that
/// process's tasks (else every task on the host).
fn run(program: BorrowedFd<'_>, pid: Option<u32>) -> io::Result<Vec<u8>> {
    let info: IterLinkInfo = [0, pid.unwrap_or(0), 0, 0];
    let attr = LinkCreate {
        prog_fd: program.as_raw_fd() as u32,
        target_fd: 0,
        attach_type: BPF_TRACE_ITER,
        flags: 0,
        iter_info: pid.map_or(0, |_| info.as_ptr() as u64),
        iter_info_len: pid.map_or(0, |_| size_of::<IterLinkInfo>() as u32),
        _pad: 0,
    };
    let link = bpf(BPF_LINK_CREATE, &attr)?;
    let iter: [u32; 2] = [link.as_raw_fd() as u32, 0]; // link_fd, flags
    let mut file = File::from(bpf(BPF_ITER_CREATE, &iter)?);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut retries = 0;
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) if bytes.len() + n > MAX_OUTPUT => {
                return Err(io::Error::other("over 256 MiB of records"));
            }
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock && retries < MAX_RETRIES => retries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// The bpf(2) call `cmd` with `attr`, returning the new fd.
fn bpf<T>(cmd: libc::c_long, attr: &T) -> io::Result<OwnedFd> {
    // SAFETY: `attr` is a live repr(C) value of the size passed, laid out
    // as the kernel's union bpf_attr for `cmd` (the rest reads as zeros);
    // the kernel only reads it, and any pointer in it outlives the call.
    let fd = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *const T, size_of::<T>()) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: on success bpf(2) returns a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn read_error(error: &io::Error) -> String {
    format!("running the socket-owner iterator: {error}")
}

/// The comm bytes up to their NUL, bounded and without control characters.
fn comm(raw: &[u8]) -> ProcessName {
    let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
    ProcessName::from(text::bounded_name_bytes(&raw[..end]))
}
