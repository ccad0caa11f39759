//! Appends records to a recording: one write per record, an fdatasync each
//! time a segment closes, the index at the end.

use super::format::{
    self, DataHead, Header, Index, Kind, Meta, STREAMS, SegmentEntry, Stream, WINDOW_LOG,
    ZSTD_LEVEL,
};
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A segment closes after this many seconds of records...
pub const SEGMENT_SECONDS: f64 = 60.0;
/// ...or this many uncompressed bytes, whichever comes first (bounds the
/// work of a seek into a recording of huge samples).
pub const SEGMENT_RAW_BYTES: u64 = 64 << 20;
/// Every this many samples within a segment, the sockets are written whole
/// (a socket keyframe, `codec::self_contained`) instead of as deltas, so a
/// seek decodes at most this many samples (at 10k sockets each decode is
/// milliseconds) while zstd still compresses the keyframe against the
/// records before it in the segment's stream. Format 2.1.
pub const SOCKET_KEY_EVERY: u32 = 10;

struct OpenSegment {
    encoder: zstd::stream::write::Encoder<'static, Vec<u8>>,
    /// Its entry in `Writer::index`.
    entry: usize,
    ordinal: u32,
    raw: u64,
}

/// What a writer has written so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WriteStats {
    pub records: [u64; STREAMS],
    pub raw_bytes: [u64; STREAMS],
    /// File size so far.
    pub bytes: u64,
    pub first_t: Option<f64>,
    pub last_t: Option<f64>,
}

pub struct Writer {
    file: File,
    /// netlens created the file (not the user's device or FIFO, which has
    /// nothing to sync).
    created: bool,
    path: PathBuf,
    offset: u64,
    open: [Option<OpenSegment>; STREAMS],
    next_segment: [u32; STREAMS],
    index: Vec<SegmentEntry>,
    stats: WriteStats,
    segment_seconds: f64,
    /// Why a write failed: the file's tail is unknown, stop writing.
    broken: Option<String>,
    /// The previous sample's sockets, for the next sample's deltas.
    samples: super::codec::SampleEncoder,
}

impl Writer {
    /// Creates `path` (`safe_file::create_private`: mode 0600, an existing
    /// file or a symlink is never written through) and
    /// writes the header and `meta`.
    pub fn create(path: &Path, meta: &Meta) -> Result<Writer> {
        Self::create_with(path, meta, SEGMENT_SECONDS)
    }

    /// As `create`, for a path the user named: an existing character
    /// device or FIFO is written to (`record -o /dev/null`), see
    /// `safe_file::create_output`.
    pub fn create_output(path: &Path, meta: &Meta) -> Result<Writer> {
        let output = crate::safe_file::create_output(path)
            .map_err(|e| anyhow::anyhow!("{}", crate::safe_file::create_error(path, &e)))?;
        Self::start(output, path, meta, SEGMENT_SECONDS)
    }

    /// As `create`, with another segment length (tests, benches).
    pub fn create_with(path: &Path, meta: &Meta, segment_seconds: f64) -> Result<Writer> {
        let file = crate::safe_file::create_private(path)
            .map_err(|e| anyhow::anyhow!("{}", crate::safe_file::create_error(path, &e)))?;
        let output = crate::safe_file::Output {
            file,
            created: true,
        };
        Self::start(output, path, meta, segment_seconds)
    }

