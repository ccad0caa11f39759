//! The Interfaces tab's state and table model: columns, sorting, filtering,
//! selection. Rendering lives in ui/interfaces.rs.

use super::format::{self, netns_cell};
use super::keymap::{Action, Key};
use super::links::Link;
use super::table::spec;
use super::table::{self, Align, CellText, Hint, Window, by_number};
use super::view::{self, Reply, Shown, TabView, TableRows};
use crate::model::filter::rows::{InSample, netns_of, parse_end};
use crate::model::filter::{End, Expr, FilterFields, Side};
use crate::model::netdev;
use crate::model::rates::{InterfaceRates, interface_util};
use crate::model::{InterfaceRef, InterfaceSample, Sample};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Name,
    State,
    RxPackets,
    TxPackets,
    RxKBytes,
    TxKBytes,
    Util,
    Errors,
    Dropped,
    Overruns,
    Carrier,
    Collisions,
    Mtu,
    Speed,
    /// The interface's namespace (or container): only while a sample
    /// holds more than one (--all-netns).
    Netns,
}

/// A column's sort comparison, and its cell text from the row, the
/// sample (for the namespace's name) and its width.
type Sort = fn(&Row<'_>, &Row<'_>) -> Ordering;
type Text = fn(&Row<'_>, &Sample, u16) -> CellText;
pub type ColumnSpec = table::ColumnSpec<Column, Sort, Text>;

use Align::{Left, Right};

/// Table order. Error columns sum both directions; the detail pane splits them.
pub const COLUMNS: &[ColumnSpec] = &[
    spec(
        (Column::Netns, "NS", 12, 1),
        Left,
        |a, b| a.iface.netns.cmp(&b.iface.netns),
        |r, sample, width| netns_cell(sample, r.iface.netns, width).into(),
    ),
    spec(
        (Column::Name, "IFACE", 10, 0),
        Left,
        |a, b| a.iface.name.cmp(&b.iface.name),
        |r, _, _| r.iface.name.clone().into(),
    ),
    spec(
        (Column::State, "STATE", 6, 2),
        Left,
        |a, b| a.state().cmp(b.state()),
        |r, _, _| {
            let state = r.state();
            CellText::styled(
                state,
                if state == "up" {
                    Hint::Good
                } else {
                    Hint::Alert
                },
            )
        },
    ),
    spec(
        (Column::RxPackets, "rxpck/s", 9, 1),
        Right,
        |a, b| {
            by_number(
                a.rates.rate(&netdev::RX_PACKETS),
                b.rates.rate(&netdev::RX_PACKETS),
            )
        },
        |r, _, _| format::rate(r.rates.rate(&netdev::RX_PACKETS)).into(),
    ),
    spec(
        (Column::TxPackets, "txpck/s", 9, 1),
        Right,
        |a, b| {
            by_number(
                a.rates.rate(&netdev::TX_PACKETS),
                b.rates.rate(&netdev::TX_PACKETS),
            )
        },
        |r, _, _| format::rate(r.rates.rate(&netdev::TX_PACKETS)).into(),
    ),
    spec(
        (Column::RxKBytes, "rxkB/s", 9, 1),
        Right,
        |a, b| {
            by_number(
                a.kilobytes(&netdev::RX_BYTES),
                b.kilobytes(&netdev::RX_BYTES),
            )
        },
        |r, _, _| format::rate(r.kilobytes(&netdev::RX_BYTES)).into(),
    ),
    spec(
        (Column::TxKBytes, "txkB/s", 9, 1),
        Right,
        |a, b| {
            by_number(
                a.kilobytes(&netdev::TX_BYTES),
                b.kilobytes(&netdev::TX_BYTES),
            )
        },
        |r, _, _| format::rate(r.kilobytes(&netdev::TX_BYTES)).into(),
    ),
    spec(
        (Column::Util, "%util", 6, 2),
        Right,
        |a, b| by_number(a.util, b.util),
        |r, _, _| format::rate(r.util).into(),
    ),
    spec(
        (Column::Errors, "err/s", 7, 3),
        Right,
        |a, b| by_number(a.rates.errors_total(), b.rates.errors_total()),
        |r, _, _| errors(r.rates.errors_total()),
    ),
    spec(
        (Column::Dropped, "drop/s", 7, 3),
        Right,
        |a, b| by_number(a.rates.dropped_total(), b.rates.dropped_total()),
        |r, _, _| errors(r.rates.dropped_total()),
    ),
    spec(
        (Column::Overruns, "ovr/s", 6, 4),
        Right,
        |a, b| {
            by_number(
                a.rates.rate(&netdev::RX_OVER_ERRORS),
                b.rates.rate(&netdev::RX_OVER_ERRORS),
            )
        },
        |r, _, _| errors(r.rates.rate(&netdev::RX_OVER_ERRORS)),
    ),
    spec(
        (Column::Carrier, "carr/s", 6, 4),
        Right,
        |a, b| {
            by_number(
                a.rates.rate(&netdev::TX_CARRIER_ERRORS),
                b.rates.rate(&netdev::TX_CARRIER_ERRORS),
            )
        },
        |r, _, _| errors(r.rates.rate(&netdev::TX_CARRIER_ERRORS)),
    ),
    spec(
        (Column::Collisions, "coll/s", 6, 4),
        Right,
        |a, b| {
            by_number(
                a.rates.rate(&netdev::COLLISIONS),
                b.rates.rate(&netdev::COLLISIONS),
            )
        },
        |r, _, _| errors(r.rates.rate(&netdev::COLLISIONS)),
    ),
    spec(
        (Column::Mtu, "MTU", 5, 5),
        Right,
        |a, b| a.iface.mtu.cmp(&b.iface.mtu),
        |r, _, _| r.iface.mtu.to_string().into(),
    ),
    spec(
        (Column::Speed, "SPEED", 10, 5),
        Left,
        |a, b| a.iface.link_speed().cmp(&b.iface.link_speed()),
        |r, _, _| format::speed(r.iface.link_speed(), r.iface.duplex).into(),
    ),
];

/// An error rate: alerting when above 0, dim otherwise.
fn errors(value: Option<f64>) -> CellText {
    let hint = if value.is_some_and(|v| v > 0.0) {
        Hint::Alert
    } else {
        Hint::Dim
    };
    CellText::styled(format::rate(value), hint)
}

/// One interface with its rates over the shown interval.
pub struct Row<'a> {
    pub iface: &'a InterfaceSample,
    pub rates: InterfaceRates,
    pub util: Option<f64>,
}

