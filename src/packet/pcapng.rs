//! pcapng, read as libpcap (and so tcpdump) reads it: the blocks it knows
//! are parsed, every other block is skipped whole; options are read only
//! where a packet's meaning depends on them (an interface's timestamp
//! resolution and offset), and an option it does not know, or one whose
//! length runs past its block, is skipped as libpcap skips it. Sizes are
//! bounded before anything is allocated: a block is at most
//! `MAX_BLOCK` bytes, a packet is cut to its interface's snap length.

use super::format::Timestamp;
use super::pcap::{MAXIMUM_SNAPLEN, Record};
use anyhow::{Result, bail};
use std::io::Read;

/// libpcap's largest pcapng block (INITIAL_MAX_BLOCKSIZE): a larger one
/// is an error, not an allocation.
const MAX_BLOCK: u32 = 16 << 20;

const SECTION_HEADER: u32 = 0x0a0d_0d0a;
const INTERFACE: u32 = 1;
const OBSOLETE_PACKET: u32 = 2;
const SIMPLE_PACKET: u32 = 3;
const ENHANCED_PACKET: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

struct Interface {
    linktype: u32,
    snaplen: u32,
    /// Timestamp units per second (if_tsresol), and seconds added
    /// (if_tsoffset).
    per_sec: u64,
    offset: i64,
}

pub struct NgReader<R> {
    input: R,
    big_endian: bool,
    interfaces: Vec<Interface>,
    /// The block being read, reused.
    block: Vec<u8>,
}

impl<R: Read> NgReader<R> {
    /// Reads the first section header from `input` (its first 4 bytes,
    /// the block type, already read).
    pub fn new(input: R) -> Result<Self> {
        let mut reader = NgReader {
            input,
            big_endian: false,
            interfaces: Vec::new(),
            block: Vec::new(),
        };
        if !reader.read_body(SECTION_HEADER)? {
            bail!("the file ends inside its section header");
        }
        Ok(reader)
    }

