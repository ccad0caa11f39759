//! Sockets budgets: a full sample at 50k TCP sockets no slower
//! than `ss -tan`; a Sockets frame with 50k rows < 5 ms; RSS < 150 MB with
//! 50k sockets. benches/scripts/bench-sockets.sh creates 50k real sockets in a
//! namespace and runs this bench inside it next to `ss -tan`.
//!
//! - "collect": one full sample (all collectors) of the namespace it runs
//!   in, owner cache warm, as the sampler does each tick;
//! - "sockets frame": one frame of the Sockets tab, 50k synthetic rows;
//! - RSS: printed after 300 samples of 50k sockets went through the App;
//! - "sockets keys/...": a key and the frame showing it, on the live view's
//!   UI thread (samples prepared by the worker): `s`, `I`, `j`, PageDown
//!   and End (on a new sample each time); the time until an order made off
//!   the UI thread is shown is printed apart.
//!
//! - "findings": every finding over two synthetic samples a second apart,
//!   the senders without tcp_info limits and then with them (busy,
//!   rwnd_limited... rising on every established socket, each receiving
//!   too): the difference is the connection catalogue's cost.
//!
//! NETLENS_BENCH_SOCKETS=1000000 runs the frames at a million sockets (one
//! in ten in TIME_WAIT to four peers, as benches/scripts/scale-sockets.sh
//! makes them); the scale budgets are 16 ms after a sample, 2 ms between.

use criterion::{Criterion, criterion_group, criterion_main};
use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::{Collectors, SamplerEvent};
use netlens::findings::Thresholds;
use netlens::model::Sample;
use netlens::model::sockets::{
    Proto, SocketSample, SocketUser, TcpInfoSample, TcpLimits, TcpSample,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::hint::black_box;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

type Prepared = UnboundedReceiver<netlens::app::prepare::Prepared>;

fn synthetic(mono: f64, count: u32) -> Sample {
    let sockets = (0..count)
        .map(|i| SocketSample {
            proto: Proto::Tcp,
            state: if i % 10 == 9 { 6 } else { 1 },
            local: SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::new(198, 18, 0, 2),
                8000 + (i % 50) as u16,
            )),
            peer: if i % 10 == 9 {
                // TIME_WAIT to one of four servers.
                SocketAddr::V4(SocketAddrV4::new(
                    Ipv4Addr::new(198, 18, 200, 1),
                    3001 + (i % 4) as u16,
                ))
            } else {
                SocketAddr::V4(SocketAddrV4::new(
                    Ipv4Addr::new(198, 18, (i / 60_000) as u8, 1),
                    (1024 + i % 60_000) as u16,
                ))
            },
            recv_q: (i * 7919) % 5000,
            send_q: (i * 104_729) % 3000,
            uid: 1000,
            inode: 100_000 + i,
            users: vec![SocketUser {
                process: "server".into(),
                pid: 4000 + i % 5,
                fd: 10 + i,
            }]
            .into(),
            owner_denied: false,
            owner_pending: false,
            tcp: Some(TcpInfoSample {
                rtt_us: 100 + i % 1000,
                cwnd: 10,
                ..Default::default()
            }),
            drops: Some(0),
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        })
        .collect();
    Sample {
        t: 1_700_000_000.0 + mono,
        mono,
        netns: "bench".into(),
        sockets,
        tcp: Some(TcpSample::default()),
        ..Default::default()
    }
}

/// `synthetic` with every established socket's limits as a sender busy
/// since it opened: `mono` seconds, a third of them window-limited, every
/// counter the catalogue reads moving (bytes acknowledged, retransmits,
/// D-SACKs, reorderings) and a pacing cap on one in seven; and each a
/// receiver too (bytes received, its window and RTT), for the receiving
/// side's judge.
fn with_limits(mut sample: Sample) -> Sample {
    let mono = sample.mono;
    let busy_us = (mono * 1e6) as u64;
    for i in 0..sample.sockets.len() {
        sample.sockets.modify(i, |socket| {
            if socket.state != 1 {
                return;
            }
            if let Some(tcp) = socket.tcp.as_mut() {
                tcp.bytes_acked = (mono * 1e6) as u64 * (1 + i as u64 % 3);
                tcp.total_retrans = (mono * 10.0) as u32;
                tcp.bytes_received = (mono * 1e5) as u64 * (1 + i as u64 % 5);
            }
            socket.limits = Some(Box::new(TcpLimits {
                busy_us,
                rwnd_limited_us: busy_us / 3,
                snd_wnd: 65_536,
                dsack_dups: mono as u32,
                reord_seen: mono as u32,
                reordering: 3,
                notsent_bytes: 4096,
                max_pacing_rate: if i % 7 == 0 { 1 << 20 } else { u64::MAX },
                rcv_rtt_us: 20_000,
                rcv_ssthresh: 65_536,
                rcv_space: 131_072,
                ..Default::default()
            }));
        });
    }
    sample
}

