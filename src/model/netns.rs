//! The network namespaces of an `--all-netns` sample: each one's id for the
//! session, its label, and the few counters the Namespaces view rates.
//! Sockets and interfaces carry only the small id (`netns` on their rows);
//! the label lives here once.

use super::netdev::{self, LinkCounter};
use super::rates::{InterfaceRates, counter_rate, links_interval};
use super::snmp;
use super::sockets::{Proto, TCP_ESTABLISHED, TCP_TIME_WAIT};
use super::{InterfaceSample, Sample};
use crate::model::socket_table::Socket;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The namespace netlens watches first (the host, or --netns/--pid's): id 0,
/// the id every row of an older recording or a one-namespace run has.
pub const PRIMARY: u16 = 0;

/// One network namespace seen in this sample.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NamespaceInfo {
    /// Stable for the session: given when the namespace is first seen, never
    /// reused (a namespace that comes back after it went gets a new one).
    pub id: u16,
    /// Its `ip netns` name, else "pid N comm" of the lowest pid in it.
    pub label: String,
    /// The nsfs inode (`ls -l /proc/PID/ns/net` shows "net:[INODE]").
    pub inode: u64,
    /// The container of a process in it (see `collect::all_netns`); None
    /// when no process in it belongs to a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// A process in it (the lowest pid); None for a namespace only a bind
    /// mount keeps alive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Tcp.RetransSegs of its /proc/net/snmp.
    pub retrans_segs: u64,
    /// Its stack's drop counters summed (see `DROP_COUNTERS`).
    pub drops: u64,
    /// Its nf_conntrack_count: connections tracked in it now. None when
    /// nf_conntrack was not loaded when netlens first entered it (the file
    /// exists only then), and in recordings made before it was sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conntrack_count: Option<u64>,
    /// When its links and counters were read (CLOCK_BOOTTIME, as
    /// `Sample::mono`); None: at the sample's `mono`. Under --all-netns a
    /// namespace is read after the ones before it, and how long those take
    /// varies from tick to tick: its rates use its own times
    /// (`rates::links_interval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_mono: Option<f64>,
}

/// The counters of a namespace's snmp and netstat files that count packets
/// its stack dropped: IP discards, a full accept queue or socket backlog,
/// full UDP receive buffers.
pub const DROP_COUNTERS: &[&str] = &[
    snmp::IP_IN_DISCARDS,
    snmp::IP_OUT_DISCARDS,
    snmp::TCP_EXT_LISTEN_DROPS,
    snmp::TCP_EXT_TCP_BACKLOG_DROP,
    snmp::UDP_RCVBUF_ERRORS,
    snmp::UDP_IN_ERRORS,
];

impl NamespaceInfo {
    /// The label with its container when one is known: "ns1 (docker:3f2a…)".
    pub fn display(&self) -> String {
        match &self.container {
            Some(container) if !self.label.contains(container.as_str()) => {
                format!("{} ({container})", self.label)
            }
            _ => self.label.clone(),
        }
    }
}

impl Sample {
    /// The label of namespace `id`: the namespace list's, else this
    /// sample's own (`netns`) for the primary one.
    pub fn netns_label(&self, id: u16) -> &str {
        match self.namespaces.iter().find(|n| n.id == id) {
            Some(info) => &info.label,
            None if id == PRIMARY => &self.netns,
            None => "?",
        }
    }

    /// Whether rows of more than one namespace are in this sample (then
    /// every socket and interface row shows its namespace).
    pub fn many_namespaces(&self) -> bool {
        self.namespaces.len() > 1
    }

