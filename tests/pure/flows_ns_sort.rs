//! The Flows tab's NS column in the `s` sort cycle, drawn at 80x24 (no
//! root: fixed samples through the real App and ui): under `--all-netns`
//! (a sample with several namespaces) `s` reaches NS, ascending, and the
//! rows go by namespace; with one namespace there is no NS column and `s`
//! never sorts by it.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::model::Sample;
use netlens::model::capture::{CaptureSample, FlowSample};
use netlens::model::netns::NamespaceInfo;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

fn flow(netns: u16, src: &str, bytes: u64) -> FlowSample {
    FlowSample {
        proto: "tcp".into(),
        src: src.into(),
        dst: "198.18.9.9:80".into(),
        packets: bytes / 100,
        bytes,
        state: "ESTABLISHED".into(),
        first_seen: 1.0,
        last_seen: 2.0,
        netns,
        ..Default::default()
    }
}

/// Flows in namespaces 1 ("blue") and 2 ("red"), the biggest in red;
/// `many`: the sample lists both (--all-netns), else none.
fn sample(mono: f64, many: bool) -> Sample {
    let info = |id: u16, label: &str| NamespaceInfo {
        id,
        label: label.into(),
        ..Default::default()
    };
    Sample {
        t: 1_700_000_000.0 + mono,
        mono,
        netns: "host".into(),
        namespaces: if many {
            vec![info(0, "host"), info(1, "blue"), info(2, "red")]
        } else {
            Vec::new()
        },
        capture: Some(CaptureSample {
            active: true,
            flows: vec![
                flow(2, "198.18.9.1:1001", 90_000),
                flow(1, "198.18.9.1:1002", 1_000),
                flow(2, "198.18.9.1:1003", 500),
                flow(1, "198.18.9.1:1004", 7_000),
            ]
            .into_iter()
            .map(Into::into)
            .collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn screen(app: &mut App) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..24)
        .map(|y| {
            (0..80)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn app(many: bool) -> App {
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), false);
    for s in [sample(1.0, many), sample(2.0, many)] {
        app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    }
    app
}

/// The title line's sort column and order ("NS▲" of "by NS▲ ───").
fn sorted_by(lines: &[String]) -> String {
    let title = lines
        .iter()
        .find(|l| l.contains(" Flows: "))
        .unwrap_or_else(|| panic!("no title:\n{}", lines.join("\n")));
    let by = title.split(", by ").nth(1).unwrap();
    by.split_whitespace().next().unwrap().to_string()
}

#[test]
fn s_reaches_ns_while_the_table_shows_it() {
    let mut app = app(true);
    let mut lines = screen(&mut app);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("NS ") && l.contains("FLOW")),
        "{}",
        lines.join("\n")
    );
    let mut seen = Vec::new();
    for _ in 0..20 {
        app.on_key(Key::Char('s'));
        lines = screen(&mut app);
        seen.push(sorted_by(&lines));
        if seen.last().unwrap().starts_with("NS") {
            break;
        }
    }
    assert_eq!(seen.last().map(String::as_str), Some("NS▲"), "{seen:?}");
    // The rows by namespace: blue's two, then red's (though red's biggest).
    let rows: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("198.18.9.1:"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(rows, ["blue", "blue", "red", "red"], "{}", lines.join("\n"));
    // The cycle goes on past it, back to BYTES.
    app.on_key(Key::Char('s'));
    assert_eq!(sorted_by(&screen(&mut app)), "BYTES▼");
}

#[test]
fn one_namespace_has_no_ns_column_and_no_ns_sort() {
    let mut app = app(false);
    let lines = screen(&mut app);
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("NS ") && l.contains("FLOW")),
        "{}",
        lines.join("\n")
    );
    for _ in 0..20 {
        app.on_key(Key::Char('s'));
        let by = sorted_by(&screen(&mut app));
        assert!(!by.starts_with("NS"), "{by}");
    }
}
