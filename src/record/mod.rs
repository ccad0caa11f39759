//! Recordings: a session's raw samples, the findings shown and the packets
//! captured, in a file replayed later through the same views. `format`
//! describes the file; `flight` the flight recorder (`--ring`, a rolling
//! directory of recordings, `ring`; `--freeze-on`, incident bundles,
//! `bundle` and `summary`).

pub mod bundle;
mod bytes;
pub mod codec;
pub mod flight;
pub mod follow;
pub mod format;
pub mod headless;
pub mod inspect;
mod lazy;
pub mod packets;
pub mod player;
pub mod reader;
pub mod ring;
mod summary;
pub mod time;
pub mod writer;

use crate::capture::live::{Capture, PacketBatch, PacketTap};
use crate::findings;
use crate::model::Sample;
use anyhow::Result;
use format::{Meta, Stream};
use std::path::Path;
use writer::{WriteStats, Writer};

/// The suffix netlens gives recordings it names itself.
pub const SUFFIX: &str = "nlrec";

/// One sample as stored: MessagePack with field names.
pub fn encode<T: serde::Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(value).expect("samples are plain data")
}

/// Writes samples, the findings each time they change, and the packets
/// captured meanwhile.
pub struct Recorder {
    writer: Writer,
    findings: Option<Vec<u8>>,
    /// The findings stream is evaluated with these (the config's).
    pub thresholds: findings::Thresholds,
    /// The findings' hysteresis across the recorded samples.
    engine: findings::Engine,
    tap: Option<PacketTap>,
    /// Packets written to the open packets segment.
    in_segment: u32,
    /// What each file starts with (a ring's next file too).
    meta: Meta,
}

impl Recorder {
    /// A recording of samples only.
    pub fn create(path: &Path, meta: &Meta) -> Result<Recorder> {
        Self::create_with_capture(path, meta, None)
    }

    /// A recording that also holds what `capture` captures from now on
    /// (nothing when it does not capture).
    pub fn create_with_capture(
        path: &Path,
        meta: &Meta,
        capture: Option<&Capture>,
    ) -> Result<Recorder> {
        Self::with_tap(path, meta, capture, Writer::create)
    }

    /// As `create_with_capture`, for a path the user named (`record -o`,
    /// `snapshot --record`, `--record`): an existing character device or
    /// FIFO is written to, see `safe_file::create_output`.
    pub fn create_output(path: &Path, meta: &Meta, capture: Option<&Capture>) -> Result<Recorder> {
        Self::with_tap(path, meta, capture, Writer::create_output)
    }

    fn with_tap(
        path: &Path,
        meta: &Meta,
        capture: Option<&Capture>,
        create: fn(&Path, &Meta) -> Result<Writer>,
    ) -> Result<Recorder> {
        let tap = capture.and_then(Capture::tap);
        let meta = Meta {
            capture: tap.is_some(),
            payloads: tap.as_ref().is_some_and(|t| t.payloads),
            ..meta.clone()
        };
        Ok(Recorder {
            writer: create(path, &meta)?,
            findings: None,
            thresholds: findings::Thresholds::DEFAULT,
            engine: findings::Engine::default(),
            tap,
            in_segment: 0,
            meta,
        })
    }

    /// A recording of samples and of the packets handed to
    /// [`Recorder::record_with_packets`] (a bundle copied from a ring or a
    /// history): `meta` says whether there was a capture.
    pub fn create_copy(path: &Path, meta: &Meta) -> Result<Recorder> {
        Ok(Recorder {
            writer: Writer::create(path, meta)?,
            findings: None,
            thresholds: findings::Thresholds::DEFAULT,
            engine: findings::Engine::default(),
            tap: None,
            in_segment: 0,
            meta: meta.clone(),
        })
    }

    pub fn path(&self) -> &Path {
        self.writer.path()
    }

    /// Closes this file and goes on in a new one at `path` (the ring's next
    /// file), keeping the capture tap and the findings' hysteresis; returns
    /// what the closed file holds.
    pub fn roll(&mut self, path: &Path) -> Result<WriteStats> {
        let meta = {
            let mut meta = self.meta.clone();
            meta.created = self.writer.stats().last_t.unwrap_or(meta.created);
            meta
        };
        let next = Writer::create(path, &meta)?;
        let closed = std::mem::replace(&mut self.writer, next);
        self.findings = None;
        self.in_segment = 0;
        closed.finish()
    }

