//! The replay UI: the same views fed by a recording, with the timeline bar;
//! keys move in time; rates equal those computed from the recorded pairs.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::model::{InterfaceSample, LinkCounters, Sample};
use netlens::record::encode;
use netlens::record::format::{Meta, Stream};
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use netlens::record::writer::Writer;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// 2024-01-01 10:00:00 UTC.
const T0: f64 = 1_704_103_200.0;

fn sample(i: u64) -> Sample {
    let iface = |index: u32, name: &str, per_s: u64| InterfaceSample {
        index,
        name: name.into(),
        up: true,
        lower_up: true,
        mtu: 1500,
        addresses: vec![format!("198.18.0.{index}/24")],
        speed_mbps: Some(1000),
        counters: LinkCounters {
            rx_packets: i * per_s,
            tx_packets: i * per_s / 2,
            rx_bytes: i * per_s * 1000,
            tx_bytes: i * per_s * 500,
            // Errors only during the incident, seconds 60-89.
            rx_errors: i.clamp(60, 90) - 60,
            ..Default::default()
        },
        ..Default::default()
    };
    Sample {
        t: T0 + i as f64,
        mono: 100.0 + i as f64,
        netns: "demo".into(),
        interfaces: vec![iface(1, "lo", 10), iface(2, "veth0", 1000 + i)],
        ..Default::default()
    }
}

fn recording(name: &str, n: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netlens-replay-ui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let meta = Meta {
        interval: 1.0,
        netns: "demo".into(),
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 0..n {
        let s = sample(i);
        writer
            .write_record(Stream::Samples, s.t, s.mono, &encode(&s))
            .unwrap();
    }
    writer.finish().unwrap();
    path
}

fn replay_app(name: &str) -> App {
    let mut player = Player::new(Reader::open(&recording(name, 180)).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(5), true);
    app.hostname = "testhost".into();
    app.start_replay(player);
    app
}

fn shown_t(app: &App) -> f64 {
    app.shown().1.unwrap().t - T0
}

fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    terminal
}

#[test]
fn replay_shows_the_timeline_and_the_incident() {
    let mut app = replay_app("timeline.nlrec");
    assert_eq!(
        app.interval,
        Duration::from_secs(1),
        "interval from the file"
    );
    assert_eq!(shown_t(&app), 0.0);
    app.jump_to_text("10:01:10");
    assert_eq!(shown_t(&app), 70.0);
    insta::assert_debug_snapshot!(
        "replay_timeline_100x24",
        render(&mut app, 100, 24).backend()
    );
    let screen = format!("{:?}", render(&mut app, 80, 24).backend());
    assert!(screen.contains("REPLAY ‖ 1x"), "{screen}");
    assert!(
        screen.contains("iface-errors"),
        "the finding shows in replay: {screen}"
    );
}

#[test]
fn keys_move_in_time() {
    let mut app = replay_app("keys.nlrec");
    let press = |app: &mut App, key: Key| assert!(app.on_key(key), "{key:?} did nothing");
    press(&mut app, Key::Right);
    press(&mut app, Key::Right);
    assert_eq!(shown_t(&app), 2.0);
    // Rates come from the neighbouring recorded pair, as live.
    assert_eq!(app.shown().0.unwrap().t - T0, 1.0);
    press(&mut app, Key::Left);
    assert_eq!(shown_t(&app), 1.0);
    press(&mut app, Key::Char(']'));
    assert_eq!(shown_t(&app), 61.0);
    press(&mut app, Key::Char('['));
    assert_eq!(shown_t(&app), 1.0);
    press(&mut app, Key::Char('G'));
    assert_eq!(shown_t(&app), 179.0);
    // The history holds what a live view would: five minutes at most.
    assert_eq!(app.history.len(), 180);
    press(&mut app, Key::Char('g'));
    assert_eq!(shown_t(&app), 0.0);
    press(&mut app, Key::Char('t'));
    for c in "+2m".chars() {
        press(&mut app, Key::Char(c));
    }
    let screen = format!("{:?}", render(&mut app, 100, 24).backend());
    assert!(screen.contains("jump to: +2m"), "{screen}");
    press(&mut app, Key::Enter);
    assert_eq!(shown_t(&app), 120.0);
    press(&mut app, Key::Char('t'));
    for c in "nonsense".chars() {
        press(&mut app, Key::Char(c));
    }
    press(&mut app, Key::Enter);
    assert!(app.error.as_deref().unwrap().contains("not a time"));
    assert_eq!(shown_t(&app), 120.0);
    // Speed: doubles and halves within 0.25x-64x.
    for _ in 0..10 {
        press(&mut app, Key::Char('+'));
    }
    assert_eq!(app.replay.as_ref().unwrap().speed, 64.0);
    for _ in 0..10 {
        press(&mut app, Key::Char('-'));
    }
    assert_eq!(app.replay.as_ref().unwrap().speed, 0.25);
    // Home and End still move in the table, not in time.
    press(&mut app, Key::End);
    assert_eq!(shown_t(&app), 120.0);
}

#[test]
fn playing_follows_the_recorded_schedule() {
    let mut app = replay_app("play.nlrec");
    let start = Instant::now();
    assert_eq!(app.replay_deadline(start), None, "paused at first");
    assert!(app.on_key(Key::Char(' ')));
    for _ in 0..4 {
        app.on_key(Key::Char('+'));
    }
    // 16x: one recorded second is due every 62.5 ms.
    let due = app.replay_deadline(start).unwrap();
    assert_eq!(due - start, Duration::from_secs_f64(1.0 / 16.0));
    assert!(!app.replay_tick(start), "nothing is due yet");
    assert_eq!(shown_t(&app), 0.0);
    // Half a second late: eight samples were due, all are applied.
    assert!(app.replay_tick(start + Duration::from_millis(500)));
    assert_eq!(shown_t(&app), 8.0);
    // At the end, playing stops by itself.
    app.on_key(Key::Char('G'));
    assert_eq!(shown_t(&app), 179.0);
    let mut later = start + Duration::from_secs(61);
    for _ in 0..3 {
        app.replay_tick(later);
        later += Duration::from_secs(1);
    }
    assert_eq!(shown_t(&app), 179.0);
    assert_eq!(app.replay_deadline(later), None);
    assert!(!app.replay.as_ref().unwrap().playing);
}
