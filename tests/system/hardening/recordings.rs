//! Defect 5: a crafted recording must not amplify memory. Its second and
//! later samples list millions of sockets, each a one-byte reference to
//! the first sample's only socket (a 216-byte copy each): a few KB of zstd
//! asked `replay --json` for gigabytes. Now a socket of the previous
//! sample is referred to at most once (as the encoder writes), counts and
//! decoded bytes are bounded (codec::MAX_SOCKETS, MAX_SAMPLE_BYTES), and
//! --json and --info hold one record at a time.

use super::measured::{TempPath, run_netlens};
use netlens::model::Sample;
use netlens::record::codec::{self, SampleEncoder};
use netlens::record::format::{self, DataHead, Header, Kind, Stream};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Columns per socket after its reference: the 22 fields and the users
/// (0: as the referenced socket); the later columns are optional.
const COLUMNS: usize = 23;

/// Writes a recording (no index: the reader's scan finds its chunks)
/// whose first sample has one socket and whose next `crafted` samples
/// each list `n` sockets all referring to it. Returns the file's size.
pub fn write_crafted(path: &Path, crafted: usize, n: usize) -> u64 {
    let mut records = Vec::new();
    let mut first = Sample {
        t: 1.0,
        sockets: vec![super::segments::socket(1)].into(),
        ..Default::default()
    };
    records.push(SampleEncoder::default().encode(&mut first, true));
    let mut empty = Sample::default();
    let mut zstd = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    let mut chunks = Vec::new();
    zstd.write_all(&(records[0].len() as u32).to_le_bytes())
        .unwrap();
    zstd.write_all(&records[0]).unwrap();
    zstd.flush().unwrap();
    chunks.push(std::mem::take(zstd.get_mut()));
    for k in 0..crafted {
        empty.t = 2.0 + k as f64;
        let whole = SampleEncoder::default().encode(&mut empty, true);
        let head = codec::head_part(&whole);
        let mut table = Vec::new();
        varint(&mut table, n as u64);
        varint(&mut table, 0);
        // The first reference is socket 0; each next one, zigzag(-1) + 1,
        // is the same socket again.
        table.push(1);
        let len = head.len() + table.len() + (n - 1) + n * COLUMNS;
        zstd.write_all(&(len as u32).to_le_bytes()).unwrap();
        zstd.write_all(head).unwrap();
        zstd.write_all(&table).unwrap();
        let twos = vec![2u8; 1 << 20];
        let mut left = n - 1;
        while left > 0 {
            let step = left.min(twos.len());
            zstd.write_all(&twos[..step]).unwrap();
            left -= step;
        }
        let zeros = vec![0u8; 1 << 20];
        let mut left = n * COLUMNS;
        while left > 0 {
            let step = left.min(zeros.len());
            zstd.write_all(&zeros[..step]).unwrap();
            left -= step;
        }
        zstd.flush().unwrap();
        chunks.push(std::mem::take(zstd.get_mut()));
    }
    let tail = zstd.finish().unwrap();
    chunks.last_mut().unwrap().extend_from_slice(&tail);
    let mut file = Header::current().encode().to_vec();
    let meta = serde_json::json!({
        "netlens": "crafted", "created": 1.0, "hostname": "h", "netns": "host", "interval": 1.0
    });
    file.extend(format::encode_chunk(
        Kind::Meta,
        0,
        meta.to_string().as_bytes(),
    ));
    for (ordinal, chunk) in chunks.iter().enumerate() {
        let mut payload = Vec::new();
        let t = 1.0 + ordinal as f64;
        DataHead {
            segment: 0,
            ordinal: ordinal as u32,
            t,
            mono: t,
        }
        .encode(&mut payload);
        payload.extend_from_slice(chunk);
        file.extend(format::encode_chunk(
            Kind::Data,
            Stream::Samples as u8,
            &payload,
        ));
    }
    std::fs::write(path, &file).unwrap();
    file.len() as u64
}

/// Under this address space a netlens that copies a socket per reference
/// fails to allocate instead of taking the host's memory.
const ADDRESS_SPACE: u64 = 3 << 30;
/// Peak RSS allowed: one crafted record (~100 MB raw) is inflated whole.
const MAX_RSS_MB: u64 = 300;

fn check(args: &[&str], what: &str) -> super::measured::Measured {
    let run = run_netlens(args, ADDRESS_SPACE, Duration::from_secs(60));
    eprintln!(
        "{what}: exit {:?} signal {:?}, peak RSS {} MB, {:.2} s; stderr: {}",
        run.code, run.signal, run.max_rss_mb, run.seconds, run.stderr
    );
    assert!(
        run.signal.is_none(),
        "{what} was killed by signal {:?} (memory?): {}",
        run.signal,
        run.stderr
    );
    assert!(
        run.max_rss_mb < MAX_RSS_MB,
        "{what} peaked at {} MB RSS (bound {MAX_RSS_MB} MB): the crafted recording amplifies",
        run.max_rss_mb
    );
    assert!(
        !run.stderr.contains("panicked"),
        "{what} panicked: {}",
        run.stderr
    );
    run
}

#[test]
fn replay_json_of_a_crafted_recording_stays_small() {
    let file = TempPath::new("crafted-json.nlrec");
    let size = write_crafted(&file.0, 8, 2_000_000);
    eprintln!("crafted recording: {size} bytes");
    let path = file.0.to_str().unwrap();
    let run = check(&["replay", "--json", path], "replay --json");
    // The first sample reads; the crafted one is damage, named on one line.
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "sample 1 of segment 0 does not decode: the socket table claims more sockets"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn replay_info_of_a_crafted_recording_stays_small() {
    let file = TempPath::new("crafted-info.nlrec");
    write_crafted(&file.0, 8, 2_000_000);
    let path = file.0.to_str().unwrap();
    let run = check(&["replay", "--info", path], "replay --info");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("samples:    9"), "{}", run.stdout);
}
