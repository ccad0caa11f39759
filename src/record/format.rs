//! The recording file format, version 2.2.
//!
//! ```text
//! file    = header chunk*
//! header  = magic "\x89NLREC\r\n" (8) | major u16 | minor u16 | flags u32   (16 bytes, LE)
//! chunk   = "NLck" | kind u8 | stream u8 | flags u16 | len u32 | payload[len]
//!           | crc32 u32 (of kind..payload) | len u32 (again, for backward scans)
//! ```
//!
//! Chunk kinds: `Meta` (JSON: options, host, version; first), `Data` (one
//! record of one stream), `Index` (at close), `End` (the last chunk: where the
//! index is). A `Data` payload is a 24-byte head (segment u32, ordinal u32,
//! t f64, mono f64) and the zstd bytes of one record.
//!
//! Each stream is cut into segments of about a minute. A segment is one zstd
//! stream: its first record is the keyframe, every later record is flushed
//! as its own chunk and compresses against the records before it (the
//! delta). So every record costs one write, a reader can decode a segment up
//! to its last complete chunk, and damage costs at most the rest of one
//! segment. Uncompressed, a record is a u32 length then its bytes:
//! - samples: the sample without its sockets as MessagePack with field
//!   names (self-describing: a newer netlens may add fields, an older file
//!   lacks them and they take their defaults), then the sockets as columns
//!   of deltas against the previous sample of the segment (`codec`);
//!   since 2.1, every `writer::SOCKET_KEY_EVERY`th sample of a segment
//!   stores its sockets whole (a socket keyframe: all new, no reference
//!   back), so a seek decodes at most that many samples. Nothing else
//!   changed: a 2.0 reader decodes such a record as any other, and a 2.1
//!   reader finds the keyframes by their count of new sockets
//!   (`codec::self_contained`), so 2.0 files (keyframe only at a segment's
//!   start) read as before;
//! - findings: JSON, written when they change;
//! - heads (since 2.2): each sample's head alone (the samples record up to
//!   its sockets), so charts and a jump's five minutes of history read
//!   small records instead of decompressing every socket table on the way
//!   (about 50 ms instead of a second at 10k sockets). Readers before 2.2
//!   skip the stream;
//! - packets: the packets captured since the previous sample, each cut to
//!   the default snap length (`packets`), bounded per second and segment;
//! - interfaces (since 2.6): the index of the interface each packet of a
//!   packets record crossed, when the capture knew it (one on every
//!   interface, whose cooked header does not say), so a bundle's pcapng
//!   names it. Readers before 2.6 skip the stream;
//! - payloads: the rest of those packets, only when whole packets were
//!   captured (--payload).
//!
//! Version 1 stored each sample as MessagePack alone; it is still read.
//!
//! The flight recorder adds no format: its ring is a directory of these
//! files, one per ring segment, each complete alone, dropped whole from the
//! old end (`ring`); an incident bundle is a directory holding one of them
//! with a pcap, a summary and a snapshot (`bundle`).

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

pub const MAGIC: [u8; 8] = *b"\x89NLREC\r\n";
pub const MAJOR: u16 = 2;
/// The oldest major version still read.
pub const OLDEST_MAJOR: u16 = 1;
/// 2.1: socket keyframes within segments; 2.2: the heads stream (see
/// above); 2.3: what limited a sending socket (the codec's LIMIT_FIELDS);
/// 2.4: its pacing and reordering degree (PACING_FIELDS); 2.5: a
/// receiving socket's window and RTT (RECEIVE_FIELDS); 2.6: each packet's
/// interface (the interfaces stream).
pub const MINOR: u16 = 6;
pub const HEADER_LEN: usize = 16;

pub const SYNC: [u8; 4] = *b"NLck";
pub const CHUNK_HEAD: usize = 12;
pub const CHUNK_TAIL: usize = 8;
pub const CHUNK_OVERHEAD: usize = CHUNK_HEAD + CHUNK_TAIL;
/// No chunk is larger; anything claiming more is damage.
pub const MAX_PAYLOAD: usize = 256 << 20;
pub const DATA_HEAD: usize = 24;
/// zstd window: matches reach back 8 MiB, so a sample of a few MiB still
/// compresses against the one before it.
pub const WINDOW_LOG: u32 = 23;
/// A reader refuses windows larger than this (damage, or not our file).
pub const MAX_WINDOW_LOG: u32 = 27;
pub const ZSTD_LEVEL: i32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Meta = 1,
    Data = 2,
    Index = 3,
    End = 4,
}

impl Kind {
    pub fn from_u8(value: u8) -> Option<Kind> {
        Some(match value {
            1 => Kind::Meta,
            2 => Kind::Data,
            3 => Kind::Index,
            4 => Kind::End,
            _ => return None,
        })
    }
}

