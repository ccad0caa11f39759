//! The Conntrack tab's state and entry table model: columns, sorting,
//! filtering, selection. Rendering lives in ui/conntrack.rs.

use super::conntrack_order::{Orders, Rows};
use super::format;
use super::keymap::{Action, Key};
use super::table::spec;
use super::table::{self, Align, CellText, Hint, Window};
use super::view::{self, Reply, Shown, TabView, TableRows};
use crate::model::conntrack::{ConntrackEntry, Tuple};
use crate::model::conntrack_rates::Summary;
use crate::model::filter::Expr;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Proto,
    State,
    /// The connection with NAT decoded; sorts by the original source.
    Flow,
    Timeout,
    Packets,
    Bytes,
    Mark,
    Zone,
}

/// A column's sort comparison and cell text.
type Sort = fn(&ConntrackEntry, &ConntrackEntry) -> Ordering;
type Text = fn(&ConntrackEntry) -> CellText;
pub type ColumnSpec = table::ColumnSpec<Column, Sort, Text>;

use Align::{Left, Right};

pub const COLUMNS: &[ColumnSpec] = &[
    spec(
        (Column::Proto, "PROTO", 5, 1),
        Left,
        |a, b| a.proto.cmp(&b.proto),
        |e| e.proto_name().into(),
    ),
    spec(
        (Column::State, "STATE", 11, 1),
        Left,
        |a, b| a.state_name().cmp(b.state_name()),
        |e| e.state_name().into(),
    ),
    // What a DNATed IPv4 connection needs (width 50); columns of lower
    // priority give way to it.
    spec(
        (Column::Flow, "ORIG SRC → DST ⇒ NAT", 50, 0),
        Left,
        |a, b| {
            let orig = |e: &ConntrackEntry| (e.orig.src, e.orig.sport, e.orig.dst, e.orig.dport);
            orig(a).cmp(&orig(b))
        },
        |e| {
            let nat = e.nat_dst().is_some() || e.nat_src().is_some();
            CellText::styled(e.flow_text(), if nat { Hint::Rx } else { Hint::Plain })
        },
    ),
    spec(
        (Column::Timeout, "TIMEOUT", 8, 2),
        Right,
        |a, b| a.timeout.cmp(&b.timeout),
        |e| format!("{}s", e.timeout).into(),
    ),
    spec(
        (Column::Packets, "PKTS", 7, 3),
        Right,
        |a, b| total(a.packets).cmp(&total(b.packets)),
        |e| {
            total(e.packets)
                .map_or("–".into(), |p| p.to_string())
                .into()
        },
    ),
    spec(
        (Column::Bytes, "BYTES", 9, 3),
        Right,
        |a, b| total(a.bytes).cmp(&total(b.bytes)),
        |e| {
            total(e.bytes)
                .map_or("–".into(), |b| format::bytes(b as f64))
                .into()
        },
    ),
    spec(
        (Column::Mark, "MARK", 8, 4),
        Right,
        |a, b| a.mark.cmp(&b.mark),
        |e| format!("{:#x}", e.mark).into(),
    ),
    spec(
        (Column::Zone, "ZONE", 5, 4),
        Right,
        |a, b| a.zone.cmp(&b.zone),
        |e| e.zone.to_string().into(),
    ),
];

/// The column's descriptor.
pub fn spec_of(column: Column) -> Option<&'static ColumnSpec> {
    COLUMNS.iter().find(|spec| spec.column == column)
}

/// Packets or bytes of both directions, when counted.
pub fn total(pair: Option<(u64, u64)>) -> Option<u64> {
    pair.map(|(o, r)| o.saturating_add(r))
}

/// Two entries by `column` (its descriptor's sort).
pub(super) fn compare(a: &ConntrackEntry, b: &ConntrackEntry, column: Column) -> Ordering {
    spec_of(column).map_or(Ordering::Equal, |spec| (spec.sort)(a, b))
}

/// Identifies an entry across dumps: protocol and original tuple.
pub type EntryKey = (u8, Tuple);

pub fn key(entry: &ConntrackEntry) -> EntryKey {
    (entry.proto, entry.orig)
}

