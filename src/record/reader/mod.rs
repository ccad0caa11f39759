//! Reads a recording: the index (or a scan that rebuilds it), segments
//! decoded on demand, seek by time. Damage never panics: a bad chunk ends
//! its segment there and is reported; the rest of the file still reads.

use super::format::{
    self, CHUNK_HEAD, ChunkHead, DataHead, Header, Index, Kind, Meta, SegmentEntry, Stream,
};
use super::packets;
use crate::capture::live::PacketBatch;
use crate::model::Sample;
use crate::model::socket_table::{EMPTY, SocketTable};
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

mod inflate;
mod scan;
pub use inflate::{Inflater, SegmentChunks};
use scan::ScanState;

/// A segment bigger than this in the file is damage, not data.
const MAX_SEGMENT_BYTES: u64 = 2 << 30;
/// Nor does one decompress to more than this.
const MAX_SEGMENT_RAW: usize = 1 << 30;

pub struct Reader {
    path: PathBuf,
    file: File,
    pub len: u64,
    pub header: Header,
    pub meta: Option<Meta>,
    /// Every stream's segments, in file order.
    pub segments: Vec<SegmentEntry>,
    /// The file ends with its index and end marker (the recorder closed it).
    pub closed_cleanly: bool,
    /// What the scan that rebuilt the index skipped, if it ran: at most
    /// [`scan::MAX_DAMAGE_LINES`] + 2 lines, touching ranges merged.
    pub scan_damage: Vec<String>,
    /// Where the scan stopped, so [`Reader::refresh`] goes on from there.
    scan: ScanState,
}

/// What [`Reader::refresh`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// The file still has no index; `segments` holds every whole record.
    Growing,
    /// The recorder closed the file: `segments` is its index now.
    Closed,
}

/// One decoded segment: its records, and why it stopped early, if it did.
#[derive(Debug)]
pub struct SegmentRead<T> {
    pub heads: Vec<DataHead>,
    pub records: Vec<T>,
    pub damage: Option<String>,
    /// Bytes its chunks take in the file (other streams' chunks between
    /// them not counted).
    pub disk_bytes: u64,
}

/// A segment's records, inflated as they are taken (`Reader::records_of`):
/// one is held at a time. `damage` says why they stopped early, once they
/// did.
pub struct Records {
    left: usize,
    inflater: Inflater,
    segment: u32,
    pub damage: Option<String>,
    pub disk_bytes: u64,
}

impl Iterator for Records {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        if self.left == 0 {
            return None;
        }
        match self.inflater.next_record() {
            Some(Ok(record)) => {
                self.left -= 1;
                Some(record)
            }
            Some(Err(why)) => {
                self.left = 0;
                self.damage = Some(format!("segment {}: {why}", self.segment));
                None
            }
            None => {
                self.left = 0;
                let segment = self.segment;
                self.damage
                    .get_or_insert_with(|| format!("segment {segment} decodes short"));
                None
            }
        }
    }
}

/// Where a seek landed.
#[derive(Debug)]
pub struct Located {
    /// Position in `Reader::sample_segments()`.
    pub segment: usize,
    pub ordinal: usize,
    pub sample: Sample,
}

impl Reader {
    pub fn open(path: &Path) -> Result<Reader> {
        Reader::open_with(path, false)
    }

    /// Opens a file that may still be being written, to [`Reader::refresh`]
    /// it: a record cut by the end of the file is awaited, not skipped.
    pub fn open_growing(path: &Path) -> Result<Reader> {
        Reader::open_with(path, true)
    }

