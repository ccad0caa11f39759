//! Defect 11: pcap sizes. A 140-byte pcap declaring a 256 MiB packet cost
//! 270 MB (the buffer was sized from the record header before reading);
//! libpcap refuses a capture length over its maximum (262144) and so does
//! netlens now, before allocating. pcapng is read as libpcap reads it:
//! options it does not parse, odd option lengths and unknown blocks are
//! skipped, where the strict parser netlens used refused the whole file.
//! Each file is crafted here and compared with `tcpdump -n -r`.

use super::measured::{TempPath, run_netlens};
use std::process::Command;
use std::time::Duration;

/// A UDP packet over Ethernet from 198.18.0.1 to 198.18.0.2.
fn packet(port: u16) -> Vec<u8> {
    let mut p = vec![0u8; 12];
    p.extend_from_slice(&[0x08, 0x00]);
    p.extend_from_slice(&[
        0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
    ]);
    p.extend_from_slice(&port.to_be_bytes());
    p.extend_from_slice(&2u16.to_be_bytes());
    p.extend_from_slice(&[0, 8, 0, 0]);
    p
}

fn classic(snaplen: u32, records: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for word in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, snaplen, 1] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for (i, (caplen, data)) in records.iter().enumerate() {
        for word in [1 + i as u32, 0, *caplen, *caplen] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(data);
    }
    out
}

/// `tcpdump -n -r FILE`: its stdout (packets printed before an error too).
fn tcpdump(path: &std::path::Path) -> Option<String> {
    let out = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(path)
        .env("TZ", "UTC")
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn read(path: &std::path::Path) -> super::measured::Measured {
    let run = run_netlens(
        &["read", path.to_str().unwrap()],
        1 << 30,
        Duration::from_secs(30),
    );
    assert!(
        run.signal.is_none(),
        "killed by {:?}: {}",
        run.signal,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run
}

#[test]
fn a_pcap_claiming_a_256_mib_packet_is_refused_before_allocating() {
    let file = TempPath::new("huge-caplen.pcap");
    let bytes = classic(65535, &[(42, packet(1)), (256 << 20, packet(2).repeat(2))]);
    std::fs::write(&file.0, &bytes).unwrap();
    let run = read(&file.0);
    eprintln!(
        "{} bytes: exit {:?}, peak RSS {} MB; {}",
        bytes.len(),
        run.code,
        run.max_rss_mb,
        run.stderr
    );
    assert!(run.max_rss_mb < 40, "peak RSS {} MB", run.max_rss_mb);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("invalid packet capture length 268435456, bigger than snaplen of 65535"),
        "{}",
        run.stderr
    );
    if let Some(expected) = tcpdump(&file.0) {
        assert_eq!(run.stdout, expected);
    }
}

#[test]
fn a_pcap_over_the_maximum_snaplen_stops_where_tcpdump_stops() {
    let file = TempPath::new("over-max.pcap");
    let mut big = packet(2);
    big.resize(270_000, 0);
    let bytes = classic(300_000, &[(42, packet(1)), (270_000, big), (42, packet(3))]);
    std::fs::write(&file.0, &bytes).unwrap();
    let run = read(&file.0);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("invalid packet capture length 270000, bigger than maximum of 262144"),
        "{}",
        run.stderr
    );
    let Some(expected) = tcpdump(&file.0) else {
        crate::common::need::missing("tcpdump");
        return;
    };
    assert_eq!(run.stdout, expected);
}

/// pcapng blocks, little-endian unless `be`.
struct Ng {
    be: bool,
    out: Vec<u8>,
}

