//! What the live view's history (five minutes of samples) costs on a host
//! with light traffic: a sample's ~400 counters, its knobs and its 256 top
//! flows, most of them idle ones, are shared with the sample before
//! instead of copied. Printed with `cargo test --profile fast-build --test
//! suite pure::history_memory -- --nocapture`.

use netlens::app::history::History;
use netlens::model::Sample;
use netlens::model::capture::{CaptureSample, FlowSample, SAMPLE_FLOWS};
use netlens::model::sockets::TcpSample;

use crate::common::heap::{self, live};

const SAMPLES: usize = 300;
/// Flows that move each sample; the rest of the 256 are idle.
const MOVING: usize = 6;

/// The sample at second `second`, as a collector and a capture would make
/// it: fresh lists every time, equal where nothing moved.
fn sample(second: usize) -> Sample {
    let counters = (0..400)
        .map(|i| (format!("TcpExt.Counter{i:03}"), (i * second) as u64))
        .collect();
    let knobs = (0..31)
        .map(|i| {
            (
                format!("net.ipv4.knob_{i}"),
                "4096 131072 6291456".to_string(),
            )
        })
        .collect();
    let flows = (0..SAMPLE_FLOWS)
        .map(|i| {
            let moved = if i < MOVING { second } else { 0 };
            FlowSample {
                proto: "tcp".into(),
                src: format!("198.18.0.1:{}", 40_000 + i),
                dst: "198.18.0.2:80".into(),
                packets: (10 + moved) as u64,
                bytes: (1_000 * (1 + moved)) as u64,
                state: "ESTABLISHED".into(),
                first_seen: 1_700_000_000.0,
                last_seen: 1_700_000_000.0 + moved as f64,
                process: Some("nginx".into()),
                ..FlowSample::default()
            }
            .into()
        })
        .collect();
    Sample {
        mono: second as f64,
        tcp: Some(TcpSample {
            counters,
            knobs,
            ..TcpSample::default()
        }),
        capture: Some(CaptureSample {
            flows,
            ..CaptureSample::default()
        }),
        ..Sample::default()
    }
}

#[test]
fn five_minutes_of_samples_share_what_did_not_change() {
    if heap::alone() {
        return;
    }
    let one = {
        let before = live();
        let s = sample(1);
        let bytes = live() - before;
        drop(s);
        bytes
    };
    let mut history = History::default();
    let before = live();
    for second in 0..SAMPLES {
        history.push(sample(second));
    }
    let kept = live() - before;
    let per_sample = kept as f64 / SAMPLES as f64;
    eprintln!(
        "one sample alone {:.1} KB; kept in a history of {SAMPLES}: {:.1} KB a sample",
        one as f64 / 1e3,
        per_sample / 1e3
    );
    assert_eq!(history.len(), SAMPLES);
    // Each sample's own: 400 values, 6 moved flows, 256 pointers, and
    // its findings; copies would be `one` (about 144 KB) each.
    assert!(per_sample < 12_000.0, "{per_sample:.0} B a sample");
    assert!(one > 60_000, "{one} B");
}
