//! Hysteresis: a finding shows once its condition held for
//! `findings_on_samples` samples in a row, and goes away only after
//! `findings_off_samples` calm samples in a row, so a condition that comes
//! and goes every other second does not blink. One `Engine` is fed every
//! sample in order wherever findings are shown (live view, snapshot,
//! replay, record, export): the same samples give the same findings.

use super::{Finding, Thresholds, evaluate};
use crate::model::Sample;
use serde::Serialize;
use std::collections::HashMap;

/// A shown finding's place in its hysteresis (in JSON as `since` and `calm`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Hold {
    /// Wall-clock time of the sample where it began to show.
    pub since: f64,
    /// Samples in a row its condition has not held (0: it holds now).
    pub calm: u32,
}

impl Hold {
    /// The condition holds in the newest sample.
    pub fn firing(&self) -> bool {
        self.calm == 0
    }
}

/// One finding (by id and evidence row) across samples.
#[derive(Debug, Clone)]
struct Track {
    /// Samples in a row its condition held.
    streak: u32,
    shown: bool,
    /// The newest finding raised, kept while it calms down.
    last: Finding,
}

/// The findings' state across samples.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    tracks: HashMap<(&'static str, String), Track>,
}

impl Engine {
    /// The findings to show at `current`, given every earlier sample was
    /// stepped through this engine: best first (see `order`).
    pub fn step(
        &mut self,
        previous: Option<&Sample>,
        current: &Sample,
        limits: &Thresholds,
    ) -> Vec<Finding> {
        self.step_raised(evaluate(previous, current, limits), current, limits)
    }

    /// As `step`, given what `evaluate(previous, current, limits)` raised
    /// (computed elsewhere: the live view evaluates on a worker thread).
    pub fn step_raised(
        &mut self,
        raised: Vec<Finding>,
        current: &Sample,
        limits: &Thresholds,
    ) -> Vec<Finding> {
        let mut now = std::collections::HashSet::new();
        for finding in raised {
            let key = (finding.id, finding.evidence.row.clone());
            now.insert(key.clone());
            let track = self.tracks.entry(key).or_insert_with(|| Track {
                streak: 0,
                shown: false,
                last: finding.clone(),
            });
            track.streak += 1;
            let since = track.last.hold.since;
            track.last = finding;
            track.last.hold = Hold { since, calm: 0 };
            if !track.shown && track.streak >= limits.findings_on_samples {
                track.shown = true;
                track.last.hold.since = current.t;
            }
        }
        self.tracks.retain(|key, track| {
            if now.contains(key) {
                return true;
            }
            track.streak = 0;
            track.last.hold.calm += 1;
            track.shown && track.last.hold.calm < limits.findings_off_samples
        });
        let mut shown: Vec<Finding> = self
            .tracks
            .values()
            .filter(|t| t.shown)
            .map(|t| t.last.clone())
            .collect();
        order(&mut shown);
        shown
    }
}

/// Firing findings before calming ones, then worst, then newest: the first
/// is what the header shows.
pub fn order(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        b.hold
            .firing()
            .cmp(&a.hold.firing())
            .then(b.severity.cmp(&a.severity))
            .then(b.hold.since.total_cmp(&a.hold.since))
            .then(a.id.cmp(b.id))
            .then(a.evidence.row.cmp(&b.evidence.row))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snmp;
    use crate::model::sockets::TcpSample;

    /// A sample whose retransmit counters make `retransmits` fire or not.
    fn sample(second: u32, segments: u64, retransmitted: u64) -> Sample {
        let mut tcp = TcpSample::default();
        tcp.counters.insert(snmp::TCP_OUT_SEGS.into(), segments);
        tcp.counters
            .insert(snmp::TCP_RETRANS_SEGS.into(), retransmitted);
        Sample {
            t: 1000.0 + f64::from(second),
            mono: f64::from(second),
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    /// Every other second 50% of 1000 segments are retransmitted.
    fn flicker(seconds: u32) -> Vec<Sample> {
        let (mut out, mut retrans) = (0, 0);
        (0..seconds)
            .map(|s| {
                out += 1000;
                if s % 2 == 1 {
                    retrans += 500;
                }
                sample(s, out, retrans)
            })
            .collect()
    }

    fn shown(limits: &Thresholds, samples: &[Sample]) -> Vec<bool> {
        let mut engine = Engine::default();
        let mut previous = None;
        let mut out = Vec::new();
        for s in samples {
            out.push(!engine.step(previous, s, limits).is_empty());
            previous = Some(s);
        }
        out
    }

    #[test]
    fn a_flickering_condition_stays_on() {
        let samples = flicker(9);
        let raw: Vec<bool> = samples
            .windows(2)
            .map(|w| !evaluate(Some(&w[0]), &w[1], &Thresholds::DEFAULT).is_empty())
            .collect();
        assert_eq!(raw, [true, false, true, false, true, false, true, false]);
        let held = shown(&Thresholds::DEFAULT, &samples);
        assert_eq!(held[1..], [true; 8]);
    }

    #[test]
    fn on_after_n_off_after_m() {
        let limits = Thresholds {
            findings_on_samples: 2,
            findings_off_samples: 2,
            ..Thresholds::DEFAULT
        };
        // Retransmitting at 1..=3, calm from 4.
        let mut samples = Vec::new();
        let (mut out, mut retrans) = (0, 0);
        for s in 0..8 {
            out += 1000;
            if (1..=3).contains(&s) {
                retrans += 500;
            }
            samples.push(sample(s, out, retrans));
        }
        let held = shown(&limits, &samples);
        assert_eq!(held, [false, false, true, true, true, false, false, false]);
        // A single firing sample never shows with on = 2.
        assert!(!shown(&limits, &flicker(9)).contains(&true));
    }

    #[test]
    fn a_calm_finding_ranks_below_a_firing_one() {
        let limits = Thresholds::DEFAULT;
        let mut engine = Engine::default();
        let samples = flicker(3);
        engine.step(None, &samples[0], &limits);
        let firing = engine.step(Some(&samples[0]), &samples[1], &limits);
        assert_eq!(
            firing[0].hold,
            Hold {
                since: 1001.0,
                calm: 0
            }
        );
        let calm = engine.step(Some(&samples[1]), &samples[2], &limits);
        assert_eq!(
            calm[0].hold,
            Hold {
                since: 1001.0,
                calm: 1
            }
        );
        let mut both = vec![calm[0].clone(), firing[0].clone()];
        both[1].severity = super::super::Severity::Info;
        order(&mut both);
        assert!(both[0].hold.firing(), "{both:?}");
    }
}
