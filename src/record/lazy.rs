//! A samples segment as the Player holds it: its records' heads read from
//! their chunks (times without decompressing), each record inflated when
//! first needed (in order: a seek inflates the segment only up to the
//! sample it wants), each sample decoded when first asked for, from the
//! newest socket keyframe at or before it (or on from the sample decoded
//! just before it). So a seek decodes at most `writer::SOCKET_KEY_EVERY`
//! samples of a format 2.1 file, and playing on decodes each sample once.
//!
//! The decoded samples kept are charged against `MAX_DECODED_KEPT`: past
//! it those farthest from the one just decoded are dropped (never the one just decoded, which the next
//! decodes on from) and decoded again from their keyframe when asked for.
//! A crafted segment of samples that each copy a large previous one would
//! otherwise be held whole: tens of GB from a file of a few MB.

use super::format::{DataHead, SegmentEntry};
use super::reader::{Inflater, Reader};
use crate::model::Sample;
use crate::model::socket_table::{EMPTY, SocketTable};

/// Decoded samples a segment keeps, in bytes (`decoded_bytes`): three
/// samples of a million sockets (~216 MB each), the current one, the one
/// before it and a keyframe. The man page's RECORDING FILES says so.
pub const MAX_DECODED_KEPT: usize = 768 << 20;

/// What a decoded sample holds in memory, as replay charges it: its
/// socket table, and its record's size for the head and the users' names
/// (they decode to about as many bytes as they are stored in).
pub fn decoded_bytes(sample: &Sample, record: &[u8]) -> usize {
    size_of::<Sample>() + sample.sockets.heap_bytes() + record.len()
}

pub struct LazySegment {
    /// Each record's time (a sample's `t` and `mono`, as written).
    pub heads: Vec<DataHead>,
    /// The records inflated so far (the first ones); the rest come from
    /// `inflater` as they are needed.
    records: Vec<Vec<u8>>,
    inflater: Option<Inflater>,
    samples: Vec<Option<Sample>>,
    /// What each sample kept in `samples` is charged (`decoded_bytes`).
    charges: Vec<usize>,
    /// Their sum, held under `MAX_DECODED_KEPT` (`keep`).
    kept: usize,
    /// Bytes of the records inflated so far.
    raw: usize,
    /// The sample decoded last: the next one decodes on from its sockets.
    decoded_at: Option<usize>,
    /// Where each sample's decode starts: the newest keyframe at or before it.
    keyframes: Vec<usize>,
    /// Format 1: every record decodes alone (MessagePack).
    whole: bool,
    segment: u32,
    /// Samples decoded so far (whole, with their sockets): what seeks and
    /// playing cost (the replay benches report it).
    pub decodes: u64,
}

impl LazySegment {
    /// Reads `entry`'s chunks (none is decompressed yet); damage met cuts
    /// it there and is returned with it. An unreadable segment is empty.
    pub fn read(reader: &Reader, entry: &SegmentEntry) -> (LazySegment, Option<String>) {
        let read = reader.read_chunks(entry).and_then(|chunks| {
            Ok((
                Inflater::new(chunks.compressed)?,
                chunks.heads,
                chunks.damage,
            ))
        });
        let (inflater, heads, damage) = match read {
            Ok((inflater, heads, damage)) => (Some(inflater), heads, damage),
            Err(error) => (None, Vec::new(), Some(format!("{error:#}"))),
        };
        let segment = LazySegment {
            samples: vec![None; heads.len()],
            charges: vec![0; heads.len()],
            kept: 0,
            raw: 0,
            keyframes: Vec::with_capacity(heads.len()),
            heads,
            records: Vec::new(),
            inflater,
            decoded_at: None,
            whole: reader.header.major == 1,
            segment: entry.segment,
            decodes: 0,
        };
        (segment, damage)
    }

    /// A segment the index does not have: no samples.
    pub fn read_nothing() -> LazySegment {
        LazySegment {
            heads: Vec::new(),
            records: Vec::new(),
            inflater: None,
            samples: Vec::new(),
            charges: Vec::new(),
            kept: 0,
            raw: 0,
            decoded_at: None,
            keyframes: Vec::new(),
            whole: false,
            segment: 0,
            decodes: 0,
        }
    }

    /// Inflates the records up to `i`. Err says why record `k <= i` does
    /// not inflate: the segment is cut before it.
    fn inflate_up_to(&mut self, i: usize) -> Result<(), String> {
        while self.records.len() <= i && self.records.len() < self.heads.len() {
            let next = self.inflater.as_mut().and_then(Inflater::next_record);
            let record = match next {
                Some(Ok(record)) => record,
                failed => {
                    let k = self.records.len();
                    self.cut(k);
                    let why = match failed {
                        Some(Err(why)) => why,
                        _ => "the segment decodes short".into(),
                    };
                    return Err(format!("segment {}: {why}", self.segment));
                }
            };
            let k = self.records.len();
            let key = self.whole || k == 0 || super::codec::self_contained(&record);
            let previous = self.keyframes.last().copied().unwrap_or(0);
            self.keyframes.push(if key { k } else { previous });
            self.raw += record.len();
            self.records.push(record);
        }
        Ok(())
    }

