//! The connection log: every TCP connection that ends, from sock_diag's
//! destroy notifications (multicast groups SKNLGRP_INET_TCP_DESTROY and
//! SKNLGRP_INET6_TCP_DESTROY), with its owner and first sighting taken from
//! the socket dumps that saw it alive (keyed by the socket cookie).
//!
//! A connection that opened and closed between two dumps has no owner in
//! them: the eBPF program of `conn_owners` names the process that
//! connected or closed it, keyed by the same cookie (when it loads).
//!
//! The subscription is per network namespace: `open` must run on the
//! sampler thread after it entered the watched namespace. The socket is
//! non-blocking and drained once per tick; a full receive buffer makes the
//! kernel drop notifications, which netlens reads back as the socket's
//! drop count (SO_MEMINFO) and reports as `lost`, never silently.

use super::conn_owners::{self, ConnOwners};
use super::tcp_destroy::{self, Destroyed, TCP_LISTEN};
use super::unowned_bytes::UnownedBytes;
use crate::model::closed::{ClosedConn, ClosedSample, Ending, ProcessBytes};
use crate::model::socket_table::SocketTable;
use crate::model::sockets::{Proto, SocketUser, TCP_LISTEN as LISTEN};
use netlink_sys::{Socket as Netlink, SocketAddr as NetlinkAddr, protocols::NETLINK_SOCK_DIAG};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

/// linux/sock_diag.h: enum { SKNLGRP_NONE, SKNLGRP_INET_TCP_DESTROY,
/// SKNLGRP_INET_UDP_DESTROY, SKNLGRP_INET6_TCP_DESTROY, ... }.
const SKNLGRP_INET_TCP_DESTROY: u32 = 1;
const SKNLGRP_INET6_TCP_DESTROY: u32 = 3;
/// bind() takes group N as bit N - 1.
const GROUPS: u32 = (1 << (SKNLGRP_INET_TCP_DESTROY - 1)) | (1 << (SKNLGRP_INET6_TCP_DESTROY - 1));
/// The receive buffer asked for: a burst of ~30k closes between two ticks
/// (about 1 KiB of buffer each) fits.
const RECEIVE_BUFFER: libc::c_int = 32 << 20;
/// Messages read per tick at most, so a flood cannot stall the sampler.
const MAX_READ_PER_TICK: usize = 200_000;
/// How long a socket gone from the dumps is still remembered (its destroy
/// notification may be read a tick after the dump that missed it).
const FORGET_AFTER_TICKS: u32 = 3;
/// How long a listener is remembered after it was last seen, seconds (its
/// accepted sockets outlive it).
const LISTENER_MEMORY_S: f64 = 600.0;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const SO_MEMINFO: libc::c_int = 55;
const SK_MEMINFO_DROPS: usize = 8;

/// Where the dumps' last sighting of a socket that is (or was, a few ticks
/// ago) alive is. One per TCP socket, so at a million sockets its size
/// counts: a Vec sorted by cookie of 24-byte entries. The sighting itself
/// is the socket's row in the last dump (`ConnLog::last`, the table the
/// sample holds too); a socket no longer listed has a copy of its last
/// one in `ConnLog::unlisted`.
#[derive(Debug, Clone, Copy)]
struct Known {
    cookie: u64,
    first_seen: f64,
    /// The tick of the last dump that listed it; 0 once its end was
    /// logged (taken by `resolve`: as good as removed).
    last_tick: u32,
    /// Its row in the dump of `last_tick`.
    row: u32,
}

/// What a dump told about a socket, as its log entry reads it.
#[derive(Debug, Clone)]
struct Sighting {
    first_seen: f64,
    local: SocketAddr,
    peer: SocketAddr,
    users: Box<[SocketUser]>,
    /// tcpi_bytes_acked (a connect's SYN included) and tcpi_bytes_received
    /// at the last sighting, as the rates read them: for an abort, whose
    /// counters the kernel zeroes, and for `UnownedBytes`.
    bytes_acked: u64,
    bytes_received: u64,
    rtt_us: u32,
    retrans: u32,
}

