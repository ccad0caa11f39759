//! The Sockets tab's Failed view (`c` twice): connections that failed and
//! DNS queries without a good answer, grouped by kind, process, container
//! and destination (`model::failed`), from the samples up to the shown one
//! (so live, paused and replayed views agree). Sorted by a column; the
//! tab's filter applies to the connections. Rendering lives in
//! ui/failed.rs.

use super::format::{self, fit_endpoint};
use super::history::History;
use super::keymap::Action;
use super::table::{self, Align, CellText, Window, spec};
use crate::model::failed::{FailCounts, FailKey, Failures};
use crate::model::filter::rows::InSample;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedColumn {
    Kind,
    Process,
    Container,
    Destination,
    Count,
    Rate,
    First,
    Last,
}

/// One group as the table lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedRow {
    pub key: FailKey,
    pub counts: FailCounts,
    /// Per second over the shown sample's interval.
    pub rate: Option<f64>,
}

impl FailedRow {
    /// "curl/4242", "-" when unknown.
    pub fn process(&self) -> String {
        match self.key.pid {
            Some(pid) => format!("{}/{pid}", self.key.comm),
            None => "-".to_string(),
        }
    }

    /// Where it went: "addr:port", "NAME TYPE @server" for DNS, "in
    /// addr:port" for a connection this host accepted.
    pub fn destination(&self) -> String {
        let key = &self.key;
        match &key.question {
            Some(question) => {
                let question = crate::text::escape_control(question);
                format!("{question} @{}", key.destination)
            }
            None if key.accepted => format!("in {}", key.destination),
            None => key.destination.clone(),
        }
    }
}

type Sort = fn(&FailedRow, &FailedRow) -> Ordering;
type Text = fn(&FailedRow, u16) -> CellText;
pub type FailedSpec = table::ColumnSpec<FailedColumn, Sort, Text>;

use Align::{Left, Right};

/// Table order. At 80 columns: the kind, the process, where it went, how
/// many and how often (the question is "what keeps failing, for whom");
/// the last time from 80, the container and first time wider; at 40 the
/// kind, the destination and the count.
pub const FAILED_COLUMNS: &[FailedSpec] = &[
    spec(
        (FailedColumn::Kind, "Kind", 13, 0),
        Left,
        |a, b| a.key.kind.name().cmp(b.key.kind.name()),
        |r, _| r.key.kind.name().into(),
    ),
    spec(
        (FailedColumn::Process, "Process", 16, 1),
        Left,
        |a, b| a.key.comm.cmp(&b.key.comm).then(a.key.pid.cmp(&b.key.pid)),
        |r, _| r.process().into(),
    ),
    spec(
        (FailedColumn::Container, "Container", 14, 3),
        Left,
        |a, b| a.key.container.cmp(&b.key.container),
        |r, _| r.key.container.as_deref().unwrap_or("-").into(),
    ),
    spec(
        (FailedColumn::Destination, "Destination", 23, 0),
        Left,
        |a, b| a.destination().cmp(&b.destination()),
        |r, width| match r.key.question {
            // The name is the question: cut the server first.
            Some(_) => format::fit(&r.destination(), usize::from(width)).into(),
            None => fit_endpoint(&r.destination(), width).into(),
        },
    ),
    spec(
        (FailedColumn::Count, "Count", 6, 0),
        Right,
        |a, b| a.counts.count.cmp(&b.counts.count),
        |r, _| r.counts.count.to_string().into(),
    ),
    spec(
        (FailedColumn::Rate, "/s", 6, 1),
        Right,
        |a, b| a.rate.unwrap_or(-1.0).total_cmp(&b.rate.unwrap_or(-1.0)),
        |r, _| format::rate(r.rate).into(),
    ),
    spec(
        (FailedColumn::First, "First", 8, 3),
        Left,
        |a, b| a.counts.first_seen.total_cmp(&b.counts.first_seen),
        |r, _| crate::clock::local_hms(r.counts.first_seen).into(),
    ),
    spec(
        (FailedColumn::Last, "Last", 8, 2),
        Left,
        |a, b| a.counts.last_seen.total_cmp(&b.counts.last_seen),
        |r, _| crate::clock::local_hms(r.counts.last_seen).into(),
    ),
];

/// The groups as of one sample, and what they were built from.
#[derive(Debug, Clone, Default)]
struct Built {
    failures: Failures,
    /// The filter the connections were taken with.
    filter: String,
}

