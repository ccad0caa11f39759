//! The Namespaces tab's state: one row per network namespace (under
//! `--all-netns`; else the one netlens watches), with its traffic, sockets
//! by state, retransmits, drops, conntrack entries and findings. Rates come
//! from `model::netns::namespace_rates` over the shown pair of samples, as
//! `snapshot --json` and the exporter compute them. Enter scopes every tab
//! to the selected namespace (App::set_scope); Esc or `u` clears it.
//! Drawing: ui/namespaces.rs.

use super::format::{self, count_short, fit, per_s};
use super::keymap::{Action, Key};
use super::table::spec;
use super::table::{self, Align, CellText, ColumnSpec as Spec, Window, by_number};
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

/// A column's sort comparison, and its cell text in its width (`scoped`:
/// the tabs are scoped to this row's namespace).
type Sort = fn(&NsRow, &NsRow) -> Ordering;
type Text = fn(&NsRow, u16, bool) -> CellText;
pub type ColumnSpec = Spec<Column, Sort, Text>;

use Align::{Left, Right};

/// Table order. At 80 columns: the label, bytes and packets each way,
/// TCP's estab/listen/time-wait counts, retransmits and findings (the
/// info line below gives the rest of the selected one); other TCP, drops
/// and conntrack from about 100; the container and UDP, then the
/// host-side peers' rates, wider still.
pub const COLUMNS: &[ColumnSpec] = &[
    spec(
        (Column::Label, "NAMESPACE", 12, 0),
        Left,
        |a, b| a.info.label.cmp(&b.info.label),
        |r, width, scoped| match scoped {
            true => fit(&format!("» {}", r.info.label), usize::from(width)).into(),
            false => fit(&r.info.label, usize::from(width)).into(),
        },
    ),
    spec(
        (Column::Container, "CONTAINER", 12, 3),
        Left,
        |a, b| a.info.container.cmp(&b.info.container),
        |r, width, _| {
            fit(
                r.info.container.as_deref().unwrap_or("-"),
                usize::from(width),
            )
            .into()
        },
    ),
    spec(
        (Column::RxBytes, "rx/s", 10, 0),
        Right,
        |a, b| by_number(a.rates.rx_bytes, b.rates.rx_bytes),
        |r, _, _| per_s(r.rates.rx_bytes).into(),
    ),
    spec(
        (Column::TxBytes, "tx/s", 10, 0),
        Right,
        |a, b| by_number(a.rates.tx_bytes, b.rates.tx_bytes),
        |r, _, _| per_s(r.rates.tx_bytes).into(),
    ),
    spec(
        (Column::RxPackets, "rxpk/s", 7, 1),
        Right,
        |a, b| by_number(a.rates.rx_packets, b.rates.rx_packets),
        |r, _, _| format::rate(r.rates.rx_packets).into(),
    ),
    spec(
        (Column::TxPackets, "txpk/s", 7, 1),
        Right,
        |a, b| by_number(a.rates.tx_packets, b.rates.tx_packets),
        |r, _, _| format::rate(r.rates.tx_packets).into(),
    ),
    spec(
        (Column::PeerRx, "peer rx/s", 10, 4),
        Right,
        |a, b| by_number(a.rates.peer_rx_bytes, b.rates.peer_rx_bytes),
        |r, _, _| per_s(r.rates.peer_rx_bytes).into(),
    ),
    spec(
        (Column::PeerTx, "peer tx/s", 10, 4),
        Right,
        |a, b| by_number(a.rates.peer_tx_bytes, b.rates.peer_tx_bytes),
        |r, _, _| per_s(r.rates.peer_tx_bytes).into(),
    ),
    spec(
        (Column::Estab, "ESTAB", 5, 0),
        Right,
        |a, b| a.rates.established.cmp(&b.rates.established),
        |r, width, _| count(r.rates.established, width),
    ),
    spec(
        (Column::Listen, "LSTN", 4, 1),
        Right,
        |a, b| a.rates.listening.cmp(&b.rates.listening),
        |r, width, _| count(r.rates.listening, width),
    ),
    spec(
        (Column::TimeWait, "TW", 4, 1),
        Right,
        |a, b| a.rates.time_wait.cmp(&b.rates.time_wait),
        |r, width, _| count(r.rates.time_wait, width),
    ),
    spec(
        (Column::Other, "OTH", 4, 2),
        Right,
        |a, b| a.rates.tcp_other().cmp(&b.rates.tcp_other()),
        |r, width, _| count(r.rates.tcp_other(), width),
    ),
    spec(
        (Column::Udp, "UDP", 4, 3),
        Right,
        |a, b| a.udp().cmp(&b.udp()),
        |r, width, _| count(r.udp(), width),
    ),
    spec(
        (Column::Retrans, "retr/s", 6, 1),
        Right,
        |a, b| by_number(a.rates.retrans, b.rates.retrans),
        |r, _, _| format::rate(r.rates.retrans).into(),
    ),
    spec(
        (Column::Drops, "drop/s", 6, 2),
        Right,
        |a, b| by_number(a.rates.drops, b.rates.drops),
        |r, _, _| format::rate(r.rates.drops).into(),
    ),
    spec(
        (Column::Conntrack, "CT", 6, 2),
        Right,
        |a, b| a.info.conntrack_count.cmp(&b.info.conntrack_count),
        |r, _, _| conntrack_count(r).into(),
    ),
    spec(
        (Column::Findings, "FIND", 4, 0),
        Right,
        |a, b| a.findings.cmp(&b.findings),
        |r, width, _| count(r.findings, width),
    ),
];

/// The column's descriptor.
fn spec_of(column: Column) -> Option<&'static ColumnSpec> {
    COLUMNS.iter().find(|spec| spec.column == column)
}

/// A count in a cell of `width`.
fn count(n: usize, width: u16) -> CellText {
    count_short(n as u64, usize::from(width)).into()
}

/// The namespace's conntrack entries, "-" when unknown.
pub fn conntrack_count(row: &NsRow) -> String {
    row.info
        .conntrack_count
        .map_or_else(|| "-".into(), |c| c.to_string())
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
    /// Its UDP sockets.
    fn udp(&self) -> usize {
        self.rates.sockets - self.rates.tcp
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
                    let by = spec_of(column).map_or(Ordering::Equal, |s| (s.sort)(a, b));
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
                self.descending = spec_of(column).is_some_and(|s| s.align == Align::Right);
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
