//! The flow table's columns, one row each with its sort comparison and
//! its cell: the flows' table and the grouped one (ui/flows.rs draws them).

use super::{Column, Row};
use crate::app::format::{self, count_short, fit_endpoints};
use crate::app::names::Names;
use crate::app::table::spec;
use crate::app::table::{self, Align, CellText, Hint, by_number};
use crate::model::Sample;
use std::cmp::Ordering;

/// What a cell is drawn with besides its row.
pub struct FlowCell<'a> {
    /// The shown sample, for the namespace's name.
    pub sample: Option<&'a Sample>,
    pub names: &'a Names,
    /// The sample's time, for FIRST and LAST.
    pub now: f64,
    /// The capture dropped packets: counts are lower bounds ("≥").
    pub short: bool,
}

/// A column's sort comparison, and its cell text in `width` characters
/// (numbers are formatted to fit whole; ui/ cuts any other text with '…').
type Sort = fn(&Row, &Row) -> Ordering;
type Text = fn(&Row, &FlowCell<'_>, usize) -> CellText;
pub type ColumnSpec = table::ColumnSpec<Column, Sort, Text>;

use Align::{Left, Right};

const NETNS: ColumnSpec = spec(
    (Column::Netns, "NS", 12, 2),
    Left,
    |a, b| a.netns.cmp(&b.netns),
    |r, c, width| match c.sample {
        Some(sample) => format::netns_cell(sample, r.netns, width as u16).into(),
        None => String::new().into(),
    },
);
const PROTO: ColumnSpec = spec((Column::Proto, "PROTO", 5, 2), Left, by_key, |r, _, _| {
    r.proto.clone().into()
});
const NAME: ColumnSpec = spec(
    (Column::Name, "NAME", 16, 1),
    Left,
    |a, b| a.name.cmp(&b.name),
    |r, _, _| dash(&r.name),
);
const NAT: ColumnSpec = spec(
    (Column::Nat, "NAT", 22, 1),
    Left,
    |a, b| a.nat.cmp(&b.nat),
    |r, _, _| dash(&r.nat),
);
const PACKETS: ColumnSpec = spec(
    (Column::Packets, "PKTS", 7, 1),
    Right,
    |a, b| a.packets.cmp(&b.packets),
    |r, c, width| counted(r.packets, c.short, width),
);
// "≥2.67MiB": the mark takes the space's place, to fit 8 columns.
const BYTES: ColumnSpec = spec(
    (Column::Bytes, "BYTES", 8, 1),
    Right,
    |a, b| a.bytes.cmp(&b.bytes),
    |r, c, _| bytes(r.bytes as f64, c.short),
);
const BYTES_PER_S: ColumnSpec = spec(
    (Column::BytesPerS, "B/s", 8, 2),
    Right,
    |a, b| by_number(a.bytes_per_s, b.bytes_per_s),
    |r, c, _| r.bytes_per_s.map_or("-".into(), |b| bytes(b, c.short)),
);
const fn packets_per_s(priority: u8) -> ColumnSpec {
    spec(
        (Column::PacketsPerS, "PKT/s", 7, priority),
        Right,
        |a, b| by_number(a.packets_per_s, b.packets_per_s),
        |r, c, width| {
            let per_s = r.packets_per_s.map(|p| p.round() as u64);
            per_s.map_or("-".into(), |p| counted(p, c.short, width))
        },
    )
}
const RTT: ColumnSpec = spec(
    (Column::Rtt, "RTT ms", 7, 3),
    Right,
    |a, b| by_number(a.rtt_ms, b.rtt_ms),
    |r, _, _| r.rtt_ms.map_or("-".into(), |r| format!("{r:.2}")).into(),
);
const RETRANSMITS: ColumnSpec = spec(
    (Column::Retransmits, "RETX", 5, 3),
    Right,
    |a, b| a.retransmits.cmp(&b.retransmits),
    |r, _, width| {
        let hint = if r.retransmits > 0 {
            Hint::Warn
        } else {
            Hint::Plain
        };
        CellText::styled(count_short(r.retransmits, width), hint)
    },
);
const LAST: ColumnSpec = spec(
    (Column::LastSeen, "LAST", 6, 4),
    Right,
    |a, b| a.last_seen.total_cmp(&b.last_seen),
    |r, c, _| ago(c.now, r.last_seen).into(),
);

pub const FLOW_COLUMNS: &[ColumnSpec] = &[
    // Shown only while the sample holds more than one namespace (see
    // ui/flows.rs `fitting`); after the key, the rates and the protocol: at
    // 80 columns it takes B/s's place when the widest key needs its 40
    // characters.
    NETNS,
    PROTO,
    spec((Column::Key, "FLOW", 30, 0), Left, by_key, |r, c, width| {
        fit_endpoints(&c.names.any_key(&r.proto, &r.key), width).into()
    }),
    // Shown only while a row has a name, and then before the rates: it is
    // what tells one connection to a CDN from another.
    NAME,
    // Shown only while a row was translated: where it really went.
    NAT,
    PACKETS,
    BYTES,
    BYTES_PER_S,
    packets_per_s(3),
    spec((Column::State, "STATE", 11, 2), Left, by_key, |r, _, _| {
        r.state.clone().into()
    }),
    RTT,
    RETRANSMITS,
    spec(
        (Column::Process, "PROCESS", 14, 3),
        Left,
        |a, b| a.process.cmp(&b.process),
        |r, _, _| dash(&r.process),
    ),
    spec(
        (Column::FirstSeen, "FIRST", 6, 4),
        Right,
        |a, b| a.first_seen.total_cmp(&b.first_seen),
        |r, c, _| ago(c.now, r.first_seen).into(),
    ),
    LAST,
];

pub const GROUP_COLUMNS: &[ColumnSpec] = &[
    spec((Column::Key, "KEY", 24, 0), Left, by_key, |r, c, width| {
        fit_endpoints(&c.names.any_key(&r.proto, &r.key), width).into()
    }),
    spec(
        (Column::Flows, "FLOWS", 6, 1),
        Right,
        |a, b| a.flows.cmp(&b.flows),
        |r, _, width| count_short(r.flows, width).into(),
    ),
    PACKETS,
    BYTES,
    BYTES_PER_S,
    packets_per_s(2),
    RETRANSMITS,
    RTT,
    LAST,
];

/// Key, protocol and state sort by the key.
fn by_key(a: &Row, b: &Row) -> Ordering {
    a.key.cmp(&b.key)
}

/// Two rows by `column` (its descriptor's sort).
pub fn compare(a: &Row, b: &Row, column: Column) -> Ordering {
    let spec = FLOW_COLUMNS
        .iter()
        .chain(GROUP_COLUMNS)
        .find(|s| s.column == column);
    spec.map_or(Ordering::Equal, |spec| (spec.sort)(a, b))
}

fn dash(text: &str) -> CellText {
    if text.is_empty() { "-" } else { text }.into()
}

/// A count in `width`, "≥" before it when the capture counted short.
fn counted(n: u64, short: bool, width: usize) -> CellText {
    match short {
        true => format!("≥{}", count_short(n, width.saturating_sub(1))).into(),
        false => count_short(n, width).into(),
    }
}

/// Bytes in 8 characters; "≥" takes the space's place when short.
fn bytes(count: f64, short: bool) -> CellText {
    let text = format::bytes_short(count);
    match short {
        true => format!("≥{text}").replacen(' ', "", 1).into(),
        false => text.into(),
    }
}

/// How long ago `t` was: "5s", "3m", "2h".
fn ago(now: f64, t: f64) -> String {
    let s = (now - t).max(0.0);
    if s < 60.0 {
        format!("{s:.0}s")
    } else if s < 3600.0 {
        format!("{:.0}m", s / 60.0)
    } else {
        format!("{:.0}h", s / 3600.0)
    }
}
