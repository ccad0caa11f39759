//! Damaged recordings: the scan that rebuilds a lost index reports damage
//! as merged ranges with counts, bounded however much damage there is.

use netlens::record::format::{self, Kind};
use netlens::record::reader::Reader;
use std::path::PathBuf;
use std::process::Command;

const RECORDING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v2.0-capture.nlrec");

fn info(path: &PathBuf) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["replay", "--info"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{:?}",
        output.status
    );
    (
        String::from_utf8_lossy(&output.stdout).to_string(),
        String::from_utf8_lossy(&output.stderr).to_string(),
    )
}

#[test]
fn repeated_chunk_magics_are_one_range_with_a_count() {
    let header = &std::fs::read(RECORDING).unwrap()[..format::HEADER_LEN];
    let path = crate::common::scratch("damage", "magics.nlrec");
    let mut bytes = header.to_vec();
    bytes.extend(format::SYNC.repeat(1 << 18));
    std::fs::write(&path, &bytes).unwrap();
    let reader = Reader::open(&path).unwrap();
    assert_eq!(reader.scan_damage.len(), 1, "{:?}", reader.scan_damage);
    let (stdout, stderr) = info(&path);
    let lines = stdout.lines().count() + stderr.lines().count();
    assert!(lines < 10, "{lines} lines: {stdout}{stderr}");
    assert!(
        stdout.contains("1048576 damaged bytes at the end (offsets 16-1048592, 262144 places"),
        "{stdout}"
    );
}

#[test]
fn scattered_damage_is_capped_and_counted() {
    // A good recording without its end (as if the recorder was killed),
    // then 500 valid non-data chunks each behind 7 bytes of garbage.
    let good = std::fs::read(RECORDING).unwrap();
    let mut bytes = good[..good.len() - 200].to_vec();
    let filler = format::encode_chunk(Kind::Meta, 0, b"{}");
    for _ in 0..500 {
        bytes.extend_from_slice(b"garbage");
        bytes.extend_from_slice(&filler);
    }
    let path = crate::common::scratch("damage", "scattered.nlrec");
    std::fs::write(&path, &bytes).unwrap();
    let reader = Reader::open(&path).unwrap();
    assert!(!reader.closed_cleanly);
    assert!(reader.scan_damage.len() <= 40, "{:?}", reader.scan_damage);
    let summary = reader.scan_damage.last().unwrap();
    assert!(
        summary.ends_with("more damaged ranges (3276 bytes) skipped"),
        "{summary}"
    );
    // The samples before the damage still read.
    assert_eq!(
        reader
            .sample_segments()
            .iter()
            .map(|s| s.count)
            .sum::<u32>(),
        10
    );
}
