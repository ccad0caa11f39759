//! Incident bundles: one directory per incident that a person can hand on.
//!
//! ```text
//! netlens-incident-<UTC start YYYYMMDDTHHMMSSZ>-<finding id>/   (mode 0700)
//!   recording.nlrec   the samples from the ring's DURATION before the
//!                     start to --freeze-after past it: one ordinary
//!                     recording (netlens replay BUNDLE-DIR opens it)
//!   packets.pcap      the packets captured in that window (tcpdump -r);
//!                     a valid pcap with no packets when capture was off
//!   summary.md        the findings with evidence and fix, top talkers and
//!                     sockets, when it started and cleared (`summary`)
//!   snapshot.json     the sample at the start, as snapshot --json prints it
//! ```
//!
//! Every file is created O_EXCL|O_NOFOLLOW, mode 0600, in a directory
//! netlens has just made itself. A bundle that fails halfway is removed
//! whole, so a directory that is there is complete.

use super::format::Meta;
use super::reader::Reader;
use super::ring::RingFile;
use super::summary::Summary;
pub use super::summary::Trigger;
use super::{Recorder, format::Stream};
use crate::capture::attribution::PacketOwners;
use crate::capture::live::PacketBatch;
use crate::capture::pcap_file::{FileFormat, FileLayout, InterfaceName, PcapFileWriter};
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::report::{Sections, json};
use anyhow::{Context, Result, bail};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// File names inside a bundle.
pub const RECORDING: &str = "recording.nlrec";
pub const PACKETS: &str = "packets.pcapng";
pub const SUMMARY: &str = "summary.md";
pub const SNAPSHOT: &str = "snapshot.json";
/// Bundle directories start with this.
pub const PREFIX: &str = "netlens-incident-";

/// SLL2, what a capture on every interface gives, for an empty file.
const LINKTYPE_LINUX_SLL2: u32 = 276;
const SNAPLEN: u32 = 262_144;

/// The interface the sample's capture ran on ("any" when it does not say).
fn capture_iface(sample: &Sample) -> String {
    sample
        .capture
        .as_ref()
        .map_or_else(|| "any".to_string(), |c| c.iface.clone())
}

/// The bundle's packets file: pcapng, the capture's interface first.
fn layout(linktype: u32, interface: InterfaceName) -> FileLayout {
    FileLayout {
        format: FileFormat::Pcapng,
        linktype,
        snaplen: SNAPLEN,
        interface,
    }
}

/// What a finished bundle holds.
#[derive(Debug, Clone)]
pub struct BundleStats {
    pub dir: PathBuf,
    pub samples: u64,
    pub packets: u64,
}

/// A bundle being written: feed it samples in order, then `finish`.
pub struct BundleWriter {
    dir: PathBuf,
    recording: Option<Recorder>,
    pcap: Option<PcapFileWriter>,
    summary: Summary,
    previous: Option<Sample>,
    snapshot: Option<String>,
    /// The findings with their hysteresis, for snapshot.json.
    engine: crate::findings::Engine,
    limits: Thresholds,
    /// Set by `finish`: the directory stays.
    done: bool,
}

