//! Renders the live view from fixed samples with ratatui's TestBackend and
//! compares against insta snapshots.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::model::{Duplex, InterfaceSample, LinkCounters, Sample};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

fn iface(
    index: u32,
    name: &str,
    up: bool,
    lower_up: bool,
    counters: LinkCounters,
) -> InterfaceSample {
    InterfaceSample {
        index,
        name: name.into(),
        kind: (name.starts_with("veth")).then(|| "veth".to_string()),
        up,
        lower_up,
        loopback: name == "lo",
        mtu: if name == "lo" { 65536 } else { 1500 },
        mac: Some(format!("02:00:00:00:00:{index:02x}")),
        addresses: vec![format!("198.18.0.{index}/24")],
        speed_mbps: (name != "lo").then_some(1000),
        duplex: if name == "lo" {
            Duplex::Unknown
        } else {
            Duplex::Full
        },
        counters,
    }
}

fn sample(mono: f64, scale: u64) -> Sample {
    let c = |rx_packets: u64, tx_packets: u64, rx_bytes: u64, tx_bytes: u64| LinkCounters {
        rx_packets: rx_packets * scale,
        tx_packets: tx_packets * scale,
        rx_bytes: rx_bytes * scale,
        tx_bytes: tx_bytes * scale,
        ..Default::default()
    };
    let mut troubled = c(100, 50, 64_000, 32_000);
    troubled.rx_errors = 3 * scale;
    troubled.rx_dropped = 7 * scale;
    Sample {
        t: 1_700_000_000.0 + mono,
        mono,
        netns: "host".into(),
        interfaces: vec![
            iface(1, "lo", true, true, c(20, 20, 2_000, 2_000)),
            // 110 MB/s on 1 Gb/s: 88 % busy.
            iface(
                2,
                "eth0",
                true,
                true,
                c(80_000, 40_000, 110_000_000, 2_600_000),
            ),
            iface(3, "veth0", true, false, c(0, 0, 0, 0)),
            iface(4, "wlan0", true, true, troubled),
        ],
    }
}

fn app_with_samples() -> App {
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    for (mono, scale) in [(100.0, 1), (101.0, 2)] {
        app.on_sampler(SamplerEvent::Sample(Box::new(sample(mono, scale))));
    }
    app
}

fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    terminal
}