/// What a stream of records holds. Stream ids are stable across versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Stream {
    /// Every `Sample`, raw counters (rates are computed at replay).
    Samples = 0,
    /// The findings shown live, written when they change.
    Findings = 1,
    /// Packet headers from capture, bounded per segment.
    Packets = 2,
    /// Packet payloads, only when capture kept them.
    Payloads = 3,
    /// Each sample's head without its sockets (format 2.2).
    Heads = 4,
    /// Each recorded packet's interface index (format 2.6).
    Interfaces = 5,
}

/// How many streams there are (`Stream::ALL`).
pub const STREAMS: usize = 6;

impl Stream {
    pub const ALL: [Stream; STREAMS] = [
        Stream::Samples,
        Stream::Findings,
        Stream::Packets,
        Stream::Payloads,
        Stream::Heads,
        Stream::Interfaces,
    ];

    pub fn from_u8(value: u8) -> Option<Stream> {
        Stream::ALL.get(usize::from(value)).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            Stream::Samples => "samples",
            Stream::Findings => "findings",
            Stream::Packets => "packets",
            Stream::Payloads => "payloads",
            Stream::Heads => "heads",
            Stream::Interfaces => "interfaces",
        }
    }
}

/// The file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub major: u16,
    pub minor: u16,
}

impl Header {
    pub fn current() -> Self {
        Header {
            major: MAJOR,
            minor: MINOR,
        }
    }

    pub fn encode(self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..8].copy_from_slice(&MAGIC);
        out[8..10].copy_from_slice(&self.major.to_le_bytes());
        out[10..12].copy_from_slice(&self.minor.to_le_bytes());
        out
    }

    /// Checks the magic and the major version.
    pub fn decode(bytes: &[u8]) -> Result<Header> {
        if bytes.len() < HEADER_LEN {
            if MAGIC.starts_with(bytes) || bytes.starts_with(&MAGIC) {
                bail!("the file ends inside its header (the recorder stopped before writing it)");
            }
            bail!("not a netlens recording (too short, no header)");
        }
        if bytes[..8] != MAGIC {
            bail!("not a netlens recording (no netlens magic number at the start)");
        }
        let major = u16::from_le_bytes([bytes[8], bytes[9]]);
        let minor = u16::from_le_bytes([bytes[10], bytes[11]]);
        if !(OLDEST_MAJOR..=MAJOR).contains(&major) {
            bail!(
                "recording format {major}.{minor} is not supported: this netlens reads formats \
                 {OLDEST_MAJOR}.x to {MAJOR}.x (a {} netlens wrote it)",
                if major > MAJOR { "newer" } else { "older" }
            );
        }
        Ok(Header { major, minor })
    }
}

/// One chunk, framed.
pub fn encode_chunk(kind: Kind, stream: u8, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).expect("chunk payloads are bounded");
    let mut out = Vec::with_capacity(payload.len() + CHUNK_OVERHEAD);
    out.extend_from_slice(&SYNC);
    out.push(kind as u8);
    out.push(stream);
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out[4..]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out
}

/// A chunk's fixed head, before its payload is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHead {
    pub kind: u8,
    pub stream: u8,
    pub len: usize,
}

impl ChunkHead {
    /// Parses a head; None when it cannot be one (damage).
    pub fn parse(bytes: &[u8]) -> Option<ChunkHead> {
        let head = bytes.get(..CHUNK_HEAD)?;
        if head[..4] != SYNC {
            return None;
        }
        let len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        if len > MAX_PAYLOAD {
            return None;
        }
        Some(ChunkHead {
            kind: head[4],
            stream: head[5],
            len,
        })
    }

    pub fn total(self) -> usize {
        self.len + CHUNK_OVERHEAD
    }
}

/// Checks a whole chunk (head, payload, CRC, trailing length) and returns
/// its head and payload.
pub fn check_chunk(bytes: &[u8]) -> Option<(ChunkHead, &[u8])> {
    let head = ChunkHead::parse(bytes)?;
    let whole = bytes.get(..head.total())?;
    let body_end = CHUNK_HEAD + head.len;
    let crc = u32::from_le_bytes(whole[body_end..body_end + 4].try_into().ok()?);
    let trailing = u32::from_le_bytes(whole[body_end + 4..body_end + 8].try_into().ok()?);
    if trailing as usize != head.len || crc32fast::hash(&whole[4..body_end]) != crc {
        return None;
    }
    Some((head, &whole[CHUNK_HEAD..body_end]))
}

/// The head of a Data payload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataHead {
    pub segment: u32,
    pub ordinal: u32,
    pub t: f64,
    pub mono: f64,
}

