//! One sample as OpenMetrics text (`netlens export`).
//!
//! Names follow node_exporter where it has the metric, so existing
//! dashboards keep working. Two deliberate differences:
//! - node_exporter exposes the snmp/netstat figures untyped as
//!   `node_netstat_Tcp_RetransSegs`; OpenMetrics requires a counter's samples
//!   to end in `_total`, so netlens exposes `node_netstat_Tcp_RetransSegs_total`
//!   (a real counter). assets/prometheus.yml shows a relabel rule that drops
//!   the suffix for dashboards that need the old name.
//! - conntrack stats keep node_exporter's names and its type (gauge).

use crate::findings::Finding;
use crate::model::Sample;
use crate::model::netdev::{self, LinkCounter};
use crate::model::sockets::TCP_STATES;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One DNS probe series: latencies of answered probes to `server` for `name`.
/// Bucket bounds in seconds, counts cumulative as OpenMetrics wants. Built
/// by `export::dns::Accumulator` from the probe results; without probes
/// (--dns-probe) there are none and the family is not emitted.
#[derive(Debug, Clone, PartialEq)]
pub struct DnsProbeHistogram {
    pub server: String,
    pub name: String,
    pub qtype: String,
    /// (upper bound in seconds, cumulative count), ascending, without +Inf.
    pub buckets: Vec<(f64, u64)>,
    pub count: u64,
    pub sum_seconds: f64,
}

/// How many probes to one server for one name and type ended one way
/// ("ok", "timeout", "servfail", ...), since the exporter started.
#[derive(Debug, Clone, PartialEq)]
pub struct DnsProbeOutcomes {
    pub server: String,
    pub name: String,
    pub qtype: String,
    pub outcome: &'static str,
    pub count: u64,
}

/// The DNS probe series the exporter accumulated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DnsSeries {
    pub histograms: Vec<DnsProbeHistogram>,
    pub outcomes: Vec<DnsProbeOutcomes>,
}

/// The OpenMetrics text of `current` with the findings shown at it.
pub fn render(
    current: &Sample,
    findings: &[Finding],
    dns: &DnsSeries,
    processes: Option<&super::processes::Accumulator>,
    failures: Option<&crate::model::failed::Failures>,
) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let ns = current.netns.as_str();
    family(
        &mut out,
        "netlens_sample_timestamp_seconds",
        "gauge",
        Some("seconds"),
        "Unix time at which the sample was taken",
    );
    let _ = writeln!(
        out,
        "netlens_sample_timestamp_seconds{{netns=\"{}\"}} {}",
        escape(ns),
        current.t
    );
    late_parts(&mut out, current, ns);
    interfaces(&mut out, current);
    super::netns::render(&mut out, current);
    tcp(&mut out, current, ns);
    conntrack(&mut out, current, ns);
    qdiscs(&mut out, current);
    super::drops::render(&mut out, current, ns);
    super::closed::render(&mut out, current, ns);
    super::responses::render(&mut out, current, ns);
    dns_histograms(&mut out, &dns.histograms, ns);
    dns_outcomes(&mut out, &dns.outcomes, ns);
    super::cpu::render(&mut out, current, ns);
    if let Some(processes) = processes {
        processes.render(&mut out, ns);
    }
    if let Some(failures) = failures {
        super::failed::render(&mut out, failures, ns);
    }
    findings_gauge(&mut out, findings, ns);
    out.push_str("# EOF\n");
    out
}

