//! A direct reader of sock_diag's inet replies (struct inet_diag_msg and the
//! INET_DIAG_INFO / INET_DIAG_SKMEMINFO attributes), straight into a
//! SocketSample.
//!
//! netlink-packet-sock-diag builds the requests; its reply parser returns an
//! InetResponse holding a SmallVec of eight ~250-byte attributes by value,
//! and moving that per socket cost a third of a 50k-socket sample
//! (measured: memmove was the top symbol). This reader only touches the
//! bytes netlens keeps. Its unit test checks it against the crate's parser.

use crate::model::sockets::{Owners, Proto, SocketSample, TcpInfoSample, TcpLimits};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

const INET_DIAG_MSG_LEN: usize = 72;
const INET_DIAG_INFO: u16 = 2;
const INET_DIAG_SKMEMINFO: u16 = 7;
const INET_DIAG_SKV6ONLY: u16 = 11;
const AF_INET: u8 = libc::AF_INET as u8;
const SK_MEMINFO_RCVBUF: usize = 1;
const SK_MEMINFO_DROPS: usize = 8;

fn u32_ne(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_ne(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// An address as inet_diag_sockid holds it: 16 bytes, IPv4 in the first 4.
pub fn address(family: u8, bytes: &[u8]) -> IpAddr {
    let mut raw = [0u8; 16];
    raw.copy_from_slice(&bytes[..16]);
    if family == AF_INET {
        IpAddr::V4(Ipv4Addr::new(raw[0], raw[1], raw[2], raw[3]))
    } else {
        IpAddr::V6(Ipv6Addr::from(raw))
    }
}

/// One reply payload (after the netlink header) as a socket; None when it
/// is too short to be an inet_diag_msg.
pub fn parse(proto: Proto, payload: &[u8]) -> Option<SocketSample> {
    if payload.len() < INET_DIAG_MSG_LEN {
        return None;
    }
    let family = payload[0];
    let sport = u16::from_be_bytes([payload[4], payload[5]]);
    let dport = u16::from_be_bytes([payload[6], payload[7]]);
    let mut socket = SocketSample {
        proto,
        state: payload[1],
        local: SocketAddr::new(address(family, &payload[8..24]), sport),
        peer: SocketAddr::new(address(family, &payload[24..40]), dport),
        recv_q: u32_ne(payload, 56)?,
        send_q: u32_ne(payload, 60)?,
        uid: u32_ne(payload, 64)?,
        inode: u32_ne(payload, 68)?,
        users: Owners::new(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        limits: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
    };
    attributes(&payload[INET_DIAG_MSG_LEN..], |kind, value| match kind {
        INET_DIAG_INFO => {
            socket.tcp = tcp_info(value);
            socket.limits = tcp_limits(value).map(Box::new);
        }
        INET_DIAG_SKMEMINFO => {
            socket.rcvbuf = u32_ne(value, SK_MEMINFO_RCVBUF * 4);
            socket.drops = u32_ne(value, SK_MEMINFO_DROPS * 4);
        }
        INET_DIAG_SKV6ONLY => socket.v6only = value.first().is_some_and(|v| *v != 0),
        _ => {}
    });
    Some(socket)
}

/// Hands each netlink attribute (type without its flag bits, value) after
/// an inet_diag_msg to `each`. A length below the header or past the end
/// stops the walk: nothing is read beyond `rest`.
pub fn attributes(mut rest: &[u8], mut each: impl FnMut(u16, &[u8])) {
    while rest.len() >= 4 {
        let length = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
        let kind = u16::from_ne_bytes([rest[2], rest[3]]) & 0x3fff;
        if length < 4 || length > rest.len() {
            return;
        }
        each(kind, &rest[4..length]);
        rest = &rest[((length + 3) & !3).min(rest.len())..];
    }
}

/// A socket that received data this recently is receiving: its window
/// may be what limits its sender. An idle one keeps no limits.
const RECEIVING_MS: u32 = 1000;

/// What limited a sending or receiving socket (offsets from linux/tcp.h):
/// None when the kernel's struct has no busy time (before 4.10), or the
/// socket never sent, holds nothing unsent and received nothing within
/// RECEIVING_MS. Fields a shorter struct lacks read as 0.
fn tcp_limits(b: &[u8]) -> Option<TcpLimits> {
    let u32_at = |at| u32_ne(b, at).unwrap_or(0);
    let u64_at = |at| u64_ne(b, at).unwrap_or(0);
    if b.len() < 192 {
        return None;
    }
    let limits = TcpLimits {
        // tcpi_delivery_rate_app_limited: the first bit of byte 7.
        app_limited: b[7] & 1 != 0,
        notsent_bytes: u32_at(144),
        min_rtt_us: u32_at(148),
        delivery_rate: u64_at(160),
        busy_us: u64_at(168),
        rwnd_limited_us: u64_at(176),
        sndbuf_limited_us: u64_at(184),
        dsack_dups: u32_at(216),
        reord_seen: u32_at(220),
        snd_wnd: u32_at(228),
        pacing_rate: u64_at(104),
        max_pacing_rate: u64_at(112),
        reordering: u32_at(88),
        rcv_rtt_us: u32_at(92),
        rcv_ssthresh: u32_at(64),
        rcv_space: u32_at(96),
    };
    // tcpi_last_data_recv, tcpi_bytes_received.
    let receiving = u32_at(52) < RECEIVING_MS && u64_at(128) > 0;
    (limits.busy_us > 0 || limits.notsent_bytes > 0 || receiving).then_some(limits)
}

/// The struct tcp_info fields netlens shows (offsets from linux/tcp.h).
/// Older kernels send a shorter struct: fields it lacks read as 0.
fn tcp_info(b: &[u8]) -> Option<TcpInfoSample> {
    let u32_at = |at| u32_ne(b, at).unwrap_or(0);
    let u64_at = |at| u64_ne(b, at).unwrap_or(0);
    (b.len() >= 104).then(|| TcpInfoSample {
        rto_us: u32_at(8),
        mss: u32_at(16),
        retrans: u32_at(36),
        last_send_ms: u32_at(44),
        last_recv_ms: u32_at(52),
        last_ack_ms: u32_at(56),
        rtt_us: u32_at(68),
        rttvar_us: u32_at(72),
        ssthresh: u32_at(76),
        cwnd: u32_at(80),
        total_retrans: u32_at(100),
        bytes_acked: u64_at(120),
        bytes_received: u64_at(128),
    })
}