impl DataHead {
    pub fn encode(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.segment.to_le_bytes());
        out.extend_from_slice(&self.ordinal.to_le_bytes());
        out.extend_from_slice(&self.t.to_le_bytes());
        out.extend_from_slice(&self.mono.to_le_bytes());
    }

    pub fn parse(payload: &[u8]) -> Option<(DataHead, &[u8])> {
        let head = payload.get(..DATA_HEAD)?;
        let u32_at = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().unwrap());
        let f64_at = |at: usize| f64::from_le_bytes(head[at..at + 8].try_into().unwrap());
        Some((
            DataHead {
                segment: u32_at(0),
                ordinal: u32_at(4),
                t: f64_at(8),
                mono: f64_at(16),
            },
            &payload[DATA_HEAD..],
        ))
    }
}

/// The recording's description, the first chunk (JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    /// The netlens version that wrote the file.
    pub netlens: String,
    /// When the recording started (Unix seconds).
    pub created: f64,
    pub hostname: String,
    /// The namespace watched ("host", a name, a path or "pid N").
    pub netns: String,
    /// The sampling interval, seconds.
    pub interval: f64,
    /// The command line that made it.
    #[serde(default)]
    pub command: Vec<String>,
    /// Whether capture ran (packet headers may follow in the packets stream).
    #[serde(default)]
    pub capture: bool,
    /// Whether payloads were kept (the payloads stream).
    #[serde(default)]
    pub payloads: bool,
}

/// One segment of one stream, as the index lists it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SegmentEntry {
    pub stream: u8,
    pub segment: u32,
    /// File offset of its first chunk, and just past its last one. Other
    /// streams' chunks may sit in between.
    pub start: u64,
    pub end: u64,
    /// Records in it.
    pub count: u32,
    pub first_t: f64,
    pub last_t: f64,
    pub first_mono: f64,
    pub last_mono: f64,
}

impl SegmentEntry {
    pub fn new(stream: u8, head: DataHead, start: u64, end: u64) -> Self {
        SegmentEntry {
            stream,
            segment: head.segment,
            start,
            end,
            count: 1,
            first_t: head.t,
            last_t: head.t,
            first_mono: head.mono,
            last_mono: head.mono,
        }
    }

    /// Adds the next record (its chunk ends at `end`).
    pub fn extend(&mut self, head: DataHead, end: u64) {
        self.count += 1;
        self.end = end;
        self.last_t = head.t;
        self.last_mono = head.mono;
    }
}

/// The Index chunk's payload (MessagePack).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Index {
    pub segments: Vec<SegmentEntry>,
}

/// The End chunk's payload: where the Index chunk starts.
pub fn encode_end(index_offset: u64) -> [u8; 8] {
    index_offset.to_le_bytes()
}

pub fn decode_end(payload: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(payload.get(..8)?.try_into().ok()?))
}

/// Frames one record for the uncompressed stream: u32 length, then bytes.
pub fn frame_record(bytes: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(bytes.len()).expect("records are bounded");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Splits a decompressed segment into records; a torn last record is left out.
pub fn split_records(mut bytes: &[u8]) -> Vec<&[u8]> {
    let mut records = Vec::new();
    while let Some(record) = first_record(bytes) {
        records.push(record);
        bytes = &bytes[4 + record.len()..];
    }
    records
}

/// The first whole framed record (a little-endian u32 length, then the
/// bytes) of `bytes`; None when it is torn or absent.
pub fn first_record(bytes: &[u8]) -> Option<&[u8]> {
    let len = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    bytes.get(4..4 + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_round_trip_and_damage() {
        let chunk = encode_chunk(Kind::Data, 2, b"hello");
        let (head, payload) = check_chunk(&chunk).unwrap();
        assert_eq!(
            (head.kind, head.stream, payload),
            (Kind::Data as u8, 2, &b"hello"[..])
        );
        for at in 0..chunk.len() {
            let mut bad = chunk.clone();
            bad[at] ^= 0x40;
            assert!(check_chunk(&bad).is_none(), "flip at {at} went unnoticed");
        }
        assert!(check_chunk(&chunk[..chunk.len() - 1]).is_none());
    }

    #[test]
    fn header_refuses_other_majors_and_strangers() {
        let mut header = Header::current().encode();
        assert_eq!(Header::decode(&header).unwrap(), Header::current());
        header[8] = 3;
        let error = Header::decode(&header).unwrap_err().to_string();
        assert!(
            error.contains(&format!("format 3.{MINOR} is not supported")),
            "{error}"
        );
        assert!(error.contains("newer"), "{error}");
        let error = Header::decode(b"PK\x03\x04 not ours....")
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a netlens recording"), "{error}");
        let error = Header::decode(&MAGIC[..5]).unwrap_err().to_string();
        assert!(error.contains("ends inside its header"), "{error}");
    }

    #[test]
    fn records_split_and_torn_tail_is_dropped() {
        let mut out = Vec::new();
        frame_record(b"one", &mut out);
        frame_record(b"", &mut out);
        frame_record(b"three", &mut out);
        let whole = split_records(&out);
        assert_eq!(whole, vec![&b"one"[..], b"", b"three"]);
        assert_eq!(split_records(&out[..out.len() - 2]).len(), 2);
    }
}
