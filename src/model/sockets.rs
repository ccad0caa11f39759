//! Sockets and TCP stack data of one sample: what sock_diag, /proc/net/snmp,
//! /proc/net/netstat, /proc/net/sockstat and /proc/sys report. Raw values only;
//! rates come from two samples (see `tcp_rates`).

use super::snmp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// TCP states in the kernel's numbering (include/net/tcp_states.h), 1-based.
pub const TCP_STATES: [&str; 11] = [
    "ESTABLISHED",
    "SYN_SENT",
    "SYN_RECV",
    "FIN_WAIT1",
    "FIN_WAIT2",
    "TIME_WAIT",
    "CLOSE",
    "CLOSE_WAIT",
    "LAST_ACK",
    "LISTEN",
    "CLOSING",
];

pub const TCP_ESTABLISHED: u8 = 1;
pub const TCP_SYN_SENT: u8 = 2;
pub const TCP_SYN_RECV: u8 = 3;
pub const TCP_TIME_WAIT: u8 = 6;
pub const TCP_CLOSE: u8 = 7;
pub const TCP_CLOSE_WAIT: u8 = 8;
pub const TCP_LISTEN: u8 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    Tcp,
    Udp,
}

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
        }
    }
}

/// One process holding a socket, as `ss -p` shows it: ("nginx",pid=…,fd=…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketUser {
    pub process: ProcessName,
    pub pid: u32,
    pub fd: u32,
}

/// The processes holding a socket: almost always one, kept inline (a Vec
/// was a 32 B allocation per socket, made and freed on every copy of every
/// socket table); a socket shared by several processes spills to the heap.
pub type Owners = smallvec::SmallVec<[SocketUser; 1]>;

/// A process name (its comm), shared: a process holding 19,000 sockets has
/// one copy of its name, not one per socket and per sample kept (at a
/// million sockets those copies were 32 B each, four times over). Stored
/// and printed as a plain string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ProcessName(std::sync::Arc<str>);

impl ProcessName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for ProcessName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ProcessName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ProcessName {
    fn from(name: &str) -> Self {
        Self(name.into())
    }
}

impl From<String> for ProcessName {
    fn from(name: String) -> Self {
        Self(name.into())
    }
}

impl PartialEq<str> for ProcessName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for ProcessName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl Serialize for ProcessName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ProcessName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

/// What tcp_info says about one TCP socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpInfoSample {
    pub rtt_us: u32,
    pub rttvar_us: u32,
    /// Congestion window, in segments.
    pub cwnd: u32,
    pub ssthresh: u32,
    pub mss: u32,
    pub rto_us: u32,
    /// Segments retransmitted and not yet acknowledged (tcpi_retrans).
    pub retrans: u32,
    /// Retransmissions over the connection's life (tcpi_total_retrans).
    pub total_retrans: u32,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    /// Milliseconds since data was last sent / received / an ACK received.
    pub last_send_ms: u32,
    pub last_recv_ms: u32,
    pub last_ack_ms: u32,
}

