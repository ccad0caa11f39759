//! What a sample carries about packet capture: a status, totals and a
//! bounded list of flows (the busiest by bytes and by packets).

use crate::model::socket_table::{Socket, SocketTable};
use serde::{Deserialize, Serialize};

/// Flows a sample carries at most: the top half by bytes, the rest by
/// packets (a flood of tiny packets ranks low by bytes).
pub const SAMPLE_FLOWS: usize = 256;
/// A flow as samples keep it: one copy for the samples in which it did not
/// change (`share_flows`), as most of the top flows are idle ones.
pub type SharedFlow = super::shared::Shared<FlowSample>;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CaptureSample {
    /// Capturing now.
    pub active: bool,
    /// Why there is no capture ("needs CAP_NET_RAW ...", "off: --no-capture").
    pub error: Option<String>,
    /// "any" or the interface name.
    pub iface: String,
    /// The pcap-filter expression applied, "" for none.
    pub filter: String,
    /// Packets and bytes (on the wire) that matched the filter, since start.
    pub packets: u64,
    pub bytes: u64,
    /// What the kernel counted for the socket, and dropped (ring full).
    pub kernel_received: u64,
    pub kernel_dropped: u64,
    /// Flows in the table now, and evicted (idle or LRU) since start.
    pub flows_active: u64,
    pub flows_evicted: u64,
    /// The busiest flows, cumulative counters (rates come from two samples).
    pub flows: Vec<SharedFlow>,
    /// Every flow in the table summed by initiating host and by service
    /// (protocol/port), the biggest by bytes (empty in older recordings).
    #[serde(default)]
    pub hosts: Vec<GroupSample>,
    #[serde(default)]
    pub services: Vec<GroupSample>,
    /// Refused connection attempts (a SYN answered by an RST from the side
    /// it was sent to), cumulative per refusing address:port with the
    /// peers refused, most refused first (empty in older recordings).
    #[serde(default)]
    pub refused: Vec<RefusedSample>,
    /// Wall-clock time of the newest packet counted (0: none yet): the
    /// capture drains its ring in blocks, so its counts are as of this
    /// moment, not the sample's; rates over its counters divide by this.
    #[serde(default)]
    pub newest_packet_t: f64,
    /// Whether the kernel counted the flows' bytes and packets (eBPF at tc)
    /// or why not; None: the capture counted them (older recordings).
    #[serde(default)]
    pub kernel_counts: Option<super::flow_counts::KernelCounts>,
    /// The capture kept one in so many packets that are not control ones
    /// (TCP SYN/FIN/RST, DNS, ICMP, not IP), the kernel counting them all;
    /// its own counts are scaled by it. 0 or 1: every packet (0 in older
    /// recordings).
    #[serde(default)]
    pub sample_every: u32,
    /// Response times per server address, cumulative, the most answered
    /// first (empty when sampling, and in older recordings).
    #[serde(default)]
    pub responses: Vec<super::responses::ResponseSample>,
}

impl CaptureSample {
    /// The kernel counted the flows' bytes and packets (not the capture).
    pub fn counted_by_kernel(&self) -> bool {
        super::flow_counts::KernelCounts::counting(self.kernel_counts.as_ref())
    }

    /// One in how many packets the capture samples, when it samples.
    pub fn sampled(&self) -> Option<u32> {
        (self.sample_every > 1).then_some(self.sample_every)
    }

    /// The flows' counts are lower bounds: the capture counted them and
    /// its ring dropped packets.
    pub fn counts_short(&self) -> bool {
        !self.counted_by_kernel() && self.kernel_dropped > 0
    }
}

/// One refusing address:port: SYNs it answered with an RST, since the
/// capture started (or since it was last evicted from the bounded list).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RefusedSample {
    /// "198.18.0.2:8080", "[2001:db8::2]:8080".
    pub port: String,
    pub count: u64,
    /// The addresses refused, most refused first.
    pub peers: Vec<RefusedPeer>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RefusedPeer {
    pub addr: String,
    pub count: u64,
}

/// One flow as the Sample and `snapshot --json` carry it: plain data.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FlowSample {
    pub proto: String,
    pub src: String,
    pub dst: String,
    pub packets: u64,
    pub bytes: u64,
    pub state: String,
    pub rtt_ms: Option<f64>,
    pub retransmits: u64,
    pub first_seen: f64,
    pub last_seen: f64,
    /// The flow's findings from its analysis (empty when none).
    #[serde(default)]
    pub findings: Vec<FlowFinding>,
    /// The process owning the local end, joined with the socket table by
    /// 5-tuple (None when unknown: a remote flow, a file, no permission).
    #[serde(default)]
    pub pid: Option<u32>,
    #[serde(default)]
    pub process: Option<String>,
    /// The namespace (session id, `model::netns`) of the socket it was
    /// joined with: another namespace's when either end's socket is in one
    /// (--all-netns: a container's traffic seen on its host-side veth),
    /// else the watched one, 0, where the capture runs.
    #[serde(default)]
    pub netns: u16,
    /// The server name the client asked for in a TLS ClientHello (TCP) or
    /// a QUIC Initial (UDP), from captured packets (None: not seen; older
    /// recordings).
    #[serde(default)]
    pub sni: Option<String>,
    /// The Host header of the client's first HTTP/1 request.
    #[serde(default)]
    pub http_host: Option<String>,
}

