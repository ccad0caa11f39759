//! The Sockets tab's row order, re-sorted off the UI thread at scale.
//!
//! A new sort key, a reversed sort, a new filter or a selection deep in
//! the table makes a selection over every row: at a million sockets that
//! takes from a few hundred milliseconds to seconds, and on the UI thread
//! it froze the screen as long. As in the Conntrack tab (conntrack_order),
//! when the rows are many and their sample is shared (the live view: the
//! preparation worker built them), the new order is made on a thread of its
//! own from a copy of the shown rows; until it is done the tab keeps
//! showing the order it had, of the same sample, marked "sorting…", and
//! keys move through that order at once. One sort runs at a time; a newer
//! request replaces the waiting one and starts when the running one ends,
//! whose order is shown only if it is still the one asked for last (of
//! the sample shown).
//!
//! Below `inline_below` rows, without a shared sample (replay, tests,
//! benches, a paused view's own rebuild) or without `background`, the same
//! `SocketRows::get` runs inline: both paths give the same order.

use super::socket_rows::{Inputs, SocketRows, Want, WantOwned};
use crate::model::Sample;
use std::sync::mpsc::{Receiver, TryRecvError};

/// Fewer rows than this are sorted inline: a selection over them takes a
/// few milliseconds.
pub const INLINE_BELOW: usize = 50_000;

/// What a background sort is asked for: the inputs and the row position
/// that must be in its final place.
type Request = (Inputs, usize);

#[derive(Debug)]
pub struct SocketOrder {
    /// The order shown: it indexes the shown sample's sockets.
    pub shown: SocketRows,
    running: Option<(Request, Receiver<SocketRows>)>,
    /// The order asked for last, when it is not the shown one yet.
    wanted: Option<(Request, WantOwned)>,
    /// What the view asked for last: a sort made for anything else (the
    /// view moved on meanwhile) is dropped when it ends.
    latest: Option<Inputs>,
    /// Sort on a thread (the live view) rather than inline.
    pub background: bool,
    /// Rows from which a sort goes to a thread.
    pub inline_below: usize,
}

impl Default for SocketOrder {
    fn default() -> Self {
        Self {
            shown: SocketRows::default(),
            running: None,
            wanted: None,
            latest: None,
            background: false,
            inline_below: INLINE_BELOW,
        }
    }
}

impl Clone for SocketOrder {
    /// The shown order only: a running sort belongs to the original.
    fn clone(&self) -> Self {
        Self {
            shown: self.shown.clone(),
            running: None,
            wanted: None,
            latest: None,
            background: self.background,
            inline_below: self.inline_below,
        }
    }
}

/// Sorts `rows` (a copy of the shown ones) as `want` asks on a thread.
fn start(
    request: Request,
    mut rows: SocketRows,
    want: WantOwned,
) -> (Request, Receiver<SocketRows>) {
    let (done, running) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        crate::collect::priority::lower_this_thread();
        if let Some(sample) = rows.sample.clone() {
            rows.get(&sample, &want.want());
        }
        // Nobody waits any more when the view is gone: nothing to do.
        let _ = done.send(rows);
    });
    (request, running)
}

impl SocketOrder {
    /// The rows for `current` as `want` asks: made inline, or (see the
    /// module) asked of a thread while the shown order stays.
    pub fn get(&mut self, current: &Sample, want: &Want) -> &[u32] {
        let inputs = super::socket_rows::inputs(current, want);
        self.latest = Some(inputs.clone());
        self.poll();
        let shared = self
            .shown
            .sample
            .as_ref()
            .is_some_and(|s| s.mono == current.mono);
        let built = self.shown.built_for();
        let same = built == Some(&inputs);
        // A new filter (or scope, or expanded peer) goes over every socket;
        // a new sort over the rows.
        let rows = match built {
            Some(b) if (&b.3, b.5, b.6) == (&inputs.3, inputs.5, inputs.6) => {
                self.shown.unsorted_len()
            }
            _ => current.sockets.len(),
        };
        let many = if same {
            self.shown.to_select(want.upto) >= self.inline_below
        } else {
            rows >= self.inline_below
        };
        if !(self.background && shared && many) {
            self.wanted = None;
            return self.shown.get(current, want);
        }
        // A deep selection sorts twice as far, so scrolling on needs few.
        let upto = if same {
            want.upto.saturating_mul(2)
        } else {
            want.upto
        };
        let asked = WantOwned::from(want);
        self.ask((inputs, want.upto), WantOwned { upto, ..asked });
        // Meanwhile the shown order, grown only where that is cheap.
        if self.shown.to_select(want.upto) < self.inline_below {
            self.shown.grow(current, want.upto, want.limits);
        }
        &self.shown.rows
    }

