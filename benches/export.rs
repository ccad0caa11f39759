//! `netlens export` cost (issue 11): what a sample costs to render once, and
//! what one scrape costs, which only copies the cached text of the latest
//! sample to the socket.
//!
//! - "render/host": the OpenMetrics text of a real sample of the namespace the
//!   bench runs in (all collectors, findings evaluated);
//! - "render/200 interfaces": a busy container host: 200 interfaces, every
//!   TCP counter, conntrack stats;
//! - "scrape": one GET /metrics over loopback TCP against the real server
//!   (connect, request, whole response, close), the page being the
//!   200-interface one.

use criterion::{Criterion, criterion_group, criterion_main};
use netlens::collect::Collectors;
use netlens::export::{http, page};
use netlens::findings::Thresholds;
use netlens::model::conntrack::{ConntrackStats, StatsSource};
use netlens::model::sockets::{COUNTERS, TcpSample};
use netlens::model::{InterfaceSample, LinkCounters, Sample};
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

fn busy_host() -> Sample {
    let interfaces = (0..200u32)
        .map(|i| InterfaceSample {
            index: i + 1,
            name: if i == 0 {
                "lo".into()
            } else {
                format!("veth{i:04x}")
            },
            up: true,
            lower_up: true,
            mtu: 1500,
            speed_mbps: Some(10_000),
            counters: LinkCounters {
                rx_packets: 1_000_003 * u64::from(i),
                tx_packets: 999_983 * u64::from(i),
                rx_bytes: 1_400_000_017 * u64::from(i),
                tx_bytes: 1_300_000_019 * u64::from(i),
                rx_dropped: u64::from(i % 7),
                ..Default::default()
            },
            ..Default::default()
        })
        .collect();
    let mut tcp = TcpSample {
        states: [5000, 3, 40, 10, 20, 12_000, 0, 30, 2, 50, 0],
        ..Default::default()
    };
    for (i, (name, _)) in COUNTERS.iter().enumerate() {
        tcp.counters.insert((*name).into(), 123_456_789 * i as u64);
    }
    let mut sample = Sample {
        t: 1_790_000_000.25,
        mono: 1000.0,
        netns: "host".into(),
        interfaces,
        tcp: Some(tcp),
        ..Default::default()
    };
    sample.conntrack.available = true;
    sample.conntrack.source = StatsSource::Netlink;
    sample.conntrack.count = Some(40_000);
    sample.conntrack.max = Some(262_144);
    sample.conntrack.stats = Some(ConntrackStats {
        found: 1_000_000,
        insert: 2_000_000,
        ..Default::default()
    });
    sample
}

fn render(c: &mut Criterion) {
    let mut collectors = Collectors::new("host").expect("collectors");
    let previous = collectors.collect().expect("sample");
    let current = collectors.collect().expect("sample");
    let text = page(
        &current,
        &netlens::findings::evaluate(Some(&previous), &current, &Thresholds::DEFAULT),
        &netlens::export::dns::Accumulator::default(),
        None,
        &netlens::model::failed::Failures::default(),
    );
    eprintln!(
        "render/host: {} bytes, {} lines",
        text.openmetrics.len(),
        text.openmetrics.lines().count()
    );
    c.bench_function("render/host", |b| {
        b.iter(|| {
            let (previous, current) = (black_box(&previous), black_box(&current));
            page(
                current,
                &netlens::findings::evaluate(Some(previous), current, &Thresholds::DEFAULT),
                &netlens::export::dns::Accumulator::default(),
                None,
                &netlens::model::failed::Failures::default(),
            )
        })
    });
    let busy = busy_host();
    let text = page(
        &busy,
        &netlens::findings::evaluate(Some(&busy), &busy, &Thresholds::DEFAULT),
        &netlens::export::dns::Accumulator::default(),
        None,
        &netlens::model::failed::Failures::default(),
    );
    eprintln!(
        "render/200 interfaces: {} bytes, {} lines",
        text.openmetrics.len(),
        text.openmetrics.lines().count()
    );
    c.bench_function("render/200 interfaces", |b| {
        b.iter(|| {
            let busy = black_box(&busy);
            page(
                busy,
                &netlens::findings::evaluate(Some(busy), busy, &Thresholds::DEFAULT),
                &netlens::export::dns::Accumulator::default(),
                None,
                &netlens::model::failed::Failures::default(),
            )
        })
    });
}

fn scrape(c: &mut Criterion) {
    let busy = busy_host();
    let pages = Arc::new(page(
        &busy,
        &netlens::findings::evaluate(Some(&busy), &busy, &Thresholds::DEFAULT),
        &netlens::export::dns::Accumulator::default(),
        None,
        &netlens::model::failed::Failures::default(),
    ));
    let text = pages.openmetrics.clone();
    let (_publish, page_rx) = tokio::sync::watch::channel(Some(pages));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        runtime.block_on(http::serve(listener, page_rx, http::MAX_CONNECTIONS))
    });
    let mut buf = Vec::with_capacity(text.len() + 512);
    c.bench_function("scrape", |b| {
        b.iter(|| {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .write_all(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nAccept: application/openmetrics-text\r\n\r\n")
                .unwrap();
            buf.clear();
            stream.read_to_end(&mut buf).unwrap();
            assert!(buf.ends_with(b"# EOF\n"));
        })
    });
}

criterion_group!(benches, render, scrape);
criterion_main!(benches);
