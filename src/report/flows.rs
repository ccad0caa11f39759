//! The `capture` object and `flows[]` of `snapshot --json`.

use crate::model::Sample;
use crate::model::capture::{CaptureRates, CaptureSample};
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
    };
    let flows = c
        .flows
        .iter()
        .filter(|f| filter.keeps(*f, current))
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
            }
        })
        .collect();
    (Some(capture), Some(flows))
}