    /// Writes the header and `meta` to `output`.
    fn start(
        output: crate::safe_file::Output,
        path: &Path,
        meta: &Meta,
        segment_seconds: f64,
    ) -> Result<Writer> {
        let crate::safe_file::Output { mut file, created } = output;
        let mut start = Header::current().encode().to_vec();
        let meta_json = serde_json::to_vec(meta).expect("meta is plain data");
        start.extend_from_slice(&format::encode_chunk(Kind::Meta, 0, &meta_json));
        file.write_all(&start)
            .and_then(|()| if created { file.sync_data() } else { Ok(()) })
            .with_context(|| format!("cannot write to {}", path.display()))?;
        Ok(Writer {
            file,
            created,
            path: path.to_path_buf(),
            offset: start.len() as u64,
            open: Default::default(),
            next_segment: [0; STREAMS],
            index: Vec::new(),
            stats: WriteStats {
                bytes: start.len() as u64,
                ..Default::default()
            },
            segment_seconds,
            broken: None,
            samples: Default::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn stats(&self) -> WriteStats {
        self.stats
    }

    /// Whether a record of `stream` at `mono` starts a new segment (its
    /// keyframe).
    pub fn starts_segment(&self, stream: Stream, mono: f64) -> bool {
        match &self.open[stream as usize] {
            None => true,
            Some(open) => {
                let first = self.index[open.entry].first_mono;
                mono - first >= self.segment_seconds
                    || mono < first
                    || open.raw >= SEGMENT_RAW_BYTES
            }
        }
    }

    /// Appends a sample to the samples stream (see `codec`), and its head
    /// to the heads stream. Its sockets are moved out while the rest is
    /// serialized, then put back.
    pub fn write_sample(&mut self, sample: &mut crate::model::Sample) -> Result<()> {
        let ordinal = self.open[Stream::Samples as usize]
            .as_ref()
            .map_or(0, |open| open.ordinal);
        let keyframe = self.starts_segment(Stream::Samples, sample.mono)
            || ordinal.is_multiple_of(SOCKET_KEY_EVERY);
        // How long the sample took to get here: a late sampler shows.
        let now_t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        sample.age = Some(sample.age_at(now_t));
        let bytes = self.samples.encode(sample, keyframe);
        self.write_record(Stream::Samples, sample.t, sample.mono, &bytes)?;
        let head = super::codec::head_part(&bytes);
        self.write_record(Stream::Heads, sample.t, sample.mono, head)
    }

    /// Appends one record (already serialized) to `stream`: one chunk, one
    /// write.
    pub fn write_record(&mut self, stream: Stream, t: f64, mono: f64, bytes: &[u8]) -> Result<()> {
        self.check_broken()?;
        let s = stream as usize;
        let roll = self.open[s].is_some() && self.starts_segment(stream, mono);
        if roll {
            self.close_segment(s)?;
        }
        if self.open[s].is_none() {
            let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), ZSTD_LEVEL)
                .context("cannot start zstd")?;
            encoder
                .set_parameter(zstd::stream::raw::CParameter::WindowLog(WINDOW_LOG))
                .context("cannot set the zstd window")?;
            self.open[s] = Some(OpenSegment {
                encoder,
                entry: usize::MAX,
                ordinal: 0,
                raw: 0,
            });
        }
        let open = self.open[s].as_mut().expect("opened above");
        let mut framed = Vec::with_capacity(bytes.len() + 4);
        format::frame_record(bytes, &mut framed);
        open.encoder
            .write_all(&framed)
            .and_then(|()| open.encoder.flush())
            .context("zstd failed")?;
        let compressed = std::mem::take(open.encoder.get_mut());
        let head = DataHead {
            segment: self.next_segment[s],
            ordinal: open.ordinal,
            t,
            mono,
        };
        let mut payload = Vec::with_capacity(compressed.len() + format::DATA_HEAD);
        head.encode(&mut payload);
        payload.extend_from_slice(&compressed);
        let chunk = format::encode_chunk(Kind::Data, stream as u8, &payload);
        if let Err(error) = self.file.write_all(&chunk) {
            self.broken = Some(error.to_string());
            return Err(error).with_context(|| format!("cannot write to {}", self.path.display()));
        }
        let start = self.offset;
        self.offset += chunk.len() as u64;
        if open.ordinal == 0 {
            open.entry = self.index.len();
            self.index
                .push(SegmentEntry::new(stream as u8, head, start, self.offset));
        } else {
            self.index[open.entry].extend(head, self.offset);
        }
        open.ordinal += 1;
        open.raw += framed.len() as u64;
        self.stats.records[s] += 1;
        self.stats.raw_bytes[s] += bytes.len() as u64;
        self.stats.bytes = self.offset;
        if stream == Stream::Samples {
            self.stats.first_t.get_or_insert(t);
            self.stats.last_t = Some(t);
        }
        Ok(())
    }

    /// Makes what was written durable; a device or FIFO has nothing to
    /// sync (EINVAL).
    fn sync(&self) -> std::io::Result<()> {
        if self.created {
            self.file.sync_data()
        } else {
            Ok(())
        }
    }

    fn check_broken(&self) -> Result<()> {
        match &self.broken {
            Some(why) => bail!(
                "the recording {} stopped after a write error ({why})",
                self.path.display()
            ),
            None => Ok(()),
        }
    }

    /// Ends a stream's segment: the next record starts a new zstd stream
    /// (the keyframe). The segment is made durable here.
    fn close_segment(&mut self, stream: usize) -> Result<()> {
        if self.open[stream].take().is_some() {
            self.next_segment[stream] += 1;
            self.sync()
                .with_context(|| format!("cannot sync {}", self.path.display()))?;
        }
        Ok(())
    }

    /// Writes the index and the end marker and syncs: the file is complete.
    pub fn finish(mut self) -> Result<WriteStats> {
        self.check_broken()?;
        let index = Index {
            segments: std::mem::take(&mut self.index),
        };
        let payload = rmp_serde::to_vec_named(&index).expect("the index is plain data");
        let mut tail = format::encode_chunk(Kind::Index, 0, &payload);
        tail.extend_from_slice(&format::encode_chunk(
            Kind::End,
            0,
            &format::encode_end(self.offset),
        ));
        self.file
            .write_all(&tail)
            .and_then(|()| self.sync())
            .with_context(|| format!("cannot finish {}", self.path.display()))?;
        self.stats.bytes = self.offset + tail.len() as u64;
        Ok(self.stats)
    }
}