    fn open_with(path: &Path, growing: bool) -> Result<Reader> {
        // O_NONBLOCK: a FIFO at the path fails the check below instead of
        // hanging the open until someone writes to it (reads of a regular
        // file ignore the flag).
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .with_context(|| format!("cannot open the recording {}", path.display()))?;
        let metadata = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?;
        if !metadata.is_file() {
            bail!("{}: not a recording (not a regular file)", path.display());
        }
        let len = metadata.len();
        let mut head = vec![0u8; format::HEADER_LEN.min(len as usize)];
        file.read_exact_at(&mut head, 0)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let header = Header::decode(&head).with_context(|| path.display().to_string())?;
        let mut reader = Reader {
            path: path.to_path_buf(),
            file,
            len,
            header,
            meta: None,
            segments: Vec::new(),
            closed_cleanly: false,
            scan_damage: Vec::new(),
            scan: ScanState::starting_at(format::HEADER_LEN as u64),
        };
        if let Some((ChunkHead { kind, .. }, payload)) =
            reader.chunk_at(format::HEADER_LEN as u64)?
            && kind == Kind::Meta as u8
        {
            reader.meta = serde_json::from_slice(&payload).ok();
        }
        match reader.read_index()? {
            Some(index) => {
                reader.segments = index.segments;
                reader.closed_cleanly = true;
            }
            None => reader.scan(growing)?,
        }
        Ok(reader)
    }

    /// Reads what was appended since the last look at a file still being
    /// written: new whole records extend `segments` (an incomplete record
    /// at the end waits for the next call), and once the index and end
    /// marker are there, they replace the scanned segments.
    pub fn refresh(&mut self) -> Result<Refresh> {
        if self.closed_cleanly {
            return Ok(Refresh::Closed);
        }
        let len = self
            .file
            .metadata()
            .with_context(|| format!("cannot read {}", self.path.display()))?
            .len();
        if len == self.len {
            return Ok(Refresh::Growing);
        }
        self.len = len;
        if let Some(index) = self.read_index()? {
            self.segments = index.segments;
            self.closed_cleanly = true;
            self.scan_damage.clear();
            return Ok(Refresh::Closed);
        }
        self.scan(true)?;
        Ok(Refresh::Growing)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
        if offset.saturating_add(len as u64) > self.len {
            return Ok(None);
        }
        let mut buffer = vec![0u8; len];
        self.file
            .read_exact_at(&mut buffer, offset)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        Ok(Some(buffer))
    }

    /// The valid chunk at `offset`, if one is there.
    fn chunk_at(&self, offset: u64) -> Result<Option<(ChunkHead, Vec<u8>)>> {
        let Some(head) = self.read_at(offset, CHUNK_HEAD)? else {
            return Ok(None);
        };
        let Some(head) = ChunkHead::parse(&head) else {
            return Ok(None);
        };
        let Some(whole) = self.read_at(offset, head.total())? else {
            return Ok(None);
        };
        Ok(format::check_chunk(&whole).map(|(head, payload)| (head, payload.to_vec())))
    }

    /// The index the recorder wrote at close, if the file ends with it and
    /// it is intact.
    fn read_index(&self) -> Result<Option<Index>> {
        let end_total = (format::CHUNK_OVERHEAD + 8) as u64;
        let Some(end_start) = self.len.checked_sub(end_total) else {
            return Ok(None);
        };
        let Some((head, payload)) = self.chunk_at(end_start)? else {
            return Ok(None);
        };
        if head.kind != Kind::End as u8 {
            return Ok(None);
        }
        let Some(index_at) = format::decode_end(&payload).filter(|at| *at < end_start) else {
            return Ok(None);
        };
        let Some((head, payload)) = self.chunk_at(index_at)? else {
            return Ok(None);
        };
        if head.kind != Kind::Index as u8 {
            return Ok(None);
        }
        let Ok(index) = rmp_serde::from_slice::<Index>(&payload) else {
            return Ok(None);
        };
        let sane = index.segments.iter().all(|s| {
            Stream::from_u8(s.stream).is_some()
                && s.start >= format::HEADER_LEN as u64
                && s.start < s.end
                && s.end <= index_at
                && s.count > 0
        });
        Ok(sane.then_some(index))
    }

    /// The segments of the samples stream, in order.
    pub fn sample_segments(&self) -> Vec<SegmentEntry> {
        self.stream_segments(Stream::Samples)
    }

    pub fn stream_segments(&self, stream: Stream) -> Vec<SegmentEntry> {
        self.segments
            .iter()
            .filter(|s| s.stream == stream as u8)
            .copied()
            .collect()
    }

