//! The Flows tab: capture samples, drops, permission and filter errors,
//! sort, filter, select and freeze.

use super::*;
use netlens::capture::live::{CaptureEvent, CapturedPacket};
use netlens::model::capture::{CaptureSample, FlowSample};
use netlens::packet::format::Timestamp;

fn flow(src: &str, dst: &str, packets: u64, bytes: u64, state: &str) -> FlowSample {
    FlowSample {
        proto: if state == "-" { "udp" } else { "tcp" }.into(),
        src: src.into(),
        dst: dst.into(),
        packets,
        bytes,
        state: state.into(),
        rtt_ms: (state != "-").then_some(0.42),
        retransmits: u64::from(packets > 1000) * 3,
        first_seen: 1_700_000_090.0,
        last_seen: 1_700_000_100.5,
        ..Default::default()
    }
}

pub(super) fn with_capture(mut s: Sample, scale: u64, active: bool) -> Sample {
    s.capture = Some(CaptureSample {
        active,
        error: (!active).then(|| {
            "capture needs CAP_NET_RAW: run as root, or grant it once with \
             `sudo setcap cap_net_raw,cap_net_admin+ep $(which netlens)`"
                .to_string()
        }),
        iface: "any".into(),
        filter: String::new(),
        packets: 2000 * scale,
        bytes: 1_500_000 * scale,
        kernel_received: 2000 * scale,
        kernel_dropped: 12,
        flows_active: 3,
        flows_evicted: 1,
        flows: vec![
            flow(
                "198.18.0.1:40000",
                "198.18.0.2:443",
                1000 * scale + 1,
                1_400_000 * scale,
                "ESTABLISHED",
            ),
            flow(
                "198.18.0.1:40001",
                "198.18.0.2:443",
                10 * scale,
                5_000 * scale,
                "FIN_WAIT",
            ),
            flow(
                "198.18.0.3:5353",
                "198.18.0.2:53",
                4 * scale,
                400 * scale,
                "-",
            ),
        ]
        .into_iter()
        .map(Into::into)
        .collect(),
        ..Default::default()
    });
    s
}

pub(super) fn flows_app(active: bool) -> App {
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    for (mono, scale) in [(100.0, 1), (101.0, 2)] {
        let s = with_capture(sample(mono, scale), scale, active);
        app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    }
    if active {
        let packets = (0..30u32)
            .map(|i| CapturedPacket {
                line: format!(
                    "12:00:{:02}.000001 IP 198.18.0.1.40000 > 198.18.0.2.443: Flags [.], ack {i}, win 502, length 0",
                    i
                ),
                ts: Timestamp::default(),
                orig_len: 54,
                data: vec![0; 54].into(),
                ifindex: 0,
            })
            .collect();
        app.flows.on_capture(CaptureEvent::Packets {
            packets,
            unprinted: 0,
        });
    }
    app
}

fn text(app: &mut App, width: u16, height: u16) -> String {
    format!("{}", render(app, width, height).backend())
}

#[test]
fn flows_tab_80x24() {
    let mut app = flows_app(true);
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn flows_tab_wide_by_host() {
    let mut app = flows_app(true);
    app.on_key(Key::Char('a'));
    let screen = text(&mut app, 130, 24);
    assert!(screen.contains("Flows by host: 2"), "{screen}");
    insta::assert_snapshot!(render(&mut app, 130, 24).backend());
}

#[test]
fn kernel_drops_show_in_header_and_tab() {
    let mut app = flows_app(true);
    let screen = text(&mut app, 100, 24);
    assert!(screen.contains("cap drops 12"), "{screen}");
    assert!(screen.contains("kernel drops 12"), "{screen}");
}

#[test]
fn without_permission_the_tab_says_how_to_grant_it() {
    let mut app = flows_app(false);
    let screen = text(&mut app, 80, 24);
    assert!(screen.contains("needs CAP_NET_RAW"), "{screen}");
    assert!(screen.contains("cap_net_raw,cap_net_admin+ep"), "{screen}");
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn capture_filter_error_is_shown_with_its_position() {
    let mut app = flows_app(true);
    app.on_key(Key::Char('f'));
    for c in "tcp and (port 80".chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
    let screen = text(&mut app, 80, 24);
    assert!(screen.contains("error at character"), "{screen}");
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
    // Esc leaves the editor; keys act on the tab again.
    app.on_key(Key::Esc);
    assert!(app.flows.capture_edit.is_none());
    app.on_key(Key::Char('F'));
    assert!(app.flows.frozen_at.is_some());
}

#[test]
fn sort_filter_select_and_freeze() {
    let mut app = flows_app(true);
    app.on_key(Key::Char('/'));
    for c in "udp".chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
    let rows = app.flow_rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].proto, "udp");
    app.on_key(Key::Esc);
    app.on_key(Key::Char('s'));
    app.on_key(Key::Char('I'));
    let rows = app.flow_rows();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.windows(2)
            .all(|w| w[0].bytes_per_s <= w[1].bytes_per_s)
    );
    app.on_key(Key::Down);
    assert_eq!(app.flows.selected, 1);
    // Packets that arrive while frozen do not move the list.
    app.on_key(Key::Char('F'));
    let before = text(&mut app, 80, 24);
    app.flows.on_capture(CaptureEvent::Packets {
        packets: vec![CapturedPacket {
            line: "NEW PACKET".into(),
            ts: Timestamp::default(),
            orig_len: 60,
            data: vec![0; 60].into(),
            ifindex: 0,
        }],
        unprinted: 0,
    });
    assert_eq!(before, text(&mut app, 80, 24));
    app.on_key(Key::Char('F'));
    assert!(text(&mut app, 80, 24).contains("NEW PACKET"));
}

