//! Diagnoses: pure functions of recent samples. The same code runs live, in
//! `snapshot --json` and (later) in replay.

pub mod catalogue;
mod connections;
mod conntrack;
pub mod counters;
pub mod dns;
pub mod drops;
mod limited;
mod memory;
pub mod names;
mod neigh;
pub mod path;
mod refused;
mod responses;
pub mod settings;
mod softnet;
mod stack;
pub mod thresholds;
mod udp;

pub use connections::{CLOSE_WAIT, CONNECT_TIMEOUT, PORT_EXHAUSTION};
pub use memory::TCP_MEMORY;
pub use neigh::NEIGH_TABLE_FULL;
pub use path::{PATH_LATENCY, PATH_LOSS};
pub use refused::{CONNECT_REFUSED, refused_rates};
pub use softnet::{SOFTIRQ_IMBALANCE, SOFTNET_DROPS};
pub use stack::{LISTEN_OVERFLOW, RETRANSMITS, SOCKET_BACKLOG, SYN_FLOOD, stuck, top_sources};
pub use thresholds::Thresholds;
pub use udp::UDP_DROPS;
mod flows;
mod hysteresis;
pub use hysteresis::{Engine, Hold};

use crate::model::InterfaceSample;
use crate::model::Sample;
use crate::model::netdev::{self, LinkCounter};
use crate::model::rates::{InterfaceRates, QdiscRates, interface_util};
use crate::model::socket_table::Socket;
use serde::Serialize;

/// Every hand-written finding id; the man page documents each. The
/// catalogue adds `counter:<Id>` for its entries and `drop:<REASON>` for
/// the kernel's drop reasons (see `catalogue` and `drops`).
pub const IDS: &[&str] = &[
    IFACE_ERRORS,
    IFACE_SATURATED,
    CONNTRACK_FULL,
    CONNTRACK_DROPS,
    SMALL_PACKET_FLOOD,
    SYN_FLOOD,
    LISTEN_OVERFLOW,
    SOCKET_BACKLOG,
    RETRANSMITS,
    dns::DNS_TIMEOUT,
    dns::DNS_SLOW,
    NAGLE_DELAYED_ACK,
    ZERO_WINDOW,
    SYN_UNANSWERED,
    RST_AFTER_DATA,
    CLOSE_WAIT,
    PORT_EXHAUSTION,
    CONNECT_TIMEOUT,
    UDP_DROPS,
    CONNECT_REFUSED,
    TCP_MEMORY,
    SOFTNET_DROPS,
    SOFTIRQ_IMBALANCE,
    NEIGH_TABLE_FULL,
    PATH_LOSS,
    PATH_LATENCY,
];

pub use crate::packet::analysis::findings_ids::{
    NAGLE_DELAYED_ACK, RST_AFTER_DATA, SYN_UNANSWERED, ZERO_WINDOW,
};

pub const IFACE_ERRORS: &str = "iface-errors";
pub const IFACE_SATURATED: &str = "iface-saturated";
pub const CONNTRACK_FULL: &str = "conntrack-full";
pub const CONNTRACK_DROPS: &str = "conntrack-drops";

pub const SMALL_PACKET_FLOOD: &str = "small-packet-flood";

/// small-packet-flood: a high packet rate of tiny packets, the SYN-flood
/// signature `sar -n DEV` shows (high rxpck/s, low rxkB/s). `where_` names
/// the capture (interface or file). Thresholds: flood_warn_pps,
/// flood_crit_pps and flood_mean_bytes (a SYN flood's frames are 54-66 bytes).
/// `syncookies` is net.ipv4.tcp_syncookies where the packets arrive (None
/// for a capture file: the host's value says nothing about it).
pub fn small_packet_flood(
    where_: &str,
    packets_per_s: f64,
    bytes_per_s: f64,
    limits: &Thresholds,
    syncookies: Option<&str>,
) -> Option<Finding> {
    if packets_per_s < limits.flood_warn_pps || packets_per_s <= 0.0 {
        return None;
    }
    let mean = bytes_per_s / packets_per_s;
    if mean >= limits.flood_mean_bytes {
        return None;
    }
    let severity = if packets_per_s >= limits.flood_crit_pps {
        Severity::Crit
    } else {
        Severity::Warn
    };
    Some(Finding {
        hold: Hold::default(),
        id: SMALL_PACKET_FLOOD,
        severity,
        summary: format!("{where_}: {packets_per_s:.0} packets/s averaging {mean:.0} bytes"),
        hint: format!(
            "tiny packets at a high rate: a SYN flood or a UDP/ICMP flood; check SYN_RECV in \
             TCP, {}, rate-limit the source",
            match syncookies {
                Some("0") => "set net.ipv4.tcp_syncookies=1 (now 0)".to_string(),
                Some(on) => format!("syncookies are on (net.ipv4.tcp_syncookies={on})"),
                None => "net.ipv4.tcp_syncookies=1 keeps a listener answering a SYN flood".into(),
            }
        ),
        evidence: Evidence {
            netns: None,
            tab: "flows",
            row: where_.to_string(),
        },
    })
}