    /// Decompresses one segment into its raw records.
    pub fn read_raw(&self, entry: &SegmentEntry) -> Result<SegmentRead<Vec<u8>>> {
        self.read_raw_until(entry, f64::INFINITY)
    }

    /// As `read_raw`, stopping before the first record after wall-clock
    /// `until` (the first record is always read): a seek decompresses the
    /// segment only as far as the sample it wants (at 10k sockets a
    /// segment is ~18 MB raw; a seek to a minute needs its first record).
    fn read_raw_until(&self, entry: &SegmentEntry, until: f64) -> Result<SegmentRead<Vec<u8>>> {
        let chunks = self.read_chunks(entry)?;
        let mut damage = chunks.damage;
        let wanted = chunks
            .heads
            .iter()
            .skip(1)
            .position(|h| h.t > until)
            .map_or(chunks.heads.len(), |later| later + 1);
        let mut heads = chunks.heads;
        let mut inflater = Inflater::new(chunks.compressed)?;
        let mut records = Vec::with_capacity(wanted);
        while records.len() < wanted {
            match inflater.next_record() {
                Some(Ok(record)) => records.push(record),
                Some(Err(why)) => {
                    damage = Some(format!("segment {}: {why}", entry.segment));
                    break;
                }
                None => {
                    damage.get_or_insert(format!("segment {} decodes short", entry.segment));
                    break;
                }
            }
        }
        heads.truncate(records.len());
        Ok(SegmentRead {
            heads,
            records,
            damage,
            disk_bytes: chunks.disk_bytes,
        })
    }

    /// A segment's chunks, checked but not decompressed: each record's head
    /// (its times) and zstd bytes. Damage ends them where it is met.
    pub fn read_chunks(&self, entry: &SegmentEntry) -> Result<SegmentChunks> {
        let span = entry.end.saturating_sub(entry.start);
        let Some(bytes) = (span <= MAX_SEGMENT_BYTES)
            .then(|| self.read_at(entry.start, span as usize))
            .transpose()?
            .flatten()
        else {
            return Ok(SegmentChunks {
                damage: Some(format!(
                    "segment at offset {} lies outside the file",
                    entry.start
                )),
                ..SegmentChunks::default()
            });
        };
        let mut chunks = SegmentChunks::default();
        let mut at = 0usize;
        while at < bytes.len() && chunks.heads.len() < entry.count as usize {
            let Some((head, payload)) = format::check_chunk(&bytes[at..]) else {
                chunks.damage = Some(format!(
                    "damaged chunk at offset {}",
                    entry.start + at as u64
                ));
                break;
            };
            at += head.total();
            if head.kind != Kind::Data as u8 || head.stream != entry.stream {
                continue;
            }
            let Some((data, compressed)) = DataHead::parse(payload) else {
                chunks.damage = Some(format!("short record at offset {}", entry.start));
                break;
            };
            if data.segment != entry.segment || data.ordinal as usize != chunks.heads.len() {
                chunks.damage = Some(format!(
                    "record out of order in segment {} at offset {}",
                    entry.segment,
                    entry.start + at as u64
                ));
                break;
            }
            chunks.disk_bytes += head.total() as u64;
            chunks.heads.push(data);
            chunks.compressed.push(compressed.to_vec());
        }
        if chunks.damage.is_none() && chunks.heads.len() < entry.count as usize {
            chunks.damage = Some(format!(
                "segment {} ends after {} of {} records",
                entry.segment,
                chunks.heads.len(),
                entry.count
            ));
        }
        Ok(chunks)
    }

    /// Decodes records of the samples stream, in order from the start of
    /// their segment (each may be a delta on the one before); stops at the
    /// first that does not decode and says why.
    fn decode_samples(&self, records: &[Vec<u8>], segment: u32) -> (Vec<Sample>, Option<String>) {
        let mut samples: Vec<Sample> = Vec::with_capacity(records.len());
        for record in records {
            let previous = samples.last().map_or(&*EMPTY, |s| &s.sockets);
            match self.decode_sample(previous, record) {
                Ok(sample) => samples.push(sample),
                Err(error) => {
                    let why = format!(
                        "sample {} of segment {segment} does not decode: {error:#}",
                        samples.len()
                    );
                    return (samples, Some(why));
                }
            }
        }
        (samples, None)
    }

