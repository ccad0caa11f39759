//! Per-flow bytes and packets counted in the kernel (eBPF at tc clsact, see
//! `collect::flows`), and how they replace the capture's counts in a
//! sample's flows: the capture drops packets when it falls behind, the
//! kernel's counts do not.

use super::capture::SharedFlow;
use super::capture::{CaptureSample, FlowSample, SAMPLE_FLOWS};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// What the sampler read from the kernel this tick: one-way counts,
/// cumulative. Not stored: `merge` folds it into the capture's flows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelFlows {
    /// Why the kernel does not count (None: it does).
    pub unavailable: Option<String>,
    /// How the program is attached ("tcx", "tc clsact").
    pub attach: String,
    /// The interfaces counted on: (index, name).
    pub interfaces: Vec<(u32, String)>,
    pub flows: Vec<OneWay>,
    /// Packets and bytes the kernel's map had no room for.
    pub not_counted_packets: u64,
    pub not_counted_bytes: u64,
}

/// One direction of one flow on one interface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneWay {
    pub ifindex: u32,
    pub proto: u8,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub packets: u64,
    pub bytes: u64,
    /// CLOCK_BOOTTIME seconds (a sample's `mono` clock).
    pub first: f64,
    pub last: f64,
}

/// Who counted a sample's flow bytes and packets, as the sample carries
/// it (None in `CaptureSample`: the capture, as before).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelCounts {
    /// Why the kernel did not count (None: the flows' counts are its).
    pub unavailable: Option<String>,
    /// "tcx" or "tc clsact".
    #[serde(default)]
    pub attach: String,
    /// Interfaces counted on.
    #[serde(default)]
    pub interfaces: u64,
    /// Every packet and byte counted on them, since netlens started.
    #[serde(default)]
    pub packets: u64,
    #[serde(default)]
    pub bytes: u64,
    /// What the kernel's bounded map had no room for (those flows keep the
    /// capture's counts).
    #[serde(default)]
    pub not_counted_packets: u64,
    #[serde(default)]
    pub not_counted_bytes: u64,
}

impl KernelCounts {
    /// The kernel counted the flows.
    pub fn counting(summary: Option<&Self>) -> bool {
        summary.is_some_and(|k| k.unavailable.is_none())
    }
}

impl KernelFlows {
    /// The kernel counts every packet a capture on `iface` ("any": every
    /// interface) sees.
    pub fn counts_all_of(&self, iface: &str) -> bool {
        self.unavailable.is_none()
            && (iface == "any" || self.interfaces.iter().any(|(_, name)| name == iface))
    }
}

/// A direction-independent flow: protocol and the two endpoints, lower
/// first (as the capture's flow table keys them).
type Both = (u8, SocketAddr, SocketAddr);

fn both(proto: u8, x: SocketAddr, y: SocketAddr) -> Both {
    let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
    let (x, y) = (canonical(x), canonical(y));
    if (x.ip(), x.port()) <= (y.ip(), y.port()) {
        (proto, x, y)
    } else {
        (proto, y, x)
    }
}

/// Both directions of a flow summed; `initiator` sent the first packet.
#[derive(Debug, Clone, Copy)]
struct Summed {
    initiator: (SocketAddr, SocketAddr),
    packets: u64,
    bytes: u64,
    first: f64,
    last: f64,
}

/// Sums the one-way counts of the interfaces `iface` names ("any": all).
fn sum(kernel: &KernelFlows, iface: &str) -> HashMap<Both, Summed> {
    let wanted: Option<u32> = (iface != "any").then(|| {
        kernel
            .interfaces
            .iter()
            .find(|(_, name)| name == iface)
            .map_or(0, |(index, _)| *index)
    });
    let mut out: HashMap<Both, Summed> = HashMap::new();
    for one in &kernel.flows {
        if wanted.is_some_and(|index| index != one.ifindex) {
            continue;
        }
        let entry = out
            .entry(both(one.proto, one.src, one.dst))
            .or_insert(Summed {
                initiator: (one.src, one.dst),
                packets: 0,
                bytes: 0,
                first: one.first,
                last: one.last,
            });
        entry.packets += one.packets;
        entry.bytes += one.bytes;
        if one.first < entry.first {
            entry.first = one.first;
            entry.initiator = (one.src, one.dst);
        }
        entry.last = entry.last.max(one.last);
    }
    out
}

