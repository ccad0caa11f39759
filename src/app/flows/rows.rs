//! The flow table's rows: the capture's flows (or its per-host and
//! per-port groups) as rows, filtered by the `/` text and sorted.

use super::columns::compare;
use super::{FlowsView, Grouping};
use crate::app::view::Shown;
use crate::model::Sample;
use crate::model::capture::{CaptureRates, CaptureSample, FlowSample, GroupSample};
use crate::model::conntrack::{ConntrackEntry, NatIndex};
use crate::model::filter::rows::{InSample, container_of, netns_of, parse_end, sni_of};
use crate::model::filter::{End, FilterFields, Side};
use std::collections::HashMap;

/// One row of the flow table: a flow, or a host's or port's aggregate.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub proto: String,
    /// "src > dst" for a flow, the host or "proto/port" for an aggregate.
    pub key: String,
    pub flows: u64,
    pub packets: u64,
    pub bytes: u64,
    pub packets_per_s: Option<f64>,
    pub bytes_per_s: Option<f64>,
    pub state: String,
    pub rtt_ms: Option<f64>,
    pub retransmits: u64,
    pub first_seen: f64,
    pub last_seen: f64,
    /// The owning process ("nginx/812"), "" when unknown or aggregated.
    pub process: String,
    /// The server name the client sent (SNI, else HTTP Host), "" if none.
    pub name: String,
    /// The flow's namespace (`FlowSample::netns`); 0 for groups.
    pub netns: u16,
    /// The other side of the flow's NAT ("dnat ⇒ 198.18.1.2:8080",
    /// `FlowNat::cell`), "" when conntrack did not translate it or no dump
    /// of its entries is recent.
    pub nat: String,
}

impl FlowsView {
    /// The table rows for the shown sample, grouped, filtered and sorted.
    pub fn rows(&self, previous: Option<&Sample>, current: &Sample) -> Vec<Row> {
        self.rows_with(previous, current, (&NatIndex::default(), &[]))
    }

    /// As `rows`, each flow with its NAT from `nat` (an index and its dump).
    fn rows_with(
        &self,
        previous: Option<&Sample>,
        current: &Sample,
        nat: (&NatIndex, &[ConntrackEntry]),
    ) -> Vec<Row> {
        let Some(capture) = current.capture.as_ref() else {
            return Vec::new();
        };
        let rates = CaptureRates::new(previous, current);
        let flows = capture.flows.iter().map(|f| {
            let (pps, bps) = rates.flow(f);
            flow_row(f, pps, bps, nat)
        });
        let groups = |of: fn(&CaptureSample) -> &Vec<GroupSample>| {
            let before = previous.and_then(|p| p.capture.as_ref()).map(of);
            of(capture)
                .iter()
                .map(|g| group_row(g, before.map(Vec::as_slice), rates.interval))
                .collect()
        };
        let mut rows: Vec<Row> = match self.grouping {
            Grouping::Flow => flows.collect(),
            // The capture's groups sum every flow in its table; a recording
            // from before they existed has only the carried flows to sum.
            Grouping::Host if !capture.hosts.is_empty() => groups(|c| &c.hosts),
            Grouping::Port if !capture.services.is_empty() => groups(|c| &c.services),
            Grouping::Server => Vec::new(),
            grouping => aggregate(flows, grouping),
        };
        let filter = crate::app::view::scoped_filter(self.scope.as_ref(), &self.filter);
        let names = self.names.as_deref();
        rows.retain(|r| filter.matches(&InSample::new(r, current).with_names(names)));
        let sort = self.sort;
        rows.sort_by(|a, b| {
            let order = compare(a, b, sort);
            let order = if self.descending {
                order.reverse()
            } else {
                order
            };
            order.then_with(|| a.key.cmp(&b.key))
        });
        rows
    }
}

/// A flow row for the row filter. Its key is "src > dst" for a flow, the
/// initiator's address for a host's group (its source) and "proto/port"
/// for a service's (its destination port).
impl FilterFields for InSample<'_, Row> {
    fn shown_text(&self) -> String {
        let r = self.row;
        format!("{} {} {} {}", r.proto, r.key, r.state, r.process)
    }

    fn proto(&self) -> Option<&str> {
        Some(self.row.proto.as_str()).filter(|p| !p.is_empty())
    }

    fn ends(&self, side: Side) -> Vec<End> {
        let key = self.row.key.as_str();
        let end = match key.split_once(" > ") {
            Some((src, dst)) => parse_end(if side == Side::Src { src } else { dst }),
            None => match (side, key.split_once('/')) {
                (Side::Dst, Some((_, port))) => port.parse().ok().map(|port| End {
                    ip: None,
                    port: Some(port),
                }),
                (Side::Src, None) => parse_end(key),
                _ => None,
            },
        };
        end.into_iter().collect()
    }

    fn states(&self) -> Vec<&str> {
        vec![self.row.state.as_str()]
    }

    /// "nginx/812" as the row shows it.
    fn processes(&self) -> Vec<(&str, u32)> {
        let owner = self.row.process.rsplit_once('/');
        let owner = owner.and_then(|(name, pid)| Some((name, pid.parse().ok()?)));
        owner.into_iter().collect()
    }

    fn netns(&self) -> Option<&str> {
        Some(netns_of(self.sample, self.row.netns))
    }

    fn container(&self) -> Option<&str> {
        let (_, pid) = *self.processes().first()?;
        container_of(self.sample, pid)
    }

    fn host_names(&self) -> Vec<&str> {
        let ends = [Side::Src, Side::Dst]
            .into_iter()
            .flat_map(|s| self.ends(s));
        let ips: Vec<_> = ends.filter_map(|end| end.ip).collect();
        ips.into_iter().flat_map(|ip| self.names_of(ip)).collect()
    }

    fn sni(&self) -> Option<&str> {
        let (src, dst) = (self.ends(Side::Src), self.ends(Side::Dst));
        sni_of(self.sample, *src.first()?, *dst.first()?)
    }
}

