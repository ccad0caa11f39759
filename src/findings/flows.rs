//! Flow-level findings from the capture a sample carries: small-packet-flood
//! on the whole capture, retransmits naming the flow.

use super::{
    Evidence, Finding, Hold, NAGLE_DELAYED_ACK, RETRANSMITS, RST_AFTER_DATA, SYN_UNANSWERED,
    Severity, Thresholds, ZERO_WINDOW, small_packet_flood,
};
use crate::model::Sample;
use crate::model::capture::CaptureRates;
use crate::model::capture::SharedFlow;
use crate::model::snmp;
use crate::model::tcp_rates::TcpRates;
use std::collections::HashMap;

/// Flows named by the retransmits finding at most (the worst first).
const MAX_RETRANSMIT_FINDINGS: usize = 5;

/// The share of a flow's packets in the interval that, retransmitted, makes
/// the finding a warning rather than information: flow_retrans_warn_percent.
pub fn evaluate(previous: Option<&Sample>, current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    let Some(capture) = current.capture.as_ref().filter(|c| c.active) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let rates = CaptureRates::new(previous, current);
    if let (Some(pps), Some(bps)) = (rates.packets_per_s, rates.bytes_per_s)
        && let Some(flood) = small_packet_flood(
            &capture.iface,
            pps,
            bps,
            limits,
            current
                .tcp
                .as_ref()
                .and_then(|t| t.knob("net.ipv4.tcp_syncookies")),
        )
    {
        found.push(quiet_stack(previous, current, flood));
    }
    // Retransmits within the interval, per flow.
    // The sample before's flows by their ends (the first of equal ones, as
    // a search would find), not searched for each of the 256.
    let mut before: HashMap<(&str, &str, &str), &crate::model::capture::FlowSample> =
        HashMap::new();
    for o in previous
        .and_then(|p| p.capture.as_ref())
        .into_iter()
        .flat_map(|b| &b.flows)
    {
        before
            .entry((o.proto.as_str(), o.src.as_str(), o.dst.as_str()))
            .or_insert(o);
    }
    let mut retx: Vec<(u64, u64, &crate::model::capture::FlowSample)> = capture
        .flows
        .iter()
        .map(|f| &**f)
        .filter_map(|f| {
            let (r0, p0) = match before.get(&(f.proto.as_str(), f.src.as_str(), f.dst.as_str())) {
                Some(o) => (o.retransmits, o.packets),
                None if previous.is_some_and(|p| f.first_seen >= p.t) => (0, 0),
                None => return None,
            };
            let new = f.retransmits.checked_sub(r0)?;
            (new > 0).then(|| (new, f.packets.saturating_sub(p0), f))
        })
        .collect();
    flow_analysis(current.t, &capture.flows, &mut found);
    retx.sort_by_key(|r| std::cmp::Reverse(r.0));
    for (new, packets, flow) in retx.into_iter().take(MAX_RETRANSMIT_FINDINGS) {
        let percent = 100.0 * new as f64 / packets.max(1) as f64;
        found.push(Finding {
            hold: Hold::default(),
            id: RETRANSMITS,
            severity: if percent >= limits.flow_retrans_warn_percent {
                Severity::Warn
            } else {
                Severity::Info
            },
            summary: format!(
                "{} {} > {}: {new} retransmitted of {packets} packets ({percent:.1}%)",
                flow.proto, flow.src, flow.dst
            ),
            hint: "loss or reordering on the path: check drops on the interfaces and qdiscs \
                   (`tc -s qdisc`), the peer's receive window, and `ss -ti` for this connection"
                .into(),
            evidence: Evidence {
                netns: None,
                tab: "flows",
                row: format!("{} {} > {}", flow.proto, flow.src, flow.dst),
            },
        });
    }
    found
}

/// Flows named per finding id at most.
const MAX_FLOWS_PER_FINDING: usize = 5;
/// A flow's analysis findings count while it was active this recently.
const FLOW_FINDING_RECENT_S: f64 = 60.0;

/// The findings of each carried flow's own analysis (Nagle stalls, zero
/// windows, unanswered SYNs, resets after data), naming the flow. Its
/// retransmits are left to the interval count above.
fn flow_analysis(now: f64, flows: &[SharedFlow], found: &mut Vec<Finding>) {
    let mut per_id: HashMap<&str, usize> = HashMap::new();
    for flow in flows
        .iter()
        .filter(|f| now - f.last_seen <= FLOW_FINDING_RECENT_S)
    {
        for f in &flow.findings {
            let (id, severity, hint) = match f.id.as_str() {
                NAGLE_DELAYED_ACK => (
                    NAGLE_DELAYED_ACK,
                    Severity::Warn,
                    "Nagle's algorithm holds a small write until the previous one is acknowledged,                      and the peer delays that ACK ~40 ms: set TCP_NODELAY on the sender (or write                      the response in one call), or TCP_QUICKACK on the receiver",
                ),
                ZERO_WINDOW => (
                    ZERO_WINDOW,
                    Severity::Warn,
                    "the receiving application is not reading its socket: look at that process                      (Recv-Q in Sockets), not at the network",
                ),
                SYN_UNANSWERED => (
                    SYN_UNANSWERED,
                    Severity::Warn,
                    "nothing answers the SYN: a firewall drops it (iptables/nft DROP), a route is                      missing, or the host is down; a closed port would answer with RST",
                ),
                RST_AFTER_DATA => (
                    RST_AFTER_DATA,
                    Severity::Info,
                    "a reset after data: an application aborted (SO_LINGER 0, closed with unread                      data) or a middlebox timed the connection out",
                ),
                _ => continue,
            };
            let count = per_id.entry(id).or_default();
            if *count >= MAX_FLOWS_PER_FINDING {
                continue;
            }
            *count += 1;
            let owner = flow
                .process
                .as_ref()
                .map_or(String::new(), |p| format!(" ({p})"));
            found.push(Finding {
                hold: Hold::default(),
                id,
                severity,
                summary: format!(
                    "{} {} > {}{owner}: {}",
                    flow.proto, flow.src, flow.dst, f.summary
                ),
                hint: hint.into(),
                evidence: Evidence {
                    netns: None,
                    tab: "flows",
                    row: format!("{} {} > {}", flow.proto, flow.src, flow.dst),
                },
            });
        }
    }
}