/// A process as findings name it: "PID 2231 (java)".
pub fn pid_name(pid: u32, name: &str) -> String {
    format!("PID {pid} ({name})")
}

/// The process holding a socket as a finding names it: "PID 2231 (java)",
/// "PID 2231 (java) +1 more", or why there is none.
pub fn process_of(socket: &Socket) -> String {
    let mut pids: Vec<u32> = socket.users.iter().map(|u| u.pid).collect();
    pids.sort_unstable();
    pids.dedup();
    match socket.users.first() {
        Some(user) if pids.len() > 1 => format!(
            "{} +{} more",
            pid_name(user.pid, &user.process),
            pids.len() - 1
        ),
        Some(user) => pid_name(user.pid, &user.process),
        None if socket.owner_denied => "(owner unreadable: run as root)".to_string(),
        None if socket.owner_pending => "(owner: looking)".to_string(),
        None => "(no process holds it)".to_string(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Crit,
}

/// A catalogue level as a finding's severity (the catalogues are plain
/// data build.rs reads, so the mapping lives here).
impl From<catalogue::Level> for Severity {
    fn from(level: catalogue::Level) -> Self {
        match level {
            catalogue::Level::Info => Severity::Info,
            catalogue::Level::Warn => Severity::Warn,
            catalogue::Level::Crit => Severity::Crit,
        }
    }
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "INFO",
            Severity::Warn => "WARN",
            Severity::Crit => "CRIT",
        }
    }
}

/// Where the evidence of a finding is: a tab and the row's key there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub tab: &'static str,
    pub row: String,
    /// The namespace of the sockets or process it is about (`--all-netns`
    /// rows carry one; None: not about a socket, or the primary's only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netns: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub id: &'static str,
    pub severity: Severity,
    pub summary: String,
    pub hint: String,
    pub evidence: Evidence,
    /// Where the finding is in its hysteresis (set by `Engine::step`).
    #[serde(flatten)]
    pub hold: Hold,
}

/// How many of `findings` are about namespace `id`'s sockets, process or
/// interface (`Evidence::netns`). A finding that names no namespace (a
/// counter of the watched namespace's stack, DNS, the capture) counts for
/// none.
pub fn count_in_netns(findings: &[Finding], id: u16) -> usize {
    findings
        .iter()
        .filter(|f| f.evidence.netns == Some(id))
        .count()
}

/// All findings whose condition holds in `current`, worst first, by the
/// `limits` given: no hysteresis (`Engine::step` adds it).
pub fn evaluate(previous: Option<&Sample>, current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for iface in &current.interfaces {
        let first = findings.len();
        let rates = InterfaceRates::for_interface(previous, current, iface);
        let backlog = current
            .tcp
            .as_ref()
            .and_then(|t| t.knob("net.core.netdev_max_backlog"));
        if let Some(mut finding) = interface_errors(&iface.name, &rates, backlog) {
            if iface.is_virtual() {
                // No link speed to be near: its drops are where it saturates.
                finding
                    .summary
                    .push_str(" (virtual device: no link speed; drops show its limit)");
            }
            findings.push(finding);
        }
        if iface.link_speed().is_none()
            && let Some(finding) = queue_saturated(iface, previous, current, limits)
        {
            findings.push(finding);
        }
        if let Some(util) = interface_util(iface, &rates)
            && util >= limits.iface_saturated_warn_percent
        {
            let severity = if util >= limits.iface_saturated_crit_percent {
                Severity::Crit
            } else {
                Severity::Warn
            };
            let direction = if rates.rate(&netdev::RX_BYTES) >= rates.rate(&netdev::TX_BYTES) {
                "rx"
            } else {
                "tx"
            };
            findings.push(Finding {
                hold: Hold::default(),
                id: IFACE_SATURATED,
                severity,
                summary: format!(
                    "{} at {util:.0}% of {} Mb/s ({direction})",
                    iface.name,
                    iface.link_speed().unwrap_or_default()
                ),
                hint: "the link is the bottleneck: find the top talkers in Flows, shape or move \
                           traffic, or use a faster or bonded link"
                    .into(),
                evidence: Evidence {
                    netns: None,
                    tab: "interfaces",
                    row: iface.name.clone(),
                },
            });
        }
        // Under --all-netns an interface is one namespace's.
        for finding in &mut findings[first..] {
            finding.evidence.netns = Some(iface.netns);
        }
    }
    findings.extend(conntrack::evaluate(previous, current, limits));
    stack::evaluate(previous, current, limits, &mut findings);
    findings.extend(connections::evaluate(previous, current, limits));
    findings.extend(limited::evaluate(previous, current));
    findings.extend(responses::evaluate(previous, current));
    findings.extend(flows::evaluate(previous, current, limits));
    findings.extend(dns::evaluate(current, limits));
    findings.extend(udp::evaluate(previous, current, limits));
    findings.extend(refused::evaluate(previous, current, limits));
    findings.extend(memory::evaluate(previous, current, limits));
    findings.extend(softnet::evaluate(previous, current, limits));
    findings.extend(neigh::evaluate(previous, current, limits));
    // A reason is the more specific claim: a counter counting the same
    // packets is not raised beside it.
    let from_reasons = drops::evaluate(previous, current);
    let from_catalogue = counters::evaluate(previous, current, &findings);
    let warming_up = drops::warming_up(previous, current);
    findings.extend(
        from_catalogue
            .into_iter()
            .filter(|f| !drops::suppresses(&from_reasons, f.id, warming_up)),
    );
    findings.extend(from_reasons);
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.id.cmp(b.id)));
    findings
}