/// The protocol number of a flow's name ("tcp", "icmp6", "ip-47").
fn proto_number(name: &str) -> Option<u8> {
    match name {
        "tcp" => Some(6),
        "udp" => Some(17),
        "icmp" => Some(1),
        "icmp6" => Some(58),
        "sctp" => Some(132),
        other => other
            .strip_prefix("ip6-")
            .or_else(|| other.strip_prefix("ip-"))?
            .parse()
            .ok(),
    }
}

/// An endpoint as a flow shows it: "ip:port", "[v6]:port" or a bare
/// address (port 0).
fn endpoint(text: &str) -> Option<SocketAddr> {
    text.parse::<SocketAddr>()
        .ok()
        .or_else(|| text.parse::<IpAddr>().ok().map(|ip| SocketAddr::new(ip, 0)))
}

fn flow_key(flow: &FlowSample) -> Option<Both> {
    Some(both(
        proto_number(&flow.proto)?,
        endpoint(&flow.src)?,
        endpoint(&flow.dst)?,
    ))
}

/// A flow's name as the capture's table writes it.
fn proto_name(proto: u8, v6: bool) -> String {
    match proto {
        6 => "tcp".into(),
        17 => "udp".into(),
        1 => "icmp".into(),
        58 => "icmp6".into(),
        132 => "sctp".into(),
        p => format!("{}-{p}", if v6 { "ip6" } else { "ip" }),
    }
}

fn shown(address: SocketAddr, proto: u8) -> String {
    if matches!(proto, 6 | 17 | 132 | 33 | 136) {
        address.to_string()
    } else {
        address.ip().to_string()
    }
}

/// Replaces the capture's flow counts by the kernel's and adds the flows
/// the kernel counted that the capture missed (only without a capture
/// filter: the kernel counts every flow, the filter may not want them).
/// `mono_to_wall` turns the kernel's boottime seconds into wall-clock ones.
pub fn merge(capture: &mut CaptureSample, kernel: &KernelFlows, mono_to_wall: f64) {
    capture.kernel_counts = Some(KernelCounts {
        unavailable: kernel.unavailable.clone(),
        attach: kernel.attach.clone(),
        interfaces: kernel.interfaces.len() as u64,
        packets: 0,
        bytes: 0,
        not_counted_packets: kernel.not_counted_packets,
        not_counted_bytes: kernel.not_counted_bytes,
    });
    if kernel.unavailable.is_some() {
        return;
    }
    let mut counted = sum(kernel, &capture.iface);
    if let Some(summary) = capture.kernel_counts.as_mut() {
        summary.packets = counted.values().map(|s| s.packets).sum();
        summary.bytes = counted.values().map(|s| s.bytes).sum();
    }
    for flow in &mut capture.flows {
        if let Some(kernel) = flow_key(flow).and_then(|key| counted.remove(&key)) {
            flow.packets = kernel.packets;
            flow.bytes = kernel.bytes;
        }
    }
    if !capture.filter.is_empty() {
        return;
    }
    // Only the kernel's flows that can make the top: the busiest by bytes
    // and the busiest by packets. The kernel keeps up to ~80,000 flows;
    // a sample keeps SAMPLE_FLOWS.
    let mut counted: Vec<((u8, SocketAddr, SocketAddr), Summed)> = counted.into_iter().collect();
    let candidates = busiest(&mut counted, SAMPLE_FLOWS);
    capture
        .flows
        .extend(candidates.into_iter().map(|((proto, _, _), summed)| {
            let (src, dst) = summed.initiator;
            FlowSample {
                proto: proto_name(proto, src.is_ipv6()),
                src: shown(src, proto),
                dst: shown(dst, proto),
                packets: summed.packets,
                bytes: summed.bytes,
                state: "-".into(),
                first_seen: summed.first + mono_to_wall,
                last_seen: summed.last + mono_to_wall,
                ..FlowSample::default()
            }
            .into()
        }));
    keep_top(&mut capture.flows, SAMPLE_FLOWS);
    // Kept in the history for minutes: no room beyond the flows.
    capture.flows.shrink_to_fit();
}