impl Ng {
    fn u16(&self, v: u16) -> [u8; 2] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u32(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    /// An option: code, length, value padded to 4 bytes.
    fn option(&self, code: u16, value: &[u8]) -> Vec<u8> {
        let mut o = self.u16(code).to_vec();
        o.extend_from_slice(&self.u16(value.len() as u16));
        o.extend_from_slice(value);
        o.resize(o.len().next_multiple_of(4), 0);
        o
    }
    fn block(&mut self, kind: u32, body: &[u8]) {
        let total = 12 + body.len().next_multiple_of(4) as u32;
        let mut b = self.u32(kind).to_vec();
        b.extend_from_slice(&self.u32(total));
        b.extend_from_slice(body);
        b.resize(b.len().next_multiple_of(4), 0);
        b.extend_from_slice(&self.u32(total));
        self.out.extend(b);
    }
    fn new(be: bool, shb_options: &[u8]) -> Ng {
        let mut ng = Ng {
            be,
            out: Vec::new(),
        };
        let mut body = ng.u32(0x1a2b_3c4d).to_vec();
        body.extend_from_slice(&ng.u16(1));
        body.extend_from_slice(&ng.u16(0));
        body.extend_from_slice(&u64::MAX.to_le_bytes());
        body.extend_from_slice(shb_options);
        ng.block(0x0a0d_0d0a, &body);
        ng
    }
    fn interface(&mut self, options: &[u8]) {
        let mut body = self.u16(1).to_vec();
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&self.u32(65535));
        body.extend_from_slice(options);
        self.block(1, &body);
    }
    fn packet(&mut self, t: u64, data: &[u8], options: &[u8]) {
        let mut body = self.u32(0).to_vec();
        body.extend_from_slice(&self.u32((t >> 32) as u32));
        body.extend_from_slice(&self.u32(t as u32));
        body.extend_from_slice(&self.u32(data.len() as u32));
        body.extend_from_slice(&self.u32(data.len() as u32));
        body.extend_from_slice(data);
        body.resize(body.len().next_multiple_of(4), 0);
        body.extend_from_slice(options);
        self.block(6, &body);
    }
}

/// Files tcpdump reads that the strict pcapng parser refused whole.
fn tolerated_pcapngs() -> Vec<(&'static str, Vec<u8>)> {
    let mut files = Vec::new();
    for be in [false, true] {
        // A packet option of a code nobody defines, an odd length.
        let mut ng = Ng::new(be, &[]);
        ng.interface(&[]);
        let odd = ng.option(0x7ff1, &[1, 2, 3]);
        ng.packet(1_000_000, &packet(1), &odd);
        ng.packet(2_000_000, &packet(2), &[]);
        files.push((
            if be {
                "odd option, big-endian"
            } else {
                "odd option"
            },
            ng.out,
        ));
    }
    // epb_flags (2) must be 4 bytes: here it has 2.
    let mut ng = Ng::new(false, &[]);
    ng.interface(&[]);
    let short_flags = ng.option(2, &[0, 1]);
    ng.packet(1_000_000, &packet(1), &short_flags);
    ng.packet(3_000_000, &packet(3), &[]);
    files.push(("short epb_flags", ng.out));
    // An option whose length runs past the end of its block.
    let mut ng = Ng::new(false, &[]);
    ng.interface(&[]);
    let mut past = ng.u16(1).to_vec();
    past.extend_from_slice(&ng.u16(200));
    ng.packet(1_000_000, &packet(1), &past);
    ng.packet(4_000_000, &packet(4), &[]);
    files.push(("option past its block", ng.out));
    // A block type nobody defines between packets, and a section header
    // with a comment of an odd length.
    let mut ng = Ng::new(false, &Ng::new(false, &[]).option(1, b"hello"));
    ng.interface(&[]);
    ng.packet(1_000_000, &packet(1), &[]);
    ng.block(0x0bad_0bad, &[1, 2, 3, 4, 5, 6, 7, 8]);
    ng.packet(5_000_000, &packet(5), &[]);
    files.push(("unknown block", ng.out));
    // Nanosecond timestamps (if_tsresol 9) and an unknown interface option.
    let mut ng = Ng::new(false, &[]);
    let mut options = ng.option(9, &[9]);
    options.extend(ng.option(0x7ff2, &[7; 5]));
    ng.interface(&options);
    ng.packet(1_500_000_123, &packet(1), &[]);
    ng.packet(2_500_000_456, &packet(6), &[]);
    files.push(("nanoseconds", ng.out));
    files
}

#[test]
fn pcapng_files_tcpdump_reads_read_the_same() {
    if crate::common::need(&["tcpdump"]) {
        return;
    }
    let mut failures = Vec::new();
    for (what, bytes) in tolerated_pcapngs() {
        let file = TempPath::new("tolerated.pcapng");
        std::fs::write(&file.0, &bytes).unwrap();
        let expected = Command::new("tcpdump")
            .args(["-n", "-r"])
            .arg(&file.0)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        assert!(
            expected.status.success() && !expected.stdout.is_empty(),
            "{what}: tcpdump must read it: {}",
            String::from_utf8_lossy(&expected.stderr)
        );
        let run = read(&file.0);
        let expected = String::from_utf8_lossy(&expected.stdout);
        if run.code != Some(0) || run.stdout != expected {
            failures.push(format!(
                "{what}: exit {:?}, {}\n  tcpdump: {expected}  netlens: {}",
                run.code, run.stderr, run.stdout
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