#[derive(Debug, Clone)]
pub struct FailedView {
    pub sort: FailedColumn,
    pub descending: bool,
    pub window: Window,
    pub selected: usize,
    /// The columns drawn last time: the sort cycles through these.
    pub on_screen: Vec<FailedColumn>,
    built: Built,
    /// Wall-clock time of the first sample `built` counts, so the status
    /// line says since when.
    pub since: Option<f64>,
    rows: Vec<FailedRow>,
    /// What `rows` was built for: shown sample time, sort, filter.
    rows_for: Option<(f64, FailedColumn, bool, String)>,
}

impl Default for FailedView {
    fn default() -> Self {
        Self {
            sort: FailedColumn::Count,
            descending: true,
            window: Window::default(),
            selected: 0,
            on_screen: Vec::new(),
            built: Built::default(),
            since: None,
            rows: Vec::new(),
            rows_for: None,
        }
    }
}

impl FailedView {
    /// The groups as of the sample at `index`, filtered and sorted.
    /// Samples newer than the last built are added to it; going back in
    /// time (a replay's seek) or a new filter rebuilds from the history's
    /// first sample, so a live view keeps counting what the history has
    /// dropped since.
    pub fn rows(&mut self, history: &History, index: usize, filter: &str) -> &[FailedRow] {
        let Some(shown) = history.get(index) else {
            return &self.rows;
        };
        let wanted = (shown.mono, self.sort, self.descending, filter.to_string());
        if self.rows_for.as_ref() == Some(&wanted) {
            return &self.rows;
        }
        let built = &mut self.built;
        let behind = built
            .failures
            .last_mono
            .is_some_and(|last| last > shown.mono);
        if behind || built.filter != filter || built.failures.last_mono.is_none() {
            *built = Built {
                failures: Failures::default(),
                filter: filter.to_string(),
            };
            self.since = history.get(0).map(|s| s.t);
        }
        let expr = super::view::row_filter(filter);
        let last = built.failures.last_mono;
        let first_new = (0..=index)
            .rev()
            .take_while(|&i| {
                history
                    .get(i)
                    .is_some_and(|s| last.is_none_or(|l| s.mono > l))
            })
            .last();
        if let Some(first_new) = first_new {
            for sample in (first_new..=index).filter_map(|i| history.get(i)) {
                let keep = |conn: &_| expr.matches(&InSample::new(conn, sample));
                built.failures.add_filtered(sample, keep);
            }
        }
        let failures = &built.failures;
        let with_dns = filter.trim().is_empty();
        let mut rows: Vec<FailedRow> = failures
            .groups()
            .iter()
            .filter(|(key, _)| with_dns || !key.kind.is_dns())
            .map(|(key, counts)| FailedRow {
                key: key.clone(),
                counts: *counts,
                rate: failures.rate(counts),
            })
            .collect();
        let (column, descending) = (self.sort, self.descending);
        rows.sort_by(|a, b| {
            let by = compare(a, b, column);
            let by = if descending { by.reverse() } else { by };
            by.then_with(|| b.counts.last_seen.total_cmp(&a.counts.last_seen))
        });
        self.rows = rows;
        self.rows_for = Some(wanted);
        &self.rows
    }

    /// Failures left out beyond the group bound, as last built.
    pub fn overflow(&self) -> u64 {
        self.built.failures.overflow
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
                let all = FAILED_COLUMNS.iter().map(|spec| spec.column);
                self.sort = table::next_sort(all, &self.on_screen, self.sort, action);
                self.descending = matches!(
                    self.sort,
                    FailedColumn::Count | FailedColumn::Rate | FailedColumn::Last
                );
            }
            Action::SortInvert => self.descending = !self.descending,
            _ => return false,
        }
        true
    }
}

impl super::closed::LogView for FailedView {
    fn row_count(&mut self, history: &History, index: usize, filter: &str) -> usize {
        self.rows(history, index, filter).len()
    }

    fn apply(&mut self, action: Action, len: usize) -> bool {
        self.handle(action, len)
    }
}

fn compare(a: &FailedRow, b: &FailedRow, column: FailedColumn) -> Ordering {
    let spec = FAILED_COLUMNS.iter().find(|spec| spec.column == column);
    spec.map_or(Ordering::Equal, |spec| (spec.sort)(a, b))
}