#[derive(Debug)]
pub struct ConntrackView {
    pub sort: Column,
    pub descending: bool,
    /// Selected entry, by key so it survives re-sorting and new dumps.
    pub selected: Option<EntryKey>,
    /// Where the selection was, for when that entry disappears.
    pub selected_position: usize,
    pub window: Window,
    pub filter: String,
    pub editing_filter: bool,
    /// The summary (top-N, counts) of the entry list dumped at this
    /// monotonic time: ~10 ms to build at 17k entries, so it is built once
    /// per dump, not once per frame.
    pub summary: Option<(f64, Summary)>,
    /// The columns drawn last time: the sort cycles through these.
    pub on_screen: Vec<Column>,
    /// The rows shown: sorting a million entries takes seconds, so it is
    /// done once per dump, sort or filter, off the UI thread in the live
    /// view (see conntrack_order.rs).
    pub order: Orders,
    /// The namespace scope (Enter in Namespaces).
    pub scope: Option<view::NsScope>,
}

impl Default for ConntrackView {
    fn default() -> Self {
        Self {
            sort: Column::Timeout,
            descending: true,
            on_screen: Vec::new(),
            selected: None,
            selected_position: 0,
            window: Window::default(),
            filter: String::new(),
            editing_filter: false,
            summary: None,
            order: Orders::default(),
            scope: None,
        }
    }
}

impl ConntrackView {
    /// Asks for the order of the shown dump as the view sorts and filters
    /// now; `rows` gives it once made (at once when inline).
    pub fn refresh(&mut self, shown: &Shown) {
        // The entries are the primary namespace's: another's scope leaves
        // none (the tab says why and shows that one's count).
        let other = self.scope.as_ref().is_some_and(|s| !s.is_primary());
        match shown.conntrack_sample() {
            Some(sample) if !other => {
                let filter = self.filter.clone();
                self.order.want(sample, self.sort, self.descending, &filter);
            }
            _ => self.order.clear(),
        }
    }

    /// The rows shown: filtered and sorted as asked, or, while that sort
    /// runs, as they were (`order.sorting()`).
    pub fn rows(&self) -> Rows<'_> {
        self.order.rows()
    }

    pub fn selected_index(&self, rows: &Rows) -> Option<usize> {
        if rows.is_empty() {
            return None;
        }
        let here = rows.get(self.selected_position).map(key);
        self.selected
            .as_ref()
            .and_then(|k| {
                // Where it was first: one comparison in the common case.
                if here.as_ref() == Some(k) {
                    return Some(self.selected_position);
                }
                rows.iter().position(|e| key(e) == *k)
            })
            .or(Some(self.selected_position.min(rows.len() - 1)))
    }

    fn select(&mut self, index: usize) {
        if let Some(entry) = self.rows().get(index) {
            self.selected = Some(key(entry));
            self.selected_position = index;
        }
    }

    pub fn select_row(&mut self, shown: &Shown, index: usize) {
        self.refresh(shown);
        self.select(index);
    }

    /// Applies a view action; returns whether anything changed.
    pub fn handle(&mut self, action: Action, shown: &Shown) -> bool {
        self.refresh(shown);
        let rows = self.rows();
        let (at, len) = (self.selected_index(&rows).unwrap_or(0), rows.len());
        if let Some(index) = self.window.move_selection(action, at, len) {
            self.select(index);
            return true;
        }
        match action {
            Action::Close => {
                if self.filter.is_empty() {
                    return false;
                }
                self.filter.clear();
            }
            Action::SortNext | Action::SortPrev => {
                self.sort = table::next_sort(
                    COLUMNS.iter().map(|c| c.column),
                    &self.on_screen,
                    self.sort,
                    action,
                );
                // Biggest first for numbers, A-Z for text.
                self.descending = spec_of(self.sort).is_some_and(|s| s.align == Right);
            }
            Action::SortInvert => self.descending = !self.descending,
            Action::Filter => self.editing_filter = true,
            _ => return false,
        }
        true
    }

    /// The summary of `entries` (dumped at `mono`), from the cache when the
    /// list has not changed.
    pub fn summary(&mut self, mono: f64, entries: &[ConntrackEntry], top_n: usize) -> &Summary {
        if self.summary.as_ref().is_none_or(|(at, _)| *at != mono) {
            self.summary = Some((mono, Summary::of(entries, top_n)));
        }
        &self
            .summary
            .get_or_insert_with(|| (mono, Summary::default()))
            .1
    }
}

