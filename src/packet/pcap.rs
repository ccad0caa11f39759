//! pcap and pcapng on `io::Read`: a reader for both (classic pcap is
//! parsed here, fast and exact about odd timestamps; pcapng in `pcapng`,
//! both as tolerant and as strict as libpcap) and the classic pcap headers a writer puts out. Opening and
//! creating files is `capture::pcap_file`'s.

use super::format::Timestamp;
use super::pcapng::NgReader;
use anyhow::{Context, Result, anyhow, bail};
use std::io::{BufReader, Read};

/// What a reader reads from: a file, or any other byte stream.
pub type Input = Box<dyn Read + Send>;

/// One packet's record header; its bytes are in the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub linktype: u32,
    pub ts: Timestamp,
    /// The packet's length as the file gives it: in a corrupt file it may be 0 or
    /// less than the captured bytes, which tcpdump prints as an invalid header.
    pub orig_len: u32,
}

enum Kind {
    Classic {
        input: BufReader<Input>,
        swapped: bool,
        nanos: bool,
        linktype: u32,
        /// The file's snapshot length: a longer record is cut to it, as
        /// libpcap does (0 or an absurd value means no cut).
        snaplen: u32,
    },
    Ng(Box<NgReader<BufReader<Input>>>),
}

/// Reads packets from a pcap or pcapng file, one at a time, into a reused
/// buffer.
pub struct PcapReader {
    kind: Kind,
    path: String,
    count: u64,
    /// The file's size and about how much of it the packets so far took
    /// (exact for pcap; pcapng blocks counted at their usual overhead).
    size: u64,
    consumed: u64,
}

/// libpcap's largest snapshot length for the common link types: a record
/// claiming more is refused before anything is allocated for it, as
/// libpcap refuses it.
pub const MAXIMUM_SNAPLEN: u32 = 262_144;

impl PcapReader {
    /// Reads pcap or pcapng from `input`; `name` names it in errors and
    /// `size` (bytes, 0 when unknown) scales `fraction`.
    pub fn new(input: Input, name: &str, size: u64) -> Result<Self> {
        let shown = name.to_string();
        let mut input = BufReader::with_capacity(1 << 20, input);
        let mut magic = [0u8; 4];
        input
            .read_exact(&mut magic)
            .map_err(|_| anyhow!("{shown}: not a pcap or pcapng file (too short)"))?;
        let kind = match magic {
            [0x0a, 0x0d, 0x0d, 0x0a] => {
                let reader = NgReader::new(input)
                    .map_err(|e| anyhow!("{shown}: bad pcapng section header: {e:#}"))?;
                Kind::Ng(Box::new(reader))
            }
            _ => {
                let value = u32::from_le_bytes(magic);
                let (swapped, nanos) = match value {
                    0xa1b2_c3d4 => (false, false),
                    0xa1b2_3c4d => (false, true),
                    0xd4c3_b2a1 => (true, false),
                    0x4d3c_b2a1 => (true, true),
                    _ => bail!("{shown}: not a pcap or pcapng file (unknown magic 0x{value:08x})"),
                };
                let mut rest = [0u8; 20];
                input
                    .read_exact(&mut rest)
                    .map_err(|_| anyhow!("{shown}: truncated pcap file header"))?;
                let word = |i: usize| {
                    let b = [rest[i], rest[i + 1], rest[i + 2], rest[i + 3]];
                    if swapped {
                        u32::from_be_bytes(b)
                    } else {
                        u32::from_le_bytes(b)
                    }
                };
                // The low 16 bits are the link type; the rest is FCS info.
                let linktype = word(16) & 0x0fff_ffff & 0xffff;
                Kind::Classic {
                    input,
                    swapped,
                    nanos,
                    linktype,
                    snaplen: word(12),
                }
            }
        };
        Ok(Self {
            kind,
            path: shown,
            count: 0,
            size,
            consumed: 24,
        })
    }

    /// How far through the file the reader is, 0 to 1, for progress lines.
    /// What a pcapng file says about the last packet read (its interface's
    /// name and description, its comment); nothing for a classic pcap.
    pub fn notes(&self) -> super::pcapng::PacketNotes {
        match &self.kind {
            Kind::Ng(reader) => reader.notes(),
            Kind::Classic { .. } => Default::default(),
        }
    }

