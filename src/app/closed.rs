//! The Sockets tab's Closed view: the last connections that ended, up to
//! the shown sample, from the samples' connection logs (so live, paused and
//! replayed views agree). Sorted by a column, filtered by the tab's filter.
//! Rendering lives in ui/closed.rs.

use super::format::{self, fit_endpoint};
use super::history::History;
use super::keymap::Action;
use super::table::spec;
use super::table::{self, Align, CellText, Window};
use super::view::{Reply, Shown};
use crate::model::closed::ClosedConn;
use crate::model::filter::rows::InSample;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedColumn {
    Time,
    Process,
    Local,
    Peer,
    Sent,
    Received,
    Duration,
    Rtt,
    Retrans,
    Ending,
}

/// A column's sort comparison and cell text in its width.
type Sort = fn(&ClosedConn, &ClosedConn) -> Ordering;
type Text = fn(&ClosedConn, u16) -> CellText;
pub type ClosedSpec = table::ColumnSpec<ClosedColumn, Sort, Text>;

use Align::{Left, Right};

/// Table order. At 80 columns: the process, both endpoints, bytes both ways
/// and the ending (the question is "how did it end"); time, duration, rtt
/// and retransmits from 90 (the info line below names the selected row's
/// time and duration); at 40 the peer and the ending.
pub const CLOSED_COLUMNS: &[ClosedSpec] = &[
    spec(
        (ClosedColumn::Time, "Time", 8, 3),
        Left,
        |a, b| a.t.total_cmp(&b.t),
        |c, _| crate::clock::local_hms(c.t).into(),
    ),
    spec(
        (ClosedColumn::Process, "Process", 11, 2),
        Left,
        |a, b| a.process().cmp(b.process()),
        |c, _| match c.pid() {
            Some(pid) => format!("{}/{pid}", c.process()).into(),
            None => "-".into(),
        },
    ),
    spec(
        (ClosedColumn::Local, "Local", 17, 1),
        Left,
        |a, b| a.local.cmp(&b.local),
        |c, width| fit_endpoint(&c.local.to_string(), width).into(),
    ),
    spec(
        (ClosedColumn::Peer, "Peer", 17, 0),
        Left,
        |a, b| a.peer.cmp(&b.peer),
        |c, width| fit_endpoint(&c.peer.to_string(), width).into(),
    ),
    spec(
        (ClosedColumn::Sent, "Sent", 8, 2),
        Right,
        |a, b| a.bytes_sent.cmp(&b.bytes_sent),
        |c, _| bytes(c.bytes_sent).into(),
    ),
    spec(
        (ClosedColumn::Received, "Recv", 8, 2),
        Right,
        |a, b| a.bytes_received.cmp(&b.bytes_received),
        |c, _| bytes(c.bytes_received).into(),
    ),
    spec(
        (ClosedColumn::Duration, "Dur", 6, 3),
        Right,
        |a, b| {
            let seconds = |c: &ClosedConn| c.duration_s.unwrap_or(-1.0);
            seconds(a).total_cmp(&seconds(b))
        },
        |c, _| duration(c.duration_s).into(),
    ),
    spec(
        (ClosedColumn::Rtt, "rtt ms", 7, 4),
        Right,
        |a, b| a.rtt_us.cmp(&b.rtt_us),
        |c, _| format!("{:.2}", f64::from(c.rtt_us) / 1000.0).into(),
    ),
    spec(
        (ClosedColumn::Retrans, "retr", 5, 4),
        Right,
        |a, b| a.retrans.cmp(&b.retrans),
        |c, _| c.retrans.to_string().into(),
    ),
    spec(
        (ClosedColumn::Ending, "How", 12, 0),
        Left,
        |a, b| a.ending.name().cmp(b.ending.name()),
        |c, _| c.ending.name().into(),
    ),
];

fn bytes(count: Option<u64>) -> String {
    count.map_or("-".to_string(), |b| format::bytes_short(b as f64))
}

/// How long a connection lived; "<tick" when no sample saw it alive.
pub fn duration(seconds: Option<f64>) -> String {
    match seconds {
        None => "<tick".to_string(),
        Some(s) if s < 60.0 => format!("{s:.1}s"),
        Some(s) => format!("{:.0}m", s / 60.0),
    }
}

#[derive(Debug, Clone)]
pub struct ClosedView {
    pub sort: ClosedColumn,
    pub descending: bool,
    pub window: Window,
    pub selected: usize,
    /// How many of the latest closed connections are listed (the config
    /// file's `closed_rows`).
    pub limit: usize,
    /// The columns drawn last time: the sort cycles through these.
    pub on_screen: Vec<ClosedColumn>,
    rows: Vec<ClosedConn>,
    /// What `rows` was built for: shown sample time, sort, filter.
    rows_for: Option<(f64, ClosedColumn, bool, String)>,
}

