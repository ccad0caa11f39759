//! The `tcp` and `sockets[]` parts of `snapshot --json` (keys documented in
//! the man page).

use crate::model::Sample;
use crate::model::processes::Container;
use crate::model::snmp;
use crate::model::socket_table::Socket;
use crate::model::sockets::{Proto, Sockstat, TCP_STATES, TcpLimits, TcpSample};
use crate::model::tcp_rates::TcpRates;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Where one rate of the `tcp` object comes from.
enum Rate {
    /// A counter's change per second.
    Of(&'static str),
    /// Retransmitted segments per 100 sent (`TcpRates::retrans_percent`).
    RetransPercent,
}

/// The `tcp` object's rates, in key order (the man page documents them):
/// adding one is one row.
const TCP_RATES: &[(&str, Rate)] = &[
    ("retrans_segs_per_s", Rate::Of(snmp::TCP_RETRANS_SEGS)),
    ("out_segs_per_s", Rate::Of(snmp::TCP_OUT_SEGS)),
    ("retrans_percent", Rate::RetransPercent),
    (
        "listen_overflows_per_s",
        Rate::Of(snmp::TCP_EXT_LISTEN_OVERFLOWS),
    ),
    ("listen_drops_per_s", Rate::Of(snmp::TCP_EXT_LISTEN_DROPS)),
    (
        "syncookies_sent_per_s",
        Rate::Of(snmp::TCP_EXT_SYNCOOKIES_SENT),
    ),
    ("active_opens_per_s", Rate::Of(snmp::TCP_ACTIVE_OPENS)),
    ("passive_opens_per_s", Rate::Of(snmp::TCP_PASSIVE_OPENS)),
    ("attempt_fails_per_s", Rate::Of(snmp::TCP_ATTEMPT_FAILS)),
    ("estab_resets_per_s", Rate::Of(snmp::TCP_ESTAB_RESETS)),
    ("out_rsts_per_s", Rate::Of(snmp::TCP_OUT_RSTS)),
    ("udp_in_errors_per_s", Rate::Of(snmp::UDP_IN_ERRORS)),
    ("udp_rcvbuf_errors_per_s", Rate::Of(snmp::UDP_RCVBUF_ERRORS)),
    ("udp_sndbuf_errors_per_s", Rate::Of(snmp::UDP_SNDBUF_ERRORS)),
];

/// `TCP_RATES` over two samples, serialized as one key per row.
struct Rates<'a>(TcpRates<'a>);

impl Serialize for Rates<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(TCP_RATES.len()))?;
        for (key, rate) in TCP_RATES {
            let value = match rate {
                Rate::Of(counter) => self.0.rate(counter),
                Rate::RetransPercent => self.0.retrans_percent(),
            };
            map.serialize_entry(key, &value)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
pub struct TcpJson<'a> {
    states: BTreeMap<&'static str, u32>,
    /// The rates of `TCP_RATES`, flattened in as keys of their own.
    #[serde(flatten)]
    rates: Rates<'a>,
    /// Every counter netlens keeps: raw value and rate.
    counters: &'a crate::model::counters::Counters,
    counters_per_s: BTreeMap<&'a str, Option<f64>>,
    sockstat: &'a Sockstat,
    memory_pressure: Option<bool>,
    knobs: &'a BTreeMap<String, String>,
    unix_sockets: u32,
    /// This namespace's orphans (sockstat.tcp_orphan is the host's).
    orphans: u32,
}

pub fn tcp_json<'a>(previous: &'a Sample, current: &'a Sample) -> Option<TcpJson<'a>> {
    let tcp: &TcpSample = current.tcp.as_ref()?;
    let rates = TcpRates::new(Some(previous), current)?;
    let rate = |name: &str| rates.rate(name);
    Some(TcpJson {
        states: TCP_STATES
            .iter()
            .enumerate()
            .map(|(i, name)| (*name, tcp.states[i]))
            .collect(),
        rates: Rates(rates),
        counters: &tcp.counters,
        counters_per_s: tcp.counters.keys().map(|name| (name, rate(name))).collect(),
        sockstat: &tcp.sockstat,
        memory_pressure: tcp.memory_pressure(),
        knobs: &tcp.knobs,
        unix_sockets: tcp.unix_sockets,
        orphans: tcp.orphans,
    })
}