fn findings(c: &mut Criterion) {
    let n = count();
    let limits = Thresholds::default();
    for (label, limited) in [("without", false), ("with", true)] {
        let (mut before, mut after) = (synthetic(1.0, n), synthetic(2.0, n));
        if limited {
            (before, after) = (with_limits(before), with_limits(after));
        }
        c.bench_function(
            &format!("findings: {n} sockets, {label} tcp_info limits"),
            |b| b.iter(|| black_box(netlens::findings::evaluate(Some(&before), &after, &limits))),
        );
    }
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn collect(c: &mut Criterion) {
    let mut collectors = Collectors::new("bench").expect("collectors");
    let first = collectors.collect().expect("sample"); // warms the owner cache
    let count = first.sockets.len();
    c.bench_function(
        &format!("collect: full sample, {count} sockets here"),
        |b| b.iter(|| black_box(collectors.collect().expect("sample"))),
    );
}

fn count() -> u32 {
    std::env::var("NETLENS_BENCH_SOCKETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000)
}

fn frames(c: &mut Criterion) {
    let n = count();
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), true);
    // NETLENS_BENCH_HISTORY: fewer samples first, for a quicker run.
    let history: u32 = std::env::var("NETLENS_BENCH_HISTORY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    for second in 0..history {
        app.on_sampler(SamplerEvent::Sample(Box::new(synthetic(
            f64::from(second),
            n,
        ))));
    }
    eprintln!(
        "RSS after {history} samples of {n} sockets through the App: {:.1} MB",
        rss_mb()
    );
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    // The first frame of a sample sorts; the ones after reuse the order.
    terminal.draw(|f| netlens::ui::draw(f, &mut app)).unwrap();
    c.bench_function(&format!("sockets frame, {n} rows, 200x60"), |b| {
        b.iter(|| {
            terminal
                .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                .unwrap();
        })
    });
    let mut mono = f64::from(history);
    c.bench_function(
        &format!("sockets frame after a new sample ({n} sockets), 200x60"),
        |b| {
            b.iter_batched(
                || {
                    mono += 1.0;
                    synthetic(mono, n)
                },
                |sample| {
                    app.on_sampler(SamplerEvent::Sample(Box::new(sample)));
                    terminal
                        .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                        .unwrap();
                },
                criterion::BatchSize::LargeInput,
            )
        },
    );
}

/// Sends a new sample through the preparation worker and takes it, as the
/// live view's event loop does.
fn feed(app: &mut App, prepared: &mut Prepared, mono: f64, n: u32) {
    app.on_sampler(SamplerEvent::Sample(Box::new(synthetic(mono, n))));
    let ready = prepared.blocking_recv().expect("prepared");
    app.take_prepared(ready);
}

/// Waits (untimed) until a sort asked off the UI thread is shown; returns
/// how long that took.
fn settle(app: &mut App) -> Duration {
    let start = Instant::now();
    while app.sockets.sorting() {
        std::thread::sleep(Duration::from_millis(1));
        app.sockets.poll_order();
    }
    start.elapsed()
}