/// Which collector parts missed their deadline this sample (each part
/// always listed, 0 or 1, so an alert sees it turn), and the age of the
/// data shown for a late one.
fn late_parts(out: &mut String, current: &Sample, ns: &str) {
    family(
        out,
        "netlens_collector_late",
        "gauge",
        None,
        "1 when the part missed its deadline and its data is the last good one",
    );
    for part in crate::model::DEADLINED_PARTS {
        let late = current.late.iter().any(|l| l.part == part);
        let _ = writeln!(
            out,
            "netlens_collector_late{{netns=\"{}\",part=\"{part}\"}} {}",
            escape(ns),
            u8::from(late)
        );
    }
    if current.late.is_empty() {
        return;
    }
    family(
        out,
        "netlens_collector_data_age_seconds",
        "gauge",
        Some("seconds"),
        "Age of a late part's data (its last good collection) at the sample",
    );
    for late in &current.late {
        let _ = writeln!(
            out,
            "netlens_collector_data_age_seconds{{netns=\"{}\",part=\"{}\"}} {}",
            escape(ns),
            escape(&late.part),
            late.age_ms as f64 / 1000.0
        );
    }
}

pub(super) fn family(out: &mut String, name: &str, kind: &str, unit: Option<&str>, help: &str) {
    let _ = writeln!(out, "# TYPE {name} {kind}");
    if let Some(unit) = unit {
        let _ = writeln!(out, "# UNIT {name} {unit}");
    }
    let _ = writeln!(out, "# HELP {name} {help}");
}

/// A label value as OpenMetrics wants it: first the characters a terminal
/// acts on written as `\x1b` (text::escape_control; a name another user
/// chose reaches whoever reads the scrape with curl; a newline becomes
/// `\x0a` too), then backslash and quote escaped.
pub fn escape(value: &str) -> std::borrow::Cow<'_, str> {
    let value = crate::text::escape_control(value);
    if !value.contains(['\\', '"']) {
        return value;
    }
    let mut escaped = String::with_capacity(value.len() + 4);
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            c => escaped.push(c),
        }
    }
    escaped.into()
}

