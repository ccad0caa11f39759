//! Flow drill-down analysis against real TCP stacks: traffic between two
//! namespaces this test creates (198.18.0.0/15 only), captured on the veth
//! by the real binary (`netlens --netns NS capture -w`), then analysed by
//! `netlens read --flows --json`. Each scenario provokes one finding:
//! Nagle + delayed ACK (with a TCP_NODELAY control), loss (retransmits with
//! RTO and backoff), a receiver that stops reading (zero-window), a SYN
//! dropped by iptables (syn-unanswered) and a close with unread data
//! (rst-after-data). Needs root; skips clearly otherwise. Every loop is
//! bounded in iterations and seconds.

use crate::common;

use common::*;
use serde_json::Value;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Runs `f` on a thread that has entered the namespace at `path`.
fn in_ns<T: Send + 'static>(
    path: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::spawn(move || {
        enter_netns(&path).expect("setns");
        f()
    })
}

/// A veth pair and a capture running on B's end.
struct Lab {
    pair: VethPair,
    file: PathBuf,
    capture: Option<ChildGuard>,
}

impl Lab {
    fn new(tag: &str) -> Lab {
        let pair = VethPair::new(&format!("drill{tag}"));
        let file =
            std::env::temp_dir().join(format!("netlens-drill-{}-{tag}.pcap", std::process::id()));
        let _ = std::fs::remove_file(&file);
        let child = ChildGuard(
            Command::new(NETLENS)
                .args(["--netns", &pair.b.name, "capture", "-i", DEV_B, "-f", "tcp"])
                .arg("-w")
                .arg(&file)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn netlens capture"),
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while !file.exists() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(file.exists(), "netlens capture did not start");
        thread::sleep(Duration::from_millis(200));
        Lab {
            pair,
            file,
            capture: Some(child),
        }
    }

    /// iptables in B's namespace.
    fn iptables(&self, args: &[&str]) {
        let mut all = vec!["iptables"];
        all.extend_from_slice(args);
        ns_exec(&self.pair.b.name, &all);
    }

    /// Stops the capture (SIGTERM closes the file) and reads the flows.
    fn flows(&mut self) -> Vec<Value> {
        thread::sleep(Duration::from_millis(300));
        let mut child = self.capture.take().expect("capture running");
        // SAFETY: signals the child this test started, by its pid.
        unsafe { libc::kill(child.pid() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while child.0.try_wait().expect("wait").is_none() {
            assert!(Instant::now() < deadline, "capture ignored SIGTERM");
            thread::sleep(Duration::from_millis(20));
        }
        let out = Command::new(NETLENS)
            .arg("read")
            .arg(&self.file)
            .args(["--flows", "--json"])
            .output()
            .expect("run netlens read");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        parse_lines(&out.stdout)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

fn flow_to(flows: &[Value], port: u16) -> Vec<&Value> {
    let dst = format!("{IP_B}:{port}");
    flows.iter().filter(|f| f["dst"] == dst.as_str()).collect()
}

fn finding<'a>(flow: &'a Value, id: &str) -> Option<&'a str> {
    flow["findings"]
        .as_array()?
        .iter()
        .find(|f| f["id"] == id)
        .and_then(|f| f["summary"].as_str())
}

fn ids(flow: &Value) -> Vec<String> {
    flow["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A server in B: each request of 32 bytes gets a 20-byte header and a
/// 30-byte body, written separately (the write-write pattern).
fn two_write_server(b: String, port: u16, nodelay: bool) -> thread::JoinHandle<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = in_ns(b, move || {
        let listener = TcpListener::bind(SocketAddrV4::new(IP_B, port)).expect("bind");
        tx.send(()).expect("ready");
        let (mut conn, _) = listener.accept().expect("accept");
        conn.set_nodelay(nodelay).expect("nodelay");
        conn.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let mut request = [0u8; 32];
        for _ in 0..REQUESTS {
            if conn.read_exact(&mut request).is_err() {
                return;
            }
            conn.write_all(&[b'h'; 20]).expect("header");
            conn.write_all(&[b'b'; 30]).expect("body");
        }
    });
    rx.recv_timeout(Duration::from_secs(5)).expect("server up");
    handle
}

const REQUESTS: usize = 20;

/// A client in A sending requests back to back, reading each response.
fn request_client(a: String, port: u16) -> thread::JoinHandle<()> {
    in_ns(a, move || {
        let mut conn = TcpStream::connect_timeout(
            &SocketAddrV4::new(IP_B, port).into(),
            Duration::from_secs(3),
        )
        .expect("connect");
        conn.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let mut response = [0u8; 50];
        for _ in 0..REQUESTS {
            conn.write_all(&[b'q'; 32]).expect("request");
            conn.read_exact(&mut response).expect("response");
        }
    })
}

#[test]
fn nagle_delayed_ack_fires_for_the_two_write_server_only() {
    if crate::common::need_root(&["ip", "iptables"]) {
        return;
    }
    let mut lab = Lab::new("n");
    for (port, nodelay) in [(9001u16, false), (9002, true)] {
        let server = two_write_server(lab.pair.b.path(), port, nodelay);
        request_client(lab.pair.a.path(), port)
            .join()
            .expect("client");
        server.join().expect("server");
    }
    let flows = lab.flows();
    let nagle = flow_to(&flows, 9001);
    let control = flow_to(&flows, 9002);
    assert_eq!((nagle.len(), control.len()), (1, 1), "{flows:#?}");
    let summary = finding(nagle[0], "nagle-delayed-ack")
        .unwrap_or_else(|| panic!("no nagle finding: {:#}", nagle[0]));
    assert!(
        summary.starts_with(&format!("{IP_B}:9001 held a small segment until {IP_A}:")),
        "{summary}"
    );
    eprintln!("nagle: {summary}");
    // "gaps 40-44 ms (mean 41 ms; ...)": the delayed-ACK timer's ~40 ms.
    let mean: f64 = summary
        .split("(mean ")
        .nth(1)
        .and_then(|rest| rest.split(" ms").next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no mean in {summary}"));
    assert!((35.0..=60.0).contains(&mean), "{summary}");
    assert!(
        !ids(control[0]).contains(&"nagle-delayed-ack".to_string()),
        "the TCP_NODELAY control must not stall: {:#}",
        control[0]
    );
}

#[test]
fn induced_loss_shows_retransmits_with_rto_and_backoff() {
    if crate::common::need_root(&["ip", "iptables"]) {
        return;
    }
    let mut lab = Lab::new("l");
    let port = 9003u16;
    let port_s = port.to_string();
    // One wire packet per segment (no 64 KB GSO super-packets), so the
    // random drop hits many segments.
    lab.pair.a.ip(&["link", "set", DEV_A, "gso_max_segs", "1"]);
    lab.iptables(&[
        "-A",
        "INPUT",
        "-p",
        "tcp",
        "--dport",
        &port_s,
        "-m",
        "statistic",
        "--mode",
        "random",
        "--probability",
        "0.05",
        "-j",
        "DROP",
    ]);
    let (tx, rx) = std::sync::mpsc::channel();
    let server = in_ns(lab.pair.b.path(), move || {
        let listener = TcpListener::bind(SocketAddrV4::new(IP_B, port)).expect("bind");
        tx.send(()).expect("ready");
        let (mut conn, _) = listener.accept().expect("accept");
        conn.set_read_timeout(Some(Duration::from_secs(10))).ok();
        let mut sink = vec![0u8; 65536];
        let mut total = 0usize;
        while let Ok(n) = conn.read(&mut sink) {
            if n == 0 {
                break;
            }
            total += n;
        }
        total
    });
    rx.recv_timeout(Duration::from_secs(5)).expect("server up");
    const BULK: usize = 2 << 20;
    let a = lab.pair.a.path();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (bulk_tx, bulk_rx) = std::sync::mpsc::channel::<()>();
    let client = in_ns(a, move || {
        let mut conn = TcpStream::connect_timeout(
            &SocketAddrV4::new(IP_B, port).into(),
            Duration::from_secs(3),
        )
        .expect("connect");
        conn.set_write_timeout(Some(Duration::from_secs(20))).ok();
        conn.write_all(&vec![7u8; BULK]).expect("bulk");
        bulk_tx.send(()).ok();
        // Then one small write into a black hole: timeouts, with backoff.
        go_rx.recv_timeout(Duration::from_secs(20)).ok();
        conn.write_all(b"after the black hole").expect("tail");
        thread::sleep(Duration::from_millis(1800));
        conn.shutdown(Shutdown::Write).ok();
    });
    bulk_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("bulk sent");
    thread::sleep(Duration::from_millis(300));
    lab.iptables(&["-I", "INPUT", "-p", "tcp", "--dport", &port_s, "-j", "DROP"]);
    go_tx.send(()).ok();
    // 200 + 400 + 800 ms of timeouts, then let the retransmit through.
    thread::sleep(Duration::from_millis(1600));
    lab.iptables(&["-D", "INPUT", "1"]);
    client.join().expect("client");
    let received = server.join().expect("server");
    assert_eq!(received, BULK + 20);
    let flows = lab.flows();
    let flow = flow_to(&flows, port);
    assert_eq!(flow.len(), 1, "{flows:#?}");
    assert!(flow[0]["retransmits"].as_u64().unwrap_or(0) > 0);
    let summary = finding(flow[0], "retransmits")
        .unwrap_or_else(|| panic!("no retransmits finding: {:#}", flow[0]));
    eprintln!("retransmits: {summary}");
    // "RTO 2xx ms, backoff 2xx → 4xx → 8xx ms (198.18.0.1:… retransmitted
    // one segment 3 times)"
    let rto: f64 = summary
        .split("RTO ")
        .nth(1)
        .and_then(|rest| rest.split(" ms").next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no RTO in {summary}"));
    assert!((190.0..=1500.0).contains(&rto), "{summary}");
    let backoff: Vec<f64> = summary
        .split("backoff ")
        .nth(1)
        .and_then(|rest| rest.split(" ms").next())
        .map(|list| list.split(" → ").filter_map(|v| v.parse().ok()).collect())
        .unwrap_or_default();
    // The black hole gives at least three timeouts of one segment (a tail
    // loss probe may come first, at about the RTO), and the timer backs off:
    // the last wait doubles the one before.
    assert!(backoff.len() >= 3, "{summary}");
    let n = backoff.len();
    assert!(backoff[n - 1] >= backoff[n - 2] * 1.5, "{summary}");
    // The random drop during the bulk transfer: fast retransmits too.
    let fast: u64 = summary
        .split(" fast")
        .next()
        .and_then(|head| head.rsplit('(').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no fast count in {summary}"));
    assert!(fast > 0, "{summary}");
    assert!(
        summary.contains(&format!("({IP_A}:")),
        "names the sender: {summary}"
    );
}

#[test]
fn a_receiver_that_stops_reading_shows_zero_window() {
    if crate::common::need_root(&["ip", "iptables"]) {
        return;
    }
    let mut lab = Lab::new("z");
    let port = 9004u16;
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let server = in_ns(lab.pair.b.path(), move || {
        let listener = TcpListener::bind(SocketAddrV4::new(IP_B, port)).expect("bind");
        tx.send(()).expect("ready");
        let (conn, _) = listener.accept().expect("accept");
        // Never reads: holds the connection until the client is done.
        done_rx.recv_timeout(Duration::from_secs(20)).ok();
        drop(conn);
    });
    rx.recv_timeout(Duration::from_secs(5)).expect("server up");
    let client = in_ns(lab.pair.a.path(), move || {
        let mut conn = TcpStream::connect_timeout(
            &SocketAddrV4::new(IP_B, port).into(),
            Duration::from_secs(3),
        )
        .expect("connect");
        conn.set_nonblocking(true).expect("nonblocking");
        let chunk = [1u8; 16384];
        let start = Instant::now();
        let mut last_progress = Instant::now();
        let mut sent = 0usize;
        // Bounded: 8 s, 64 MiB, or 1.5 s without progress (window closed).
        while start.elapsed() < Duration::from_secs(8)
            && sent < 64 << 20
            && last_progress.elapsed() < Duration::from_millis(1500)
        {
            match conn.write(&chunk) {
                Ok(n) => {
                    sent += n;
                    last_progress = Instant::now();
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(10))
                }
                Err(e) => panic!("write: {e}"),
            }
        }
        sent
    });
    let sent = client.join().expect("client");
    done_tx.send(()).ok();
    server.join().expect("server");
    assert!(sent > 0);
    let flows = lab.flows();
    let flow = flow_to(&flows, port);
    assert_eq!(flow.len(), 1, "{flows:#?}");
    let summary = finding(flow[0], "zero-window")
        .unwrap_or_else(|| panic!("no zero-window finding: {:#}", flow[0]));
    assert!(
        summary.starts_with(&format!("{IP_B}:{port} advertised a zero window")),
        "{summary}"
    );
}

#[test]
fn dropped_syn_is_unanswered_and_unread_close_resets_after_data() {
    if crate::common::need_root(&["ip", "iptables"]) {
        return;
    }
    let mut lab = Lab::new("s");
    lab.iptables(&[
        "-A", "INPUT", "-p", "tcp", "--dport", "9005", "--syn", "-j", "DROP",
    ]);
    // The SYN goes unanswered: the kernel retransmits it after 1 s.
    let refused = in_ns(lab.pair.a.path(), || {
        TcpStream::connect_timeout(
            &SocketAddrV4::new(IP_B, 9005).into(),
            Duration::from_millis(2500),
        )
        .is_err()
    });
    // A server that reads 10 of 100 bytes and closes: the kernel resets.
    let (tx, rx) = std::sync::mpsc::channel();
    let server = in_ns(lab.pair.b.path(), move || {
        let listener = TcpListener::bind(SocketAddrV4::new(IP_B, 9006)).expect("bind");
        tx.send(()).expect("ready");
        let (mut conn, _) = listener.accept().expect("accept");
        conn.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let mut some = [0u8; 10];
        conn.read_exact(&mut some).expect("read");
        thread::sleep(Duration::from_millis(100));
        // Closing with unread data makes the kernel send RST.
        drop(conn);
    });
    rx.recv_timeout(Duration::from_secs(5)).expect("server up");
    let client = in_ns(lab.pair.a.path(), || {
        let mut conn = TcpStream::connect_timeout(
            &SocketAddrV4::new(IP_B, 9006).into(),
            Duration::from_secs(3),
        )
        .expect("connect");
        conn.write_all(&[5u8; 100]).expect("write");
        conn.set_read_timeout(Some(Duration::from_secs(3))).ok();
        let mut buf = [0u8; 16];
        let _ = conn.read(&mut buf);
    });
    server.join().expect("server");
    client.join().expect("client");
    assert!(refused.join().expect("syn client"), "connect must time out");
    let flows = lab.flows();
    let syn = flow_to(&flows, 9005);
    assert_eq!(syn.len(), 1, "{flows:#?}");
    let summary = finding(syn[0], "syn-unanswered")
        .unwrap_or_else(|| panic!("no syn-unanswered: {:#}", syn[0]));
    assert!(
        summary.contains(&format!("{IP_B}:9005 never answered")),
        "{summary}"
    );
    let rst = flow_to(&flows, 9006);
    assert_eq!(rst.len(), 1, "{flows:#?}");
    let summary = finding(rst[0], "rst-after-data")
        .unwrap_or_else(|| panic!("no rst-after-data: {:#}", rst[0]));
    assert_eq!(
        summary,
        format!("{IP_B}:9006 reset the connection after 100 bytes of data")
    );
}

/// The live path: `snapshot --json` in the namespace names the stalled
/// flow in flows[] (with its process, joined from the socket table) and in
/// findings[].
#[test]
fn snapshot_names_the_stalled_flow_and_its_process() {
    if crate::common::need_root(&["ip", "iptables"]) {
        return;
    }
    let ns = Netns::new("drillsnap");
    ns.ip(&["link", "set", "lo", "up"]);
    let snapshot = Command::new(NETLENS)
        .args(["--netns", &ns.name, "snapshot", "--json", "--count", "2"])
        .args(["--interval", "1500ms", "--section", "flows,findings"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn snapshot");
    let snapshot = ChildGuard(snapshot);
    thread::sleep(Duration::from_millis(300));
    let (tx, rx) = std::sync::mpsc::channel();
    let server = in_ns(ns.path(), move || {
        let listener = TcpListener::bind("127.0.0.1:9101").expect("bind");
        tx.send(()).expect("ready");
        let (mut conn, _) = listener.accept().expect("accept");
        conn.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let mut request = [0u8; 32];
        for _ in 0..60 {
            if conn.read_exact(&mut request).is_err() {
                return;
            }
            conn.write_all(&[b'h'; 20]).expect("header");
            conn.write_all(&[b'b'; 30]).expect("body");
        }
    });
    rx.recv_timeout(Duration::from_secs(5)).expect("server up");
    let client = in_ns(ns.path(), || {
        let mut conn = TcpStream::connect("127.0.0.1:9101").expect("connect");
        conn.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let mut response = [0u8; 50];
        for _ in 0..60 {
            conn.write_all(&[b'q'; 32]).expect("request");
            conn.read_exact(&mut response).expect("response");
        }
        // Keep the sockets until the snapshot has looked at them.
        thread::sleep(Duration::from_millis(1500));
    });
    server.join().expect("server");
    let mut child = snapshot;
    let deadline = Instant::now() + Duration::from_secs(15);
    while child.0.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < deadline, "snapshot did not finish");
        thread::sleep(Duration::from_millis(50));
    }
    client.join().expect("client");
    let mut out = Vec::new();
    child
        .0
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut out)
        .expect("read");
    let samples = parse_lines(&out);
    let last = samples.last().expect("a sample");
    let flows = last["flows"].as_array().expect("flows[]");
    let flow = flows
        .iter()
        .find(|f| f["dst"] == "127.0.0.1:9101" && finding(f, "nagle-delayed-ack").is_some())
        .unwrap_or_else(|| panic!("no stalled flow: {last:#}"));
    assert_eq!(flow["pid"].as_u64(), Some(u64::from(std::process::id())));
    assert!(flow["process"].as_str().is_some_and(|p| !p.is_empty()));
    let named = last["findings"]
        .as_array()
        .expect("findings[]")
        .iter()
        .any(|f| {
            f["id"] == "nagle-delayed-ack"
                && f["summary"].as_str().is_some_and(|s| {
                    s.starts_with("tcp 127.0.0.1:") && s.contains("> 127.0.0.1:9101")
                })
        });
    assert!(named, "{last:#}");
}
