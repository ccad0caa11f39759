//! pcap and pcapng files on disk: opening one for `PcapReader`, and
//! creating one safely (`safe_file`) for the packets netlens writes.

use crate::packet::format::Timestamp;
use crate::packet::pcap::{PcapReader, file_header, record_header};
use crate::packet::pcapng;
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

/// The layout of a file netlens writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Classic pcap, microsecond timestamps: what tcpdump -w writes.
    Pcap,
    /// pcapng, nanosecond timestamps: an interface block per interface
    /// (its name, and the namespace it is in) and a comment per packet
    /// naming the process and container it belonged to, where known.
    Pcapng,
}

impl FileFormat {
    /// By the file's name: `.pcapng` is pcapng; anything else (`.pcap`,
    /// a device, a FIFO) classic pcap, as tcpdump -w writes it.
    pub fn of_path(path: &Path) -> FileFormat {
        match path.extension() {
            Some(ext) if ext.eq_ignore_ascii_case("pcapng") => FileFormat::Pcapng,
            _ => FileFormat::Pcap,
        }
    }
}

/// An interface as a pcapng interface block names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterfaceName {
    /// "eth0", or "any" for a capture on every interface.
    pub name: String,
    /// The namespace it is in, as netlens labels it ("host", a name).
    pub namespace: String,
}

impl InterfaceName {
    /// if_description: where the interface is.
    fn description(&self) -> String {
        format!("namespace {}", self.namespace)
    }
}

/// What a pcapng file says about one packet, beyond its bytes: the
/// interface it was captured on (None: the capture's own) and whose it
/// was ("pid 812 (nginx), container web"). Shared with the table that
/// made it, so a note per packet costs no allocation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PacketNote {
    pub interface: Option<std::sync::Arc<InterfaceName>>,
    pub comment: Option<std::sync::Arc<str>>,
}

/// What a new file holds: its format, the packets' link type and snap
/// length, and the interface they were captured on.
#[derive(Debug, Clone)]
pub struct FileLayout {
    pub format: FileFormat,
    pub linktype: u32,
    pub snaplen: u32,
    pub interface: InterfaceName,
}

impl FileLayout {
    /// A classic pcap of `linktype` packets at most `snaplen` bytes long.
    pub fn pcap(linktype: u32, snaplen: u32) -> FileLayout {
        FileLayout {
            format: FileFormat::Pcap,
            linktype,
            snaplen,
            interface: InterfaceName::default(),
        }
    }
}

/// Writes a classic pcap file (microsecond timestamps) or a pcapng file
/// ([`FileFormat`]) that tcpdump and Wireshark open. The file is created with [`safe_file::create_private`]
/// (never an existing file, never through a symlink, mode 0600) and removed
/// again unless the write finishes ([`PcapFileWriter::finish`]) or the caller
/// keeps the packets written so far ([`PcapFileWriter::keep_saved`]).
/// [`PcapFileWriter::create_output`] also writes to a device or FIFO the
/// user named, which is never synced, cut or removed.
pub struct PcapFileWriter {
    out: BufWriter<Counted>,
    path: PathBuf,
    layout: FileLayout,
    /// pcapng: the interfaces whose blocks are written, by id.
    interfaces: Vec<InterfaceName>,
    /// pcapng: a packet block, reused.
    block: Vec<u8>,
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

impl PcapFileWriter {
    /// Creates `path` for packets as `layout` says; an existing file or a
    /// symlink there is refused with a one-line error.
    pub fn create(path: &Path, layout: FileLayout) -> Result<Self> {
        let file = safe_file::create_private(path)
            .map_err(|e| anyhow!("{}", safe_file::create_error(path, &e)))?;
        Self::start(
            safe_file::Output {
                file,
                created: true,
            },
            path,
            layout,
        )
    }

