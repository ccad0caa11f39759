//! A day of recording at scale (issue 21): a 24 h recording at 1 s with
//! 10k sockets and capture headers on. Nobody waits a day, so this takes a
//! real recording of a few minutes (`benches/scripts/bench-record-day.sh`
//! makes one: 10,000 real sockets, light traffic, `netlens record` with
//! capture on) and writes its samples and packets again, cycled, as 86,400
//! samples 1 s apart through the real `Recorder` (counters keep rising from
//! one cycle to the next). Then it measures what a day file costs: bytes
//! per hour, seeking to 200 random minutes (Reader, Player and the replay
//! view), and replay at 3600x (the view fed by the Player and drawn).
//!
//! Run: `NETLENS_DAY_SOURCE=FILE cargo bench --bench record_day`
//! (NETLENS_DAY_HOURS=N writes N hours instead of 24).

use netlens::app::App;
use netlens::app::tabs::Tab;
use netlens::capture::live::PacketBatch;
use netlens::model::Sample;
use netlens::model::sockets::SocketKey;
use netlens::record::Recorder;
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

const T0: f64 = 1_704_103_200.0;
/// Seeks of each kind: to random minutes, and to random seconds.
const SEEKS: usize = 200;

fn main() {
    let Some(source) = std::env::var_os("NETLENS_DAY_SOURCE") else {
        eprintln!(
            "record_day: skipped (NETLENS_DAY_SOURCE=FILE names the real recording to \
             stretch; benches/scripts/bench-record-day.sh makes one and runs this)"
        );
        return;
    };
    let hours: u64 = std::env::var("NETLENS_DAY_HOURS")
        .ok()
        .and_then(|h| h.parse().ok())
        .filter(|h| (1..=24).contains(h))
        .unwrap_or(24);
    let dir = std::env::temp_dir().join(format!("netlens-bench-day-{}", std::process::id()));
    // NETLENS_DAY_FILE keeps the day file (and reuses it when it exists).
    let kept = std::env::var_os("NETLENS_DAY_FILE").map(std::path::PathBuf::from);
    let day = kept.clone().unwrap_or_else(|| dir.join("day.nlrec"));
    if !day.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let per_hour = write_day(Path::new(&source), &day, hours);
        let size = std::fs::metadata(&day).unwrap().len();
        let (min, max) = per_hour
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), b| (lo.min(*b), hi.max(*b)));
        eprintln!(
            "record_day: {hours} h file {:.1} MB: {:.1} MB per hour (each hour {:.1}-{:.1} MB)",
            mb(size),
            mb(size) / hours as f64,
            mb(min),
            mb(max)
        );
    }
    let reader = Reader::open(&day).unwrap();
    let samples: u64 = reader
        .sample_segments()
        .iter()
        .map(|s| u64::from(s.count))
        .sum();
    let size = std::fs::metadata(&day).unwrap().len();
    eprintln!(
        "record_day: {} ({}): {samples} samples, {:.1} MB: {:.1} MB per hour",
        day.display(),
        if reader.closed_cleanly {
            "closed cleanly"
        } else {
            "not closed: index rebuilt by a scan"
        },
        mb(size),
        mb(size) * 3600.0 / samples as f64
    );
    if std::env::var_os("NETLENS_DAY_REPLAY_ONLY").is_some() {
        let mut app = App::new(Tab::Sockets, Duration::from_secs(1), true);
        app.replay = Some(Player::new(Reader::open(&day).unwrap()).unwrap());
        play(&mut app, 3600.0, 3600.0);
        return;
    }
    let mut app = seeks(&day, samples);
    replay(&mut app);
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), true);
    let start = timed(|| app.start_replay(Player::new(Reader::open(&day).unwrap()).unwrap()));
    eprintln!("record_day: replay view opened (start_replay) in {start:.0} ms");
    if kept.is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The source's samples and, by sample time, the packets recorded with each.
fn read_source(source: &Path) -> (Reader, Vec<Sample>, HashMap<u64, PacketBatch>) {
    let reader = Reader::open(source).unwrap();
    let mut samples = Vec::new();
    for entry in reader.sample_segments() {
        samples.extend(reader.read_samples(&entry).unwrap().records);
    }
    let mut batches = HashMap::new();
    for entry in reader.stream_segments(netlens::record::format::Stream::Packets) {
        let read = reader.read_packets(&entry).unwrap();
        for (head, batch) in read.heads.iter().zip(read.records) {
            batches.insert(head.t.to_bits(), batch);
        }
    }
    (reader, samples, batches)
}

/// How much each socket's byte counters and each interface's counters rose
/// over the source, added once per cycle so the day never goes back.
struct Rise {
    sockets: HashMap<SocketKey, (u64, u64)>,
    links: HashMap<u32, [u64; 4]>,
}