/// A socket of the dump being observed, before it is merged into `known`.
struct Seen {
    cookie: u64,
    /// Its index in the dump.
    row: u32,
}

struct Listener {
    users: Vec<SocketUser>,
    last_seen: f64,
}

pub struct ConnLog {
    socket: Result<Netlink, String>,
    buffer: Vec<u8>,
    /// Sorted by cookie.
    known: Vec<Known>,
    /// The last dump observed, where `known` rows point.
    last: SocketTable,
    /// The last sighting of the known sockets the last dump did not list.
    unlisted: HashMap<u64, Sighting>,
    /// Owners an earlier dump found for listed sockets the last dump found
    /// none for (a socket its process closed, still finishing).
    earlier_users: HashMap<u64, Box<[SocketUser]>>,
    listeners: HashMap<u16, Listener>,
    tick: u64,
    totals: [u64; Ending::ALL.len()],
    enobufs: u64,
    /// The eBPF owners of connections no dump saw, or why there are none.
    owners: Result<ConnOwners, String>,
    /// What sockets moved while listed without an owner.
    unowned: UnownedBytes,
}

/// What `--no-bpf` leaves in every sample's `owners_unavailable`.
pub const OWNERS_DISABLED: &str = "disabled by --no-bpf";

impl ConnLog {
    /// Subscribes in the calling thread's namespace. A failure (no
    /// CAP_NET_ADMIN, a kernel without sock_diag) is kept and reported in
    /// every sample; the other collectors go on. `bpf` loads the owner
    /// program (a failure leaves its reason in each sample).
    pub fn open(bpf: bool) -> Self {
        let mut log = Self::open_without_owners(OWNERS_DISABLED);
        if bpf {
            log.load_owners();
        }
        log
    }

    /// As `open`, the owner program not loaded: each sample says `why`
    /// until `load_owners` (the first sample of a quick start).
    pub fn open_without_owners(why: &str) -> Self {
        let socket = subscribe();
        let owners = match &socket {
            Err(_) => Err("no connection log".to_string()),
            Ok(_) => Err(why.to_string()),
        };
        Self {
            socket,
            owners,
            buffer: vec![0; 256 * 1024],
            known: Vec::new(),
            last: SocketTable::default(),
            unlisted: HashMap::new(),
            earlier_users: HashMap::new(),
            listeners: HashMap::new(),
            tick: 0,
            totals: [0; Ending::ALL.len()],
            enobufs: 0,
            unowned: UnownedBytes::default(),
        }
    }

    /// Loads the owner program (a failure leaves its reason in each
    /// sample). Call on the sampler thread, inside the watched namespace.
    pub fn load_owners(&mut self) {
        if self.socket.is_err() {
            return;
        }
        let netns =
            super::netns::link_inode(std::path::Path::new("/proc/thread-self/ns/net")).unwrap_or(0);
        self.owners = conn_owners::load(netns);
    }

    /// Learns owners and first sightings from a dump: `cookies[i]` is the
    /// cookie of `sockets[i]`. Owners found earlier are kept when a socket
    /// lost its file (closed, still finishing). Returns, per process, what
    /// sockets this dump names the owner of moved while listed without
    /// one (`UnownedBytes`).
    pub fn observe(
        &mut self,
        sockets: &SocketTable,
        cookies: &[u64],
        mono: f64,
    ) -> Vec<ProcessBytes> {
        self.tick += 1;
        // In dump order: a listener counts for the sockets after it.
        let mut seen = Vec::with_capacity(sockets.len());
        for (row, (socket, cookie)) in sockets.iter().zip(cookies).enumerate() {
            if socket.proto != Proto::Tcp {
                continue;
            }
            if socket.state == LISTEN {
                let listener = self
                    .listeners
                    .entry(socket.local.port())
                    .or_insert(Listener {
                        users: Vec::new(),
                        last_seen: mono,
                    });
                listener.last_seen = mono;
                if !socket.users.is_empty() {
                    listener.users = socket.users.to_vec();
                }
                continue;
            }
            seen.push(Seen {
                cookie: *cookie,
                row: row as u32,
            });
        }
        // Stable: sockets sharing a cookie (0: none was read) apply in
        // dump order, as they did to one map entry.
        seen.sort_by_key(|s| s.cookie);
        let named = self.count_unowned(&seen, sockets);
        let old = std::mem::take(&mut self.known);
        self.known = self.merge(old, &seen, sockets, mono);
        // Shared with the sample, not copied.
        self.last = sockets.clone();
        let known = &self.known;
        self.unowned.retain(|cookie| {
            known
                .binary_search_by_key(&cookie, |k| k.cookie)
                .is_ok_and(|i| known[i].last_tick != 0)
        });
        self.listeners
            .retain(|_, l| mono - l.last_seen < LISTENER_MEMORY_S);
        named
    }

