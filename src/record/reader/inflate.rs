//! A segment's records as they are decompressed, one at a time and in
//! order: a seek into a minute of 10k-socket samples (~20 MB raw) inflates
//! only the records up to the one it wants, and playing on inflates the
//! rest as they come.

use super::MAX_SEGMENT_RAW;
use crate::record::format::{self, DataHead, MAX_WINDOW_LOG};
use anyhow::{Context, Result};

/// A segment's chunks, checked (CRC, stream, order) but not decompressed.
#[derive(Debug, Default)]
pub struct SegmentChunks {
    /// Each record's head, read from its chunk: times without inflating.
    pub heads: Vec<DataHead>,
    /// Each record's zstd bytes.
    pub compressed: Vec<Vec<u8>>,
    /// Why the chunks stop short of the index's count, if they do.
    pub damage: Option<String>,
    /// Bytes the chunks take in the file.
    pub disk_bytes: u64,
}

/// Inflates a segment's records in order: each chunk is one flushed zstd
/// block of the segment's stream, so record `i` needs the ones before it.
pub struct Inflater {
    decoder: zstd::stream::raw::Decoder<'static>,
    compressed: Vec<Vec<u8>>,
    /// Chunks fed to the decoder so far.
    fed: usize,
    /// Decompressed bytes not yet split into records.
    pending: Vec<u8>,
    /// Raw bytes inflated so far (bounded by `MAX_SEGMENT_RAW`).
    raw: usize,
}

impl Inflater {
    pub fn new(compressed: Vec<Vec<u8>>) -> Result<Inflater> {
        let mut decoder = zstd::stream::raw::Decoder::new().context("cannot start zstd")?;
        decoder
            .set_parameter(zstd::stream::raw::DParameter::WindowLogMax(MAX_WINDOW_LOG))
            .context("cannot set the zstd window")?;
        Ok(Inflater {
            decoder,
            compressed,
            fed: 0,
            pending: Vec::new(),
            raw: 0,
        })
    }

    /// The next record (None when every chunk was inflated), or why it
    /// does not inflate: nothing after it will.
    pub fn next_record(&mut self) -> Option<Result<Vec<u8>, String>> {
        loop {
            if let Some(record) = take_record(&mut self.pending) {
                return Some(Ok(record));
            }
            let chunk = self.compressed.get(self.fed)?;
            let before = self.pending.len();
            if let Err(error) = decompress(&mut self.decoder, chunk, &mut self.pending) {
                let record = self.fed;
                self.fed = self.compressed.len();
                return Some(Err(format!("cannot decompress record {record}: {error}")));
            }
            self.raw += self.pending.len() - before;
            if self.raw > MAX_SEGMENT_RAW {
                self.fed = self.compressed.len();
                return Some(Err("a segment decompresses to over 1 GiB".into()));
            }
            self.fed += 1;
            // Its chunk gave no whole record: the segment decodes short.
            if self.fed == self.compressed.len() && format::first_record(&self.pending).is_none() {
                return (!self.pending.is_empty()).then(|| Err("a record is cut short".into()));
            }
        }
    }
}

/// Removes and returns the first whole framed record of `pending`.
fn take_record(pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    let len = format::first_record(pending)?.len();
    if pending.len() == 4 + len {
        // The usual case, a chunk per record: taken without a copy, so a
        // large record is held once, not twice.
        let mut record = std::mem::take(pending);
        record.drain(..4);
        return Some(record);
    }
    let record = pending[4..4 + len].to_vec();
    pending.drain(..4 + len);
    Some(record)
}

/// Feeds one flushed zstd block to the segment's decoder.
fn decompress(
    decoder: &mut zstd::stream::raw::Decoder<'static>,
    input: &[u8],
    output: &mut Vec<u8>,
) -> std::io::Result<()> {
    use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
    let mut input = InBuffer::around(input);
    let mut buffer = vec![0u8; 1 << 17];
    loop {
        let before = input.pos();
        let mut out = OutBuffer::around(&mut buffer[..]);
        decoder.run(&mut input, &mut out)?;
        let written = out.pos();
        output.extend_from_slice(&buffer[..written]);
        if output.len() > MAX_SEGMENT_RAW {
            return Err(std::io::Error::other(
                "a segment decompresses to over 1 GiB",
            ));
        }
        if input.pos() == input.src.len() && written < buffer.len() {
            return Ok(());
        }
        if written == 0 && input.pos() == before {
            // No progress on input that remains: nothing more will come.
            return Err(std::io::Error::other("zstd made no progress"));
        }
    }
}
