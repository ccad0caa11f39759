//! The scan that rebuilds a recording's index when the recorder did not
//! close it (killed, or still writing): every chunk read in order through
//! a window, damage skipped to the next sync bytes and reported, bounded.

use super::Reader;
use crate::record::format::{self, CHUNK_HEAD, ChunkHead, DataHead, Kind, SegmentEntry, Stream};
use anyhow::{Context, Result};
use std::os::unix::fs::FileExt;

/// The scan reads the file through a window this large.
const WINDOW: usize = 1 << 20;
/// Damaged ranges the scan reports one by one; past this many, the rest
/// are summed in one line, so memory does not grow with the damage.
pub(super) const MAX_DAMAGE_LINES: usize = 32;

/// The scan's progress through a file that may still grow.
#[derive(Default)]
pub(super) struct ScanState {
    /// Offset of the first chunk not yet scanned.
    offset: u64,
    /// Per stream: position in `segments` of its newest entry.
    newest: [Option<usize>; crate::record::format::STREAMS],
    damage: Damage,
}

impl ScanState {
    /// Nothing scanned yet: the first chunk is at `offset`.
    pub(super) fn starting_at(offset: u64) -> ScanState {
        ScanState {
            offset,
            ..ScanState::default()
        }
    }
}

impl Reader {
    /// Rebuilds the index by reading every chunk (the recorder was killed,
    /// or the index is damaged). Damaged bytes are skipped up to the next
    /// valid chunk; a segment that lost a chunk ends there. Linear in the
    /// file's size, and the damage it keeps is bounded (see [`Damage`]).
    /// Goes on from where the last scan stopped; `growing`: a record cut
    /// by the end of the file is not damage yet, its writer is still at it.
    pub(super) fn scan(&mut self, growing: bool) -> Result<()> {
        let ScanState {
            mut offset,
            mut newest,
            mut damage,
        } = std::mem::take(&mut self.scan);
        let mut window = Window::default();
        while offset < self.len {
            let Some((head, payload)) = self.scan_chunk_at(&mut window, offset)? else {
                if growing && self.cut_at_end(&mut window, offset)? {
                    break;
                }
                let next = self.find_sync(&mut window, offset + 1)?.unwrap_or(self.len);
                damage.skipped(offset, next);
                offset = next;
                continue;
            };
            let end = offset + head.total() as u64;
            if head.kind == Kind::Data as u8
                && let Some(stream) = Stream::from_u8(head.stream)
                && let Some((data, _)) = DataHead::parse(&payload)
            {
                let s = stream as usize;
                let continues = newest[s].is_some_and(|at| {
                    let entry = &self.segments[at];
                    entry.segment == data.segment && entry.count == data.ordinal
                });
                if continues {
                    let at = newest[s].expect("checked");
                    self.segments[at].extend(data, end);
                } else if data.ordinal == 0 {
                    newest[s] = Some(self.segments.len());
                    self.segments
                        .push(SegmentEntry::new(stream as u8, data, offset, end));
                } else {
                    damage.lost_record(format!(
                        "record {} of {} segment {} at offset {offset} follows a lost record",
                        data.ordinal,
                        stream.name(),
                        data.segment
                    ));
                }
            }
            offset = end;
        }
        self.scan_damage = damage.lines(self.len);
        self.scan = ScanState {
            offset,
            newest,
            damage,
        };
        Ok(())
    }

    /// Whether the chunk at `offset` is whole as far as the file goes but
    /// runs past its end (a record being written), rather than damage.
    fn cut_at_end(&self, window: &mut Window, offset: u64) -> Result<bool> {
        let left = self.len - offset;
        if left < CHUNK_HEAD as u64 {
            return Ok(true);
        }
        let Some(head) = self.window_bytes(window, offset, CHUNK_HEAD)? else {
            return Ok(true);
        };
        Ok(ChunkHead::parse(head).is_some_and(|head| head.total() as u64 > left))
    }

    /// The valid chunk at `offset`, read through the scan's window; only
    /// the payload's head is copied out (the scan needs no more).
    fn scan_chunk_at(
        &self,
        window: &mut Window,
        offset: u64,
    ) -> Result<Option<(ChunkHead, Vec<u8>)>> {
        let Some(head) = self.window_bytes(window, offset, CHUNK_HEAD)? else {
            return Ok(None);
        };
        let Some(head) = ChunkHead::parse(head) else {
            return Ok(None);
        };
        let Some(whole) = self.window_bytes(window, offset, head.total())? else {
            return Ok(None);
        };
        Ok(format::check_chunk(whole).map(|(head, payload)| {
            let keep = payload.len().min(format::DATA_HEAD);
            (head, payload[..keep].to_vec())
        }))
    }

