//! The `capture` object and `flows[]` of `snapshot --json`.

use crate::model::Sample;
use crate::model::capture::{CaptureRates, CaptureSample};
use crate::model::conntrack::{FlowNat, NatIndex};
use crate::model::filter::Where;
use serde::Serialize;

#[derive(Serialize)]
pub struct CaptureJson<'a> {
    active: bool,
    error: Option<&'a str>,
    iface: &'a str,
    filter: &'a str,
    packets: u64,
    bytes: u64,
    packets_per_s: Option<f64>,
    bytes_per_s: Option<f64>,
    kernel_received: u64,
    kernel_dropped: u64,
    kernel_dropped_in_interval: Option<u64>,
    flows_active: u64,
    flows_evicted: u64,
    /// Who counted the flows' bytes and packets: "kernel" (eBPF at tc,
    /// exact) or "capture" (short by what the capture dropped).
    flow_counts: &'static str,
    /// The flows' counts are lower bounds: the capture counted them and
    /// dropped packets.
    flow_counts_short: bool,
    /// The capture kept control packets and one in this many of the rest
    /// (1: every packet): the kernel counts them all, so packet lines and
    /// the capture's own totals are a sample.
    sample_every: u32,
    /// The kernel's counting: how it attached, its totals and what its map
    /// had no room for, or why it did not count.
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel_counts: Option<&'a crate::model::flow_counts::KernelCounts>,
    /// Servers' response times over the interval, the busiest first.
    responses: Vec<ResponseJson<'a>>,
}

/// One server's requests answered in the interval, timed from packets.
#[derive(Serialize)]
pub struct ResponseJson<'a> {
    server: &'a str,
    /// The server is on this host: its times hold no network round trip.
    local: bool,
    pid: Option<u32>,
    process: Option<String>,
    answered: u64,
    answered_per_s: Option<f64>,
    mean_ms: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    /// The mean handshake round trip of its connections.
    rtt_ms: Option<f64>,
    /// The server's own time at the middle (p50 less a round trip when
    /// the capture is at the client).
    server_p50_ms: f64,
    /// Plain HTTP answers by status since the capture began.
    statuses: std::collections::BTreeMap<u16, u64>,
    slowest: Option<&'a crate::model::responses::SlowRequest>,
}

fn responses_json<'a>(
    previous: &Sample,
    current: &'a Sample,
    interval: f64,
) -> Vec<ResponseJson<'a>> {
    use crate::model::responses::windows;
    let Some(c) = current.capture.as_ref() else {
        return Vec::new();
    };
    let before = previous.capture.as_ref().map(|p| p.responses.as_slice());
    windows(&c.responses, before, &current.sockets)
        .into_iter()
        .map(|(s, w, owner)| ResponseJson {
            server: &s.server,
            local: w.local,
            pid: owner.map(|u| u.pid),
            process: owner.map(|u| u.process.to_string()),
            answered: w.answered,
            answered_per_s: (interval > 0.0).then(|| w.answered as f64 / interval),
            mean_ms: w.mean_ms,
            p50_ms: w.p50_ms,
            p90_ms: w.p90_ms,
            p99_ms: w.p99_ms,
            max_ms: w.max_ms,
            rtt_ms: w.rtt_ms,
            server_p50_ms: w.server_p50_ms,
            statuses: s.statuses.iter().copied().collect(),
            slowest: s.slowest.as_ref(),
        })
        .collect()
}

#[derive(Serialize)]
pub struct FlowJson<'a> {
    proto: &'a str,
    src: &'a str,
    dst: &'a str,
    packets: u64,
    bytes: u64,
    packets_per_s: Option<f64>,
    bytes_per_s: Option<f64>,
    state: &'a str,
    rtt_ms: Option<f64>,
    retransmits: u64,
    first_seen: f64,
    last_seen: f64,
    pid: Option<u32>,
    process: Option<&'a str>,
    /// Its namespace's label, under --all-netns only (as sockets have it).
    #[serde(skip_serializing_if = "Option::is_none")]
    netns: Option<&'a str>,
    /// The server name the client sent: TLS/QUIC SNI, HTTP Host.
    sni: Option<&'a str>,
    http_host: Option<&'a str>,
    findings: &'a [crate::packet::analysis::FlowFinding],
    /// Its conntrack entry when NAT translated it (from this sample's or
    /// the previous one's dump of the entries); null otherwise.
    nat: Option<NatJson>,
}

