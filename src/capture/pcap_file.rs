//! pcap files on disk: opening one for `PcapReader`, and creating one
//! safely (`safe_file`) for the packets netlens writes.

use crate::packet::format::Timestamp;
use crate::packet::pcap::{PcapReader, file_header, record_header};
use crate::safe_file;
use anyhow::{Result, anyhow, bail};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Opens a pcap or pcapng file for reading.
pub fn open(path: &Path) -> Result<PcapReader> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|e| anyhow!("cannot open {shown}: {e}"))?;
    let metadata = file
        .metadata()
        .map_err(|e| anyhow!("cannot read {shown}: {e}"))?;
    if metadata.is_dir() {
        return Err(anyhow!("{shown} is a directory, not a pcap or pcapng file"));
    }
    PcapReader::new(Box::new(file), &shown, metadata.len())
}

/// Writes a classic pcap file (microsecond timestamps) that tcpdump and
/// Wireshark open. The file is created with [`safe_file::create_private`]
/// (never an existing file, never through a symlink, mode 0600) and removed
/// again unless the write finishes ([`PcapFileWriter::finish`]) or the caller
/// keeps the packets written so far ([`PcapFileWriter::keep_saved`]).
/// [`PcapFileWriter::create_output`] also writes to a device or FIFO the
/// user named, which is never synced, cut or removed.
pub struct PcapFileWriter {
    out: BufWriter<Counted>,
    path: PathBuf,
    snaplen: u32,
    /// Bytes handed to the buffer so far.
    queued: u64,
    /// End offsets of the records still (partly) in the buffer.
    pending: VecDeque<u64>,
    /// Records wholly in the file, and where the last of them ends.
    saved: u64,
    saved_end: u64,
    /// Finished or kept: the file stays.
    kept: bool,
    /// netlens created the file (not the user's device or FIFO).
    created: bool,
}

/// The file under the buffer, counting what actually reached it.
struct Counted {
    file: File,
    written: u64,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

const PCAP_HEADER_LEN: u64 = 24;

impl PcapFileWriter {
    /// Creates `path` for packets of `linktype` at most `snaplen` bytes long;
    /// an existing file or a symlink there is refused with a one-line error.
    pub fn create(path: &Path, linktype: u32, snaplen: u32) -> Result<Self> {
        let file = safe_file::create_private(path)
            .map_err(|e| anyhow!("{}", safe_file::create_error(path, &e)))?;
        Self::start(
            safe_file::Output {
                file,
                created: true,
            },
            path,
            linktype,
            snaplen,
        )
    }

    /// As `create`, for a path the user named: an existing character
    /// device or FIFO is written to (`capture -w /dev/null`), see
    /// [`safe_file::create_output`].
    pub fn create_output(path: &Path, linktype: u32, snaplen: u32) -> Result<Self> {
        let output = safe_file::create_output(path)
            .map_err(|e| anyhow!("{}", safe_file::create_error(path, &e)))?;
        Self::start(output, path, linktype, snaplen)
    }

    /// Writes the file header to `output`.
    fn start(output: safe_file::Output, path: &Path, linktype: u32, snaplen: u32) -> Result<Self> {
        let safe_file::Output { file, created } = output;
        let mut writer = Self {
            out: BufWriter::with_capacity(1 << 16, Counted { file, written: 0 }),
            path: path.to_path_buf(),
            snaplen,
            queued: 0,
            pending: VecDeque::new(),
            saved: 0,
            saved_end: PCAP_HEADER_LEN,
            kept: false,
            created,
        };
        writer.put(&file_header(linktype, snaplen))?;
        Ok(writer)
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Packets wholly in the file so far (not those still buffered).
    pub fn saved(&self) -> u64 {
        self.saved
    }

    pub fn write(&mut self, ts: Timestamp, orig_len: u32, data: &[u8]) -> Result<()> {
        let caplen = data.len() as u32;
        if caplen > self.snaplen {
            bail!(
                "cannot write a packet of {caplen} bytes to {}: longer than its snap length {}",
                self.path.display(),
                self.snaplen
            );
        }
        self.put(&record_header(ts, orig_len, caplen))?;
        self.put(data)?;
        self.pending.push_back(self.queued);
        self.settle();
        Ok(())
    }

    /// Hands bytes to the buffer; an error names the file and the cause
    /// ("No space left on device").
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let result = self.out.write_all(bytes);
        self.settle();
        result.map_err(|e| anyhow!("cannot write {}: {e}", self.path.display()))?;
        self.queued += bytes.len() as u64;
        Ok(())
    }

    /// Counts the records that reached the file.
    fn settle(&mut self) {
        let written = self.out.get_ref().written;
        while let Some(&end) = self.pending.front() {
            if end > written {
                break;
            }
            self.pending.pop_front();
            self.saved += 1;
            self.saved_end = end;
        }
    }

    /// Flushes and keeps the file: every packet written is in it.
    pub fn finish(mut self) -> Result<()> {
        let flushed = self.out.flush();
        self.settle();
        flushed.map_err(|e| anyhow!("cannot write {}: {e}", self.path.display()))?;
        // A device or FIFO has nothing to sync (EINVAL).
        if self.created {
            self.out
                .get_ref()
                .file
                .sync_data()
                .map_err(|e| anyhow!("cannot write {}: {e}", self.path.display()))?;
        }
        self.kept = true;
        Ok(())
    }