    /// The dump's sockets (`seen`, by cookie) to `UnownedBytes`, against
    /// the previous dump's counters; none in the first dump, before which
    /// no rate counts.
    fn count_unowned(&mut self, seen: &[Seen], sockets: &SocketTable) -> Vec<ProcessBytes> {
        let mut named = Vec::new();
        if self.tick == 1 {
            return named;
        }
        let mut last = 0;
        for s in seen {
            // Cookie 0: none was read; a cookie listed twice counts once.
            if s.cookie == 0 || s.cookie == last {
                continue;
            }
            last = s.cookie;
            let (known, last, tick) = (&self.known, &self.last, self.tick);
            let previous = || {
                let k = &known[known.binary_search_by_key(&s.cookie, |k| k.cookie).ok()?];
                let info = last.get(k.row as usize)?.tcp?;
                (u64::from(k.last_tick) + 1 == tick)
                    .then_some((info.bytes_acked, info.bytes_received))
            };
            let socket = &sockets.at(s.row as usize);
            self.unowned
                .sighting(s.cookie, socket, previous, &mut named);
        }
        named
    }

    /// The socket `cookie` as the dumps knew it, forgotten from now on.
    fn take_known(&mut self, cookie: u64) -> Option<Sighting> {
        let index = self
            .known
            .binary_search_by_key(&cookie, |k| k.cookie)
            .ok()?;
        let known = self.known[index];
        if known.last_tick == 0 {
            return None;
        }
        self.known[index].last_tick = 0;
        let earlier = self.earlier_users.remove(&cookie);
        if let Some(unlisted) = self.unlisted.remove(&cookie) {
            return Some(unlisted);
        }
        Some(sighting(&known, &self.last, earlier))
    }

    /// Every connection that ended since the last call.
    pub fn drain(&mut self, t: f64, mono: f64) -> ClosedSample {
        let messages = match &self.socket {
            Ok(socket) => read_pending(socket, &mut self.buffer, &mut self.enobufs),
            Err(error) => return ClosedSample::unavailable(error.clone()),
        };
        let syn_retries = if messages.is_empty() {
            6
        } else {
            syn_retries()
        };
        // A listener that lived and died between two dumps still tells
        // which of the batch's sockets it accepted.
        for listener in messages.iter().filter(|d| d.state == TCP_LISTEN) {
            self.listeners
                .entry(listener.local.port())
                .or_insert(Listener {
                    users: Vec::new(),
                    last_seen: mono,
                });
        }
        let mut conns = Vec::new();
        let mut unowned_bytes = Vec::new();
        for destroyed in messages {
            let Some(conn) = self.resolve(&destroyed, t, mono, syn_retries) else {
                continue;
            };
            if let Some(i) = Ending::ALL.iter().position(|e| *e == conn.ending) {
                self.totals[i] += 1;
            }
            self.unowned
                .named(conn.cookie, conn.users.first(), &mut unowned_bytes);
            conns.push(conn);
        }
        let mut sample = ClosedSample {
            unowned_bytes,
            ..ClosedSample::default()
        };
        sample.list(conns);
        sample.totals = self.totals.to_vec();
        sample.lost = self.lost();
        sample.owners_unavailable = self.owners.as_ref().err().cloned();
        sample
    }

    /// Notifications the kernel could not queue: the socket's drop count,
    /// or the ENOBUFS errors seen when SO_MEMINFO is not there.
    fn lost(&self) -> u64 {
        let drops = self.socket.as_ref().ok().and_then(socket_drops);
        drops.map_or(self.enobufs, |d| d.max(self.enobufs))
    }

