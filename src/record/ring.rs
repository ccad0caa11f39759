//! The flight recorder's ring: a rolling recording of the last DURATION
//! (`--ring`), bounded on disk by `--max-size`.
//!
//! A ring is a directory (mode 0700, never a symbolic link) of ordinary
//! recordings, one per ring segment, each complete and readable alone
//! (`netlens replay` opens any of them):
//!
//! ```text
//! DIR/ring-<UTC start YYYYMMDDTHHMMSSZ>-<ms>-<4 random hex>.nlrec
//! ```
//!
//! A ring segment covers a minute, or a third of DURATION when that is
//! shorter (at least a second: `--ring 3s` rolls every second, so a test
//! sees many times its window in seconds). Whole files are dropped from the
//! old end: the oldest goes once the files after it still cover DURATION,
//! or sooner while the files add up to more than SIZE. The open file rolls
//! early at a quarter of SIZE, so the ring stays within SIZE plus one
//! record. Memory holds one open segment per stream, as any recording.
//! Files of a ring left by an earlier run are kept and dropped first.

use super::format::Meta;
use super::reader::Reader;
use super::{Recorder, SUFFIX, WriteStats};
use crate::capture::live::Capture;
use crate::model::Sample;
use anyhow::{Context, Result};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest ring segment.
pub const SEGMENT_SECONDS: f64 = 60.0;
/// File names start with this.
const PREFIX: &str = "ring-";

/// What `--ring`, `--ring-dir` and `--max-size` say.
#[derive(Debug, Clone)]
pub struct RingOptions {
    pub dir: PathBuf,
    pub keep: Duration,
    pub max_bytes: u64,
}

impl RingOptions {
    /// How long one file of the ring covers.
    pub fn segment_seconds(&self) -> f64 {
        (self.keep.as_secs_f64() / 3.0).clamp(1.0, SEGMENT_SECONDS)
    }
}

/// One closed file of the ring.
#[derive(Debug, Clone)]
pub struct RingFile {
    pub path: PathBuf,
    pub bytes: u64,
    /// Wall-clock times of its first and last samples.
    pub first_t: f64,
    pub last_t: f64,
}

pub struct Ring {
    options: RingOptions,
    closed: VecDeque<RingFile>,
    open: Recorder,
    /// CLOCK_BOOTTIME of the open file's first sample.
    open_mono: Option<f64>,
    /// Files dropped so far (the oldest end).
    pub dropped: u64,
}

impl Ring {
    /// Opens the ring directory (creating it mode 0700) and its first file.
    pub fn create(options: &RingOptions, meta: &Meta, capture: Option<&Capture>) -> Result<Ring> {
        crate::safe_file::private_dir(&options.dir).map_err(anyhow::Error::msg)?;
        let closed = earlier_files(&options.dir)?;
        let open =
            Recorder::create_with_capture(&new_name(&options.dir, meta.created), meta, capture)?;
        let mut ring = Ring {
            options: options.clone(),
            closed,
            open,
            open_mono: None,
            dropped: 0,
        };
        ring.prune(meta.created);
        Ok(ring)
    }

    pub fn options(&self) -> &RingOptions {
        &self.options
    }

    pub fn set_thresholds(&mut self, limits: crate::findings::Thresholds) {
        self.open.thresholds = limits;
    }