/// Where a connection's time went, and what its path does: the tcp_info
/// fields `ss -ti` prints as busy, rwnd_limited, sndbuf_limited,
/// delivery_rate, app_limited, minrtt, notsent, snd_wnd, reord_seen,
/// dsack_dups, pacing_rate and reordering for a sender, and rcv_rtt,
/// rcv_ssthresh and rcv_space for a receiver. Kept out of line
/// (`SocketSample::limits`) and only for the sockets that have sent (busy
/// time), hold unsent data or are receiving: most of a big host's sockets
/// do none of these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpLimits {
    /// Microseconds with data in flight (tcpi_busy_time).
    pub busy_us: u64,
    /// Of them, limited by the receiver's window (tcpi_rwnd_limited).
    pub rwnd_limited_us: u64,
    /// Of them, limited by this socket's send buffer (tcpi_sndbuf_limited).
    pub sndbuf_limited_us: u64,
    /// The latest goodput, bytes a second (tcpi_delivery_rate).
    pub delivery_rate: u64,
    /// The delivery rate was measured while the application had nothing
    /// more to send (tcpi_delivery_rate_app_limited).
    pub app_limited: bool,
    /// The lowest RTT seen (tcpi_min_rtt): the path without its queues.
    pub min_rtt_us: u32,
    /// Bytes the application wrote that are not yet sent (tcpi_notsent_bytes).
    pub notsent_bytes: u32,
    /// The peer's advertised window, scaled, in bytes (tcpi_snd_wnd).
    pub snd_wnd: u32,
    /// Reorderings seen (tcpi_reord_seen).
    pub reord_seen: u32,
    /// Duplicate segments the peer reported (D-SACK): retransmits that
    /// were not needed (tcpi_dsack_dups).
    pub dsack_dups: u32,
    /// The rate the sender paces at, bytes a second (tcpi_pacing_rate).
    pub pacing_rate: u64,
    /// The cap the application set with SO_MAX_PACING_RATE, bytes a
    /// second; u64::MAX when none (tcpi_max_pacing_rate).
    pub max_pacing_rate: u64,
    /// How many segments of reordering the sender now tolerates before it
    /// retransmits (tcpi_reordering: net.ipv4.tcp_reordering at first).
    pub reordering: u32,
    /// The receiver's side: the RTT it measured, microseconds (tcpi_rcv_rtt;
    /// 0 before it received a window's worth).
    pub rcv_rtt_us: u32,
    /// The largest window it advertises now, bytes (tcpi_rcv_ssthresh):
    /// autotuning raises it up to what the receive buffer allows.
    pub rcv_ssthresh: u32,
    /// Bytes it received in one RTT, as autotuning measured it
    /// (tcpi_rcv_space).
    pub rcv_space: u32,
}

impl TcpLimits {
    /// The pacing cap the application set (SO_MAX_PACING_RATE), bytes a
    /// second; None when it set none (the kernel reports all ones, or 0
    /// from a kernel or recording without the field).
    pub fn pacing_cap(&self) -> Option<u64> {
        (self.max_pacing_rate != 0 && self.max_pacing_rate != u64::MAX)
            .then_some(self.max_pacing_rate)
    }

    /// The share of the busy time limited by the receiver's window and by
    /// the send buffer; None before any busy time.
    pub fn shares(&self) -> Option<(f64, f64)> {
        (self.busy_us > 0).then(|| {
            let busy = self.busy_us as f64;
            (
                self.rwnd_limited_us as f64 / busy,
                self.sndbuf_limited_us as f64 / busy,
            )
        })
    }
}

/// One TCP or UDP socket from a sock_diag dump, owned: what a
/// `SocketTable` packs and gives back (`Socket` is its view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SocketSample {
    pub proto: Proto,
    /// Kernel TCP state number (UDP: 1 connected, 7 unconnected).
    pub state: u8,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    /// ESTABLISHED: bytes not yet read by the application. LISTEN: the
    /// current accept-queue length.
    pub recv_q: u32,
    /// ESTABLISHED: bytes not yet acknowledged by the peer. LISTEN: the
    /// accept-queue limit (the backlog).
    pub send_q: u32,
    pub uid: u32,
    pub inode: u32,
    /// Processes holding the socket; empty when none was found.
    #[serde(default, skip_serializing_if = "Owners::is_empty")]
    pub users: Owners,
    /// No owner was found and some /proc/PID/fd could not be read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub owner_denied: bool,
    /// The owner is still being looked for (by a thread beside the
    /// sampler): it fills in at a later sample.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub owner_pending: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpInfoSample>,
    /// What limited it while sending or receiving (TCP sockets that have
    /// sent, hold unsent data or received data within the last second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Box<TcpLimits>>,
    /// Packets dropped on this socket (sk_meminfo SK_MEMINFO_DROPS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drops: Option<u32>,
    /// The receive buffer's size in bytes (sk_meminfo SK_MEMINFO_RCVBUF,
    /// ss's `rb`): SO_RCVBUF as the kernel set it, doubled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf: Option<u32>,
    /// Consecutive samples, this one included, in which an established
    /// socket's queue was non-empty: 1 when it just filled, +1 for each
    /// sample in which the application read nothing of a non-empty Recv-Q
    /// or the peer acknowledged nothing of a non-empty Send-Q; 0 when both
    /// queues are empty.
    #[serde(default)]
    pub queue_streak: u32,
    /// IPV6_V6ONLY (INET_DIAG_SKV6ONLY): an IPv6 socket that takes no IPv4.
    /// ss prints a dual-stack socket's any-address as "*", a v6-only one's
    /// as "[::]".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub v6only: bool,
    /// The id of its namespace in `Sample::namespaces` (0: the watched one,
    /// and every socket of an older recording).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub netns: u16,
}