impl BundleWriter {
    /// Creates `parent/netlens-incident-<UTC>-<id>/` and its recording.
    pub fn create(
        parent: &Path,
        trigger: Trigger,
        meta: &Meta,
        limits: Thresholds,
    ) -> Result<BundleWriter> {
        crate::safe_file::private_dir(parent).map_err(anyhow::Error::msg)?;
        let name = format!(
            "{PREFIX}{}-{}",
            super::utc_stamp(trigger.t),
            file_safe(&trigger.id)
        );
        let dir = new_dir(&parent.join(&name))?;
        let mut bundle = BundleWriter {
            dir,
            recording: None,
            pcap: None,
            summary: Summary::new(trigger, meta.hostname.clone(), limits, meta.capture),
            previous: None,
            snapshot: None,
            engine: crate::findings::Engine::default(),
            limits,
            done: false,
        };
        let mut recorder = Recorder::create_copy(&bundle.dir.join(RECORDING), meta)?;
        recorder.thresholds = limits;
        bundle.recording = Some(recorder);
        Ok(bundle)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends a sample and the packets captured with it.
    pub fn add(&mut self, sample: &mut Sample, batch: PacketBatch) -> Result<()> {
        self.write_packets(sample, &batch)?;
        self.summary.packets += batch.packets.len() as u64;
        let previous = self.previous.take();
        let found = self.engine.step(previous.as_ref(), sample, &self.limits);
        if self.snapshot.is_none() && sample.t >= self.summary.trigger.t {
            let before = previous.as_ref().unwrap_or(sample);
            self.snapshot = Some(json::sample_line(before, sample, Sections::ALL, &found));
        }
        self.summary.observe(previous.as_ref(), sample);
        self.recording
            .as_mut()
            .expect("open until finish")
            .record_with_packets(previous.as_ref(), sample, batch)?;
        self.previous = Some(sample.clone());
        Ok(())
    }

    /// Writes the sample's packets, each noted with its interface and the
    /// process and container of its socket in that sample.
    fn write_packets(&mut self, sample: &Sample, batch: &PacketBatch) -> Result<()> {
        if batch.packets.is_empty() {
            return Ok(());
        }
        let owners = PacketOwners::from_samples(
            [Some(sample), self.previous.as_ref()].into_iter().flatten(),
        );
        let pcap = match &mut self.pcap {
            Some(pcap) => pcap,
            None => self.pcap.insert(PcapFileWriter::create(
                &self.dir.join(PACKETS),
                layout(batch.linktype, owners.interface(&capture_iface(sample))),
            )?),
        };
        for packet in &batch.packets {
            let note = owners.note(
                batch.linktype,
                &packet.data,
                packet.orig_len,
                packet.ifindex,
            );
            pcap.write_noted(packet.ts, packet.orig_len, &packet.data, Some(&note))?;
        }
        Ok(())
    }

    /// Closes the recording and the pcap, writes summary.md and
    /// snapshot.json: the bundle is complete.
    pub fn finish(mut self) -> Result<BundleStats> {
        self.recording.take().expect("open until finish").finish()?;
        match self.pcap.take() {
            Some(pcap) => pcap.finish()?,
            None => PcapFileWriter::create(
                &self.dir.join(PACKETS),
                layout(LINKTYPE_LINUX_SLL2, InterfaceName::default()),
            )?
            .finish()?,
        }
        write_new(&self.dir.join(SUMMARY), self.summary.render().as_bytes())?;
        let snapshot = self.snapshot.take().unwrap_or_default();
        write_new(&self.dir.join(SNAPSHOT), format!("{snapshot}\n").as_bytes())?;
        self.done = true;
        Ok(BundleStats {
            dir: self.dir.clone(),
            samples: self.summary.samples,
            packets: self.summary.packets,
        })
    }
}

impl Drop for BundleWriter {
    fn drop(&mut self) {
        if !self.done {
            // Close the files first, then remove what was made.
            self.recording = None;
            self.pcap = None;
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Makes `base`, or `base-2` ... `base-9` when taken (two bundles in one
/// second: B pressed twice); mkdir never follows a link planted there.
fn new_dir(base: &Path) -> Result<PathBuf> {
    let mut dir = base.to_path_buf();
    let mut n = 1;
    loop {
        match crate::safe_file::create_private_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 9 => {
                n += 1;
                dir = PathBuf::from(format!("{}-{n}", base.display()));
            }
            Err(e) => bail!("cannot create the bundle {}: {e}", dir.display()),
        }
    }
}

/// A whole small file, created safely; removed again if the write fails.
fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut file =
        crate::safe_file::PartialFile::create_private(path).map_err(anyhow::Error::msg)?;
    file.file()
        .write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.keep();
    Ok(())
}

/// A finding id as a file name part: ids are [a-z0-9-:], and ':' (in
/// drop:REASON) becomes '_'.
fn file_safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Copies the samples and packets of `files` (a sealed ring) within
/// `from..=to` (wall-clock seconds) into `bundle`.
pub fn copy_from_ring(
    bundle: &mut BundleWriter,
    files: &[RingFile],
    from: f64,
    to: f64,
) -> Result<()> {
    for file in files.iter().filter(|f| f.last_t >= from && f.first_t <= to) {
        let reader = Reader::open(&file.path)?;
        // One file's packets, by the time of the sample they came with.
        let mut packets: HashMap<u64, PacketBatch> = HashMap::new();
        for entry in reader.stream_segments(Stream::Packets) {
            let read = reader.read_packets(&entry)?;
            for (head, batch) in read.heads.iter().zip(read.records) {
                packets.insert(head.t.to_bits(), batch);
            }
        }
        // One sample at a time: a segment's samples are never all held.
        for entry in reader.sample_segments() {
            reader.each_sample(&entry, |_, sample| {
                if sample.t < from || sample.t > to {
                    return Ok(());
                }
                let batch = packets.remove(&sample.t.to_bits()).unwrap_or_default();
                bundle.add(sample, batch)
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sample;

    fn sample(t: f64) -> Sample {
        Sample {
            t,
            mono: t,
            netns: "host".into(),
            ..Default::default()
        }
    }

    #[test]
    fn same_second_bundles_get_numbers_and_an_unfinished_one_goes() {
        let parent = std::env::temp_dir().join(format!("netlens-bundle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let trigger = || Trigger {
            id: "drop:NO_SOCKET".into(),
            t: 1_704_103_200.0,
        };
        let meta = Meta::default();
        let limits = Thresholds::DEFAULT;
        let mut first = BundleWriter::create(&parent, trigger(), &meta, limits).unwrap();
        for t in 0..3 {
            first
                .add(
                    &mut sample(1_704_103_199.0 + f64::from(t)),
                    PacketBatch::default(),
                )
                .unwrap();
        }
        let first = first.finish().unwrap();
        assert_eq!(first.samples, 3);
        let name = first.dir.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(name, "netlens-incident-20240101T100000Z-drop_NO_SOCKET");
        let second = BundleWriter::create(&parent, trigger(), &meta, limits).unwrap();
        let second_dir = second.dir().to_path_buf();
        assert_eq!(
            second_dir,
            PathBuf::from(format!("{}-2", first.dir.display()))
        );
        drop(second);
        assert!(!second_dir.exists(), "an unfinished bundle stays");
        for file in [RECORDING, PACKETS, SUMMARY, SNAPSHOT] {
            assert!(first.dir.join(file).is_file(), "{file}");
        }
        let summary = std::fs::read_to_string(first.dir.join(SUMMARY)).unwrap();
        assert!(summary.contains("Capture was off"), "{summary}");
        let snapshot = std::fs::read_to_string(first.dir.join(SNAPSHOT)).unwrap();
        assert!(snapshot.starts_with("{\"t\":1704103200"), "{snapshot}");
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
