//! The connection catalogue: what the kernel's own accounting of a TCP
//! connection (tcp_info, as `ss -ti` prints it) says about why it is slow.
//! The findings (`conn:<name>`), `netlens explain`, the man page's
//! CONNECTION CATALOGUE and docs/catalogue.md's block come from this one
//! table. Plain data, as the rest of this folder.

use super::Level;

/// One entry: a tcp_info field, or a quantity derived from several, that
/// explains a slow connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conn {
    /// The finding it raises: "conn:" and a name.
    pub finding: &'static str,
    /// The tcp_info fields it reads, by the names `ss -ti` prints.
    pub fields: &'static str,
    pub level: Level,
    /// Raised at or above this, in `unit`, over one sampling interval.
    pub threshold: f64,
    pub unit: &'static str,
    pub meaning: &'static str,
    pub fix: &'static str,
}

impl Conn {
    /// The name after "conn:": "rwnd-limited".
    pub fn name(&self) -> &'static str {
        self.finding.trim_start_matches("conn:")
    }
}

pub const RWND_LIMITED: Conn = Conn {
    finding: "conn:rwnd-limited",
    fields: "busy, rwnd_limited, snd_wnd, rtt",
    level: Level::Warn,
    threshold: 50.0,
    unit: "% of the busy time",
    meaning: "While it had data to send, the sender waited this share of the time for \
              the receiver's window: the receiver advertised no more room, because its \
              receive buffer is small or its application reads slowly. The window at the \
              round-trip time caps the rate near snd_wnd / rtt.",
    fix: "on the receiver: a larger receive buffer (its SO_RCVBUF, or the maximum of \
          net.ipv4.tcp_rmem, which autotuning grows the buffer up to), or an application \
          that reads faster; nothing on the sender or the path helps",
};

pub const RCVBUF_LIMITED: Conn = Conn {
    finding: "conn:rcvbuf-limited",
    fields: "rcv_ssthresh, rcv_rtt, rcv_space, bytes_received; the socket's rb and Recv-Q",
    level: Level::Warn,
    threshold: 80.0,
    unit: "% of what this host's receive window lets through (window / rcv_rtt) received",
    meaning: "This host is the receiver, and the window it can advertise (rcv_ssthresh, \
              from its receive buffer) at the round-trip time it measured (rcv_rtt) caps \
              what the sender may have in flight: the connections received this share of \
              that cap while the application read what came (the Recv-Q stayed short). \
              The sender sees the same as rwnd_limited; the receiver alone can fix it.",
    fix: "a larger receive buffer on this host: the application's SO_RCVBUF (setting it \
          turns autotuning off for the socket), else the maximum of net.ipv4.tcp_rmem, \
          which autotuning grows the buffer up to",
};

pub const SNDBUF_LIMITED: Conn = Conn {
    finding: "conn:sndbuf-limited",
    fields: "busy, sndbuf_limited, notsent",
    level: Level::Warn,
    threshold: 50.0,
    unit: "% of the busy time",
    meaning: "While it had data to send, the sender was held this share of the time by \
              its own send buffer: the congestion and receive windows allowed more in \
              flight than the buffer holds.",
    fix: "a larger send buffer on the sender: its SO_SNDBUF, or the maximum of \
          net.ipv4.tcp_wmem (autotuning grows the buffer up to it)",
};

pub const QUEUEING: Conn = Conn {
    finding: "conn:queueing",
    fields: "rtt, minrtt, notsent; the egress qdisc's backlog and rate",
    level: Level::Warn,
    threshold: 20.0,
    unit: " ms of queueing delay (rtt - minrtt, and at least half the rtt)",
    meaning: "The smoothed round-trip time exceeds the lowest one seen by this much: the \
              packets wait in a queue, not on the wire. Where: this host's qdisc on the \
              egress interface when its backlog, at the rate it sends, accounts for half the \
              wait; else further on the path (a router's or the peer's buffer).",
    fix: "in this host's qdisc: its limit, or a shaper's latency or burst (tc -s qdisc \
          show dev IF), or an AQM qdisc such as fq_codel that keeps the queue short; \
          further on the path: netlens trace DEST shows the hop where the delay begins",
};

pub const APP_LIMITED: Conn = Conn {
    finding: "conn:app-limited",
    fields: "app_limited, delivery_rate, busy, rwnd_limited, sndbuf_limited",
    level: Level::Info,
    threshold: 50.0,
    unit: "% of its busy connections measured app-limited",
    meaning: "The application wrote less than the connection could carry: the delivery \
              rate was measured while the sender had nothing more to send, and neither \
              the receiver's window nor the send buffer held it. Its slowness is the \
              application's, not the network's.",
    fix: "look at the sending application (its CPU, its own upstream, how it writes); \
          no network setting makes it faster",
};

