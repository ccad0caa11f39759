//! Benchmark: the conntrack entry list.
//!
//! - Parsing a synthetic ctnetlink dump of 17,000 entries (what the kernel
//!   sends for a busy NAT box), built with the same encoder the unit tests
//!   round-trip through the parser.
//! - The tab's per-frame work on 17,000 entries: sorting/filtering the rows
//!   and the summary (top sources, counts by state).
//! - The tab live at NETLENS_BENCH_ENTRIES entries (default 17,000; the
//!   issue 21 scale is 1000000): a key and its frame on the UI thread while
//!   the sort runs on its own thread, and that sort's time.
//! - With NETLENS_BENCH_NETNS=NAME (root; benches/scripts/bench-conntrack.sh sets it
//!   up with ~17k real entries): the real dump, kernel included, in that
//!   namespace, to compare with `conntrack -L`.

use criterion::Criterion;
use netlens::app::conntrack::ConntrackView;
use netlens::collect::ctnetlink::{Ctnetlink, encode_entry, parse_dump, parse_entry_with_crate};
use netlens::model::conntrack::{ConntrackEntry, Tuple};
use netlens::model::conntrack_rates::Summary;
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::os::fd::AsRawFd;
use std::time::Duration;

const ENTRIES: usize = 17_000;

fn entry(i: usize) -> ConntrackEntry {
    let client = IpAddr::V4(Ipv4Addr::new(
        198,
        18,
        (i / 250) as u8 % 200,
        (i % 250) as u8 + 1,
    ));
    let front = IpAddr::V4(Ipv4Addr::new(198, 19, 0, 2));
    let back = IpAddr::V4(Ipv4Addr::new(198, 19, 1, (i % 8) as u8 + 2));
    let sport = 10_000 + (i % 50_000) as u16;
    let (proto, tcp_state) = if i.is_multiple_of(5) {
        (17, None)
    } else {
        (6, Some((i % 9) as u8 + 1))
    };
    ConntrackEntry {
        proto,
        tcp_state,
        orig: Tuple {
            src: client,
            dst: front,
            sport: Some(sport),
            dport: Some(8080),
        },
        reply: Tuple {
            src: back,
            dst: client,
            sport: Some(80),
            dport: Some(sport),
        },
        status: 0x1be,
        timeout: (i % 432_000) as u32,
        mark: 0,
        zone: 0,
        packets: Some((i as u64 % 100, i as u64 % 90)),
        bytes: Some((i as u64 * 60, i as u64 * 1500)),
    }
}

fn synthetic_dump() -> (Vec<u8>, Vec<ConntrackEntry>) {
    let entries: Vec<ConntrackEntry> = (0..ENTRIES).map(entry).collect();
    let mut dump = Vec::new();
    for e in &entries {
        dump.extend(encode_entry(e, 1));
    }
    (dump, entries)
}

fn parse(c: &mut Criterion) {
    let (dump, expected) = synthetic_dump();
    let mut parsed = Vec::with_capacity(ENTRIES);
    parse_dump(&dump, &mut parsed).unwrap();
    assert_eq!(parsed, expected, "the dump parses back to what was encoded");
    eprintln!("synthetic dump: {ENTRIES} entries, {} bytes", dump.len());
    c.bench_function("parse ctnetlink dump, 17k entries", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(ENTRIES);
            parse_dump(black_box(&dump), &mut out).unwrap();
            out
        })
    });
    // The same through netlink-packet-netfilter's types: the reason the dump
    // uses the direct parser.
    let messages: Vec<&[u8]> = {
        let mut list = Vec::new();
        let mut offset = 0;
        while offset < dump.len() {
            let length = u32::from_ne_bytes(dump[offset..offset + 4].try_into().unwrap()) as usize;
            list.push(&dump[offset + 16..offset + length]);
            offset += (length + 3) & !3;
        }
        list
    };
    c.bench_function(
        "parse ctnetlink dump via the crate's types, 17k entries",
        |b| {
            b.iter(|| {
                messages
                    .iter()
                    .filter_map(|m| parse_entry_with_crate(0x100, black_box(m)))
                    .count()
            })
        },
    );
    let mut view = ConntrackView::default();
    let mut history = netlens::app::history::History::default();
    let mut sample = netlens::model::Sample::default();
    sample.conntrack.entries = Some(expected.clone());
    history.push(sample);
    let shown = netlens::app::view::Shown {
        history: &history,
        index: Some(0),
    };
    c.bench_function("sort 17k entry rows (tab, default sort)", |b| {
        b.iter(|| {
            view.order.clear();
            view.refresh(black_box(&shown));
            view.rows().len()
        })
    });
    c.bench_function("summary of 17k entries (top-N, by state)", |b| {
        b.iter(|| Summary::of(black_box(&expected), 3))
    });
}

