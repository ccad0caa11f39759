//! Mutated recordings, pcaps and pcapngs through the real readers, in
//! this process (under the binary's memory cap), and mutated --where
//! expressions and config files through their parsers. Each returns Ok or
//! a one-line Err, never panics, and stays under the cap.

use super::mutate::mutate;
use crate::common::random::XorShift;
use netlens::model::Sample;
use netlens::model::sockets::{Owners, Proto, SocketSample, SocketUser};
use netlens::packet::pcap::PcapReader;
use netlens::record::codec::{self, SampleEncoder};
use netlens::record::format::{self, DataHead, Header, Kind, Stream};
use netlens::record::{inspect, reader::Reader};
use std::io::Write;

fn socket(port: u16, moved: u32) -> SocketSample {
    SocketSample {
        proto: if port.is_multiple_of(5) {
            Proto::Udp
        } else {
            Proto::Tcp
        },
        state: 1,
        local: format!("198.18.0.1:{port}").parse().unwrap(),
        peer: "198.18.0.2:443".parse().unwrap(),
        recv_q: moved,
        send_q: 0,
        uid: 33,
        inode: 1000 + u32::from(port),
        users: [SocketUser {
            process: "nginx".into(),
            pid: 10,
            fd: u32::from(port),
        }]
        .into_iter()
        .collect::<Owners>(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: Some(moved),
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
        limits: None,
    }
}

/// A recording's bytes (header, meta, one segment of samples, no index)
/// from its raw sample records.
fn recording(records: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut zstd = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    let mut chunks = Vec::new();
    for record in records {
        let mut framed = Vec::new();
        format::frame_record(&record, &mut framed);
        zstd.write_all(&framed).unwrap();
        zstd.flush().unwrap();
        chunks.push(std::mem::take(zstd.get_mut()));
    }
    let tail = zstd.finish().unwrap();
    chunks.last_mut().unwrap().extend_from_slice(&tail);
    let mut file = Header::current().encode().to_vec();
    let meta = br#"{"netlens":"fuzz","created":1.0,"hostname":"h","netns":"host","interval":1.0}"#;
    file.extend(format::encode_chunk(Kind::Meta, 0, meta));
    for (ordinal, chunk) in chunks.iter().enumerate() {
        let t = 1.0 + ordinal as f64;
        let mut payload = Vec::new();
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
    file
}

/// Six samples of 40 sockets, as the recorder writes them.
fn honest_recording() -> Vec<u8> {
    let mut encoder = SampleEncoder::default();
    let records = (0..6u32).map(|i| {
        let mut sample = Sample {
            t: f64::from(i),
            sockets: (i as u16..40 + i as u16).map(|p| socket(p, i)).collect(),
            ..Default::default()
        };
        encoder.encode(&mut sample, i == 0)
    });
    recording(records.collect::<Vec<_>>())
}

/// Defect 5's recording: a sample of 1.2M sockets, each a one-byte
/// reference to the first sample's only socket (259 MB decoded, over the
/// cap, before the codec refused repeated references).
fn amplifying_recording() -> Vec<u8> {
    let mut first = Sample {
        sockets: vec![socket(1, 0)].into(),
        ..Default::default()
    };
    let key = SampleEncoder::default().encode(&mut first, true);
    let mut empty = Sample {
        t: 1.0,
        ..Default::default()
    };
    let whole = SampleEncoder::default().encode(&mut empty, true);
    let n = 1_200_000;
    let mut crafted = codec::head_part(&whole).to_vec();
    crafted.extend_from_slice(&[0x80, 0x9f, 0x49, 0]); // varint 1_200_000, 0 new
    crafted.push(1);
    crafted.resize(crafted.len() + n - 1, 2);
    crafted.resize(crafted.len() + n * 23, 0);
    recording([key, crafted])
}

/// Opens and decodes a recording every way replay does without a
/// terminal: --info, --json, a seek.
fn read_recording(path: &std::path::Path) {
    let Ok(reader) = Reader::open(path) else {
        return;
    };
    let _ = inspect::print_info(&reader, &mut std::io::sink());
    let limits = netlens::findings::Thresholds::default();
    let _ = inspect::print_json(&reader, &mut std::io::sink(), &limits);
    let _ = reader.seek(3.5);
}

struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn mutated_recordings_read_or_fail_within_the_cap() {
    super::cap();
    let file =
        TempFile(std::env::temp_dir().join(format!("netlens-fuzz-{}.nlrec", std::process::id())));
    let amplifying = amplifying_recording();
    std::fs::write(&file.0, &amplifying).unwrap();
    read_recording(&file.0);
    let seed = honest_recording();
    std::fs::write(&file.0, &seed).unwrap();
    let reader = Reader::open(&file.0).unwrap();
    let mut samples = 0;
    for entry in reader.sample_segments() {
        let read = reader.read_samples(&entry).unwrap();
        assert!(read.damage.is_none(), "{:?}", read.damage);
        samples += read.records.len();
    }
    assert_eq!(samples, 6, "the seed reads whole");
    let mut rng = XorShift(0x5eed_0005);
    for _ in 0..400 {
        let bytes = mutate(&seed, &mut rng);
        std::fs::write(&file.0, &bytes).unwrap();
        read_recording(&file.0);
    }
}

/// A pcapng with two interfaces (one with nanosecond timestamps), packet
/// options, an unknown block and a second section.
fn pcapng_seed() -> Vec<u8> {
    let mut out = Vec::new();
    let block = |out: &mut Vec<u8>, kind: u32, body: &[u8]| {
        let total = 12 + body.len().next_multiple_of(4) as u32;
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&total.to_le_bytes());
        out.extend_from_slice(body);
        out.resize(out.len().next_multiple_of(4), 0);
        out.extend_from_slice(&total.to_le_bytes());
    };
    let shb = [&0x1a2b_3c4du32.to_le_bytes()[..], &[1, 0, 0, 0], &[0xff; 8]].concat();
    let frame = {
        let mut p = vec![0u8; 12];
        p.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0]);
        p.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2, 0, 53, 0, 53, 0, 8, 0, 0]);
        p
    };
    for _ in 0..2 {
        block(&mut out, 0x0a0d_0d0a, &shb);
        block(&mut out, 1, &[1, 0, 0, 0, 0xff, 0xff, 0, 0]);
        block(
            &mut out,
            1,
            &[1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0],
        );
        for id in 0..2u32 {
            let mut epb = id.to_le_bytes().to_vec();
            epb.extend_from_slice(&[0, 0, 0, 0, 1, 2, 3, 4]);
            epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            epb.extend_from_slice(&frame);
            epb.resize(epb.len().next_multiple_of(4), 0);
            epb.extend_from_slice(&[2, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
            block(&mut out, 6, &epb);
        }
        block(&mut out, 0x0bad, &[1, 2, 3, 4]);
        let mut spb = (frame.len() as u32).to_le_bytes().to_vec();
        spb.extend_from_slice(&frame);
        block(&mut out, 3, &spb);
    }
    out
}

fn read_pcap(bytes: Vec<u8>) -> u64 {
    let len = bytes.len() as u64;
    let Ok(mut reader) = PcapReader::new(Box::new(std::io::Cursor::new(bytes)), "fuzz", len) else {
        return 0;
    };
    let mut buf = Vec::new();
    let mut packets = 0;
    // Bounded: no mutation holds more packets than this.
    while packets < 100_000 {
        match reader.next_into(&mut buf) {
            Ok(Some(_)) => packets += 1,
            _ => break,
        }
    }
    packets
}

#[test]
fn mutated_pcaps_read_or_fail_within_the_cap() {
    super::cap();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut seeds = vec![pcapng_seed()];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "pcap") {
            seeds.push(std::fs::read(entry.path()).unwrap());
        }
    }
    assert!(seeds.len() >= 2, "tests/data has a pcap seed");
    assert_eq!(
        read_pcap(seeds[0].clone()),
        6,
        "the pcapng seed reads whole"
    );
    for seed in &seeds[1..] {
        assert!(read_pcap(seed.clone()) > 0);
    }
    let mut rng = XorShift(0x5eed_0011);
    for i in 0..3000 {
        let seed = &seeds[i % seeds.len()];
        // Large seeds: mutate their first 4 KiB, where the headers are.
        let head = &seed[..seed.len().min(4096)];
        read_pcap(mutate(head, &mut rng));
    }
}

