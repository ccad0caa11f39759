//! The JSON schema of `snapshot --json` (the man page's SNAPSHOT OUTPUT
//! lists the keys).

use super::Sections;
use super::sockets;
use crate::findings::Finding;
use crate::model::conntrack::{ConntrackEntry, ConntrackSample, StatsSource};
use crate::model::conntrack_rates::ConntrackRates;
use crate::model::filter::{Expr, Where};
use crate::model::netdev::{self, Kind, LinkCounter};
use crate::model::processes::Container;
use crate::model::rates::{InterfaceRates, QdiscRates, interface_util, interval, sockets_interval};
use crate::model::{Duplex, InterfaceSample, LinkCounters, QdiscStats, Sample};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::collections::HashMap;

#[derive(Serialize)]
struct SampleJson<'a> {
    t: f64,
    interval: f64,
    /// Seconds between the two samples' socket dumps, over which the
    /// per-socket and per-process rates are taken.
    sockets_interval: f64,
    /// Seconds since the sample was taken, when this line was written.
    age: f64,
    /// The parts that missed their deadline: their data is this old.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    late: &'a [crate::model::LatePart],
    netns: &'a str,
    /// `--all-netns`: every namespace sampled.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    namespaces: Vec<super::netns::NamespaceJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interfaces: Option<Vec<InterfaceJson<'a>>>,
    /// Per CPU; Some(None) prints `"cpus": null` (not collected).
    #[serde(skip_serializing_if = "Option::is_none")]
    cpus: Option<Option<Vec<super::cpu::CpuJson>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    softnet_knobs: Option<Option<&'a std::collections::BTreeMap<String, String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    neighbours: Option<Option<super::cpu::NeighJson<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conntrack: Option<ConntrackJson<'a>>,
    tcp: Option<Option<sockets::TcpJson<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sockets: Option<SocketsJson<'a>>,
    /// TCP connections that ended in the interval (with `sockets`).
    #[serde(skip_serializing_if = "Option::is_none")]
    closed: Option<Vec<super::closed::ClosedJson<'a>>>,
    /// The interval's failed connections and DNS queries, grouped (with
    /// `sockets`).
    #[serde(skip_serializing_if = "Option::is_none")]
    failed: Option<Vec<super::closed::FailedJson<'a>>>,
    /// Some(None) prints `"closed_log": null` (not collected).
    #[serde(skip_serializing_if = "Option::is_none")]
    closed_log: Option<Option<super::closed::ClosedLogJson<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    processes: Option<Vec<super::processes::ProcessJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<super::flows::CaptureJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flows: Option<Vec<super::flows::FlowJson<'a>>>,
    /// Some(None) prints `"dns": null` (not collected, e.g. an old recording).
    #[serde(skip_serializing_if = "Option::is_none")]
    dns: Option<Option<super::dns::DnsJson<'a>>>,
    /// Some(None) prints `"drops": null` (a recording made before drops
    /// were collected).
    #[serde(skip_serializing_if = "Option::is_none")]
    drops: Option<Option<super::drops::DropsJson<'a>>>,
    /// With the drops, when the sample read the firewall's rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    firewall: Option<super::firewall::FirewallJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    findings: Option<Vec<Finding>>,
}

#[derive(Serialize)]
struct InterfaceJson<'a> {
    /// Its namespace's label, under `--all-netns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    netns: Option<&'a str>,
    name: &'a str,
    index: u32,
    kind: Option<&'a str>,
    up: bool,
    lower_up: bool,
    mtu: u32,
    mac: Option<&'a str>,
    addresses: &'a [String],
    speed_mbps: Option<u32>,
    duplex: Option<Duplex>,
    /// `<key>_per_s` of the packet and byte counters.
    #[serde(flatten)]
    volume_per_s: PerSecondJson,
    util_percent: Option<f64>,
    /// `<key>_per_s` of the error and drop counters.
    #[serde(flatten)]
    trouble_per_s: PerSecondJson,
    #[serde(flatten)]
    totals: TotalsJson,
    /// The root qdisc; null when not collected (an old recording).
    qdisc: Option<QdiscJson<'a>>,
}