    /// One notification as a log entry; None for what is no connection
    /// (a listener, a socket that never connected).
    fn resolve(
        &mut self,
        destroyed: &Destroyed,
        t: f64,
        mono: f64,
        syn_retries: u32,
    ) -> Option<ClosedConn> {
        if destroyed.state == TCP_LISTEN || destroyed.local.port() == 0 {
            return None;
        }
        let info = destroyed.info.unwrap_or_default();
        let zeroed = info.segs_out == 0 && info.segs_in == 0;
        let known = self.take_known(destroyed.cookie);
        if zeroed && destroyed.wqueue == 0 && destroyed.peer.port() == 0 && known.is_none() {
            return None; // bound, never connected
        }
        let listener = self.listeners.get(&destroyed.local.port());
        let accepted = listener.is_some();
        let mut ending = tcp_destroy::ending(destroyed, accepted, syn_retries);
        // Only failed connects have an error recorded: no look-up (a
        // system call) for the others.
        if !ending.established() {
            let owners = self.owners.as_mut().ok();
            let error = owners.and_then(|o| o.take_error(destroyed.cookie));
            if let Some(named) = error.and_then(tcp_destroy::failed_by) {
                ending = named;
            }
        }
        let mut users = known.as_ref().map(|k| k.users.to_vec()).unwrap_or_default();
        // No dump saw it with a file: the process that connected or closed
        // it (and its cgroup), else the listener's owner.
        let mut cgroup = None;
        if users.is_empty()
            && let Ok(owners) = &mut self.owners
            && let Some((user, id)) = owners.take(destroyed)
        {
            users.push(user);
            cgroup = id;
        }
        if users.is_empty()
            && let Some(listener) = listener
        {
            users.clone_from(&listener.users);
        }
        let (bytes_sent, bytes_received) = if zeroed {
            match &known {
                Some(k) if ending.established() => (
                    Some(k.bytes_acked.saturating_sub(u64::from(!accepted))),
                    Some(k.bytes_received),
                ),
                _ if !ending.established() => (Some(0), Some(0)),
                _ => (None, None),
            }
        } else {
            (
                Some(tcp_destroy::bytes_sent(&info, accepted)),
                Some(tcp_destroy::bytes_received(&info, ending)),
            )
        };
        // An abort and a failed connect clear the peer: the dump knew it.
        let peer_cleared = destroyed.peer.port() == 0;
        let (local, peer) = match &known {
            Some(k) if peer_cleared => (k.local, k.peer),
            _ => (destroyed.local, destroyed.peer),
        };
        Some(ClosedConn {
            t,
            cookie: destroyed.cookie,
            local,
            peer,
            users,
            cgroup,
            cgroup_container: None,
            accepted,
            bytes_sent,
            bytes_received,
            duration_s: known.as_ref().map(|k| (mono - k.first_seen).max(0.0)),
            rtt_us: if zeroed {
                known.as_ref().map_or(0, |k| k.rtt_us)
            } else {
                info.rtt_us
            },
            retrans: if zeroed {
                known.as_ref().map_or(0, |k| k.retrans)
            } else {
                info.total_retrans
            },
            ending,
        })
    }
}