impl Default for ClosedView {
    fn default() -> Self {
        Self {
            sort: ClosedColumn::Time,
            descending: true,
            window: Window::default(),
            selected: 0,
            limit: crate::model::closed::DEFAULT_VIEW_ROWS,
            on_screen: Vec::new(),
            rows: Vec::new(),
            rows_for: None,
        }
    }
}

impl ClosedView {
    /// The rows for the sample at `index`: the latest `limit` connections
    /// that ended at or before it, filtered and sorted; rebuilt only when
    /// the sample, the sort or the filter changed.
    pub fn rows(&mut self, history: &History, index: usize, filter: &str) -> &[ClosedConn] {
        let mono = history.get(index).map_or(0.0, |s| s.mono);
        let wanted = (mono, self.sort, self.descending, filter.to_string());
        if self.rows_for.as_ref() != Some(&wanted) {
            let mut rows = Vec::new();
            let filter = super::view::row_filter(filter);
            'samples: for i in (0..=index).rev() {
                let Some(sample) = history.get(i) else {
                    continue;
                };
                let Some(log) = sample.closed.as_ref() else {
                    continue;
                };
                for conn in log.conns.iter().rev() {
                    if rows.len() >= self.limit {
                        break 'samples;
                    }
                    if filter.matches(&InSample::new(conn, sample)) {
                        rows.push(conn.clone());
                    }
                }
            }
            let (column, descending) = (self.sort, self.descending);
            rows.sort_by(|a, b| {
                let by = compare(a, b, column);
                let by = if descending { by.reverse() } else { by };
                by.then_with(|| b.t.total_cmp(&a.t))
            });
            self.rows = rows;
            self.rows_for = Some(wanted);
        }
        &self.rows
    }

    /// Row `index` as the rows were last built.
    pub fn row(&self, index: usize) -> Option<&ClosedConn> {
        self.rows.get(index)
    }

    /// Applies a move or sort action over `len` rows; whether anything
    /// changed.
    pub fn handle(&mut self, action: Action, len: usize) -> bool {
        if let Some(index) = self.window.move_selection(action, self.selected, len) {
            self.selected = index;
            return true;
        }
        match action {
            Action::SortNext | Action::SortPrev => {
                let all = CLOSED_COLUMNS.iter().map(|spec| spec.column);
                self.sort = table::next_sort(all, &self.on_screen, self.sort, action);
                self.descending = !matches!(
                    self.sort,
                    ClosedColumn::Process
                        | ClosedColumn::Local
                        | ClosedColumn::Peer
                        | ClosedColumn::Ending
                );
            }
            Action::SortInvert => self.descending = !self.descending,
            _ => return false,
        }
        true
    }
}

/// A view of the connection log that the Sockets tab lists in place of
/// the open sockets (Closed, Failed): rows built from the history up to
/// the shown sample, moved through and sorted by the same keys.
pub trait LogView {
    /// How many rows the view lists at the sample at `index`.
    fn row_count(&mut self, history: &History, index: usize, filter: &str) -> usize;
    /// Applies a move or sort action over `len` rows; whether anything
    /// changed.
    fn apply(&mut self, action: Action, len: usize) -> bool;
}

impl LogView for ClosedView {
    fn row_count(&mut self, history: &History, index: usize, filter: &str) -> usize {
        self.rows(history, index, filter).len()
    }

    fn apply(&mut self, action: Action, len: usize) -> bool {
        self.handle(action, len)
    }
}

/// A key of the Sockets tab while a log view shows: moves and sorts
/// there; the filter is the tab's (`filter`, `editing_filter`).
pub fn on_action(
    view: &mut impl LogView,
    filter: &mut String,
    editing_filter: &mut bool,
    action: Action,
    shown: &Shown,
) -> Reply {
    match action {
        Action::Filter => {
            *editing_filter = true;
            Reply::Redraw(true)
        }
        Action::Close => Reply::Redraw(table::close_detail_or_filter(&mut false, filter)),
        _ => {
            let Some(index) = shown.index else {
                return Reply::Redraw(false);
            };
            let len = view.row_count(shown.history, index, filter);
            Reply::Redraw(view.apply(action, len))
        }
    }
}

fn compare(a: &ClosedConn, b: &ClosedConn, column: ClosedColumn) -> Ordering {
    let spec = CLOSED_COLUMNS.iter().find(|spec| spec.column == column);
    spec.map_or(Ordering::Equal, |spec| (spec.sort)(a, b))
}