fn flow_row(
    f: &FlowSample,
    pps: Option<f64>,
    bps: Option<f64>,
    (nat, entries): (&NatIndex, &[ConntrackEntry]),
) -> Row {
    Row {
        proto: f.proto.clone(),
        key: format!("{} > {}", f.src, f.dst),
        flows: 1,
        packets: f.packets,
        bytes: f.bytes,
        packets_per_s: pps,
        bytes_per_s: bps,
        state: f.state.clone(),
        rtt_ms: f.rtt_ms,
        retransmits: f.retransmits,
        first_seen: f.first_seen,
        last_seen: f.last_seen,
        process: match (&f.process, f.pid) {
            (Some(name), Some(pid)) => format!("{name}/{pid}"),
            _ => String::new(),
        },
        name: f.server_name().unwrap_or_default().to_string(),
        netns: f.netns,
        nat: (nat.of_flow(entries, (&f.proto, &f.src, &f.dst)))
            .map_or_else(String::new, |n| n.cell()),
    }
}

/// A group's row; its rates from the same group in `before` (None when it
/// was not there or its counters went back).
fn group_row(g: &GroupSample, before: Option<&[GroupSample]>, interval: f64) -> Row {
    let earlier = before.and_then(|b| b.iter().find(|p| p.key == g.key && p.proto == g.proto));
    let rate = |now: u64, then: u64| {
        (interval > 0.0 && now >= then).then(|| (now - then) as f64 / interval)
    };
    Row {
        proto: g.proto.clone(),
        key: g.key.clone(),
        flows: g.flows,
        packets: g.packets,
        bytes: g.bytes,
        packets_per_s: earlier.and_then(|p| rate(g.packets, p.packets)),
        bytes_per_s: earlier.and_then(|p| rate(g.bytes, p.bytes)),
        state: String::new(),
        rtt_ms: g.rtt_ms,
        retransmits: g.retransmits,
        first_seen: g.first_seen,
        last_seen: g.last_seen,
        process: String::new(),
        name: String::new(),
        netns: 0,
        nat: String::new(),
    }
}

/// The host part of "ip:port" / "[v6]:port" / "ip".
fn host(endpoint: &str) -> &str {
    if let Some(rest) = endpoint.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match endpoint.rsplit_once(':') {
        Some((host, _)) if !host.contains(':') => host,
        _ => endpoint,
    }
}

fn port(endpoint: &str) -> Option<&str> {
    let (host, port) = endpoint.rsplit_once(':')?;
    (host.ends_with(']') || !host.contains(':')).then_some(port)
}

/// Sums rows by source host, or by protocol and destination (server) port.
fn aggregate(rows: impl Iterator<Item = Row>, grouping: Grouping) -> Vec<Row> {
    let mut groups: HashMap<(String, String), Row> = HashMap::new();
    for row in rows {
        let (src, dst) = row.key.split_once(" > ").unwrap_or((&row.key, ""));
        let key = match grouping {
            Grouping::Host => (String::new(), host(src).to_string()),
            _ => (
                row.proto.clone(),
                format!("{}/{}", row.proto, port(dst).unwrap_or("-")),
            ),
        };
        let group = groups.entry(key.clone()).or_insert_with(|| Row {
            proto: key.0.clone(),
            key: key.1.clone(),
            flows: 0,
            packets: 0,
            bytes: 0,
            packets_per_s: Some(0.0),
            bytes_per_s: Some(0.0),
            state: String::new(),
            rtt_ms: None,
            retransmits: 0,
            first_seen: row.first_seen,
            last_seen: row.last_seen,
            process: String::new(),
            name: String::new(),
            netns: 0,
            nat: String::new(),
        });
        group.flows += 1;
        group.packets += row.packets;
        group.bytes += row.bytes;
        // A group's rate is known only if every member's is.
        group.packets_per_s = group
            .packets_per_s
            .zip(row.packets_per_s)
            .map(|(a, b)| a + b);
        group.bytes_per_s = group.bytes_per_s.zip(row.bytes_per_s).map(|(a, b)| a + b);
        group.rtt_ms = match (group.rtt_ms, row.rtt_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        group.retransmits += row.retransmits;
        group.first_seen = group.first_seen.min(row.first_seen);
        group.last_seen = group.last_seen.max(row.last_seen);
    }
    groups.into_values().collect()
}

impl FlowsView {
    /// The table rows for the shown sample.
    pub fn rows_of(&self, shown: &Shown) -> Vec<Row> {
        match shown.pair() {
            (previous, Some(current)) => {
                let (entries, mono) = shown.recent_conntrack().unwrap_or((&[], f64::NAN));
                let index = self.nat_index(mono, entries);
                self.rows_with(previous, current, (&index, entries))
            }
            _ => Vec::new(),
        }
    }
}