/// A key and the frame that shows its effect, on the UI thread of the live
/// view (samples prepared by the worker, so a new order of many rows is
/// made off the UI thread). After each key the bench waits, untimed, for
/// that order; the mean wait is printed.
fn keys(c: &mut Criterion) {
    let n = count();
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), true);
    let mut prepared = app.start_preparing().expect("worker");
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    for second in 0..2 {
        feed(&mut app, &mut prepared, f64::from(second), n);
    }
    terminal.draw(|f| netlens::ui::draw(f, &mut app)).unwrap();
    // Each timed key is followed by an untimed wait of up to seconds: a
    // short warm-up and few iterations, or the run takes hours.
    let mut group = c.benchmark_group("sockets keys");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(10))
        .measurement_time(Duration::from_millis(100))
        .sampling_mode(criterion::SamplingMode::Flat);
    for (name, key) in [
        ("s (next sort column)", Key::Char('s')),
        ("I (invert the sort)", Key::Char('I')),
        ("j (down)", Key::Char('j')),
        ("PageDown", Key::PageDown),
    ] {
        let (mut waited, mut count) = (Duration::ZERO, 0u32);
        group.bench_function(format!("{name} + frame, {n} sockets"), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    app.on_key(key);
                    terminal
                        .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                        .unwrap();
                    timed += start.elapsed();
                    waited += settle(&mut app);
                    count += 1;
                }
                timed
            })
        });
        eprintln!(
            "{name}: the new order shown after, mean of {count}: {:.1} ms",
            waited.as_secs_f64() * 1000.0 / f64::from(count.max(1))
        );
    }
    // Deep scrolling: 400 PageDowns without waiting (about 23,000 rows, past
    // the sorted rows many times), each key + frame timed.
    // Each press is split in its key, its frame and the poll that takes a
    // finished order (and starts the next sort): where the slow ones go.
    app.on_key(Key::Home);
    let mut presses: Vec<[Duration; 3]> = (0..400)
        .map(|_| {
            let start = Instant::now();
            app.on_key(Key::PageDown);
            let keyed = start.elapsed();
            terminal.draw(|f| netlens::ui::draw(f, &mut app)).unwrap();
            let drawn = start.elapsed();
            app.sockets.poll_order();
            [keyed, drawn - keyed, start.elapsed() - drawn]
        })
        .collect();
    presses.sort_by_key(|p| p.iter().sum::<Duration>());
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let total = |p: &[Duration; 3]| ms(p.iter().sum());
    let mean = presses.iter().map(total).sum::<f64>() / presses.len() as f64;
    eprintln!(
        "PageDown x400 + frame, {n} sockets: mean {mean:.2} ms, median {:.2}, p99 {:.2}, max {:.2} ms; load {}",
        total(&presses[200]),
        total(&presses[396]),
        total(&presses[399]),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for press in &presses[392..] {
        eprintln!(
            "  slowest: key {:.2} ms, frame {:.2} ms, poll {:.2} ms",
            ms(press[0]),
            ms(press[1]),
            ms(press[2])
        );
    }
    settle(&mut app);
    // End on a new sample, whose order is sorted only as far as the window.
    let mut mono = 10.0;
    let (mut waited, mut count) = (Duration::ZERO, 0u32);
    group.bench_function(format!("End + frame, {n} sockets"), |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                mono += 1.0;
                feed(&mut app, &mut prepared, mono, n);
                app.on_key(Key::Home);
                terminal.draw(|f| netlens::ui::draw(f, &mut app)).unwrap();
                let start = Instant::now();
                app.on_key(Key::End);
                terminal
                    .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                    .unwrap();
                timed += start.elapsed();
                waited += settle(&mut app);
                count += 1;
            }
            timed
        })
    });
    group.finish();
    eprintln!(
        "End: the whole order shown after, mean of {count}: {:.1} ms",
        waited.as_secs_f64() * 1000.0 / f64::from(count.max(1))
    );
}

/// The live path: a new sample goes to the preparation worker; the UI
/// thread's share is handing it over, then taking the prepared sample and
/// drawing it (timed); the worker's time is measured apart.
fn live(c: &mut Criterion) {
    let n = count();
    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), true);
    let mut prepared = app.start_preparing().expect("worker");
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut mono = 0.0;
    for _ in 0..3 {
        mono += 1.0;
        app.on_sampler(SamplerEvent::Sample(Box::new(synthetic(mono, n))));
        let ready = prepared.blocking_recv().expect("prepared");
        app.take_prepared(ready);
    }
    terminal.draw(|f| netlens::ui::draw(f, &mut app)).unwrap();
    let mut worker = Duration::ZERO;
    let mut count = 0u32;
    c.bench_function(
        &format!("sockets frame after a new sample, UI thread, live ({n} sockets), 200x60"),
        |b| {
            b.iter_custom(|iters| {
                let mut ui = Duration::ZERO;
                for _ in 0..iters {
                    mono += 1.0;
                    let sample = Box::new(synthetic(mono, n));
                    let start = Instant::now();
                    app.on_sampler(SamplerEvent::Sample(sample));
                    ui += start.elapsed();
                    let ready = prepared.blocking_recv().expect("prepared");
                    worker += start.elapsed();
                    count += 1;
                    let start = Instant::now();
                    app.take_prepared(ready);
                    terminal
                        .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                        .unwrap();
                    ui += start.elapsed();
                }
                ui
            })
        },
    );
    eprintln!(
        "preparation worker, sample sent to prepared, mean of {count}: {:.1} ms",
        worker.as_secs_f64() * 1000.0 / f64::from(count.max(1))
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4));
    targets = collect, findings, frames, keys, live
}
criterion_main!(benches);