    /// As `create`, for a path the user named: an existing character
    /// device or FIFO is written to (`capture -w /dev/null`), see
    /// [`safe_file::create_output`].
    pub fn create_output(path: &Path, layout: FileLayout) -> Result<Self> {
        let output = safe_file::create_output(path)
            .map_err(|e| anyhow!("{}", safe_file::create_error(path, &e)))?;
        Self::start(output, path, layout)
    }

    /// Writes the file's header to `output`: pcap's, or pcapng's section
    /// header and the capture's interface block (id 0).
    fn start(output: safe_file::Output, path: &Path, layout: FileLayout) -> Result<Self> {
        let safe_file::Output { file, created } = output;
        let header = match layout.format {
            FileFormat::Pcap => file_header(layout.linktype, layout.snaplen).to_vec(),
            FileFormat::Pcapng => {
                let mut header =
                    pcapng::section_header(concat!("netlens ", env!("CARGO_PKG_VERSION")));
                header.extend(pcapng::interface_block(
                    layout.linktype,
                    layout.snaplen,
                    &layout.interface.name,
                    &layout.interface.description(),
                ));
                header
            }
        };
        let mut writer = Self {
            out: BufWriter::with_capacity(1 << 16, Counted { file, written: 0 }),
            path: path.to_path_buf(),
            interfaces: vec![layout.interface.clone()],
            layout,
            block: Vec::new(),
            queued: 0,
            pending: VecDeque::new(),
            saved: 0,
            saved_end: header.len() as u64,
            kept: false,
            created,
        };
        writer.put(&header)?;
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

    pub fn linktype(&self) -> u32 {
        self.layout.linktype
    }

    pub fn write(&mut self, ts: Timestamp, orig_len: u32, data: &[u8]) -> Result<()> {
        self.write_noted(ts, orig_len, data, None)
    }

    /// Writes a packet with what pcapng says about it (a classic pcap has
    /// no place for `note`).
    pub fn write_noted(
        &mut self,
        ts: Timestamp,
        orig_len: u32,
        data: &[u8],
        note: Option<&PacketNote>,
    ) -> Result<()> {
        let caplen = data.len() as u32;
        if caplen > self.layout.snaplen {
            bail!(
                "cannot write a packet of {caplen} bytes to {}: longer than its snap length {}",
                self.path.display(),
                self.layout.snaplen
            );
        }
        match self.layout.format {
            FileFormat::Pcap => {
                self.put(&record_header(ts, orig_len, caplen))?;
                self.put(data)?;
            }
            FileFormat::Pcapng => {
                let interface = match note.and_then(|n| n.interface.as_ref()) {
                    Some(interface) => self.interface_id(interface)?,
                    None => 0,
                };
                let comment = note.and_then(|n| n.comment.as_deref());
                let mut block = std::mem::take(&mut self.block);
                block.clear();
                pcapng::enhanced_packet(&mut block, interface, ts, orig_len, data, comment);
                let result = self.put(&block);
                self.block = block;
                result?;
            }
        }
        self.pending.push_back(self.queued);
        self.settle();
        Ok(())
    }

    /// The id of `interface`'s block, written before its first packet.
    fn interface_id(&mut self, interface: &InterfaceName) -> Result<u32> {
        if let Some(id) = self.interfaces.iter().position(|i| i == interface) {
            return Ok(id as u32);
        }
        let block = pcapng::interface_block(
            self.layout.linktype,
            self.layout.snaplen,
            &interface.name,
            &interface.description(),
        );
        self.put(&block)?;
        self.interfaces.push(interface.clone());
        Ok(self.interfaces.len() as u32 - 1)
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

/// Writes `packets` (time, original length, bytes, note) to a new file at
/// `path` (the Flows tab's `w`, the flow screen's `e`), pcap or pcapng by
/// its name; returns how many. The snap length in the header is at least
/// the longest packet's bytes (a cooked capture's packets carry 16 bytes
/// of header on top of the ring's snap length). A failed write removes
/// the file.
pub fn write_file<'a>(
    path: &Path,
    mut layout: FileLayout,
    packets: impl IntoIterator<Item = (Timestamp, u32, &'a [u8], PacketNote)> + Clone,
) -> Result<u64> {
    let longest = packets
        .clone()
        .into_iter()
        .map(|(_, _, data, _)| data.len() as u32)
        .max()
        .unwrap_or(0);
    layout.format = FileFormat::of_path(path);
    layout.snaplen = layout.snaplen.max(longest).max(1);
    let mut writer = PcapFileWriter::create(path, layout)?;
    let mut count = 0;
    for (ts, orig_len, data, note) in packets {
        writer.write_noted(ts, orig_len, data, Some(&note))?;
        count += 1;
    }
    writer.finish()?;
    Ok(count)
}

/// A name for a file netlens picks itself in the current directory:
/// `<prefix>-<unix time>-<8 random hex digits>.pcapng`, so nobody can
/// plant a link under it in advance.
pub fn unpredictable_name(prefix: &str, t: i64) -> PathBuf {
    PathBuf::from(format!(
        "{prefix}-{t}-{:08x}.pcapng",
        crate::safe_file::random_u64() as u32
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("netlens-pcap-{}-{name}", std::process::id()))
    }

    fn layout(format: FileFormat, linktype: u32, snaplen: u32) -> FileLayout {
        FileLayout {
            format,
            linktype,
            snaplen,
            interface: InterfaceName {
                name: "any".into(),
                namespace: "host".into(),
            },
        }
    }

    /// Two interfaces and a comment: each packet reads back with its
    /// bytes, time to the nanosecond, interface and comment.
    #[test]
    fn pcapng_names_interfaces_and_owners() {
        let path = temp("notes.pcapng");
        assert_eq!(FileFormat::of_path(&path), FileFormat::Pcapng);
        let mut w = PcapFileWriter::create(&path, layout(FileFormat::Pcapng, 276, 65535)).unwrap();
        let ts = Timestamp {
            sec: 1_700_000_000,
            frac: 123_456_789,
            nanos: true,
        };
        let veth = PacketNote {
            interface: Some(std::sync::Arc::new(InterfaceName {
                name: "veth0".into(),
                namespace: "web".into(),
            })),
            comment: Some("pid 812 (nginx), container web (podman)".into()),
        };
        w.write_noted(ts, 60, &[1, 2, 3, 4, 5], Some(&veth))
            .unwrap();
        w.write_noted(ts, 3, &[6, 7, 8], None).unwrap();
        w.write_noted(ts, 3, &[9], Some(&veth)).unwrap();
        assert_eq!(w.saved(), 0, "still buffered");
        w.finish().unwrap();
        let mut r = open(&path).unwrap();
        let mut buf = Vec::new();
        let first = r.next_into(&mut buf).unwrap().unwrap();
        assert_eq!((first.linktype, first.ts, first.orig_len), (276, ts, 60));
        assert_eq!(buf, [1, 2, 3, 4, 5]);
        let notes = r.notes();
        assert_eq!(notes.interface.as_deref(), Some("veth0"));
        assert_eq!(notes.description.as_deref(), Some("namespace web"));
        assert_eq!(notes.comment.as_deref(), veth.comment.as_deref());
        r.next_into(&mut buf).unwrap().unwrap();
        assert_eq!(buf, [6, 7, 8]);
        let notes = r.notes();
        assert_eq!(notes.interface.as_deref(), Some("any"));
        assert_eq!(notes.description.as_deref(), Some("namespace host"));
        assert_eq!(notes.comment, None);
        r.next_into(&mut buf).unwrap().unwrap();
        assert_eq!(r.notes().interface.as_deref(), Some("veth0"));
        assert!(r.next_into(&mut buf).unwrap().is_none());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn write_then_read_round_trips() {
        let path = temp("rt.pcap");
        let mut w = PcapFileWriter::create(&path, layout(FileFormat::Pcap, 1, 262_144)).unwrap();
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
        let mut w = PcapFileWriter::create(&path, layout(FileFormat::Pcap, 1, 65535)).unwrap();
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
