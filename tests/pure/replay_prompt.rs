//! The replay view's prompts and links: `t` with a bad time says so, `+30s`
//! lands on the sample nearest that time, the DNS tab does not offer probes
//! (nothing is probed in replay), `x` on a socket jumps to its flow, and the
//! Load form's field editor keeps the replay keys typed into it.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::model::Sample;
use netlens::model::sockets::{Proto, SocketSample};
use netlens::record::format::Meta;
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use netlens::record::writer::Writer;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;
use std::time::Duration;

/// 2024-01-01 10:00:00 UTC.
const T0: f64 = 1_704_103_200.0;

/// Samples a second apart, each a few milliseconds late by a varying
/// amount, as a real sampler's are.
fn sample(i: u64) -> Sample {
    let socket = SocketSample {
        proto: Proto::Tcp,
        state: 1,
        local: "198.18.0.1:40000".parse().unwrap(),
        peer: "198.18.0.2:443".parse().unwrap(),
        recv_q: 0,
        send_q: 0,
        uid: 0,
        inode: 7,
        users: Default::default(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
        limits: None,
    };
    Sample {
        t: T0 + i as f64 + 0.004 + (i % 7) as f64 * 0.001,
        mono: 100.0 + i as f64 + 0.004 + (i % 7) as f64 * 0.001,
        netns: "demo".into(),
        sockets: vec![socket].into(),
        ..Default::default()
    }
}

fn recording(name: &str) -> PathBuf {
    let dir = crate::common::scratch_dir("replay-prompt");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let meta = Meta {
        interval: 1.0,
        netns: "demo".into(),
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 0..120 {
        writer.write_sample(&mut sample(i)).unwrap();
    }
    writer.finish().unwrap();
    path
}

fn replay_app(name: &str) -> App {
    let mut player = Player::new(Reader::open(&recording(name)).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), false);
    app.start_replay(player);
    app
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn type_time(app: &mut App, text: &str) {
    app.on_key(Key::Char('t'));
    for c in text.chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
}

fn shown_second(app: &App) -> f64 {
    (app.shown().1.unwrap().t - T0).floor()
}

#[test]
fn a_bad_time_is_an_error_and_offsets_land_on_the_nearest_sample() {
    let mut app = replay_app("times.nlrec");
    type_time(&mut app, "garbage");
    let shown = screen(&mut app);
    assert!(shown.contains("'garbage' is not a time"), "{shown}");
    assert_eq!(shown_second(&app), 0.0);
    type_time(&mut app, "+30s");
    assert_eq!(shown_second(&app), 30.0, "+30s from 00:00 is 00:30");
    type_time(&mut app, "-10s");
    assert_eq!(shown_second(&app), 20.0);
    type_time(&mut app, "99999999999999999999s");
    assert!(screen(&mut app).contains("too long"));
    assert_eq!(shown_second(&app), 20.0);
}

#[test]
fn the_dns_tab_in_replay_offers_no_probes() {
    let mut app = replay_app("dns.nlrec");
    app.on_key(Key::Char('5'));
    assert_eq!(app.tab, Tab::Dns);
    let shown = screen(&mut app);
    assert!(!shown.contains("n adds a probe"), "{shown}");
    assert!(shown.contains("no probes in replay"), "{shown}");
}

#[test]
fn x_on_a_socket_jumps_to_its_flow_in_replay() {
    let mut app = replay_app("link.nlrec");
    app.on_key(Key::Char('2'));
    assert_eq!(app.tab, Tab::Sockets);
    assert!(app.on_key(Key::Char('x')), "x did something");
    assert_eq!(app.tab, Tab::Flows);
    assert_eq!(
        app.flows.filter,
        "proto:tcp host:198.18.0.1:40000 host:198.18.0.2:443"
    );
    // No packets in this recording: the Flows tab says why it is empty.
    let message = app.flows.message.clone().unwrap();
    assert!(message.contains("no packets"), "{message}");
}

/// The Load form's field editor takes every key, in replay too: `t`, `-`
/// and `[` typed into a target are text, not the replay's time keys.
#[test]
fn the_load_form_keeps_typed_replay_keys_in_replay() {
    let mut app = replay_app("load-form.nlrec");
    app.on_key(Key::Char('7'));
    assert_eq!(app.tab, Tab::Load);
    app.on_key(Key::Down);
    app.on_key(Key::Enter);
    let before = app
        .load
        .editing
        .clone()
        .expect("the target field is edited");
    let second = shown_second(&app);
    for c in "t-[".chars() {
        app.on_key(Key::Char(c));
    }
    assert_eq!(app.load.editing, Some(format!("{before}t-[")));
    assert_eq!(shown_second(&app), second, "the replay did not move");
    app.on_key(Key::Esc);
    assert!(app.load.editing.is_none());
}