/// iface-saturated for a device without a link speed: %util means nothing
/// there, so its root qdisc tells instead. Drops mean it is past its limit
/// (crit); a backlog that stays from one sample to the next means it is at
/// it (warn).
fn queue_saturated(
    iface: &InterfaceSample,
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
) -> Option<Finding> {
    let qdisc = iface.qdisc.as_ref()?;
    let rates = QdiscRates::for_interface(previous, current, iface);
    let drops = rates
        .drops
        .filter(|&d| d > limits.qdisc_drop_per_s && d > 0.0);
    let backlog = u64::from(limits.qdisc_backlog_packets);
    let standing = qdisc.backlog_packets >= backlog
        && rates.backlog_packets_before.is_some_and(|b| b >= backlog);
    if drops.is_none() && !standing {
        return None;
    }
    let name = &iface.name;
    let mut what = format!("{name}: no link speed; qdisc {}", qdisc.kind);
    if let Some(drops) = drops {
        what.push_str(&format!(" dropped {drops:.0} packets/s,"));
    }
    what.push_str(&format!(
        " backlog {} ({} packets)",
        backlog_size(qdisc.backlog_bytes),
        qdisc.backlog_packets
    ));
    // pfifo_fast and pfifo take their limit from txqueuelen; other qdiscs
    // have their own limit or rate.
    let limit = match qdisc.kind.as_str() {
        "pfifo_fast" | "pfifo" => format!(
            "its queue is the device's txqueuelen: raise it (`ip link set dev {name} txqueuelen N`)"
        ),
        kind => format!(
            "the {kind} qdisc {} is what limits it: raise its rate or limit (`tc qdisc change dev {name} root {kind} ...`)",
            qdisc.handle
        ),
    };
    Some(Finding {
        hold: Hold::default(),
        id: IFACE_SATURATED,
        severity: if drops.is_some() {
            Severity::Crit
        } else {
            Severity::Warn
        },
        summary: what,
        hint: format!("{limit}, or find the sender in Flows; see `tc -s qdisc show dev {name}`"),
        evidence: Evidence {
            netns: None,
            tab: "interfaces",
            row: name.clone(),
        },
    })
}

/// A queue's size as tc would say it, in B, KiB or MiB.
fn backlog_size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.0} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