/// The flows among `flows` that `keep_top(_, n)` could keep whatever else
/// is beside them: the `n` busiest by bytes and the `n` busiest by packets.
fn busiest<K>(flows: &mut Vec<(K, Summed)>, n: usize) -> Vec<(K, Summed)> {
    if flows.len() <= n {
        return std::mem::take(flows);
    }
    flows.select_nth_unstable_by_key(n - 1, |(_, s)| std::cmp::Reverse(s.bytes));
    let mut rest = flows.split_off(n);
    if rest.len() > n {
        rest.select_nth_unstable_by_key(n - 1, |(_, s)| std::cmp::Reverse(s.packets));
        rest.truncate(n);
    }
    let mut chosen = std::mem::take(flows);
    chosen.append(&mut rest);
    chosen
}

/// The busiest `n` flows: half by bytes, the rest by packets (as the
/// capture's own list), biggest first.
fn keep_top(flows: &mut Vec<SharedFlow>, n: usize) {
    if flows.len() > n {
        let half = n / 2;
        flows.sort_by_key(|f| std::cmp::Reverse(f.bytes));
        let mut rest = flows.split_off(half);
        rest.sort_by_key(|f| std::cmp::Reverse(f.packets));
        rest.truncate(n - half);
        flows.append(&mut rest);
    }
    flows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.src.cmp(&b.src)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(ifindex: u32, src: &str, dst: &str, packets: u64, bytes: u64, first: f64) -> OneWay {
        OneWay {
            ifindex,
            proto: 6,
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            packets,
            bytes,
            first,
            last: first + 1.0,
        }
    }

    fn captured(src: &str, dst: &str, packets: u64, bytes: u64) -> SharedFlow {
        FlowSample {
            proto: "tcp".into(),
            src: src.into(),
            dst: dst.into(),
            packets,
            bytes,
            state: "ESTABLISHED".into(),
            ..FlowSample::default()
        }
        .into()
    }

    fn kernel(flows: Vec<OneWay>) -> KernelFlows {
        KernelFlows {
            attach: "tcx".into(),
            interfaces: vec![(2, "veth0".into()), (3, "veth1".into())],
            flows,
            ..KernelFlows::default()
        }
    }

    /// With thousands of flows in the kernel, a sample keeps the same
    /// busiest flows as if every one had been listed, and no room beyond.
    #[test]
    fn many_kernel_flows_keep_the_busiest_and_nothing_more() {
        // Bytes and packets ranked differently, no two the same.
        let flows: Vec<OneWay> = (0..5_000u64)
            .map(|i| OneWay {
                ifindex: 2,
                proto: 6,
                src: SocketAddr::from(([198, 18, (i / 250) as u8, (i % 250) as u8 + 1], 40_000)),
                dst: "198.18.100.1:80".parse().unwrap(),
                packets: (i * 7_919) % 5_003,
                bytes: (i * 104_729) % 1_000_003 + 1_000_000 * u64::from(i % 97 == 0),
                first: 1.0,
                last: 2.0,
            })
            .collect();
        let counts = kernel(flows.clone());
        let mut capture = CaptureSample {
            iface: "any".into(),
            ..CaptureSample::default()
        };
        merge(&mut capture, &counts, 0.0);
        // Every flow listed, then the top kept: what the sample must hold.
        let mut all: Vec<SharedFlow> = flows
            .iter()
            .map(|f| {
                FlowSample {
                    proto: "tcp".into(),
                    src: f.src.to_string(),
                    dst: f.dst.to_string(),
                    packets: f.packets,
                    bytes: f.bytes,
                    ..FlowSample::default()
                }
                .into()
            })
            .collect();
        keep_top(&mut all, SAMPLE_FLOWS);
        let kept = |flows: &[SharedFlow]| -> Vec<(String, u64, u64)> {
            flows
                .iter()
                .map(|f| (f.src.clone(), f.bytes, f.packets))
                .collect()
        };
        assert_eq!(capture.flows.len(), SAMPLE_FLOWS);
        assert_eq!(kept(&capture.flows), kept(&all));
        assert_eq!(capture.flows.capacity(), SAMPLE_FLOWS);
        assert_eq!(
            capture.kernel_counts.as_ref().unwrap().packets,
            flows.iter().map(|f| f.packets).sum::<u64>()
        );
    }

    #[test]
    fn both_directions_replace_the_captured_counts() {
        let (a, b) = ("198.18.0.1:40000", "198.18.0.2:5201");
        let mut capture = CaptureSample {
            iface: "any".into(),
            flows: vec![captured(a, b, 10, 1000)],
            ..CaptureSample::default()
        };
        let counts = kernel(vec![
            one(2, a, b, 70, 70_000, 5.0),
            one(2, b, a, 30, 2_000, 5.1),
        ]);
        merge(&mut capture, &counts, 100.0);
        assert_eq!(capture.flows.len(), 1);
        assert_eq!(
            (capture.flows[0].packets, capture.flows[0].bytes),
            (100, 72_000)
        );
        assert_eq!(capture.flows[0].state, "ESTABLISHED");
        let summary = capture.kernel_counts.unwrap();
        assert_eq!((summary.packets, summary.bytes), (100, 72_000));
    }

    #[test]
    fn a_flow_the_capture_missed_is_added_with_its_initiator_first() {
        let mut capture = CaptureSample {
            iface: "any".into(),
            ..CaptureSample::default()
        };
        let (a, b) = ("198.18.0.1:40000", "198.18.0.2:5201");
        merge(
            &mut capture,
            &kernel(vec![one(2, b, a, 3, 300, 7.0), one(2, a, b, 4, 400, 6.0)]),
            100.0,
        );
        let flow = &capture.flows[0];
        assert_eq!((flow.src.as_str(), flow.dst.as_str()), (a, b));
        assert_eq!((flow.packets, flow.bytes, flow.first_seen), (7, 700, 106.0));
    }

    #[test]
    fn one_interface_counts_only_its_own_and_a_filter_adds_nothing() {
        let (a, b) = ("198.18.0.1:40000", "198.18.0.2:5201");
        let mut capture = CaptureSample {
            iface: "veth1".into(),
            filter: "port 5201".into(),
            ..CaptureSample::default()
        };
        merge(&mut capture, &kernel(vec![one(2, a, b, 4, 400, 6.0)]), 0.0);
        assert!(capture.flows.is_empty());
        assert_eq!(capture.kernel_counts.unwrap().packets, 0);
    }

    #[test]
    fn without_the_program_the_captured_counts_stay_and_say_why() {
        let mut capture = CaptureSample {
            flows: vec![captured("198.18.0.1:1", "198.18.0.2:2", 5, 500)],
            ..CaptureSample::default()
        };
        let counts = KernelFlows {
            unavailable: Some("needs root".into()),
            ..KernelFlows::default()
        };
        merge(&mut capture, &counts, 0.0);
        assert_eq!(capture.flows[0].bytes, 500);
        assert!(!KernelCounts::counting(capture.kernel_counts.as_ref()));
    }

    #[test]
    fn names_parse_back_to_their_protocol() {
        for (name, number) in [("tcp", 6), ("icmp6", 58), ("ip-47", 47), ("ip6-50", 50)] {
            assert_eq!(proto_number(name), Some(number));
            assert_eq!(proto_name(number, name.contains('6')), name);
        }
        assert_eq!(proto_number("ip-x"), None);
    }

    #[test]
    fn the_list_stays_bounded_keeping_big_and_busy_flows() {
        let mut flows: Vec<SharedFlow> = (0..300u64)
            .map(|i| captured(&format!("198.18.0.1:{i}"), "198.18.0.2:1", 1, 1000 + i))
            .collect();
        flows.push(captured("198.18.0.3:1", "198.18.0.2:1", 50, 10));
        keep_top(&mut flows, 10);
        assert_eq!(flows.len(), 10);
        assert_eq!(flows[0].bytes, 1299);
        assert!(flows.iter().any(|f| f.packets == 50));
    }
}
