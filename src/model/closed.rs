//! Closed TCP connections: what sock_diag's destroy notifications said about
//! each socket as the kernel freed it (the connection log, tcplife-style).

use super::processes::Container;
use super::sockets::SocketUser;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// At most this many closed connections are kept in one sample; the rest
/// of the interval's are counted in `ClosedSample::overflow`, their bytes
/// (of those that opened within it) in `ClosedSample::overflow_bytes`.
pub const MAX_PER_SAMPLE: usize = 4096;

/// How many closed connections the Sockets tab's Closed view lists unless
/// the config file's `closed_rows` says otherwise.
pub const DEFAULT_VIEW_ROWS: usize = 1000;

/// How a connection ended, as far as the socket's last tcp_info tells (the
/// rule and its limits: `collect::tcp_destroy::ending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Our FIN was sent and acknowledged: a normal close.
    Fin,
    /// A reset arrived (the socket held no unread data, sent no FIN that
    /// was acknowledged, and no retransmission was pending).
    RstReceived,
    /// We aborted (SO_LINGER 0 close): the kernel sent a reset and zeroed
    /// the socket's counters.
    RstSent,
    /// A reset, sent because data was unread at close or received:
    /// tcp_info does not tell which.
    Rst,
    /// Retransmissions (or keepalive / window probes) went unanswered.
    Timeout,
    /// Never established: a reset (or an ICMP error) answered the SYN.
    Refused,
    /// Never established: no answer to the SYNs.
    SynTimeout,
    /// Never established: an ICMP destination unreachable answered the SYN
    /// (a router's, or this host's own when no neighbour answered). Told
    /// from `Refused` by the error the socket reported, which only the
    /// eBPF program sees.
    Unreachable,
}

impl Ending {
    pub const ALL: [Ending; 8] = [
        Ending::Fin,
        Ending::RstReceived,
        Ending::RstSent,
        Ending::Rst,
        Ending::Timeout,
        Ending::Refused,
        Ending::SynTimeout,
        Ending::Unreachable,
    ];

    /// The name in tables, JSON and the exporter's `how` label.
    pub fn name(self) -> &'static str {
        match self {
            Ending::Fin => "fin",
            Ending::RstReceived => "rst-received",
            Ending::RstSent => "rst-sent",
            Ending::Rst => "rst",
            Ending::Timeout => "timeout",
            Ending::Refused => "refused",
            Ending::SynTimeout => "syn-timeout",
            Ending::Unreachable => "unreachable",
        }
    }

    /// Whether the connection was ever established.
    pub fn established(self) -> bool {
        !matches!(
            self,
            Ending::Refused | Ending::SynTimeout | Ending::Unreachable
        )
    }
}

/// One TCP connection that ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosedConn {
    /// Wall-clock time the notification was read, seconds since the epoch.
    pub t: f64,
    /// The kernel's socket cookie (unique per socket while the host runs).
    pub cookie: u64,
    pub local: SocketAddr,
    /// The peer; port 0 when an abort or a failed connect cleared it and
    /// netlens had not seen the socket before.
    pub peer: SocketAddr,
    /// The process that held the socket when netlens last saw it (it may
    /// have exited since), else the owner of the listener that accepted it;
    /// empty when neither is known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<SocketUser>,
    /// The cgroup v2 id of the process the eBPF program named; None when
    /// a dump named the owner, and in older recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<u64>,
    /// The container of that cgroup, when the process's own is not known:
    /// it exited before its container was looked up (a failed `curl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_container: Option<Box<Container>>,
    /// Whether the socket was accepted from a listener (else it connected).
    pub accepted: bool,
    /// Data bytes the peer acknowledged (SYN and FIN not counted); None when
    /// the kernel zeroed the counters (abort, failed connect) and netlens had
    /// not seen the socket.
    pub bytes_sent: Option<u64>,
    /// Data bytes received in order (the peer's FIN not counted).
    pub bytes_received: Option<u64>,
    /// Seconds from the first sample that saw the socket to its end; None
    /// when it lived and died between two samples.
    pub duration_s: Option<f64>,
    /// Smoothed RTT in microseconds; 0 when never measured.
    pub rtt_us: u32,
    /// Retransmitted segments over the connection's life.
    pub retrans: u32,
    pub ending: Ending,
}

