//! The Namespaces tab's state: one row per network namespace (under
//! `--all-netns`; else the one netlens watches), with its traffic, sockets
//! by state, retransmits, drops, conntrack entries and findings. Rates come
//! from `model::netns::namespace_rates` over the shown pair of samples, as
//! `snapshot --json` and the exporter compute them. Enter scopes every tab
//! to the selected namespace (App::set_scope); Esc or `u` clears it.
//! Drawing: ui/namespaces.rs.

use super::keymap::{Action, Key};
use super::table::{self, ColumnSpec as Spec, Window};
use super::view::{self, NsScope, Reply, Shown, TabView, TableRows};
use crate::findings::Finding;
use crate::model::Sample;
use crate::model::filter::Expr;
use crate::model::filter::FilterFields;
use crate::model::filter::rows::InSample;
use crate::model::netns::{NamespaceInfo, NamespaceRates, all_namespace_rates};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Label,
    Container,
    RxBytes,
    TxBytes,
    RxPackets,
    TxPackets,
    PeerRx,
    PeerTx,
    Estab,
    Listen,
    TimeWait,
    Other,
    Udp,
    Retrans,
    Drops,
    Conntrack,
    Findings,
}

pub type ColumnSpec = Spec<Column>;

/// Table order. At 80 columns: the label, bytes and packets each way,
/// TCP's estab/listen/time-wait counts, retransmits and findings (the
/// info line below gives the rest of the selected one); other TCP, drops
/// and conntrack from about 100; the container and UDP, then the
/// host-side peers' rates, wider still.
pub const COLUMNS: &[ColumnSpec] = &[
    spec(Column::Label, "NAMESPACE", 12, 0),
    spec(Column::Container, "CONTAINER", 12, 3),
    spec(Column::RxBytes, "rx/s", 10, 0),
    spec(Column::TxBytes, "tx/s", 10, 0),
    spec(Column::RxPackets, "rxpk/s", 7, 1),
    spec(Column::TxPackets, "txpk/s", 7, 1),
    spec(Column::PeerRx, "peer rx/s", 10, 4),
    spec(Column::PeerTx, "peer tx/s", 10, 4),
    spec(Column::Estab, "ESTAB", 5, 0),
    spec(Column::Listen, "LSTN", 4, 1),
    spec(Column::TimeWait, "TW", 4, 1),
    spec(Column::Other, "OTH", 4, 2),
    spec(Column::Udp, "UDP", 4, 3),
    spec(Column::Retrans, "retr/s", 6, 1),
    spec(Column::Drops, "drop/s", 6, 2),
    spec(Column::Conntrack, "CT", 6, 2),
    spec(Column::Findings, "FIND", 4, 0),
];

const fn spec(column: Column, title: &'static str, width: u16, priority: u8) -> ColumnSpec {
    ColumnSpec {
        column,
        title,
        width,
        priority,
    }
}

/// One namespace over the shown interval.
#[derive(Debug, Clone, PartialEq)]
pub struct NsRow {
    pub info: NamespaceInfo,
    pub rates: NamespaceRates,
    /// Findings shown now whose sockets or process are in it.
    pub findings: usize,
}

impl NsRow {
    fn value(&self, column: Column) -> Option<f64> {
        let r = &self.rates;
        let count = |n: usize| Some(n as f64);
        match column {
            Column::Label | Column::Container => None,
            Column::RxBytes => r.rx_bytes,
            Column::TxBytes => r.tx_bytes,
            Column::RxPackets => r.rx_packets,
            Column::TxPackets => r.tx_packets,
            Column::PeerRx => r.peer_rx_bytes,
            Column::PeerTx => r.peer_tx_bytes,
            Column::Estab => count(r.established),
            Column::Listen => count(r.listening),
            Column::TimeWait => count(r.time_wait),
            Column::Other => count(r.tcp_other()),
            Column::Udp => count(r.sockets - r.tcp),
            Column::Retrans => r.retrans,
            Column::Drops => r.drops,
            Column::Conntrack => self.info.conntrack_count.map(|c| c as f64),
            Column::Findings => count(self.findings),
        }
    }
}

fn compare(a: &NsRow, b: &NsRow, column: Column) -> Ordering {
    match column {
        Column::Label => a.info.label.cmp(&b.info.label),
        Column::Container => a.info.container.cmp(&b.info.container),
        _ => {
            // Unknown sorts below every number.
            let key = |row: &NsRow| row.value(column).unwrap_or(f64::NEG_INFINITY);
            key(a).total_cmp(&key(b))
        }
    }
}

/// A namespace for the row filter: `ns:` its label, `container:` its
/// container; a bare word its label, container or inode.
impl FilterFields for InSample<'_, NsRow> {
    fn shown_text(&self) -> String {
        let info = &self.row.info;
        let container = info.container.as_deref().unwrap_or("");
        format!("{} {container} net:[{}]", info.label, info.inode)
    }

    fn netns(&self) -> Option<&str> {
        Some(&self.row.info.label)
    }

    fn container(&self) -> Option<&str> {
        self.row.info.container.as_deref()
    }
}

