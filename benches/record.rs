//! Recording budgets: bytes per sample on a quiet host and with
//! 10k sockets, seek time in a 24 h file, and replay keeping up at 64x.
//!
//! The 10k socket samples are synthetic but shaped like a busy server's:
//! connections persist for a while, a tenth move data each second, all age.

use criterion::{Criterion, criterion_group, criterion_main};
use netlens::app::App;
use netlens::app::tabs::Tab;
use netlens::model::sockets::{Proto, SocketSample, SocketUser, TcpInfoSample};
use netlens::model::{InterfaceSample, LinkCounters, Sample};
use netlens::record::encode;
use netlens::record::format::{Meta, Stream};
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use netlens::record::writer::Writer;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::hint::black_box;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const T0: f64 = 1_704_103_200.0;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netlens-bench-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// A quiet host: lo, eth0, docker0 and two veths, trickles of traffic.
fn quiet(i: u64) -> Sample {
    let iface = |index: u32, name: &str, pps: u64| InterfaceSample {
        index,
        name: name.into(),
        kind: name.starts_with("veth").then(|| "veth".to_string()),
        up: true,
        lower_up: true,
        loopback: index == 1,
        mtu: 1500,
        mac: Some(format!("52:54:00:12:34:{index:02x}")),
        addresses: vec![format!("10.0.{index}.15/24"), format!("fe80::{index}/64")],
        speed_mbps: (index == 2).then_some(1000),
        counters: LinkCounters {
            rx_packets: 8_000_000 + i * pps + (i * 7919) % 5,
            tx_packets: 6_000_000 + i * pps * 3 / 4 + (i * 104_729) % 3,
            rx_bytes: 9_000_000_000 + i * pps * 900 + (i * 7919) % 1400,
            tx_bytes: 2_000_000_000 + i * pps * 200 + (i * 104_729) % 900,
            multicast: i / 30,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut sample = Sample {
        t: T0 + i as f64,
        mono: 1000.0 + i as f64,
        netns: "host".into(),
        interfaces: vec![
            iface(1, "lo", 20),
            iface(2, "eth0", 40),
            iface(3, "docker0", 1),
            iface(4, "veth1a2b3c", 1),
            iface(5, "veth4d5e6f", 1),
        ],
        ..Default::default()
    };
    sample.conntrack.available = true;
    sample.conntrack.count = Some(40 + i % 7);
    sample.conntrack.max = Some(262_144);
    sample.conntrack.buckets = Some(65_536);
    sample.conntrack.stats = Some(netlens::model::conntrack::ConntrackStats {
        found: i * 3,
        insert: i * 2,
        search_restart: i / 100,
        ..Default::default()
    });
    sample
}

/// 10k established connections to a server on :443, as a busy host keeps
/// them from one second to the next: each second one in ten moves data
/// (byte counters, rtt, queues), every one's last-send/recv/ack times age
/// by a second, and 1% are replaced by new connections.
fn sockets(i: u64, n: u32) -> Vec<SocketSample> {
    (0..n)
        .map(|k| {
            let k = u64::from(k);
            // Each socket lives 100 s, staggered: 1% are new every second.
            let generation = (i + k) / 100;
            let id = k + generation * 100_000;
            let active = (k + i).is_multiple_of(10);
            let age = if active {
                0
            } else {
                ((i + k) % 100) as u32 * 1000
            };
            SocketSample {
                proto: Proto::Tcp,
                state: 1,
                local: "198.18.0.15:443".parse().unwrap(),
                peer: SocketAddr::from((
                    [198, 18, (id / 250 % 250) as u8, (id % 250 + 1) as u8],
                    (20_000 + id % 40_000) as u16,
                )),
                recv_q: if active { (i % 7) as u32 * 100 } else { 0 },
                send_q: if active { (i % 5) as u32 * 1448 } else { 0 },
                uid: 33,
                inode: 1_000_000 + id as u32,
                users: vec![SocketUser {
                    process: "nginx".into(),
                    pid: 1200 + (k % 4) as u32,
                    fd: 10 + k as u32,
                }]
                .into(),
                owner_denied: false,
                owner_pending: false,
                tcp: Some(TcpInfoSample {
                    rtt_us: 20_000 + (id % 997) as u32 + if active { (i % 13) as u32 } else { 0 },
                    rttvar_us: 5_000 + (id % 331) as u32,
                    cwnd: 10 + (id % 30) as u32,
                    ssthresh: 2_147_483_647,
                    mss: 1448,
                    rto_us: 204_000,
                    retrans: 0,
                    total_retrans: (id % 3) as u32,
                    bytes_acked: id * 10_000 + (i + k) / 10 * 14_480,
                    bytes_received: id * 3_000 + (i + k) / 10 * 700,
                    last_send_ms: age,
                    last_recv_ms: age,
                    last_ack_ms: age,
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

/// Writes `samples` seconds of `make` and reports bytes per sample and the
/// CPU time to record and to replay (decode) one.
fn measure(name: &str, samples: u64, budget: u64, make: impl Fn(u64) -> Sample) {
    let meta = Meta {
        interval: 1.0,
        ..Default::default()
    };
    let path = scratch(&format!("{name}.nlrec"));
    let all: Vec<Sample> = (0..samples).map(&make).collect();
    let mut writer = Writer::create(&path, &meta).unwrap();
    let started = Instant::now();
    for s in &all {
        writer.write_sample(&mut s.clone()).unwrap();
    }
    let stats = writer.finish().unwrap();
    let record_ms = started.elapsed().as_secs_f64() * 1000.0 / samples as f64;
    // The clone is not recording work: measure it alone and take it off.
    let started = Instant::now();
    for s in &all {
        black_box(s.clone());
    }
    let clone_ms = started.elapsed().as_secs_f64() * 1000.0 / samples as f64;
    let reader = Reader::open(&path).unwrap();
    let started = Instant::now();
    let mut read = 0;
    for entry in reader.sample_segments() {
        read += reader.read_samples(&entry).unwrap().records.len();
    }
    let replay_ms = started.elapsed().as_secs_f64() * 1000.0 / samples as f64;
    assert_eq!(read as u64, samples);
    let plain: usize = all.iter().map(|s| encode(s).len()).sum();
    // Format 1 for comparison: each sample as plain MessagePack, zstd
    // against the previous records of the segment.
    let v1 = scratch(&format!("{name}-v1.nlrec"));
    let mut writer = Writer::create(&v1, &meta).unwrap();
    for s in &all {
        writer
            .write_record(Stream::Samples, s.t, s.mono, &encode(s))
            .unwrap();
    }
    let v1_bytes = writer.finish().unwrap().bytes;
    eprintln!(
        "record/{name}: {:.0} B per sample on disk (budget {budget}; {:.0} B encoded, \
         {:.0} B as plain MessagePack; format 1: {:.0} B on disk); record {:.2} ms, replay \
         {:.2} ms CPU per sample",
        stats.bytes as f64 / samples as f64,
        stats.raw_bytes[0] as f64 / samples as f64,
        plain as f64 / samples as f64,
        v1_bytes as f64 / samples as f64,
        record_ms - clone_ms,
        replay_ms,
    );
    for file in [&path, &v1] {
        std::fs::remove_file(file).unwrap();
    }
}

fn bytes_per_sample(c: &mut Criterion) {
    // Quiet host: ten minutes.
    measure("quiet", 600, 2048, quiet);
    // 10k sockets: three minutes (three segments, so three keyframes).
    measure("10k-sockets", 180, 40_960, |i| Sample {
        sockets: sockets(i, 10_000).into(),
        ..quiet(i)
    });

    let meta = Meta {
        interval: 1.0,
        ..Default::default()
    };
    let s = quiet(5);
    c.bench_function("record/encode+write quiet sample", |b| {
        let path = scratch("write.nlrec");
        let mut writer = Writer::create(&path, &meta).unwrap();
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let mut s = s.clone();
            s.t += i as f64;
            s.mono += i as f64;
            writer.write_sample(&mut s).unwrap();
        });
    });
}

/// A 24 h file at 1 Hz: 86,400 samples.
fn day_file() -> PathBuf {
    let path = scratch("day.nlrec");
    let meta = Meta {
        interval: 1.0,
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 0..86_400 {
        writer.write_sample(&mut quiet(i)).unwrap();
    }
    writer.finish().unwrap();
    path
}

fn seek(c: &mut Criterion) {
    let path = day_file();
    eprintln!(
        "record/day: {} bytes for 86,400 samples",
        std::fs::metadata(&path).unwrap().len()
    );
    c.bench_function("record/open 24h file (index)", |b| {
        b.iter(|| black_box(Reader::open(&path).unwrap().segments.len()));
    });
    let reader = Reader::open(&path).unwrap();
    let mut k = 0u64;
    c.bench_function("record/seek in 24h file", |b| {
        b.iter(|| {
            // Spread over the day, never the same segment twice in a row.
            k = (k + 7_919) % 86_400;
            let located = reader.seek(T0 + k as f64 + 0.5).unwrap().unwrap();
            assert_eq!(located.sample.t, T0 + k as f64);
        });
    });
    // The same without the index (a killed recorder): rebuilt by a scan.
    let bytes = std::fs::read(&path).unwrap();
    let unindexed = scratch("day-noindex.nlrec");
    std::fs::write(&unindexed, &bytes[..bytes.len() - 40]).unwrap();
    let mut group = c.benchmark_group("record/scan");
    group.sample_size(10);
    group.bench_function("open 24h file without index (scan)", |b| {
        b.iter(|| black_box(Reader::open(&unindexed).unwrap().segments.len()));
    });
    group.finish();
    for file in [&path, &unindexed] {
        std::fs::remove_file(file).unwrap();
    }
}

/// Seek in a large file: 20 minutes of 10k-socket samples (~1 GB of
/// MessagePack), to a random second: the Reader, the Player (its segment
/// cache rarely holds the one wanted) and the replay view's `t` (which
/// also refills the 5-minute history).
fn seek_large(c: &mut Criterion) {
    const SAMPLES: u64 = 1_200;
    let path = scratch("large.nlrec");
    let meta = Meta {
        interval: 1.0,
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 0..SAMPLES {
        let mut sample = quiet(i);
        sample.sockets = sockets(i, 10_000).into();
        writer.write_sample(&mut sample).unwrap();
    }
    writer.finish().unwrap();
    eprintln!(
        "record/large: {} bytes for {SAMPLES} samples of 10k sockets",
        std::fs::metadata(&path).unwrap().len()
    );
    let mut group = c.benchmark_group("record/seek 10k sockets");
    group.sample_size(30);
    let reader = Reader::open(&path).unwrap();
    let mut k = 0u64;
    // Spread over the file, never the same segment twice in a row.
    let mut next = move || {
        k = (k + 617) % SAMPLES;
        k
    };
    group.bench_function("Reader::seek to a second", |b| {
        b.iter(|| {
            let k = next();
            let located = reader.seek(T0 + k as f64 + 0.5).unwrap().unwrap();
            assert_eq!(located.sample.t, T0 + k as f64);
        });
    });
    let mut player = Player::new(Reader::open(&path).unwrap()).unwrap();
    group.bench_function("Player::seek to a second", |b| {
        b.iter(|| {
            let k = next();
            player.seek(T0 + k as f64);
            assert_eq!(player.current().unwrap().t, T0 + k as f64);
        });
    });
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), true);
    app.start_replay(Player::new(Reader::open(&path).unwrap()).unwrap());
    group.bench_function("replay view t to a second (history refilled)", |b| {
        b.iter(|| {
            let k = next();
            app.jump_to_text(&format!("{k}s"));
            assert_eq!(app.history.newest().unwrap().t, T0 + k as f64);
        });
    });
    group.finish();
    drop((reader, player, app));
    std::fs::remove_file(&path).unwrap();
}

/// Replay at 64x: each sample must be applied and drawn in under 1/64 s.
fn replay_speed(c: &mut Criterion) {
    let path = scratch("replay.nlrec");
    let meta = Meta {
        interval: 1.0,
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 0..3_600 {
        writer.write_sample(&mut quiet(i)).unwrap();
    }
    writer.finish().unwrap();
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), true);
    app.start_replay(Player::new(Reader::open(&path).unwrap()).unwrap());
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).unwrap();
    c.bench_function("record/replay step + draw (64x needs < 15.6 ms)", |b| {
        b.iter(|| {
            if !app.on_key(netlens::app::keymap::Key::Right) {
                app.on_key(netlens::app::keymap::Key::Char('g'));
            }
            terminal
                .draw(|frame| netlens::ui::draw(frame, &mut app))
                .unwrap();
        });
    });
    drop(app);
    std::fs::remove_file(&path).unwrap();
    // Every file above was removed: the directory is empty.
    let _ = std::fs::remove_dir(path.parent().unwrap());
}

criterion_group!(benches, bytes_per_sample, seek, seek_large, replay_speed);
criterion_main!(benches);