    /// Asks for `request` (a newer ask replaces a waiting one).
    fn ask(&mut self, request: Request, want: WantOwned) {
        if self.running.as_ref().is_some_and(|(r, _)| *r == request) {
            self.wanted = None;
            return;
        }
        self.wanted = Some((request, want));
        self.poll();
    }

    /// Takes a finished sort (when it is of the sample shown) and starts
    /// the wanted one; returns whether the shown order changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        if let Some((_, running)) = &self.running {
            match running.try_recv() {
                Ok(rows) => {
                    self.running = None;
                    let mono = |r: &SocketRows| r.sample.as_ref().map(|s| s.mono);
                    let current = mono(&rows).is_some() && mono(&rows) == mono(&self.shown);
                    if current && rows.built_for() == self.latest.as_ref() {
                        self.shown = rows;
                        changed = true;
                    }
                }
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => self.running = None,
            }
        }
        let Some((request, want)) = self.wanted.take() else {
            return changed;
        };
        let shown_mono = self.shown.sample.as_ref().map(|s| s.mono);
        if shown_mono != Some(request.0.0) {
            // Asked of a sample no longer shown.
            return changed;
        }
        let (inputs, upto) = &request;
        if self.shown.built_for() == Some(inputs) && self.shown.to_select(*upto) == 0 {
            // The sort that just ended went as far.
            return changed;
        }
        self.running = Some(start(request, self.shown.clone(), want));
        changed
    }

    /// Whether the shown order is not yet the one asked for last.
    pub fn sorting(&self) -> bool {
        self.running.is_some() || self.wanted.is_some()
    }

    /// Shows rows the preparation worker made for a new sample: a sort
    /// asked of the sample before is of no use any more.
    pub fn install(&mut self, rows: SocketRows) {
        self.shown = rows;
        self.wanted = None;
    }

    /// Lets go of the shown sample (its rows are not shown any more), so
    /// the history may free its sockets.
    pub fn forget_sample(&mut self) {
        self.shown.sample = None;
        self.wanted = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::sockets::Column;
    use crate::findings::Thresholds;
    use std::sync::Arc;

    /// socket_rows' sample at `mono`, with Send-Q spread too (a sort key).
    fn sample(mono: f64, n: u32) -> Arc<Sample> {
        let mut sample = crate::app::socket_rows::tests::sample(n);
        sample.mono = mono;
        for i in 0..sample.sockets.len() {
            sample
                .sockets
                .modify(i, |s| s.send_q = (i as u32 * 31) % 13);
        }
        Arc::new(sample)
    }

    fn want(sort: Column, descending: bool, filter: &str, upto: usize) -> WantOwned {
        WantOwned {
            sort,
            descending,
            filter: filter.into(),
            scope: None,
            tree: false,
            expanded: None,
            limits: Thresholds::DEFAULT,
            upto,
            names: None,
            names_generation: 0,
        }
    }

    /// Rows as the preparation worker hands them over: built for the
    /// default sort, with their shared sample.
    fn prepared(current: &Arc<Sample>) -> SocketRows {
        let mut rows = SocketRows::default();
        rows.get(current, &want(Column::RecvQ, true, "", 30).want());
        rows.sample = Some(current.clone());
        rows
    }

    /// An order on a thread: `inline_below` 0 sends every sort there.
    fn background(current: &Arc<Sample>) -> SocketOrder {
        let mut order = SocketOrder {
            background: true,
            inline_below: 0,
            ..SocketOrder::default()
        };
        order.install(prepared(current));
        order
    }

    fn wait(order: &mut SocketOrder) {
        while order.sorting() {
            order.poll();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn a_sort_on_a_thread_gives_the_inline_order_and_shows_the_old_one_meanwhile() {
        let current = sample(1.0, 5000);
        let cases = [
            (Column::Local, false, "", 40),
            (Column::RecvQ, false, "", 40),
            (Column::SendQ, true, "", 4999),
            (Column::Peer, true, "time", 100),
            (Column::State, false, "", usize::MAX),
        ];
        for (sort, descending, filter, upto) in cases {
            let asked = want(sort, descending, filter, upto);
            let mut inline = SocketRows::default();
            let expected = inline.get(&current, &asked.want()).to_vec();
            let mut order = background(&current);
            let before = order.shown.rows.clone();
            let shown = order.get(&current, &asked.want()).to_vec();
            assert!(order.sorting(), "{sort:?}: sorted on a thread");
            assert_eq!(shown.len(), before.len());
            assert_eq!(shown[..30], before[..30], "the old order meanwhile");
            wait(&mut order);
            let sorted = order.shown.sorted();
            assert!(sorted >= upto.min(expected.len()));
            let got = order.get(&current, &asked.want()).to_vec();
            assert!(!order.sorting(), "{sort:?}: nothing more to sort");
            assert_eq!(got.len(), expected.len());
            let n = inline.sorted().min(sorted);
            assert_eq!(got[..n], expected[..n], "{sort:?} {filter:?}");
            assert_eq!(order.shown.groups, inline.groups);
        }
    }

    #[test]
    fn few_rows_or_no_shared_sample_sort_inline() {
        let current = sample(1.0, 2000);
        let asked = want(Column::Local, false, "", 40);
        let mut order = background(&current);
        order.inline_below = INLINE_BELOW;
        order.get(&current, &asked.want());
        assert!(!order.sorting(), "2000 rows: inline");
        assert_eq!(order.shown.built_for().unwrap().1, Column::Local);
        let mut order = background(&current);
        order.shown.sample = None;
        order.get(&current, &asked.want());
        assert!(!order.sorting(), "no shared sample: inline");
        assert_eq!(order.shown.built_for().unwrap().1, Column::Local);
    }

    #[test]
    fn a_newer_request_supersedes_the_waiting_one() {
        let current = sample(1.0, 5000);
        let mut order = background(&current);
        // Three sort keys in a row: the first runs, the second waits and is
        // replaced by the third.
        order.get(&current, &want(Column::Local, false, "", 40).want());
        order.get(&current, &want(Column::Peer, false, "", 40).want());
        order.get(&current, &want(Column::SendQ, true, "", 40).want());
        let waiting = order.wanted.as_ref().map(|(r, _)| r.0.1);
        assert!(
            waiting.is_none() || waiting == Some(Column::SendQ),
            "only the newest request waits"
        );
        // Until then no order but the shown one or the newest shows.
        while order.sorting() {
            order.poll();
            let sort = order.shown.built_for().unwrap().1;
            assert!(matches!(sort, Column::RecvQ | Column::SendQ), "{sort:?}");
        }
        assert_eq!(order.shown.built_for().unwrap().1, Column::SendQ);
        // Back to the shown order before a sort ends: that sort is dropped.
        order.get(&current, &want(Column::Local, false, "", 40).want());
        order.get(&current, &want(Column::SendQ, true, "", 40).want());
        wait(&mut order);
        assert_eq!(order.shown.built_for().unwrap().1, Column::SendQ);
        // A sort asked of a sample no longer shown is dropped, and one that
        // finishes after a new sample came is not shown.
        order.get(&current, &want(Column::Local, false, "", 40).want());
        let next = sample(2.0, 5000);
        order.install(prepared(&next));
        wait(&mut order);
        assert_eq!(order.shown.sample.as_ref().unwrap().mono, 2.0);
        assert_eq!(order.shown.built_for().unwrap().1, Column::RecvQ);
        let mut inline = SocketRows::default();
        let expected = inline.get(&next, &want(Column::RecvQ, true, "", 30).want());
        assert_eq!(order.shown.rows[..30], expected[..30]);
    }

    #[test]
    fn a_selection_past_the_sorted_rows_grows_them_on_a_thread() {
        let current = sample(1.0, 20_000);
        let mut order = background(&current);
        let first = order.shown.sorted();
        let asked = want(Column::RecvQ, true, "", first + 3000);
        order.get(&current, &asked.want());
        assert!(order.sorting(), "grown on a thread");
        assert_eq!(order.shown.sorted(), first, "the shown order meanwhile");
        wait(&mut order);
        assert!(order.shown.sorted() >= first + 3000);
        let mut inline = SocketRows::default();
        let expected = inline.get(&current, &want(Column::RecvQ, true, "", usize::MAX).want());
        let n = order.shown.sorted();
        assert_eq!(order.shown.rows[..n], expected[..n]);
    }
}