impl Row<'_> {
    /// Short link state: readable without colour.
    pub fn state(&self) -> &'static str {
        match (self.iface.up, self.iface.lower_up) {
            (true, true) => "up",
            (true, false) => "NOCARR",
            (false, _) => "down",
        }
    }

    /// kB/s of a byte counter.
    fn kilobytes(&self, counter: &netdev::LinkCounter) -> Option<f64> {
        self.rates.rate(counter).map(|b| b / 1024.0)
    }

    /// Two rows by `column` (its descriptor's sort).
    fn compare(&self, other: &Row, column: Column) -> Ordering {
        let spec = COLUMNS.iter().find(|spec| spec.column == column);
        spec.map_or(Ordering::Equal, |spec| (spec.sort)(self, other))
    }
}

/// An interface for the row filter: its name, kind, MAC, addresses and
/// state as shown; its addresses are its ends (`net:`, `host:`).
impl FilterFields for InSample<'_, Row<'_>> {
    fn shown_text(&self) -> String {
        let iface = self.row.iface;
        format!(
            "{} {} {} {} {}",
            iface.name,
            iface.kind.as_deref().unwrap_or(""),
            iface.mac.as_deref().unwrap_or(""),
            iface.addresses.join(" "),
            self.row.state()
        )
    }

    fn ends(&self, _side: Side) -> Vec<End> {
        let addresses = self.row.iface.addresses.iter();
        addresses.filter_map(|a| parse_end(a)).collect()
    }

    fn netns(&self) -> Option<&str> {
        Some(netns_of(self.sample, self.row.iface.netns))
    }
}

