//! The interface counters (rtnl_link_stats64), each named once: one
//! `LinkCounter` row holds every name a counter goes by (kernel, JSON,
//! text column, detail screen, exporter metric) and reads it from
//! `LinkCounters`. Rates, the counter findings, `snapshot` text and JSON,
//! the exporter and the interface detail screen are built from `ALL`, so a
//! new counter is a field of `LinkCounters` plus one row here (a test fails
//! on a field without a row).

use super::LinkCounters;

/// What a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bytes,
    /// Every frame of a direction (or a class of them, multicast).
    Packets,
    /// Errors, drops, collisions: frames lost or spoiled.
    Trouble,
}

/// A column of `snapshot`'s sar-like text table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// sar's title ("rxerr/s"); byte counters show kB/s.
    pub title: &'static str,
    pub width: usize,
}

/// The OpenMetrics family of a counter (its samples end in `_total`).
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// node_exporter's name, without `_total`.
    pub name: &'static str,
    /// The OpenMetrics type.
    pub kind: &'static str,
    pub help: &'static str,
}

/// One interface counter and every name it goes by.
#[derive(Debug, Clone, Copy)]
pub struct LinkCounter {
    /// rtnl_link_stats64's field and `LinkCounters`' ("rx_over_errors"):
    /// `ip -s -s link`, the catalogue's `netdev.<kernel>`.
    pub kernel: &'static str,
    pub kind: Kind,
    /// `snapshot --json`'s key for the total; the rate is `<key>_per_s`.
    /// None: not in the JSON.
    pub json: Option<&'static str>,
    /// None: no column in `snapshot`'s text table.
    pub column: Option<Column>,
    /// The interface detail screen's row ("rx overruns"), also the word
    /// the iface-errors finding uses. None: not on the screen.
    pub detail: Option<&'static str>,
    /// None: not exported.
    pub metric: Option<Metric>,
    pub read: fn(&LinkCounters) -> u64,
}

impl LinkCounter {
    /// This counter's value in `counters`.
    pub fn of(&self, counters: &LinkCounters) -> u64 {
        (self.read)(counters)
    }

    /// The OpenMetrics unit of its metric.
    pub fn unit(&self) -> Option<&'static str> {
        (self.kind == Kind::Bytes).then_some("bytes")
    }
}

const fn column(title: &'static str, width: usize) -> Option<Column> {
    Some(Column { title, width })
}

const fn counter(name: &'static str, help: &'static str) -> Option<Metric> {
    Some(Metric {
        name,
        kind: "counter",
        help,
    })
}

pub const RX_PACKETS: LinkCounter = LinkCounter {
    kernel: "rx_packets",
    kind: Kind::Packets,
    json: Some("rx_packets"),
    column: column("rxpck/s", 9),
    detail: None,
    metric: counter("node_network_receive_packets", "Packets received"),
    read: |c| c.rx_packets,
};

pub const TX_PACKETS: LinkCounter = LinkCounter {
    kernel: "tx_packets",
    kind: Kind::Packets,
    json: Some("tx_packets"),
    column: column("txpck/s", 9),
    detail: None,
    metric: counter("node_network_transmit_packets", "Packets sent"),
    read: |c| c.tx_packets,
};

pub const RX_BYTES: LinkCounter = LinkCounter {
    kernel: "rx_bytes",
    kind: Kind::Bytes,
    json: Some("rx_bytes"),
    column: column("rxkB/s", 10),
    detail: None,
    metric: counter("node_network_receive_bytes", "Bytes received"),
    read: |c| c.rx_bytes,
};

pub const TX_BYTES: LinkCounter = LinkCounter {
    kernel: "tx_bytes",
    kind: Kind::Bytes,
    json: Some("tx_bytes"),
    column: column("txkB/s", 10),
    detail: None,
    metric: counter("node_network_transmit_bytes", "Bytes sent"),
    read: |c| c.tx_bytes,
};