impl ConnLog {
    /// The known sockets after a dump: `old` and the dump's sockets
    /// (`seen`, both sorted by cookie) merged. A socket the dump lists
    /// keeps its first sighting and, when the dump found no owner, its old
    /// owners; one it no longer lists is kept FORGET_AFTER_TICKS ticks (its
    /// destroy notification may come a tick late), its last sighting copied
    /// out of the old dump; one whose end was logged starts anew.
    fn merge(
        &mut self,
        old: Vec<Known>,
        seen: &[Seen],
        sockets: &SocketTable,
        mono: f64,
    ) -> Vec<Known> {
        let tick = self.tick as u32;
        let mut next: Vec<Known> = Vec::with_capacity(seen.len() + seen.len() / 64);
        let mut old = old.into_iter().peekable();
        for s in seen {
            let listed = sockets.at(s.row as usize);
            let before = match next.last() {
                // Sockets sharing a cookie (0: none was read) apply in
                // dump order, as they did to one map entry.
                Some(last) if last.cookie == s.cookie && last.last_tick == tick => next.pop(),
                _ => {
                    while let Some(gone) = old.next_if(|k| k.cookie < s.cookie) {
                        self.keep_unlisted(&mut next, gone, tick);
                    }
                    old.next_if(|k| k.cookie == s.cookie)
                        .filter(|k| k.last_tick != 0)
                }
            };
            let Some(before) = before else {
                self.forget(s.cookie);
                next.push(Known {
                    cookie: s.cookie,
                    first_seen: mono,
                    last_tick: tick,
                    row: s.row,
                });
                continue;
            };
            let unlisted = self.unlisted.remove(&s.cookie);
            if listed.users.is_empty() {
                // The owners it had: in the dump before (or a duplicate of
                // this one), else as kept when it was last listed without.
                let table = if before.last_tick == tick {
                    sockets
                } else {
                    &self.last
                };
                let had = match unlisted {
                    Some(unlisted) => unlisted.users,
                    None => table
                        .get(before.row as usize)
                        .map_or_else(Box::default, |b| b.users.into()),
                };
                if !had.is_empty() {
                    self.earlier_users.insert(s.cookie, had);
                }
            } else if !self.earlier_users.is_empty() {
                self.earlier_users.remove(&s.cookie);
            }
            next.push(Known {
                last_tick: tick,
                row: s.row,
                ..before
            });
        }
        for gone in old {
            self.keep_unlisted(&mut next, gone, tick);
        }
        next
    }

    /// Keeps a socket the dump did not list, for a few ticks: its last
    /// sighting copied out of the dump that listed it (`last`) the first
    /// time.
    fn keep_unlisted(&mut self, next: &mut Vec<Known>, known: Known, tick: u32) {
        if known.last_tick == 0 || tick.saturating_sub(known.last_tick) >= FORGET_AFTER_TICKS {
            self.forget(known.cookie);
            return;
        }
        if known.last_tick + 1 == tick {
            let earlier = self.earlier_users.remove(&known.cookie);
            let copy = sighting(&known, &self.last, earlier);
            self.unlisted.insert(known.cookie, copy);
        }
        next.push(known);
    }

    fn forget(&mut self, cookie: u64) {
        self.unlisted.remove(&cookie);
        self.earlier_users.remove(&cookie);
    }
}

/// The sighting of `known` in `table` (the dump that last listed it), with
/// the owners an earlier dump found when that one found none.
fn sighting(known: &Known, table: &SocketTable, earlier: Option<Box<[SocketUser]>>) -> Sighting {
    let socket = table.at(known.row as usize);
    let info = socket.tcp.copied().unwrap_or_default();
    let users = match earlier {
        Some(users) if socket.users.is_empty() => users,
        _ => socket.users.into(),
    };
    Sighting {
        first_seen: known.first_seen,
        local: socket.local,
        peer: socket.peer,
        users,
        bytes_acked: info.bytes_acked,
        bytes_received: info.bytes_received,
        rtt_us: info.rtt_us,
        retrans: info.total_retrans,
    }
}

/// The netlink socket, bound to the destroy groups, non-blocking, with a
/// large receive buffer (SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it
/// the kernel caps SO_RCVBUF at net.core.rmem_max).
fn subscribe() -> Result<Netlink, String> {
    let mut socket = Netlink::new(NETLINK_SOCK_DIAG)
        .map_err(|e| format!("connection log: cannot open a sock_diag socket: {e}"))?;
    let fd = socket.as_raw_fd();
    let size = RECEIVE_BUFFER;
    let size_len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: setsockopt reads one c_int from `size`, which outlives the call.
    let forced = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&raw const size).cast(),
            size_len,
        )
    };
    if forced != 0 {
        // SAFETY: as above.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&raw const size).cast(),
                size_len,
            )
        };
    }
    socket.bind(&NetlinkAddr::new(0, GROUPS)).map_err(|e| {
        if e.raw_os_error() == Some(libc::EPERM) {
            "connection log unavailable: subscribing to TCP close events needs \
             CAP_NET_ADMIN (run as root)"
                .to_string()
        } else {
            format!("connection log unavailable: cannot subscribe to TCP close events: {e}")
        }
    })?;
    socket
        .set_non_blocking(true)
        .map_err(|e| format!("connection log: cannot make the socket non-blocking: {e}"))?;
    Ok(socket)
}