    /// Appends a sample (and the packets captured with it), rolling to a
    /// new file and dropping old ones as the bounds say.
    pub fn record(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<()> {
        let open_bytes = self.open.stats().bytes;
        let too_old = self
            .open_mono
            .is_some_and(|first| sample.mono - first >= self.options.segment_seconds());
        if too_old || open_bytes >= self.options.max_bytes / 4 {
            self.roll(sample.t)?;
        }
        self.open.record(previous, sample)?;
        self.open_mono.get_or_insert(sample.mono);
        self.prune(sample.t);
        Ok(())
    }

    /// Closes the open file so every sample so far is in a complete file
    /// (before a bundle reads them); returns the closed files, oldest first.
    pub fn seal(&mut self, now: f64) -> Result<Vec<RingFile>> {
        if self.open_mono.is_some() {
            self.roll(now)?;
        }
        Ok(self.closed.iter().cloned().collect())
    }

    fn roll(&mut self, now: f64) -> Result<()> {
        let path = self.open.path().to_path_buf();
        let stats: WriteStats = self.open.roll(&new_name(&self.options.dir, now))?;
        self.open_mono = None;
        self.closed.push_back(RingFile {
            path,
            bytes: stats.bytes,
            first_t: stats.first_t.unwrap_or(now),
            last_t: stats.last_t.unwrap_or(now),
        });
        self.prune(now);
        Ok(())
    }

    /// The ring's bytes on disk: closed files and the open one.
    pub fn bytes(&self) -> u64 {
        self.closed.iter().map(|f| f.bytes).sum::<u64>() + self.open.stats().bytes
    }

    /// Drops the oldest files while the rest still cover the window, or
    /// while the ring is over its size.
    fn prune(&mut self, now: f64) {
        let keep = self.options.keep.as_secs_f64();
        let open_first = self.open.stats().first_t.unwrap_or(now);
        while !self.closed.is_empty() {
            let next_start = self.closed.get(1).map_or(open_first, |f| f.first_t);
            let covered = now - next_start >= keep;
            if !(covered || self.bytes() > self.options.max_bytes) {
                break;
            }
            drop_oldest(&mut self.closed);
            self.dropped += 1;
        }
    }

    /// Closes the open file with its index, then drops the oldest files
    /// the index's bytes put the ring over its size with.
    pub fn finish(mut self) -> Result<WriteStats> {
        let stats = self.open.finish()?;
        let closed = |ring: &VecDeque<RingFile>| ring.iter().map(|f| f.bytes).sum::<u64>();
        while closed(&self.closed) + stats.bytes > self.options.max_bytes
            && drop_oldest(&mut self.closed)
        {}
        Ok(stats)
    }
}

/// Removes the oldest closed file; false when there is none. A file
/// already gone (removed by hand) is gone all the same.
fn drop_oldest(closed: &mut VecDeque<RingFile>) -> bool {
    let Some(oldest) = closed.pop_front() else {
        return false;
    };
    let _ = std::fs::remove_file(&oldest.path);
    true
}

/// `ring-<UTC>-<ms>-<random>.nlrec` in `dir`: sorts by time, and nobody can
/// plant a link under the name in advance (it is created O_EXCL anyway).
fn new_name(dir: &Path, t: f64) -> PathBuf {
    let millis = ((t.fract() * 1000.0) as u32).min(999);
    let tag = crate::safe_file::random_u64() as u16;
    dir.join(format!(
        "{PREFIX}{}-{millis:03}-{tag:04x}.{SUFFIX}",
        super::utc_stamp(t)
    ))
}

/// The ring files an earlier run left in `dir`, oldest first (by name).
fn earlier_files(dir: &Path) -> Result<VecDeque<RingFile>> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the ring directory {}", dir.display()))?
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .map(|entry| entry.path())
        .filter(|path| is_ring_file(path))
        .collect();
    names.sort();
    Ok(names
        .into_iter()
        .map(|path| {
            let bytes = std::fs::symlink_metadata(&path).map_or(0, |m| m.len());
            // One that does not read still counts toward the size, and
            // sorts as the oldest.
            let (first_t, last_t) = Reader::open(&path)
                .ok()
                .and_then(|reader| {
                    let segments = reader.sample_segments();
                    Some((segments.first()?.first_t, segments.last()?.last_t))
                })
                .unwrap_or((0.0, 0.0));
            RingFile {
                path,
                bytes,
                first_t,
                last_t,
            }
        })
        .collect())
}

fn is_ring_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(&format!(".{SUFFIX}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_a_third_of_short_rings_and_a_minute_at_most() {
        let at = |keep: u64| RingOptions {
            dir: PathBuf::new(),
            keep: Duration::from_secs(keep),
            max_bytes: 1 << 20,
        };
        assert_eq!(at(3).segment_seconds(), 1.0);
        assert_eq!(at(90).segment_seconds(), 30.0);
        assert_eq!(at(600).segment_seconds(), 60.0);
        assert_eq!(at(1).segment_seconds(), 1.0);
    }

    #[test]
    fn ring_names_sort_by_time() {
        let a = new_name(Path::new("d"), 1_704_103_201.25);
        let b = new_name(Path::new("d"), 1_704_103_201.5);
        assert!(a < b, "{a:?} {b:?}");
        assert!(is_ring_file(&a));
        assert!(!is_ring_file(Path::new("d/other.nlrec")));
    }
}
