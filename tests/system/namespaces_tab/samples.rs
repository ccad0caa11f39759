//! Without root: the tab drawn at 80x24 (and in a small pane) from fixed
//! samples, Enter scoping the Sockets tab, `u` ending it.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::model::netns::NamespaceInfo;
use netlens::model::sockets::{Proto, SocketSample, TcpSample};
use netlens::model::{InterfaceSample, LinkCounters, Sample};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

fn iface(netns: u16, index: u32, name: &str, link: Option<u32>, rx: u64) -> InterfaceSample {
    InterfaceSample {
        netns,
        index,
        name: name.into(),
        up: true,
        lower_up: true,
        loopback: name == "lo",
        mtu: 1500,
        link_index: link,
        link_netnsid: link.map(|_| 0),
        counters: LinkCounters {
            rx_bytes: rx,
            rx_packets: rx / 1000,
            tx_bytes: rx / 4,
            tx_packets: rx / 4000,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn socket(netns: u16, state: u8, local: &str, peer: &str) -> SocketSample {
    SocketSample {
        proto: Proto::Tcp,
        state,
        local: local.parse().unwrap(),
        peer: peer.parse().unwrap(),
        recv_q: 0,
        send_q: 0,
        uid: 0,
        inode: 1,
        users: Default::default(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns,
        limits: None,
    }
}

/// Two seconds apart: web-1's eth0 takes 1,000,000 B/s and 1000 p/s, its
/// host-side veth9 the same; web-1 retransmits 10/s and tracks 4
/// connections; "pid 4242 nginx" has no conntrack.
fn sample(mono: f64, second: u64) -> Sample {
    let info = |id: u16, label: &str, container: Option<&str>, retrans: u64, ct: Option<u64>| {
        NamespaceInfo {
            id,
            label: label.into(),
            inode: 4026532000 + u64::from(id),
            container: container.map(str::to_string),
            pid: Some(100 + u32::from(id)),
            retrans_segs: retrans,
            drops: 0,
            conntrack_count: ct,
            read_mono: None,
        }
    };
    let rx = 1_000_000 + second * 2_000_000;
    Sample {
        t: 1_700_000_000.0 + mono,
        mono,
        netns: "host".into(),
        interfaces: vec![
            iface(0, 1, "lo", None, 5000 * second),
            iface(0, 9, "veth9", Some(2), rx),
            iface(1, 1, "lo", None, 7000 * second),
            iface(1, 2, "eth0", Some(9), rx),
            iface(2, 2, "eth0", None, 1_000_000),
        ],
        sockets: vec![
            socket(0, 10, "0.0.0.0:22", "0.0.0.0:0"),
            socket(1, 10, "198.18.228.2:80", "0.0.0.0:0"),
            socket(1, 1, "198.18.228.2:80", "198.18.228.1:40000"),
            socket(1, 1, "198.18.228.1:40000", "198.18.228.2:80"),
            socket(1, 6, "198.18.228.1:40001", "198.18.228.2:80"),
            socket(2, 1, "198.18.229.2:443", "198.18.229.1:50000"),
        ]
        .into(),
        namespaces: vec![
            info(0, "host", None, 0, Some(12)),
            info(1, "web-1", Some("podman:web-1"), 20 * second, Some(4)),
            info(2, "pid 4242 nginx", None, 0, None),
        ],
        ..Default::default()
    }
}

fn app(tab: Tab, samples: impl IntoIterator<Item = Sample>) -> App {
    let mut app = App::new(tab, Duration::from_secs(2), false);
    app.hostname = "testhost".into();
    for s in samples {
        app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    }
    app
}

fn screen(app: &mut App, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn line_of<'a>(lines: &'a [String], start: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.trim_start_matches("» ").starts_with(start))
        .unwrap_or_else(|| panic!("no row {start}:\n{}", lines.join("\n")))
}

#[test]
fn the_tab_at_80x24_rates_counts_and_scopes() {
    let mut app = app(Tab::Namespaces, [sample(10.0, 0), sample(12.0, 1)]);
    let lines = screen(&mut app, 80, 24);
    let text = lines.join("\n");
    assert!(lines[2].contains("0 NS"), "{text}");
    assert!(lines[2].contains("9 Procs"), "{text}");
    let header = line_of(&lines, "NAMESPACE");
    for title in [
        "rx/s", "tx/s", "rxpk/s", "txpk/s", "ESTAB", "LSTN", "TW", "retr/s", "FIND",
    ] {
        assert!(header.contains(title), "{title}: {header}");
    }
    // web-1: eth0's 2,000,000 bytes over 2 s (its lo left out) = 977 KiB/s,
    // 1000 p/s; TCP 2 estab, 1 listen, 1 time-wait; 20 segments in 2 s.
    let web: Vec<&str> = line_of(&lines, "web-1").split_whitespace().collect();
    assert_eq!(
        web,
        [
            "web-1", "977", "KiB/s", "244", "KiB/s", "1000.0", "250.0", "2", "1", "1", "10.0", "0"
        ],
        "{text}"
    );
    // The host: only veth9 (lo left out); its sshd listener.
    let host: Vec<&str> = line_of(&lines, "host").split_whitespace().collect();
    assert_eq!(
        &host[..6],
        ["host", "977", "KiB/s", "244", "KiB/s", "1000.0"]
    );
    assert_eq!(&host[7..10], ["0", "1", "0"]);
    // A label longer than its column is cut, visibly; a still eth0 is 0.
    let nginx: Vec<&str> = line_of(&lines, "pid 4242 ng…").split_whitespace().collect();
    assert_eq!(&nginx[3..7], ["0", "B/s", "0", "B/s"], "{text}");
    // The selected row's summary: who, host peer, the rest of the counts.
    assert!(text.contains("host net:[4026532000] pid 100"), "{text}");
    app.on_key(Key::Down);
    let lines = screen(&mut app, 80, 24);
    let text = lines.join("\n");
    assert!(
        text.contains("web-1 (podman:web-1) net:[4026532001] pid 101\n"),
        "{text}"
    );
    assert!(
        text.contains("host peer veth9: rx 977 KiB/s tx 244 KiB/s; retr 10.0/s, drop 0.0/s"),
        "{text}"
    );
    assert!(
        text.contains(
            "TCP 2 estab, 1 listen, 1 time-wait, 0 other; 0 UDP; conntrack 4; 0 findings"
        ),
        "{text}"
    );
    assert!(text.contains("Enter: scope every tab to it"), "{text}");
    assert!(lines.iter().all(|l| l.chars().count() <= 80));

    // Enter: every tab is web-1's; the header says so in words.
    app.on_key(Key::Enter);
    let lines = screen(&mut app, 80, 24);
    assert!(lines[0].contains("[scope ns:web-1]"), "{}", lines[0]);
    assert!(line_of(&lines, "web-1").starts_with("» web-1"));
    app.on_key(Key::Char('2'));
    let text = screen(&mut app, 80, 24).join("\n");
    assert!(text.contains("198.18.228.2:80"), "{text}");
    assert!(!text.contains("198.18.229.2:443"), "{text}");
    assert!(
        !text.contains("0.0.0.0:22") && !text.contains("*:22"),
        "{text}"
    );
    // The namespace column, as more than one namespace is sampled.
    assert!(
        text.contains("NS") && text.contains("podman:web-1"),
        "{text}"
    );
    // TCP's counters are the host's: the tab says so, with web-1's own.
    app.on_key(Key::Char('3'));
    let text = screen(&mut app, 80, 24).join("\n");
    assert!(
        text.contains("ns:web-1: these are host's counters; web-1's own: retr 10.0/s"),
        "{text}"
    );
    // u: every namespace again.
    app.on_key(Key::Char('u'));
    app.on_key(Key::Char('2'));
    let lines = screen(&mut app, 80, 24);
    let text = lines.join("\n");
    assert!(!lines[0].contains("scope"), "{}", lines[0]);
    assert!(text.contains("198.18.229.2:443"), "{text}");
    // Esc with nothing else open ends a scope too.
    app.on_key(Key::Char('0'));
    app.on_key(Key::Enter);
    assert!(app.scope().is_some());
    app.on_key(Key::Char('2'));
    app.on_key(Key::Esc);
    assert!(app.scope().is_none());
}

/// Two namespaces' "lo": the selection follows the one picked (its
/// namespace and name) through a re-sort and a new sample, and its detail
/// screen names it and shows its own rates (web-1's lo: 3,500 B/s, 28
/// kb/s; the host's: 2,500 B/s).
#[test]
fn a_selected_lo_stays_its_namespace_s_through_sorts_and_samples() {
    let mut app = app(Tab::Interfaces, [sample(10.0, 0), sample(12.0, 1)]);
    screen(&mut app, 100, 24);
    app.on_key(Key::Home);
    for _ in 0..5 {
        let at = app.interfaces.selected.clone();
        if at.is_some_and(|at| at.name == "lo" && at.netns == 1) {
            break;
        }
        app.on_key(Key::Char('j'));
        screen(&mut app, 100, 24);
    }
    // A re-sort and a new sample move the rows.
    app.on_key(Key::Char('s'));
    app.on_sampler(SamplerEvent::Sample(Box::new(sample(14.0, 2))));
    let lines = screen(&mut app, 100, 24);
    let at = app.interfaces.selected.clone().expect("a selection");
    assert_eq!(
        (at.netns, at.name.as_str()),
        (1, "lo"),
        "{}",
        lines.join("\n")
    );
    app.on_key(Key::Enter);
    let detail = screen(&mut app, 100, 24).join("\n");
    assert!(detail.contains("lo (ns podman:web-1) <UP"), "{detail}");
    assert!(detail.contains("rx 28.00 kb/s"), "{detail}");
}

/// Every container's sshd on 0.0.0.0:22: the Sockets selection keeps the
/// namespace's own through a re-sort and a new sample.
#[test]
fn a_selected_socket_stays_its_namespace_s_when_another_has_the_same_ports() {
    let with_twin = |mono, second| {
        let mut s = sample(mono, second);
        s.sockets.push(socket(2, 10, "0.0.0.0:22", "0.0.0.0:0"));
        s
    };
    let mut app = app(Tab::Sockets, [with_twin(10.0, 0), with_twin(12.0, 1)]);
    screen(&mut app, 120, 24);
    app.on_key(Key::Home);
    for _ in 0..8 {
        let at = app.sockets.selected;
        if at.is_some_and(|at| at.local.port() == 22 && at.netns == 2) {
            break;
        }
        app.on_key(Key::Char('j'));
        screen(&mut app, 120, 24);
    }
    app.on_key(Key::Char('s'));
    app.on_sampler(SamplerEvent::Sample(Box::new(with_twin(14.0, 2))));
    let lines = screen(&mut app, 120, 24);
    let at = app.sockets.selected.expect("a selection");
    assert_eq!((at.local.port(), at.netns), (22, 2), "{}", lines.join("\n"));
    let shown = app.sockets.selected_socket(app.history.newest().unwrap());
    assert_eq!(shown.map(|s| s.netns), Some(2), "{}", lines.join("\n"));
}

#[test]
fn a_small_pane_keeps_the_label_and_the_rates() {
    let mut app = app(Tab::Namespaces, [sample(10.0, 0), sample(12.0, 1)]);
    let lines = screen(&mut app, 40, 11);
    let text = lines.join("\n");
    assert!(line_of(&lines, "web-1").contains("977 KiB/s"), "{text}");
    assert!(!text.contains("retr/s"), "{text}");
}

#[test]
fn one_namespace_gives_one_row_and_says_how_to_see_all() {
    let one = |mono: f64, second: u64| Sample {
        namespaces: Vec::new(),
        interfaces: vec![iface(0, 9, "eth0", None, second * 2_000_000)],
        sockets: vec![socket(0, 10, "0.0.0.0:22", "0.0.0.0:0")].into(),
        // The row's counters are the sample's own: 30 retransmits and 4
        // discards in 2 s.
        tcp: Some(TcpSample {
            counters: [
                ("Tcp.RetransSegs".to_string(), 30 * second),
                ("Ip.InDiscards".to_string(), 4 * second),
            ]
            .into(),
            ..Default::default()
        }),
        ..sample(mono, second)
    };
    let mut app = app(Tab::Namespaces, [one(10.0, 0), one(12.0, 1)]);
    let lines = screen(&mut app, 80, 24);
    let text = lines.join("\n");
    let host: Vec<&str> = line_of(&lines, "host").split_whitespace().collect();
    assert_eq!(
        &host[..6],
        ["host", "977", "KiB/s", "244", "KiB/s", "1000.0"]
    );
    assert_eq!(host[10], "15.0", "{text}");
    assert!(text.contains("retr 15.0/s, drop 2.0/s"), "{text}");
    assert!(text.contains("netlens --all-netns (as root) lists every namespace"));
    // No NS column with one namespace.
    app.on_key(Key::Char('2'));
    let lines = screen(&mut app, 80, 24);
    assert!(
        !line_of(&lines, "State").contains("NS"),
        "{}",
        lines.join("\n")
    );
}