    /// The namespaces of this sample: `namespaces` under --all-netns, else
    /// the one netlens watches, described from the sample's own counters
    /// (so the Namespaces tab has its row without --all-netns too).
    pub fn namespace_list(&self) -> std::borrow::Cow<'_, [NamespaceInfo]> {
        if !self.namespaces.is_empty() {
            return std::borrow::Cow::Borrowed(&self.namespaces);
        }
        let counter = |name: &str| self.tcp.as_ref().and_then(|t| t.counter(name));
        std::borrow::Cow::Owned(vec![NamespaceInfo {
            id: PRIMARY,
            label: self.netns.clone(),
            retrans_segs: counter(snmp::TCP_RETRANS_SEGS).unwrap_or(0),
            drops: DROP_COUNTERS.iter().filter_map(|n| counter(n)).sum(),
            conntrack_count: self.conntrack.count,
            ..Default::default()
        }])
    }
}

/// What the Namespaces view, the JSON and the exporter show of one
/// namespace over one interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NamespaceRates {
    /// Summed over its interfaces but loopback.
    pub rx_bytes: Option<f64>,
    pub tx_bytes: Option<f64>,
    pub rx_packets: Option<f64>,
    pub tx_packets: Option<f64>,
    /// The host-side veth peers of its interfaces (in the primary
    /// namespace), by name, and their rates summed.
    pub host_peers: Vec<String>,
    pub peer_rx_bytes: Option<f64>,
    pub peer_tx_bytes: Option<f64>,
    /// TCP and UDP sockets; of them TCP, and TCP by state.
    pub sockets: usize,
    pub tcp: usize,
    pub established: usize,
    pub listening: usize,
    pub time_wait: usize,
    pub retrans: Option<f64>,
    pub drops: Option<f64>,
}

impl NamespaceRates {
    /// TCP sockets in neither ESTABLISHED, LISTEN nor TIME_WAIT.
    pub fn tcp_other(&self) -> usize {
        (self.tcp).saturating_sub(self.established + self.listening + self.time_wait)
    }
}

/// Rates of `info` between `previous` (if any) and `current`.
pub fn namespace_rates(
    previous: Option<&Sample>,
    current: &Sample,
    info: &NamespaceInfo,
) -> NamespaceRates {
    let mut counts = SocketCounts::default();
    current
        .sockets
        .iter()
        .filter(|s| s.netns == info.id)
        .for_each(|s| counts.add(&s));
    rates_with(previous, current, info, counts)
}

/// `namespace_rates` of every namespace of `current` (`namespace_list`), in its order, with
/// one pass over the sockets: filtering them per namespace looks at
/// namespaces x sockets rows (50 x 100,000 in the bench of issue 27).
pub fn all_namespace_rates(previous: Option<&Sample>, current: &Sample) -> Vec<NamespaceRates> {
    let mut counts: HashMap<u16, SocketCounts> = HashMap::new();
    // A namespace's rows are together in a sample: one lookup per run.
    for (netns, run) in current.sockets.netns_runs() {
        let total = counts.entry(netns).or_default();
        run.for_each(|i| total.add(&current.sockets.at(i)));
    }
    current
        .namespace_list()
        .iter()
        .map(|info| {
            let count = counts.get(&info.id).copied().unwrap_or_default();
            rates_with(previous, current, info, count)
        })
        .collect()
}

/// A namespace's sockets: all, TCP, and TCP by state; listeners.
#[derive(Debug, Clone, Copy, Default)]
struct SocketCounts {
    sockets: usize,
    tcp: usize,
    established: usize,
    time_wait: usize,
    listening: usize,
}

impl SocketCounts {
    fn add(&mut self, socket: &Socket) {
        self.sockets += 1;
        if socket.proto == Proto::Tcp {
            self.tcp += 1;
            match socket.state {
                TCP_ESTABLISHED => self.established += 1,
                TCP_TIME_WAIT => self.time_wait += 1,
                _ => {}
            }
        }
        if socket.is_listener() {
            self.listening += 1;
        }
    }
}

