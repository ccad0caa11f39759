//! The replay UI: the same views fed by a recording, with the timeline bar;
//! keys move in time; rates equal those computed from the recorded pairs.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::model::{InterfaceSample, LinkCounters, Sample};
use netlens::record::format::Meta;
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
    let dir = crate::common::scratch_dir("replay-ui");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let meta = Meta {
        interval: 1.0,
        netns: "demo".into(),
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 0..n {
        writer.write_sample(&mut sample(i)).unwrap();
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
    // Speed: doubles and halves within 0.25x-4096x.
    for _ in 0..14 {
        press(&mut app, Key::Char('+'));
    }
    assert_eq!(app.replay.as_ref().unwrap().speed, 4096.0);
    for _ in 0..16 {
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

#[test]
fn playing_far_behind_skips_to_the_sample_due_now() {
    let mut app = replay_app("skip.nlrec");
    let start = Instant::now();
    app.on_key(Key::Char(' '));
    for _ in 0..10 {
        app.on_key(Key::Char('+'));
    }
    assert_eq!(app.replay.as_ref().unwrap().speed, 1024.0);
    // Sample 1 is due 1/1024 s after the start.
    let due = app.replay_deadline(start).unwrap();
    assert_eq!(app.history.len(), 1);
    // 100 ms later 102.4 more recorded seconds are due: more than one
    // wake-up applies one by one, so it goes straight to sample 103.
    let late = due + Duration::from_millis(100);
    assert!(app.replay_tick(late));
    assert_eq!(shown_t(&app), 103.0);
    assert_eq!(app.history.len(), 2, "the samples skipped are not applied");
    // The schedule goes on from there: sample 104 at 104/1024 s.
    let next = app.replay_deadline(late).unwrap() - start;
    let expected = Duration::from_secs_f64(104.0 / 1024.0);
    assert!(
        next.abs_diff(expected) < Duration::from_micros(5),
        "{next:?}"
    );
    // A few due at once are still applied one by one (the rates between
    // them as recorded).
    assert!(app.replay_tick(start + Duration::from_secs_f64(110.5 / 1024.0)));
    assert_eq!(shown_t(&app), 110.0);
    assert_eq!(app.history.len(), 9);
}

/// At 3600x over several minute-long segments (a frame every 50 ms of a
/// virtual clock), playing crosses every segment boundary and reaches the
/// end: an hour of recording per second, so 7,200 samples in about 2 s.
#[test]
fn playing_at_3600x_crosses_segments_to_the_end() {
    let mut player = Player::new(Reader::open(&recording("fast.nlrec", 7200)).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(5), true);
    app.start_replay(player);
    app.on_key(Key::Char(' '));
    for _ in 0..12 {
        app.on_key(Key::Char('+'));
    }
    assert_eq!(app.replay.as_ref().unwrap().speed, 4096.0);
    let mut now = Instant::now();
    let mut seen = vec![shown_t(&app)];
    for _ in 0..200 {
        now += Duration::from_millis(50);
        if app.replay_deadline(now).is_some_and(|due| due <= now) {
            app.replay_tick(now);
        }
        seen.push(shown_t(&app));
        if !app.replay.as_ref().unwrap().playing {
            break;
        }
    }
    assert_eq!(shown_t(&app), 7199.0, "reached the end: {seen:?}");
    assert!(!app.replay.as_ref().unwrap().playing);
    // Each 50 ms frame moved about 205 recorded seconds on.
    assert!(seen.len() < 60, "{} frames: {seen:?}", seen.len());
}

/// An Ethernet/IPv4/TCP frame from 198.18.0.1:40000 to 198.18.0.2:80 with
/// `payload` bytes of data at sequence number `seq`.
fn tcp_frame(seq: u32, payload: usize) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let total = (20 + 20 + payload) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ]);
    f.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2]);
    f.extend_from_slice(&40_000u16.to_be_bytes());
    f.extend_from_slice(&80u16.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&1u32.to_be_bytes());
    f.extend_from_slice(&[0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    f.extend(std::iter::repeat_n(b'a', payload));
    f
}

/// 150 samples, each with the flow's counters and the two packets sent in
/// its second (sequence numbers 1000 * i and 1000 * i + 100).
fn recording_with_packets(name: &str) -> PathBuf {
    use netlens::capture::live::{PacketBatch, RawPacket};
    use netlens::model::capture::{CaptureSample, FlowSample};
    use netlens::packet::format::Timestamp;
    use netlens::record::format::Stream;
    use netlens::record::packets;
    let dir = crate::common::scratch_dir("replay-ui");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let meta = Meta {
        interval: 1.0,
        netns: "demo".into(),
        capture: true,
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 0..150u64 {
        let mut s = sample(i);
        s.capture = Some(CaptureSample {
            active: true,
            iface: "any".into(),
            packets: 2 * (i + 1),
            bytes: 2 * (i + 1) * 154,
            flows_active: 1,
            flows: vec![
                FlowSample {
                    proto: "tcp".into(),
                    src: "198.18.0.1:40000".into(),
                    dst: "198.18.0.2:80".into(),
                    packets: 2 * (i + 1),
                    bytes: 2 * (i + 1) * 154,
                    state: "ESTABLISHED".into(),
                    first_seen: T0,
                    last_seen: T0 + i as f64,
                    ..Default::default()
                }
                .into(),
            ],
            ..Default::default()
        });
        writer.write_sample(&mut s).unwrap();
        let packet = |n: u32| RawPacket {
            ts: Timestamp {
                sec: T0 as i64 + i as i64,
                frac: n * 1000,
                nanos: false,
            },
            orig_len: 154,
            data: tcp_frame(1000 * i as u32 + 100 * n, 100),
            ifindex: 0,
        };
        let batch = PacketBatch {
            linktype: 1,
            skipped: 0,
            packets: vec![packet(0), packet(1)],
        };
        writer
            .write_record(
                Stream::Packets,
                s.t,
                s.mono,
                &packets::encode_headers(&batch),
            )
            .unwrap();
    }
    writer.finish().unwrap();
    path
}

fn packet_lines(app: &App) -> Vec<String> {
    app.flows.packets.iter().map(|p| p.line.clone()).collect()
}

#[test]
fn the_flows_tab_shows_the_recorded_packets_and_rebuilds_on_seek() {
    let path = recording_with_packets("packets.nlrec");
    let mut player = Player::new(Reader::open(&path).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    app.start_replay(player);
    // The first sample's packets, printed as live prints them.
    let lines = packet_lines(&app);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("198.18.0.1.40000 > 198.18.0.2.80: Flags [P.]"),
        "{lines:?}"
    );
    assert!(app.on_key(Key::Right));
    assert!(app.on_key(Key::Right));
    assert_eq!(packet_lines(&app).len(), 6);
    // The flow table of the replayed capture was fed the same packets.
    let fed = app.flows.capture.as_ref().unwrap().summary();
    assert_eq!((fed.packets, fed.flows_active), (6, 1));
    let screen = format!("{:?}", render(&mut app, 100, 30).backend());
    assert!(
        screen.contains("198.18.0.1.40000 > 198.18.0.2.80"),
        "{screen}"
    );
    assert!(
        screen.contains("198.18.0.1:40000 > 198.18.0.2:80"),
        "{screen}"
    );
    assert!(!screen.contains("no packets yet"), "{screen}");

    // Seeking rebuilds from the packets segment's keyframe (second 60).
    app.jump_to_text("10:01:28");
    app.on_key(Key::Right);
    app.on_key(Key::Right);
    let stepped = packet_lines(&app);
    assert_eq!(stepped.len(), 2 * 31, "seconds 60 to 90");
    app.jump_to_text("10:01:30");
    assert_eq!(shown_t(&app), 90.0);
    assert_eq!(
        packet_lines(&app),
        stepped,
        "a seek shows what stepping showed"
    );
    let fed = app.flows.capture.as_ref().unwrap().summary();
    assert_eq!(fed.packets, 62);
    // Back in time too.
    app.on_key(Key::Left);
    assert_eq!(packet_lines(&app).len(), 60);
    app.on_key(Key::Char('g'));
    assert_eq!(packet_lines(&app).len(), 2);
}

#[test]
fn a_recording_without_packets_has_no_replayed_capture() {
    let app = replay_app("nopackets.nlrec");
    assert!(app.flows.capture.is_none());
    assert!(app.flows.packets.is_empty());
}

fn drill_packets(app: &App) -> Vec<u32> {
    let detail = app.flow_detail.as_ref().expect("flow screen open");
    detail.packets.iter().map(|p| p.seq).collect()
}

#[test]
fn a_flow_screen_opened_in_replay_follows_the_cursor_and_rebuilds_on_seek() {
    let path = recording_with_packets("drill.nlrec");
    let mut player = Player::new(Reader::open(&path).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    app.start_replay(player);
    app.on_key(Key::Right);
    // Enter on the flow: its screen starts with the packets replayed so far.
    assert!(app.on_key(Key::Enter));
    assert!(app.flow_detail_shown());
    assert_eq!(drill_packets(&app), [0, 100, 1000, 1100]);
    let screen = format!("{:?}", render(&mut app, 80, 24).backend());
    assert!(screen.contains("[Summary]"), "{screen}");
    assert!(screen.contains("4 packets"), "{screen}");
    // Stepping feeds the open screen the packets of each new second.
    app.on_key(Key::Right);
    app.on_key(Key::Right);
    assert_eq!(drill_packets(&app).len(), 8);
    assert_eq!(app.flow_detail.as_ref().unwrap().analysis.n, 8);
    // The Packets view prints them as the Flows tab does.
    app.on_key(Key::Char('v'));
    let screen = format!("{:?}", render(&mut app, 100, 30).backend());
    assert!(screen.contains("[Packets]"), "{screen}");
    assert!(screen.contains("Flags [P.]"), "{screen}");

    // A seek starts the screen again from the packets segment's keyframe
    // (second 60), in time order, and keeps the view shown.
    app.jump_to_text("10:01:30");
    assert_eq!(shown_t(&app), 90.0);
    let seqs = drill_packets(&app);
    assert_eq!(seqs.len(), 2 * 31, "seconds 60 to 90");
    assert_eq!(seqs[0], 60_000);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let detail = app.flow_detail.as_ref().unwrap();
    assert_eq!(detail.analysis.n, 62);
    assert_eq!(detail.view, netlens::app::flow_detail::SubView::Timeline);
    // Back in time: the screen holds only what came before the cursor.
    app.on_key(Key::Left);
    assert_eq!(drill_packets(&app).len(), 60);
    assert!(app.on_key(Key::Esc));
    assert!(app.flow_detail.is_none());
}
