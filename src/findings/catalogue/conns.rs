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
    RWND_LIMITED,
    SNDBUF_LIMITED,
    QUEUEING,
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