    /// Appends `sample`; `previous` is the sample before it (for findings).
    /// Its sockets are moved out while it is written, then put back.
    pub fn record(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<()> {
        self.record_sample(previous, sample)?;
        let Some(tap) = &self.tap else {
            return Ok(());
        };
        let batch = tap.take();
        self.record_packets(sample, batch)
    }

    /// As `record`, with the packets of the sample's interval given (not
    /// taken from a capture).
    pub fn record_with_packets(
        &mut self,
        previous: Option<&Sample>,
        sample: &mut Sample,
        batch: PacketBatch,
    ) -> Result<()> {
        self.record_sample(previous, sample)?;
        self.record_packets(sample, batch)
    }

    fn record_sample(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<()> {
        let found = self.engine.step(previous, sample, &self.thresholds);
        self.writer.write_sample(sample)?;
        let bytes = serde_json::to_vec(&found).expect("findings are plain data");
        if self.findings.as_ref() != Some(&bytes) {
            self.writer
                .write_record(Stream::Findings, sample.t, sample.mono, &bytes)?;
            self.findings = Some(bytes);
        }
        Ok(())
    }

    /// The packets captured since the previous sample, within the
    /// segment's bound, under the sample's time.
    fn record_packets(&mut self, sample: &Sample, mut batch: PacketBatch) -> Result<()> {
        let payloads = self.meta.payloads;
        if batch.packets.is_empty() && batch.skipped == 0 {
            return Ok(());
        }
        if self.writer.starts_segment(Stream::Packets, sample.mono) {
            self.in_segment = 0;
        }
        let room = packets::PACKETS_PER_SEGMENT.saturating_sub(self.in_segment) as usize;
        if batch.packets.len() > room {
            batch.skipped += (batch.packets.len() - room) as u64;
            batch.packets.truncate(room);
        }
        self.in_segment += batch.packets.len() as u32;
        let (t, mono) = (sample.t, sample.mono);
        self.writer
            .write_record(Stream::Packets, t, mono, &packets::encode_headers(&batch))?;
        if let Some(rest) = packets::encode_payloads(&batch).filter(|_| payloads) {
            self.writer.write_record(Stream::Payloads, t, mono, &rest)?;
        }
        if let Some(indexes) = packets::encode_interfaces(&batch) {
            self.writer
                .write_record(Stream::Interfaces, t, mono, &indexes)?;
        }
        Ok(())
    }

    pub fn stats(&self) -> WriteStats {
        self.writer.stats()
    }

    pub fn finish(self) -> Result<WriteStats> {
        self.writer.finish()
    }
}

/// `snapshot --record FILE` writes the printed samples through this.
impl crate::session::Sink for Recorder {
    fn write(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<()> {
        self.record(previous, sample)
    }
}

/// The description written at the start of a recording.
pub fn meta(netns: &str, interval: std::time::Duration) -> Meta {
    Meta {
        netlens: env!("CARGO_PKG_VERSION").to_string(),
        created: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        netns: netns.to_string(),
        interval: interval.as_secs_f64(),
        command: std::env::args().collect(),
        capture: false,
        payloads: false,
    }
}

/// A file name for a recording started from the live view's key:
/// netlens-YYYYMMDD-HHMMSS.nlrec (`app::recording` says in which directory).
pub fn default_path(t: f64) -> std::path::PathBuf {
    let offset = time::local_offset(t);
    let local = t.floor() as i64 + offset;
    let (year, month, day) = civil_from_days(local.div_euclid(86_400));
    let clock = time::clock(t, offset).replace(':', "");
    format!("netlens-{year:04}{month:02}{day:02}-{clock}.{SUFFIX}").into()
}

/// "YYYYMMDDTHHMMSSZ" in UTC, for file names that sort by time.
pub fn utc_stamp(t: f64) -> String {
    let seconds = t.floor() as i64;
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let of_day = seconds.rem_euclid(86_400);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// "YYYY-MM-DD HH:MM:SS" in the local zone.
pub fn date_time(t: f64, offset: i64) -> String {
    let local = t.floor() as i64 + offset;
    let (year, month, day) = civil_from_days(local.div_euclid(86_400));
    format!("{year:04}-{month:02}-{day:02} {}", time::clock(t, offset))
}

/// Days since 1970-01-01 to a (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(date_time(1_704_103_200.0, 0), "2024-01-01 10:00:00");
        assert_eq!(utc_stamp(1_704_103_201.5), "20240101T100001Z");
    }
}
