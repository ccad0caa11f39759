//! The recent samples, kept raw; views derive rates from neighbouring pairs.
//! Each sample's findings are computed as it arrives, by one
//! `findings::Engine` fed every sample in order (their hysteresis needs
//! the sequence), and kept beside it so a paused view shows what was live.

use crate::findings::{Engine, Finding, Thresholds};
use crate::model::Sample;
use std::collections::VecDeque;

/// How far back the detail charts reach.
pub const WINDOW_SECONDS: f64 = 300.0;
/// A hard cap, for very short intervals.
const MAX_SAMPLES: usize = 3000;

#[derive(Debug, Default)]
pub struct History {
    samples: VecDeque<Sample>,
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

    pub fn push(&mut self, sample: Sample) {
        let found = self.engine.step(self.samples.back(), &sample, &self.limits);
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

    /// Frees the socket lists of all but the newest two samples and those
    /// `keep` names (the paused pair): socket lists are big (50k sockets
    /// are ~10 MB a sample) and only the shown pair needs them; the socket
    /// charts keep their own short histories.
    pub fn drop_old_sockets(&mut self, keep: impl Fn(f64) -> bool) {
        let recent = self.samples.len().saturating_sub(2);
        for sample in self.samples.range_mut(..recent) {
            if !sample.sockets.is_empty() && !keep(sample.mono) {
                sample.sockets = Vec::new();
            }
        }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&Sample> {
        self.samples.get(index)
    }

    /// Index of the newest sample at or before `mono`.
    pub fn index_at(&self, mono: f64) -> Option<usize> {
        let after = self.samples.partition_point(|s| s.mono <= mono);
        after.checked_sub(1)
    }

    /// The sample at `index` and the one before it.
    pub fn pair(&self, index: usize) -> (Option<&Sample>, Option<&Sample>) {
        let previous = index.checked_sub(1).and_then(|i| self.samples.get(i));
        (previous, self.samples.get(index))
    }

    /// Consecutive (previous, current) pairs up to and including `index`.
    pub fn pairs_until(&self, index: usize) -> impl Iterator<Item = (&Sample, &Sample)> {
        let end = (index + 1).min(self.samples.len());
        self.samples
            .range(..end)
            .zip(self.samples.range(..end).skip(1))
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
