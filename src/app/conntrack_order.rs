//! The Conntrack tab's row order, sorted off the UI thread.
//!
//! A million entries take seconds to filter and sort, and a new dump comes
//! every few seconds: sorted on the UI thread, every dump and every sort
//! key froze the screen that long. Here a sort runs on a thread of its own
//! with the dump's sample (shared, `Arc`), and until it is done the tab
//! keeps showing the order it had, of the dump it was made for (marked
//! "sorting…"): keys move through that order at once. One sort runs at a
//! time; a newer request starts when it ends (the screen shows the finished
//! one meanwhile). Without `background` (tests, replay's first frames
//! before the loop runs, benches) the same sort runs inline.

use super::conntrack::{Column, compare};
use super::view;
use crate::model::Sample;
use crate::model::conntrack::ConntrackEntry;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};

/// What an order is made for: the dump (its sample's time and its
/// length), the sort column, descending, the filter.
type OrderFor = (u64, usize, Column, bool, String);

/// Filtered, sorted indices into one dump's entries.
#[derive(Debug)]
struct Order {
    sample: Arc<Sample>,
    order: Vec<u32>,
    made_for: OrderFor,
}

#[derive(Debug, Default)]
pub struct Orders {
    shown: Option<Order>,
    running: Option<(OrderFor, Receiver<Order>)>,
    /// The order asked for last, when it is not the shown one yet.
    wanted: Option<(OrderFor, Arc<Sample>)>,
    /// Sort on a thread (the live view) rather than inline.
    pub background: bool,
}

/// The rows of an order: entries of its dump, in its order.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    entries: &'a [ConntrackEntry],
    order: &'a [u32],
}

impl<'a> Rows<'a> {
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&'a ConntrackEntry> {
        let entries = self.entries;
        self.order.get(index).map(|&i| &entries[i as usize])
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a ConntrackEntry> + 'a {
        let entries = self.entries;
        self.order.iter().map(move |&i| &entries[i as usize])
    }

    /// All the entries of the dump, shown or filtered out.
    pub fn entries(&self) -> &'a [ConntrackEntry] {
        self.entries
    }
}

fn entries(sample: &Sample) -> &[ConntrackEntry] {
    sample.conntrack.entries.as_deref().unwrap_or_default()
}

/// The filtered entries of `sample`'s dump, sorted as asked (ties by the
/// flow, so the order is the same every time).
fn sort(sample: &Sample, column: Column, descending: bool, filter: &str) -> Vec<u32> {
    let entries = entries(sample);
    let filter = view::row_filter(filter);
    let mut order: Vec<u32> = (0..entries.len() as u32)
        .filter(|&i| filter.matches(&entries[i as usize]))
        .collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&entries[a as usize], &entries[b as usize]);
        let order = compare(a, b, column).then_with(|| compare(a, b, Column::Flow));
        if descending { order.reverse() } else { order }
    });
    order
}

fn start(made_for: OrderFor, sample: Arc<Sample>) -> (OrderFor, Receiver<Order>) {
    let (done, running) = std::sync::mpsc::channel();
    let asked = made_for.clone();
    std::thread::spawn(move || {
        crate::collect::priority::lower_this_thread();
        let (_, _, column, descending, filter) = &asked;
        let order = sort(&sample, *column, *descending, filter);
        // Nobody waits any more when the tab was closed: nothing to do.
        let _ = done.send(Order {
            sample,
            order,
            made_for: asked,
        });
    });
    (made_for, running)
}

impl Orders {
    /// Asks for the order of the dump in `sample` by `column`, `descending`
    /// and `filter`: made at once inline, else on a thread (see the module).
    pub fn want(&mut self, sample: Arc<Sample>, column: Column, descending: bool, filter: &str) {
        let made_for = (
            sample.mono.to_bits(),
            entries(&sample).len(),
            column,
            descending,
            filter.to_string(),
        );
        if self.shown.as_ref().is_some_and(|s| s.made_for == made_for) {
            self.wanted = None;
            return;
        }
        if !self.background {
            let order = sort(&sample, column, descending, filter);
            self.shown = Some(Order {
                sample,
                order,
                made_for,
            });
            self.wanted = None;
            return;
        }
        self.wanted = Some((made_for, sample));
        self.poll();
    }

    /// Takes a finished sort and starts the wanted one; returns whether the
    /// shown order changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        if let Some((_, running)) = &self.running {
            match running.try_recv() {
                Ok(order) => {
                    self.shown = Some(order);
                    self.running = None;
                    changed = true;
                }
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => self.running = None,
            }
        }
        let Some((made_for, sample)) = self.wanted.take() else {
            return changed;
        };
        if self.shown.as_ref().is_some_and(|s| s.made_for == made_for) {
            return changed;
        }
        self.running = Some(start(made_for, sample));
        changed
    }

    /// Whether the shown order is not yet the one asked for last.
    pub fn sorting(&self) -> bool {
        self.running.is_some() || self.wanted.is_some()
    }

    /// Whether an order (and so a sample) is kept or being made.
    pub fn holds(&self) -> bool {
        self.shown.is_some() || self.sorting()
    }

    /// The shown order's rows (none before the first sort is done).
    pub fn rows(&self) -> Rows<'_> {
        match &self.shown {
            Some(shown) => Rows {
                entries: entries(&shown.sample),
                order: &shown.order,
            },
            None => Rows {
                entries: &[],
                order: &[],
            },
        }
    }

    /// Forgets the order (no dump is shown any more, or the tab is closed),
    /// so its sample can be freed. A million entries take tens of
    /// milliseconds to free: not on the UI thread.
    pub fn clear(&mut self) {
        let old = std::mem::replace(
            self,
            Self {
                background: self.background,
                ..Self::default()
            },
        );
        if old.rows().entries().len() > 50_000 {
            std::thread::spawn(move || drop(old));
        }
    }
}