/// Reads every queued notification. ENOBUFS (the kernel dropped some) is
/// counted and reading goes on: the queue still holds the rest.
fn read_pending(socket: &Netlink, buffer: &mut [u8], enobufs: &mut u64) -> Vec<Destroyed> {
    let mut out = Vec::new();
    while out.len() < MAX_READ_PER_TICK {
        let size = match socket.recv(&mut &mut buffer[..], libc::MSG_DONTWAIT) {
            Ok(size) => size,
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                *enobufs += 1;
                continue;
            }
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(_) => break, // EAGAIN: nothing more queued
        };
        if size == 0 {
            break;
        }
        parse_datagram(&buffer[..size.min(buffer.len())], &mut out);
    }
    out
}

/// The notifications in one datagram (one or more netlink messages).
pub fn parse_datagram(datagram: &[u8], out: &mut Vec<Destroyed>) {
    let mut offset = 0;
    while offset + 16 <= datagram.len() {
        let message = &datagram[offset..];
        let length = u32::from_ne_bytes([message[0], message[1], message[2], message[3]]) as usize;
        if length < 16 || length > message.len() {
            return;
        }
        let kind = u16::from_ne_bytes([message[4], message[5]]);
        if kind == SOCK_DIAG_BY_FAMILY
            && let Some(destroyed) = tcp_destroy::parse(&message[16..length])
        {
            out.push(destroyed);
        }
        offset += (length + 3) & !3;
    }
}

/// The socket's drop count (SO_MEMINFO's SK_MEMINFO_DROPS).
fn socket_drops(socket: &Netlink) -> Option<u64> {
    let mut meminfo = [0u32; 16];
    let mut length = std::mem::size_of_val(&meminfo) as libc::socklen_t;
    // SAFETY: getsockopt writes at most `length` bytes into `meminfo`.
    let result = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_MEMINFO,
            meminfo.as_mut_ptr().cast(),
            &mut length,
        )
    };
    (result == 0 && length as usize > SK_MEMINFO_DROPS * 4)
        .then(|| u64::from(meminfo[SK_MEMINFO_DROPS]))
}

