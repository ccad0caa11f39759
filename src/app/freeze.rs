//! B in the live view: freezes the last minutes the view holds into an
//! incident bundle (`record::bundle`) in the current directory, as the
//! flight recorder does for a finding. The samples and the Flows tab's
//! packet list (the packets printed while the Flows tab was shown: the
//! capture has one recorder's tap, and R may hold it) are copied, then
//! written on a thread so the screen goes on; the findings line shows the
//! progress and where the bundle went.

use super::App;
use super::recording::{Notice, shown_path};
use crate::capture::live::{PacketBatch, RawPacket};
use crate::model::Sample;
use crate::record::bundle::{BundleStats, BundleWriter, Trigger};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;

/// How far back B reaches (what the history holds, if less).
pub const FREEZE_SECONDS: f64 = 300.0;
/// Where B's bundles go.
const BUNDLE_DIR: &str = ".";

/// A bundle being written.
pub struct Freezing {
    samples: usize,
    written: Arc<AtomicUsize>,
    thread: JoinHandle<anyhow::Result<BundleStats>>,
}

impl App {
    /// B: starts writing a bundle of the last `FREEZE_SECONDS`.
    pub(super) fn freeze(&mut self) -> bool {
        if self.replay.is_some() {
            self.notice = Some(Notice::info(
                "B freezes the live view; a replay is a recording already".into(),
            ));
            return true;
        }
        if self.freezing.is_some() {
            return self.poll_freeze();
        }
        let Some(newest) = self.history.get(self.history.len().wrapping_sub(1)) else {
            self.notice = Some(Notice::info("nothing to freeze yet: no sample".into()));
            return true;
        };
        let (t, netns) = (newest.t, newest.netns.clone());
        let samples: Vec<Sample> = (0..self.history.len())
            .filter_map(|i| self.history.get(i))
            .filter(|s| s.t >= t - FREEZE_SECONDS)
            .cloned()
            .collect();
        let capture = self.flows.capture.as_ref().filter(|c| c.linktype() != 0);
        let linktype = capture.map_or(0, |c| c.linktype());
        let batches = batches(
            &samples,
            self.flows.packets.iter().map(|p| RawPacket {
                ts: p.ts,
                orig_len: p.orig_len,
                data: p.data.to_vec(),
                ifindex: p.ifindex,
            }),
            linktype,
        );
        let mut meta = crate::record::meta(&netns, self.interval);
        meta.capture = capture.is_some();
        let trigger = Trigger {
            id: "manual".into(),
            t,
        };
        let writer =
            match BundleWriter::create(&PathBuf::from(BUNDLE_DIR), trigger, &meta, self.thresholds)
            {
                Ok(writer) => writer,
                Err(error) => {
                    self.notice = Some(Notice::error(format!("cannot freeze: {error:#}")));
                    return true;
                }
            };
        let written = Arc::new(AtomicUsize::new(0));
        let count = samples.len();
        self.notice = Some(Notice::info(format!(
            "freezing {count} samples to {}",
            shown_path(writer.dir())
        )));
        let progress = Arc::clone(&written);
        let thread = std::thread::Builder::new()
            .name("freeze".into())
            .spawn(move || write(writer, samples, batches, &progress));
        match thread {
            Ok(thread) => {
                self.freezing = Some(Freezing {
                    samples: count,
                    written,
                    thread,
                })
            }
            Err(error) => self.notice = Some(Notice::error(format!("cannot freeze: {error}"))),
        }
        true
    }

    /// Shows the bundle's progress, or where it went once written.
    /// Returns whether the findings line changed.
    pub(super) fn poll_freeze(&mut self) -> bool {
        let Some(freezing) = &self.freezing else {
            return false;
        };
        if !freezing.thread.is_finished() {
            let done = freezing.written.load(Ordering::Relaxed);
            self.notice = Some(Notice::info(format!(
                "freezing: {done} of {} samples written",
                freezing.samples
            )));
            return true;
        }
        let freezing = self.freezing.take().expect("checked above");
        self.notice = Some(match freezing.thread.join() {
            Ok(Ok(stats)) => Notice::info(format!(
                "froze {} samples and {} packets to {}",
                stats.samples,
                stats.packets,
                shown_path(&stats.dir)
            )),
            Ok(Err(error)) => Notice::error(format!("the bundle failed: {error:#}")),
            Err(_) => Notice::error("the bundle failed: its thread panicked".into()),
        });
        true
    }
}

fn write(
    mut writer: BundleWriter,
    samples: Vec<Sample>,
    batches: Vec<PacketBatch>,
    written: &AtomicUsize,
) -> anyhow::Result<BundleStats> {
    for (mut sample, batch) in samples.into_iter().zip(batches) {
        writer.add(&mut sample, batch)?;
        written.fetch_add(1, Ordering::Relaxed);
    }
    writer.finish()
}

/// The packets by the sample whose interval they fall in (the first
/// sample at or after them; later ones go with the last sample).
fn batches(
    samples: &[Sample],
    packets: impl Iterator<Item = RawPacket>,
    linktype: u32,
) -> Vec<PacketBatch> {
    let mut batches: Vec<PacketBatch> = samples
        .iter()
        .map(|_| PacketBatch {
            linktype,
            ..Default::default()
        })
        .collect();
    let Some(first) = samples.first() else {
        return batches;
    };
    for packet in packets {
        let t = packet.ts.as_secs_f64();
        if t < first.t - FREEZE_SECONDS {
            continue;
        }
        let at = samples.partition_point(|s| s.t < t).min(samples.len() - 1);
        batches[at].packets.push(packet);
    }
    batches
}
