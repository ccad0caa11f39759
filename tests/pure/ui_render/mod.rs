//! Renders the live view from fixed samples with ratatui's TestBackend and
//! compares against insta snapshots.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::model::sockets::{
    Proto, SocketSample, SocketUser, Sockstat, TcpInfoSample, TcpSample,
};
use netlens::model::{Duplex, InterfaceSample, LinkCounters, QdiscStats, Sample};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

mod compact;
mod conntrack_tab;
mod flows;
mod help;
mod interfaces_tab;
mod links;
mod load_tab;
mod screen;
mod sockets_tab;
mod tcp_tab;

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
        // The root qdisc as a busy pfifo_fast would report it: what it
        // sent, and the tx drops as its drops.
        qdisc: (name != "lo").then(|| QdiscStats {
            kind: "pfifo_fast".into(),
            handle: "0:".into(),
            bytes: counters.tx_bytes,
            packets: counters.tx_packets,
            drops: counters.tx_dropped,
            ..Default::default()
        }),
        counters,
        netns: 0,
        link_index: None,
        link_netnsid: None,
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
        ..Default::default()
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

/// A socket as the sampler reports it, owned by web/4242 (TCP info for TCP).
fn sock(proto: Proto, state: u8, local: &str, peer: &str, q: (u32, u32)) -> SocketSample {
    SocketSample {
        proto,
        state,
        local: local.parse().unwrap(),
        peer: peer.parse().unwrap(),
        recv_q: q.0,
        send_q: q.1,
        uid: 33,
        inode: 1000,
        users: vec![SocketUser {
            process: "web".into(),
            pid: 4242,
            fd: 7,
        }]
        .into(),
        owner_denied: false,
        owner_pending: false,
        tcp: (proto == Proto::Tcp).then_some(TcpInfoSample {
            rtt_us: 1500,
            rttvar_us: 300,
            cwnd: 10,
            ssthresh: 20,
            mss: 1448,
            rto_us: 204_000,
            retrans: 0,
            total_retrans: 2,
            bytes_acked: 10_000,
            bytes_received: 90_000,
            last_send_ms: 120,
            last_recv_ms: 80,
            last_ack_ms: 80,
        }),
        drops: Some(0),
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
        limits: None,
    }
}

/// `sample` with sockets (a full listener, a stuck receiver, an owner we
/// may not see) and TCP counters, sysctls and sockstat.
fn stack_sample(mono: f64, scale: u64) -> Sample {
    let mut sample = sample(mono, scale);
    let mut stuck = sock(
        Proto::Tcp,
        1,
        "198.18.0.2:8080",
        "198.18.0.1:40312",
        (81_920, 0),
    );
    stuck.queue_streak = 4;
    let mut denied = sock(Proto::Tcp, 1, "198.18.0.2:22", "198.18.0.9:51000", (0, 0));
    denied.users.clear();
    denied.owner_denied = true;
    sample.sockets = vec![
        sock(Proto::Tcp, 10, "198.18.0.2:8080", "0.0.0.0:0", (5, 4)),
        stuck,
        denied,
        sock(
            Proto::Tcp,
            1,
            "[2001:db8::2]:443",
            "[2001:db8::1]:50000",
            (0, 1200),
        ),
        sock(Proto::Udp, 7, "0.0.0.0:53", "0.0.0.0:0", (0, 0)),
        sock(Proto::Tcp, 6, "198.18.0.2:8080", "198.18.0.1:40000", (0, 0)),
    ]
    .into();
    let mut tcp = TcpSample::default();
    tcp.states[0] = 3 + scale as u32;
    tcp.states[5] = 1;
    tcp.states[9] = 1;
    for (name, per_s) in [
        ("Tcp.ActiveOpens", 2),
        ("Tcp.PassiveOpens", 9),
        ("Tcp.OutSegs", 1000),
        ("Tcp.RetransSegs", 30),
        ("Tcp.InSegs", 900),
        ("TcpExt.ListenOverflows", 3),
        ("TcpExt.ListenDrops", 3),
        ("TcpExt.SyncookiesSent", 0),
        ("Udp.InErrors", 0),
    ] {
        tcp.counters.insert(name.into(), 10_000 + per_s * scale);
    }
    tcp.sockstat = Sockstat {
        tcp_orphan: 1,
        tcp_tw: 1,
        tcp_mem_pages: 20,
        ..Default::default()
    };
    for (name, value) in [
        ("net.core.somaxconn", "4096"),
        ("net.ipv4.tcp_max_syn_backlog", "2048"),
        ("net.ipv4.tcp_syncookies", "1"),
        ("net.ipv4.tcp_mem", "1000 2000 3000"),
    ] {
        tcp.knobs.insert(name.into(), value.into());
    }
    tcp.unix_sockets = 17;
    sample.tcp = Some(tcp);
    sample
}

fn stack_app(tab: char) -> App {
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    let mut total = 0;
    for second in 0..30u64 {
        total += 1 + second / 5;
        app.on_sampler(SamplerEvent::Sample(Box::new(stack_sample(
            100.0 + second as f64,
            total,
        ))));
    }
    app.on_key(Key::Char(tab));
    app
}