pub const RX_ERRORS: LinkCounter = LinkCounter {
    kernel: "rx_errors",
    kind: Kind::Trouble,
    json: Some("rx_errors"),
    column: column("rxerr/s", 8),
    detail: Some("rx errors"),
    metric: counter("node_network_receive_errs", "Receive errors"),
    read: |c| c.rx_errors,
};

pub const TX_ERRORS: LinkCounter = LinkCounter {
    kernel: "tx_errors",
    kind: Kind::Trouble,
    json: Some("tx_errors"),
    column: column("txerr/s", 8),
    detail: Some("tx errors"),
    metric: counter("node_network_transmit_errs", "Transmit errors"),
    read: |c| c.tx_errors,
};

pub const RX_DROPPED: LinkCounter = LinkCounter {
    kernel: "rx_dropped",
    kind: Kind::Trouble,
    json: Some("rx_dropped"),
    column: column("rxdrop/s", 8),
    detail: Some("rx dropped"),
    metric: counter("node_network_receive_drop", "Received packets dropped"),
    read: |c| c.rx_dropped,
};

pub const TX_DROPPED: LinkCounter = LinkCounter {
    kernel: "tx_dropped",
    kind: Kind::Trouble,
    json: Some("tx_dropped"),
    column: column("txdrop/s", 8),
    detail: Some("tx dropped"),
    metric: counter("node_network_transmit_drop", "Packets dropped on transmit"),
    read: |c| c.tx_dropped,
};

pub const RX_OVER_ERRORS: LinkCounter = LinkCounter {
    kernel: "rx_over_errors",
    kind: Kind::Trouble,
    json: Some("rx_overruns"),
    column: column("rxovr/s", 8),
    detail: Some("rx overruns"),
    metric: None,
    read: |c| c.rx_over_errors,
};

pub const RX_CRC_ERRORS: LinkCounter = LinkCounter {
    kernel: "rx_crc_errors",
    kind: Kind::Trouble,
    json: None,
    column: None,
    detail: Some("rx crc"),
    metric: None,
    read: |c| c.rx_crc_errors,
};

pub const RX_FRAME_ERRORS: LinkCounter = LinkCounter {
    kernel: "rx_frame_errors",
    kind: Kind::Trouble,
    json: None,
    column: None,
    detail: Some("rx frame"),
    metric: counter("node_network_receive_frame", "Receive frame errors"),
    read: |c| c.rx_frame_errors,
};

pub const RX_FIFO_ERRORS: LinkCounter = LinkCounter {
    kernel: "rx_fifo_errors",
    kind: Kind::Trouble,
    json: None,
    column: None,
    detail: Some("rx fifo"),
    metric: counter("node_network_receive_fifo", "Receive FIFO errors"),
    read: |c| c.rx_fifo_errors,
};

pub const RX_MISSED_ERRORS: LinkCounter = LinkCounter {
    kernel: "rx_missed_errors",
    kind: Kind::Trouble,
    json: None,
    column: None,
    detail: Some("rx missed"),
    metric: None,
    read: |c| c.rx_missed_errors,
};

pub const TX_CARRIER_ERRORS: LinkCounter = LinkCounter {
    kernel: "tx_carrier_errors",
    kind: Kind::Trouble,
    json: Some("tx_carrier"),
    column: column("txcarr/s", 8),
    detail: Some("tx carrier"),
    metric: counter(
        "node_network_transmit_carrier",
        "Carrier errors on transmit",
    ),
    read: |c| c.tx_carrier_errors,
};

pub const TX_FIFO_ERRORS: LinkCounter = LinkCounter {
    kernel: "tx_fifo_errors",
    kind: Kind::Trouble,
    json: None,
    column: None,
    detail: Some("tx fifo"),
    metric: counter("node_network_transmit_fifo", "Transmit FIFO errors"),
    read: |c| c.tx_fifo_errors,
};

