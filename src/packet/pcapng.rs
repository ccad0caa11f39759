//! pcapng, read as libpcap (and so tcpdump) reads it: the blocks it knows
//! are parsed, every other block is skipped whole; options are read where
//! a packet's meaning depends on them (an interface's timestamp resolution
//! and offset) and where they say whose it was (an interface's name and
//! description, a packet's comment), and an option it does not know, or
//! one whose length runs past its block, is skipped as libpcap skips it.
//! Sizes are bounded before anything is allocated: a block is at most
//! `MAX_BLOCK` bytes, a packet is cut to its interface's snap length.
//!
//! The blocks netlens writes (`section_header`, `interface_block`,
//! `enhanced_packet`) are little-endian, with nanosecond timestamps.

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
    /// if_name and if_description, as the file gives them (at most
    /// `MAX_TEXT` bytes each; escaped where they are shown).
    name: Option<String>,
    description: Option<String>,
}

/// The longest interface name, description or comment kept from a file.
const MAX_TEXT: usize = 1024;

/// Option codes (pcapng's opt_comment, if_name, if_description,
/// if_tsresol, if_tsoffset, shb_userappl).
const OPT_END: u16 = 0;
const OPT_COMMENT: u16 = 1;
const IF_NAME: u16 = 2;
const IF_DESCRIPTION: u16 = 3;
const IF_TSRESOL: u16 = 9;
const IF_TSOFFSET: u16 = 14;
const SHB_USERAPPL: u16 = 4;

/// What a file says about the last packet read: its interface's name and
/// description and its comment, where it has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PacketNotes {
    pub interface: Option<String>,
    pub description: Option<String>,
    pub comment: Option<String>,
}