/// What the cached rows were computed for.
#[derive(Debug, Clone, PartialEq)]
struct CacheKey {
    mono: f64,
    previous_mono: Option<f64>,
    sort: Column,
    descending: bool,
    filter: String,
    scope: Option<u16>,
}

/// One row of the table, by position in the shown sample's interfaces.
#[derive(Debug, Clone, Copy)]
struct RowData {
    position: usize,
    rates: InterfaceRates,
    util: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct InterfacesView {
    pub sort: Column,
    pub descending: bool,
    /// Selected interface, by namespace and name so it survives re-sorting.
    pub selected: Option<InterfaceRef>,
    /// Where the selection was, for when that interface disappears.
    pub selected_position: usize,
    pub window: Window,
    pub filter: String,
    pub editing_filter: bool,
    pub detail: bool,
    /// Rates, filtered and sorted, computed once per sample or view change:
    /// a frame or a key press then touches only what it shows.
    cache: Option<(CacheKey, Vec<RowData>)>,
    /// The columns drawn last time: the sort cycles through these.
    pub on_screen: Vec<Column>,
    /// The namespace scope (Enter in Namespaces), before the filter.
    pub scope: Option<view::NsScope>,
}

impl Default for InterfacesView {
    fn default() -> Self {
        Self {
            sort: Column::Name,
            descending: false,
            selected: None,
            selected_position: 0,
            window: Window::default(),
            filter: String::new(),
            editing_filter: false,
            detail: false,
            cache: None,
            on_screen: Vec::new(),
            scope: None,
        }
    }
}

/// The table of one shown sample: filtered, sorted, with rates.
pub struct Rows<'a> {
    current: &'a Sample,
    data: &'a [RowData],
}

impl<'a> Rows<'a> {
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<Row<'a>> {
        let data = self.data.get(index)?;
        Some(Row {
            iface: self.current.interfaces.get(data.position)?,
            rates: data.rates,
            util: data.util,
        })
    }

    /// Rows `from..from + count`, built only for those.
    pub fn range(&self, from: usize, count: usize) -> impl Iterator<Item = (usize, Row<'a>)> + '_ {
        (from..self.len().min(from.saturating_add(count))).filter_map(|i| Some((i, self.get(i)?)))
    }

    fn is(&self, index: usize, at: &InterfaceRef) -> bool {
        let iface = self
            .data
            .get(index)
            .and_then(|data| self.current.interfaces.get(data.position));
        iface.is_some_and(|i| i.netns == at.netns && i.name == at.name)
    }
}

impl InterfacesView {
    /// Brings the cached rows up to date with `current` and the view's sort
    /// and filter; cheap when nothing changed.
    pub fn refresh(&mut self, previous: Option<&Sample>, current: &Sample) {
        let key = CacheKey {
            mono: current.mono,
            previous_mono: previous.map(|p| p.mono),
            sort: self.sort,
            descending: self.descending,
            filter: self.filter.clone(),
            scope: view::scope_id(self.scope.as_ref()),
        };
        if self.cache.as_ref().is_none_or(|(cached, _)| *cached != key) {
            let data = self.compute(previous, current);
            self.cache = Some((key, data));
        }
    }

    /// Rows of `current` as of the last `refresh`.
    pub fn rows<'a>(&'a self, current: &'a Sample) -> Rows<'a> {
        let data = self
            .cache
            .as_ref()
            .map_or(&[][..], |(_, data)| data.as_slice());
        Rows { current, data }
    }

    fn compute(&self, previous: Option<&Sample>, current: &Sample) -> Vec<RowData> {
        let filter = view::scoped_filter(self.scope.as_ref(), &self.filter);
        let mut rows: Vec<(usize, Row)> = current
            .interfaces
            .iter()
            .enumerate()
            .map(|(position, iface)| {
                let rates = InterfaceRates::for_interface(previous, current, iface);
                let util = interface_util(iface, &rates);
                (position, Row { iface, rates, util })
            })
            .filter(|(_, row)| filter.matches(&InSample::new(row, current)))
            .collect();
        rows.sort_by(|(_, a), (_, b)| {
            let order = a
                .compare(b, self.sort)
                .then_with(|| a.iface.index.cmp(&b.iface.index));
            if self.descending {
                order.reverse()
            } else {
                order
            }
        });
        rows.into_iter()
            .map(|(position, row)| RowData {
                position,
                rates: row.rates,
                util: row.util,
            })
            .collect()
    }

