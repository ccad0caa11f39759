//! The Flows tab's state: the packet list (follow or frozen), the flow table
//! model (rows, aggregation, sort, text filter, selection), the capture
//! filter editor and `w`. Rendering lives in ui/flows.rs.

use super::keymap::{Action, Key};
use crate::capture::live::{Capture, CaptureEvent, CapturedPacket};
use crate::capture::pcap_file::{unpredictable_name, write_file};
use crate::model::Sample;
use crate::model::capture::{CaptureRates, CaptureSample, FlowSample, GroupSample};
use crate::packet::filter::Filter;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

/// Packets kept for the list and for `w` (each holds at most the snap
/// length: ~4 MB at the default 384 bytes).
pub const PACKETS_KEPT: usize = 10_000;
/// Lines `[` and `]` scroll the packet list by.
const SCROLL_STEP: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    Flow,
    Host,
    Port,
}

impl Grouping {
    pub fn label(self) -> &'static str {
        match self {
            Grouping::Flow => "flows",
            Grouping::Host => "by host",
            Grouping::Port => "by port",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Proto,
    Key,
    Flows,
    Packets,
    Bytes,
    PacketsPerS,
    BytesPerS,
    State,
    Rtt,
    Retransmits,
    FirstSeen,
    LastSeen,
    Process,
}

/// Sortable columns, in `s` order.
pub const SORTS: &[Column] = &[
    Column::Bytes,
    Column::BytesPerS,
    Column::Packets,
    Column::PacketsPerS,
    Column::Retransmits,
    Column::Rtt,
    Column::LastSeen,
    Column::FirstSeen,
    Column::Key,
];

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
}

pub struct FlowsView {
    pub capture: Option<Capture>,
    /// Why capture stopped, from the capture thread.
    pub failed: Option<String>,
    pub packets: VecDeque<CapturedPacket>,
    /// Packets received into the list since start (the newest's number).
    pub received: u64,
    /// Packets that matched but were not printed (over the per-batch cap).
    pub unprinted: u64,
    /// None: follow the newest packet; Some(n): the list ends at packet n.
    pub frozen_at: Option<u64>,
    pub grouping: Grouping,
    pub sort: Column,
    pub descending: bool,
    pub selected: usize,
    pub filter: String,
    pub editing_filter: bool,
    /// The capture filter being edited (`f`), and its parse error.
    pub capture_edit: Option<String>,
    pub capture_error: Option<(usize, String)>,
    /// The outcome of the last `w` or filter change, shown in the status.
    pub message: Option<String>,
}

impl Default for FlowsView {
    fn default() -> Self {
        Self {
            capture: None,
            failed: None,
            packets: VecDeque::new(),
            received: 0,
            unprinted: 0,
            frozen_at: None,
            grouping: Grouping::Flow,
            sort: Column::Bytes,
            descending: true,
            selected: 0,
            filter: String::new(),
            editing_filter: false,
            capture_edit: None,
            capture_error: None,
            message: None,
        }
    }
}

impl FlowsView {
    /// Takes a capture event; returns whether it changes what the tab shows.
    pub fn on_capture(&mut self, event: CaptureEvent) -> bool {
        match event {
            CaptureEvent::Packets { packets, unprinted } => {
                self.unprinted += unprinted;
                for packet in packets {
                    if self.packets.len() == PACKETS_KEPT {
                        self.packets.pop_front();
                    }
                    self.packets.push_back(packet);
                    self.received += 1;
                }
                self.frozen_at.is_none()
            }
            CaptureEvent::Failed(error) => {
                self.failed = Some(error);
                true
            }
        }
    }

    /// Forgets the packet list (replay rebuilds it after a seek).
    pub fn clear_packets(&mut self) {
        self.packets.clear();
        self.received = 0;
        self.unprinted = 0;
        self.frozen_at = None;
    }

