//! Socket owners from ebpf/owners.bpf.o: a task_file iterator that lists
//! every (pid, fd, socket inode, name) of the watched namespace's TCP and
//! UDP sockets in one pass in the kernel, whatever the number of other
//! open files on the host. Each scan reads the whole list and compares it
//! with the last one.

use super::Change;
use crate::model::sockets::{ProcessName, SocketUser};
use crate::text;
use aya::programs::Iter;
use aya::{Btf, Ebpf, EbpfLoader};
use std::collections::HashMap;
use std::io::{ErrorKind, Read};

/// The object, aligned for the ELF parser. Rebuilt by ebpf/build.sh; CI
/// checks it matches its source.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../ebpf/owners.bpf.o");

/// One record as the C program writes it (`struct record`): tgid, fd,
/// inode (u32 each, native endian), then the 16-byte comm.
const RECORD: usize = 28;

/// The iterator program; each scan opens a new iterator from it.
pub struct Walk {
    ebpf: Ebpf,
    /// (pid, fd) -> inode at the last scan.
    last: HashMap<(u32, u32), u32>,
}

/// Loads the iterator for `netns` (an nsfs inode; 0: every namespace), or
/// says in one line why it cannot.
pub fn load(netns: u32) -> Result<Walk, String> {
    let btf = Btf::from_sys_fs().map_err(|e| format!("kernel has no BTF: {e}"))?;
    let mut ebpf = EbpfLoader::new()
        .btf(Some(&btf))
        .override_global("watched_netns", &netns, true)
        .load(OBJECT)
        .map_err(|e| format!("cannot load the socket-owner iterator: {}", chain(&e)))?;
    let program: &mut Iter = ebpf
        .program_mut("socket_owners")
        .ok_or("the socket-owner object has no socket_owners program")?
        .try_into()
        .map_err(|e| chain(&e))?;
    program
        .load("task_file", &btf)
        .map_err(|e| format!("cannot load the task_file iterator: {}", chain(&e)))?;
    let mut walk = Walk {
        ebpf,
        last: HashMap::new(),
    };
    // A first run proves it: a failure here is a fallback, not a later error.
    walk.records()?;
    Ok(walk)
}

impl Walk {
    /// Every socket's holders now, as changes since the last scan.
    pub fn scan(&mut self, changes: &mut Vec<Change>) -> Result<(), String> {
        let bytes = self.records()?;
        let mut now = HashMap::with_capacity(bytes.len() / RECORD);
        let mut names: HashMap<u32, ProcessName> = HashMap::new();
        for record in bytes.chunks_exact(RECORD) {
            let word = |i: usize| u32::from_ne_bytes(record[i..i + 4].try_into().expect("4 bytes"));
            let (pid, fd, inode) = (word(0), word(4), word(8));
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
        Ok(())
    }

    /// Forgets that `fd` of `pid` held a socket (it ended): listed again,
    /// it is a new holder.
    pub fn forget(&mut self, pid: u32, fd: u32) {
        self.last.remove(&(pid, fd));
    }

    /// One run of the iterator: its whole output.
    fn records(&mut self) -> Result<Vec<u8>, String> {
        let program: &mut Iter = self
            .ebpf
            .program_mut("socket_owners")
            .ok_or("no socket_owners program")?
            .try_into()
            .map_err(|e| chain(&e))?;
        let link = program.attach().map_err(|e| chain(&e))?;
        let link = program.take_link(link).map_err(|e| chain(&e))?;
        let mut file = link.into_file().map_err(|e| chain(&e))?;
        read_all(&mut file).map_err(|e| format!("reading the socket-owner iterator: {e}"))
    }
}

/// Records at most this large in all (a million sockets' are ~40 MB).
const MAX_OUTPUT: usize = 256 << 20;

/// The iterator's whole output. The kernel ends a read with EAGAIN after
/// visiting a million objects that printed nothing (another namespace's
/// open files): reading again goes on from there.
fn read_all(file: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) if bytes.len() + n > MAX_OUTPUT => {
                return Err(std::io::Error::other("over 256 MiB of records"));
            }
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The comm bytes up to their NUL, bounded and without control characters.
fn comm(raw: &[u8]) -> ProcessName {
    let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
    ProcessName::from(text::bounded_name_bytes(&raw[..end]))
}

fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