    pub fn fraction(&self) -> f64 {
        if self.size == 0 {
            return 1.0;
        }
        (self.consumed as f64 / self.size as f64).min(1.0)
    }

    /// The next packet into `buf`; Ok(None) at the end of the file. A file
    /// cut short is an error naming the packet; packets before it were
    /// returned already.
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<Option<Record>> {
        let index = self.count + 1;
        let record = match &mut self.kind {
            Kind::Classic {
                input,
                swapped,
                nanos,
                linktype,
                snaplen,
            } => {
                let mut header = [0u8; 16];
                let got = read_full(input, &mut header)
                    .with_context(|| format!("cannot read {}", self.path))?;
                if got == 0 {
                    return Ok(None);
                }
                if got < 16 {
                    bail!(
                        "{}: truncated file: packet {index}'s header has {got} of 16 bytes",
                        self.path
                    );
                }
                let word = |i: usize| {
                    let b = [header[i], header[i + 1], header[i + 2], header[i + 3]];
                    if *swapped {
                        u32::from_be_bytes(b)
                    } else {
                        u32::from_le_bytes(b)
                    }
                };
                let caplen = word(8);
                if caplen > MAXIMUM_SNAPLEN {
                    // libpcap's words, and like it the file stops here.
                    let limit = if caplen > *snaplen {
                        format!("bigger than snaplen of {snaplen}")
                    } else {
                        format!("bigger than maximum of {MAXIMUM_SNAPLEN}")
                    };
                    bail!(
                        "{}: packet {index}: invalid packet capture length {caplen}, {limit}",
                        self.path
                    );
                }
                buf.resize(caplen as usize, 0);
                let got =
                    read_full(input, buf).with_context(|| format!("cannot read {}", self.path))?;
                if got < caplen as usize {
                    bail!(
                        "{}: truncated file: packet {index} has {got} of {caplen} bytes",
                        self.path
                    );
                }
                self.consumed += 16 + u64::from(caplen);
                if (1..=MAXIMUM_SNAPLEN).contains(snaplen) && caplen > *snaplen {
                    buf.truncate(*snaplen as usize);
                }
                Record {
                    linktype: *linktype,
                    ts: Timestamp {
                        sec: i64::from(word(0)),
                        frac: word(4),
                        nanos: *nanos,
                    },
                    orig_len: word(12),
                }
            }
            Kind::Ng(reader) => {
                let Some(record) = reader
                    .next_into(buf)
                    .with_context(|| format!("{}: packet {index}", self.path))?
                else {
                    return Ok(None);
                };
                // A packet block's overhead, its data padded.
                self.consumed += 32 + (buf.len() as u64).next_multiple_of(4);
                record
            }
        };
        self.count += 1;
        Ok(Some(record))
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

const PCAP_HEADER_LEN: usize = 24;

/// A classic pcap file header: microsecond timestamps, version 2.4.
pub fn file_header(linktype: u32, snaplen: u32) -> [u8; PCAP_HEADER_LEN] {
    let mut header = [0u8; PCAP_HEADER_LEN];
    header[0..4].copy_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    header[4..6].copy_from_slice(&2u16.to_le_bytes());
    header[6..8].copy_from_slice(&4u16.to_le_bytes());
    header[16..20].copy_from_slice(&snaplen.to_le_bytes());
    header[20..24].copy_from_slice(&linktype.to_le_bytes());
    header
}

/// A classic pcap record header for `caplen` bytes of a packet `orig_len`
/// long (never less than what was captured).
pub fn record_header(ts: Timestamp, orig_len: u32, caplen: u32) -> [u8; 16] {
    let micros = ts.micros().min(999_999);
    let mut header = [0u8; 16];
    header[0..4].copy_from_slice(&(ts.sec.clamp(0, i64::from(u32::MAX)) as u32).to_le_bytes());
    header[4..8].copy_from_slice(&micros.to_le_bytes());
    header[8..12].copy_from_slice(&caplen.to_le_bytes());
    header[12..16].copy_from_slice(&orig_len.max(caplen).to_le_bytes());
    header
}
