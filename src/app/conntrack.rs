//! The Conntrack tab's state and entry table model: columns, sorting,
//! filtering, selection. Rendering lives in ui/conntrack.rs.

use super::keymap::{Action, Key};
use super::search::next_match;
use super::table::{self, Window};
use super::view::{self, Reply, Shown, TabView};
use crate::model::conntrack::{ConntrackEntry, Tuple};
use crate::model::conntrack_rates::Summary;
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

pub type ColumnSpec = table::ColumnSpec<Column>;

pub const COLUMNS: &[ColumnSpec] = &[
    ColumnSpec {
        column: Column::Proto,
        title: "PROTO",
        width: 5,
        priority: 1,
    },
    ColumnSpec {
        column: Column::State,
        title: "STATE",
        width: 11,
        priority: 1,
    },
    ColumnSpec {
        column: Column::Flow,
        title: "ORIG SRC → DST ⇒ NAT",
        // What a DNATed IPv4 connection needs; columns of lower priority
        // give way to it.
        width: 50,
        priority: 0,
    },
    ColumnSpec {
        column: Column::Timeout,
        title: "TIMEOUT",
        width: 8,
        priority: 2,
    },
    ColumnSpec {
        column: Column::Packets,
        title: "PKTS",
        width: 7,
        priority: 3,
    },
    ColumnSpec {
        column: Column::Bytes,
        title: "BYTES",
        width: 9,
        priority: 3,
    },
    ColumnSpec {
        column: Column::Mark,
        title: "MARK",
        width: 8,
        priority: 4,
    },
    ColumnSpec {
        column: Column::Zone,
        title: "ZONE",
        width: 5,
        priority: 4,
    },
];

/// Packets or bytes of both directions, when counted.
pub fn total(pair: Option<(u64, u64)>) -> Option<u64> {
    pair.map(|(o, r)| o.saturating_add(r))
}

fn compare(a: &ConntrackEntry, b: &ConntrackEntry, column: Column) -> Ordering {
    match column {
        Column::Proto => a.proto.cmp(&b.proto),
        Column::State => a.state_name().cmp(b.state_name()),
        Column::Flow => (a.orig.src, a.orig.sport, a.orig.dst, a.orig.dport).cmp(&(
            b.orig.src,
            b.orig.sport,
            b.orig.dst,
            b.orig.dport,
        )),
        Column::Timeout => a.timeout.cmp(&b.timeout),
        Column::Packets => total(a.packets).cmp(&total(b.packets)),
        Column::Bytes => total(a.bytes).cmp(&total(b.bytes)),
        Column::Mark => a.mark.cmp(&b.mark),
        Column::Zone => a.zone.cmp(&b.zone),
    }
}

/// Identifies an entry across dumps: protocol and original tuple.
pub type EntryKey = (u8, Tuple);

pub fn key(entry: &ConntrackEntry) -> EntryKey {
    (entry.proto, entry.orig)
}

#[derive(Debug, Clone)]
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
    /// The last order `rows` computed: sorting a million entries takes
    /// seconds, so it is done once per dump, sort or filter, not per frame
    /// or key.
    order: std::cell::RefCell<Option<(OrderFor, Vec<u32>)>>,
    /// The namespace scope (Enter in Namespaces).
    pub scope: Option<view::NsScope>,
}

/// What an order was computed for: the list (its address, length, first
/// and last entry), the sort and the filter.
type OrderFor = (
    usize,
    usize,
    Option<EntryKey>,
    Option<EntryKey>,
    Column,
    bool,
    String,
    Option<u16>,
);

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
            order: Default::default(),
            scope: None,
        }
    }
}

