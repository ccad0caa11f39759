//! What the live view's history (five minutes of samples) costs on a host
//! with light traffic: a sample's ~400 counters, its knobs, its 256 top
//! flows (most of them idle ones), its processes, routes, neighbour counts
//! and queue masks are shared with the sample before instead of copied. Printed with `cargo test --profile fast-build --test
//! suite pure::history_memory -- --nocapture`.

use netlens::app::history::History;
use netlens::model::Sample;
use netlens::model::capture::{CaptureSample, FlowSample, SAMPLE_FLOWS};
use netlens::model::cpu::{CpuSample, NicQueues};
use netlens::model::neigh::{NeighCount, NeighSample};
use netlens::model::processes::ProcessInfo;
use netlens::model::routes::{FamilyRoutes, RoutesSample};
use netlens::model::sockets::TcpSample;

use crate::common::heap::{self, live};

const SAMPLES: usize = 300;
/// Flows that move each sample; the rest of the 256 are idle.
const MOVING: usize = 6;

/// The sample at second `second`, as a collector and a capture would make
/// it: fresh lists every time, equal where nothing moved.
fn sample(second: usize) -> Sample {
    // 16 of them move, 8 in a row (Tcp.InSegs, OutSegs...) and 8 apart.
    let counters = (0..400)
        .map(|i| {
            let moves = (100..108).contains(&i) || i % 50 == 7;
            let value = if moves { i * second } else { i };
            (format!("TcpExt.Counter{i:03}"), value as u64)
        })
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
    let processes = (0..40)
        .map(|pid| ProcessInfo {
            pid,
            command: format!("worker-{pid}"),
            user: "www-data".into(),
            cgroup: Some(format!("/system.slice/worker-{pid}.service")),
            ..ProcessInfo::default()
        })
        .collect();
    let masks = |kind: &str| {
        (0..8)
            .map(|q| (format!("{kind}-{q}"), "00000000,000000ff".to_string()))
            .collect()
    };
    Sample {
        mono: second as f64,
        processes,
        routes: Some(RoutesSample {
            families: ["inet", "inet6"]
                .into_iter()
                .map(|family| FamilyRoutes {
                    family: family.into(),
                    routes: 12,
                    default: Some("default via 198.18.0.254 dev eth0".into()),
                    ..FamilyRoutes::default()
                })
                .collect(),
            ..RoutesSample::default()
        }),
        neighbours: Some(NeighSample {
            entries: (0..20)
                .map(|i| NeighCount {
                    family: "inet".into(),
                    interface: format!("veth{i}"),
                    state: "REACHABLE".into(),
                    count: 3,
                })
                .collect(),
            ..NeighSample::default()
        }),
        cpu: Some(CpuSample {
            knobs: [("net.core.netdev_budget".to_string(), "300".to_string())].into(),
            nics: (0..4)
                .map(|n| NicQueues {
                    name: format!("eth{n}"),
                    rps_cpus: masks("rx"),
                    xps_cpus: masks("tx"),
                    ..NicQueues::default()
                })
                .collect(),
            ..CpuSample::default()
        }),
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
    // Each sample's own: the 10 chunks of values that moved (and pointers
    // to 25), 6 moved flows, 256 pointers, the four NICs' entries and its
    // findings; copies would be `one` (about 170 KB) each.
    assert!(per_sample < 10_000.0, "{per_sample:.0} B a sample");
    assert!(one > 150_000, "{one} B");
}