    fn u32_at(&self, at: usize) -> u32 {
        let b: [u8; 4] = self.block[at..at + 4].try_into().expect("4 bytes");
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn u16_at(&self, at: usize) -> u16 {
        let b = [self.block[at], self.block[at + 1]];
        if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }

    /// Reads a block's length and body (after its type) into `block`:
    /// the body without the trailing length. Ok(false) at a clean end.
    fn read_body(&mut self, kind: u32) -> Result<bool> {
        let mut word = [0u8; 4];
        if !read_exact_or_end(&mut self.input, &mut word)? {
            bail!("truncated block: the file ends after its type");
        }
        if kind == SECTION_HEADER {
            // The byte order is the section's: read it before the length.
            let mut magic = [0u8; 4];
            if !read_exact_or_end(&mut self.input, &mut magic)? {
                bail!("truncated section header");
            }
            self.big_endian = match u32::from_le_bytes(magic) {
                BYTE_ORDER_MAGIC => false,
                m if m.swap_bytes() == BYTE_ORDER_MAGIC => true,
                m => bail!("bad byte-order magic 0x{m:08x} in a section header"),
            };
        }
        let total = if self.big_endian {
            u32::from_be_bytes(word)
        } else {
            u32::from_le_bytes(word)
        };
        if total < 12 || total % 4 != 0 {
            bail!("a block claims a length of {total} bytes (at least 12, a multiple of 4)");
        }
        if total > MAX_BLOCK {
            bail!("a block claims {total} bytes, more than the maximum of {MAX_BLOCK}");
        }
        let body = total as usize - 12;
        let already = if kind == SECTION_HEADER { 4 } else { 0 };
        self.block.clear();
        if kind == SECTION_HEADER {
            self.block
                .extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        }
        let rest = body + 4 - already;
        let start = self.block.len();
        self.block.resize(start + rest, 0);
        if !read_exact_or_end(&mut self.input, &mut self.block[start..])? {
            bail!("truncated block: the file ends inside it");
        }
        self.block.truncate(self.block.len() - 4);
        if kind == SECTION_HEADER {
            if self.block.len() < 16 {
                bail!("a section header block is too short");
            }
            let major = self.u16_at(4);
            if major != 1 {
                bail!("unsupported pcapng version {major}");
            }
            self.interfaces.clear();
        }
        Ok(true)
    }

    /// The next packet into `buf`; Ok(None) at the end of the file.
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<Option<Record>> {
        loop {
            let mut word = [0u8; 4];
            if !read_exact_or_end(&mut self.input, &mut word)? {
                return Ok(None);
            }
            // A section header's type reads the same in both byte orders.
            let kind = if self.big_endian {
                u32::from_be_bytes(word)
            } else {
                u32::from_le_bytes(word)
            };
            self.read_body(kind)?;
            match kind {
                INTERFACE => self.add_interface()?,
                ENHANCED_PACKET | OBSOLETE_PACKET => return self.packet(kind, buf).map(Some),
                SIMPLE_PACKET => return self.simple_packet(buf).map(Some),
                // Section headers were handled above; the rest is skipped.
                _ => {}
            }
        }
    }

    fn add_interface(&mut self) -> Result<()> {
        if self.block.len() < 8 {
            bail!("an interface description block is too short");
        }
        let linktype = u32::from(self.u16_at(0));
        let snaplen = self.u32_at(4);
        let mut interface = Interface {
            linktype,
            // As libpcap: none, or more than it allows, is its maximum.
            snaplen: if snaplen == 0 || snaplen > MAXIMUM_SNAPLEN {
                MAXIMUM_SNAPLEN
            } else {
                snaplen
            },
            per_sec: 1_000_000,
            offset: 0,
        };
        let mut at = 8;
        while at + 4 <= self.block.len() {
            let code = self.u16_at(at);
            let len = usize::from(self.u16_at(at + 2));
            let value = at + 4;
            if code == 0 || value + len > self.block.len() {
                // opt_endofopt, or an option past the block: no more.
                break;
            }
            match (code, len) {
                (9, 1) => {
                    let resol = self.block[value];
                    interface.per_sec = if resol & 0x80 != 0 {
                        1u64 << (resol & 0x7f).min(63)
                    } else {
                        10u64.saturating_pow(u32::from(resol).min(19))
                    };
                }
                (14, 8) => {
                    let high = u64::from(self.u32_at(value));
                    let low = u64::from(self.u32_at(value + 4));
                    let both = if self.big_endian {
                        high << 32 | low
                    } else {
                        low << 32 | high
                    };
                    interface.offset = both as i64;
                }
                _ => {}
            }
            at = value + len.next_multiple_of(4);
        }
        self.interfaces.push(interface);
        Ok(())
    }

    fn packet(&mut self, kind: u32, buf: &mut Vec<u8>) -> Result<Record> {
        if self.block.len() < 20 {
            bail!("a packet block is too short");
        }
        let id = if kind == OBSOLETE_PACKET {
            u32::from(self.u16_at(0))
        } else {
            self.u32_at(0)
        };
        let Some(interface) = self.interfaces.get(id as usize) else {
            bail!(
                "a packet arrived on interface {id}, but no interface description block says what it is"
            );
        };
        let raw = u64::from(self.u32_at(4)) << 32 | u64::from(self.u32_at(8));
        let caplen = self.u32_at(12) as usize;
        let orig_len = self.u32_at(16);
        if caplen > self.block.len() - 20 {
            bail!("a packet's capture length {caplen} runs past its block");
        }
        let per_sec = interface.per_sec.max(1);
        let kept = caplen.min(interface.snaplen as usize);
        buf.clear();
        buf.extend_from_slice(&self.block[20..20 + kept]);
        let nanos = (u128::from(raw % per_sec) * 1_000_000_000 / u128::from(per_sec)) as u32;
        Ok(Record {
            linktype: interface.linktype,
            ts: Timestamp {
                sec: ((raw / per_sec) as i64).saturating_add(interface.offset),
                frac: nanos,
                nanos: true,
            },
            orig_len,
        })
    }

    fn simple_packet(&mut self, buf: &mut Vec<u8>) -> Result<Record> {
        if self.block.len() < 4 {
            bail!("a simple packet block is too short");
        }
        let Some(interface) = self.interfaces.first() else {
            bail!("a simple packet came before any interface description block");
        };
        let orig_len = self.u32_at(0);
        let kept = (orig_len as usize)
            .min(self.block.len() - 4)
            .min(interface.snaplen as usize);
        buf.clear();
        buf.extend_from_slice(&self.block[4..4 + kept]);
        Ok(Record {
            linktype: interface.linktype,
            ts: Timestamp::default(),
            orig_len,
        })
    }
}

/// Fills `buf`; Ok(false) when the input ended before its first byte, an
/// error when it ended inside it.
fn read_exact_or_end(input: &mut impl Read, buf: &mut [u8]) -> Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => bail!("the file ends inside a block"),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(true)
}
