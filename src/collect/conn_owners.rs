//! Who made each TCP connection, from ebpf/conn_owners.bpf.o: the process
//! that connected or closed it, recorded by the kernel as it happened, so
//! the connection log can name the owner of a connection that opened and
//! closed between two socket dumps (the destroy notification has no inode
//! or uid). See the C source for which transitions name whom. Its cgroup
//! v2 id is recorded too: a process that failed and exited at once (a
//! `curl` in a container) has no /proc/PID/cgroup left to name its
//! container by (`containers::cgroups`).
//!
//! The tp_btf entry point also records the error each failed connect
//! ended with (sk_err), so the log tells a connect an ICMP unreachable
//! ended from one an RST refused (`ConnOwners::take_error`); with the
//! classic tracepoint such connects are logged as refused.
//!
//! The program records the watched namespace's connections only (other
//! namespaces' would evict them from its LRU map on a busy host); the
//! connection log reads the entry of each connection whose end it reads,
//! and deletes a cookie's (a 4-tuple's stays: see `ConnOwners::take`).

use super::tcp_destroy::Destroyed;
use crate::collect::btf::chain;
use crate::model::sockets::{ProcessName, SocketUser};
use crate::text;
use aya::maps::{HashMap as BpfHashMap, MapData};
use aya::programs::{BtfTracePoint, TracePoint};
use aya::{Btf, Ebpf, EbpfLoader};
use std::net::{IpAddr, SocketAddr};

/// The object, aligned for the ELF parser. Rebuilt by ebpf/build.sh; CI
/// checks it matches its source.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../ebpf/conn_owners.bpf.o");

/// The map's value, byte for byte the C program's `struct owner`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Owner {
    tgid: u32,
    pad: u32,
    comm: [u8; 16],
    /// bpf_get_current_cgroup_id(): the cgroup v2 id; 0 when unknown.
    cgroup: u64,
}

/// The fallback map's key, byte for byte the C program's `struct tuple`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tuple {
    netns: u32,
    family: u16,
    sport: u16,
    dport: u16,
    pad: u16,
    saddr: [u8; 16],
    daddr: [u8; 16],
}

// SAFETY: plain old data, repr(C), no padding (4+4+16+8 and
// 4+2+2+2+2+16+16 bytes), every bit pattern valid.
unsafe impl aya::Pod for Owner {}
// SAFETY: as above.
unsafe impl aya::Pod for Tuple {}

const AF_INET: u16 = libc::AF_INET as u16;
const AF_INET6: u16 = libc::AF_INET6 as u16;

/// The map the attached entry point writes.
enum Keyed {
    Cookie(BpfHashMap<MapData, u64, Owner>),
    /// The classic tracepoint's, and the watched namespace's inode.
    Tuple(BpfHashMap<MapData, Tuple, Owner>, u32),
}

/// The attached program and its map; dropping it detaches.
pub struct ConnOwners {
    _ebpf: Ebpf,
    map: Keyed,
    /// Cookie to the error its connect failed with; None with the
    /// classic tracepoint.
    errors: Option<BpfHashMap<MapData, u64, i32>>,
    /// Which entry point attached ("tp_btf", "tracepoint").
    pub attached: &'static str,
}

/// Loads and attaches, or says in one line why not. `netns` is the
/// watched namespace's inode (the fallback's keys carry it).
pub fn load(netns: u64) -> Result<ConnOwners, String> {
    let kernel_btf = crate::collect::btf::kernel().map_err(|e| {
        format!(
            "kernel has no BTF (/sys/kernel/btf/vmlinux: {e}): naming short connections' owners needs CONFIG_DEBUG_INFO_BTF",
        )
    })?;
    let btf: &aya::Btf = &kernel_btf;
    // nsfs inodes are 32-bit (ns.inum); 0 records every namespace.
    let netns = u32::try_from(netns).unwrap_or(0);
    let mut ebpf = EbpfLoader::new()
        .btf(Some(btf))
        .override_global("watched_netns", &netns, true)
        .load(OBJECT)
        .map_err(|e| why(&chain(&e)))?;
    let attached = attach(&mut ebpf, btf)?;
    let name = if attached == "tp_btf" {
        "BY_COOKIE"
    } else {
        "BY_TUPLE"
    };
    let map = ebpf
        .take_map(name)
        .ok_or_else(|| format!("the connection-owner program has no {name} map"))?;
    let map = if attached == "tp_btf" {
        Keyed::Cookie(BpfHashMap::try_from(map).map_err(|e| chain(&e))?)
    } else {
        Keyed::Tuple(BpfHashMap::try_from(map).map_err(|e| chain(&e))?, netns)
    };
    // A second recorder of the same errors (see the C source); without it
    // the first still works.
    if attached == "tp_btf"
        && let Some(Ok(program)) = ebpf
            .program_mut("error_btf")
            .map(TryInto::<&mut BtfTracePoint>::try_into)
        && let Err(e) = program
            .load("inet_sk_error_report", btf)
            .and_then(|()| program.attach().map(drop))
        && std::env::var_os("NETLENS_DEBUG_BPF").is_some()
    {
        eprintln!("netlens: error_btf: {}", chain(&e));
    }
    let errors = match ebpf.take_map("ERRORS") {
        Some(map) if attached == "tp_btf" => BpfHashMap::try_from(map).ok(),
        _ => None,
    };
    if std::env::var_os("NETLENS_DEBUG_BPF").is_some() {
        eprintln!("netlens: connection-owner program attached ({attached})");
    }
    Ok(ConnOwners {
        _ebpf: ebpf,
        map,
        errors,
        attached,
    })
}