    /// As `decode_samples`, holding only the sample before the one being
    /// decoded: the last one, or why one did not decode.
    fn decode_last(&self, records: &[Vec<u8>], segment: u32) -> (Option<Sample>, Option<String>) {
        let mut last: Option<Sample> = None;
        for (ordinal, record) in records.iter().enumerate() {
            let previous = last.as_ref().map_or(&*EMPTY, |s| &s.sockets);
            match self.decode_sample(previous, record) {
                Ok(sample) => last = Some(sample),
                Err(error) => {
                    let why =
                        format!("sample {ordinal} of segment {segment} does not decode: {error:#}");
                    return (last, Some(why));
                }
            }
        }
        (last, None)
    }

    /// One samples record; `previous` is the sockets of the one before it
    /// in its segment (format 2 stores deltas on them).
    fn decode_sample(&self, previous: &SocketTable, record: &[u8]) -> Result<Sample> {
        if self.header.major == 1 {
            Ok(rmp_serde::from_slice::<Sample>(record)?)
        } else {
            super::codec::decode(previous, record)
        }
    }

    /// Decodes one segment of samples one at a time, in order, handing each
    /// to `each` with the one before it in the segment (None for its first):
    /// only those two and one record are held, however many the segment
    /// has (`each` may take the sample's sockets out for a while, as the
    /// encoder does, but puts them back: the next one decodes on from them).
    /// Returns its last sample, and why it stopped early if it did.
    pub fn each_sample(
        &self,
        entry: &SegmentEntry,
        mut each: impl FnMut(Option<&Sample>, &mut Sample) -> Result<()>,
    ) -> Result<(Option<Sample>, Option<String>)> {
        let mut records = self.records_of(entry)?;
        let mut last: Option<Sample> = None;
        let mut ordinal = 0usize;
        while let Some(record) = records.next() {
            let previous = last.as_ref().map_or(&*EMPTY, |s| &s.sockets);
            match self.decode_sample(previous, &record) {
                Ok(mut sample) => {
                    each(last.as_ref(), &mut sample)?;
                    last = Some(sample);
                }
                Err(error) => {
                    records.damage.get_or_insert(format!(
                        "sample {ordinal} of segment {} does not decode: {error:#}",
                        entry.segment
                    ));
                    break;
                }
            }
            ordinal += 1;
        }
        Ok((last, records.damage))
    }

    /// One segment's records, inflated one at a time as they are taken.
    pub fn records_of(&self, entry: &SegmentEntry) -> Result<Records> {
        let chunks = self.read_chunks(entry)?;
        Ok(Records {
            left: chunks.heads.len(),
            damage: chunks.damage,
            disk_bytes: chunks.disk_bytes,
            segment: entry.segment,
            inflater: Inflater::new(chunks.compressed)?,
        })
    }

    /// The position of the newest record at or before `ordinal` that
    /// decodes alone (`codec::self_contained`; every format 1 record does);
    /// 0, the segment's first, when none is found.
    pub fn keyframe_at_or_before(&self, records: &[Vec<u8>], ordinal: usize) -> usize {
        if self.header.major == 1 {
            return ordinal.min(records.len().saturating_sub(1));
        }
        records
            .get(..=ordinal)
            .and_then(|upto| upto.iter().rposition(|r| super::codec::self_contained(r)))
            .unwrap_or(0)
    }

    /// Decodes one segment of samples, holding them all (tests and benches
    /// over files netlens wrote; replay goes one sample at a time with
    /// `each_sample` or a `LazySegment`, which charges what it keeps).
    pub fn read_samples(&self, entry: &SegmentEntry) -> Result<SegmentRead<Sample>> {
        let raw = self.read_raw(entry)?;
        let (samples, error) = self.decode_samples(&raw.records, entry.segment);
        let damage = raw.damage.or(error);
        let mut heads = raw.heads;
        heads.truncate(samples.len());
        Ok(SegmentRead {
            heads,
            records: samples,
            damage,
            disk_bytes: raw.disk_bytes,
        })
    }