impl ConntrackView {
    /// The entries to show, filtered and sorted as the view says.
    pub fn rows<'a>(&self, entries: &'a [ConntrackEntry]) -> Vec<&'a ConntrackEntry> {
        let wanted: OrderFor = (
            entries.as_ptr() as usize,
            entries.len(),
            entries.first().map(key),
            entries.last().map(key),
            self.sort,
            self.descending,
            self.filter.clone(),
            view::scope_id(self.scope.as_ref()),
        );
        let mut cache = self.order.borrow_mut();
        if cache
            .as_ref()
            .is_none_or(|(made_for, _)| *made_for != wanted)
        {
            let filter = view::row_filter(&self.filter);
            // The entries are the primary namespace's: another's scope
            // leaves none (the tab says why and shows that one's count).
            let other = self.scope.as_ref().is_some_and(|s| !s.is_primary());
            let mut order: Vec<u32> = (0..entries.len() as u32)
                .filter(|_| !other)
                .filter(|&i| filter.matches(&entries[i as usize]))
                .collect();
            order.sort_by(|&a, &b| {
                let (a, b) = (&entries[a as usize], &entries[b as usize]);
                let order = compare(a, b, self.sort).then_with(|| compare(a, b, Column::Flow));
                if self.descending {
                    order.reverse()
                } else {
                    order
                }
            });
            *cache = Some((wanted, order));
        }
        let (_, order) = cache.as_ref().expect("just computed");
        order.iter().map(|&i| &entries[i as usize]).collect()
    }

    pub fn selected_index(&self, rows: &[&ConntrackEntry]) -> Option<usize> {
        if rows.is_empty() {
            return None;
        }
        self.selected
            .as_ref()
            .and_then(|k| rows.iter().position(|e| key(e) == *k))
            .or(Some(self.selected_position.min(rows.len() - 1)))
    }

    fn select(&mut self, rows: &[&ConntrackEntry], index: usize) {
        if let Some(entry) = rows.get(index) {
            self.selected = Some(key(entry));
            self.selected_position = index;
        }
    }

    pub fn select_row(&mut self, entries: &[ConntrackEntry], index: usize) {
        let rows = self.rows(entries);
        self.select(&rows, index);
    }

    /// Applies a view action; returns whether anything changed.
    pub fn handle(&mut self, action: Action, entries: &[ConntrackEntry]) -> bool {
        let rows = self.rows(entries);
        let at = self.selected_index(&rows).unwrap_or(0);
        if let Some(index) = self.window.move_selection(action, at, rows.len()) {
            self.select(&rows, index);
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
                self.descending =
                    !matches!(self.sort, Column::Proto | Column::State | Column::Flow);
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
        Reply::Redraw(self.handle(action, shown.conntrack_entries()))
    }

    fn prompt_key(&mut self, key: Key) -> Option<bool> {
        view::filter_key(&mut self.filter, &mut self.editing_filter, key)
    }

    fn editing_filter(&self) -> Option<&str> {
        self.editing_filter.then_some(self.filter.as_str())
    }

    fn filter(&self) -> Option<&str> {
        view::applied(&self.filter)
    }

    fn find(&mut self, text: &str, skip: usize, shown: &Shown) -> Option<bool> {
        let Some((entries, _, _)) = shown.conntrack_entries_at() else {
            return Some(false);
        };
        let rows = self.rows(entries);
        let at = self.selected_index(&rows).unwrap_or(0);
        let Some(search) = view::search_filter(text) else {
            return Some(false);
        };
        let found = next_match(rows.len(), at + skip, |i| search.matches(rows[i]));
        Some(found.inspect(|&i| self.select_row(entries, i)).is_some())
    }

    fn click_row(&mut self, index: usize, shown: &Shown) -> bool {
        if let Some((entries, _, _)) = shown.conntrack_entries_at() {
            self.select_row(entries, index);
        }
        true
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

    #[test]
    fn sorts_filters_and_follows_the_selection() {
        let entries = vec![entry(1000, 3, 50), entry(1001, 7, 90), entry(1002, 3, 10)];
        let mut view = ConntrackView::default();
        let order: Vec<u32> = view.rows(&entries).iter().map(|e| e.timeout).collect();
        assert_eq!(order, [90, 50, 10], "longest timeout first by default");
        view.handle(Action::Down, &entries);
        assert_eq!(view.selected.unwrap().1.sport, Some(1000));
        view.handle(Action::SortInvert, &entries);
        let rows = view.rows(&entries);
        assert_eq!(
            view.selected_index(&rows),
            Some(1),
            "selection follows the entry"
        );
        view.filter = "time_wait".into();
        assert_eq!(view.rows(&entries).len(), 1);
        view.filter = "198.18.1.2:80".into();
        assert_eq!(view.rows(&entries).len(), 3, "the NAT target matches");
        assert!(view.handle(Action::Close, &entries));
        assert!(view.filter.is_empty());
        view.handle(Action::SortNext, &entries);
        assert_eq!(view.sort, Column::Packets);
        assert!(view.descending);
    }
}