/// net.ipv4.tcp_syn_retries of the namespace the thread is in (/proc/sys
/// /net follows the reader's namespace); the kernel default when unreadable.
fn syn_retries() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_syn_retries")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::{TCP_ESTABLISHED, TcpInfoSample};

    fn socket(port: u16, owner: Option<u32>, acked: u64) -> SocketSample {
        SocketSample {
            proto: Proto::Tcp,
            state: TCP_ESTABLISHED,
            local: SocketAddr::from(([198, 18, 0, 1], port)),
            peer: SocketAddr::from(([198, 18, 0, 2], 80)),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: u32::from(port),
            users: owner
                .map(|pid| SocketUser {
                    process: "app".into(),
                    pid,
                    fd: 3,
                })
                .into_iter()
                .collect(),
            owner_denied: false,
            owner_pending: false,
            tcp: Some(TcpInfoSample {
                bytes_acked: acked,
                ..Default::default()
            }),
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        }
    }

    fn log() -> ConnLog {
        ConnLog {
            socket: Err("not subscribed".into()),
            buffer: Vec::new(),
            known: Vec::new(),
            last: SocketTable::default(),
            unlisted: HashMap::new(),
            earlier_users: HashMap::new(),
            listeners: HashMap::new(),
            tick: 0,
            totals: [0; Ending::ALL.len()],
            enobufs: 0,
            owners: Err("not loaded".into()),
            unowned: UnownedBytes::default(),
        }
    }

    /// The sorted table keeps what the map kept: first sightings, owners a
    /// later dump did not find, counters of the last sighting; a socket
    /// gone from the dumps for FORGET_AFTER_TICKS ticks is forgotten, and
    /// one whose end was logged starts anew.
    #[test]
    fn known_sockets_merge_across_dumps() {
        let mut log = log();
        // Dump order is not cookie order.
        log.observe(
            &SocketTable::from(vec![socket(2, Some(7), 10), socket(1, None, 5)]),
            &[20, 10],
            1.0,
        );
        log.observe(
            &SocketTable::from(vec![socket(1, Some(8), 6), socket(2, None, 11)]),
            &[10, 20],
            2.0,
        );
        let cookies: Vec<u64> = log.known.iter().map(|k| k.cookie).collect();
        assert_eq!(cookies, [10, 20]);
        let first = log.take_known(20).unwrap();
        assert_eq!(first.first_seen, 1.0);
        assert_eq!(first.users[0].pid, 7, "kept when the dump found no owner");
        assert_eq!(first.bytes_acked, 11, "the last sighting's, as read");
        assert!(log.take_known(20).is_none(), "taken once");
        // 20 listed again after its end was logged: a new socket.
        log.observe(&SocketTable::from(vec![socket(2, None, 1)]), &[20], 3.0);
        assert_eq!(log.take_known(20).unwrap().first_seen, 3.0);
        // 10 was last seen at tick 2: kept through tick 4, gone at 5.
        log.observe(&SocketTable::default(), &[], 4.0);
        assert_eq!(log.known.iter().filter(|k| k.cookie == 10).count(), 1);
        log.observe(&SocketTable::default(), &[], 5.0);
        assert!(log.take_known(10).is_none());
        assert!(log.known.is_empty());
    }

    /// A socket no dump lists any more is logged from its last sighting,
    /// copied out of the dump that listed it before that dump was let go;
    /// owners an earlier dump found stay with it.
    #[test]
    fn an_unlisted_socket_keeps_its_last_sighting() {
        let mut log = log();
        let table = |sockets: Vec<SocketSample>| SocketTable::from(sockets);
        log.observe(&table(vec![socket(1, Some(7), 5)]), &[10], 1.0);
        log.observe(&table(vec![socket(1, None, 9)]), &[10], 2.0);
        log.observe(&table(vec![socket(3, None, 1)]), &[30], 3.0);
        log.observe(&table(vec![socket(4, None, 1)]), &[40], 4.0);
        let gone = log.take_known(10).unwrap();
        assert_eq!(gone.local.port(), 1);
        assert_eq!(gone.users[0].pid, 7, "found by the first dump only");
        assert_eq!((gone.bytes_acked, gone.first_seen), (9, 1.0));
        assert!(!log.unlisted.contains_key(&10) && log.earlier_users.is_empty());
        // 30, unlisted since tick 4, is forgotten at tick 6.
        log.observe(&table(vec![]), &[], 5.0);
        assert!(log.unlisted.contains_key(&30));
        log.observe(&table(vec![]), &[], 6.0);
        assert!(log.take_known(30).is_none() && !log.unlisted.contains_key(&30));
    }

    /// A socket listed without an owner after the first dump: what it
    /// moved since then goes to the owner a later dump names, which the
    /// rates add to that dump's own interval (100 - 80): 90 in all.
    #[test]
    fn bytes_moved_before_the_owner_was_found_go_to_it() {
        let mut log = log();
        assert!(
            log.observe(&SocketTable::from(vec![socket(1, None, 10)]), &[10], 1.0)
                .is_empty()
        );
        assert!(
            log.observe(&SocketTable::from(vec![socket(1, None, 50)]), &[10], 2.0)
                .is_empty()
        );
        assert!(
            log.observe(&SocketTable::from(vec![socket(1, None, 80)]), &[10], 3.0)
                .is_empty()
        );
        let named = log.observe(
            &SocketTable::from(vec![socket(1, Some(7), 100)]),
            &[10],
            4.0,
        );
        assert_eq!(named.len(), 1);
        assert_eq!((named[0].user.pid, named[0].bytes_sent), (7, 70));
        assert!(
            log.observe(
                &SocketTable::from(vec![socket(1, Some(7), 120)]),
                &[10],
                5.0
            )
            .is_empty()
        );
    }
}
