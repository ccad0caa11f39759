//! The flight recorder: a ring (`ring`) that freezes an incident bundle
//! (`bundle`) when a finding named by `--freeze-on` starts.
//!
//! Starts are the ones `--on-finding` sees (`notify::Changes`: after the
//! hysteresis). An incident opens at a start and closes `--freeze-after`
//! later, when its bundle is written from the ring: from DURATION before
//! the start to the close. Every other matching start while it is open
//! (the same finding flapping, or another) belongs to it; a finding that
//! stays raised never starts again, so it makes one bundle. At most
//! `--max-bundles-per-hour` bundles are written in any hour; an incident
//! over the cap is named in one line and not written.

use super::bundle::{self, BundleStats, BundleWriter};
use super::format::Meta;
use super::ring::{Ring, RingOptions};
use super::summary::Trigger;
use crate::capture::live::Capture;
use crate::findings::{Finding, Severity, Thresholds};
use crate::model::Sample;
use crate::notify::{Change, Changes};
use anyhow::Result;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

/// What `--freeze-on` names: levels and finding ids.
#[derive(Debug, Clone, PartialEq)]
pub struct FreezeOn {
    /// The lowest severity that freezes (None: only the ids).
    pub level: Option<Severity>,
    pub ids: Vec<String>,
}

impl FreezeOn {
    /// Parses "warn", "crit", finding ids, comma-separated; an unknown
    /// word is an error naming it.
    pub fn parse(text: &str) -> Result<FreezeOn, String> {
        let mut on = FreezeOn {
            level: None,
            ids: Vec::new(),
        };
        for word in text.split(',').map(str::trim) {
            match word {
                "warn" => on.level = Some(Severity::Warn),
                "crit" => {
                    on.level = Some(on.level.map_or(Severity::Crit, |l| l.min(Severity::Crit)))
                }
                id if crate::findings::IDS.contains(&id) || id.starts_with("drop:") => {
                    on.ids.push(id.to_string())
                }
                "" => return Err(format!("--freeze-on '{text}': an empty item")),
                other => {
                    return Err(format!(
                        "--freeze-on: '{other}' is neither warn, crit nor a finding id \
                         (netlens explain lists them)"
                    ));
                }
            }
        }
        Ok(on)
    }

    pub fn matches(&self, finding: &Finding) -> bool {
        self.level.is_some_and(|level| finding.severity >= level)
            || self.ids.iter().any(|id| id == finding.id)
    }
}

/// The freeze half of the options.
#[derive(Debug, Clone)]
pub struct FreezeOptions {
    pub on: FreezeOn,
    pub after: Duration,
    pub bundle_dir: PathBuf,
    pub per_hour: u32,
}

#[derive(Debug, Clone)]
pub struct FlightOptions {
    pub ring: RingOptions,
    pub freeze: Option<FreezeOptions>,
}

/// An incident whose after-window is still open.
struct Open {
    trigger: Trigger,
    close_at: f64,
}

pub struct FlightRecorder {
    ring: Ring,
    freeze: Option<FreezeOptions>,
    changes: Changes,
    limits: Thresholds,
    meta: Meta,
    open: Option<Open>,
    /// When the bundles of the last hour were written.
    written: VecDeque<f64>,
    /// The bundles written so far.
    pub bundles: Vec<BundleStats>,
}

impl FlightRecorder {
    /// Makes the ring's and the bundles' directories, or says in one line
    /// why not (before a session starts).
    pub fn check_dirs(options: &FlightOptions) -> Result<()> {
        crate::safe_file::private_dir(&options.ring.dir).map_err(anyhow::Error::msg)?;
        if let Some(freeze) = &options.freeze {
            crate::safe_file::private_dir(&freeze.bundle_dir).map_err(anyhow::Error::msg)?;
        }
        Ok(())
    }

