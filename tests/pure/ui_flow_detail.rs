//! The flow screen (drill-down) rendered with ratatui's TestBackend from
//! packets built here with pnet: a Nagle + delayed-ACK exchange (three
//! request/response rounds, each response's second write held until the
//! client's ACK 40 ms later) and a close. One snapshot per sub-view at
//! 80x24, a small pane, the payload view with and without payload capture,
//! the keys from the keymap, and `e` writing a pcap netlens reads back.

use netlens::app::App;
use netlens::app::flow_detail::{FlowDetail, SubView};
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::model::capture::FlowSample;
use netlens::packet::format::Timestamp;
use pnet_packet::MutablePacket;
use pnet_packet::ethernet::{EtherTypes, MutableEthernetPacket};
use pnet_packet::ip::IpNextHeaderProtocols;
use pnet_packet::ipv4::MutableIpv4Packet;
use pnet_packet::tcp::MutableTcpPacket;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

const SYN: u8 = 0x02;
const FIN: u8 = 0x01;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;

/// An Ethernet/IPv4/TCP frame between 198.18.0.1:40000 (client) and
/// 198.18.0.2:9001 (server); SYNs carry MSS 1460 and window scale 7.
fn frame(from_client: bool, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    let options: &[u8] = if flags & SYN != 0 {
        &[2, 4, 0x05, 0xb4, 1, 3, 3, 7]
    } else {
        &[]
    };
    let tcp_len = 20 + options.len();
    let mut buf = vec![0u8; 14 + 20 + tcp_len + payload.len()];
    let mut eth = MutableEthernetPacket::new(&mut buf).unwrap();
    eth.set_ethertype(EtherTypes::Ipv4);
    let mut ip = MutableIpv4Packet::new(eth.payload_mut()).unwrap();
    ip.set_version(4);
    ip.set_header_length(5);
    ip.set_total_length((20 + tcp_len + payload.len()) as u16);
    ip.set_ttl(64);
    ip.set_next_level_protocol(IpNextHeaderProtocols::Tcp);
    let (a, b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let (src, dst, sport, dport) = if from_client {
        (a, b, 40000, 9001)
    } else {
        (b, a, 9001, 40000)
    };
    ip.set_source(src.into());
    ip.set_destination(dst.into());
    let mut tcp = MutableTcpPacket::new(ip.payload_mut()).unwrap();
    tcp.set_source(sport);
    tcp.set_destination(dport);
    tcp.set_sequence(seq);
    tcp.set_acknowledgement(ack);
    tcp.set_data_offset((tcp_len / 4) as u8);
    tcp.set_flags(flags);
    tcp.set_window(502);
    let raw = tcp.packet_mut();
    raw[20..20 + options.len()].copy_from_slice(options);
    raw[tcp_len..].copy_from_slice(payload);
    buf
}

fn ts(t: f64) -> Timestamp {
    let ns = (1_700_000_000.0 * 1e9) as u64 + (t * 1e9).round() as u64;
    Timestamp::from_nanos(ns)
}

/// The flow's packets: (time, frame).
fn nagle_exchange() -> Vec<(f64, Vec<u8>)> {
    let (mut c, mut s) = (1000u32, 5000u32);
    let mut out = vec![
        (0.0, frame(true, SYN, c, 0, &[])),
        (0.000080, frame(false, SYN | ACK, s, c + 1, &[])),
        (0.000120, frame(true, ACK, c + 1, s + 1, &[])),
    ];
    c += 1;
    s += 1;
    let mut t = 0.001;
    for round in 0..3u8 {
        let request = format!("GET /item/{round} HTTP/1.1\r\n\r\n");
        out.push((t, frame(true, PSH | ACK, c, s, request.as_bytes())));
        c += request.len() as u32;
        out.push((
            t + 0.0001,
            frame(false, PSH | ACK, s, c, b"HTTP/1.1 200 OK\r\n"),
        ));
        s += 17;
        // The client's delayed ACK, 40 ms later, releases the body.
        out.push((t + 0.0402, frame(true, ACK, c, s, &[])));
        out.push((t + 0.0403, frame(false, PSH | ACK, s, c, b"hello, world\n")));
        s += 13;
        t += 0.05;
    }
    out.push((t, frame(true, FIN | ACK, c, s, &[])));
    out.push((t + 0.0001, frame(false, FIN | ACK, s, c + 1, &[])));
    out.push((t + 0.0002, frame(true, ACK, c + 1, s + 1, &[])));
    out
}

fn flow() -> FlowSample {
    FlowSample {
        proto: "tcp".into(),
        src: "198.18.0.1:40000".into(),
        dst: "198.18.0.2:9001".into(),
        packets: 18,
        bytes: 1500,
        state: "CLOSED".into(),
        rtt_ms: Some(0.12),
        first_seen: 1_700_000_000.0,
        last_seen: 1_700_000_000.2,
        pid: Some(4242),
        process: Some("slowserver".into()),
        ..Default::default()
    }
}

fn detail(payload: bool) -> FlowDetail {
    let snaplen = if payload { 65535 } else { 384 };
    let mut d = FlowDetail::new(flow(), Tab::Flows, 1, snaplen, payload);
    for (t, data) in nagle_exchange() {
        d.push(ts(t), data.len() as u32, &data);
    }
    d
}

fn app(payload: bool) -> App {
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), false);
    app.hostname = "testhost".into();
    app.flow_detail = Some(detail(payload));
    app
}