#[derive(Serialize)]
pub struct SocketJson<'a> {
    /// Its namespace's label, under `--all-netns` (set by the caller).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netns: Option<&'a str>,
    proto: &'static str,
    family: &'static str,
    state: &'static str,
    local: String,
    peer: String,
    v6only: bool,
    recv_q: u32,
    send_q: u32,
    pid: Option<u32>,
    process: Option<String>,
    /// "unknown (no permission)", or "looking" while owner_pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    owner_note: Option<&'static str>,
    /// The owner is still being looked for: it fills in at a later sample.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    owner_pending: bool,
    users: &'a [crate::model::sockets::SocketUser],
    /// The container its owner (the first user) runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    container: Option<&'a Container>,
    uid: u32,
    inode: u32,
    rtt_ms: Option<f64>,
    rttvar_ms: Option<f64>,
    cwnd: Option<u32>,
    retrans: Option<u32>,
    total_retrans: Option<u32>,
    bytes_acked: Option<u64>,
    bytes_received: Option<u64>,
    last_send_ms: Option<u32>,
    last_recv_ms: Option<u32>,
    drops: Option<u32>,
    queue_streak: u32,
    accept_queue_full: bool,
    /// What limited it while sending or receiving, as `ss -ti` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<LimitsJson>,
}

/// `TcpLimits` in ss -ti's units: ms, percent of the busy time, bits a
/// second.
#[derive(Serialize)]
pub struct LimitsJson {
    busy_ms: u64,
    rwnd_limited_ms: u64,
    rwnd_limited_pct: f64,
    sndbuf_limited_ms: u64,
    sndbuf_limited_pct: f64,
    delivery_rate_bps: u64,
    app_limited: bool,
    min_rtt_ms: f64,
    notsent_bytes: u32,
    snd_wnd: u32,
    reord_seen: u32,
    dsack_dups: u32,
    pacing_rate_bps: u64,
    /// The application's SO_MAX_PACING_RATE, null when it set none.
    max_pacing_rate_bps: Option<u64>,
    reordering: u32,
    /// The receiver's side: its RTT estimate, its largest window and what
    /// it received in one RTT (0 until it received a window's worth).
    rcv_rtt_ms: f64,
    rcv_ssthresh: u32,
    rcv_space: u32,
}

fn limits_json(limits: &TcpLimits) -> LimitsJson {
    let (rwnd, sndbuf) = limits.shares().unwrap_or((0.0, 0.0));
    LimitsJson {
        busy_ms: limits.busy_us / 1000,
        rwnd_limited_ms: limits.rwnd_limited_us / 1000,
        rwnd_limited_pct: rwnd * 100.0,
        sndbuf_limited_ms: limits.sndbuf_limited_us / 1000,
        sndbuf_limited_pct: sndbuf * 100.0,
        delivery_rate_bps: limits.delivery_rate.saturating_mul(8),
        app_limited: limits.app_limited,
        min_rtt_ms: f64::from(limits.min_rtt_us) / 1000.0,
        notsent_bytes: limits.notsent_bytes,
        snd_wnd: limits.snd_wnd,
        reord_seen: limits.reord_seen,
        dsack_dups: limits.dsack_dups,
        pacing_rate_bps: limits.pacing_rate.saturating_mul(8),
        max_pacing_rate_bps: limits.pacing_cap().map(|cap| cap.saturating_mul(8)),
        reordering: limits.reordering,
        rcv_rtt_ms: f64::from(limits.rcv_rtt_us) / 1000.0,
        rcv_ssthresh: limits.rcv_ssthresh,
        rcv_space: limits.rcv_space,
    }
}

/// `containers`: the sample's containers by pid (containers_by_pid).
pub fn socket_json<'a>(
    socket: Socket<'a>,
    containers: &HashMap<u32, &'a Container>,
) -> SocketJson<'a> {
    let info = socket.tcp.as_ref();
    SocketJson {
        netns: None,
        proto: socket.proto.name(),
        family: if socket.local.is_ipv4() {
            "ipv4"
        } else {
            "ipv6"
        },
        state: socket.state_name(),
        local: socket.local.to_string(),
        peer: socket.peer.to_string(),
        v6only: socket.v6only,
        recv_q: socket.recv_q,
        send_q: socket.send_q,
        pid: socket.users.first().map(|u| u.pid),
        process: socket.process_names(),
        owner_note: if socket.owner_denied {
            Some("unknown (no permission)")
        } else if socket.owner_pending {
            Some("looking")
        } else {
            None
        },
        owner_pending: socket.owner_pending,
        users: socket.users,
        container: socket
            .users
            .first()
            .and_then(|u| containers.get(&u.pid).copied()),
        uid: socket.uid,
        inode: socket.inode,
        rtt_ms: info.map(|t| f64::from(t.rtt_us) / 1000.0),
        rttvar_ms: info.map(|t| f64::from(t.rttvar_us) / 1000.0),
        cwnd: info.map(|t| t.cwnd),
        retrans: info.map(|t| t.total_retrans),
        total_retrans: info.map(|t| t.total_retrans),
        bytes_acked: info.map(|t| t.bytes_acked),
        bytes_received: info.map(|t| t.bytes_received),
        last_send_ms: info.map(|t| t.last_send_ms),
        last_recv_ms: info.map(|t| t.last_recv_ms),
        drops: socket.drops,
        queue_streak: socket.queue_streak,
        accept_queue_full: socket.proto == Proto::Tcp && socket.accept_queue_full(),
        limits: socket.limits.map(limits_json),
    }
}