/// A metric name part with anything outside [A-Za-z0-9_] replaced by '_'.
fn name_part(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The exported interface counters in node_exporter's order; each row's
/// `metric` names its family (a test checks every such row is here).
const EXPORTED: [LinkCounter; 14] = [
    netdev::RX_BYTES,
    netdev::TX_BYTES,
    netdev::RX_PACKETS,
    netdev::TX_PACKETS,
    netdev::RX_ERRORS,
    netdev::TX_ERRORS,
    netdev::RX_DROPPED,
    netdev::TX_DROPPED,
    netdev::RX_FIFO_ERRORS,
    netdev::TX_FIFO_ERRORS,
    netdev::RX_FRAME_ERRORS,
    netdev::MULTICAST,
    netdev::COLLISIONS,
    netdev::TX_CARRIER_ERRORS,
];

fn interfaces(out: &mut String, sample: &Sample) {
    let labels: Vec<String> = sample
        .interfaces
        .iter()
        .map(|i| super::netns::iface_labels(sample, i))
        .collect();
    for counter in &EXPORTED {
        let Some(metric) = counter.metric else {
            continue;
        };
        let name = metric.name;
        family(out, name, metric.kind, counter.unit(), metric.help);
        for (iface, labels) in sample.interfaces.iter().zip(&labels) {
            let _ = writeln!(
                out,
                "{name}_total{{device=\"{}\",{labels}}} {}",
                escape(&iface.name),
                counter.of(&iface.counters)
            );
        }
    }
    family(
        out,
        "node_network_up",
        "gauge",
        None,
        "1 when the interface is up and has a carrier (IFF_UP and IFF_LOWER_UP)",
    );
    for (iface, labels) in sample.interfaces.iter().zip(&labels) {
        let _ = writeln!(
            out,
            "node_network_up{{device=\"{}\",{labels}}} {}",
            escape(&iface.name),
            u8::from(iface.up && iface.lower_up)
        );
    }
    family(
        out,
        "node_network_mtu_bytes",
        "gauge",
        Some("bytes"),
        "Interface MTU",
    );
    for (iface, labels) in sample.interfaces.iter().zip(&labels) {
        let _ = writeln!(
            out,
            "node_network_mtu_bytes{{device=\"{}\",{labels}}} {}",
            escape(&iface.name),
            iface.mtu
        );
    }
    family(
        out,
        "node_network_speed_bytes",
        "gauge",
        Some("bytes"),
        "Link speed in bytes per second (only interfaces that report one)",
    );
    for (iface, labels) in sample.interfaces.iter().zip(&labels) {
        if let Some(mbps) = iface.link_speed() {
            let _ = writeln!(
                out,
                "node_network_speed_bytes{{device=\"{}\",{labels}}} {}",
                escape(&iface.name),
                u64::from(mbps) * 1_000_000 / 8
            );
        }
    }
}

fn tcp(out: &mut String, sample: &Sample, ns: &str) {
    let Some(tcp) = &sample.tcp else {
        return;
    };
    let ns = escape(ns);
    family(
        out,
        "netlens_tcp_connections",
        "gauge",
        None,
        "TCP sockets by state (IPv4 and IPv6)",
    );
    for (i, state) in TCP_STATES.iter().enumerate() {
        let _ = writeln!(
            out,
            "netlens_tcp_connections{{state=\"{state}\",netns=\"{ns}\"}} {}",
            tcp.states[i]
        );
    }
    let s = &tcp.sockstat;
    let sockstat: [(&str, &str, u64); 8] = [
        (
            "node_sockstat_sockets_used",
            "Sockets in use",
            s.sockets_used,
        ),
        ("node_sockstat_TCP_inuse", "TCP sockets in use", s.tcp_inuse),
        (
            "node_sockstat_TCP_orphan",
            "Orphaned TCP sockets",
            s.tcp_orphan,
        ),
        ("node_sockstat_TCP_tw", "TCP sockets in TIME_WAIT", s.tcp_tw),
        (
            "node_sockstat_TCP_alloc",
            "TCP sockets allocated",
            s.tcp_alloc,
        ),
        (
            "node_sockstat_TCP_mem",
            "TCP memory in pages",
            s.tcp_mem_pages,
        ),
        ("node_sockstat_UDP_inuse", "UDP sockets in use", s.udp_inuse),
        (
            "node_sockstat_UDP_mem",
            "UDP memory in pages",
            s.udp_mem_pages,
        ),
    ];
    for (name, help, value) in sockstat {
        family(out, name, "gauge", None, help);
        let _ = writeln!(out, "{name}{{netns=\"{ns}\"}} {value}");
    }
    for (key, value) in &tcp.counters {
        let Some((group, counter)) = key.split_once('.') else {
            continue;
        };
        let name = format!("node_netstat_{}_{}", name_part(group), name_part(counter));
        let help = crate::model::sockets::COUNTERS
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(
                "Counter from /proc/net/snmp or /proc/net/netstat",
                |(_, h)| h,
            );
        family(out, &name, "counter", None, help);
        let _ = writeln!(out, "{name}_total{{netns=\"{ns}\"}} {value}");
    }
}

fn conntrack(out: &mut String, sample: &Sample, ns: &str) {
    let c = &sample.conntrack;
    if !c.available {
        return;
    }
    let ns = escape(ns);
    if let Some(count) = c.count {
        family(
            out,
            "node_nf_conntrack_entries",
            "gauge",
            None,
            "Conntrack entries in this namespace",
        );
        let _ = writeln!(out, "node_nf_conntrack_entries{{netns=\"{ns}\"}} {count}");
    }
    if let Some(max) = c.max {
        family(
            out,
            "node_nf_conntrack_entries_limit",
            "gauge",
            None,
            "Maximum conntrack entries (nf_conntrack_max)",
        );
        let _ = writeln!(
            out,
            "node_nf_conntrack_entries_limit{{netns=\"{ns}\"}} {max}"
        );
    }
    if let Some(s) = c.stats {
        // node_exporter's names and type (gauge) for these summed counters.
        let stats: [(&str, u64); 10] = [
            ("found", s.found),
            ("invalid", s.invalid),
            ("insert", s.insert),
            ("insert_failed", s.insert_failed),
            ("drop", s.drop),
            ("early_drop", s.early_drop),
            ("error", s.error),
            ("search_restart", s.search_restart),
            ("clash_resolve", s.clash_resolve),
            ("chaintoolong", s.chaintoolong),
        ];
        for (stat, value) in stats {
            let name = format!("node_nf_conntrack_stat_{stat}");
            family(
                out,
                &name,
                "gauge",
                None,
                &format!("Conntrack statistic {stat}, summed over CPUs (grows like a counter)"),
            );
            let _ = writeln!(out, "{name}{{netns=\"{ns}\"}} {value}");
        }
    }
}

fn dns_histograms(out: &mut String, dns: &[DnsProbeHistogram], ns: &str) {
    if dns.is_empty() {
        return;
    }
    let ns = escape(ns);
    let name = "netlens_dns_probe_duration_seconds";
    family(
        out,
        name,
        "histogram",
        Some("seconds"),
        "Latency of answered DNS probes",
    );
    for h in dns {
        let labels = format!(
            "server=\"{}\",name=\"{}\",qtype=\"{}\",netns=\"{ns}\"",
            escape(&h.server),
            escape(&h.name),
            escape(&h.qtype)
        );
        for (le, count) in &h.buckets {
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{le:?}\"}} {count}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", h.count);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", h.count);
        let _ = writeln!(out, "{name}_sum{{{labels}}} {:?}", h.sum_seconds);
    }
}

fn dns_outcomes(out: &mut String, outcomes: &[DnsProbeOutcomes], ns: &str) {
    if outcomes.is_empty() {
        return;
    }
    let ns = escape(ns);
    let name = "netlens_dns_probes";
    family(
        out,
        name,
        "counter",
        None,
        "DNS probes by outcome (ok, nxdomain, timeout, servfail, refused, error, port unreachable)",
    );
    for o in outcomes {
        let _ = writeln!(
            out,
            "{name}_total{{server=\"{}\",name=\"{}\",qtype=\"{}\",outcome=\"{}\",netns=\"{ns}\"}} {}",
            escape(&o.server),
            escape(&o.name),
            escape(&o.qtype),
            o.outcome,
            o.count
        );
    }
}

/// The root qdisc of each interface, as node_exporter's qdisc collector
/// names its series.
fn qdiscs(out: &mut String, sample: &Sample) {
    type Field = fn(&crate::model::QdiscStats) -> u64;
    const SERIES: [(&str, &str, &str, Field); 6] = [
        (
            "node_qdisc_bytes",
            "counter",
            "Bytes the root qdisc sent",
            |q| q.bytes,
        ),
        (
            "node_qdisc_packets",
            "counter",
            "Packets the root qdisc sent",
            |q| q.packets,
        ),
        (
            "node_qdisc_drops",
            "counter",
            "Packets the root qdisc dropped",
            |q| q.drops,
        ),
        (
            "node_qdisc_overlimits",
            "counter",
            "Times the root qdisc was over its limit",
            |q| q.overlimits,
        ),
        (
            "node_qdisc_requeues",
            "counter",
            "Packets the root qdisc requeued",
            |q| q.requeues,
        ),
        (
            "node_qdisc_backlog",
            "gauge",
            "Bytes waiting in the root qdisc",
            |q| q.backlog_bytes,
        ),
    ];
    let with_qdisc: Vec<_> = sample
        .interfaces
        .iter()
        .filter_map(|i| i.qdisc.as_ref().map(|q| (i, q)))
        .collect();
    if with_qdisc.is_empty() {
        return;
    }
    for (name, kind, help, field) in SERIES {
        family(out, name, kind, None, help);
        let suffix = if kind == "counter" { "_total" } else { "" };
        for (iface, q) in &with_qdisc {
            let _ = writeln!(
                out,
                "{name}{suffix}{{device=\"{}\",kind=\"{}\",{}}} {}",
                escape(&iface.name),
                escape(&q.kind),
                super::netns::iface_labels(sample, iface),
                field(q)
            );
        }
    }
}

fn findings_gauge(out: &mut String, findings: &[Finding], ns: &str) {
    let ns = escape(ns);
    family(
        out,
        "netlens_finding",
        "gauge",
        None,
        "Active findings: how many instances of each id and severity are active now",
    );
    let mut counts: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    for finding in findings {
        let severity = match finding.severity {
            crate::findings::Severity::Info => "info",
            crate::findings::Severity::Warn => "warn",
            crate::findings::Severity::Crit => "crit",
        };
        *counts.entry((finding.id, severity)).or_default() += 1;
    }
    for ((id, severity), count) in counts {
        let _ = writeln!(
            out,
            "netlens_finding{{id=\"{}\",severity=\"{severity}\",netns=\"{ns}\"}} {count}",
            escape(id)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{InterfaceSample, LinkCounters};

    fn sample() -> Sample {
        Sample {
            t: 1700000000.5,
            netns: "host".into(),
            interfaces: vec![InterfaceSample {
                name: "eth\"0".into(),
                up: true,
                lower_up: true,
                mtu: 1500,
                speed_mbps: Some(1000),
                counters: LinkCounters {
                    rx_bytes: 12345,
                    tx_packets: 7,
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn every_interface_counter_with_a_metric_is_exported_once() {
        let exported = |c: &LinkCounter| EXPORTED.iter().filter(|e| e.kernel == c.kernel).count();
        for counter in &netdev::ALL {
            let wanted = usize::from(counter.metric.is_some());
            assert_eq!(exported(counter), wanted, "{}", counter.kernel);
        }
    }

    #[test]
    fn interface_counters_use_node_exporter_names() {
        let text = render(&sample(), &[], &DnsSeries::default(), None, None);
        assert!(text.contains("# TYPE node_network_receive_bytes counter\n"));
        assert!(text.contains("# UNIT node_network_receive_bytes bytes\n"));
        assert!(
            text.contains(
                "node_network_receive_bytes_total{device=\"eth\\\"0\",netns=\"host\"} 12345\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "node_network_speed_bytes{device=\"eth\\\"0\",netns=\"host\"} 125000000\n"
            )
        );
        assert!(text.ends_with("# EOF\n"));
        assert!(
            !text.contains("netlens_tcp_connections"),
            "no tcp sample, no series"
        );
    }

    /// A terminal escape in a name is written as text, then OpenMetrics
    /// escapes that text's backslash like any other.
    #[test]
    fn label_values_hold_no_terminal_escapes() {
        assert_eq!(escape("eth0"), "eth0");
        assert_eq!(escape(r#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(
            escape("\x1b]0;x\x07\u{9b}\u{202e}\n"),
            r"\\x1b]0;x\\x07\\x9b\\u{202e}\\x0a"
        );
    }

    #[test]
    fn dns_histogram_is_cumulative_with_inf() {
        let h = DnsProbeHistogram {
            server: "127.0.0.1:53".into(),
            name: "example.test".into(),
            qtype: "A".into(),
            buckets: vec![(0.001, 2), (0.01, 5)],
            count: 6,
            sum_seconds: 0.5,
        };
        let dns = DnsSeries {
            histograms: vec![h],
            outcomes: vec![],
        };
        let text = render(&sample(), &[], &dns, None, None);
        assert!(text.contains("# TYPE netlens_dns_probe_duration_seconds histogram\n"));
        assert!(text.contains("le=\"0.001\"} 2\n"), "{text}");
        assert!(text.contains("le=\"+Inf\"} 6\n"));
        assert!(text.contains("netlens_dns_probe_duration_seconds_sum{server=\"127.0.0.1:53\",name=\"example.test\",qtype=\"A\",netns=\"host\"} 0.5\n"));
    }
}