/// `namespace_rates` with its sockets already counted.
fn rates_with(
    previous: Option<&Sample>,
    current: &Sample,
    info: &NamespaceInfo,
    counts: SocketCounts,
) -> NamespaceRates {
    let mut out = NamespaceRates {
        sockets: counts.sockets,
        tcp: counts.tcp,
        established: counts.established,
        time_wait: counts.time_wait,
        listening: counts.listening,
        ..Default::default()
    };
    let own: Vec<&InterfaceSample> = current
        .interfaces
        .iter()
        .filter(|i| i.netns == info.id && !i.loopback)
        .collect();
    let sum = |ifaces: &[&InterfaceSample], counter: LinkCounter| {
        ifaces
            .iter()
            .map(|i| InterfaceRates::for_interface(previous, current, i).rate(&counter))
            .try_fold(0.0, |total, rate| rate.map(|r| total + r))
            .filter(|_| previous.is_some())
    };
    out.rx_bytes = sum(&own, netdev::RX_BYTES);
    out.tx_bytes = sum(&own, netdev::TX_BYTES);
    out.rx_packets = sum(&own, netdev::RX_PACKETS);
    out.tx_packets = sum(&own, netdev::TX_PACKETS);
    if info.id != PRIMARY {
        let peers: Vec<&InterfaceSample> =
            own.iter().filter_map(|i| host_peer(current, i)).collect();
        out.host_peers = peers.iter().map(|p| p.name.clone()).collect();
        if !peers.is_empty() {
            out.peer_rx_bytes = sum(&peers, netdev::RX_BYTES);
            out.peer_tx_bytes = sum(&peers, netdev::TX_BYTES);
        }
    }
    (out.retrans, out.drops) = stack_rates(previous, current, info);
    out
}

/// `info`'s retransmits and drops per second: its stack's counters only,
/// no pass over the sockets (the TCP tab's note asks for them each frame).
pub fn stack_rates(
    previous: Option<&Sample>,
    current: &Sample,
    info: &NamespaceInfo,
) -> (Option<f64>, Option<f64>) {
    // namespace_list: without --all-netns the one row's counters come from
    // the sample's own (so the previous sample's too).
    let before = previous.and_then(|p| {
        let list = p.namespace_list();
        let n = list.iter().find(|n| n.id == info.id)?;
        Some((n.retrans_segs, n.drops, links_interval(p, current, info.id)))
    });
    match before {
        Some((retrans, drops, seconds)) => (
            counter_rate(retrans, info.retrans_segs, seconds),
            counter_rate(drops, info.drops, seconds),
        ),
        None => (None, None),
    }
}

