//! Seeking in a real recording (format 2.2 and later, socket keyframes every tenth
//! sample): `netlens snapshot --record` records a namespace where TCP
//! connections come and go, then every sample reached by a seek (the
//! Reader's, the Player's, in any order) is the one sequential reading
//! decodes; a truncated or damaged copy reads up to the damage and says so.

use crate::common;

use common::*;
use netlens::model::Sample;
use netlens::record::codec::self_contained;
use netlens::record::format::{MAJOR, MINOR, Stream};
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use netlens::record::writer::SOCKET_KEY_EVERY;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SAMPLES: usize = 45;

/// Loopback connections in the namespace at `ns`: 40 held, and one more
/// opened and one closed every 50 ms until `stop` (at most 600 s), so each
/// sample has persisting, new and gone sockets. `ready` once 40 are held.
fn churn(
    ns: String,
    stop: Arc<AtomicBool>,
    ready: std::sync::mpsc::Sender<()>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        enter_netns(&ns).unwrap();
        let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9300)).unwrap();
        let address = listener.local_addr().unwrap();
        let mut held = std::collections::VecDeque::new();
        let started = Instant::now();
        while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(600) {
            let client = TcpStream::connect(address).unwrap();
            let (server, _) = listener.accept().unwrap();
            held.push_back((client, server));
            if held.len() > 40 {
                held.pop_front();
                let _ = ready.send(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
}

/// `samples` as a replayed history holds them: the newest `whole` with
/// their sockets, the older ones without.
fn heads_then_whole(samples: &[Sample], whole: usize) -> Vec<Sample> {
    let older = samples.len().saturating_sub(whole);
    let mut out = samples.to_vec();
    for sample in &mut out[..older] {
        sample.sockets.clear();
    }
    out
}

/// Every sample of the file, read in order, segment by segment.
fn sequential(reader: &Reader) -> Vec<Sample> {
    let mut samples = Vec::new();
    for entry in reader.sample_segments() {
        let read = reader.read_samples(&entry).unwrap();
        assert!(read.damage.is_none(), "{:?}", read.damage);
        samples.extend(read.records);
    }
    samples
}

/// A recording of SAMPLES samples at 100 ms of a namespace with churning
/// connections, made by the real binary.
fn record(path: &Path, tag: &str) {
    let ns = Netns::new(tag);
    ns.ip(&["link", "set", "lo", "up"]);
    let stop = Arc::new(AtomicBool::new(false));
    let (ready, is_ready) = std::sync::mpsc::channel();
    let churning = churn(ns.path(), Arc::clone(&stop), ready);
    is_ready.recv().unwrap();
    let output = Command::new(NETLENS)
        .args(["snapshot", "--json", "--count", &SAMPLES.to_string()])
        .args(["--interval", "100ms", "--no-capture", "--netns", &ns.name])
        .arg("--record")
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    churning.join().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn seeks_land_on_the_samples_sequential_reading_decodes() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let path = crate::common::scratch("record-seek-real", "real.nlrec");
    record(&path, "seek");
    let reader = Reader::open(&path).unwrap();
    assert!(reader.closed_cleanly);
    assert_eq!((reader.header.major, reader.header.minor), (MAJOR, MINOR));
    let samples = sequential(&reader);
    // The printed samples, and the baseline before them.
    let n = samples.len();
    assert!(n >= SAMPLES, "{n}");
    assert!(samples.iter().all(|s| s.sockets.len() > 40), "sockets seen");
    // Sockets came and went between samples: the deltas carried news.
    let keys = |s: &Sample| s.sockets.iter().map(|k| k.key()).collect::<Vec<_>>();
    assert!(samples.windows(2).any(|w| keys(&w[0]) != keys(&w[1])));
    // The writer's socket keyframes: every tenth record of a segment
    // stands alone, the others refer back.
    for segment in reader.sample_segments() {
        let raw = reader.read_raw(&segment).unwrap();
        for (i, record) in raw.records.iter().enumerate() {
            let key = i % SOCKET_KEY_EVERY as usize == 0;
            assert_eq!(self_contained(record), key, "record {i}");
        }
    }
    // Any order: forwards, backwards, and hopping across keyframes.
    let mut order: Vec<usize> = (0..n).collect();
    order.extend((0..n).rev());
    order.extend((0..n).map(|i| i * 17 % n));
    let mut player = Player::new(Reader::open(&path).unwrap()).unwrap();
    for &i in &order {
        let t = samples[i].t;
        let located = reader.seek(t).unwrap().unwrap();
        assert!(located.sample == samples[i], "Reader::seek to sample {i}");
        player.seek(t);
        assert!(
            player.current().unwrap() == samples[i],
            "Player::seek to {i}"
        );
    }
    // A fresh player's seek inflates its segment only up to the sample
    // wanted and the one after it (for the nearer of the two).
    let mut fresh = Player::new(Reader::open(&path).unwrap()).unwrap();
    let first = fresh.inflated();
    fresh.seek(samples[3].t);
    assert!(fresh.current().unwrap() == samples[3]);
    assert!(fresh.inflated() <= first.max(1) + 4, "{}", fresh.inflated());
    // Stepping from a seek goes on from the decoded sample.
    player.seek(samples[13].t);
    for (i, expected) in samples.iter().enumerate().take(30).skip(14) {
        assert!(&player.step_forward().unwrap() == expected, "step to {i}");
    }
    assert!(player.window(600.0, usize::MAX) == samples[..30]);
    // With the newest 3 whole, the older ones come from the heads stream
    // (format 2.2) without their sockets; a 1.05 s window holds the
    // samples within it and the one before them.
    assert!(!reader.stream_segments(Stream::Heads).is_empty());
    assert!(player.window(600.0, 3) == heads_then_whole(&samples[..30], 3));
    let newest = samples[29].mono;
    let first = (0..30).rfind(|&i| newest - samples[i].mono > 1.05).unwrap();
    assert!(first < 27, "{first}: older samples than the 3 whole ones");
    assert!(player.window(1.05, 3) == heads_then_whole(&samples[first..30], 3));
    std::fs::remove_file(&path).unwrap();
    // Its own directory: a shared one emptied here vanished under the
    // other test between its mkdir and its netlens' create.
    let _ = std::fs::remove_dir(path.parent().unwrap());
}

#[test]
fn a_cut_or_damaged_recording_reads_up_to_the_damage_and_says_so() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let path = crate::common::scratch("record-seek-damage", "whole.nlrec");
    record(&path, "seekcut");
    let reader = Reader::open(&path).unwrap();
    let samples = sequential(&reader);
    // Damage goes into the longest segment of samples (the machine's load
    // decides how many 60 s segments the recording took).
    let segments = reader.sample_segments();
    let longest = (0..segments.len())
        .max_by_key(|i| segments[*i].count)
        .unwrap();
    let segment = segments[longest];
    let before: usize = segments[..longest].iter().map(|s| s.count as usize).sum();
    let end = before + segment.count as usize;
    let bytes = std::fs::read(&path).unwrap();
    // Cut in the middle of the samples: the index is gone, the scan reads
    // up to the last whole sample, and a seek past the cut lands there.
    let cut = crate::common::scratch("record-seek-damage", "cut.nlrec");
    let middle = (segment.start + segment.end) / 2;
    std::fs::write(&cut, &bytes[..middle as usize]).unwrap();
    let reader = Reader::open(&cut).unwrap();
    assert!(!reader.closed_cleanly);
    let read = sequential(&reader);
    let n = samples.len();
    assert!(read.len() > before && read.len() < n, "{}", read.len());
    assert!(read == samples[..read.len()]);
    let last = reader.seek(samples[n - 1].t).unwrap().unwrap();
    assert!(last.sample == read[read.len() - 1]);
    let mut player = Player::new(Reader::open(&cut).unwrap()).unwrap();
    player.seek(samples[n - 1].t);
    assert!(player.current().unwrap() == read[read.len() - 1]);
    // A flipped byte in the middle of the samples: the samples before it
    // read, the rest of the segment is reported lost, by offset.
    let flipped = crate::common::scratch("record-seek-damage", "flipped.nlrec");
    let mut damaged = bytes.clone();
    damaged[middle as usize] ^= 0x5a;
    std::fs::write(&flipped, &damaged).unwrap();
    let reader = Reader::open(&flipped).unwrap();
    let read = reader.read_samples(&segment).unwrap();
    let why = read.damage.expect("the damage is reported");
    assert!(why.contains("damaged chunk at offset"), "{why}");
    let kept = before + read.records.len();
    assert!(read.records[..] == samples[before..kept]);
    let found = reader.seek(samples[end - 1].t).unwrap().unwrap();
    assert!(found.sample == samples[kept - 1]);
    let mut player = Player::new(Reader::open(&flipped).unwrap()).unwrap();
    // The Player goes to the nearest readable sample: the last before the
    // damage, or the first of the next segment when that one is nearer.
    let t = samples[end - 1].t;
    player.seek(t);
    let nearest = match samples.get(end) {
        Some(next) if next.t - t <= t - samples[kept - 1].t => next,
        _ => &samples[kept - 1],
    };
    assert!(&player.current().unwrap() == nearest);
    assert!(player.damage.as_deref().unwrap().contains("damaged chunk"));
    // `replay --info` names it.
    let output = Command::new(NETLENS)
        .args(["replay", "--info"])
        .arg(&flipped)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("damaged chunk at offset"), "{stdout}");
    // A file cut inside its header is refused with one clear line.
    let stub = crate::common::scratch("record-seek-damage", "stub.nlrec");
    std::fs::write(&stub, &bytes[..10]).unwrap();
    let output = Command::new(NETLENS)
        .args(["replay", "--json"])
        .arg(&stub)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("ends inside its header"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"));
    for file in [&path, &cut, &flipped, &stub] {
        std::fs::remove_file(file).unwrap();
    }
    let _ = std::fs::remove_dir(path.parent().unwrap());
}