    /// `len` bytes at `offset` (None past the end), from the window, which
    /// is refilled with at least [`WINDOW`] bytes when they are not in it.
    fn window_bytes<'w>(
        &self,
        window: &'w mut Window,
        offset: u64,
        len: usize,
    ) -> Result<Option<&'w [u8]>> {
        if offset.saturating_add(len as u64) > self.len {
            return Ok(None);
        }
        let inside = offset >= window.start
            && offset + len as u64 <= window.start + window.bytes.len() as u64;
        if !inside {
            let want = (len.max(WINDOW) as u64).min(self.len - offset) as usize;
            window.bytes.resize(want, 0);
            self.file
                .read_exact_at(&mut window.bytes, offset)
                .with_context(|| format!("cannot read {}", self.path.display()))?;
            window.start = offset;
        }
        let at = (offset - window.start) as usize;
        Ok(Some(&window.bytes[at..at + len]))
    }

    /// The next offset at or after `from` holding the chunk sync bytes,
    /// searching what the window holds before reading on.
    fn find_sync(&self, window: &mut Window, from: u64) -> Result<Option<u64>> {
        let mut at = from;
        loop {
            let need = (self.len.saturating_sub(at)).min(4) as usize;
            if need < 4 || self.window_bytes(window, at, need)?.is_none() {
                return Ok(None);
            }
            let held = &window.bytes[(at - window.start) as usize..];
            if let Some(found) = held.windows(4).position(|w| w == format::SYNC) {
                return Ok(Some(at + found as u64));
            }
            // The last three bytes may begin a sync that the next read ends.
            at += (held.len() - 3) as u64;
        }
    }
}

/// The scan's read-ahead: a block of the file starting at `start`.
#[derive(Default)]
struct Window {
    start: u64,
    bytes: Vec<u8>,
}

/// A run of damaged bytes the scan skipped: `pieces` places where no chunk
/// started, merged because each ended where the next began.
#[derive(Debug, Clone, Copy)]
struct Range {
    start: u64,
    end: u64,
    pieces: u64,
}

/// The damage a scan met, bounded: ranges that touch are merged; past
/// [`MAX_DAMAGE_LINES`] ranges or lost records, only counts are kept.
#[derive(Debug, Default)]
struct Damage {
    ranges: Vec<Range>,
    lost: Vec<String>,
    /// Ranges and bytes beyond the ones kept.
    more_ranges: u64,
    more_bytes: u64,
    more_lost: u64,
}

impl Damage {
    fn skipped(&mut self, start: u64, end: u64) {
        let kept = self.ranges.len();
        match self.ranges.last_mut() {
            Some(last) if last.end == start && self.more_ranges == 0 => {
                last.end = end;
                last.pieces += 1;
            }
            _ if kept < MAX_DAMAGE_LINES => self.ranges.push(Range {
                start,
                end,
                pieces: 1,
            }),
            _ => {
                self.more_ranges += 1;
                self.more_bytes += end - start;
            }
        }
    }

    fn lost_record(&mut self, line: String) {
        if self.lost.len() < MAX_DAMAGE_LINES {
            self.lost.push(line);
        } else {
            self.more_lost += 1;
        }
    }

    /// One line per range (the one reaching the end of the file says why
    /// it is there), then the lost records, then the counts of the rest.
    fn lines(&self, file_len: u64) -> Vec<String> {
        let mut out: Vec<String> = self
            .ranges
            .iter()
            .map(|r| {
                let bytes = r.end - r.start;
                let places = if r.pieces > 1 {
                    format!(", {} places where no record starts", r.pieces)
                } else {
                    String::new()
                };
                if r.end < file_len || self.more_ranges > 0 {
                    format!(
                        "{bytes} damaged bytes at offsets {}-{} skipped{places}",
                        r.start, r.end
                    )
                } else if r.pieces == 1 && bytes < 64 << 20 {
                    format!(
                        "{bytes} bytes at the end are an incomplete record (the recorder \
                         stopped while writing it)"
                    )
                } else {
                    format!(
                        "{bytes} damaged bytes at the end (offsets {}-{}{places})",
                        r.start, r.end
                    )
                }
            })
            .collect();
        out.extend(self.lost.iter().cloned());
        if self.more_ranges > 0 {
            out.push(format!(
                "{} more damaged ranges ({} bytes) skipped",
                self.more_ranges, self.more_bytes
            ));
        }
        if self.more_lost > 0 {
            out.push(format!(
                "{} more records follow a lost record",
                self.more_lost
            ));
        }
        out
    }
}
