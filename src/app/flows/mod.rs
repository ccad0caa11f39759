//! The Flows tab's state: the packet list (follow or frozen), the flow table
//! model (rows, aggregation, sort, text filter, selection), the capture
//! filter editor and `w`. Rendering lives in ui/flows.rs; the table's rows
//! are made in rows.rs.

pub mod columns;
mod rows;
pub use rows::Row;

use super::keymap::{Action, Key, Scope};
use super::links;
use super::view::{self, Reply, Shown, TabView, TableRows};
use crate::capture::attribution::PacketOwners;
use crate::capture::live::{Capture, CaptureEvent, CapturedPacket};
use crate::capture::pcap_file::{FileFormat, FileLayout, unpredictable_name, write_file};
use crate::model::conntrack::{ConntrackEntry, NatIndex};
use crate::model::filter::Expr;
use crate::model::filter::rows::InSample;
use crate::packet::filter::Filter;
use std::collections::VecDeque;
use std::path::PathBuf;

/// Packets kept for the list and for `w` (each holds at most the snap
/// length: ~4 MB at the default 384 bytes).
pub const PACKETS_KEPT: usize = crate::capture::live::LINES_KEPT;
/// Samples whose sockets name the packets `w` and `e` write: the kept
/// packets' connections may have closed since (a minute at the default
/// interval; older samples drop their socket lists anyway).
pub const OWNER_SAMPLES: usize = 60;
/// Lines `[` and `]` scroll the packet list by.
const SCROLL_STEP: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    Flow,
    Host,
    Port,
    /// Servers by response time (`ui::servers`), not flow rows.
    Server,
}

impl Grouping {
    pub fn label(self) -> &'static str {
        match self {
            Grouping::Flow => "flows",
            Grouping::Host => "by host",
            Grouping::Port => "by port",
            Grouping::Server => "servers",
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
    /// The server name the client sent (SNI, HTTP Host).
    Name,
    /// The other side of the flow's NAT, from conntrack.
    Nat,
    /// The flow's namespace (or container): only while a sample holds
    /// more than one (--all-netns), as in Sockets and Interfaces.
    Netns,
}

/// Sortable columns, in `s` order (NS only while the table shows it, as
/// in Sockets: `FlowsView::netns_shown`).
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
    Column::Netns,
];

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
    /// The namespace scope (Enter in Namespaces), before the filter: the
    /// capture is of the primary namespace's interfaces, so another
    /// namespace's scope keeps the flows joined with its sockets (seen on
    /// its host-side veth); traffic inside it is not seen (the tab says so).
    pub scope: Option<super::view::NsScope>,
    /// The reverse names known while names are on (N), for `host:NAME`
    /// (`App::share_names` sets them with each sample and on N).
    pub names: Option<std::sync::Arc<crate::model::filter::KnownNames>>,
    /// Whether the last draw showed the NS column: only then is it in the
    /// sort cycle (sorting by a column not shown leaves no visible reason
    /// for the order).
    pub netns_shown: bool,
    /// The rows as F3 or a click last built them (the table builds its
    /// own each draw).
    pub refreshed: Vec<Row>,
    /// The NAT index of the conntrack dump last shown, with the dump's
    /// monotonic time: built once per dump, not per frame (a NAT host's
    /// table holds hundreds of thousands of entries).
    nat: std::sync::Mutex<Option<(f64, std::sync::Arc<NatIndex>)>>,
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
            scope: None,
            names: None,
            netns_shown: false,
            refreshed: Vec::new(),
            nat: std::sync::Mutex::default(),
        }
    }
}

impl FlowsView {
    /// The NAT index of the dump taken at `mono` (`Shown::recent_conntrack`),
    /// from the cache when it is that dump's.
    pub fn nat_index(&self, mono: f64, entries: &[ConntrackEntry]) -> std::sync::Arc<NatIndex> {
        let mut cache = self
            .nat
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*cache {
            Some((at, index)) if *at == mono => std::sync::Arc::clone(index),
            _ => {
                let index = std::sync::Arc::new(NatIndex::of(entries));
                *cache = Some((mono, std::sync::Arc::clone(&index)));
                index
            }
        }
    }