/// An empty TCP socket (state 0, unspecified addresses, nothing known):
/// for building one field by field, as the test fixtures do.
impl Default for SocketSample {
    fn default() -> Self {
        let any = SocketAddr::from(([0, 0, 0, 0], 0));
        Self {
            proto: Proto::Tcp,
            state: 0,
            local: any,
            peer: any,
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: 0,
            users: Default::default(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            limits: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SocketKey {
    pub proto: Proto,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    /// Every container's nginx listens on 0.0.0.0:80: the namespace tells
    /// their sockets apart (`Socket::netns`).
    pub netns: u16,
}

pub fn tcp_state_name(state: u8) -> &'static str {
    match state {
        1 => "ESTAB",
        2 => "SYN-SENT",
        3 => "SYN-RECV",
        4 => "FIN-WAIT-1",
        5 => "FIN-WAIT-2",
        6 => "TIME-WAIT",
        7 => "CLOSE",
        8 => "CLOSE-WAIT",
        9 => "LAST-ACK",
        10 => "LISTEN",
        11 => "CLOSING",
        12 => "NEW-SYN-RECV",
        _ => "UNKNOWN",
    }
}

/// /proc/net/sockstat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sockstat {
    pub sockets_used: u64,
    pub tcp_inuse: u64,
    pub tcp_orphan: u64,
    pub tcp_tw: u64,
    pub tcp_alloc: u64,
    /// Pages of memory TCP uses, to compare with net.ipv4.tcp_mem.
    pub tcp_mem_pages: u64,
    pub udp_inuse: u64,
    pub udp_mem_pages: u64,
}

/// An address and port as ss prints them: port 0 as "*", the IPv6 any
/// address as "*" unless the socket is v6-only, IPv6 in brackets.
pub fn ss_endpoint(address: SocketAddr, v6only: bool) -> String {
    let host = match address.ip() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) if ip.is_unspecified() && !v6only => "*".to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    match address.port() {
        0 => format!("{host}:*"),
        port => format!("{host}:{port}"),
    }
}

/// The TCP/UDP stack of one sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpSample {
    /// Sockets per state, counted from the dump; index = state - 1.
    pub states: [u32; 11],
    /// Counters from /proc/net/snmp, /proc/net/netstat and /proc/net/snmp6
    /// as "Group.Name" ("Tcp.RetransSegs", "TcpExt.ListenOverflows",
    /// "Ip6.InDiscards"): all of them, for the counter catalogue's findings.
    pub counters: super::counters::Counters,
    pub sockstat: Sockstat,
    /// Kernel knobs by sysctl name, read live ("net.core.somaxconn" -> "4096").
    pub knobs: super::shared::Shared<BTreeMap<String, String>>,
    /// AF_UNIX sockets in the namespace.
    pub unix_sockets: u32,
    /// Orphaned TCP sockets of this namespace, counted from the dump: no
    /// file (inode 0) in FIN-WAIT-1/2, CLOSING or LAST-ACK. sockstat's
    /// orphan count is the whole host's, every namespace together.
    #[serde(default)]
    pub orphans: u32,
}

impl TcpSample {
    pub fn state_count(&self, state: u8) -> u32 {
        usize::from(state)
            .checked_sub(1)
            .and_then(|i| self.states.get(i))
            .copied()
            .unwrap_or(0)
    }

    pub fn counter(&self, name: &str) -> Option<u64> {
        self.counters.get(name).copied()
    }

    pub fn knob(&self, name: &str) -> Option<&str> {
        self.knobs.get(name).map(String::as_str)
    }

    /// tcp_mem's pressure threshold (its middle value), in pages.
    pub fn memory_pressure(&self) -> Option<bool> {
        let pressure: u64 = self
            .knob("net.ipv4.tcp_mem")?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        Some(self.sockstat.tcp_mem_pages >= pressure)
    }
}