    /// Decodes one segment of the packets stream, joined with the payloads
    /// and interfaces recorded with it (when there are any and they read).
    pub fn read_packets(&self, entry: &SegmentEntry) -> Result<SegmentRead<PacketBatch>> {
        let raw = self.read_raw(entry)?;
        let payloads = self.records_beside(Stream::Payloads, entry)?;
        let interfaces = self.records_beside(Stream::Interfaces, entry)?;
        let mut damage = raw.damage;
        let mut batches = Vec::with_capacity(raw.records.len());
        for (head, record) in raw.heads.iter().zip(&raw.records) {
            let rest = payloads.get(&(head.t.to_bits(), head.mono.to_bits()));
            match packets::decode(record, rest.map(Vec::as_slice)) {
                Ok(mut batch) => {
                    let key = (head.t.to_bits(), head.mono.to_bits());
                    if let Some(indexes) = interfaces.get(&key) {
                        // Damage there costs the names, not the packets.
                        let _ = packets::apply_interfaces(indexes, &mut batch);
                    }
                    batches.push(batch);
                }
                Err(error) => {
                    damage.get_or_insert(format!(
                        "packets {} of segment {} do not decode: {error:#}",
                        batches.len(),
                        entry.segment
                    ));
                    break;
                }
            }
        }
        let mut heads = raw.heads;
        heads.truncate(batches.len());
        Ok(SegmentRead {
            heads,
            records: batches,
            damage,
            disk_bytes: raw.disk_bytes,
        })
    }

    /// The records of `stream` written beside the packets of `entry`'s
    /// time span, by (t, mono) bits.
    fn records_beside(
        &self,
        stream: Stream,
        entry: &SegmentEntry,
    ) -> Result<std::collections::HashMap<(u64, u64), Vec<u8>>> {
        let mut records = std::collections::HashMap::new();
        for p in self.stream_segments(stream) {
            if p.last_mono < entry.first_mono || p.first_mono > entry.last_mono {
                continue;
            }
            let read = self.read_raw(&p)?;
            for (head, record) in read.heads.iter().zip(read.records) {
                records.insert((head.t.to_bits(), head.mono.to_bits()), record);
            }
        }
        Ok(records)
    }

    /// The sample shown at wall-clock time `t`: the newest at or before it
    /// (the first one when `t` is before the recording).
    pub fn seek(&self, t: f64) -> Result<Option<Located>> {
        let segments = self.sample_segments();
        if segments.is_empty() {
            return Ok(None);
        }
        let after = segments.partition_point(|s| s.first_t <= t);
        let mut position = after.saturating_sub(1);
        loop {
            let raw = self.read_raw_until(&segments[position], t)?;
            let ordinal = raw.heads.partition_point(|h| h.t <= t).saturating_sub(1);
            if ordinal < raw.records.len() {
                // From the newest keyframe at or before it: at most
                // `writer::SOCKET_KEY_EVERY` samples in a format 2.1 file.
                let from = self.keyframe_at_or_before(&raw.records, ordinal);
                let upto = &raw.records[from..=ordinal];
                let (last, error) = self.decode_last(upto, segments[position].segment);
                let Some(sample) = last.filter(|_| error.is_none()) else {
                    bail!(
                        "{}: the sample at offset {} does not decode ({})",
                        self.path.display(),
                        segments[position].start,
                        error.unwrap_or_default()
                    );
                };
                return Ok(Some(Located {
                    segment: position,
                    ordinal,
                    sample,
                }));
            }
            // That segment is lost entirely: the one before it has the
            // newest sample still readable.
            if position == 0 {
                bail!(
                    "{}: no readable sample at or before that time",
                    self.path.display()
                );
            }
            position -= 1;
        }
    }
}