/// `tc -s qdisc show dev IF`'s root qdisc: its counters and their rates.
#[derive(Serialize)]
struct QdiscJson<'a> {
    kind: &'a str,
    handle: &'a str,
    bytes: u64,
    packets: u64,
    drops: u64,
    overlimits: u64,
    requeues: u64,
    backlog_bytes: u64,
    backlog_packets: u64,
    bytes_per_s: Option<f64>,
    packets_per_s: Option<f64>,
    drops_per_s: Option<f64>,
    overlimits_per_s: Option<f64>,
    requeues_per_s: Option<f64>,
}

fn qdisc_json(q: &QdiscStats, rates: QdiscRates) -> QdiscJson<'_> {
    QdiscJson {
        kind: &q.kind,
        handle: &q.handle,
        bytes: q.bytes,
        packets: q.packets,
        drops: q.drops,
        overlimits: q.overlimits,
        requeues: q.requeues,
        backlog_bytes: q.backlog_bytes,
        backlog_packets: q.backlog_packets,
        bytes_per_s: rates.bytes,
        packets_per_s: rates.packets,
        drops_per_s: rates.drops,
        overlimits_per_s: rates.overlimits,
        requeues_per_s: rates.requeues,
    }
}

fn interface_json<'a>(
    previous: &Sample,
    current: &'a Sample,
    iface: &'a InterfaceSample,
) -> InterfaceJson<'a> {
    let rates = InterfaceRates::for_interface(Some(previous), current, iface);
    let (volume, trouble) = netdev::volume_then_trouble(|c| c.json.is_some());
    InterfaceJson {
        netns: (!current.namespaces.is_empty()).then(|| current.netns_label(iface.netns)),
        name: &iface.name,
        index: iface.index,
        kind: iface.kind.as_deref(),
        up: iface.up,
        lower_up: iface.lower_up,
        mtu: iface.mtu,
        mac: iface.mac.as_deref(),
        addresses: &iface.addresses,
        speed_mbps: iface.link_speed(),
        duplex: (iface.duplex != Duplex::Unknown).then_some(iface.duplex),
        volume_per_s: PerSecondJson(volume, rates),
        util_percent: interface_util(iface, &rates),
        trouble_per_s: PerSecondJson(trouble, rates),
        totals: TotalsJson(iface.counters),
        qdisc: iface
            .qdisc
            .as_ref()
            .map(|q| qdisc_json(q, QdiscRates::for_interface(Some(previous), current, iface))),
    }
}

/// The rates of the interface counters JSON names, as `<key>_per_s`.
struct PerSecondJson(Vec<&'static LinkCounter>, InterfaceRates);

impl Serialize for PerSecondJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let PerSecondJson(counters, rates) = self;
        let mut map = serializer.serialize_map(Some(counters.len()))?;
        for counter in counters {
            let key = format!("{}_per_s", counter.json.unwrap_or(counter.kernel));
            map.serialize_entry(&key, &rates.rate(counter))?;
        }
        map.end()
    }
}

/// The totals of the interface counters JSON names, bytes first as
/// `ip -s link` puts them.
struct TotalsJson(LinkCounters);

impl Serialize for TotalsJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let named = netdev::ALL.iter().filter(|c| c.json.is_some());
        let (bytes, others): (Vec<&LinkCounter>, Vec<_>) =
            named.partition(|c| c.kind == Kind::Bytes);
        let mut map = serializer.serialize_map(None)?;
        for counter in bytes.into_iter().chain(others) {
            map.serialize_entry(counter.json.unwrap_or(counter.kernel), &counter.of(&self.0))?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct ConntrackJson<'a> {
    available: bool,
    reason: Option<&'a str>,
    source: StatsSource,
    count: Option<u64>,
    max: Option<u64>,
    usage_percent: Option<f64>,
    buckets: Option<u64>,
    acct: Option<bool>,
    found_per_s: Option<f64>,
    invalid_per_s: Option<f64>,
    insert_per_s: Option<f64>,
    insert_failed_per_s: Option<f64>,
    drop_per_s: Option<f64>,
    early_drop_per_s: Option<f64>,
    error_per_s: Option<f64>,
    search_restart_per_s: Option<f64>,
    clash_resolve_per_s: Option<f64>,
    /// The raw summed counters.
    stats: Option<crate::model::conntrack::ConntrackStats>,
    entries: Option<Each<'a, ConntrackEntry, EntryJson>>,
    entries_error: Option<&'a str>,
}

