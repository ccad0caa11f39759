//! Cost of drawing one frame of the Interfaces tab, list and detail, with
//! many interfaces. Budget: < 5 ms a frame with 50k rows.

use criterion::{Criterion, criterion_group, criterion_main};
use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::model::{Duplex, InterfaceSample, LinkCounters, Sample};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::hint::black_box;
use std::time::Duration;

fn sample(mono: f64, interfaces: usize) -> Sample {
    Sample {
        t: 1_700_000_000.0 + mono,
        mono,
        netns: "bench".into(),
        interfaces: (0..interfaces)
            .map(|i| InterfaceSample {
                index: i as u32 + 1,
                name: format!("veth{i}"),
                kind: Some("veth".into()),
                up: true,
                lower_up: true,
                mtu: 1500,
                mac: Some("02:00:00:00:00:01".into()),
                addresses: vec!["198.18.0.1/24".into()],
                speed_mbps: Some(10_000),
                duplex: Duplex::Full,
                counters: LinkCounters {
                    rx_packets: (mono as u64) * (i as u64 + 1),
                    tx_packets: (mono as u64) * 3,
                    rx_bytes: (mono as u64) * 1500 * (i as u64 + 1),
                    tx_bytes: (mono as u64) * 4500,
                    ..Default::default()
                },
                loopback: false,
                qdisc: None,
                netns: 0,
                link_index: None,
                link_netnsid: None,
            })
            .collect(),
        ..Default::default()
    }
}

fn app(interfaces: usize, samples: usize) -> App {
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), true);
    for second in 0..samples {
        app.on_sampler(SamplerEvent::Sample(Box::new(sample(
            second as f64,
            interfaces,
        ))));
    }
    app
}

fn frames(c: &mut Criterion) {
    for (interfaces, samples) in [(500, 2), (50_000, 2)] {
        let mut app = app(interfaces, samples);
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        c.bench_function(
            &format!("interfaces list frame, {interfaces} rows, 200x60"),
            |b| {
                b.iter(|| {
                    terminal
                        .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                        .unwrap();
                })
            },
        );
    }
    // The frame right after a new sample: rates, sort and findings are
    // recomputed for every row once, then cached for the frames that follow.
    for interfaces in [500, 50_000] {
        let mut app = app(interfaces, 2);
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let mut mono = 2.0;
        c.bench_function(
            &format!("first frame after a new sample, {interfaces} rows, 200x60"),
            |b| {
                b.iter_batched(
                    || {
                        mono += 1.0;
                        Box::new(sample(mono, interfaces))
                    },
                    |next| {
                        app.on_sampler(SamplerEvent::Sample(next));
                        terminal
                            .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                            .unwrap();
                    },
                    criterion::BatchSize::PerIteration,
                )
            },
        );
    }
    // The detail pane charts 5 minutes of history.
    let mut app = app(500, 301);
    app.on_key(Key::Enter);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    c.bench_function(
        "interface detail frame, 300 samples of 500 interfaces, 200x60",
        |b| {
            b.iter(|| {
                terminal
                    .draw(|f| netlens::ui::draw(f, black_box(&mut app)))
                    .unwrap();
            })
        },
    );
}

criterion_group!(benches, frames);
criterion_main!(benches);