/// A translated flow's conntrack entry, as `conntrack -L` lists it.
#[derive(Serialize)]
pub struct NatJson {
    /// "dnat", "snat", "snat+dnat".
    kind: &'static str,
    /// The flow's packets are the translated ones (after the NAT).
    translated: bool,
    /// conntrack's state ("ESTABLISHED"; UNREPLIED/REPLIED/ASSURED
    /// without TCP).
    state: &'static str,
    original: NatTupleJson,
    reply: NatTupleJson,
}

#[derive(Serialize)]
pub struct NatTupleJson {
    src: String,
    dst: String,
}

fn nat_json(nat: FlowNat) -> NatJson {
    let e = nat.entry;
    let tuple = |t: &crate::model::conntrack::Tuple| NatTupleJson {
        src: t.src_text(),
        dst: t.dst_text(),
    };
    NatJson {
        kind: e.nat().label().unwrap_or_default(),
        translated: nat.translated,
        state: e.state_name(),
        original: tuple(&e.orig),
        reply: tuple(&e.reply),
    }
}

/// The capture status and the flows, rates against `previous`; None when
/// capture is off.
pub fn json<'a>(
    previous: &'a Sample,
    current: &'a Sample,
    filter: Where<'_>,
) -> (Option<CaptureJson<'a>>, Option<Vec<FlowJson<'a>>>) {
    let Some(c): Option<&CaptureSample> = current.capture.as_ref() else {
        return (None, None);
    };
    let rates = CaptureRates::new(Some(previous), current);
    let entries = [current, previous]
        .into_iter()
        .find_map(|s| s.conntrack.entries.as_deref())
        .unwrap_or_default();
    let nat = NatIndex::of(entries);
    let capture = CaptureJson {
        active: c.active,
        error: c.error.as_deref(),
        iface: &c.iface,
        filter: &c.filter,
        packets: c.packets,
        bytes: c.bytes,
        packets_per_s: rates.packets_per_s,
        bytes_per_s: rates.bytes_per_s,
        kernel_received: c.kernel_received,
        kernel_dropped: c.kernel_dropped,
        kernel_dropped_in_interval: rates.dropped,
        flows_active: c.flows_active,
        flows_evicted: c.flows_evicted,
        flow_counts: if c.counted_by_kernel() {
            "kernel"
        } else {
            "capture"
        },
        flow_counts_short: c.counts_short(),
        sample_every: c.sample_every.max(1),
        kernel_counts: c.kernel_counts.as_ref(),
        responses: responses_json(previous, current, rates.interval),
    };
    let flows = c
        .flows
        .iter()
        .filter(|f| filter.keeps(&***f, current))
        .map(|f| {
            let (packets_per_s, bytes_per_s) = rates.flow(f);
            FlowJson {
                proto: &f.proto,
                src: &f.src,
                dst: &f.dst,
                packets: f.packets,
                bytes: f.bytes,
                packets_per_s,
                bytes_per_s,
                state: &f.state,
                rtt_ms: f.rtt_ms,
                retransmits: f.retransmits,
                first_seen: f.first_seen,
                last_seen: f.last_seen,
                pid: f.pid,
                process: f.process.as_deref(),
                netns: (!current.namespaces.is_empty()).then(|| current.netns_label(f.netns)),
                sni: f.sni.as_deref(),
                http_host: f.http_host.as_deref(),
                findings: &f.findings,
                nat: nat
                    .of_flow(entries, (&f.proto, &f.src, &f.dst))
                    .map(nat_json),
            }
        })
        .collect();
    (Some(capture), Some(flows))
}