    /// After a failed write: keeps the file cut after the last packet that
    /// reached it whole (a valid pcap, as far as tcpdump got too), and
    /// returns how many packets it holds.
    pub fn keep_saved(mut self) -> Result<u64> {
        let _ = self.out.flush();
        self.settle();
        let saved = self.saved;
        let end = self.saved_end;
        let path = self.path.clone();
        self.kept = true;
        // Swap the buffer for an empty one over the same file, so what is
        // still buffered is never written after the cut.
        let file = self.out.get_ref().file.try_clone()?;
        let (counted, _) =
            std::mem::replace(&mut self.out, BufWriter::new(Counted { file, written: 0 }))
                .into_parts();
        if !self.created {
            return Ok(saved); // a device or FIFO cannot be cut
        }
        counted
            .file
            .set_len(end)
            .map_err(|e| anyhow!("cannot cut {} to its whole packets: {e}", path.display()))?;
        Ok(saved)
    }
}

impl Drop for PcapFileWriter {
    fn drop(&mut self) {
        if !self.kept && self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes `packets` (time, original length, bytes) to a new pcap at `path`
/// (the Flows tab's `w`, the flow screen's `e`); returns how many. The
/// snap length in the header is at least the longest packet's bytes (a
/// cooked capture's packets carry 16 bytes of header on top of the ring's
/// snap length). A failed write removes the file.
pub fn write_file<'a>(
    path: &Path,
    linktype: u32,
    snaplen: u32,
    packets: impl IntoIterator<Item = (Timestamp, u32, &'a [u8])> + Clone,
) -> Result<u64> {
    let longest = packets
        .clone()
        .into_iter()
        .map(|(_, _, data)| data.len() as u32)
        .max()
        .unwrap_or(0);
    let mut writer = PcapFileWriter::create(path, linktype, snaplen.max(longest).max(1))?;
    let mut count = 0;
    for (ts, orig_len, data) in packets {
        writer.write(ts, orig_len, data)?;
        count += 1;
    }
    writer.finish()?;
    Ok(count)
}

/// A name for a file netlens picks itself in the current directory:
/// `<prefix>-<unix time>-<8 random hex digits>.pcap`, so nobody can plant a
/// link under it in advance.
pub fn unpredictable_name(prefix: &str, t: i64) -> PathBuf {
    PathBuf::from(format!(
        "{prefix}-{t}-{:08x}.pcap",
        crate::safe_file::random_u64() as u32
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("netlens-pcap-{}-{name}", std::process::id()))
    }

    #[test]
    fn write_then_read_round_trips() {
        let path = temp("rt.pcap");
        let mut w = PcapFileWriter::create(&path, 1, 262_144).unwrap();
        let ts = Timestamp {
            sec: 1_700_000_000,
            frac: 123_456,
            nanos: false,
        };
        w.write(ts, 60, &[1, 2, 3, 4]).unwrap();
        w.write(ts, 4, &[5, 6, 7, 8]).unwrap();
        w.finish().unwrap();
        let mut r = open(&path).unwrap();
        let mut buf = Vec::new();
        assert_eq!(r.fraction(), 24.0 / 64.0);
        let first = r.next_into(&mut buf).unwrap().unwrap();
        // 24-byte file header, then two 16-byte record headers + 4 bytes.
        assert_eq!(r.fraction(), 44.0 / 64.0);
        assert_eq!(first.linktype, 1);
        assert_eq!(first.ts, ts);
        assert_eq!(first.orig_len, 60);
        assert_eq!(buf, [1, 2, 3, 4]);
        assert!(r.next_into(&mut buf).unwrap().is_some());
        assert!(r.next_into(&mut buf).unwrap().is_none());
        assert_eq!(r.fraction(), 1.0);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn truncated_file_keeps_earlier_packets_and_names_the_cut() {
        let path = temp("cut.pcap");
        let mut w = PcapFileWriter::create(&path, 1, 65535).unwrap();
        w.write(Timestamp::default(), 10, &[0; 10]).unwrap();
        w.write(Timestamp::default(), 10, &[0; 10]).unwrap();
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let mut r = open(&path).unwrap();
        let mut buf = Vec::new();
        assert!(r.next_into(&mut buf).unwrap().is_some());
        let error = r.next_into(&mut buf).unwrap_err().to_string();
        assert!(
            error.contains("truncated file: packet 2 has 7 of 10 bytes"),
            "{error}"
        );
        std::fs::remove_file(&path).unwrap();
    }

    /// Records as a corrupt file may hold them: longer than the file's
    /// snapshot length (cut to it, as libpcap does) and with a length field
    /// under the captured bytes (kept, so the printer can flag it).
    #[test]
    fn records_are_cut_to_the_snaplen_and_keep_their_length_field() {
        let path = temp("snap.pcap");
        let mut file = Vec::new();
        for word in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 35, 1] {
            file.extend_from_slice(&word.to_le_bytes());
        }
        for (caplen, len) in [(64u32, 34u32), (10, 0)] {
            for word in [1_700_000_000, 0, caplen, len] {
                file.extend_from_slice(&word.to_le_bytes());
            }
            file.extend(std::iter::repeat_n(0xab, caplen as usize));
        }
        std::fs::write(&path, &file).unwrap();
        let mut r = open(&path).unwrap();
        let mut buf = Vec::new();
        let first = r.next_into(&mut buf).unwrap().unwrap();
        assert_eq!((buf.len(), first.orig_len), (35, 34));
        let second = r.next_into(&mut buf).unwrap().unwrap();
        assert_eq!((buf.len(), second.orig_len), (10, 0));
        assert!(r.next_into(&mut buf).unwrap().is_none());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn not_a_pcap_is_a_clear_error() {
        let path = temp("junk.pcap");
        std::fs::write(&path, b"hello world, not a capture").unwrap();
        let error = open(&path).err().unwrap().to_string();
        assert!(error.contains("not a pcap or pcapng file"), "{error}");
        std::fs::remove_file(&path).unwrap();
    }
}
