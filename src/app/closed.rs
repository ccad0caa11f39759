//! The Sockets tab's Closed view: the last connections that ended, up to
//! the shown sample, from the samples' connection logs (so live, paused and
//! replayed views agree). Sorted by a column, filtered by the tab's filter.
//! Rendering lives in ui/closed.rs.

use super::history::History;
use super::keymap::Action;
use super::table::{self, Window};
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

pub type ClosedSpec = table::ColumnSpec<ClosedColumn>;

/// Table order. At 80 columns: the process, both endpoints, bytes both ways
/// and the ending (the question is "how did it end"); time, duration, rtt
/// and retransmits from 90 (the info line below names the selected row's
/// time and duration); at 40 the peer and the ending.
pub const CLOSED_COLUMNS: &[ClosedSpec] = &[
    ClosedSpec {
        column: ClosedColumn::Time,
        title: "Time",
        width: 8,
        priority: 3,
    },
    ClosedSpec {
        column: ClosedColumn::Process,
        title: "Process",
        width: 11,
        priority: 2,
    },
    ClosedSpec {
        column: ClosedColumn::Local,
        title: "Local",
        width: 17,
        priority: 1,
    },
    ClosedSpec {
        column: ClosedColumn::Peer,
        title: "Peer",
        width: 17,
        priority: 0,
    },
    ClosedSpec {
        column: ClosedColumn::Sent,
        title: "Sent",
        width: 8,
        priority: 2,
    },
    ClosedSpec {
        column: ClosedColumn::Received,
        title: "Recv",
        width: 8,
        priority: 2,
    },
    ClosedSpec {
        column: ClosedColumn::Duration,
        title: "Dur",
        width: 6,
        priority: 3,
    },
    ClosedSpec {
        column: ClosedColumn::Rtt,
        title: "rtt ms",
        width: 7,
        priority: 4,
    },
    ClosedSpec {
        column: ClosedColumn::Retrans,
        title: "retr",
        width: 5,
        priority: 4,
    },
    ClosedSpec {
        column: ClosedColumn::Ending,
        title: "How",
        width: 12,
        priority: 0,
    },
];

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

/// A key of the Sockets tab while the Closed view shows: moves and sorts
/// here; the filter is the tab's (`filter`, `editing_filter`).
pub fn on_action(
    view: &mut ClosedView,
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
            let len = view.rows(shown.history, index, filter).len();
            Reply::Redraw(view.handle(action, len))
        }
    }
}

fn compare(a: &ClosedConn, b: &ClosedConn, column: ClosedColumn) -> Ordering {
    match column {
        ClosedColumn::Time => a.t.total_cmp(&b.t),
        ClosedColumn::Process => a.process().cmp(b.process()),
        ClosedColumn::Local => a.local.cmp(&b.local),
        ClosedColumn::Peer => a.peer.cmp(&b.peer),
        ClosedColumn::Sent => a.bytes_sent.cmp(&b.bytes_sent),
        ClosedColumn::Received => a.bytes_received.cmp(&b.bytes_received),
        ClosedColumn::Duration => a
            .duration_s
            .unwrap_or(-1.0)
            .total_cmp(&b.duration_s.unwrap_or(-1.0)),
        ClosedColumn::Rtt => a.rtt_us.cmp(&b.rtt_us),
        ClosedColumn::Retrans => a.retrans.cmp(&b.retrans),
        ClosedColumn::Ending => a.ending.name().cmp(b.ending.name()),
    }
}