pub const PACING_CAPPED: Conn = Conn {
    finding: "conn:pacing-capped",
    fields: "pacing_rate (its cap: max_pacing_rate), bytes_acked, busy",
    level: Level::Warn,
    threshold: 80.0,
    unit: "% of the application's pacing cap delivered",
    meaning: "The application capped these sockets' rate itself (SO_MAX_PACING_RATE, \
              which ss prints after pacing_rate as its second value) and they delivered \
              this share of the cap over the interval: the cap is what holds them, not \
              the network.",
    fix: "the sending application's configuration: raise or remove the rate it sets with \
          SO_MAX_PACING_RATE; no network setting makes the connections faster",
};

pub const SPURIOUS_RETRANS: Conn = Conn {
    finding: "conn:spurious-retrans",
    fields: "dsack_dups, retrans (total), reord_seen, reordering, rto, rtt",
    level: Level::Warn,
    threshold: 10.0,
    unit: "% of at least 10 retransmitted segments reported needless (D-SACK)",
    meaning: "The receiver reported with D-SACK that it already had this share of the \
              segments the sender retransmitted: the sender took segments for lost that \
              were only late, and cut its rate for nothing. Either the path reordered \
              them (reord_seen rose) or the retransmission timer fired before their ACK \
              came.",
    fix: "reordering: the path (per-packet load balancing such as a bond in balance-rr, \
          a shaper or NIC that spreads one flow over queues); the sender adapts up to \
          net.ipv4.tcp_max_reordering, starting from net.ipv4.tcp_reordering. Early \
          timers: find the path's delay spikes (netlens trace DEST), or a route's rto_min",
};

pub const REORDERING: Conn = Conn {
    finding: "conn:reordering",
    fields: "reord_seen, reordering, dsack_dups, retrans (total)",
    level: Level::Warn,
    threshold: 1.0,
    unit: " reorderings a second, the degree above net.ipv4.tcp_reordering",
    meaning: "The path delivered the connections' segments out of order this often \
              (reord_seen), further than the sender tolerates at first (reordering rose \
              above net.ipv4.tcp_reordering; a few reorderings counted around losses \
              leave it there). Each time, until it learns how far the path reorders \
              (reordering, the segments it now waits for), the sender takes a late segment \
              for lost: it retransmits and cuts its window. Paths inside one host, over \
              one link or through per-flow load balancing do not reorder.",
    fix: "find what splits one connection's packets over several paths or queues \
          (per-packet load balancing, a bond in balance-rr, a shaper's classes); \
          net.ipv4.tcp_max_reordering caps how far the sender adapts",
};

pub const UNSENT_WAIT: Conn = Conn {
    finding: "conn:unsent-wait",
    fields: "notsent, bytes_acked, busy",
    level: Level::Info,
    threshold: 100.0,
    unit: " ms for the unsent bytes at the rate delivered",
    meaning: "What the application writes now waits this long in its own socket before \
              it is sent: the unsent bytes (notsent) at the rate the connections delivered \
              over the interval. The wait is the application's buffer, not the network's, \
              and the RTT does not show it; a bulk transfer always has some, an \
              interactive stream behind it feels all of it.",
    fix: "the send buffer lets the application write that far ahead (its SO_SNDBUF, or \
          net.ipv4.tcp_wmem: its default is where the buffer starts); TCP_NOTSENT_LOWAT \
          on the socket, or net.ipv4.tcp_notsent_lowat, keeps the unsent part short (the \
          application then writes when there is room)",
};

pub const SLOW_RESPONSE: Conn = Conn {
    finding: "conn:slow-response",
    fields: "the captured packets: a request's last segment to its answer's first; the \
             handshake's round trip",
    level: Level::Warn,
    threshold: 200.0,
    unit: " ms of the server's own time at the median of at least 5 requests (and at \
           least 4 network round trips)",
    meaning: "A server took this long, at the middle of the requests it answered over the \
              interval, from a request's last segment to its answer's first (timed from \
              packets, so TLS counts too; at the client one round trip is taken off). The \
              network's round trip, from the handshakes, is a small part of it: the time is \
              the application's, not the network's.",
    fix: "look at the server process: its handler, its CPU, what it waits on (a database, \
          a lock, an upstream); no network setting makes it answer sooner",
};

/// The entries, in the order they are judged and documented.
pub const CONNS: &[Conn] = &[
    PACING_CAPPED,
    RWND_LIMITED,
    RCVBUF_LIMITED,
    SNDBUF_LIMITED,
    SPURIOUS_RETRANS,
    QUEUEING,
    REORDERING,
    UNSENT_WAIT,
    APP_LIMITED,
    SLOW_RESPONSE,
];

/// The entry of a finding id or of the tcp_info field it is named for
/// ("conn:rwnd-limited", "rwnd-limited", "rwnd_limited"), any case.
pub fn conn(name: &str) -> Option<&'static Conn> {
    let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
    CONNS
        .iter()
        .find(|c| c.finding == wanted || c.name() == wanted)
}