    pub fn create(
        options: &FlightOptions,
        meta: &Meta,
        capture: Option<&Capture>,
        limits: Thresholds,
    ) -> Result<FlightRecorder> {
        // Fail at start, not at the first incident.
        Self::check_dirs(options)?;
        let mut ring = Ring::create(&options.ring, meta, capture)?;
        ring.set_thresholds(limits);
        let meta = Meta {
            capture: capture.and_then(Capture::tap).is_some(),
            ..meta.clone()
        };
        Ok(FlightRecorder {
            ring,
            freeze: options.freeze.clone(),
            changes: Changes::default(),
            limits,
            meta,
            open: None,
            written: VecDeque::new(),
            bundles: Vec::new(),
        })
    }

    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// Records `sample`; returns the lines to print (bundles written or
    /// suppressed, a bundle that failed).
    pub fn observe(
        &mut self,
        previous: Option<&Sample>,
        sample: &mut Sample,
    ) -> Result<Vec<String>> {
        self.ring.record(previous, sample)?;
        let Some(freeze) = &self.freeze else {
            return Ok(Vec::new());
        };
        let mut lines = Vec::new();
        for (change, finding) in self.changes.step(previous, sample, &self.limits) {
            if change != Change::Start || !freeze.on.matches(&finding) || self.open.is_some() {
                continue;
            }
            while self
                .written
                .front()
                .is_some_and(|&t| sample.t - t >= 3600.0)
            {
                self.written.pop_front();
            }
            if self.written.len() >= freeze.per_hour as usize {
                lines.push(format!(
                    "flight recorder: no bundle for {} ({}): {} bundles were written in the \
                     last hour (--max-bundles-per-hour {})",
                    finding.id, finding.evidence.row, freeze.per_hour, freeze.per_hour
                ));
                continue;
            }
            self.open = Some(Open {
                trigger: Trigger {
                    id: finding.id.to_string(),
                    t: sample.t,
                },
                close_at: sample.t + freeze.after.as_secs_f64(),
            });
        }
        if self
            .open
            .as_ref()
            .is_some_and(|open| sample.t >= open.close_at)
        {
            lines.push(self.write_bundle(sample.t));
        }
        Ok(lines)
    }

    /// Writes the open incident's bundle from the ring; the line says where
    /// it went or why it failed.
    fn write_bundle(&mut self, now: f64) -> String {
        let Some(open) = self.open.take() else {
            return String::new();
        };
        let freeze = self.freeze.as_ref().expect("an incident needs --freeze-on");
        let from = open.trigger.t - self.ring.options().keep.as_secs_f64();
        let id = open.trigger.id.clone();
        self.written.push_back(now);
        let began = std::time::Instant::now();
        let written = self.ring.seal(now).and_then(|files| {
            let mut writer =
                BundleWriter::create(&freeze.bundle_dir, open.trigger, &self.meta, self.limits)?;
            bundle::copy_from_ring(&mut writer, &files, from, now)?;
            writer.finish()
        });
        match written {
            Ok(stats) => {
                let line = format!(
                    "flight recorder: incident bundle {} ({id}: {} samples, {} packets, \
                     written in {} ms)",
                    stats.dir.display(),
                    stats.samples,
                    stats.packets,
                    began.elapsed().as_millis()
                );
                self.bundles.push(stats);
                line
            }
            Err(error) => format!("flight recorder: the bundle for {id} failed: {error:#}"),
        }
    }

    /// Stops: an incident still open gets its bundle with what there is.
    pub fn finish(mut self, now: f64) -> (Result<()>, Vec<String>) {
        let lines = if self.open.is_some() {
            vec![self.write_bundle(now)]
        } else {
            Vec::new()
        };
        (self.ring.finish().map(|_| ()), lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeze_on_reads_levels_and_ids() {
        let on = FreezeOn::parse("warn,udp-drops").unwrap();
        assert_eq!(on.level, Some(Severity::Warn));
        assert_eq!(on.ids, vec!["udp-drops".to_string()]);
        assert_eq!(FreezeOn::parse("crit").unwrap().level, Some(Severity::Crit));
        let error = FreezeOn::parse("crit,bogus").unwrap_err();
        assert!(error.contains("'bogus'"), "{error}");
        assert!(FreezeOn::parse("crit,").is_err());
    }
}