/// Every namespace of `current` with its rates, unfiltered, in id order.
pub fn all_rows(previous: Option<&Sample>, current: &Sample, findings: &[Finding]) -> Vec<NsRow> {
    current
        .namespace_list()
        .iter()
        .zip(all_namespace_rates(previous, current))
        .map(|(info, rates)| NsRow {
            info: info.clone(),
            rates,
            findings: crate::findings::count_in_netns(findings, info.id),
        })
        .collect()
}

/// The sample times (shown, previous), sort, order and filter of the rows.
type RowsFor = (f64, Option<f64>, Option<Column>, bool, String);

#[derive(Debug, Clone)]
pub struct NamespacesView {
    /// None: id order (the primary first, then as they were found).
    pub sort: Option<Column>,
    pub descending: bool,
    /// Selected namespace, by id so it survives re-sorting.
    pub selected: Option<u16>,
    pub selected_position: usize,
    pub window: Window,
    pub filter: String,
    pub editing_filter: bool,
    /// The columns drawn last time: the sort cycles through these.
    pub on_screen: Vec<Column>,
    rows: Vec<NsRow>,
    rows_for: Option<RowsFor>,
}

impl Default for NamespacesView {
    fn default() -> Self {
        Self {
            sort: None,
            descending: true,
            selected: None,
            selected_position: 0,
            window: Window::default(),
            filter: String::new(),
            editing_filter: false,
            on_screen: Vec::new(),
            rows: Vec::new(),
            rows_for: None,
        }
    }
}

impl NamespacesView {
    /// The rows for the shown sample, filtered and sorted.
    pub fn rows(&mut self, shown: &Shown) -> &[NsRow] {
        let (previous, current) = shown.pair();
        let Some(current) = current else {
            self.rows.clear();
            self.rows_for = None;
            return &self.rows;
        };
        let wanted = (
            current.mono,
            previous.map(|p| p.mono),
            self.sort,
            self.descending,
            self.filter.clone(),
        );
        if self.rows_for.as_ref() != Some(&wanted) {
            let findings = shown
                .index
                .map_or(&[][..], |index| shown.history.findings(index));
            let mut rows = all_rows(previous, current, findings);
            let filter = view::row_filter(&self.filter);
            rows.retain(|r| filter.matches(&InSample::new(r, current)));
            if let Some(column) = self.sort {
                let descending = self.descending;
                rows.sort_by(|a, b| {
                    let by = compare(a, b, column);
                    if descending { by.reverse() } else { by }.then(a.info.id.cmp(&b.info.id))
                });
            }
            self.rows = rows;
            self.rows_for = Some(wanted);
        }
        &self.rows
    }

    /// The selected row's index, following the namespace by its id and
    /// falling back to the same position when it is gone.
    pub fn selected_index(&self) -> Option<usize> {
        if self.rows.is_empty() {
            return None;
        }
        self.selected
            .and_then(|id| self.rows.iter().position(|r| r.info.id == id))
            .or(Some(self.selected_position.min(self.rows.len() - 1)))
    }

    fn select(&mut self, index: usize) {
        if let Some(row) = self.rows.get(index) {
            self.selected = Some(row.info.id);
            self.selected_position = index;
        }
    }
}

impl TabView for NamespacesView {
    fn scope(&self) -> super::keymap::Scope {
        super::keymap::Scope::Namespaces
    }

    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        let len = self.rows(shown).len();
        let at = self.selected_index().unwrap_or(0);
        if let Some(index) = self.window.move_selection(action, at, len) {
            self.select(index);
            return Reply::Redraw(true);
        }
        match action {
            Action::ScopeNamespace => {
                self.select(at);
                return match self.rows.get(at) {
                    Some(row) => Reply::Scope(NsScope::new(row.info.id, &row.info.label)),
                    None => Reply::Redraw(false),
                };
            }
            Action::Close if !self.filter.is_empty() => self.filter.clear(),
            Action::SortNext | Action::SortPrev => {
                let current = self.sort.unwrap_or(Column::Label);
                let column = table::next_sort(
                    COLUMNS.iter().map(|c| c.column),
                    &self.on_screen,
                    current,
                    action,
                );
                self.sort = Some(column);
                self.descending = !matches!(column, Column::Label | Column::Container);
            }
            Action::SortInvert => self.descending = !self.descending,
            Action::Filter => self.editing_filter = true,
            _ => return Reply::Redraw(false),
        }
        Reply::Redraw(true)
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

impl TableRows for NamespacesView {
    fn refresh_rows(&mut self, shown: &Shown) -> Option<(usize, Option<usize>)> {
        shown.current()?;
        let count = self.rows(shown).len();
        Some((count, self.selected_index()))
    }

    fn row_matches(&self, index: usize, search: &Expr, shown: &Shown) -> bool {
        let (Some(row), Some(current)) = (self.rows.get(index), shown.current()) else {
            return false;
        };
        search.matches(&InSample::new(row, current))
    }

    fn select_at(&mut self, index: usize, _shown: &Shown) {
        self.select(index);
    }
}
