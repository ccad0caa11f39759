//! The Sockets tab counts TIME_WAIT sockets per remote endpoint: one row per
//! peer (its count in the Local column), the sockets themselves once the row
//! is expanded or a filter asks for them. Checked against
//! `ss -tan state time-wait` in a namespace this test fills with a few
//! hundred TIME_WAIT sockets (root only).
//!
//! Network safety: loopback of a namespace the test creates, 198.18.0.1.

use crate::common;

use common::*;
use netlens::app::sockets::SocketsView;
use netlens::collect::Collectors;
use netlens::model::Sample;
use netlens::model::sockets::TCP_TIME_WAIT;
use std::collections::BTreeMap;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};

/// Connections closed client first, per server port: each leaves one
/// TIME_WAIT socket on the client side, its peer the server.
const PER_PORT: [(u16, usize); 3] = [(7101, 240), (7102, 90), (7103, 1)];

/// TIME_WAIT sockets per peer, as `ss -tan state time-wait` lists them.
fn ss_time_wait(ns: &Netns) -> BTreeMap<String, u32> {
    let out = ns_exec(&ns.name, &["ss", "-tanH", "state", "time-wait"]);
    let mut per_peer = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // With a state filter ss leaves the State column out:
        // Recv-Q Send-Q Local Peer.
        if let Some(peer) = line.split_whitespace().nth(3) {
            *per_peer.entry(peer.to_string()).or_insert(0) += 1;
        }
    }
    per_peer
}

/// Makes the connections and takes one sample, on a thread inside `ns`.
fn fill_and_sample(ns: &Netns) -> Sample {
    let path = ns.path();
    std::thread::spawn(move || {
        enter_netns(&path).expect("setns");
        for (port, count) in PER_PORT {
            let listener = TcpListener::bind(("198.18.0.1", port)).expect("bind");
            for _ in 0..count {
                let client = TcpStream::connect(("198.18.0.1", port)).expect("connect");
                let (mut server, _) = listener.accept().expect("accept");
                drop(client); // the client's FIN first: TIME_WAIT is its
                // The server closes only once that FIN has arrived: a close
                // on both sides at once would leave it a TIME_WAIT too.
                let eof = server.read(&mut [0u8; 1]).expect("read the FIN");
                assert_eq!(eof, 0);
                drop(server);
            }
        }
        let mut collectors = Collectors::new("tw").expect("collectors");
        collectors.collect().expect("sample")
    })
    .join()
    .expect("namespace thread")
}

/// (peer, sockets) of each TIME_WAIT row the view shows.
fn time_wait_rows(view: &mut SocketsView, sample: &Sample) -> BTreeMap<String, u32> {
    let rows = view.order(sample).to_vec();
    let mut shown = BTreeMap::new();
    for row in rows {
        let socket = &sample.sockets.at(row as usize);
        if socket.state == TCP_TIME_WAIT {
            let previous = shown.insert(socket.peer.to_string(), view.row_count(row));
            assert!(previous.is_none(), "two rows for peer {}", socket.peer);
        }
    }
    shown
}

#[test]
fn time_wait_is_one_row_per_peer_with_the_count_ss_lists() {
    if crate::common::need_root(&["ip", "ss", "sysctl"]) {
        return;
    }
    let ns = Netns::new("scl-tw");
    // tcp_tw_reuse's default (2) lets a connect on loopback take over a
    // TIME_WAIT socket's port, which ends that socket early.
    ns_exec(&ns.name, &["sysctl", "-qw", "net.ipv4.tcp_tw_reuse=0"]);
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.0.1/32", "dev", "lo"]);
    let sample = fill_and_sample(&ns);
    let ss = ss_time_wait(&ns);
    // Nothing expires meanwhile (TIME_WAIT lasts 60 s), so both saw the same.
    let expected: BTreeMap<String, u32> = PER_PORT
        .iter()
        .map(|&(port, count)| (format!("198.18.0.1:{port}"), count as u32))
        .collect();
    assert_eq!(ss, expected, "ss -tan state time-wait per peer");

    let mut view = SocketsView::default();
    assert_eq!(time_wait_rows(&mut view, &sample), ss);
    // Anything else is listed one by one; the 331 TIME_WAIT sockets are 3 rows.
    let listed = view.order(&sample).len();
    assert_eq!(listed, sample.sockets.len() - 331 + 3);

    // Expanded: that peer's sockets one by one, the others still grouped.
    let peer: SocketAddr = "198.18.0.1:7102".parse().unwrap();
    view.expanded = Some(peer);
    let rows = view.order(&sample).to_vec();
    let of_peer = rows
        .iter()
        .filter(|&&r| {
            let s = &sample.sockets.at(r as usize);
            s.state == TCP_TIME_WAIT && s.peer == peer
        })
        .inspect(|&&r| assert_eq!(view.row_count(r), 1))
        .count();
    assert_eq!(of_peer, 90);
    // 90 rows for that peer and one for each of the two others.
    let waiting = rows
        .iter()
        .filter(|&&r| sample.sockets.at(r as usize).state == TCP_TIME_WAIT)
        .count();
    assert_eq!(waiting, 92);

    // A filter lists every socket it matches: all 331 TIME_WAIT ones.
    view.expanded = None;
    view.filter = "time-wait".into();
    let rows = view.order(&sample).to_vec();
    assert_eq!(rows.len(), 331);
    assert!(rows.iter().all(|&r| view.row_count(r) == 1));
}
