//! The flow screen opened live: it follows the flow's new packets.

use super::*;

/// The packets the flow screen's status line says it keeps.
fn packets_kept(screen: &str) -> Option<usize> {
    let at = screen.find(" packets kept")?;
    let digits = screen[..at].rsplit(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

#[test]
fn a_flow_screen_opened_live_follows_the_flows_new_packets() {
    use std::net::{TcpListener, TcpStream};
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let ns = common::Netns::new("ptydrill");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.5.1/32", "dev", "lo"]);
    let mut session = Session::start(
        &[
            "--netns",
            &ns.name,
            "--iface",
            "lo",
            "--filter",
            "tcp port 9100",
            "--tab",
            "flows",
        ],
        100,
        30,
    );
    session.wait_for("drops 0");
    // A TCP conversation in the namespace, one 4-byte message per request
    // on the channel; at most 40, and it ends when the channel closes.
    let (requests, pending) = std::sync::mpsc::channel::<()>();
    let path = ns.path();
    let conversation = std::thread::spawn(move || {
        common::enter_netns(&path).expect("setns");
        let listener = TcpListener::bind("198.18.5.1:9100").expect("bind");
        let mut client = TcpStream::connect("198.18.5.1:9100").expect("connect");
        let (mut server, _) = listener.accept().expect("accept");
        let mut message = [0u8; 4];
        for _ in 0..40 {
            if pending.recv_timeout(PATIENCE).is_err() {
                return;
            }
            client.write_all(b"ping").expect("send");
            server.read_exact(&mut message).expect("receive");
        }
    });
    for _ in 0..3 {
        requests.send(()).unwrap();
    }
    // The flow appears in the table; Enter opens its screen.
    session.wait_for("198.18.5.1:9100");
    session.send("\r");
    session.wait_for("[Summary]");
    session.wait_for("handshake  SYN → SYN/ACK");
    let start = Instant::now();
    let before = loop {
        if let Some(n) = packets_kept(&session.contents()).filter(|n| *n >= 6) {
            break n;
        }
        assert!(start.elapsed() < PATIENCE, "{}", session.contents());
        std::thread::sleep(Duration::from_millis(50));
    };
    // New packets of the flow reach the open screen: the Packets view
    // lists them as tcpdump lines.
    session.send("v");
    session.wait_for("[Packets]");
    for _ in 0..5 {
        requests.send(()).unwrap();
    }
    let start = Instant::now();
    while packets_kept(&session.contents()).is_none_or(|n| n < before + 5) {
        assert!(
            start.elapsed() < PATIENCE,
            "the screen kept {before} packets and never more:\n{}",
            session.contents()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    session.wait_for("Flags [P.]");
    session.wait_for("seq 1:5, ack 1");
    drop(requests);
    conversation.join().expect("conversation");
    session.send("\x1b");
    session.wait_for("PROTO");
    session.send("q");
    let status = session.wait_exit();
    assert!(status.success(), "{status:?}");
    session.assert_restored();
}