#[test]
fn interfaces_tab_80x24() {
    let mut app = app_with_samples();
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn interfaces_tab_wide_shows_every_column() {
    let mut app = app_with_samples();
    insta::assert_snapshot!(render(&mut app, 130, 12).backend());
}

#[test]
fn sort_by_next_column_descending() {
    let mut app = app_with_samples();
    // IFACE -> STATE -> rxpck/s; numbers sort biggest first.
    app.on_key(Key::Char('s'));
    app.on_key(Key::Char('s'));
    let text = format!("{}", render(&mut app, 80, 12).backend());
    let order: Vec<&str> = text
        .lines()
        .skip(4)
        .filter_map(|line| line.trim_matches('"').split_whitespace().next())
        .take(4)
        .collect();
    assert_eq!(order, ["eth0", "wlan0", "lo", "veth0"], "{text}");
    assert!(text.contains("rxpck/s▼"), "{text}");
}

#[test]
fn filter_keeps_matching_rows() {
    let mut app = app_with_samples();
    for key in [Key::Char('/'), Key::Char('w'), Key::Char('l'), Key::Enter] {
        app.on_key(key);
    }
    let text = format!("{}", render(&mut app, 80, 12).backend());
    assert!(text.contains("wlan0") && !text.contains("eth0 "), "{text}");
    assert!(text.contains("[filter: wl]"), "{text}");
    app.on_key(Key::Esc);
    let text = format!("{}", render(&mut app, 80, 12).backend());
    assert!(text.contains("eth0"), "{text}");
}

#[test]
fn detail_pane_of_selected_interface() {
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    // Two minutes of traffic that ramps up: the charts have a shape.
    let mut total = 0;
    for second in 0..=120u64 {
        total += 1 + second / 10;
        app.on_sampler(SamplerEvent::Sample(Box::new(sample(second as f64, total))));
    }
    app.on_key(Key::Char('G')); // wlan0, last by name: traffic and errors
    app.on_key(Key::Enter);
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
    app.on_key(Key::Esc);
    assert!(!app.interfaces.detail);
}

#[test]
fn help_overlay_lists_the_keymap() {
    let mut app = app_with_samples();
    app.on_key(Key::F(1));
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn unbuilt_tab_says_so() {
    let mut app = app_with_samples();
    app.on_key(Key::Char('6'));
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(text.contains("Flows: not built yet"), "{text}");
    assert!(text.contains("tcpdump -n -i any"), "{text}");
}

#[test]
fn paused_view_stays_on_its_sample() {
    let mut app = app_with_samples();
    app.on_key(Key::Char('p'));
    let before = format!("{}", render(&mut app, 80, 24).backend());
    assert!(before.contains("PAUSED"));
    app.on_sampler(SamplerEvent::Sample(Box::new(sample(102.0, 50))));
    let after = format!("{}", render(&mut app, 80, 24).backend());
    assert_eq!(before, after);
    app.on_key(Key::Char(' '));
    let live = format!("{}", render(&mut app, 80, 24).backend());
    assert_ne!(before, live);
}

#[test]
fn click_selects_tab_and_row() {
    let mut app = app_with_samples();
    render(&mut app, 80, 24);
    // Row 4 is the second data row (header, findings, tabs, table header).
    assert!(app.on_click(2, 5));
    assert_eq!(app.interfaces.selected.as_deref(), Some("lo"));
    // "2 Sockets" sits after " 1 Interfaces │".
    assert!(app.on_click(18, 2));
    assert_eq!(app.tab, Tab::Sockets);
}

#[test]
fn no_color_keeps_selection_visible() {
    let mut app = app_with_samples();
    app.color = false;
    let terminal = render(&mut app, 80, 24);
    let buffer = terminal.backend().buffer();
    let mut reversed_row = None;
    let mut any_color = false;
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            let cell = &buffer[(x, y)];
            if cell.fg != ratatui::style::Color::Reset || cell.bg != ratatui::style::Color::Reset {
                any_color = true;
            }
            if y > 3 && cell.modifier.contains(ratatui::style::Modifier::REVERSED) {
                reversed_row.get_or_insert(y);
            }
        }
    }
    assert!(!any_color, "no colour may be used with NO_COLOR");
    assert_eq!(
        reversed_row,
        Some(4),
        "the selected row is shown in reverse video"
    );
}

#[test]
fn every_size_down_to_tiny_renders_without_panic() {
    for tab_key in ['1', '2', '7'] {
        for detail in [false, true] {
            for help in [false, true] {
                let mut app = app_with_samples();
                app.on_key(Key::Char(tab_key));
                if detail {
                    app.on_key(Key::Enter);
                }
                if help {
                    app.on_key(Key::Char('?'));
                }
                let widths = (1..=24).chain([30, 40, 60, 79, 80, 81, 130]);
                for width in widths {
                    for height in (1..=12).chain([20, 24, 26]) {
                        render(&mut app, width, height);
                    }
                }
            }
        }
    }
}

#[test]
fn findings_line_names_the_worst() {
    let mut app = app_with_samples();
    let text = format!("{}", render(&mut app, 100, 24).backend());
    assert!(text.contains("WARN iface-errors: wlan0"), "{text}");
    assert!(text.contains("(+1 more)"), "{text}");
}

mod load_tab {
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
        type_field(&mut app, "1s");
        app.on_key(Key::Char('r'));
        assert!(app.load.running.is_some(), "{:?}", app.load.error);
        pump(&mut app, &mut events, Duration::from_millis(600));
        let text = format!("{}", render(&mut app, 80, 24).backend());
        assert!(text.contains("LOAD tcp"), "header shows the run: {text}");
        assert!(text.contains("of 1s"), "gauge: {text}");
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
        assert!(
            stopped.elapsed() < Duration::from_secs(2),
            "stop took {:?}",
            stopped.elapsed()
        );
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
}
