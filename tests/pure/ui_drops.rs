//! The Drops tab rendered from constructed samples with ratatui's
//! TestBackend: at 80x24 (insta snapshot) and in small panes; Enter's
//! detail; `o` and `i` going to the socket and the interface; the no-eBPF
//! line with the counters still shown; a finding's Enter landing on it.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::findings::catalogue;
use netlens::model::Sample;
use netlens::model::drops::{DropRow, DropSocket, DropsSample};
use netlens::model::sockets::{Proto, SocketSample, SocketUser, TcpSample};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

const HOST: u64 = 4026531840;
const OTHER: u64 = 4026532777;

fn row(netns: (u64, &str), reason: &str, location: &str, packets: u64) -> DropRow {
    DropRow {
        netns_inode: netns.0,
        netns: netns.1.into(),
        reason: reason.into(),
        location: location.into(),
        packets,
        ..DropRow::default()
    }
}

fn udp_socket(port: u16, pid: u32, process: &str) -> SocketSample {
    SocketSample {
        proto: Proto::Udp,
        state: 7,
        local: format!("198.18.0.1:{port}").parse().unwrap(),
        peer: "0.0.0.0:0".parse().unwrap(),
        recv_q: 0,
        send_q: 0,
        uid: 0,
        inode: 77,
        users: vec![SocketUser {
            process: process.into(),
            pid,
            fd: 4,
        }]
        .into(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
        limits: None,
    }
}

/// Sample `i` of a host where datagrams hit a closed port at 100/s, a
/// slow reader's socket backlog drops 20/s, a qdisc drops on veth1 at
/// 300/s in another namespace, and sockets close normally.
fn sample(i: u64, unavailable: Option<&str>) -> Sample {
    let host = (HOST, "host");
    let mut backlog = row(host, "SOCKET_BACKLOG", "sk_add_backlog", 20 * i);
    backlog.socket = Some(DropSocket {
        proto: "udp".into(),
        port: 5353,
    });
    let mut qdisc = row(
        (OTHER, "dropsui-ns"),
        "QDISC_DROP",
        "__dev_queue_xmit",
        300 * i,
    );
    qdisc.interface = Some("veth1".into());
    let mut tcp = TcpSample::default();
    tcp.counters.insert("Udp.NoPorts".into(), 100 * i);
    tcp.counters.insert("TcpExt.TCPBacklogDrop".into(), 0);
    tcp.counters.insert("MPTcpExt.MPJoinSynRx".into(), 3 * i);
    Sample {
        t: 1_700_000_000.0 + i as f64,
        mono: i as f64,
        netns: "host".into(),
        tcp: Some(tcp),
        sockets: vec![udp_socket(5353, 812, "avahi-daemon")].into(),
        drops: Some(DropsSample {
            unavailable: unavailable.map(String::from),
            netns_inode: HOST,
            rows: if unavailable.is_some() {
                Vec::new()
            } else {
                vec![
                    row(host, "NO_SOCKET", "__udp4_lib_rcv", 100 * i),
                    backlog,
                    qdisc,
                    row(host, "TCP_CLOSE", "tcp_v4_rcv", 5 * i),
                    row(host, "BRAND_NEW_REASON", "new_fn", 2 * i),
                ]
            },
            lost: 0,
        }),
        ..Default::default()
    }
}

fn app(unavailable: Option<&str>) -> App {
    let mut app = App::new(Tab::Drops, Duration::from_secs(1), false);
    app.hostname = "testhost".into();
    for i in 1..=6 {
        app.on_sampler(SamplerEvent::Sample(Box::new(sample(i, unavailable))));
    }
    app
}

fn text(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
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

#[test]
fn drops_tab_at_80x24_lists_reasons_by_rate_with_sites_and_counters() {
    let mut app = app(None);
    let screen = text(&mut app, 80, 24);
    insta::assert_snapshot!("drops_tab_80x24", screen);
    let lines: Vec<&str> = screen.lines().collect();
    // Rows start with their reason or counter.
    let at = |needle: &str| lines.iter().position(|l| l.starts_with(needle));
    // Busiest first: QDISC_DROP 300/s, NO_SOCKET 100/s, SOCKET_BACKLOG 20/s.
    let (q, n, b) = (
        at("QDISC_DROP").unwrap(),
        at("NO_SOCKET").unwrap(),
        at("SOCKET_BACKLOG").unwrap(),
    );
    assert!(q < n && n < b, "{screen}");
    assert!(
        lines[q].contains("300.0") && lines[q].contains("veth1"),
        "{screen}"
    );
    assert!(
        lines[q].contains("dropsui"),
        "two namespaces: a NETNS column\n{screen}"
    );
    assert!(
        lines[n].contains("100.0") && lines[n].contains("__udp4_lib_rcv"),
        "{screen}"
    );
    assert!(lines[b].contains("udp:5353 (812/"), "{screen}");
    // A reason the catalogue lacks is shown by its name.
    let unknown = at("BRAND_NEW_REASON").unwrap();
    assert!(lines[unknown].contains("2.0"), "{screen}");
    // The selected (top) row's meaning whole under the table.
    let meaning = catalogue::reason("QDISC_DROP").unwrap().meaning;
    assert!(
        screen.contains(&format!("QDISC_DROP: {meaning}")),
        "{screen}"
    );
    // The counters that moved, the unknown one marked.
    assert!(screen.contains("counters that moved"), "{screen}");
    let noports = at("Udp.NoPorts").unwrap();
    assert!(lines[noports].contains("100.0"), "{screen}");
    let mptcp = at("MPTcpExt.MPJoinSynRx").unwrap();
    assert!(lines[mptcp].contains("not in the catalogue"), "{screen}");
    assert!(at("TCPBacklogDrop").is_none(), "did not move\n{screen}");
    assert!(screen.contains("8 Drops"), "the tab bar fits\n{screen}");
    // Selecting the unknown reason says so under the table.
    for _ in 0..4 {
        app.on_key(Key::Down);
    }
    let screen = text(&mut app, 80, 24);
    assert!(
        screen.contains("BRAND_NEW_REASON: not in the catalogue"),
        "{screen}"
    );
}

#[test]
fn a_small_pane_still_shows_the_busiest_reason() {
    let mut app = app(None);
    for (width, height) in [(40, 11), (30, 8), (60, 12)] {
        let screen = text(&mut app, width, height);
        assert!(screen.contains("QDISC_DROP"), "{width}x{height}\n{screen}");
        assert!(screen.contains("300.0"), "{width}x{height}\n{screen}");
    }
    for width in 1..=24 {
        for height in 1..=12 {
            text(&mut app, width, height);
        }
    }
    app.on_key(Key::Enter);
    for width in 1..=40 {
        for height in 1..=12 {
            text(&mut app, width, height);
        }
    }
}

#[test]
fn enter_shows_meaning_fix_sites_and_related_counters_and_jumps() {
    let mut app = app(None);
    app.on_key(Key::Down); // NO_SOCKET
    app.on_key(Key::Enter);
    let screen = text(&mut app, 80, 24);
    let r = catalogue::reason("NO_SOCKET").unwrap();
    assert!(
        screen.contains("NO_SOCKET (SKB_DROP_REASON_NO_SOCKET) warn"),
        "{screen}"
    );
    assert!(
        screen.contains("meaning: no socket for the packet"),
        "{screen}"
    );
    assert!(screen.contains("fix:"), "{screen}");
    assert!(screen.contains(&r.fix[..30]), "{screen}");
    assert!(screen.contains("related counters"), "{screen}");
    let noports = screen.lines().find(|l| l.contains("Udp.NoPorts ")).unwrap();
    assert!(noports.contains("100.0/s"), "{screen}");
    assert!(screen.contains("at __udp4_lib_rcv"), "{screen}");
    app.on_key(Key::Esc);
    // SOCKET_BACKLOG's socket: `o` opens Sockets filtered on its port.
    app.on_key(Key::Down);
    app.on_key(Key::Enter);
    let screen = text(&mut app, 80, 24);
    assert!(
        screen.contains("o socket udp:5353 (812/avahi-daemon)"),
        "{screen}"
    );
    app.on_key(Key::Char('o'));
    assert_eq!(app.tab, Tab::Sockets);
    assert_eq!(app.sockets.filter, "proto:udp sport:5353");
    // QDISC_DROP's interface: `i` opens Interfaces on veth1.
    app.on_key(Key::Char('8'));
    app.on_key(Key::Home);
    app.on_key(Key::Char('i'));
    assert_eq!(app.tab, Tab::Interfaces);
    assert_eq!(
        app.interfaces.selected.as_ref().map(|s| s.name.as_str()),
        Some("veth1")
    );
}

#[test]
fn without_ebpf_the_tab_says_why_and_still_shows_the_counters() {
    let mut app = app(Some("needs CAP_BPF and CAP_PERFMON (run as root)"));
    let screen = text(&mut app, 80, 24);
    assert!(
        screen.contains("drop reasons unavailable: needs CAP_BPF and CAP_PERFMON (run as root)"),
        "{screen}"
    );
    let noports = screen.lines().find(|l| l.contains("Udp.NoPorts")).unwrap();
    assert!(noports.contains("100.0"), "{screen}");
    // The counter's own finding speaks when no reason does.
    assert!(
        screen.contains("counter:Udp.NoPorts") || screen.contains("Udp.NoPorts 100.0/s"),
        "{screen}"
    );
}

#[test]
fn a_drop_finding_leads_to_its_row() {
    let mut app = app(None);
    app.on_key(Key::Char('1'));
    app.refresh_derived();
    let ids: Vec<&str> = app.derived.findings.iter().map(|f| f.id).collect();
    assert!(ids.contains(&"drop:NO_SOCKET"), "{ids:?}");
    assert!(ids.contains(&"drop:unknown"), "{ids:?}");
    assert!(
        !ids.contains(&"counter:Udp.NoPorts"),
        "suppressed by NO_SOCKET: {ids:?}"
    );
    // QDISC_DROP is another namespace's: not a finding of the host view.
    assert!(!ids.contains(&"drop:QDISC_DROP"), "{ids:?}");
    app.on_key(Key::Char('!'));
    let at = app
        .derived
        .findings
        .iter()
        .position(|f| f.id == "drop:NO_SOCKET")
        .unwrap();
    for _ in 0..at {
        app.on_key(Key::Down);
    }
    app.on_key(Key::Enter);
    assert_eq!(app.tab, Tab::Drops);
    let screen = text(&mut app, 80, 24);
    let meaning = catalogue::reason("NO_SOCKET").unwrap().meaning;
    assert!(
        screen.contains(&format!("NO_SOCKET: {}", &meaning[..40])),
        "{screen}"
    );
}

/// A recording of samples with drops replays into the same tab: the same
/// rows, rates, totals, sparklines and counters as live.
#[test]
fn a_replayed_recording_shows_the_same_rows() {
    use netlens::record::format::Meta;
    use netlens::record::player::Player;
    use netlens::record::reader::Reader;
    use netlens::record::writer::Writer;
    let dir = std::env::temp_dir().join(format!("netlens-ui-drops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("drops.nlrec");
    let _ = std::fs::remove_file(&path);
    let meta = Meta {
        interval: 1.0,
        netns: "host".into(),
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for i in 1..=6 {
        writer.write_sample(&mut sample(i, None)).unwrap();
    }
    writer.finish().unwrap();
    let mut live = app(None);
    let mut player = Player::new(Reader::open(&path).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut replay = App::new(Tab::Drops, Duration::from_secs(1), false);
    replay.hostname = "testhost".into();
    replay.start_replay(player);
    replay.on_key(Key::Char('G'));
    let (live_table, replayed) = (
        netlens::app::drops::table(&live.shown_view()),
        netlens::app::drops::table(&replay.shown_view()),
    );
    assert_eq!(replayed.lines.len(), 5, "{replayed:?}");
    assert_eq!(live_table, replayed);
    let rows = |screen: String| -> Vec<String> {
        screen
            .lines()
            .skip_while(|l| !l.starts_with("REASON"))
            .take(7)
            .map(String::from)
            .collect()
    };
    assert_eq!(
        rows(text(&mut live, 80, 24)),
        rows(text(&mut replay, 80, 24))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn drops_the_kernel_could_not_count_are_said() {
    let mut app = App::new(Tab::Drops, Duration::from_secs(1), false);
    for i in 1..=3 {
        let mut s = sample(i, None);
        s.drops.as_mut().unwrap().lost = 42 * i;
        app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    }
    let screen = text(&mut app, 80, 24);
    assert!(
        screen.contains("126 drops not counted (the kernel map was full); QDISC_DROP: "),
        "{screen}"
    );
    // Watching another namespace, the kernel counts only its drops: the
    // note names whose drops went uncounted.
    let mut app = App::new(Tab::Drops, Duration::from_secs(1), false);
    for i in 1..=3 {
        let mut s = sample(i, None);
        s.netns = "blue".into();
        s.drops.as_mut().unwrap().lost = 7 * i;
        app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    }
    let screen = text(&mut app, 100, 24);
    assert!(
        screen.contains("21 drops in blue not counted (the kernel map was full)"),
        "{screen}"
    );
}