    /// Position of the selection in `rows`, following the interface (its
    /// namespace and name) and falling back to the same position when it
    /// is gone.
    pub fn selected_index(&self, rows: &Rows) -> Option<usize> {
        if rows.is_empty() {
            return None;
        }
        let fallback = self.selected_position.min(rows.len() - 1);
        let Some(at) = self.selected.as_ref() else {
            return Some(fallback);
        };
        // Usually the selection has not moved: check there first.
        if rows.is(self.selected_position, at) {
            return Some(self.selected_position);
        }
        (0..rows.len()).find(|&i| rows.is(i, at)).or(Some(fallback))
    }

    fn select_in(&mut self, previous: Option<&Sample>, current: &Sample, index: usize) {
        self.refresh(previous, current);
        if let Some(row) = self.rows(current).get(index) {
            self.selected = Some(InterfaceRef::of(row.iface));
            self.selected_position = index;
        }
    }

    pub fn select_row(&mut self, previous: Option<&Sample>, current: &Sample, index: usize) {
        self.select_in(previous, current, index);
    }

    /// Applies a view action; returns whether anything changed.
    pub fn handle(&mut self, action: Action, previous: Option<&Sample>, current: &Sample) -> bool {
        self.refresh(previous, current);
        let rows = self.rows(current);
        let count = rows.len();
        let at = self.selected_index(&rows).unwrap_or(0);
        if let Some(index) = self.window.move_selection(action, at, count) {
            self.select_in(previous, current, index);
            return true;
        }
        match action {
            Action::Open => {
                self.select_in(previous, current, at);
                self.detail = count > 0;
            }
            Action::Close => {
                return table::close_detail_or_filter(&mut self.detail, &mut self.filter);
            }
            Action::SortNext | Action::SortPrev => {
                self.sort = table::next_sort(
                    COLUMNS.iter().map(|c| c.column),
                    &self.on_screen,
                    self.sort,
                    action,
                );
                // Biggest first for numbers, as htop does; A-Z for text.
                self.descending = !matches!(self.sort, Column::Name | Column::State);
            }
            Action::SortInvert => self.descending = !self.descending,
            Action::Filter => self.editing_filter = true,
            _ => return false,
        }
        true
    }
}

impl TabView for InterfacesView {
    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        let (previous, current) = shown.pair();
        let Some(current) = current else {
            return Reply::Redraw(false);
        };
        if action == Action::Link {
            self.refresh(previous, current);
            let rows = self.rows(current);
            let index = self.selected_index(&rows);
            return match index.and_then(|i| rows.get(i)) {
                Some(row) => Reply::Link(Link::FlowsOnInterface {
                    name: row.iface.name.clone(),
                    addresses: row.iface.addresses.clone(),
                }),
                None => Reply::Redraw(false),
            };
        }
        Reply::Redraw(self.handle(action, previous, current))
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

impl TableRows for InterfacesView {
    fn refresh_rows(&mut self, shown: &Shown) -> Option<(usize, Option<usize>)> {
        let (previous, current) = shown.pair();
        self.refresh(previous, current?);
        let rows = self.rows(current?);
        Some((rows.len(), self.selected_index(&rows)))
    }

    fn row_matches(&self, index: usize, search: &Expr, shown: &Shown) -> bool {
        let Some(current) = shown.current() else {
            return false;
        };
        let row = self.rows(current).get(index);
        row.is_some_and(|row| search.matches(&InSample::new(&row, current)))
    }

    fn select_at(&mut self, index: usize, shown: &Shown) {
        if let (previous, Some(current)) = shown.pair() {
            self.select_row(previous, current, index);
        }
    }

    fn covered(&self) -> bool {
        self.detail
    }
}