/// One frame of the Conntrack tab with 17k entries (budget: < 5 ms a frame).
fn frame(c: &mut Criterion) {
    use netlens::app::App;
    use netlens::app::tabs::Tab;
    use netlens::collect::SamplerEvent;
    use netlens::model::Sample;
    use netlens::model::conntrack::{ConntrackSample, ConntrackStats};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut app = App::new(Tab::Conntrack, Duration::from_secs(1), true);
    for second in 0..2u64 {
        let sample = Sample {
            mono: second as f64,
            netns: "bench".into(),
            conntrack: ConntrackSample {
                available: true,
                count: Some(ENTRIES as u64),
                max: Some(262_144),
                stats: Some(ConntrackStats {
                    found: second * 100,
                    ..Default::default()
                }),
                entries: Some((0..ENTRIES).map(entry).collect()),
                ..Default::default()
            },
            ..Default::default()
        };
        app.on_sampler(SamplerEvent::Sample(Box::new(sample)));
    }
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    c.bench_function("conntrack tab frame, 17k entries, 200x60", |b| {
        b.iter(|| {
            terminal
                .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                .unwrap();
        })
    });
}

fn entries_count() -> usize {
    std::env::var("NETLENS_BENCH_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ENTRIES)
}

/// The live Conntrack tab: keys answered on the UI thread from the order
/// already made while a new one is sorted elsewhere.
fn live(c: &mut Criterion) {
    use netlens::app::App;
    use netlens::app::keymap::Key;
    use netlens::app::tabs::Tab;
    use netlens::collect::SamplerEvent;
    use netlens::model::Sample;
    use netlens::model::conntrack::ConntrackSample;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use std::time::Instant;
    let n = entries_count();
    let mut app = App::new(Tab::Conntrack, Duration::from_secs(1), true);
    app.conntrack.order.background = true;
    let list: Vec<ConntrackEntry> = (0..n).map(entry).collect();
    for second in 0..2u64 {
        let sample = Sample {
            mono: second as f64,
            netns: "bench".into(),
            conntrack: ConntrackSample {
                available: true,
                count: Some(n as u64),
                max: Some(2 * n as u64),
                entries: Some(list.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        app.on_sampler(SamplerEvent::Sample(Box::new(sample)));
    }
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut draw = |app: &mut App| {
        terminal
            .draw(|f| netlens::ui::draw(f, black_box(app)))
            .unwrap();
    };
    let settle = |app: &mut App, draw: &mut dyn FnMut(&mut App)| {
        let start = Instant::now();
        draw(app);
        while app.conntrack.order.sorting() {
            std::thread::sleep(Duration::from_millis(5));
            app.conntrack.order.poll();
        }
        draw(app);
        start.elapsed()
    };
    let first = settle(&mut app, &mut draw);
    eprintln!("conntrack tab, {n} entries: first order shown after {first:.2?}");
    for (name, key) in [
        ("s (next sort column)", Key::Char('s')),
        ("j (down)", Key::Char('j')),
    ] {
        let mut sorts = Vec::new();
        c.bench_function(&format!("conntrack key {name} + frame, {n} entries"), |b| {
            b.iter_custom(|iters| {
                let mut ui = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    app.on_key(key);
                    draw(&mut app);
                    ui += start.elapsed();
                    if app.conntrack.order.sorting() {
                        sorts.push(settle(&mut app, &mut draw));
                    }
                }
                ui
            })
        });
        if !sorts.is_empty() {
            let mean = sorts.iter().sum::<Duration>() / sorts.len() as u32;
            eprintln!(
                "  its sort, off the UI thread: mean {mean:.2?} over {}",
                sorts.len()
            );
        }
    }
}

fn real_dump(c: &mut Criterion) {
    let Ok(name) = std::env::var("NETLENS_BENCH_NETNS") else {
        eprintln!(
            "NETLENS_BENCH_NETNS not set: skipping the real dump (see benches/scripts/bench-conntrack.sh)"
        );
        return;
    };
    let file = std::fs::File::open(format!("/run/netns/{name}")).expect("open the bench namespace");
    // SAFETY: valid fd; CLONE_NEWNET moves only this thread.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        panic!("setns: {}", std::io::Error::last_os_error());
    }
    let mut netlink = Ctnetlink::new().expect("ctnetlink socket");
    let count = netlink.entries().expect("dump").len();
    eprintln!("real dump in {name}: {count} entries");
    c.bench_function(
        &format!("real ctnetlink dump + parse, {count} entries"),
        |b| b.iter(|| netlink.entries().unwrap().len()),
    );
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(5));
    parse(&mut c);
    frame(&mut c);
    live(&mut c);
    real_dump(&mut c);
    c.final_summary();
}