impl FlowSample {
    /// The name the client asked for: SNI, else HTTP Host.
    pub fn server_name(&self) -> Option<&str> {
        self.sni.as_deref().or(self.http_host.as_deref())
    }
}

/// Flows summed by host (the initiator's address) or by service (the
/// protocol and the responder's port), over every flow in the table, not
/// only those a sample carries.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GroupSample {
    /// "" for a host, the protocol for a service.
    pub proto: String,
    /// "198.18.0.1" for a host, "tcp/443" for a service.
    pub key: String,
    pub flows: u64,
    pub packets: u64,
    pub bytes: u64,
    pub retransmits: u64,
    /// The slowest handshake RTT of its flows.
    pub rtt_ms: Option<f64>,
    pub first_seen: f64,
    pub last_seen: f64,
}

/// One finding of one flow, as `read --flows --json` and the flows of a
/// sample carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowFinding {
    pub id: String,
    pub summary: String,
}

/// Fills each flow's owning process and namespace from the socket table:
/// a flow matches a socket whose local and peer addresses are its two
/// endpoints (the initiator's socket first, then the other end's). The
/// process is the first matched socket's with one; the namespace is
/// another namespace's when either end is in one (see `FlowSample::netns`).
pub fn join_owners(flows: &mut [SharedFlow], sockets: &SocketTable) {
    use std::collections::HashMap;
    use std::net::SocketAddr;
    if flows.is_empty() || sockets.is_empty() {
        return;
    }
    let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
    let by_ends: HashMap<(&str, SocketAddr, SocketAddr), Socket> = sockets
        .iter()
        .filter(|s| s.peer.port() != 0)
        .map(|s| ((s.proto.name(), canonical(s.local), canonical(s.peer)), s))
        .collect();
    for flow in flows {
        let flow: &mut FlowSample = flow;
        let (Ok(src), Ok(dst)) = (
            flow.src.parse::<SocketAddr>(),
            flow.dst.parse::<SocketAddr>(),
        ) else {
            continue;
        };
        let proto = flow.proto.as_str();
        let ends = [
            by_ends.get(&(proto, src, dst)),
            by_ends.get(&(proto, dst, src)),
        ];
        let ends = ends.into_iter().flatten();
        if let Some(user) = ends.clone().find_map(|s| s.users.first()) {
            flow.pid = Some(user.pid);
            flow.process = Some(user.process.to_string());
        }
        flow.netns = ends.map(|s| s.netns).find(|&id| id != 0).unwrap_or(0);
    }
}

/// Gives each flow the copy `earlier` (the last sample's flows) holds
/// when it did not change: most of a sample's top flows are idle ones
/// (ended, still among the busiest), and the history keeps 300 samples.
pub fn share_flows(flows: &mut [SharedFlow], earlier: &[SharedFlow]) {
    use std::collections::HashMap;
    if earlier.is_empty() {
        return;
    }
    let by_ends: HashMap<(&str, &str, &str), &SharedFlow> = earlier
        .iter()
        .map(|f| ((f.proto.as_str(), f.src.as_str(), f.dst.as_str()), f))
        .collect();
    for flow in flows {
        let old = by_ends
            .get(&(flow.proto.as_str(), flow.src.as_str(), flow.dst.as_str()))
            .copied();
        if let Some(old) = old {
            flow.share(old);
        }
    }
}

/// The captured flow of a socket: the one whose endpoints are the socket's
/// local and peer addresses, either way round.
pub fn flow_of_socket<'a>(flows: &'a [SharedFlow], socket: &Socket) -> Option<&'a FlowSample> {
    use std::net::SocketAddr;
    if socket.peer.port() == 0 {
        return None;
    }
    let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
    let (local, peer) = (canonical(socket.local), canonical(socket.peer));
    flows.iter().map(|f| &**f).find(|f| {
        f.proto == socket.proto.name()
            && match (f.src.parse::<SocketAddr>(), f.dst.parse::<SocketAddr>()) {
                (Ok(src), Ok(dst)) => (src, dst) == (local, peer) || (src, dst) == (peer, local),
                _ => false,
            }
    })
}