/// tp_btf (the cookie), then the classic tracepoint (the addresses); the
/// first that loads and attaches wins.
fn attach(ebpf: &mut Ebpf, btf: &Btf) -> Result<&'static str, String> {
    let mut failures = Vec::new();
    // NETLENS_BPF_ATTACH=tracepoint skips tp_btf (the fallback's test).
    let tp_btf = std::env::var("NETLENS_BPF_ATTACH").as_deref() != Ok("tracepoint");
    if tp_btf
        && let Some(Ok(program)) = ebpf
            .program_mut("set_state_btf")
            .map(TryInto::<&mut BtfTracePoint>::try_into)
    {
        match program
            .load("inet_sock_set_state", btf)
            .and_then(|()| program.attach())
        {
            Ok(_) => return Ok("tp_btf"),
            Err(e) => failures.push(chain(&e)),
        }
    }
    if let Some(Ok(program)) = ebpf
        .program_mut("set_state_tp")
        .map(TryInto::<&mut TracePoint>::try_into)
    {
        match program
            .load()
            .and_then(|()| program.attach("sock", "inet_sock_set_state"))
        {
            Ok(_) => return Ok("tracepoint"),
            Err(e) => {
                // The whole verifier log, which `chain` cuts.
                if std::env::var_os("NETLENS_DEBUG_BPF").is_some() {
                    eprintln!("netlens: set_state_tp: {e:?}");
                }
                failures.push(chain(&e));
            }
        }
    }
    let last = failures.pop().unwrap_or_else(|| "no entry point".into());
    Err(why(&format!(
        "cannot attach to sock:inet_sock_set_state: {last}"
    )))
}

impl ConnOwners {
    /// The error (errno) the connection with `cookie` ended with, its
    /// entry deleted; None when none was reported or errors are not
    /// recorded here.
    pub fn take_error(&mut self, cookie: u64) -> Option<i32> {
        let map = self.errors.as_mut()?;
        let error = map.get(&cookie, 0).ok()?;
        let _ = map.remove(&cookie);
        Some(error)
    }

    /// The process that connected or closed the connection that ended
    /// (its cookie's entry deleted), and its cgroup v2 id when known; None
    /// when no system call named one (a socket the peer reset before its
    /// server closed it, an evicted entry).
    pub fn take(&mut self, destroyed: &Destroyed) -> Option<(SocketUser, Option<u64>)> {
        let owner = match &mut self.map {
            Keyed::Cookie(map) => {
                let owner = map.get(&destroyed.cookie, 0).ok()?;
                let _ = map.remove(&destroyed.cookie);
                owner
            }
            // Kept: a client reuses its port for the same server at once
            // (the server holds the TIME_WAIT), and the next connection's
            // close writes the same key before this one's end is read;
            // removed, that end would find none. The entry names the last
            // closer of the 4-tuple; the LRU bounds the map.
            Keyed::Tuple(map, netns) => {
                let key = tuple(*netns, destroyed.local, destroyed.peer)?;
                map.get(&key, 0).ok()?
            }
        };
        Some((user(&owner), (owner.cgroup != 0).then_some(owner.cgroup)))
    }
}

/// The socket user an entry names; the fd is not known (0).
fn user(owner: &Owner) -> SocketUser {
    let end = owner.comm.iter().position(|&b| b == 0).unwrap_or(16);
    let name = text::bounded_name_bytes(&owner.comm[..end]);
    SocketUser {
        process: ProcessName::from(name.as_str()),
        pid: owner.tgid,
        fd: 0,
    }
}

/// The fallback's key for a connection between `local` and `peer`.
fn tuple(netns: u32, local: SocketAddr, peer: SocketAddr) -> Option<Tuple> {
    let mut key = Tuple {
        netns,
        sport: local.port(),
        dport: peer.port(),
        ..Tuple::default()
    };
    match (local.ip(), peer.ip()) {
        (IpAddr::V4(l), IpAddr::V4(p)) => {
            key.family = AF_INET;
            key.saddr[..4].copy_from_slice(&l.octets());
            key.daddr[..4].copy_from_slice(&p.octets());
        }
        (IpAddr::V6(l), IpAddr::V6(p)) => {
            key.family = AF_INET6;
            key.saddr = l.octets();
            key.daddr = p.octets();
        }
        _ => return None,
    }
    Some(key)
}

/// What went wrong, with the fix when it is a missing privilege.
fn why(cause: &str) -> String {
    let what = "short connections' owners unknown: cannot load the connection-owner program";
    if cause.contains("Operation not permitted") || cause.contains("os error 1)") {
        return format!("{what}: needs CAP_BPF and CAP_PERFMON (run as root) ({cause})");
    }
    format!("{what}: {cause}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_key_puts_an_ipv4_address_first_and_ports_in_host_order() {
        let key = tuple(
            7,
            "198.18.0.1:40000".parse().unwrap(),
            "198.18.0.2:80".parse().unwrap(),
        )
        .unwrap();
        assert_eq!((key.family, key.sport, key.dport), (AF_INET, 40000, 80));
        assert_eq!(key.saddr[..5], [198, 18, 0, 1, 0]);
        assert_eq!(key.daddr[..4], [198, 18, 0, 2]);
        assert_eq!(std::mem::size_of::<Tuple>(), 44);
        assert_eq!(std::mem::size_of::<Owner>(), 32);
        assert_eq!(std::mem::offset_of!(Owner, cgroup), 24);
    }

    #[test]
    fn a_hostile_comm_is_escaped() {
        let mut comm = [0u8; 16];
        comm[..6].copy_from_slice(b"a\x1b[2Jb");
        let user = user(&Owner {
            tgid: 9,
            comm,
            ..Owner::default()
        });
        assert!(!user.process.contains('\x1b'), "{:?}", user.process);
        assert_eq!(user.pid, 9);
    }
}