impl TabView for ConntrackView {
    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        Reply::Redraw(self.handle(action, shown))
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

impl TableRows for ConntrackView {
    fn refresh_rows(&mut self, shown: &Shown) -> Option<(usize, Option<usize>)> {
        self.refresh(shown);
        let rows = self.rows();
        Some((rows.len(), self.selected_index(&rows)))
    }

    fn row_matches(&self, index: usize, search: &Expr, _shown: &Shown) -> bool {
        self.rows().get(index).is_some_and(|e| search.matches(e))
    }

    fn select_at(&mut self, index: usize, _shown: &Shown) {
        self.select(index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(src_port: u16, state: u8, timeout: u32) -> ConntrackEntry {
        let orig = Tuple {
            src: "198.18.0.1".parse().unwrap(),
            dst: "198.18.0.2".parse().unwrap(),
            sport: Some(src_port),
            dport: Some(8080),
        };
        let reply = Tuple {
            src: "198.18.1.2".parse().unwrap(),
            dst: orig.src,
            sport: Some(80),
            dport: Some(src_port),
        };
        ConntrackEntry {
            proto: 6,
            tcp_state: Some(state),
            orig,
            reply,
            status: 0,
            timeout,
            mark: 0,
            zone: 0,
            packets: None,
            bytes: None,
        }
    }

    fn history(entries: Vec<ConntrackEntry>) -> crate::app::history::History {
        let mut history = crate::app::history::History::default();
        let mut sample = crate::model::Sample::default();
        sample.conntrack.entries = Some(entries);
        history.push(sample);
        history
    }

    fn timeouts(view: &mut ConntrackView, shown: &Shown) -> Vec<u32> {
        view.refresh(shown);
        view.rows().iter().map(|e| e.timeout).collect()
    }

    #[test]
    fn sorts_filters_and_follows_the_selection() {
        let history = history(vec![
            entry(1000, 3, 50),
            entry(1001, 7, 90),
            entry(1002, 3, 10),
        ]);
        let shown = Shown {
            history: &history,
            index: Some(0),
        };
        let mut view = ConntrackView::default();
        assert_eq!(
            timeouts(&mut view, &shown),
            [90, 50, 10],
            "longest timeout first"
        );
        view.handle(Action::Down, &shown);
        assert_eq!(view.selected.unwrap().1.sport, Some(1000));
        view.handle(Action::SortInvert, &shown);
        view.refresh(&shown);
        assert_eq!(
            view.selected_index(&view.rows()),
            Some(1),
            "selection follows the entry"
        );
        view.filter = "time_wait".into();
        assert_eq!(timeouts(&mut view, &shown).len(), 1);
        view.filter = "198.18.1.2:80".into();
        assert_eq!(
            timeouts(&mut view, &shown).len(),
            3,
            "the NAT target matches"
        );
        assert!(view.handle(Action::Close, &shown));
        assert!(view.filter.is_empty());
        view.handle(Action::SortNext, &shown);
        assert_eq!(view.sort, Column::Packets);
        assert!(view.descending);
    }

    #[test]
    fn in_the_background_the_old_order_shows_until_the_new_one_is_sorted() {
        let entries: Vec<_> = (0..50_000u32)
            .map(|i| entry(1000 + (i % 60_000) as u16, 3, (i * 7919) % 100_003))
            .collect();
        let history = history(entries);
        let shown = Shown {
            history: &history,
            index: Some(0),
        };
        let (mut inline, mut live) = (ConntrackView::default(), ConntrackView::default());
        live.order.background = true;
        live.refresh(&shown);
        let wait = |view: &mut ConntrackView| {
            while view.order.sorting() {
                view.order.poll();
                std::thread::yield_now();
            }
        };
        wait(&mut live);
        assert_eq!(timeouts(&mut live, &shown), timeouts(&mut inline, &shown));
        let before = timeouts(&mut live, &shown);
        for view in [&mut inline, &mut live] {
            view.handle(Action::SortInvert, &shown);
        }
        live.refresh(&shown);
        let listed = |view: &ConntrackView| view.rows().iter().map(|e| e.timeout).collect();
        // Asked; until it is taken (poll), the old order shows.
        assert!(live.order.sorting());
        assert_eq!(listed(&live), before);
        wait(&mut live);
        let after: Vec<u32> = listed(&live);
        assert_eq!(after, timeouts(&mut inline, &shown));
        assert!(after.windows(2).all(|w| w[0] <= w[1]), "shortest first now");
    }
}