/// The socket of a captured flow: the one whose local and peer addresses
/// are the flow's endpoints, either way round; of the two a loopback flow
/// has, the one busier sending.
pub fn socket_of_flow<'a>(sockets: &'a SocketTable, flow: &FlowSample) -> Option<Socket<'a>> {
    use std::net::SocketAddr;
    let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
    let (Ok(src), Ok(dst)) = (
        flow.src.parse::<SocketAddr>(),
        flow.dst.parse::<SocketAddr>(),
    ) else {
        return None;
    };
    let ends = [
        (canonical(src), canonical(dst)),
        (canonical(dst), canonical(src)),
    ];
    sockets
        .iter()
        .filter(|s| s.proto.name() == flow.proto)
        .filter(|s| ends.contains(&(canonical(s.local), canonical(s.peer))))
        .max_by_key(|s| s.limits.as_ref().map_or(0, |l| l.busy_us))
}

/// Per-flow and total rates between two samples.
pub struct CaptureRates<'a> {
    /// Seconds between the samples (monotonic clock).
    pub interval: f64,
    /// Wall-clock time of the previous sample.
    previous_t: f64,
    previous: std::collections::HashMap<(&'a str, &'a str, &'a str), (u64, u64)>,
    /// Matched packets and bytes per second over the interval, for all
    /// traffic (not only the flows carried).
    pub packets_per_s: Option<f64>,
    pub bytes_per_s: Option<f64>,
    /// Kernel drops in the interval.
    pub dropped: Option<u64>,
}

impl<'a> CaptureRates<'a> {
    pub fn new(previous: Option<&'a super::Sample>, current: &super::Sample) -> Self {
        let before = previous.and_then(|p| {
            let interval = current.mono - p.mono;
            (interval > 0.0 && p.netns == current.netns).then_some((p, interval))
        });
        let (Some((p, interval)), Some(now)) = (before, current.capture.as_ref()) else {
            return Self {
                interval: 0.0,
                previous_t: 0.0,
                previous: Default::default(),
                packets_per_s: None,
                bytes_per_s: None,
                dropped: None,
            };
        };
        let then = p.capture.as_ref();
        let delta = |f: fn(&CaptureSample) -> u64| {
            then.filter(|t| t.active && f(now) >= f(t))
                .map(|t| f(now) - f(t))
        };
        Self {
            interval,
            previous_t: p.t,
            previous: then
                .map(|t| {
                    t.flows
                        .iter()
                        .map(|f| {
                            (
                                (f.proto.as_str(), f.src.as_str(), f.dst.as_str()),
                                (f.packets, f.bytes),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            packets_per_s: delta(|c| c.packets).map(|d| d as f64 / interval),
            bytes_per_s: delta(|c| c.bytes).map(|d| d as f64 / interval),
            dropped: delta(|c| c.kernel_dropped),
        }
    }

    /// (packets/s, bytes/s) of one flow: from its counters in the previous
    /// sample, or, for a flow that began after it, from all its counters.
    /// None when unknown (the flow was not among those carried before).
    pub fn flow(&self, flow: &FlowSample) -> (Option<f64>, Option<f64>) {
        if self.interval <= 0.0 {
            return (None, None);
        }
        let key = (flow.proto.as_str(), flow.src.as_str(), flow.dst.as_str());
        let (packets, bytes) = match self.previous.get(&key) {
            Some(&(p, b)) if flow.packets >= p && flow.bytes >= b => (p, b),
            Some(_) => return (None, None),
            None if flow.first_seen >= self.previous_t => (0, 0),
            None => return (None, None),
        };
        (
            Some((flow.packets - packets) as f64 / self.interval),
            Some((flow.bytes - bytes) as f64 / self.interval),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(src: &str, bytes: u64) -> SharedFlow {
        FlowSample {
            proto: "tcp".into(),
            src: src.into(),
            dst: "198.18.0.2:80".into(),
            bytes,
            ..FlowSample::default()
        }
        .into()
    }

    /// A flow that did not move is the last sample's copy; one that moved
    /// is its own.
    #[test]
    fn an_unchanged_flow_is_not_copied_between_samples() {
        let earlier = vec![flow("198.18.0.1:1", 100), flow("198.18.0.1:2", 200)];
        let mut now = vec![
            flow("198.18.0.1:2", 200),
            flow("198.18.0.1:1", 150),
            flow("198.18.0.1:3", 1),
        ];
        share_flows(&mut now, &earlier);
        assert!(now[0].is_shared_with(&earlier[1]));
        assert!(!now[1].is_shared_with(&earlier[0]));
        assert_eq!(now[1].bytes, 150);
        assert_eq!(now[2].bytes, 1);
    }
}