    /// The packets the list shows, oldest first, at most `height`.
    pub fn visible_packets(&self, height: usize) -> impl Iterator<Item = &CapturedPacket> {
        let first_number = self.received - self.packets.len() as u64;
        let end = match self.frozen_at {
            Some(n) => (n.saturating_sub(first_number) as usize).min(self.packets.len()),
            None => self.packets.len(),
        };
        let start = end.saturating_sub(height);
        self.packets.range(start..end)
    }

    /// Freezes the packet list (it stays where it is) or follows again.
    pub fn toggle_follow(&mut self) {
        self.frozen_at = match self.frozen_at {
            Some(_) => None,
            None => Some(self.received),
        };
    }

    fn scroll(&mut self, up: bool) {
        let first_number = self.received - self.packets.len() as u64;
        let at = self.frozen_at.unwrap_or(self.received);
        let moved = if up {
            at.saturating_sub(SCROLL_STEP as u64).max(first_number)
        } else {
            (at + SCROLL_STEP as u64).min(self.received)
        };
        self.frozen_at = Some(moved);
    }

    /// The table rows for the shown sample, grouped, filtered and sorted.
    pub fn rows(&self, previous: Option<&Sample>, current: &Sample) -> Vec<Row> {
        let Some(capture) = current.capture.as_ref() else {
            return Vec::new();
        };
        let rates = CaptureRates::new(previous, current);
        let flows = capture.flows.iter().map(|f| {
            let (pps, bps) = rates.flow(f);
            flow_row(f, pps, bps)
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
            grouping => aggregate(flows, grouping),
        };
        if !self.filter.is_empty() {
            // "a|b" matches either (the cross-links use it); the key gets a
            // trailing space so "IP " also finds a portless address at its end.
            let filter = self.filter.to_lowercase();
            let needles: Vec<&str> = filter.split('|').filter(|n| !n.is_empty()).collect();
            rows.retain(|r| {
                let key = format!("{} ", r.key.to_lowercase());
                let state = r.state.to_lowercase();
                let process = r.process.to_lowercase();
                needles.iter().any(|n| {
                    key.contains(n)
                        || process.contains(n)
                        || r.proto.contains(n)
                        || state.contains(n)
                })
            });
        }
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

    /// Keys in the Flows tab; returns whether the screen changes.
    pub fn handle(&mut self, action: Action, rows: usize) -> bool {
        let last = rows.saturating_sub(1);
        self.message = None;
        match action {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::PageUp => self.selected = self.selected.saturating_sub(10),
            Action::PageDown => self.selected = (self.selected + 10).min(last),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = last,
            Action::SortNext | Action::SortPrev => {
                let at = SORTS.iter().position(|c| *c == self.sort).unwrap_or(0);
                let next = if action == Action::SortNext {
                    (at + 1) % SORTS.len()
                } else {
                    (at + SORTS.len() - 1) % SORTS.len()
                };
                self.sort = SORTS[next];
                self.descending = self.sort != Column::Key;
            }
            Action::SortInvert => self.descending = !self.descending,
            Action::Filter => self.editing_filter = true,
            Action::Close => {
                if self.filter.is_empty() {
                    return false;
                }
                self.filter.clear();
            }
            Action::CaptureFilter => {
                let current = self
                    .capture
                    .as_ref()
                    .map(|c| c.summary().filter)
                    .unwrap_or_default();
                self.capture_edit = Some(current);
                self.capture_error = None;
            }
            Action::WritePcap => self.message = Some(self.write_pcap(None)),
            Action::Follow => self.toggle_follow(),
            Action::ScrollPacketsUp => self.scroll(true),
            Action::ScrollPacketsDown => self.scroll(false),
            Action::Aggregate => {
                self.grouping = match self.grouping {
                    Grouping::Flow => Grouping::Host,
                    Grouping::Host => Grouping::Port,
                    Grouping::Port => Grouping::Flow,
                };
                self.selected = 0;
            }
            _ => return false,
        }
        true
    }

    /// Keys while the capture filter is being edited.
    pub fn edit_capture_filter(&mut self, key: Key) -> bool {
        let Some(text) = self.capture_edit.as_mut() else {
            return false;
        };
        match key {
            key if super::line_edit::edit(text, key) => {}
            Key::Esc => {
                self.capture_edit = None;
                self.capture_error = None;
            }
            Key::Enter => {
                let text = text.trim().to_string();
                let filter = if text.is_empty() {
                    None
                } else {
                    match Filter::parse(&text) {
                        Ok(f) => Some(f),
                        Err(e) => {
                            self.capture_error = Some((e.position, e.message));
                            return true;
                        }
                    }
                };
                if let Some(capture) = &self.capture {
                    capture.set_filter(filter);
                }
                self.message = Some(if text.is_empty() {
                    "capture filter cleared".into()
                } else {
                    format!("capture filter: {text}")
                });
                self.capture_edit = None;
                self.capture_error = None;
            }
            _ => return false,
        }
        true
    }

    /// Writes the kept packets to `path` (default: a new, unpredictable
    /// netlens-<time>-<random>.pcap in the current directory); returns what
    /// to tell the user, with the full path.
    pub fn write_pcap(&self, path: Option<PathBuf>) -> String {
        let Some(capture) = self.capture.as_ref().filter(|c| c.linktype() != 0) else {
            return "nothing to write: capture is off".into();
        };
        if self.packets.is_empty() {
            return "nothing to write yet: no packets in the list".into();
        }
        let path = path.unwrap_or_else(|| {
            let t = self.packets.back().map_or(0, |p| p.ts.sec);
            unpredictable_name("netlens", t)
        });
        let written = write_file(
            &path,
            capture.linktype(),
            capture.snaplen(),
            self.packets.iter().map(|p| (p.ts, p.orig_len, &p.data[..])),
        );
        match written {
            Ok(count) => format!("wrote {count} packets to {}", shown_path(&path)),
            Err(e) => format!("cannot write the pcap: {e:#}"),
        }
    }
}

/// The full path of a file netlens just created, for the status line.
pub fn shown_path(path: &std::path::Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

fn flow_row(f: &FlowSample, pps: Option<f64>, bps: Option<f64>) -> Row {
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

fn compare(a: &Row, b: &Row, column: Column) -> std::cmp::Ordering {
    let opt = |x: Option<f64>, y: Option<f64>| {
        x.unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&y.unwrap_or(f64::NEG_INFINITY))
    };
    match column {
        Column::Packets => a.packets.cmp(&b.packets),
        Column::PacketsPerS => opt(a.packets_per_s, b.packets_per_s),
        Column::BytesPerS => opt(a.bytes_per_s, b.bytes_per_s),
        Column::Retransmits => a.retransmits.cmp(&b.retransmits),
        Column::Rtt => opt(a.rtt_ms, b.rtt_ms),
        Column::LastSeen => a.last_seen.total_cmp(&b.last_seen),
        Column::FirstSeen => a.first_seen.total_cmp(&b.first_seen),
        Column::Key | Column::Proto | Column::State => a.key.cmp(&b.key),
        Column::Process => a.process.cmp(&b.process),
        Column::Flows => a.flows.cmp(&b.flows),
        Column::Bytes => a.bytes.cmp(&b.bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::capture::CaptureSample;
    use crate::packet::format::Timestamp;

    fn flow(src: &str, dst: &str, packets: u64, bytes: u64) -> FlowSample {
        FlowSample {
            proto: "tcp".into(),
            src: src.into(),
            dst: dst.into(),
            packets,
            bytes,
            state: "ESTABLISHED".into(),
            first_seen: 100.0,
            last_seen: 101.0,
            ..Default::default()
        }
    }

    fn sample(mono: f64, flows: Vec<FlowSample>) -> Sample {
        Sample {
            t: 99.0 + mono,
            mono,
            netns: "host".into(),
            capture: Some(CaptureSample {
                active: true,
                flows,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn rows_sort_filter_and_aggregate() {
        let a = sample(
            1.0,
            vec![
                flow("198.18.0.1:1000", "198.18.0.2:80", 10, 1000),
                flow("198.18.0.1:1001", "198.18.0.2:443", 5, 500),
            ],
        );
        let b = sample(
            2.0,
            vec![
                flow("198.18.0.1:1000", "198.18.0.2:80", 20, 3000),
                flow("198.18.0.1:1001", "198.18.0.2:443", 6, 600),
                FlowSample {
                    first_seen: 50.0,
                    ..flow("[2001:db8::1]:5", "[2001:db8::2]:80", 4, 4000)
                },
            ],
        );
        let mut view = FlowsView::default();
        let rows = view.rows(Some(&a), &b);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].key, "[2001:db8::1]:5 > [2001:db8::2]:80");
        assert_eq!(rows[1].bytes_per_s, Some(2000.0));
        // The v6 flow began before the previous sample and was not in it.
        assert_eq!(rows[0].bytes_per_s, None);
        view.handle(Action::SortNext, 3); // bytes/s
        assert_eq!(
            view.rows(Some(&a), &b)[0].key,
            "198.18.0.1:1000 > 198.18.0.2:80"
        );
        view.filter = "443".into();
        assert_eq!(view.rows(Some(&a), &b).len(), 1);
        view.filter.clear();
        view.handle(Action::Aggregate, 3);
        let hosts = view.rows(Some(&a), &b);
        assert_eq!(hosts.len(), 2);
        let v4 = hosts.iter().find(|r| r.key == "198.18.0.1").unwrap();
        assert_eq!((v4.flows, v4.packets, v4.bytes), (2, 26, 3600));
        view.handle(Action::Aggregate, 2);
        let ports = view.rows(Some(&a), &b);
        let http = ports.iter().find(|r| r.key == "tcp/80").unwrap();
        assert_eq!(http.flows, 2);
        assert_eq!(http.bytes_per_s, None);
    }

    fn packet(n: u64) -> CapturedPacket {
        CapturedPacket {
            line: format!("packet {n}"),
            ts: Timestamp::default(),
            orig_len: 60,
            data: vec![0; 60].into(),
        }
    }

    #[test]
    fn packet_list_follows_freezes_and_stays_bounded() {
        let mut view = FlowsView::default();
        let send = |view: &mut FlowsView, from: u64, n: u64| {
            view.on_capture(CaptureEvent::Packets {
                packets: (from..from + n).map(packet).collect(),
                unprinted: 0,
            })
        };
        assert!(send(&mut view, 0, 10));
        let lines: Vec<_> = view.visible_packets(3).map(|p| p.line.clone()).collect();
        assert_eq!(lines, ["packet 7", "packet 8", "packet 9"]);
        view.handle(Action::Follow, 0);
        assert!(!send(&mut view, 10, 5), "a frozen list needs no redraw");
        let lines: Vec<_> = view.visible_packets(2).map(|p| p.line.clone()).collect();
        assert_eq!(lines, ["packet 8", "packet 9"]);
        view.handle(Action::ScrollPacketsUp, 0);
        assert_eq!(view.visible_packets(1).next().unwrap().line, "packet 4");
        view.handle(Action::Follow, 0);
        assert_eq!(view.visible_packets(1).next().unwrap().line, "packet 14");
        send(&mut view, 15, PACKETS_KEPT as u64);
        assert_eq!(view.packets.len(), PACKETS_KEPT);
    }

    #[test]
    fn capture_filter_errors_keep_the_editor_open_with_the_position() {
        let mut view = FlowsView::default();
        view.handle(Action::CaptureFilter, 0);
        for c in "tcp and (port 80".chars() {
            view.edit_capture_filter(Key::Char(c));
        }
        view.edit_capture_filter(Key::Enter);
        assert!(view.capture_edit.is_some());
        let (position, message) = view.capture_error.clone().unwrap();
        assert!(position > 0 && !message.is_empty(), "{position} {message}");
        view.edit_capture_filter(Key::Esc);
        assert!(view.capture_edit.is_none());
        assert_eq!(view.write_pcap(None), "nothing to write: capture is off");
    }
}