/// The connection log of one sample: what ended during its interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClosedSample {
    pub conns: Vec<ClosedConn>,
    /// Connections of this interval left out beyond `MAX_PER_SAMPLE`.
    #[serde(default)]
    pub overflow: u64,
    /// What the left-out connections that opened and closed within the
    /// interval moved, per process: its traffic stays whole however many
    /// connections end (the others' bytes need the previous sample's
    /// counts, so they are listed first and only the surplus is lost).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overflow_bytes: Vec<ProcessBytes>,
    /// What sockets moved while the dumps listed them without an owner (a
    /// look-up still running, a socket its process had just closed), per
    /// process: no rate counted it then; it counts in the sample whose
    /// dump or connection log first names the owner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unowned_bytes: Vec<ProcessBytes>,
    /// Notifications the kernel dropped because netlens' receive buffer was
    /// full (ENOBUFS), since netlens started: a lower bound.
    #[serde(default)]
    pub lost: u64,
    /// Connections that ended since netlens started, per ending (the
    /// exporter's counters); in `Ending::ALL` order.
    #[serde(default)]
    pub totals: Vec<u64>,
    /// Why there is no log (one line), e.g. a missing CAP_NET_ADMIN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why no eBPF program names the owners of connections that opened and
    /// closed between two samples (one line); None when it does, and in
    /// recordings made before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owners_unavailable: Option<String>,
}

/// Bytes of some connections of one process, summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessBytes {
    pub user: SocketUser,
    pub conns: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

impl ProcessBytes {
    /// Adds one connection's bytes to `user`'s entry of `list`.
    pub fn add(list: &mut Vec<ProcessBytes>, user: &SocketUser, sent: u64, received: u64) {
        let one = ProcessBytes {
            user: user.clone(),
            conns: 1,
            bytes_sent: sent,
            bytes_received: received,
        };
        ProcessBytes::merge(list, one);
    }

    /// Adds `bytes` to its process's entry of `list`.
    pub fn merge(list: &mut Vec<ProcessBytes>, bytes: ProcessBytes) {
        match list.iter_mut().find(|b| b.user.pid == bytes.user.pid) {
            Some(entry) => {
                entry.conns += bytes.conns;
                entry.bytes_sent += bytes.bytes_sent;
                entry.bytes_received += bytes.bytes_received;
            }
            None => list.push(bytes),
        }
    }
}

impl ClosedSample {
    /// Lists `conns` up to `MAX_PER_SAMPLE`, those seen in an earlier
    /// sample first; the rest are counted, and the bytes of those that
    /// lived and died between two samples are summed per process.
    pub fn list(&mut self, mut conns: Vec<ClosedConn>) {
        if conns.len() > MAX_PER_SAMPLE {
            // Stable: the kernel's order within each kind.
            conns.sort_by_key(|c| c.duration_s.is_none());
        }
        let rest = conns.split_off(conns.len().min(MAX_PER_SAMPLE));
        self.overflow += rest.len() as u64;
        for conn in rest.iter().filter(|c| c.duration_s.is_none()) {
            let (Some(user), Some(sent), Some(received)) =
                (conn.users.first(), conn.bytes_sent, conn.bytes_received)
            else {
                continue;
            };
            ProcessBytes::add(&mut self.overflow_bytes, user, sent, received);
        }
        self.conns = conns;
    }

    /// Adds `named` (per process, from the dump after this log was read)
    /// to `unowned_bytes`.
    pub fn add_unowned(&mut self, named: Vec<ProcessBytes>) {
        for bytes in named {
            ProcessBytes::merge(&mut self.unowned_bytes, bytes);
        }
    }

    /// Notifications the kernel dropped since `previous` (since netlens
    /// started without one): the connections they ended are missing from
    /// the log and their last bytes from the rates.
    pub fn lost_since(&self, previous: Option<&ClosedSample>) -> u64 {
        self.lost.saturating_sub(previous.map_or(0, |p| p.lost))
    }

    /// A sample that only says why the log is missing.
    pub fn unavailable(error: String) -> Self {
        Self {
            error: Some(error),
            ..Self::default()
        }
    }

    /// The count of connections ended with `ending` since netlens started.
    pub fn total(&self, ending: Ending) -> u64 {
        let index = Ending::ALL.iter().position(|e| *e == ending);
        index.and_then(|i| self.totals.get(i)).copied().unwrap_or(0)
    }
}

/// What the Processes tab and `snapshot` say when `lost` connection ends
/// were dropped over the interval, in one 80-column line.
pub fn lost_note(lost: u64) -> String {
    format!("{lost} connection ends lost (kernel queue full): TCP rates are too low")
}

impl ClosedConn {
    /// The first owner's command, "-" when unknown.
    pub fn process(&self) -> &str {
        self.users.first().map_or("-", |u| u.process.as_str())
    }

    /// The first owner's pid, None when unknown.
    pub fn pid(&self) -> Option<u32> {
        self.users.first().map(|u| u.pid)
    }
}