fn rise(first: &Sample, last: &Sample) -> Rise {
    let bytes = |s: &netlens::model::socket_table::Socket| {
        s.tcp.map_or((0, 0), |t| (t.bytes_acked, t.bytes_received))
    };
    let start: HashMap<_, _> = first.sockets.iter().map(|s| (s.key(), bytes(&s))).collect();
    let sockets = last
        .sockets
        .iter()
        .filter_map(|s| {
            let (a0, r0) = start.get(&s.key())?;
            let (a1, r1) = bytes(&s);
            Some((s.key(), (a1.saturating_sub(*a0), r1.saturating_sub(*r0))))
        })
        .collect();
    let counters = |i: &netlens::model::InterfaceSample| {
        let c = &i.counters;
        [c.rx_packets, c.tx_packets, c.rx_bytes, c.tx_bytes]
    };
    let was: HashMap<_, _> = first
        .interfaces
        .iter()
        .map(|i| (i.index, counters(i)))
        .collect();
    let links = last
        .interfaces
        .iter()
        .filter_map(|i| {
            let before = was.get(&i.index)?;
            let now = counters(i);
            Some((
                i.index,
                std::array::from_fn(|k| now[k].saturating_sub(before[k])),
            ))
        })
        .collect();
    Rise { sockets, links }
}

/// Sample `i` of the day: the source's sample `i % n` at T0 + i seconds,
/// its counters raised by `cycle` times what the source's rose.
fn day_sample(source: &Sample, i: u64, cycle: u64, rise: &Rise) -> Sample {
    let mut s = source.clone();
    s.t = T0 + i as f64 + source.t.fract();
    s.mono = 1000.0 + i as f64 + source.mono.fract();
    s.sockets.modify_all(|socket| {
        let up = rise.sockets.get(&socket.as_socket().key());
        if let (Some(tcp), Some((acked, received))) = (&mut socket.tcp, up) {
            tcp.bytes_acked += cycle * acked;
            tcp.bytes_received += cycle * received;
        }
    });
    for link in &mut s.interfaces {
        if let Some(up) = rise.links.get(&link.index) {
            let c = &mut link.counters;
            c.rx_packets += cycle * up[0];
            c.tx_packets += cycle * up[1];
            c.rx_bytes += cycle * up[2];
            c.tx_bytes += cycle * up[3];
        }
    }
    s
}

/// The packets of the source's sample moved to the day sample's second.
fn day_batch(batch: Option<&PacketBatch>, shift: i64) -> PacketBatch {
    let mut batch = batch.cloned().unwrap_or_default();
    for packet in &mut batch.packets {
        packet.ts.sec += shift;
    }
    batch
}

/// Writes `hours` of samples to `day`; returns the bytes each hour added.
fn write_day(source: &Path, day: &Path, hours: u64) -> Vec<u64> {
    let (reader, samples, batches) = read_source(source);
    let n = samples.len() as u64;
    assert!(n >= 2, "the source holds {n} samples");
    let sockets: usize = samples.iter().map(|s| s.sockets.len()).sum();
    let packets: usize = batches.values().map(|b| b.packets.len()).sum();
    eprintln!(
        "record_day: source {} samples, {} sockets and {:.0} recorded packets per sample, {:.2} MB",
        n,
        sockets / n as usize,
        packets as f64 / n as f64,
        mb(std::fs::metadata(source).unwrap().len())
    );
    let rise = rise(&samples[0], &samples[n as usize - 1]);
    let meta = reader.meta.clone().expect("the source has its meta");
    let mut recorder = Recorder::create_copy(day, &meta).unwrap();
    let mut previous: Option<Sample> = None;
    let mut per_hour = Vec::new();
    let mut hour_start = recorder.stats().bytes;
    let started = Instant::now();
    let mut making = Duration::ZERO;
    for i in 0..hours * 3600 {
        let made = Instant::now();
        let from = &samples[(i % n) as usize];
        let mut sample = day_sample(from, i, i / n, &rise);
        let shift = sample.t.floor() as i64 - from.t.floor() as i64;
        let batch = day_batch(batches.get(&from.t.to_bits()), shift);
        making += made.elapsed();
        recorder
            .record_with_packets(previous.as_ref(), &mut sample, batch)
            .unwrap();
        previous = Some(sample);
        if (i + 1) % 3600 == 0 {
            let bytes = recorder.stats().bytes;
            per_hour.push(bytes - hour_start);
            hour_start = bytes;
            eprintln!(
                "record_day: hour {} written: {:.1} MB, {:.0} s so far ({:.0} s making samples); load {}",
                (i + 1) / 3600,
                mb(bytes),
                started.elapsed().as_secs_f64(),
                making.as_secs_f64(),
                load()
            );
        }
    }
    let stats = recorder.finish().unwrap();
    eprintln!(
        "record_day: wrote {} samples in {:.0} s ({:.2} ms per sample: clone, findings, encode, zstd)",
        stats.records[0],
        started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64() * 1000.0 / (hours * 3600) as f64
    );
    per_hour
}