fn render(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    format!("{}", terminal.backend())
}

fn show(app: &mut App, view: SubView) {
    for _ in 0..5 {
        if app.flow_detail.as_ref().unwrap().view == view {
            return;
        }
        assert!(app.on_key(Key::Char('v')));
    }
    panic!("v never reached {view:?}");
}

#[test]
fn summary_80x24() {
    let mut app = app(true);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("slowserver (pid 4242)"), "{screen}");
    assert!(screen.contains("three-way close"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn timeline_80x24_marks_the_long_gaps() {
    let mut app = app(true);
    show(&mut app, SubView::Timeline);
    let screen = render(&mut app, 80, 24);
    // The three delayed ACKs come after ~40 ms gaps: marked, not coloured.
    assert_eq!(screen.matches("◆").count(), 1 + 3, "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn sequence_diagram_80x24_scrolls() {
    let mut app = app(true);
    show(&mut app, SubView::Sequence);
    let top = render(&mut app, 80, 24);
    assert!(top.contains("SYN, ACK"), "{top}");
    insta::assert_snapshot!(top.clone());
    app.on_key(Key::End);
    let bottom = render(&mut app, 80, 24);
    assert_ne!(top, bottom);
    assert!(bottom.contains("FIN, ACK"), "{bottom}");
}

#[test]
fn findings_80x24_show_the_evidence() {
    let mut app = app(true);
    show(&mut app, SubView::Findings);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("nagle-delayed-ack"), "{screen}");
    assert!(screen.contains("►"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn payload_80x24_and_how_to_enable_it() {
    let mut app = app(true);
    show(&mut app, SubView::Payload);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("|GET /item/0 HTTP|"), "{screen}");
    insta::assert_snapshot!(screen);
    let mut off = self::app(false);
    show(&mut off, SubView::Payload);
    let screen = render(&mut off, 80, 24);
    assert!(screen.contains("--payload"), "{screen}");
    insta::assert_snapshot!("payload_off_80x24", screen);
}

#[test]
fn small_pane_degrades() {
    let mut app = app(true);
    let screen = render(&mut app, 50, 12);
    assert!(screen.contains("tcp 198.18.0.1:40000"), "{screen}");
    insta::assert_snapshot!(screen);
    // Every sub-view draws at a tiny size without panicking.
    for _ in 0..5 {
        app.on_key(Key::Char('v'));
        render(&mut app, 20, 6);
    }
}

#[test]
fn esc_closes_and_e_exports_a_pcap_netlens_reads() {
    let dir = std::env::temp_dir().join(format!("netlens-ui-flow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("flow.pcap");
    let d = detail(false);
    let message = d.export(Some(path.clone()), None);
    assert!(message.starts_with("exported 18 packets"), "{message}");
    let mut reader = netlens::capture::pcap_file::open(&path).unwrap();
    let mut buf = Vec::new();
    let mut n = 0;
    while reader.next_into(&mut buf).unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 18);
    std::fs::remove_dir_all(&dir).unwrap();

    let mut app = app(false);
    assert!(app.on_key(Key::Esc));
    assert!(app.flow_detail.is_none());
}

/// A flow the capture joined mid-stream (no SYN), whose client is the
/// flow key's second endpoint: the summary's per-direction lines still put
/// the client's data on the client's line, as the charts and timeline do.
#[test]
fn summary_without_the_handshake_keeps_the_client_side() {
    let flow = FlowSample {
        src: "198.18.0.2:9001".into(),
        dst: "198.18.0.1:40000".into(),
        state: "ESTABLISHED".into(),
        ..flow()
    };
    let mut d = FlowDetail::new(flow, Tab::Flows, 1, 65535, true);
    let data = [b'x'; 1000];
    for i in 0..3u32 {
        let t = f64::from(i) * 0.01;
        let sent = frame(false, PSH | ACK, 7000 + i * 1000, 100, &data);
        d.push(ts(t), sent.len() as u32, &sent);
        let acked = frame(true, ACK, 100, 8000 + i * 1000, &[]);
        d.push(ts(t + 0.0001), acked.len() as u32, &acked);
    }
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), false);
    app.flow_detail = Some(d);
    let screen = render(&mut app, 80, 24);
    let line = |label: &str| {
        screen
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("no {label} line in {screen}"))
            .to_string()
    };
    assert!(line("→ client").contains("2.93 KiB payload"), "{screen}");
    assert!(line("← server").contains("0 B payload"), "{screen}");
}

/// An established TCP socket from `local` to `peer`, no owner, no tcp_info.
fn tcp_socket(local: &str, peer: &str) -> netlens::model::sockets::SocketSample {
    netlens::model::sockets::SocketSample {
        state: 1,
        local: local.parse().unwrap(),
        peer: peer.parse().unwrap(),
        inode: 1,
        ..Default::default()
    }
}

/// A sample carrying the flow (and its client socket, owned by "client").
fn sample_with_flow(mono: f64) -> netlens::model::Sample {
    use netlens::model::capture::CaptureSample;
    use netlens::model::sockets::{SocketSample, SocketUser};
    netlens::model::Sample {
        t: 1_700_000_000.0 + mono,
        mono,
        netns: "host".into(),
        sockets: vec![SocketSample {
            users: vec![SocketUser {
                process: "client".into(),
                pid: 7,
                fd: 3,
            }]
            .into(),
            ..tcp_socket("198.18.0.1:40000", "198.18.0.2:9001")
        }]
        .into(),
        capture: Some(CaptureSample {
            active: true,
            iface: "any".into(),
            flows: vec![flow().into()],
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn enter_opens_the_flow_from_flows_and_from_its_socket() {
    use netlens::collect::SamplerEvent;
    for tab in [Tab::Flows, Tab::Sockets] {
        let mut app = App::new(tab, Duration::from_secs(1), false);
        for mono in [1.0, 2.0] {
            app.on_sampler(SamplerEvent::Sample(Box::new(sample_with_flow(mono))));
        }
        assert!(app.on_key(Key::Enter), "{tab:?}");
        let detail = app.flow_detail.as_ref().expect("flow screen open");
        assert_eq!(detail.flow.dst, "198.18.0.2:9001");
        assert_eq!(detail.origin, tab);
        let screen = render(&mut app, 80, 24);
        assert!(screen.contains("[Summary]"), "{screen}");
        // Another tab shows itself; back here, the flow screen again.
        app.on_key(Key::Char('3'));
        assert!(!render(&mut app, 80, 24).contains("[Summary]"));
        app.tab = tab;
        assert!(app.on_key(Key::Esc));
        assert!(app.flow_detail.is_none());
    }
}

/// The test's flow before its owners are joined.
fn unowned_flow() -> netlens::model::capture::SharedFlow {
    FlowSample {
        pid: None,
        process: None,
        ..flow()
    }
    .into()
}

#[test]
fn owners_join_flows_by_their_endpoints() {
    let s = sample_with_flow(1.0);
    let mut flows = vec![unowned_flow()];
    netlens::model::capture::join_owners(&mut flows, &s.sockets);
    assert_eq!(flows[0].process.as_deref(), Some("client"));
    assert_eq!(flows[0].pid, Some(7));
    assert_eq!(
        flows[0].netns, 0,
        "both ends' sockets are the watched namespace's"
    );
}

/// --all-netns: the server end's socket is in namespace 3 and its owner is
/// unknown; the client's is here. The flow is namespace 3's, its process
/// the client's.
#[test]
fn a_flow_takes_the_other_namespace_of_its_ends() {
    let mut s = sample_with_flow(1.0);
    let mut server = s.sockets.at(0).to_sample();
    (server.local, server.peer) = (server.peer, server.local);
    server.users.clear();
    server.netns = 3;
    s.sockets.push(server);
    let mut flows = vec![unowned_flow()];
    netlens::model::capture::join_owners(&mut flows, &s.sockets);
    assert_eq!((flows[0].netns, flows[0].pid), (3, Some(7)));
    // Only the server's socket known: still namespace 3, no process.
    s.sockets.retain(|socket| socket.netns == 3);
    let mut flows = vec![unowned_flow()];
    netlens::model::capture::join_owners(&mut flows, &s.sockets);
    assert_eq!((flows[0].netns, flows[0].pid), (3, None));
}

#[test]
fn whole_flow_findings_older_than_the_screen_are_named() {
    use netlens::packet::analysis::FlowFinding;
    let mut app = app(false);
    {
        let detail = app.flow_detail.as_mut().unwrap();
        // What the flow table's analysis of every packet found: one the
        // screen also finds in its packets, one only in older packets.
        detail.flow.retransmits = 3;
        detail.flow.findings = vec![
            FlowFinding {
                id: "nagle-delayed-ack".into(),
                summary: "table's copy".into(),
            },
            FlowFinding {
                id: "retransmits".into(),
                summary: "3 retransmits from 198.18.0.2:9001, RTO 210 ms".into(),
            },
        ];
    }
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("Findings(2)"), "{screen}");
    assert!(screen.contains("3 in the whole flow"), "{screen}");
    show(&mut app, SubView::Findings);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("retransmits"), "{screen}");
    assert!(screen.contains("RTO 210 ms"), "{screen}");
    assert!(
        screen.contains("before the packets this screen holds"),
        "{screen}"
    );
    assert!(screen.contains("nagle-delayed-ack"), "{screen}");
    assert!(!screen.contains("table's copy"), "{screen}");
}

/// The flow screen of tests/data/nagle-stall.pcap: real traffic recorded by
/// tests/data/make-nagle-pcap.sh (a two-write server without TCP_NODELAY
/// between two namespaces), opened the way a live capture feeds it.
fn recorded_nagle_app() -> App {
    recorded_app("tests/data/nagle-stall.pcap")
}

/// The flow screen of a one-flow pcap under tests/data, opened the way a
/// live capture feeds it.
fn recorded_app(file: &str) -> App {
    use netlens::packet::decode::summarize;
    use netlens::packet::flows::FlowTable;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let mut reader = netlens::capture::pcap_file::open(&path).expect("open the recorded pcap");
    let mut buf = Vec::new();
    let mut packets = Vec::new();
    let mut table = FlowTable::new(16, f64::INFINITY);
    while let Some(rec) = reader.next_into(&mut buf).expect("read the recorded pcap") {
        table.add(
            &summarize(rec.linktype, &buf, rec.orig_len),
            rec.ts.as_secs_f64(),
        );
        packets.push((rec, buf.clone()));
    }
    assert_eq!(table.len(), 1, "one flow recorded");
    let flow = FlowSample::from(table.flows().next().unwrap());
    let mut detail = FlowDetail::new(flow, Tab::Flows, 1, 384, false);
    for (rec, data) in &packets {
        detail.push(rec.ts, rec.orig_len, data);
    }
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), false);
    app.hostname = "testhost".into();
    app.flow_detail = Some(detail);
    app
}

#[test]
fn recorded_nagle_stall_80x24() {
    let mut app = recorded_nagle_app();
    let detail = app.flow_detail.as_ref().unwrap();
    assert_eq!(detail.packets.len(), 32);
    let ids: Vec<String> = detail.findings().into_iter().map(|f| f.id).collect();
    assert_eq!(ids, ["nagle-delayed-ack"]);
    for view in [
        SubView::Summary,
        SubView::Timeline,
        SubView::Sequence,
        SubView::Findings,
    ] {
        show(&mut app, view);
        let screen = render(&mut app, 80, 24);
        insta::assert_snapshot!(format!("recorded_nagle_{}", view.title()), screen);
    }
}

/// tests/data/http-slow.pcap (tests/data/make-http-slow-pcap.sh): three
/// keep-alive GETs to a python3 HTTP server whose handler takes 120 ms,
/// captured at the server. The summary times each answer from the
/// packets; with the flow's socket in the shown sample it adds the
/// kernel's account (tcp_info) as `ss -ti` gives it.
#[test]
fn the_summary_times_the_servers_answers_and_shows_the_kernels_account() {
    use netlens::model::sockets::{SocketSample, TcpInfoSample, TcpLimits};
    let mut app = recorded_app("tests/data/http-slow.pcap");
    let detail = app.flow_detail.as_ref().unwrap();
    let answered = &detail.answered;
    assert_eq!(answered.count, 3);
    let median = answered.median_ms().unwrap();
    assert!(
        (120.0..132.0).contains(&median),
        "median {median} ms for a 120 ms handler"
    );
    let (client, server) = (detail.flow.src.clone(), detail.flow.dst.clone());
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("server     3 answered  median 12"),
        "{screen}"
    );
    assert!(screen.contains("last GET /slow/3 (200) 12"), "{screen}");
    assert!(
        !screen.contains("kernel "),
        "no socket, no kernel account: {screen}"
    );

    // The server's socket, as a sample of this host carries it.
    let socket = SocketSample {
        tcp: Some(TcpInfoSample {
            rtt_us: 30_400,
            ..Default::default()
        }),
        limits: Some(Box::new(TcpLimits {
            busy_us: 2_000_000,
            rwnd_limited_us: 1_380_000,
            app_limited: true,
            min_rtt_us: 100,
            reord_seen: 3,
            dsack_dups: 1,
            notsent_bytes: 4096,
            rcv_rtt_us: 20_000,
            rcv_ssthresh: 47_804,
            ..Default::default()
        })),
        ..tcp_socket(&server, &client)
    };
    app.on_sampler(netlens::collect::SamplerEvent::Sample(Box::new(
        netlens::model::Sample {
            t: 1_700_000_000.0,
            mono: 1.0,
            netns: "host".into(),
            sockets: vec![socket].into(),
            ..Default::default()
        },
    )));
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("limited    busy 2.0 s: receiver window 69%  send buffer 0%  app-limited"),
        "{screen}"
    );
    assert!(
        screen.contains("kernel     rtt 30ms  min 0.10ms: 30ms queued  reordering 3"),
        "{screen}"
    );
    let wide = render(&mut app, 130, 30);
    assert!(
        wide.contains("spurious retransmits 1  unsent 4.00 KiB"),
        "{wide}"
    );
    // 47,804 bytes each 20 ms: 19.1 Mbit/s.
    assert!(
        wide.contains("receiving  window 46.68 KiB at 20ms RTT caps the sender near 19.12 Mb/s"),
        "{wide}"
    );
}