/// The stack counters a flood of small packets moves: a SYN flood fills
/// the accept and SYN queues (or sends syncookies), a UDP flood hits closed
/// ports or full buffers.
const FLOOD_HARM: [&str; 7] = [
    snmp::TCP_EXT_LISTEN_OVERFLOWS,
    snmp::TCP_EXT_LISTEN_DROPS,
    snmp::TCP_EXT_SYNCOOKIES_SENT,
    snmp::TCP_EXT_TCP_REQ_Q_FULL_DROP,
    snmp::UDP_NO_PORTS,
    snmp::UDP_RCVBUF_ERRORS,
    snmp::UDP_IN_ERRORS,
];

/// A live small-packet-flood whose stack counters show none of a flood's
/// harm is a busy host's many small packets (short connections, small
/// requests): information, not a warning. A capture file has no counters:
/// the packets are all there is to judge.
fn quiet_stack(previous: Option<&Sample>, current: &Sample, mut flood: Finding) -> Finding {
    let Some(rates) = TcpRates::new(previous, current).filter(|_| previous.is_some()) else {
        return flood;
    };
    let harm = FLOOD_HARM
        .iter()
        .any(|name| rates.rate(name).is_some_and(|r| r > 0.0));
    if !harm {
        flood.severity = Severity::Info;
        flood.summary.push_str(
            "; the stack drops and refuses none of them (no listen drops, syncookies, \
             closed-port or full-buffer UDP): a busy host, not a flood",
        );
    }
    flood
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::capture::{CaptureSample, FlowSample};

    fn sample(mono: f64, packets: u64, bytes: u64, flows: Vec<FlowSample>) -> Sample {
        Sample {
            t: 1000.0 + mono,
            mono,
            netns: "host".into(),
            capture: Some(CaptureSample {
                active: true,
                iface: "any".into(),
                packets,
                bytes,
                flows: flows.into_iter().map(Into::into).collect(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn flow(packets: u64, retransmits: u64, first_seen: f64) -> FlowSample {
        FlowSample {
            proto: "tcp".into(),
            src: "198.18.0.1:40000".into(),
            dst: "198.18.0.2:80".into(),
            packets,
            bytes: packets * 1000,
            state: "ESTABLISHED".into(),
            retransmits,
            first_seen,
            last_seen: first_seen,
            ..Default::default()
        }
    }

    #[test]
    fn a_live_flood_warns_only_where_the_stack_drops_or_refuses() {
        use crate::model::sockets::TcpSample;
        let with = |mono: f64, packets: u64, cookies: u64, no_ports: u64| {
            let mut s = sample(mono, packets, packets * 60, Vec::new());
            let mut tcp = TcpSample::default();
            tcp.counters
                .insert(snmp::TCP_EXT_SYNCOOKIES_SENT.into(), cookies);
            tcp.counters.insert(snmp::UDP_NO_PORTS.into(), no_ports);
            s.tcp = Some(tcp);
            s
        };
        let flood = |a: &Sample, b: &Sample| {
            evaluate(Some(a), b, &Thresholds::DEFAULT)
                .into_iter()
                .find(|f| f.id == "small-packet-flood")
                .unwrap()
        };
        // 12,000 small packets/s, nothing dropped: a busy host.
        let busy = flood(&with(1.0, 0, 5, 0), &with(2.0, 12_000, 5, 0));
        assert_eq!(busy.severity, Severity::Info, "{}", busy.summary);
        assert!(busy.summary.contains("a busy host, not a flood"));
        // The same rate with syncookies sent, or datagrams to closed ports.
        for (cookies, no_ports) in [(400, 0), (0, 9000)] {
            let f = flood(&with(1.0, 0, 0, 0), &with(2.0, 12_000, cookies, no_ports));
            assert_eq!(f.severity, Severity::Warn, "{}", f.summary);
        }
    }

    #[test]
    fn flood_and_retransmits_name_what_they_saw() {
        let a = sample(1.0, 0, 0, vec![flow(100, 2, 1000.5)]);
        let b = sample(2.0, 50_000, 3_000_000, vec![flow(300, 12, 1000.5)]);
        let found = evaluate(Some(&a), &b, &Thresholds::DEFAULT);
        let flood = found.iter().find(|f| f.id == "small-packet-flood").unwrap();
        assert!(
            flood
                .summary
                .contains("any: 50000 packets/s averaging 60 bytes")
        );
        let retx = found.iter().find(|f| f.id == RETRANSMITS).unwrap();
        assert_eq!(
            retx.summary,
            "tcp 198.18.0.1:40000 > 198.18.0.2:80: 10 retransmitted of 200 packets (5.0%)"
        );
        assert_eq!(retx.severity, Severity::Warn);
        // Nothing new retransmitted, ordinary packet sizes: nothing to say.
        let c = sample(3.0, 50_100, 3_100_000, vec![flow(400, 12, 1000.5)]);
        assert!(evaluate(Some(&b), &c, &Thresholds::DEFAULT).is_empty());
    }
}
