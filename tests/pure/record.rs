//! Recording files: round trips, seeks, a killed recorder, truncation and
//! random damage (never a panic; a clear error or the readable prefix), the
//! version check, and the compatibility fixture in tests/data.

use netlens::capture::live::{PacketBatch, RawPacket};
use netlens::model::conntrack::{ConntrackEntry, ConntrackSample, ConntrackStats, Tuple};
use netlens::model::socket_table::SocketTable;
use netlens::model::sockets::{Proto, SocketSample, SocketUser, TcpInfoSample};
use netlens::model::{InterfaceSample, LinkCounters, Sample};
use netlens::packet::format::Timestamp;
use netlens::record::format::{self, Meta, Stream};
use netlens::record::packets;
use netlens::record::player::Player;
use netlens::record::reader::{Reader, Refresh};
use netlens::record::writer::Writer;
use netlens::record::{Recorder, encode};
use proptest::prelude::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const T0: f64 = 1_704_103_200.0;

/// 30 TCP sockets: counters move, one in ten is replaced every ten
/// samples, so a sample holds new, changed and unchanged sockets.
fn sockets(i: u64) -> Vec<SocketSample> {
    (0..30u64)
        .map(|k| {
            let generation = (k + i / 10 * 10).is_multiple_of(10);
            let port = 40_000 + k + if generation { i / 10 * 100 } else { 0 };
            SocketSample {
                proto: Proto::Tcp,
                state: 1,
                local: format!("198.18.0.1:{port}").parse().unwrap(),
                peer: "198.18.1.1:443".parse().unwrap(),
                recv_q: (i * k % 7) as u32,
                send_q: 0,
                uid: 1000,
                inode: 5000 + port as u32,
                users: vec![SocketUser {
                    process: "curl".into(),
                    pid: 300 + k as u32,
                    fd: 3,
                }]
                .into(),
                owner_denied: false,
                owner_pending: false,
                tcp: Some(TcpInfoSample {
                    rtt_us: 1000 + (i * k % 13) as u32,
                    bytes_acked: i * 1448 * k,
                    last_send_ms: (i % 60) as u32 * 1000,
                    ..Default::default()
                }),
                drops: None,
                rcvbuf: None,
                queue_streak: 0,
                v6only: false,
                netns: 0,
                limits: None,
            }
        })
        .collect()
}

/// The packets recorded with sample `i`: two, one of them long enough to
/// have a payload past the packets stream's cut.
fn batch(i: u64) -> PacketBatch {
    let packet = |n: u64, len: usize| RawPacket {
        ts: Timestamp {
            sec: T0 as i64 + i as i64,
            frac: n as u32 * 1000,
            nanos: false,
        },
        orig_len: len as u32,
        data: (0..len).map(|b| (b as u64 * 31 + i + n) as u8).collect(),
        ifindex: 0,
    };
    PacketBatch {
        linktype: 1,
        skipped: i % 3,
        packets: vec![packet(0, 60), packet(1, 1000)],
    }
}

