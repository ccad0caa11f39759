//! The recent samples, kept raw; views derive rates from neighbouring pairs.
//! Each sample's findings are computed as it arrives, by one
//! `findings::Engine` fed every sample in order (their hysteresis needs
//! the sequence), and kept beside it so a paused view shows what was live.
//!
//! Samples are shared (`Arc`): the preparation worker (`prepare`) reads
//! the newest one while the UI draws the one before, without a copy.

use crate::findings::{Engine, Finding, Thresholds};
use crate::model::Sample;
use crate::model::socket_table::SocketTable;
use std::collections::VecDeque;
use std::sync::Arc;

/// How far back the detail charts reach.
pub const WINDOW_SECONDS: f64 = 300.0;
/// Lists longer than this are freed on a thread of their own.
const FREE_ELSEWHERE: usize = 50_000;
/// A hard cap, for very short intervals.
const MAX_SAMPLES: usize = 3000;

#[derive(Debug, Default)]
pub struct History {
    samples: VecDeque<Arc<Sample>>,
    /// The findings shown at each sample, index for index.
    findings: VecDeque<Vec<Finding>>,
    engine: Engine,
    limits: Thresholds,
}

impl History {
    /// An empty history whose findings fire by `limits`.
    pub fn new(limits: Thresholds) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Adds a sample, its findings evaluated here (replay, tests): the
    /// same `findings::evaluate` the preparation worker runs.
    pub fn push(&mut self, sample: Sample) {
        let raised = crate::findings::evaluate(self.newest(), &sample, &self.limits);
        self.push_evaluated(Arc::new(sample), raised);
    }

    /// The newest sample.
    pub fn newest(&self) -> Option<&Sample> {
        self.samples.back().map(|s| &**s)
    }

    /// The newest sample, shared.
    pub fn newest_shared(&self) -> Option<Arc<Sample>> {
        self.samples.back().cloned()
    }

    /// Adds a sample whose findings were already evaluated (`raised`, by
    /// `findings::evaluate` against the newest sample here): only the
    /// hysteresis runs, which is cheap whatever the socket count.
    pub fn push_evaluated(&mut self, mut sample: Arc<Sample>, raised: Vec<Finding>) {
        // Samples decoded from a recording come with copies of their own.
        if let (Some(sample), Some(newest)) = (Arc::get_mut(&mut sample), self.samples.back()) {
            sample.share_unchanged(newest);
        }
        let found = self.engine.step_raised(raised, &sample, &self.limits);
        self.samples.push_back(sample);
        self.findings.push_back(found);
        let newest = self.samples.back().map_or(0.0, |s| s.mono);
        // Keep one sample older than the window so its first rate exists.
        while self.samples.len() > MAX_SAMPLES
            || (self.samples.len() > 2 && newest - self.samples[1].mono > WINDOW_SECONDS)
        {
            self.samples.pop_front();
            self.findings.pop_front();
        }
    }

    /// The findings shown at the sample at `index`.
    pub fn findings(&self, index: usize) -> &[Finding] {
        self.findings.get(index).map_or(&[], Vec::as_slice)
    }