/// `backlog` is net.core.netdev_max_backlog (host-wide: a namespace other
/// than the host's cannot read it).
fn interface_errors(name: &str, rates: &InterfaceRates, backlog: Option<&str>) -> Option<Finding> {
    // Each named by its row's detail word ("rx overruns"), with its fix.
    let kinds: [(LinkCounter, &str); 7] = [
        (
            netdev::RX_ERRORS,
            "check cabling and duplex, and `ethtool -S {IF}` for the kind",
        ),
        (
            netdev::TX_ERRORS,
            "check cabling and duplex, and `ethtool -S {IF}` for the kind",
        ),
        (
            netdev::RX_DROPPED,
            "rx backlog full or no protocol handler: raise the ring (`ethtool -G {IF} rx N`) or net.core.netdev_max_backlog{BACKLOG}",
        ),
        (
            netdev::TX_DROPPED,
            "qdisc or driver queue full: check `tc -s qdisc show dev {IF}`",
        ),
        (
            netdev::RX_OVER_ERRORS,
            "the NIC ring overflowed: raise it with `ethtool -G {IF} rx N`, spread IRQs (RSS, irqbalance)",
        ),
        (
            netdev::TX_CARRIER_ERRORS,
            "carrier lost while sending: check the cable and the switch port",
        ),
        (
            netdev::COLLISIONS,
            "collisions mean half duplex or a duplex mismatch: check `ethtool {IF}`",
        ),
    ];
    let active: Vec<_> = kinds
        .iter()
        .filter_map(|(counter, hint)| {
            let rate = rates.rate(counter).filter(|r| *r > 0.0)?;
            Some((counter.detail.unwrap_or(counter.kernel), rate, hint))
        })
        .collect();
    let (_, _, first_hint) = active.first()?;
    let summary = active
        .iter()
        .map(|(label, rate, _)| format!("{rate:.1} {label}/s"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(Finding {
        hold: Hold::default(),
        id: IFACE_ERRORS,
        severity: Severity::Warn,
        summary: format!("{name}: {summary}"),
        hint: first_hint.replace("{IF}", name).replace(
            "{BACKLOG}",
            &match backlog.and_then(|b| b.parse::<u64>().ok()) {
                Some(now) => format!(" from {now} to {}", now.saturating_mul(2)),
                None => " (host-wide; set it in the host)".into(),
            },
        ),
        evidence: Evidence {
            netns: None,
            tab: "interfaces",
            row: name.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snmp;
    use crate::model::{Duplex, InterfaceSample, LinkCounters};

    const D: Thresholds = Thresholds::DEFAULT;

    fn pair(before: LinkCounters, after: LinkCounters, speed: Option<u32>) -> (Sample, Sample) {
        let iface = |counters| InterfaceSample {
            index: 2,
            name: "eth0".into(),
            speed_mbps: speed,
            duplex: Duplex::Full,
            counters,
            ..Default::default()
        };
        let a = Sample {
            mono: 10.0,
            interfaces: vec![iface(before)],
            ..Default::default()
        };
        let b = Sample {
            mono: 11.0,
            interfaces: vec![iface(after)],
            ..Default::default()
        };
        (a, b)
    }

    /// Every id evaluate() can raise (IDS, which the man page and export
    /// list) has its entry in the names table the man page and docs/findings.md render,
    /// once; and the names table's own ids are well formed.
    #[test]
    fn every_id_is_in_the_names_table() {
        let ids: Vec<&str> = names::NAMES.iter().map(|e| e.id).collect();
        for id in IDS {
            assert_eq!(
                ids.iter().filter(|c| *c == id).count(),
                1,
                "{id} is not in src/findings/names.rs once"
            );
        }
        for entry in names::NAMES {
            assert!(
                entry.id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                entry.id
            );
            for text in [entry.means, entry.evidence, entry.fix] {
                assert!(!text.is_empty() && !text.contains('\n'), "{}", entry.id);
            }
        }
    }

    /// What evaluate() raised from samples made to fire each of the stack
    /// findings is in IDS (and so in the names table).
    #[test]
    fn raised_ids_are_listed() {
        use crate::model::sockets::TcpSample;
        let tcp = |pages, counters: &[(&str, u64)]| {
            let mut tcp = TcpSample::default();
            tcp.sockstat.tcp_mem_pages = pages;
            tcp.knobs
                .insert("net.ipv4.tcp_mem".into(), "10 20 30".into());
            for (name, value) in counters {
                tcp.counters.insert(name.to_string(), *value);
            }
            Some(tcp)
        };
        let a = Sample {
            mono: 0.0,
            tcp: tcp(0, &[(snmp::TCP_OUT_RSTS, 0), (snmp::UDP_RCVBUF_ERRORS, 0)]),
            ..Default::default()
        };
        let b = Sample {
            mono: 1.0,
            tcp: tcp(
                25,
                &[(snmp::TCP_OUT_RSTS, 50), (snmp::UDP_RCVBUF_ERRORS, 9)],
            ),
            ..Default::default()
        };
        let raised: Vec<&str> = evaluate(Some(&a), &b, &D).iter().map(|f| f.id).collect();
        for id in [UDP_DROPS, CONNECT_REFUSED, TCP_MEMORY] {
            assert!(raised.contains(&id), "{raised:?}");
        }
        assert!(raised.iter().all(|id| IDS.contains(id)), "{raised:?}");
    }

    #[test]
    fn small_packet_flood_needs_rate_and_tiny_packets() {
        assert!(small_packet_flood("lo", 9_000.0, 9_000.0 * 60.0, &D, Some("1")).is_none());
        assert!(small_packet_flood("lo", 50_000.0, 50_000.0 * 1500.0, &D, Some("1")).is_none());
        let warn = small_packet_flood("lo", 50_000.0, 50_000.0 * 60.0, &D, Some("1")).unwrap();
        assert_eq!(
            (warn.id, warn.severity),
            (SMALL_PACKET_FLOOD, Severity::Warn)
        );
        assert!(
            warn.summary.contains("averaging 60 bytes"),
            "{}",
            warn.summary
        );
        let crit = small_packet_flood("lo", 200_000.0, 200_000.0 * 60.0, &D, Some("1")).unwrap();
        assert_eq!(crit.severity, Severity::Crit);
    }

    #[test]
    fn quiet_interface_has_no_findings() {
        let (a, b) = pair(
            LinkCounters::default(),
            LinkCounters {
                rx_bytes: 1000,
                ..Default::default()
            },
            Some(1000),
        );
        assert!(evaluate(Some(&a), &b, &D).is_empty());
    }

    #[test]
    fn rising_errors_raise_iface_errors_with_hint() {
        let after = LinkCounters {
            rx_errors: 5,
            rx_over_errors: 2,
            ..Default::default()
        };
        let (a, b) = pair(LinkCounters::default(), after, None);
        let found = evaluate(Some(&a), &b, &D);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, IFACE_ERRORS);
        assert_eq!(found[0].summary, "eth0: 5.0 rx errors/s, 2.0 rx overruns/s");
        assert!(found[0].hint.contains("ethtool -S eth0"));
        assert_eq!(found[0].evidence.row, "eth0");
    }

    #[test]
    fn busy_link_is_saturated() {
        // 118.75 MB/s on 1 Gb/s full duplex = 95 %.
        let after = LinkCounters {
            tx_bytes: 118_750_000,
            ..Default::default()
        };
        let (a, b) = pair(LinkCounters::default(), after, Some(1000));
        let found = evaluate(Some(&a), &b, &D);
        assert_eq!(found[0].id, IFACE_SATURATED);
        assert_eq!(found[0].severity, Severity::Crit);
        assert!(found[0].summary.contains("(tx)"));
    }

    #[test]
    fn unknown_speed_is_never_saturated() {
        let after = LinkCounters {
            tx_bytes: u32::MAX as u64,
            ..Default::default()
        };
        let (a, b) = pair(LinkCounters::default(), after, None);
        assert!(evaluate(Some(&a), &b, &D).is_empty());
    }

    #[test]
    fn a_standing_qdisc_backlog_without_drops_warns() {
        let (mut a, mut b) = pair(LinkCounters::default(), LinkCounters::default(), None);
        let queue = |backlog_packets| {
            Some(crate::model::QdiscStats {
                kind: "pfifo".into(),
                handle: "1:".into(),
                backlog_bytes: 64 * 1024,
                backlog_packets,
                ..Default::default()
            })
        };
        a.interfaces[0].qdisc = queue(60);
        b.interfaces[0].qdisc = queue(60);
        let found = evaluate(Some(&a), &b, &Thresholds::DEFAULT);
        let saturated = found.iter().find(|f| f.id == IFACE_SATURATED).unwrap();
        assert_eq!(saturated.severity, Severity::Warn);
        assert_eq!(
            saturated.summary,
            "eth0: no link speed; qdisc pfifo backlog 64 KiB (60 packets)"
        );
        assert!(saturated.hint.contains("txqueuelen"), "{}", saturated.hint);
        // A backlog in one sample only is a burst, not a standing queue.
        a.interfaces[0].qdisc = queue(0);
        let found = evaluate(Some(&a), &b, &Thresholds::DEFAULT);
        assert!(found.iter().all(|f| f.id != IFACE_SATURATED));
        // With a link speed, %util judges it, not the queue.
        a.interfaces[0].qdisc = queue(60);
        for s in [&mut a, &mut b] {
            s.interfaces[0].speed_mbps = Some(1000);
        }
        let found = evaluate(Some(&a), &b, &Thresholds::DEFAULT);
        assert!(found.iter().all(|f| f.id != IFACE_SATURATED));
    }
}
