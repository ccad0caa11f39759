//! The connection log: every TCP connection that ends, from sock_diag's
//! destroy notifications (multicast groups SKNLGRP_INET_TCP_DESTROY and
//! SKNLGRP_INET6_TCP_DESTROY), with its owner and first sighting taken from
//! the socket dumps that saw it alive (keyed by the socket cookie).
//!
//! The subscription is per network namespace: `open` must run on the
//! sampler thread after it entered the watched namespace. The socket is
//! non-blocking and drained once per tick; a full receive buffer makes the
//! kernel drop notifications, which netlens reads back as the socket's
//! drop count (SO_MEMINFO) and reports as `lost`, never silently.

use super::tcp_destroy::{self, Destroyed, TCP_LISTEN};
use crate::model::closed::{ClosedConn, ClosedSample, Ending, MAX_PER_SAMPLE};
use crate::model::sockets::{Proto, SocketSample, SocketUser, TCP_LISTEN as LISTEN};
use netlink_sys::{Socket, SocketAddr as NetlinkAddr, protocols::NETLINK_SOCK_DIAG};
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
const FORGET_AFTER_TICKS: u64 = 3;
/// How long a listener is remembered after it was last seen, seconds (its
/// accepted sockets outlive it).
const LISTENER_MEMORY_S: f64 = 600.0;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const SO_MEMINFO: libc::c_int = 55;
const SK_MEMINFO_DROPS: usize = 8;

/// What a dump told about a socket that is (or was, a tick ago) alive.
struct Known {
    first_seen: f64,
    local: SocketAddr,
    peer: SocketAddr,
    users: Vec<SocketUser>,
    /// Data bytes acknowledged / received at the last sighting, SYN and FIN
    /// not counted: for an abort, whose counters the kernel zeroes.
    bytes_sent: u64,
    bytes_received: u64,
    rtt_us: u32,
    retrans: u32,
    last_tick: u64,
}

struct Listener {
    users: Vec<SocketUser>,
    last_seen: f64,
}

pub struct ConnLog {
    socket: Result<Socket, String>,
    buffer: Vec<u8>,
    known: HashMap<u64, Known>,
    listeners: HashMap<u16, Listener>,
    tick: u64,
    totals: [u64; Ending::ALL.len()],
    enobufs: u64,
}

impl ConnLog {
    /// Subscribes in the calling thread's namespace. A failure (no
    /// CAP_NET_ADMIN, a kernel without sock_diag) is kept and reported in
    /// every sample; the other collectors go on.
    pub fn open() -> Self {
        Self {
            socket: subscribe(),
            buffer: vec![0; 256 * 1024],
            known: HashMap::new(),
            listeners: HashMap::new(),
            tick: 0,
            totals: [0; Ending::ALL.len()],
            enobufs: 0,
        }
    }

    /// Learns owners and first sightings from a dump: `cookies[i]` is the
    /// cookie of `sockets[i]`. Owners found earlier are kept when a socket
    /// lost its file (closed, still finishing).
    pub fn observe(&mut self, sockets: &[SocketSample], cookies: &[u64], mono: f64) {
        self.tick += 1;
        for (socket, cookie) in sockets.iter().zip(cookies) {
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
                    listener.users.clone_from(&socket.users);
                }
                continue;
            }
            let known = self.known.entry(*cookie).or_insert_with(|| Known {
                first_seen: mono,
                local: socket.local,
                peer: socket.peer,
                users: Vec::new(),
                bytes_sent: 0,
                bytes_received: 0,
                rtt_us: 0,
                retrans: 0,
                last_tick: 0,
            });
            known.last_tick = self.tick;
            if !socket.users.is_empty() {
                known.users.clone_from(&socket.users);
            }
            if let Some(info) = socket.tcp {
                let accepted = self.listeners.contains_key(&socket.local.port());
                known.bytes_sent = info.bytes_acked.saturating_sub(u64::from(!accepted));
                known.bytes_received = info.bytes_received;
                known.rtt_us = info.rtt_us;
                known.retrans = info.total_retrans;
            }
        }
        let tick = self.tick;
        self.known
            .retain(|_, k| tick.saturating_sub(k.last_tick) < FORGET_AFTER_TICKS);
        self.listeners
            .retain(|_, l| mono - l.last_seen < LISTENER_MEMORY_S);
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
        let mut sample = ClosedSample::default();
        for destroyed in messages {
            let Some(conn) = self.resolve(&destroyed, t, mono, syn_retries) else {
                continue;
            };
            if let Some(i) = Ending::ALL.iter().position(|e| *e == conn.ending) {
                self.totals[i] += 1;
            }
            if sample.conns.len() < MAX_PER_SAMPLE {
                sample.conns.push(conn);
            } else {
                sample.overflow += 1;
            }
        }
        sample.totals = self.totals.to_vec();
        sample.lost = self.lost();
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
        let known = self.known.remove(&destroyed.cookie);
        if zeroed && destroyed.wqueue == 0 && destroyed.peer.port() == 0 && known.is_none() {
            return None; // bound, never connected
        }
        let listener = self.listeners.get(&destroyed.local.port());
        let accepted = listener.is_some();
        let ending = tcp_destroy::ending(destroyed, accepted, syn_retries);
        let mut users = known.as_ref().map(|k| k.users.clone()).unwrap_or_default();
        if users.is_empty()
            && let Some(listener) = listener
        {
            users.clone_from(&listener.users);
        }
        let (bytes_sent, bytes_received) = if zeroed {
            match &known {
                Some(k) if ending.established() => (Some(k.bytes_sent), Some(k.bytes_received)),
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

/// The netlink socket, bound to the destroy groups, non-blocking, with a
/// large receive buffer (SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it
/// the kernel caps SO_RCVBUF at net.core.rmem_max).
fn subscribe() -> Result<Socket, String> {
    let mut socket = Socket::new(NETLINK_SOCK_DIAG)
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
fn read_pending(socket: &Socket, buffer: &mut [u8], enobufs: &mut u64) -> Vec<Destroyed> {
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
fn socket_drops(socket: &Socket) -> Option<u64> {
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