    /// Frees the socket lists of all but the newest `full` samples (1 or
    /// 2), the conntrack entry lists of all but the newest two, and neither
    /// of the samples `keep` names (the paused pair): they are big (a
    /// million sockets are ~216 MB a sample, a million entries ~200 MB) and
    /// only the shown sample needs its sockets, with the one before it
    /// where rates per socket are drawn (the Processes tab: `full` 2);
    /// the socket charts keep their own short histories. So memory is
    /// bounded by one or two samples' lists whatever the history's length.
    /// A freed list is marked (`Sample::sockets_dropped`) so that no rate
    /// is taken against it.
    pub fn drop_old_sockets(&mut self, full: usize, keep: impl Fn(f64) -> bool) {
        let recent = self.samples.len().saturating_sub(full.clamp(1, 2));
        let entries_recent = self.samples.len().saturating_sub(2);
        // Entries are dumped at most once a second: at short intervals the
        // newest list may be older than the newest two samples; it stays.
        let newest_entries = self
            .samples
            .iter()
            .rposition(|s| s.conntrack.entries.is_some());
        let mut freed = (Vec::new(), Vec::new());
        for (index, sample) in self.samples.range_mut(..recent).enumerate() {
            if keep(sample.mono) {
                continue;
            }
            // Still read by the preparation worker (as the sample before
            // the one it prepares): freed at the next push.
            let Some(sample) = Arc::get_mut(sample) else {
                continue;
            };
            if !sample.sockets.is_empty() {
                freed.0.push(std::mem::take(&mut sample.sockets));
                sample.sockets_dropped = true;
            }
            if index < entries_recent && Some(index) != newest_entries {
                freed.1.extend(sample.conntrack.entries.take());
            }
        }
        // Freeing a million sockets (each with its owner list) takes tens
        // of milliseconds: not on the thread that draws the next frame.
        let many = freed.0.iter().map(SocketTable::len).sum::<usize>()
            + freed.1.iter().map(Vec::len).sum::<usize>();
        if many > FREE_ELSEWHERE {
            std::thread::spawn(move || drop(freed));
        }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&Sample> {
        self.samples.get(index).map(|s| &**s)
    }

    /// The sample at `index`, shared.
    pub fn get_shared(&self, index: usize) -> Option<Arc<Sample>> {
        self.samples.get(index).cloned()
    }

    /// Index of the newest sample at or before `mono`.
    pub fn index_at(&self, mono: f64) -> Option<usize> {
        let after = self.samples.partition_point(|s| s.mono <= mono);
        after.checked_sub(1)
    }

    /// The sample at `index` and the one before it.
    pub fn pair(&self, index: usize) -> (Option<&Sample>, Option<&Sample>) {
        let previous = index.checked_sub(1).and_then(|i| self.get(i));
        (previous, self.get(index))
    }

    /// Consecutive (previous, current) pairs up to and including `index`.
    pub fn pairs_until(&self, index: usize) -> impl Iterator<Item = (&Sample, &Sample)> {
        let end = (index + 1).min(self.samples.len());
        self.samples
            .range(..end)
            .zip(self.samples.range(..end).skip(1))
            .map(|(a, b)| (&**a, &**b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(mono: f64) -> Sample {
        Sample {
            mono,
            ..Default::default()
        }
    }

    #[test]
    fn keeps_five_minutes_and_one_before() {
        let mut history = History::default();
        for second in 0..400 {
            history.push(at(second as f64));
        }
        let oldest = history.get(0).unwrap().mono;
        let second = history.get(1).unwrap().mono;
        assert_eq!(history.get(history.len() - 1).unwrap().mono, 399.0);
        assert!(399.0 - second <= WINDOW_SECONDS);
        assert!(399.0 - oldest > WINDOW_SECONDS - 1.0);
    }

    /// Only the newest `full` samples keep their sockets (and the ones
    /// `keep` names); the freed lists are marked.
    #[test]
    fn old_socket_lists_are_freed_and_marked() {
        use crate::model::sockets::{Proto, SocketSample};
        let socket = SocketSample {
            proto: Proto::Udp,
            state: 7,
            local: "198.18.0.1:53".parse().unwrap(),
            peer: "0.0.0.0:0".parse().unwrap(),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: 1,
            users: Default::default(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        };
        let mut history = History::default();
        for second in 0..5 {
            history.push(Sample {
                sockets: vec![socket.clone()].into(),
                ..at(f64::from(second))
            });
        }
        let with_sockets = |h: &History| -> Vec<bool> {
            (0..h.len())
                .map(|i| !h.get(i).unwrap().sockets.is_empty())
                .collect()
        };
        history.drop_old_sockets(2, |mono| mono == 1.0);
        assert_eq!(with_sockets(&history), [false, true, false, true, true]);
        history.drop_old_sockets(1, |_| false);
        assert_eq!(with_sockets(&history), [false, false, false, false, true]);
        let marked: Vec<bool> = (0..5)
            .map(|i| history.get(i).unwrap().sockets_dropped)
            .collect();
        assert_eq!(marked, [true, true, true, true, false]);
    }

    #[test]
    fn index_at_finds_newest_not_after() {
        let mut history = History::default();
        for m in [1.0, 2.0, 3.0] {
            history.push(at(m));
        }
        assert_eq!(history.index_at(2.5), Some(1));
        assert_eq!(history.index_at(3.0), Some(2));
        assert_eq!(history.index_at(0.5), None);
        assert_eq!(history.pairs_until(2).count(), 2);
    }
}