pub const COLLISIONS: LinkCounter = LinkCounter {
    kernel: "collisions",
    kind: Kind::Trouble,
    json: Some("collisions"),
    column: column("coll/s", 8),
    detail: Some("collisions"),
    metric: counter("node_network_transmit_colls", "Collisions on transmit"),
    read: |c| c.collisions,
};

pub const MULTICAST: LinkCounter = LinkCounter {
    kernel: "multicast",
    kind: Kind::Packets,
    json: None,
    column: None,
    detail: None,
    metric: counter(
        "node_network_receive_multicast",
        "Multicast packets received",
    ),
    read: |c| c.multicast,
};

/// Every row, in the order JSON rates, the text table and the detail
/// screen list them (the detail screen puts the receive side first).
pub const ALL: [LinkCounter; 17] = [
    RX_PACKETS,
    TX_PACKETS,
    RX_BYTES,
    TX_BYTES,
    RX_ERRORS,
    TX_ERRORS,
    RX_DROPPED,
    TX_DROPPED,
    RX_OVER_ERRORS,
    RX_CRC_ERRORS,
    RX_FRAME_ERRORS,
    RX_FIFO_ERRORS,
    RX_MISSED_ERRORS,
    TX_CARRIER_ERRORS,
    TX_FIFO_ERRORS,
    COLLISIONS,
    MULTICAST,
];

/// The row of a kernel name ("rx_missed_errors").
pub fn by_kernel(name: &str) -> Option<&'static LinkCounter> {
    ALL.iter().find(|c| c.kernel == name)
}

/// The rows the JSON and the text table show, split where they put
/// %util: after the volume counters (packets, bytes), before the trouble.
pub fn volume_then_trouble(
    shown: fn(&LinkCounter) -> bool,
) -> (Vec<&'static LinkCounter>, Vec<&'static LinkCounter>) {
    ALL.iter()
        .filter(|c| shown(c))
        .partition(|c| c.kind != Kind::Trouble)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

    /// `LinkCounters` with every field set to a value of its own (its
    /// position + 1), by name, through serde: no field list to forget.
    fn numbered() -> (LinkCounters, Map<String, Value>) {
        let Value::Object(fields) = serde_json::to_value(LinkCounters::default()).unwrap() else {
            panic!("LinkCounters is not a JSON object");
        };
        let numbered: Map<String, Value> = fields
            .keys()
            .enumerate()
            .map(|(i, name)| (name.clone(), Value::from(i as u64 + 1)))
            .collect();
        let counters = serde_json::from_value(Value::Object(numbered.clone())).unwrap();
        (counters, numbered)
    }

    #[test]
    fn every_field_of_link_counters_has_one_row_that_reads_it() {
        let (counters, fields) = numbered();
        for (name, value) in &fields {
            let rows: Vec<_> = ALL.iter().filter(|c| c.kernel == name).collect();
            assert_eq!(rows.len(), 1, "LinkCounters.{name}: rows {}", rows.len());
            assert_eq!(
                Some(rows[0].of(&counters)),
                value.as_u64(),
                "{name}: its row reads another field"
            );
        }
        assert_eq!(ALL.len(), fields.len(), "a row names no field");
    }

    #[test]
    fn names_are_unique_per_output() {
        let unique = |names: Vec<&str>| {
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{names:?}");
        };
        unique(ALL.iter().filter_map(|c| c.json).collect());
        unique(
            ALL.iter()
                .filter_map(|c| c.column.map(|c| c.title))
                .collect(),
        );
        unique(ALL.iter().filter_map(|c| c.detail).collect());
        unique(
            ALL.iter()
                .filter_map(|c| c.metric.map(|m| m.name))
                .collect(),
        );
    }

    #[test]
    fn by_kernel_finds_the_row() {
        assert_eq!(
            by_kernel("rx_over_errors").and_then(|c| c.json),
            Some("rx_overruns")
        );
        assert!(by_kernel("rx_overruns").is_none());
    }
}