#[derive(Serialize)]
struct EntryJson {
    proto: String,
    state: &'static str,
    orig_src: String,
    orig_dst: String,
    reply_src: String,
    reply_dst: String,
    nat: Option<&'static str>,
    nat_src: Option<String>,
    nat_dst: Option<String>,
    timeout_s: u32,
    mark: u32,
    zone: u16,
    status: u32,
    packets_orig: Option<u64>,
    packets_reply: Option<u64>,
    bytes_orig: Option<u64>,
    bytes_reply: Option<u64>,
}

fn entry_json(entry: &ConntrackEntry) -> EntryJson {
    EntryJson {
        proto: entry.proto_name(),
        state: entry.state_name(),
        orig_src: entry.orig.src_text(),
        orig_dst: entry.orig.dst_text(),
        reply_src: entry.reply.src_text(),
        reply_dst: entry.reply.dst_text(),
        nat: entry.nat().label(),
        nat_src: entry.nat_src(),
        nat_dst: entry.nat_dst(),
        timeout_s: entry.timeout,
        mark: entry.mark,
        zone: entry.zone,
        status: entry.status,
        packets_orig: entry.packets.map(|p| p.0),
        packets_reply: entry.packets.map(|p| p.1),
        bytes_orig: entry.bytes.map(|b| b.0),
        bytes_reply: entry.bytes.map(|b| b.1),
    }
}

fn conntrack_json<'a>(previous: &Sample, current: &'a Sample) -> ConntrackJson<'a> {
    let c: &ConntrackSample = &current.conntrack;
    let r = ConntrackRates::for_samples(Some(previous), current);
    ConntrackJson {
        available: c.available,
        reason: c.reason.as_deref(),
        source: c.source,
        count: c.count,
        max: c.max,
        usage_percent: c.usage_percent(),
        buckets: c.buckets,
        acct: c.acct,
        found_per_s: r.found,
        invalid_per_s: r.invalid,
        insert_per_s: r.insert,
        insert_failed_per_s: r.insert_failed,
        drop_per_s: r.drop,
        early_drop_per_s: r.early_drop,
        error_per_s: r.error,
        search_restart_per_s: r.search_restart,
        clash_resolve_per_s: r.clash_resolve,
        stats: c.stats,
        entries: c.entries.as_ref().map(|entries| Each(entries, entry_json)),
        entries_error: c.entries_error.as_deref(),
    }
}

/// One JSON object (one line) for `current`, with rates against `previous`
/// and the findings shown at it (`findings::Engine`).
/// A list serialized one element at a time as the writer takes it: a
/// million sockets or conntrack entries never exist as JSON values at once.
struct Each<'a, T, J>(&'a [T], fn(&'a T) -> J);

impl<'a, T, J: Serialize> Serialize for Each<'a, T, J> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(self.1))
    }
}

/// The sockets `filter` keeps, each with its owner's container,
/// serialized one by one.
struct SocketsJson<'a> {
    sample: &'a Sample,
    filter: Where<'a>,
    containers: HashMap<u32, &'a Container>,
}

impl Serialize for SocketsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let sample = self.sample;
        serializer.collect_seq(
            sample
                .sockets
                .iter()
                .filter(|s| self.filter.keeps(s, sample))
                .map(|s| {
                    let mut json = sockets::socket_json(s, &self.containers);
                    json.netns =
                        (!sample.namespaces.is_empty()).then(|| sample.netns_label(s.netns));
                    json
                }),
        )
    }
}