    /// Takes a capture event: new packet lines, or why capture stopped (a
    /// flow screen's packets are the App's).
    pub fn on_capture(&mut self, event: CaptureEvent) {
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
            }
            CaptureEvent::Watched => {}
            CaptureEvent::Failed(error) => self.failed = Some(error),
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
                let cycle: Vec<Column> = SORTS
                    .iter()
                    .copied()
                    .filter(|&c| c != Column::Netns || self.netns_shown)
                    .collect();
                let at = cycle.iter().position(|c| *c == self.sort).unwrap_or(0);
                let next = if action == Action::SortNext {
                    (at + 1) % cycle.len()
                } else {
                    (at + cycle.len() - 1) % cycle.len()
                };
                self.sort = cycle[next];
                // Names ascending, numbers largest first (as Sockets).
                self.descending = !matches!(self.sort, Column::Key | Column::Netns);
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
            Action::WritePcap => self.message = Some(self.write_pcap(None, None)),
            Action::Follow => self.toggle_follow(),
            Action::ScrollPacketsUp => self.scroll(true),
            Action::ScrollPacketsDown => self.scroll(false),
            Action::Aggregate => {
                self.grouping = match self.grouping {
                    Grouping::Flow => Grouping::Host,
                    Grouping::Host => Grouping::Port,
                    Grouping::Port => Grouping::Server,
                    Grouping::Server => Grouping::Flow,
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
    /// netlens-<time>-<random>.pcapng in the current directory, each packet
    /// noted with its interface and owner from `owners`); returns what to
    /// tell the user, with the full path.
    pub fn write_pcap(&self, path: Option<PathBuf>, owners: Option<&PacketOwners>) -> String {
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
        let none = PacketOwners::default();
        let owners = owners.unwrap_or(&none);
        let layout = FileLayout {
            format: FileFormat::of_path(&path),
            linktype: capture.linktype(),
            snaplen: capture.snaplen(),
            interface: owners.interface(capture.iface()),
        };
        let linktype = capture.linktype();
        let written = write_file(
            &path,
            layout,
            self.packets.iter().map(|p| {
                let note = owners.note(linktype, &p.data, p.orig_len, p.ifindex);
                (p.ts, p.orig_len, &p.data[..], note)
            }),
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

impl FlowsView {
    /// `x`: from the selected flow to its process's sockets.
    fn link(&mut self, shown: &Shown) -> Reply {
        let Some(current) = shown.current() else {
            return Reply::Redraw(false);
        };
        if self.grouping != Grouping::Flow {
            self.message = Some("x needs one row per flow (press a)".into());
            return Reply::Redraw(true);
        }
        let rows = self.rows_of(shown);
        let Some(row) = rows.get(self.selected) else {
            return Reply::Redraw(false);
        };
        let Some((src, dst)) = row.key.split_once(" > ") else {
            return Reply::Redraw(false);
        };
        let (Ok(src), Ok(dst)) = (src.parse(), dst.parse()) else {
            return Reply::Redraw(false);
        };
        Reply::Link(links::sockets_of_flow(current, &row.proto, src, dst))
    }
}

impl FlowsView {
    /// `t`: the Path view to the selected flow's destination (the side its
    /// first packet went to).
    fn trace(&mut self, shown: &Shown) -> Reply {
        if self.grouping != Grouping::Flow {
            return Reply::Redraw(false);
        }
        let rows = self.rows_of(shown);
        let dest = rows
            .get(self.selected)
            .and_then(|row| row.key.split_once(" > "))
            .and_then(|(_, dst)| dst.parse::<std::net::SocketAddr>().ok());
        dest.map_or(Reply::Redraw(false), Reply::Trace)
    }
}

impl TabView for FlowsView {
    fn scope(&self) -> Scope {
        Scope::Flows
    }

    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        if action == Action::Link {
            return self.link(shown);
        }
        if action == Action::Trace {
            return self.trace(shown);
        }
        if action == Action::WritePcap {
            let owners = PacketOwners::from_samples(shown.recent(OWNER_SAMPLES));
            self.message = Some(self.write_pcap(None, Some(&owners)));
            return Reply::Redraw(true);
        }
        let rows = self.rows_of(shown);
        if action == Action::Open && self.grouping == Grouping::Flow {
            // Enter on a flow opens its screen.
            let flow = rows.get(self.selected).and_then(|row| {
                let capture = shown.current()?.capture.as_ref()?;
                capture
                    .flows
                    .iter()
                    .find(|f| f.proto == row.proto && format!("{} > {}", f.src, f.dst) == row.key)
                    .map(|f| crate::model::capture::FlowSample::clone(f))
            });
            return flow.map_or(Reply::Redraw(false), Reply::OpenFlow);
        }
        Reply::Redraw(self.handle(action, rows.len()))
    }

    fn prompt_key(&mut self, key: Key) -> Option<bool> {
        if self.capture_edit.is_some() {
            return Some(self.edit_capture_filter(key));
        }
        view::filter_key(&mut self.filter, &mut self.editing_filter, key)
    }

    fn row_filter(&self) -> Option<(&str, bool)> {
        Some((&self.filter, self.editing_filter))
    }

    fn row_filter_mut(&mut self) -> Option<(&mut String, &mut bool)> {
        Some((&mut self.filter, &mut self.editing_filter))
    }

    fn table(&mut self) -> Option<&mut dyn TableRows> {
        Some(self)
    }
}

impl TableRows for FlowsView {
    fn refresh_rows(&mut self, shown: &Shown) -> Option<(usize, Option<usize>)> {
        self.refreshed = self.rows_of(shown);
        Some((self.refreshed.len(), Some(self.selected)))
    }

    fn row_matches(&self, index: usize, search: &Expr, shown: &Shown) -> bool {
        let (Some(row), Some(current)) = (self.refreshed.get(index), shown.current()) else {
            return false;
        };
        search.matches(&InSample::new(row, current))
    }

    fn select_at(&mut self, index: usize, _shown: &Shown) {
        self.selected = index;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sample;
    use crate::model::capture::CaptureSample;
    use crate::model::capture::FlowSample;
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
                flows: flows.into_iter().map(Into::into).collect(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn f3_and_a_click_select_flow_rows() {
        let mut history = crate::app::history::History::default();
        history.push(sample(
            1.0,
            vec![
                flow("198.18.0.1:1000", "198.18.0.2:80", 10, 3000),
                flow("198.18.0.1:1001", "198.18.0.2:443", 5, 2000),
                flow("198.18.0.1:1002", "198.18.0.2:80", 5, 1000),
            ],
        ));
        let shown = Shown {
            history: &history,
            index: Some(0),
        };
        let mut view = FlowsView::default();
        // By bytes, largest first: port 80, 443, then 80 again.
        assert_eq!(view.find("port:80", 1, &shown), Some(true));
        assert_eq!(view.selected, 2);
        assert_eq!(view.find("port:80", 1, &shown), Some(true));
        assert_eq!(view.selected, 0);
        assert_eq!(view.find("port:22", 0, &shown), Some(false));
        assert!(view.click_row(1, &shown));
        assert_eq!(view.selected, 1);
        assert!(!view.click_row(3, &shown));
        assert_eq!(view.selected, 1);
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

    /// `s` reaches NS only while the table shows it (under --all-netns),
    /// after FLOW, ascending; the rows then go by namespace.
    #[test]
    fn the_sort_cycle_takes_ns_while_it_is_shown() {
        let cycle = |view: &mut FlowsView| -> Vec<Column> {
            view.sort = Column::Bytes;
            (0..SORTS.len())
                .map(|_| {
                    view.handle(Action::SortNext, 0);
                    view.sort
                })
                .collect()
        };
        let mut view = FlowsView::default();
        assert!(!cycle(&mut view).contains(&Column::Netns));
        view.netns_shown = true;
        let order = cycle(&mut view);
        assert_eq!(order[SORTS.len() - 2..], [Column::Netns, Column::Bytes]);
        view.sort = Column::Key;
        view.handle(Action::SortNext, 0);
        assert_eq!((view.sort, view.descending), (Column::Netns, false));
        view.handle(Action::SortPrev, 0);
        assert_eq!(view.sort, Column::Key);
        // Sorted by NS: namespace 1's flows before 2's, whatever their bytes.
        let in_ns = |netns: u16, src: &str, bytes: u64| FlowSample {
            netns,
            ..flow(src, "198.18.0.2:80", 1, bytes)
        };
        let current = sample(
            1.0,
            vec![
                in_ns(2, "198.18.0.1:1", 900),
                in_ns(1, "198.18.0.1:2", 10),
                in_ns(2, "198.18.0.1:3", 5),
                in_ns(1, "198.18.0.1:4", 70),
            ],
        );
        view.handle(Action::SortNext, 0);
        assert_eq!(view.sort, Column::Netns);
        let order: Vec<u16> = view.rows(None, &current).iter().map(|r| r.netns).collect();
        assert_eq!(order, [1, 1, 2, 2]);
        view.handle(Action::SortInvert, 0);
        let order: Vec<u16> = view.rows(None, &current).iter().map(|r| r.netns).collect();
        assert_eq!(order, [2, 2, 1, 1]);
    }

    fn packet(n: u64) -> CapturedPacket {
        CapturedPacket {
            line: format!("packet {n}"),
            ts: Timestamp::default(),
            orig_len: 60,
            data: vec![0; 60].into(),
            ifindex: 0,
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
        send(&mut view, 0, 10);
        let lines: Vec<_> = view.visible_packets(3).map(|p| p.line.clone()).collect();
        assert_eq!(lines, ["packet 7", "packet 8", "packet 9"]);
        view.handle(Action::Follow, 0);
        send(&mut view, 10, 5);
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
        assert_eq!(
            view.write_pcap(None, None),
            "nothing to write: capture is off"
        );
    }
}