/// The host-side end of a namespace's veth: the primary namespace's
/// interface whose peer index (IFLA_LINK) is this one and whose index is
/// this one's peer index, both links crossing namespaces (IFLA_LINK_NETNSID).
/// Host indices are unique, so the pair names one interface.
pub fn host_peer<'a>(sample: &'a Sample, iface: &InterfaceSample) -> Option<&'a InterfaceSample> {
    let peer_index = iface.link_index.filter(|_| iface.link_netnsid.is_some())?;
    sample
        .interface_in(PRIMARY, peer_index)
        .filter(|h| h.link_netnsid.is_some() && h.link_index == Some(iface.index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LinkCounters;
    use crate::model::sockets::SocketSample;

    fn iface(netns: u16, index: u32, name: &str, link: Option<u32>, rx: u64) -> InterfaceSample {
        InterfaceSample {
            netns,
            index,
            name: name.into(),
            loopback: name == "lo",
            link_index: link,
            link_netnsid: link.map(|_| 0),
            counters: LinkCounters {
                rx_bytes: rx,
                tx_bytes: rx / 2,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn sample(mono: f64, rx: u64) -> Sample {
        let info = |id: u16, label: &str| NamespaceInfo {
            id,
            label: label.into(),
            ..Default::default()
        };
        Sample {
            mono,
            netns: "host".into(),
            interfaces: vec![
                iface(0, 1, "lo", None, 7 * rx),
                iface(0, 9, "veth9", Some(2), rx / 2),
                iface(1, 1, "lo", None, 1000 * rx),
                iface(1, 2, "eth0", Some(9), rx),
            ],
            namespaces: vec![info(0, "host"), info(1, "blue")],
            ..Default::default()
        }
    }

    #[test]
    fn rates_key_interfaces_by_namespace_and_skip_loopback() {
        let (before, after) = (sample(10.0, 1000), sample(12.0, 3000));
        let blue = &after.namespaces[1];
        let rates = namespace_rates(Some(&before), &after, blue);
        // eth0 only: (3000 - 1000) / 2 s; blue's lo (and the host's) left out.
        assert_eq!(rates.rx_bytes, Some(1000.0));
        assert_eq!(rates.tx_bytes, Some(500.0));
        assert_eq!(rates.host_peers, vec!["veth9".to_string()]);
        assert_eq!(rates.peer_rx_bytes, Some(500.0));
        assert_eq!(after.netns_label(1), "blue");
        assert!(after.many_namespaces());
        // Two "lo"s: each against its own namespace's.
        let lo = &after.interfaces[2];
        assert_eq!(after.same_interface(lo).map(|i| i.netns), Some(1));
        assert_eq!(
            before.interface_in(1, 1).map(|i| i.counters.rx_bytes),
            Some(1_000_000)
        );
        assert_eq!(namespace_rates(None, &after, blue).rx_bytes, None);
    }

    /// Blue's links were read 0.5 s into the first sample and 0.1 s into
    /// the second: its 2,000 bytes are over 1.6 s, not the samples' 2 s;
    /// the host's, read at the samples' monos, over 2 s.
    #[test]
    fn a_namespace_s_rates_use_its_own_read_times() {
        let (mut before, mut after) = (sample(10.0, 1000), sample(12.0, 3000));
        before.namespaces[1].read_mono = Some(10.5);
        after.namespaces[1].read_mono = Some(12.1);
        let near = |rate: Option<f64>, want: f64| (rate.unwrap() - want).abs() < 1e-9;
        let blue = namespace_rates(Some(&before), &after, &after.namespaces[1]);
        assert!(near(blue.rx_bytes, 1250.0), "{:?}", blue.rx_bytes);
        let host = namespace_rates(Some(&before), &after, &after.namespaces[0]);
        // veth9: (1500 - 500) / 2 s.
        assert!(near(host.rx_bytes, 500.0), "{:?}", host.rx_bytes);
        // Recordings made before read times were kept: the samples' 2 s.
        before.namespaces[1].read_mono = None;
        after.namespaces[1].read_mono = None;
        let blue = namespace_rates(Some(&before), &after, &after.namespaces[1]);
        assert!(near(blue.rx_bytes, 1000.0), "{:?}", blue.rx_bytes);
    }

    fn socket(netns: u16, state: u8) -> SocketSample {
        SocketSample {
            proto: Proto::Tcp,
            state,
            local: "127.0.0.1:80".parse().unwrap(),
            peer: "127.0.0.1:4000".parse().unwrap(),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: 1,
            users: Default::default(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns,
            limits: None,
        }
    }

    #[test]
    fn one_pass_rates_equal_each_namespace_s_own() {
        let before = sample(10.0, 1000);
        let mut after = sample(12.0, 3000);
        // Blue's rows in two runs, a namespace with none (id 2).
        after.sockets = vec![
            socket(0, TCP_ESTABLISHED),
            socket(1, 10),
            socket(1, TCP_ESTABLISHED),
            socket(0, 10),
            socket(1, TCP_ESTABLISHED),
        ]
        .into();
        after.namespaces.push(NamespaceInfo {
            id: 2,
            label: "empty".into(),
            ..Default::default()
        });
        let each: Vec<NamespaceRates> = after
            .namespaces
            .iter()
            .map(|info| namespace_rates(Some(&before), &after, info))
            .collect();
        assert_eq!(all_namespace_rates(Some(&before), &after), each);
        let counts: Vec<_> = each
            .iter()
            .map(|r| (r.sockets, r.established, r.listening))
            .collect();
        assert_eq!(counts, vec![(2, 1, 1), (3, 2, 1), (0, 0, 0)]);
        assert_eq!(each[1].rx_bytes, Some(1000.0));
    }
}