#[test]
fn every_size_renders_without_panic() {
    for active in [false, true] {
        for mode in 0..4 {
            let mut app = flows_app(active);
            match mode {
                1 => {
                    app.on_key(Key::Char('a'));
                }
                2 => {
                    app.on_key(Key::Char('f'));
                    app.on_key(Key::Char('('));
                    app.on_key(Key::Enter);
                }
                3 => {
                    app.on_key(Key::Char('?'));
                }
                _ => {}
            }
            for width in (1..=24).chain([30, 40, 60, 79, 80, 81, 130]) {
                for height in (1..=12).chain([20, 24, 26]) {
                    render(&mut app, width, height);
                }
            }
        }
    }
}

/// Two servers' cumulative times at samples 100 and 101 s: a slow local
/// one (12 more requests of ~250 ms) and a fast remote one.
fn with_responses(mut app: App) -> App {
    use netlens::model::responses::{ResponseSample, bucket_of};
    let server = |name: &str, local: bool, ms: f64, n: u64, rtt: f64| ResponseSample {
        server: name.into(),
        local,
        answered: n,
        sum_ms: ms * n as f64,
        buckets: vec![(bucket_of(ms), n, ms * n as f64)],
        rtt_count: 1,
        rtt_sum_ms: rtt,
        statuses: vec![(200, n)],
        slowest: None,
    };
    for (mono, n) in [(102.0, 10), (103.0, 22)] {
        let mut s = with_capture(sample(mono, 2), 2, true);
        s.capture.as_mut().unwrap().responses = vec![
            server("198.18.150.2:8250", true, 250.4, n, 0.05),
            server("198.18.7.9:443", false, 31.0, 2 * n, 30.0),
        ];
        app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    }
    app
}

#[test]
fn the_servers_grouping_lists_response_percentiles_slowest_first() {
    let mut app = with_responses(flows_app(true));
    for _ in 0..3 {
        app.on_key(Key::Char('a'));
    }
    let screen = text(&mut app, 80, 24);
    assert!(
        screen.contains("Servers: 2, by median response"),
        "{screen}"
    );
    let lines: Vec<&str> = screen.lines().collect();
    let slow = lines
        .iter()
        .position(|l| l.contains("198.18.150.2:8250 "))
        .expect(&screen);
    let fast = lines
        .iter()
        .position(|l| l.contains("198.18.7.9:443~"))
        .expect(&screen);
    assert!(slow < fast, "slowest first:\n{screen}");
    // 12 requests in the second: 12.0/s, all at 250 ms, the same p99.
    assert!(
        lines[slow].contains("12.0  250ms  250ms  250ms 0.05ms  200:22"),
        "{screen}"
    );
    // Elsewhere ("~"): 31 ms of which 30 are the round trip.
    assert!(
        lines[fast].contains("24.0   31ms   31ms   31ms   30ms  200:44"),
        "{screen}"
    );
    // Back to the flows with one more press.
    app.on_key(Key::Char('a'));
    assert!(!text(&mut app, 80, 24).contains("Servers:"));
    // A tiny pane still draws.
    app.on_key(Key::Char('a'));
    app.on_key(Key::Char('a'));
    app.on_key(Key::Char('a'));
    let _ = text(&mut app, 30, 8);
}