/// One sample as one line of JSON (no newline), as a String.
pub fn sample_line(
    previous: &Sample,
    current: &Sample,
    sections: Sections,
    found: &[Finding],
) -> String {
    let mut out = Vec::new();
    write_sample_line(
        &mut out,
        previous,
        current,
        sections,
        found,
        Where::new(&Expr::default()),
    )
    .expect("sample JSON has only serializable fields");
    // write_sample_line ends the line; callers write this one with writeln.
    out.pop();
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// One sample as one line of JSON and its newline, streamed to `out` (put
/// a buffer in between): its size is never held in memory. Only the
/// sockets, closed connections, processes and flows that `filter` keeps
/// (`snapshot --where`) are written.
pub fn write_sample_line(
    out: &mut impl std::io::Write,
    previous: &Sample,
    current: &Sample,
    sections: Sections,
    found: &[Finding],
    filter: Where<'_>,
) -> std::io::Result<()> {
    let (capture, flows) = if sections.flows {
        super::flows::json(previous, current, filter)
    } else {
        (None, None)
    };
    let containers = crate::model::processes::containers_by_pid(current);
    let closed_containers = crate::model::processes::ClosedContainers::of(current);
    let failures = sections.sockets.then(|| {
        crate::model::failed::Failures::of_interval(previous, current, |c| filter.keeps(c, current))
    });
    let json = SampleJson {
        t: current.t,
        interval: interval(previous, current),
        sockets_interval: sockets_interval(previous, current),
        // A recorded sample keeps the age it had when recorded.
        age: current.age.unwrap_or_else(|| current.age_at(now_t())),
        late: &current.late,
        netns: &current.netns,
        namespaces: super::netns::namespaces(previous, current, found),
        interfaces: sections.interfaces.then(|| {
            current
                .interfaces
                .iter()
                .map(|iface| interface_json(previous, current, iface))
                .collect()
        }),
        // Below the interfaces: shown with them.
        cpus: sections
            .interfaces
            .then(|| super::cpu::cpus(previous, current)),
        softnet_knobs: sections.interfaces.then(|| super::cpu::knobs(current)),
        neighbours: sections
            .interfaces
            .then(|| super::cpu::neighbours(previous, current)),
        conntrack: sections
            .conntrack
            .then(|| conntrack_json(previous, current)),
        tcp: sections.tcp.then(|| sockets::tcp_json(previous, current)),
        sockets: sections.sockets.then(|| SocketsJson {
            sample: current,
            filter,
            containers: containers.clone(),
        }),
        processes: sections
            .processes
            .then(|| super::processes::processes(previous, current, filter)),
        closed: sections.sockets.then(|| {
            current
                .closed
                .iter()
                .flat_map(|c| &c.conns)
                .filter(|c| filter.keeps(*c, current))
                .map(|c| super::closed::json(c, &closed_containers))
                .collect()
        }),
        failed: failures.as_ref().map(super::closed::failed_json),
        closed_log: sections
            .sockets
            .then(|| current.closed.as_ref().map(super::closed::log_json)),
        capture,
        flows,
        dns: sections
            .dns
            .then(|| current.dns.as_ref().map(super::dns::json)),
        drops: sections
            .drops
            .then(|| super::drops::json(previous, current)),
        firewall: sections
            .drops
            .then(|| super::firewall::json(previous, current))
            .flatten(),
        findings: sections.findings.then(|| found.to_vec()),
    };
    crate::text::json::to_writer(&mut *out, &json).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

/// The wall clock now, in Unix seconds.
fn now_t() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LinkCounters;

    /// The interface keys, in the order scripts have always seen them.
    #[test]
    fn interface_counter_keys_keep_their_names_and_order() {
        let at = |mono: f64, n: u64| Sample {
            mono,
            interfaces: vec![InterfaceSample {
                index: 2,
                name: "eth0".into(),
                counters: LinkCounters {
                    rx_bytes: 100 * n,
                    rx_over_errors: 2 * n,
                    ..LinkCounters::default()
                },
                ..InterfaceSample::default()
            }],
            ..Sample::default()
        };
        let (before, after) = (at(0.0, 0), at(2.0, 1));
        let json = interface_json(&before, &after, &after.interfaces[0]);
        let text = crate::text::json::to_string(&json).unwrap();
        let keys = [
            "duplex",
            "rx_packets_per_s",
            "tx_packets_per_s",
            "rx_bytes_per_s",
            "tx_bytes_per_s",
            "util_percent",
            "rx_errors_per_s",
            "tx_errors_per_s",
            "rx_dropped_per_s",
            "tx_dropped_per_s",
            "rx_overruns_per_s",
            "tx_carrier_per_s",
            "collisions_per_s",
            "rx_bytes",
            "tx_bytes",
            "rx_packets",
            "tx_packets",
            "rx_errors",
            "tx_errors",
            "rx_dropped",
            "tx_dropped",
            "rx_overruns",
            "tx_carrier",
            "collisions",
            "qdisc",
        ];
        let at_key = |key: &str| text.find(&format!("\"{key}\":"));
        let found: Vec<_> = keys.iter().map(|k| at_key(k)).collect();
        assert!(found.iter().all(Option::is_some), "{text}");
        assert!(found.is_sorted(), "{text}");
        assert!(text.contains("\"rx_bytes_per_s\":50.0,"), "{text}");
        assert!(text.contains("\"rx_overruns\":2,"), "{text}");
        assert_eq!(text.matches("_per_s\"").count(), 11, "{text}");
    }
}
