//! The Processes tab's state: which process uses the network, as nethogs
//! asks it. Rows come from `model::processes::process_rows` (TCP bytes from
//! tcp_info deltas, UDP from captured flows), computed once per sample, sort
//! or filter, not once per frame. Enter lists the selected process's
//! sockets; `x` goes to them in the Sockets tab. Drawing: ui/processes.rs.

use super::format::{self, count_short, fit, per_s};
use super::keymap::{Action, Key};
use super::links::Link;
use super::table::spec;
use super::table::{self, Align, CellText, ColumnSpec as Spec, Window};
use super::view::{self, Reply, Shown, TabView, TableRows};
use crate::model::filter::Expr;
use crate::model::filter::rows::InSample;
use crate::model::processes::{ProcessRow, process_rows};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Pid,
    Command,
    User,
    Cgroup,
    Send,
    Recv,
    Udp,
    Sockets,
    Estab,
    Listen,
    Retrans,
    Rtt,
}

/// A column's sort comparison and cell text (in its width).
type Sort = fn(&ProcessRow, &ProcessRow) -> Ordering;
type Text = fn(&ProcessRow, u16) -> CellText;
pub type ColumnSpec = Spec<Column, Sort, Text>;

use Align::{Left, Right};

/// Table order. At 80 columns: pid, command, the two TCP rates, UDP, the
/// socket counts and the user; the cgroup, retransmits and RTT from 100.
pub const COLUMNS: &[ColumnSpec] = &[
    spec(
        (Column::Pid, "PID", 7, 0),
        Left,
        |a, b| a.pid.cmp(&b.pid),
        |r, _| r.pid.to_string().into(),
    ),
    spec(
        (Column::Command, "Command", 15, 0),
        Left,
        |a, b| a.command.cmp(&b.command),
        |r, width| fit(&r.command, usize::from(width)).into(),
    ),
    spec(
        (Column::User, "User", 8, 3),
        Left,
        |a, b| a.user.cmp(&b.user),
        |r, width| fit(&r.user, usize::from(width)).into(),
    ),
    spec(
        (Column::Cgroup, "Cgroup", 20, 4),
        Left,
        |a, b| a.place().cmp(&b.place()),
        |r, _| r.place().unwrap_or_else(|| "-".into()).into(),
    ),
    spec(
        (Column::Send, "TCP send/s", 10, 0),
        Right,
        |a, b| rate(a.tcp_send_per_s).total_cmp(&rate(b.tcp_send_per_s)),
        |r, _| per_s(r.tcp_send_per_s).into(),
    ),
    spec(
        (Column::Recv, "TCP recv/s", 10, 0),
        Right,
        |a, b| rate(a.tcp_recv_per_s).total_cmp(&rate(b.tcp_recv_per_s)),
        |r, _| per_s(r.tcp_recv_per_s).into(),
    ),
    spec(
        (Column::Udp, "UDP/s", 8, 2),
        Right,
        |a, b| rate(a.udp_per_s).total_cmp(&rate(b.udp_per_s)),
        |r, _| per_s(r.udp_per_s).into(),
    ),
    spec(
        (Column::Sockets, "Socks", 5, 1),
        Right,
        |a, b| a.sockets.cmp(&b.sockets),
        |r, width| count_short(r.sockets as u64, usize::from(width)).into(),
    ),
    spec(
        (Column::Estab, "Estab", 5, 2),
        Right,
        |a, b| a.established().cmp(&b.established()),
        |r, width| count_short(r.established() as u64, usize::from(width)).into(),
    ),
    spec(
        (Column::Listen, "Lstn", 4, 3),
        Right,
        |a, b| a.listening().cmp(&b.listening()),
        |r, width| count_short(r.listening() as u64, usize::from(width)).into(),
    ),
    spec(
        (Column::Retrans, "Retr/s", 6, 4),
        Right,
        |a, b| rate(a.retrans_per_s).total_cmp(&rate(b.retrans_per_s)),
        |r, _| format::rate(r.retrans_per_s).into(),
    ),
    spec(
        (Column::Rtt, "max rtt", 7, 4),
        Right,
        |a, b| a.worst_rtt_us.cmp(&b.worst_rtt_us),
        |r, _| {
            let ms = |us: u32| format!("{:.1}", f64::from(us) / 1000.0);
            r.worst_rtt_us.map_or_else(|| "–".into(), ms).into()
        },
    ),
];

/// A rate for sorting: unknown below zero.
fn rate(value: Option<f64>) -> f64 {
    value.unwrap_or(-1.0)
}

/// The column's descriptor.
fn spec_of(column: Column) -> Option<&'static ColumnSpec> {
    COLUMNS.iter().find(|spec| spec.column == column)
}