    /// Cuts the segment before record `k` (it does not inflate or decode).
    fn cut(&mut self, k: usize) {
        self.records.truncate(k);
        self.raw = self.records.iter().map(Vec::len).sum();
        self.samples.truncate(k);
        self.charges.truncate(k);
        self.kept = self.charges.iter().sum();
        self.heads.truncate(k);
        self.keyframes.truncate(k);
        self.inflater = None;
        if self.decoded_at.is_some_and(|at| at >= k) {
            self.decoded_at = None;
        }
    }

    /// Bytes this segment holds: its inflated records and the decoded
    /// samples it keeps (the Player's cache is charged these).
    pub fn held_bytes(&self) -> usize {
        self.raw + self.kept
    }

    /// Keeps sample `k`, just decoded, and drops the farthest others kept
    /// while the samples are over `MAX_DECODED_KEPT`: `k` stays (the next
    /// sample decodes on from it); a dropped one decodes again if needed.
    fn keep(&mut self, k: usize, sample: Sample) {
        let charge = decoded_bytes(&sample, &self.records[k]);
        self.samples[k] = Some(sample);
        self.kept += charge - self.charges[k];
        self.charges[k] = charge;
        // The farthest from `k` go first: playing on or stepping back
        // finds its neighbours kept (dropping the lowest first would drop
        // each sample of a decode from the keyframe as soon as it was
        // made, and every step back would decode from the keyframe again).
        let (mut low, mut high) = (0, self.samples.len());
        while self.kept > MAX_DECODED_KEPT && low < high {
            let far = if k.abs_diff(low) >= k.abs_diff(high - 1) {
                low += 1;
                low - 1
            } else {
                high -= 1;
                high
            };
            if far != k && self.samples[far].take().is_some() {
                self.kept -= std::mem::take(&mut self.charges[far]);
            }
        }
    }

    /// Records inflated so far (a seek's cost, with `decodes`).
    pub fn inflated(&self) -> usize {
        self.records.len()
    }

    /// Records in it (the decodable ones, once damage was met).
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Sample `i`. Err says why it does not decode: the segment is then
    /// cut before it (the samples after it refer back to it).
    pub fn get(&mut self, i: usize) -> Result<&Sample, String> {
        if i >= self.heads.len() {
            return Err(format!("segment {} has no sample {i}", self.segment));
        }
        if self.samples[i].is_none() {
            self.inflate_up_to(i)?;
            self.decode_up_to(i)?;
        }
        Ok(self.samples[i].as_ref().expect("decoded above"))
    }

    fn decode_up_to(&mut self, i: usize) -> Result<(), String> {
        let key = self.keyframes[i];
        let start = match self.decoded_at {
            // Going on from the sample decoded last costs less than going
            // back to the keyframe.
            Some(at) if at < i && at >= key => at + 1,
            _ => key,
        };
        for k in start..=i {
            self.decodes += 1;
            let decoded = if self.whole {
                rmp_serde::from_slice::<Sample>(&self.records[k]).map_err(anyhow::Error::from)
            } else {
                // A keyframe decodes alone; a delta on the sample before
                // it, decoded and kept (going on from it or in this loop).
                let previous = match k.checked_sub(1).filter(|_| k > key) {
                    Some(before) => self.samples[before]
                        .as_ref()
                        .map_or(&*EMPTY, |s| &s.sockets),
                    None => &*EMPTY,
                };
                super::codec::decode(previous, &self.records[k])
            };
            match decoded {
                Ok(sample) => {
                    self.keep(k, sample);
                    self.decoded_at = Some(k);
                }
                Err(error) => {
                    self.cut(k);
                    self.decoded_at = None;
                    return Err(format!(
                        "sample {k} of segment {} does not decode: {error:#}",
                        self.segment
                    ));
                }
            }
        }
        Ok(())
    }

    /// Sample `i` without its sockets (empty), for history that only
    /// charts read: its head decodes alone, whatever comes before it (a
    /// sample already decoded is copied, less its sockets).
    pub fn head(&mut self, i: usize) -> Option<Sample> {
        if let Some(Some(sample)) = self.samples.get_mut(i) {
            let sockets = std::mem::take(&mut sample.sockets);
            let copy = sample.clone();
            sample.sockets = sockets;
            return Some(copy);
        }
        self.inflate_up_to(i).ok()?;
        let record = self.records.get(i)?;
        if self.whole {
            let mut sample: Sample = rmp_serde::from_slice(record).ok()?;
            sample.sockets = SocketTable::default();
            return Some(sample);
        }
        super::codec::decode_head(record).ok()
    }

    /// The position of the last sample that decodes (None: none does).
    pub fn last_readable(&mut self) -> (Option<usize>, Option<String>) {
        let mut damage = None;
        while let Some(last) = self.len().checked_sub(1) {
            match self.get(last) {
                Ok(_) => return (Some(last), damage),
                Err(why) => damage = Some(why),
            }
        }
        (None, damage)
    }
}
