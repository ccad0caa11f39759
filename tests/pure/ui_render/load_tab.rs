//! The Load tab: the form, runs against a real in-process server, pktgen
//! against a scratch directory, confirmation, bad input.

use super::*;
use netlens::app::load::LoadEvent;
use netlens::load::serve::{ServeSpec, Server};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedReceiver;

fn server() -> Server {
    Server::start(
        &ServeSpec {
            bind: "127.0.0.1".parse().unwrap(),
            port: 0,
            delay: Duration::ZERO,
            body: 100,
        },
        Arc::new(|_, _| {}),
    )
    .unwrap()
}

fn load_app() -> (App, UnboundedReceiver<LoadEvent>) {
    let mut app = app_with_samples();
    app.on_key(Key::Char('7'));
    let events = app.load.take_events().unwrap();
    (app, events)
}

/// Types into the selected field: Enter, clear, the text, Enter.
fn type_field(app: &mut App, text: &str) {
    app.on_key(Key::Enter);
    for _ in 0..40 {
        app.on_key(Key::Backspace);
    }
    for c in text.chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
}

/// Feeds the app every event that arrives within `wait`.
fn pump(app: &mut App, events: &mut UnboundedReceiver<LoadEvent>, wait: Duration) -> usize {
    let until = Instant::now() + wait;
    let mut n = 0;
    while Instant::now() < until {
        match events.try_recv() {
            Ok(event) => {
                app.on_load(event);
                n += 1;
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    n
}

/// A scratch directory standing in for /proc/net/pktgen (the real one
/// is not on this kernel), removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("netlens-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The form switched to pktgen (the last kind) with `root` for its files.
fn pktgen_app(root: &std::path::Path) -> (App, UnboundedReceiver<LoadEvent>) {
    let (mut app, events) = load_app();
    app.load.pktgen_root = root.to_path_buf();
    app.on_key(Key::Left);
    assert_eq!(app.load.kind, netlens::app::load::Kind::Pktgen);
    (app, events)
}

#[test]
fn pktgen_form_without_the_module_80x24() {
    let scratch = Scratch::new("no-pktgen");
    let (mut app, _events) = pktgen_app(&scratch.0.join("absent"));
    let text = format!("{}", render(&mut app, 80, 24).backend());
    for needle in [
        "dev",
        "dst-mac",
        "count",
        "size",
        "delay",
        "threads",
        "CONFIG_NET_PKTGEN",
        "modprobe",
        "udp",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
    // r takes the offer: the form becomes udp to the same destination.
    app.on_key(Key::Char('r'));
    assert!(app.load.running.is_none());
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(
        text.contains("‹ udp ›") && text.contains("198.18.0.2:5201"),
        "{text}"
    );
    assert!(text.contains("pktgen is not available here"), "{text}");
}

#[test]
fn pktgen_runs_from_the_tab_against_a_scratch_directory() {
    eprintln!(
        "NOTE: the kernel's pktgen is not available here; the tab drives a scratch \
         directory standing in for /proc/net/pktgen"
    );
    let scratch = Scratch::new("pktgen-tab");
    for file in ["pgctrl", "kpktgend_0"] {
        std::fs::write(scratch.0.join(file), "").unwrap();
    }
    let result = "Result: OK: 1310(c1220+d88) usec, 1000 (60byte,0frags)\n  \
                  763358pps 366Mb/sec (366380160bps) errors: 0\n";
    std::fs::write(scratch.0.join("nlv0"), result).unwrap();
    let (mut app, mut events) = pktgen_app(&scratch.0);
    app.on_key(Key::Down);
    type_field(&mut app, "nlv0");
    for _ in 0..3 {
        app.on_key(Key::Down);
    }
    type_field(&mut app, "1000");
    app.on_key(Key::Char('r'));
    // 198.18.0.2 is not loopback: the tab asks first.
    assert!(app.load.confirm.is_some(), "{:?}", app.load.error);
    app.on_key(Key::Char('y'));
    assert!(app.load.running.is_some(), "{:?}", app.load.error);
    let deadline = Instant::now() + Duration::from_secs(10);
    while app.load.running.is_some() && Instant::now() < deadline {
        pump(&mut app, &mut events, Duration::from_millis(50));
    }
    let read = |f: &str| std::fs::read_to_string(scratch.0.join(f)).unwrap();
    assert_eq!(read("kpktgend_0"), "rem_device_all\nadd_device nlv0\n");
    assert_eq!(
        read("nlv0"),
        format!(
            "{result}count 1000\nclone_skb 0\npkt_size 60\ndelay 0\ndst 198.18.0.2\n\
             dst_mac 02:00:00:00:00:02\n"
        )
    );
    assert_eq!(read("pgctrl"), "start\n");
    let past = app.load.runs.first().expect("the run is listed");
    assert!(past.ok, "{}", past.text);
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(text.contains("pktgen nlv0 198.18.0.2"), "{text}");
}

#[test]
fn load_tab_form_80x24() {
    let (mut app, _events) = load_app();
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn a_run_shows_progress_then_its_result_and_stays_listed() {
    let server = server();
    let (mut app, mut events) = load_app();
    app.on_key(Key::Down);
    type_field(&mut app, &server.addr.to_string());
    app.on_key(Key::Down);
    type_field(&mut app, "3s");
    app.on_key(Key::Char('r'));
    assert!(app.load.running.is_some(), "{:?}", app.load.error);
    // Wait for the first interval's report (not a fixed time: a loaded
    // machine reports later), while the run still goes.
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while app.load.running.is_some() && !text.contains("bits/s max") && Instant::now() < deadline {
        pump(&mut app, &mut events, Duration::from_millis(100));
        text = format!("{}", render(&mut app, 80, 24).backend());
    }
    assert!(text.contains("LOAD tcp"), "header shows the run: {text}");
    assert!(text.contains("of 3s"), "gauge: {text}");
    assert!(text.contains("bits/s max"), "chart: {text}");
    // The run ends by itself.
    let deadline = Instant::now() + Duration::from_secs(10);
    while app.load.running.is_some() && Instant::now() < deadline {
        pump(&mut app, &mut events, Duration::from_millis(100));
    }
    assert!(app.load.running.is_none());
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(
        text.contains("sender") && text.contains("receiver"),
        "{text}"
    );
    assert!(text.contains("#1"), "listed: {text}");
    // The other tabs see it too: the header names no load now.
    assert!(!text.contains("LOAD tcp"));

    // A second run, stopped at once with s.
    type_field(&mut app, "60s");
    app.on_key(Key::Char('r'));
    pump(&mut app, &mut events, Duration::from_millis(300));
    app.on_key(Key::Char('s'));
    let stopped = Instant::now();
    while app.load.running.is_some() && stopped.elapsed() < Duration::from_secs(5) {
        pump(&mut app, &mut events, Duration::from_millis(20));
    }
    assert!(app.load.running.is_none(), "s stopped the run");
    assert_eq!(app.load.runs.len(), 2);
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(text.contains("stopped before the end"), "{text}");
    server.stop();
}

#[test]
fn a_target_off_loopback_asks_for_confirmation() {
    let (mut app, _events) = load_app();
    app.on_key(Key::Down);
    type_field(&mut app, "198.18.0.2:5201");
    app.on_key(Key::Char('r'));
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(
        text.contains("Not loopback") && text.contains("198.18.0.2:5201"),
        "{text}"
    );
    assert!(app.load.running.is_none());
    app.on_key(Key::Esc);
    assert!(app.load.confirm.is_none() && app.load.running.is_none());
}

#[test]
fn bad_form_input_is_one_line_not_a_run() {
    let (mut app, _events) = load_app();
    app.on_key(Key::Down);
    app.on_key(Key::Down);
    type_field(&mut app, "soon");
    app.on_key(Key::Char('r'));
    assert!(app.load.running.is_none());
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(text.contains("duration:"), "{text}");
}

#[test]
fn running_and_confirm_states_render_at_every_size() {
    let server = server();
    let (mut app, mut events) = load_app();
    app.on_key(Key::Down);
    type_field(&mut app, &server.addr.to_string());
    app.on_key(Key::Char('r'));
    pump(&mut app, &mut events, Duration::from_millis(600));
    for width in (1..=24).chain([40, 80, 130]) {
        for height in (1..=12).chain([24]) {
            render(&mut app, width, height);
        }
    }
    app.on_key(Key::Esc);
    while app.load.running.is_some() {
        pump(&mut app, &mut events, Duration::from_millis(20));
    }
    type_field(&mut app, "198.18.0.2:5201");
    app.on_key(Key::Char('r'));
    assert!(app.load.confirm.is_some());
    for width in (1..=24).chain([40, 80]) {
        for height in (1..=12).chain([24]) {
            render(&mut app, width, height);
        }
    }
    server.stop();
}