/// SEEKS times spread at random over the file (a fixed LCG: the same
/// times every run): whole minutes (`step` 60 s) or any second (1 s).
fn targets(seconds: u64, step: u64) -> Vec<f64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..SEEKS)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            T0 + ((x >> 33) % (seconds / step)) as f64 * step as f64 + 0.5
        })
        .collect()
}

fn report(what: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let p99 = ms[(ms.len() * 99 / 100).min(ms.len() - 1)];
    eprintln!(
        "record_day: {what}: median {:.1} ms, p99 {p99:.1} ms, max {:.1} ms ({} seeks; load {})",
        ms[ms.len() / 2],
        ms[ms.len() - 1],
        ms.len(),
        load()
    );
}

/// The load average now (the machine is shared: figures come with it).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn timed(f: impl FnOnce()) -> f64 {
    let started = Instant::now();
    f();
    started.elapsed().as_secs_f64() * 1000.0
}

/// Seeks, to random minutes and to random seconds; returns the replay
/// view opened on the day (given its player directly: opening it with
/// `start_replay` first reads the whole file for the timeline's finding
/// marks, timed apart at the end).
fn seeks(day: &Path, samples: u64) -> App {
    let open = timed(|| drop(Reader::open(day).unwrap()));
    eprintln!("record_day: open (index) {open:.1} ms");
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), true);
    app.replay = Some(Player::new(Reader::open(day).unwrap()).unwrap());
    for (what, step) in [("a minute", 60), ("a second", 1)] {
        let targets = targets(samples, step);
        let reader = Reader::open(day).unwrap();
        let ms = targets
            .iter()
            .map(|t| {
                timed(|| {
                    let found = reader.seek(*t).unwrap().unwrap();
                    assert!(
                        (found.sample.t - *t).abs() < 1.5,
                        "{} for {t}",
                        found.sample.t
                    );
                })
            })
            .collect();
        report(&format!("Reader::seek to {what}"), ms);
        let mut player = Player::new(Reader::open(day).unwrap()).unwrap();
        let ms = targets
            .iter()
            .map(|t| {
                timed(|| {
                    player.seek(*t);
                    assert!((player.current().unwrap().t - *t).abs() < 1.5);
                })
            })
            .collect();
        report(&format!("Player::seek to {what}"), ms);
        // The replay view: `t` then the time and Enter, which seeks and
        // refills the history a live view would hold there (its 5 minutes).
        let ms = targets
            .iter()
            .map(|t| {
                let offset = format!("{}s", (*t - T0).floor());
                let ms = timed(|| app.jump_to_text(&offset));
                let shown = app.history.newest().unwrap().t;
                assert!((shown - *t).abs() < 1.5, "{shown} for {t}");
                ms
            })
            .collect();
        report(&format!("replay view, t to {what} (history refilled)"), ms);
    }
    app
}

/// Replay in the view (Sockets tab, drawn at 160x50 after every wake-up,
/// as the event loop does): at 64x, where every sample is applied, and at
/// 3600x over six hours of recording, where the samples a frame has no
/// time for are skipped: wall time to play `span` seconds of recording.
fn replay(app: &mut App) {
    play(app, 64.0, 120.0);
    play(app, 3600.0, 6.0 * 3600.0);
}

fn play(app: &mut App, speed: f64, span: f64) {
    app.jump_to_text("0s");
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).unwrap();
    let player = app.replay.as_mut().unwrap();
    player.speed = speed;
    player.playing = true;
    let decodes_before = player.decodes();
    let first = player.current().unwrap().t;
    let started = Instant::now();
    let (mut frames, mut shown, mut worst) = (0, 0, 0.0f64);
    let end = loop {
        let frame = Instant::now();
        if app.replay_deadline(frame).is_some_and(|due| due <= frame) && app.replay_tick(frame) {
            shown += 1;
        }
        terminal
            .draw(|frame| netlens::ui::draw(frame, app))
            .unwrap();
        frames += 1;
        worst = worst.max(frame.elapsed().as_secs_f64() * 1000.0);
        let player = app.replay.as_mut().unwrap();
        let t = player.current().unwrap().t;
        // Shown on screen is the sample the player is at.
        let drawn = app.history.newest().unwrap().t;
        assert_eq!(drawn, t, "the view shows the player's sample");
        if (t - first >= span && frames >= 10)
            || !app.replay.as_ref().unwrap().playing
            || started.elapsed() > Duration::from_secs(600)
        {
            break t;
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let decodes = app.replay.as_ref().unwrap().decodes() - decodes_before;
    eprintln!(
        "record_day: replay at {speed}x: {:.0} s of recording in {wall:.2} s wall ({:.0}x \
         achieved: needs {:.0} samples/s, {:.0} samples/s decoded whole); {frames} frames \
         ({:.1} ms mean, {worst:.0} ms worst), {shown} with a new sample; load {}",
        end - first,
        (end - first) / wall,
        speed,
        decodes as f64 / wall,
        wall * 1000.0 / frames as f64,
        load()
    );
}