/// A plausible sample `i` seconds in: counters grow, conntrack entries on
/// every fifth.
fn sample(i: u64) -> Sample {
    let iface = |index: u32, name: &str, rate: u64| InterfaceSample {
        index,
        name: name.into(),
        kind: (index > 1).then(|| "veth".to_string()),
        up: true,
        lower_up: true,
        loopback: index == 1,
        mtu: 1500,
        mac: Some(format!("02:00:00:00:00:{index:02x}")),
        addresses: vec![format!("198.18.0.{index}/24")],
        speed_mbps: Some(10_000),
        counters: LinkCounters {
            rx_packets: 1000 + i * rate,
            tx_packets: 900 + i * rate / 2,
            rx_bytes: 100_000 + i * rate * 700 + i * i % 13,
            tx_bytes: 90_000 + i * rate * 300,
            rx_dropped: i / 7,
            ..Default::default()
        },
        ..Default::default()
    };
    let tuple = |a: u8, b: u8, port: u16| Tuple {
        src: format!("198.18.0.{a}").parse().unwrap(),
        dst: format!("198.18.1.{b}").parse().unwrap(),
        sport: Some(port),
        dport: Some(53),
    };
    Sample {
        t: T0 + i as f64,
        mono: 5000.0 + i as f64,
        netns: "test".into(),
        interfaces: vec![iface(1, "lo", 10), iface(2, "veth0", 3000 + i % 17)],
        sockets: SocketTable::from(sockets(i)),
        conntrack: ConntrackSample {
            available: true,
            count: Some(100 + i % 50),
            max: Some(262_144),
            stats: Some(ConntrackStats {
                found: i * 3,
                insert: i * 11,
                drop: i / 30,
                ..Default::default()
            }),
            entries: i.is_multiple_of(5).then(|| {
                (0..20)
                    .map(|n| ConntrackEntry {
                        proto: 17,
                        tcp_state: None,
                        orig: tuple(n, 1, 40_000 + u16::from(n)),
                        reply: tuple(1, n, 53),
                        status: 6,
                        timeout: 30 - u32::from(n),
                        mark: 0,
                        zone: 0,
                        packets: Some((i, i)),
                        bytes: None,
                    })
                    .collect()
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn meta() -> Meta {
    Meta {
        netlens: "test".into(),
        created: T0,
        hostname: "testhost".into(),
        netns: "test".into(),
        interval: 1.0,
        ..Default::default()
    }
}

/// Records samples 0..n with segments of `segment_seconds`; finishes the
/// file unless `kill` (as a killed recorder leaves it).
fn write(path: &Path, n: u64, segment_seconds: f64, kill: bool) -> Vec<Sample> {
    let mut writer = Writer::create_with(path, &meta(), segment_seconds).unwrap();
    let mut samples: Vec<Sample> = (0..n).map(sample).collect();
    for (i, s) in samples.iter_mut().enumerate() {
        // The writer stamps each sample with its age when written; what is
        // read back must be exactly what was written, age included.
        writer.write_sample(s).unwrap();
        assert!(s.age.is_some_and(|age| age >= 0.0), "sample {i} has no age");
        let batch = batch(i as u64);
        writer
            .write_record(
                Stream::Packets,
                s.t,
                s.mono,
                &packets::encode_headers(&batch),
            )
            .unwrap();
        let rest = packets::encode_payloads(&batch).unwrap();
        writer
            .write_record(Stream::Payloads, s.t, s.mono, &rest)
            .unwrap();
    }
    if !kill {
        writer.finish().unwrap();
    }
    samples
}

fn read_all(reader: &Reader) -> (Vec<Sample>, Vec<String>) {
    let mut samples = Vec::new();
    let mut damage = reader.scan_damage.clone();
    for entry in reader.sample_segments() {
        let read = reader.read_samples(&entry).unwrap();
        samples.extend(read.records);
        damage.extend(read.damage);
    }
    (samples, damage)
}

/// Every packet batch that reads, by sample number.
fn read_batches(reader: &Reader) -> Vec<(u64, PacketBatch)> {
    let mut out = Vec::new();
    for entry in reader.stream_segments(Stream::Packets) {
        let read = reader.read_packets(&entry).unwrap();
        for (head, batch) in read.heads.iter().zip(read.records) {
            out.push(((head.t - T0).round() as u64, batch));
        }
    }
    out
}

/// A batch read back is the one written, or, when its payloads were lost,
/// the same packets cut to the packets stream's bytes.
fn is_written_batch(i: u64, read: &PacketBatch) -> bool {
    let mut cut = batch(i);
    if *read == cut {
        return true;
    }
    for p in &mut cut.packets {
        p.data = p.data[..p.data.len().min(packets::HEADER_BYTES)].into();
    }
    *read == cut
}

#[test]
fn round_trip_with_segments_index_and_mode_0600() {
    let path = crate::common::scratch("record", "round.nlrec");
    let samples = write(&path, 200, 30.0, false);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let reader = Reader::open(&path).unwrap();
    assert!(reader.closed_cleanly);
    assert_eq!(reader.meta, Some(meta()));
    assert_eq!(
        reader.sample_segments().len(),
        7,
        "30 s segments over 200 s"
    );
    let (read, damage) = read_all(&reader);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(read, samples);
    let batches = read_batches(&reader);
    assert_eq!(batches.len(), 200);
    for (i, b) in &batches {
        assert_eq!(b, &batch(*i), "packets of sample {i}");
    }
    // Delta coding pays: far smaller than the samples on their own.
    let raw: usize = samples
        .iter()
        .map(|s| encode(s).len() + packets::encode_headers(&batch(0)).len() + 700)
        .sum();
    let on_disk = std::fs::metadata(&path).unwrap().len() as usize;
    assert!(on_disk * 3 < raw, "{on_disk} bytes on disk for {raw} raw");
}

#[test]
fn an_existing_file_is_never_overwritten() {
    let path = crate::common::scratch("record", "exists.nlrec");
    std::fs::write(&path, b"precious").unwrap();
    let error = Writer::create(&path, &meta()).err().unwrap();
    assert!(
        format!("{error:#}").contains("already exists (netlens never overwrites a file)"),
        "{error:#}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
}

#[test]
fn seeks_land_on_the_newest_sample_at_or_before() {
    let path = crate::common::scratch("record", "seek.nlrec");
    let samples = write(&path, 300, 60.0, false);
    let reader = Reader::open(&path).unwrap();
    for target in [
        -5.0, 0.0, 0.5, 59.0, 59.99, 60.0, 61.2, 150.0, 299.0, 299.5, 1e6,
    ] {
        let located = reader.seek(T0 + target).unwrap().unwrap();
        let expect = (target.floor().clamp(0.0, 299.0)) as usize;
        assert_eq!(located.sample, samples[expect], "seek to +{target}");
    }
    // The player (t, --at in the view) lands on the nearest sample, the
    // later one on a tie.
    let mut player = Player::new(Reader::open(&path).unwrap()).unwrap();
    player.seek(T0 + 125.5);
    assert_eq!(player.current().unwrap(), samples[126]);
    player.seek(T0 + 125.4);
    assert_eq!(player.current().unwrap(), samples[125]);
    assert_eq!(player.position(), (125, 300));
    player.jump(60.0);
    assert_eq!(player.current().unwrap(), samples[185]);
    player.jump(-120.0);
    assert_eq!(player.current().unwrap(), samples[65]);
    assert!(player.step_back());
    assert_eq!(player.current().unwrap(), samples[64]);
    assert_eq!(player.step_forward().unwrap(), samples[65]);
    player.goto_end();
    assert_eq!(player.current().unwrap(), samples[299]);
    assert!(player.step_forward().is_none());
    player.goto_start();
    assert_eq!(player.current().unwrap(), samples[0]);
    assert!(!player.step_back());
    // Stepping across a segment boundary both ways.
    player.seek(T0 + 59.0);
    assert_eq!(player.step_forward().unwrap(), samples[60]);
    assert!(player.step_back());
    assert_eq!(player.current().unwrap(), samples[59]);
    // The window a live view would hold: five minutes and one before.
    player.seek(T0 + 299.0);
    let window = player.window(300.0, usize::MAX);
    assert_eq!(window.first().unwrap(), &samples[0]);
    assert_eq!(window.len(), 300);
    assert_eq!(window, samples[..300]);
    // Past the newest `full`, samples come without their sockets (as the
    // live view keeps them) and are otherwise the same.
    let light = player.window(300.0, 3);
    assert_eq!(light.len(), 300);
    assert_eq!(light[297..], samples[297..300]);
    for (shown, written) in light[..297].iter().zip(&samples) {
        assert!(shown.sockets.is_empty());
        let mut written = written.clone();
        written.sockets.clear();
        assert_eq!(shown, &written);
    }
    player.seek(T0 + 100.0);
    assert_eq!(player.window(30.0, usize::MAX).len(), 32);
}

#[test]
fn killed_recorder_reads_up_to_the_last_complete_sample() {
    let path = crate::common::scratch("record", "killed.nlrec");
    let samples = write(&path, 130, 60.0, true);
    let bytes = std::fs::read(&path).unwrap();
    let reader = Reader::open(&path).unwrap();
    assert!(!reader.closed_cleanly);
    let (read, damage) = read_all(&reader);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(read, samples);
    assert_eq!(read_batches(&reader).len(), 130);

    // Killed in the middle of a write: every cut point of the last chunks.
    let cut_path = crate::common::scratch("record", "cut.nlrec");
    for cut in (bytes.len() - 600..bytes.len()).step_by(7) {
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        let reader = Reader::open(&cut_path).unwrap();
        let (read, _) = read_all(&reader);
        assert!(
            read.len() >= samples.len() - 10,
            "cut at {cut}: {}",
            read.len()
        );
        assert_eq!(read[..], samples[..read.len()], "cut at {cut}");
    }
}

/// A file read while it grows: a record cut by the end of the file is
/// awaited, not skipped as damage, and the index replaces the scan at close.
#[test]
fn a_growing_file_reads_every_record_as_it_is_appended() {
    let path = crate::common::scratch("record", "whole.nlrec");
    let samples = write(&path, 130, 60.0, false);
    let bytes = std::fs::read(&path).unwrap();
    let growing = crate::common::scratch("record", "growing.nlrec");
    let mut cut = 16 + 300;
    std::fs::write(&growing, &bytes[..cut]).unwrap();
    let mut reader = Reader::open_growing(&growing).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&growing)
        .unwrap();
    // Appended 997 bytes at a time: most appends end inside a record.
    while cut < bytes.len() {
        let next = (cut + 997).min(bytes.len());
        std::io::Write::write_all(&mut file, &bytes[cut..next]).unwrap();
        cut = next;
        let state = reader.refresh().unwrap();
        assert_eq!(state == Refresh::Closed, cut == bytes.len(), "at {cut}");
        let (read, damage) = read_all(&reader);
        assert!(damage.is_empty(), "at {cut}: {damage:?}");
        assert_eq!(read[..], samples[..read.len()], "at {cut}");
    }
    assert!(reader.closed_cleanly);
    assert_eq!(read_all(&reader).0, samples);
}

#[test]
fn truncation_anywhere_gives_an_error_or_a_prefix() {
    let path = crate::common::scratch("record", "trunc-src.nlrec");
    let samples = write(&path, 70, 20.0, false);
    let bytes = std::fs::read(&path).unwrap();
    let cut_path = crate::common::scratch("record", "trunc.nlrec");
    let mut previous = 0;
    for cut in (0..bytes.len()).step_by(13).chain([bytes.len() - 1]) {
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        match Reader::open(&cut_path) {
            Err(error) => {
                assert!(cut < format::HEADER_LEN, "cut at {cut}: {error:#}");
                assert!(!format!("{error:#}").contains('\n'));
            }
            Ok(reader) => {
                let (read, _) = read_all(&reader);
                assert_eq!(read[..], samples[..read.len()], "cut at {cut}");
                assert!(read.len() >= previous, "a longer file reads less");
                previous = read.len();
            }
        }
    }
    assert!(previous >= samples.len() - 1);
}

#[test]
fn a_corrupt_middle_loses_at_most_its_segment() {
    let path = crate::common::scratch("record", "middle.nlrec");
    let samples = write(&path, 200, 20.0, false);
    let reader = Reader::open(&path).unwrap();
    let victim = reader.sample_segments()[4];
    let mut bytes = std::fs::read(&path).unwrap();
    // Damage the middle of segment 4 (samples 80..100).
    let at = ((victim.start + victim.end) / 2) as usize;
    for b in &mut bytes[at..at + 40] {
        *b ^= 0x5a;
    }
    // And the index too, so the reader must also rebuild it by a scan.
    let len = bytes.len();
    bytes[len - 30] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let reader = Reader::open(&path).unwrap();
    assert!(!reader.closed_cleanly);
    let (read, damage) = read_all(&reader);
    assert!(!damage.is_empty());
    let lost: Vec<f64> = samples
        .iter()
        .filter(|s| !read.contains(s))
        .map(|s| s.t - T0)
        .collect();
    assert!(!lost.is_empty());
    assert!(
        lost.iter().all(|t| (80.0..100.0).contains(t)),
        "lost outside the damaged segment: {lost:?}"
    );
    for s in &read {
        assert_eq!(s, &samples[(s.t - T0) as usize]);
    }
    // The packets streams lose only what lies in the damaged stretch.
    let batches = read_batches(&reader);
    for (i, b) in &batches {
        assert!(is_written_batch(*i, b), "packets of sample {i}");
    }
    let intact = |i: u64| batches.iter().any(|(j, b)| *j == i && *b == batch(i));
    for i in (0..200).filter(|i| !(80..100).contains(i)) {
        assert!(intact(i), "packets of sample {i} lost outside the damage");
    }
}

#[test]
fn unknown_major_version_is_refused_clearly() {
    let path = crate::common::scratch("record", "major.nlrec");
    write(&path, 3, 60.0, false);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8] = 9;
    std::fs::write(&path, &bytes).unwrap();
    let error = format!("{:#}", Reader::open(&path).err().unwrap());
    let minor = netlens::record::format::MINOR;
    assert!(
        error.contains(&format!("format 9.{minor} is not supported")),
        "{error}"
    );
    assert!(error.contains("newer netlens"), "{error}");
    std::fs::write(&path, b"hello, this is a text file\n").unwrap();
    let error = format!("{:#}", Reader::open(&path).err().unwrap());
    assert!(error.contains("not a netlens recording"), "{error}");
}

#[test]
fn recorder_writes_findings_when_they_change() {
    let path = crate::common::scratch("record", "findings.nlrec");
    let mut recorder = Recorder::create(&path, &meta()).unwrap();
    let mut previous: Option<Sample> = None;
    for i in 0..10 {
        let mut s = sample(i);
        for iface in &mut s.interfaces {
            iface.counters.rx_dropped = 0;
        }
        if i >= 5 {
            // Errors start rising on veth0, 100/s: iface-errors from then on.
            s.interfaces[1].counters.rx_errors = (i - 4) * 100;
        }
        recorder.record(previous.as_ref(), &mut s).unwrap();
        previous = Some(s);
    }
    let stats = recorder.finish().unwrap();
    assert_eq!(stats.records[Stream::Samples as usize], 10);
    let reader = Reader::open(&path).unwrap();
    let findings = reader.stream_segments(Stream::Findings);
    let read = reader.read_raw(&findings[0]).unwrap();
    let lists: Vec<serde_json::Value> = read
        .records
        .iter()
        .map(|r| serde_json::from_slice(r).unwrap())
        .collect();
    // None at first, then iface-errors once errors rise: written twice.
    assert_eq!(lists.len(), 2, "{lists:?}");
    assert_eq!(lists[0], serde_json::json!([]));
    assert_eq!(lists[1][0]["id"], "iface-errors");
}

#[test]
fn compatibility_fixture_still_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1.0-quiet.nlrec");
    let reader = Reader::open(&path).unwrap();
    assert!(reader.closed_cleanly);
    assert_eq!((reader.header.major, reader.header.minor), (1, 0));
    let (read, damage) = read_all(&reader);
    assert!(damage.is_empty(), "{damage:?}");
    assert!(read.len() >= 5, "{} samples", read.len());
    assert!(read.windows(2).all(|w| w[0].mono < w[1].mono));
    assert!(read.iter().all(|s| s.interface("lo").is_some()));
    let mut json = Vec::new();
    netlens::record::inspect::print_json(
        &reader,
        &mut json,
        &netlens::findings::Thresholds::DEFAULT,
    )
    .unwrap();
    assert_eq!(json.iter().filter(|b| **b == b'\n').count(), read.len() - 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random damage: the reader never panics or hangs, and whatever it
    /// returns is a sample that was written, at its time.
    #[test]
    fn random_damage_never_panics(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..12),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let path = crate::common::scratch("record", &format!("fuzz-{:?}.nlrec", std::thread::current().id()));
        let src = crate::common::scratch("record", &format!("fuzz-src-{:?}.nlrec", std::thread::current().id()));
        let samples = write(&src, 90, 15.0, false);
        let mut bytes = std::fs::read(&src).unwrap();
        for (at, xor) in &flips {
            let at = at.index(bytes.len());
            bytes[at] ^= xor;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(reader) = Reader::open(&path) {
            let (read, _) = read_all(&reader);
            for s in &read {
                let i = (s.t - T0).round();
                prop_assert!((0.0..90.0).contains(&i));
                prop_assert_eq!(s, &samples[i as usize]);
            }
            for (i, b) in read_batches(&reader) {
                prop_assert!(i < 90 && is_written_batch(i, &b), "packets of {}", i);
            }
            if let Ok(mut player) = Player::new(Reader::open(&path).unwrap()) {
                player.goto_end();
                player.jump(-30.0);
                let _ = player.window(60.0, 5);
            }
        }
    }
}

#[test]
fn demo_asset_holds_a_conntrack_full_incident() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo-conntrack-full.nlrec");
    let reader = Reader::open(&path).unwrap();
    let mut json = Vec::new();
    netlens::record::inspect::print_json(
        &reader,
        &mut json,
        &netlens::findings::Thresholds::DEFAULT,
    )
    .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = lines
        .iter()
        .flat_map(|l| l["findings"].as_array().unwrap())
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(ids.contains(&"conntrack-full"), "{ids:?}");
    assert!(lines[0]["findings"].as_array().unwrap().is_empty());
    let mut info = Vec::new();
    netlens::record::inspect::print_info(&reader, &mut info).unwrap();
    let info = String::from_utf8(info).unwrap();
    assert!(
        info.contains("closed cleanly") && info.contains("damage:     none"),
        "{info}"
    );
    assert!(info.contains("format 2.0"), "{info}");
    assert!(info.contains("streams:    samples (19 records"), "{info}");
    // The refused connections' SYNs are in the packets stream.
    assert!(info.contains("packets (7 records"), "{info}");
}

#[test]
fn format_2_fixture_with_packets_still_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v2.0-capture.nlrec");
    let reader = Reader::open(&path).unwrap();
    assert!(reader.closed_cleanly);
    assert_eq!((reader.header.major, reader.header.minor), (2, 0));
    assert!(reader.meta.as_ref().unwrap().capture);
    let (read, damage) = read_all(&reader);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(read.len(), 10);
    // No heads stream before 2.2: a replayed history takes the older
    // samples' heads from their samples records.
    assert!(reader.stream_segments(Stream::Heads).is_empty());
    let mut player = Player::new(Reader::open(&path).unwrap()).unwrap();
    player.goto_end();
    let mut expected = read.clone();
    for sample in &mut expected[..7] {
        sample.sockets.clear();
    }
    assert!(player.window(3600.0, 3) == expected);
    // A TCP conversation of 40 requests in a test namespace: the flow in
    // the last sample counts every packet, and the packets stream holds
    // them all (nothing was over the bounds).
    let last = read.last().unwrap().capture.as_ref().unwrap();
    let flow = last
        .flows
        .iter()
        .find(|f| f.dst == "198.18.0.2:9100")
        .unwrap();
    assert!(flow.packets >= 80, "{flow:?}");
    let batches = read_batches(&reader);
    let kept: usize = batches.iter().map(|(_, b)| b.packets.len()).sum();
    assert_eq!(kept as u64, last.packets);
    assert!(batches.iter().all(|(_, b)| b.skipped == 0));
    let mut info = Vec::new();
    netlens::record::inspect::print_info(&reader, &mut info).unwrap();
    let info = String::from_utf8(info).unwrap();
    assert!(info.contains("packets (3 records, 1 segments)"), "{info}");
    assert!(
        info.contains(&format!("{kept} packets, 0 left out")),
        "{info}"
    );
}