/// Columns sorted in ascending order when chosen (text, left-aligned); the
/// rest (numbers) start with the largest.
fn ascending_first(column: Column) -> bool {
    spec_of(column).is_some_and(|spec| spec.align == Left)
}

/// The sample times (shown, previous), sort, order and filter of the rows.
type RowsFor = (f64, Option<f64>, Option<Column>, bool, String, Option<u16>);

#[derive(Debug, Clone)]
pub struct ProcessesView {
    /// None: the default order, busiest (sent + received) first.
    pub sort: Option<Column>,
    pub descending: bool,
    pub selected: Option<u32>,
    pub selected_position: usize,
    pub window: Window,
    pub filter: String,
    pub editing_filter: bool,
    /// The selected process's sockets are listed (Enter; Esc closes).
    pub detail: bool,
    /// The columns drawn last time: the sort cycles through these.
    pub on_screen: Vec<Column>,
    /// The namespace scope (Enter in Namespaces), before the filter.
    pub scope: Option<view::NsScope>,
    /// The reverse names known while names are on (N), for `host:NAME`
    /// (`App::share_names` sets them with each sample and on N).
    pub names: Option<std::sync::Arc<crate::model::filter::KnownNames>>,
    rows: Vec<ProcessRow>,
    /// What `rows` was computed for.
    rows_for: Option<RowsFor>,
}

impl Default for ProcessesView {
    fn default() -> Self {
        Self {
            sort: None,
            descending: true,
            selected: None,
            selected_position: 0,
            window: Window::default(),
            filter: String::new(),
            editing_filter: false,
            detail: false,
            on_screen: Vec::new(),
            scope: None,
            names: None,
            rows: Vec::new(),
            rows_for: None,
        }
    }
}

impl ProcessesView {
    /// The rows for the shown sample, filtered and sorted.
    pub fn rows(&mut self, shown: &Shown) -> &[ProcessRow] {
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
            view::scope_id(self.scope.as_ref()),
        );
        if self.rows_for.as_ref() != Some(&wanted) {
            let mut rows = process_rows(previous, current);
            let filter = view::scoped_filter(self.scope.as_ref(), &self.filter);
            let names = self.names.as_deref();
            rows.retain(|r| filter.matches(&InSample::new(r, current).with_names(names)));
            if let Some(column) = self.sort {
                let descending = self.descending;
                rows.sort_by(|a, b| {
                    let by = spec_of(column).map_or(Ordering::Equal, |s| (s.sort)(a, b));
                    if descending { by.reverse() } else { by }.then(a.pid.cmp(&b.pid))
                });
            } else if !self.descending {
                rows.reverse();
            }
            self.rows = rows;
            self.rows_for = Some(wanted);
        }
        &self.rows
    }

    /// The selected row's index, following the process by its pid and
    /// falling back to the same position when it is gone.
    pub fn selected_index(&self) -> Option<usize> {
        if self.rows.is_empty() {
            return None;
        }
        self.selected
            .and_then(|pid| self.rows.iter().position(|r| r.pid == pid))
            .or(Some(self.selected_position.min(self.rows.len() - 1)))
    }

    fn select(&mut self, index: usize) {
        if let Some(row) = self.rows.get(index) {
            self.selected = Some(row.pid);
            self.selected_position = index;
        }
    }

    /// The selected row of the shown sample.
    pub fn selection(&mut self, shown: &Shown) -> Option<ProcessRow> {
        self.rows(shown);
        let at = self.selected_index()?;
        self.select(at);
        self.rows.get(at).cloned()
    }
}

impl TabView for ProcessesView {
    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        let len = self.rows(shown).len();
        let at = self.selected_index().unwrap_or(0);
        if let Some(index) = self.window.move_selection(action, at, len) {
            self.select(index);
            return Reply::Redraw(true);
        }
        match action {
            Action::Open => {
                self.select(at);
                self.detail = len > 0;
            }
            Action::Close => {
                return Reply::Redraw(table::close_detail_or_filter(
                    &mut self.detail,
                    &mut self.filter,
                ));
            }
            Action::Link => {
                return match self.selection(shown) {
                    Some(row) => Reply::Link(Link::Sockets {
                        selected: None,
                        filter: format!("pid:{}", row.pid),
                    }),
                    None => Reply::Redraw(false),
                };
            }
            Action::SortNext | Action::SortPrev => {
                let current = self.sort.unwrap_or(Column::Send);
                let column = table::next_sort(
                    COLUMNS.iter().map(|c| c.column),
                    &self.on_screen,
                    current,
                    action,
                );
                self.sort = Some(column);
                self.descending = !ascending_first(column);
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

impl TableRows for ProcessesView {
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

    fn covered(&self) -> bool {
        self.detail
    }
}
