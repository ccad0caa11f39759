//! The DNS tab rendered from fixed samples with ratatui's TestBackend, at
//! 80x24 (insta snapshot) and in smaller panes; and the `n` key adding a
//! probe to a real prober aimed at a test server on loopback.

use crate::common;

use common::dns_server::DnsServer;
use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::collect::netns::Target;
use netlens::dns::config::parse_resolv_conf;
use netlens::dns::{DnsMonitor, DnsOptions, DnsResult, DnsSample, Outcome};
use netlens::model::Sample;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

const SERVER: &str = "198.18.0.53:53";
const STUB: &str = "127.0.0.53:53";

fn result(server: &str, name: &str, qtype: &str, ms: Option<f64>, outcome: Outcome) -> DnsResult {
    DnsResult {
        t: 1_700_000_000.0,
        server: server.into(),
        name: name.into(),
        qtype: qtype.into(),
        latency_ms: ms,
        outcome,
        answers: vec![],
    }
}

fn sample(i: u32) -> Sample {
    let mut config = parse_resolv_conf(
        "nameserver 127.0.0.53\nsearch corp.test\noptions timeout:2 attempts:3 rotate\n",
    );
    config.hosts_entries = Some(7);
    config.nsswitch_hosts = Some("files dns".into());
    let slow = 120.0 + f64::from(i) * 40.0;
    let mut probes = vec![
        result(SERVER, "fast.test", "A", Some(0.4), Outcome::Ok),
        result(SERVER, "slow.test", "A", Some(slow), Outcome::Ok),
    ];
    if i % 2 == 1 {
        probes.push(result(
            SERVER,
            "9.0.18.198.in-addr.arpa",
            "PTR",
            None,
            Outcome::Timeout,
        ));
    }
    let passive = vec![
        result(
            STUB,
            "www.corp.test",
            "A",
            Some(3.0 + f64::from(i)),
            Outcome::Ok,
        ),
        result(
            STUB,
            "missing.corp.test",
            "AAAA",
            Some(8.0),
            Outcome::Nxdomain,
        ),
    ];
    Sample {
        t: 1_700_000_000.0 + f64::from(i),
        mono: 100.0 + f64::from(i),
        netns: "host".into(),
        dns: Some(DnsSample {
            config,
            servers: vec![SERVER.into()],
            probe_specs: vec![
                "A fast.test".into(),
                "A slow.test".into(),
                "PTR 9.0.18.198.in-addr.arpa".into(),
            ],
            probes,
            passive,
            passive_on: true,
            timeout_s: 2.0,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn app() -> App {
    let mut app = App::new(Tab::Dns, Duration::from_secs(1), false);
    app.hostname = "testhost".into();
    for i in 0..6 {
        app.on_sampler(SamplerEvent::Sample(Box::new(sample(i))));
    }
    app
}

fn render(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    format!("{}", terminal.backend())
}

#[test]
fn dns_tab_at_80x24() {
    let mut app = app();
    let text = render(&mut app, 80, 24);
    insta::assert_snapshot!(text);
    for needle in [
        "127.0.0.53 (systemd-resolved stub)",
        "search corp.test",
        "timeout 2s attempts 3 ndots 1 rotate",
        "rotate",
        "nsswitch: files dns",
        "/etc/hosts: 7",
        "passive on",
        "198.18.0.53:53",
        "probe",
        "wire",
        "latency",
        "timeline",
        "slowest:",
        "A slow.test",
        "failing:",
        "PTR 198.18.0.9 timeout 3/3",
        "NXDOMAIN",
        "PTR: 3 reverse lookups, 3 unanswered",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
}

#[test]
fn selection_moves_to_the_passive_row() {
    let mut app = app();
    app.on_key(Key::Down);
    let text = render(&mut app, 80, 24);
    assert_eq!(app.dns.selected, 1);
    // The passive row has a histogram but no probe timeline.
    assert!(!text.contains("timeline"), "{text}");
    assert!(text.contains("≤5ms"), "{text}");
}

#[test]
fn dns_tab_degrades_in_small_panes() {
    let mut app = app();
    for (w, h) in [(60, 16), (40, 10), (30, 6), (20, 4)] {
        let text = render(&mut app, w, h);
        assert_eq!(text.lines().count(), usize::from(h));
        if h >= 10 {
            assert!(text.contains("198.18.0.53"), "{w}x{h}:\n{text}");
        }
    }
}

#[test]
fn n_adds_a_probe_to_the_prober() {
    let server = DnsServer::start();
    let args = DnsOptions {
        servers: vec![server.addr.to_string()],
        timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let monitor = DnsMonitor::with_config(
        &Target::from_args(None, None),
        &args,
        Duration::from_millis(200),
        parse_resolv_conf(""),
    )
    .unwrap();
    let mut app = App::new(Tab::Dns, Duration::from_secs(1), false);
    app.dns.monitor = Some(monitor);
    app.on_key(Key::Char('n'));
    assert!(render(&mut app, 80, 24).contains("probe (NAME, AAAA:NAME"));
    for c in "MX:x".chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
    assert!(render(&mut app, 80, 24).contains("unknown query type 'MX'"));
    app.on_key(Key::Char('n'));
    for c in "fast.test".chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
    assert!(render(&mut app, 80, 24).contains("probing A fast.test"));
    // The prober asks our server (and only it) within a few rounds.
    let started = std::time::Instant::now();
    let mut results = Vec::new();
    while results.is_empty() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
        let sample = app.dns.monitor.as_ref().unwrap().sample(None);
        assert_eq!(sample.probe_specs, ["A fast.test"]);
        results.extend(sample.probes);
    }
    assert_eq!(results[0].server, server.addr.to_string());
    assert_eq!(results[0].outcome, Outcome::Ok);
    assert_eq!(server.seen()[0], ("fast.test".to_string(), "A".to_string()));
}