#[test]
fn mutated_where_expressions_parse_or_fail() {
    super::cap();
    let seeds = [
        "port:80 and (state:estab or state:listen)",
        "host:198.18.0.1 and not proto:udp",
        "ns:blue or (rq>10 and sq>=5)",
        "proc:nginx and uid:33",
    ];
    let mut rng = XorShift(0x5eed_00e1);
    for i in 0..4000 {
        let bytes = mutate(seeds[i % seeds.len()].as_bytes(), &mut rng);
        let text = String::from_utf8_lossy(&bytes);
        if let Err(error) = netlens::model::filter::Expr::parse(&text) {
            let caret = error.caret(&text, 2);
            assert!(!error.to_string().contains('\n'), "{error}");
            let _ = caret;
        }
    }
}

#[test]
fn mutated_config_files_parse_or_fail() {
    super::cap();
    let seed = "mouse = true\ncompact = false\n[thresholds]\nsyn_flood_syn_recv = 4\n\
                flood_warn_pps = 50.0\nflood_crit_pps = 100.0\ndns_slow_p90_ms = 100.0\n";
    assert!(netlens::config::parse(seed).is_ok(), "the seed parses");
    let mut rng = XorShift(0x5eed_00cf);
    for _ in 0..4000 {
        let bytes = mutate(seed.as_bytes(), &mut rng);
        let _ = netlens::config::parse(&String::from_utf8_lossy(&bytes));
    }
}