pub struct NgReader<R> {
    input: R,
    big_endian: bool,
    interfaces: Vec<Interface>,
    /// The block being read, reused.
    block: Vec<u8>,
    /// The last packet's interface and comment.
    last_interface: Option<usize>,
    last_comment: Option<String>,
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
            last_interface: None,
            last_comment: None,
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
            name: None,
            description: None,
        };
        for (code, value) in self.options(8) {
            let len = value.len();
            let value = value.start;
            match (code, len) {
                (IF_NAME, _) => interface.name = Some(self.text(value, len)),
                (IF_DESCRIPTION, _) => interface.description = Some(self.text(value, len)),
                (IF_TSRESOL, 1) => {
                    let resol = self.block[value];
                    interface.per_sec = if resol & 0x80 != 0 {
                        1u64 << (resol & 0x7f).min(63)
                    } else {
                        10u64.saturating_pow(u32::from(resol).min(19))
                    };
                }
                (IF_TSOFFSET, 8) => {
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
        }
        self.interfaces.push(interface);
        Ok(())
    }

    /// The options of the block from offset `at`: (code, where its value
    /// lies), up to opt_endofopt or an option that runs past the block.
    fn options(&self, mut at: usize) -> Vec<(u16, std::ops::Range<usize>)> {
        let mut options = Vec::new();
        while at + 4 <= self.block.len() {
            let code = self.u16_at(at);
            let len = usize::from(self.u16_at(at + 2));
            let value = at + 4;
            if code == OPT_END || value + len > self.block.len() {
                break;
            }
            options.push((code, value..value + len));
            at = value + len.next_multiple_of(4);
        }
        options
    }

    /// An option's text: UTF-8 (lossy), at most `MAX_TEXT` bytes.
    fn text(&self, at: usize, len: usize) -> String {
        let bytes = &self.block[at..at + len.min(MAX_TEXT)];
        // A writer may count a terminating NUL in the length.
        let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// What the file says about the last packet read.
    pub fn notes(&self) -> PacketNotes {
        let interface = self.last_interface.and_then(|i| self.interfaces.get(i));
        PacketNotes {
            interface: interface.and_then(|i| i.name.clone()),
            description: interface.and_then(|i| i.description.clone()),
            comment: self.last_comment.clone(),
        }
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
        let offset = interface.offset;
        let kept = caplen.min(interface.snaplen as usize);
        buf.clear();
        buf.extend_from_slice(&self.block[20..20 + kept]);
        let linktype = interface.linktype;
        self.last_interface = Some(id as usize);
        self.last_comment = None;
        let options_at = 20 + caplen.next_multiple_of(4);
        // Most packets have no options: no look (and no allocation) then.
        if kind == ENHANCED_PACKET && options_at + 4 <= self.block.len() {
            for (code, value) in self.options(options_at) {
                if code == OPT_COMMENT {
                    self.last_comment = Some(self.text(value.start, value.len()));
                }
            }
        }
        let nanos = (u128::from(raw % per_sec) * 1_000_000_000 / u128::from(per_sec)) as u32;
        Ok(Record {
            linktype,
            ts: Timestamp {
                sec: ((raw / per_sec) as i64).saturating_add(offset),
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
        self.last_interface = Some(0);
        self.last_comment = None;
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

/// Appends one option (code, length, value padded to 32 bits).
fn push_option(out: &mut Vec<u8>, code: u16, value: &[u8]) {
    // An option holds at most 65535 bytes: a longer text is cut.
    let value = &value[..value.len().min(usize::from(u16::MAX) & !3)];
    out.extend_from_slice(&code.to_le_bytes());
    out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    out.extend_from_slice(value);
    out.resize(out.len().next_multiple_of(4), 0);
}

/// Closes the block that starts at `start` in `out` (its type and a
/// placeholder length written): the end of options, the trailing length,
/// and the length at its head.
fn finish_block(out: &mut Vec<u8>, start: usize, had_options: bool) {
    if had_options {
        push_option(out, OPT_END, &[]);
    }
    let total = (out.len() - start + 4) as u32;
    out.extend_from_slice(&total.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&total.to_le_bytes());
}

/// A section header block naming the application that wrote the file.
pub fn section_header(application: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&SECTION_HEADER.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    // The section's length: not given (-1).
    out.extend_from_slice(&(-1i64).to_le_bytes());
    push_option(&mut out, SHB_USERAPPL, application.as_bytes());
    finish_block(&mut out, 0, true);
    out
}

/// An interface description block: its link type and snap length, its
/// name (if_name) and what else says where it is (if_description), with
/// nanosecond timestamps (if_tsresol 9).
pub fn interface_block(linktype: u32, snaplen: u32, name: &str, description: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + name.len() + description.len());
    out.extend_from_slice(&INTERFACE.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(linktype as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&snaplen.to_le_bytes());
    if !name.is_empty() {
        push_option(&mut out, IF_NAME, name.as_bytes());
    }
    if !description.is_empty() {
        push_option(&mut out, IF_DESCRIPTION, description.as_bytes());
    }
    push_option(&mut out, IF_TSRESOL, &[9]);
    finish_block(&mut out, 0, true);
    out
}

/// Appends an enhanced packet block to `out`: the packet's bytes on
/// interface `interface` (its index in the file's interface blocks), and
/// its comment (opt_comment) where there is one.
pub fn enhanced_packet(
    out: &mut Vec<u8>,
    interface: u32,
    ts: Timestamp,
    orig_len: u32,
    data: &[u8],
    comment: Option<&str>,
) {
    let start = out.len();
    out.extend_from_slice(&ENHANCED_PACKET.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&interface.to_le_bytes());
    let nanos = if ts.nanos {
        u64::from(ts.frac)
    } else {
        u64::from(ts.frac) * 1000
    };
    let units = (ts.sec.max(0) as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(nanos);
    out.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
    out.extend_from_slice(&(units as u32).to_le_bytes());
    let caplen = data.len() as u32;
    out.extend_from_slice(&caplen.to_le_bytes());
    out.extend_from_slice(&orig_len.max(caplen).to_le_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(4), 0);
    if let Some(comment) = comment {
        push_option(out, OPT_COMMENT, comment.as_bytes());
    }
    finish_block(out, start, comment.is_some());
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