/// The counters netlens keeps, in display order: group, name, what it means.
pub const COUNTERS: &[(&str, &str)] = &[
    (snmp::TCP_ACTIVE_OPENS, "connections opened (connect)"),
    (snmp::TCP_PASSIVE_OPENS, "connections accepted"),
    (snmp::TCP_ATTEMPT_FAILS, "connect attempts that failed"),
    (snmp::TCP_ESTAB_RESETS, "established connections reset"),
    (snmp::TCP_OUT_RSTS, "resets sent"),
    (snmp::TCP_EXT_TCP_ABORT_ON_DATA, "reset: data after close"),
    (
        snmp::TCP_EXT_TCP_ABORT_ON_CLOSE,
        "reset: closed with unread data",
    ),
    (snmp::TCP_EXT_TCP_ABORT_ON_MEMORY, "reset: out of memory"),
    (
        snmp::TCP_EXT_TCP_MEMORY_PRESSURES,
        "TCP memory pressure entered",
    ),
    (
        snmp::TCP_EXT_TCP_ABORT_ON_TIMEOUT,
        "reset: retries exhausted",
    ),
    (snmp::TCP_EXT_TCP_ABORT_ON_LINGER, "reset: linger timeout"),
    (snmp::TCP_IN_SEGS, "segments received"),
    (snmp::TCP_OUT_SEGS, "segments sent"),
    (snmp::TCP_RETRANS_SEGS, "segments retransmitted"),
    (snmp::TCP_IN_ERRS, "bad segments received"),
    (snmp::TCP_EXT_TCP_TIMEOUTS, "retransmission timeouts"),
    (snmp::TCP_EXT_TCP_SYN_RETRANS, "SYN/SYN-ACK retransmits"),
    (snmp::TCP_EXT_LISTEN_OVERFLOWS, "accept queue full"),
    (snmp::TCP_EXT_LISTEN_DROPS, "SYNs dropped by listeners"),
    (
        snmp::TCP_EXT_TCP_REQ_Q_FULL_DROP,
        "SYN queue full, no cookies",
    ),
    (snmp::TCP_EXT_SYNCOOKIES_SENT, "syncookies sent"),
    (snmp::TCP_EXT_SYNCOOKIES_RECV, "syncookies received"),
    (snmp::TCP_EXT_SYNCOOKIES_FAILED, "syncookies invalid"),
    (snmp::UDP_IN_DATAGRAMS, "UDP datagrams received"),
    (snmp::UDP_OUT_DATAGRAMS, "UDP datagrams sent"),
    (snmp::UDP_IN_ERRORS, "UDP receive errors"),
    (snmp::UDP_RCVBUF_ERRORS, "UDP receive buffer full"),
    (snmp::UDP_SNDBUF_ERRORS, "UDP send buffer full"),
    (snmp::UDP_NO_PORTS, "UDP to a closed port"),
];

/// The kernel knobs shown beside the counters, by sysctl name.
pub const KNOBS: &[&str] = &[
    "net.ipv4.tcp_max_syn_backlog",
    "net.core.somaxconn",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_synack_retries",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_mem",
    "net.core.netdev_max_backlog",
];

/// Knobs read for the findings' fixes (and JSON's `knobs`) that the TCP
/// tab does not show: udp-drops' receive buffer caps, tcp-memory's orphan
/// limit, and every other setting a catalogue fix names (a catalogue test
/// holds this list to the fixes), so a finding gives its value.
pub const FINDING_KNOBS: &[&str] = &[
    "net.ipv4.tcp_max_orphans",
    "net.core.rmem_default",
    "net.core.rmem_max",
    "net.ipv4.tcp_reordering",
    "net.ipv4.tcp_max_reordering",
    "net.ipv4.tcp_notsent_lowat",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.udp_mem",
    "net.core.wmem_max",
    "net.core.flow_limit_table_len",
    "net.ipv4.ip_forward",
    "net.ipv4.conf.all.accept_redirects",
    "net.ipv4.ipfrag_high_thresh",
    "net.ipv6.ip6frag_high_thresh",
    "net.ipv4.neigh.default.gc_thresh3",
    "net.netfilter.nf_conntrack_max",
    "net.netfilter.nf_conntrack_buckets",
    "net.netfilter.nf_conntrack_tcp_be_liberal",
];
