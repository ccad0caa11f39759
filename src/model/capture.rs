//! What a sample carries about packet capture: a status, totals and a
//! bounded list of flows (the busiest by bytes and by packets).

pub use crate::capture::flows::FlowSample;
use serde::{Deserialize, Serialize};

/// Flows a sample carries at most: the top half by bytes, the rest by
/// packets (a flood of tiny packets ranks low by bytes).
pub const SAMPLE_FLOWS: usize = 256;

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
    pub flows: Vec<FlowSample>,
}
