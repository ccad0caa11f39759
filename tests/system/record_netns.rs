//! Recording for real, in namespaces with known traffic: `replay --json`
//! prints exactly what `snapshot --json` printed live, flows included; the
//! recorded packets show in the replay's Flows tab; a recorder killed with
//! SIGKILL leaves a file that replays; SIGINT closes it cleanly.

use crate::common;

use common::*;
use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn replay(args: &[&str]) -> std::process::Output {
    Command::new(NETLENS)
        .arg("replay")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn netlens")
}

#[test]
fn replay_json_equals_the_live_snapshot_json() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let pair = VethPair::new("rec");
    let path = crate::common::scratch("record-ns", "live.nlrec");
    let (a, b) = (pair.a.path(), pair.b.path());
    let traffic = std::thread::spawn(move || {
        udp_traffic(
            &a,
            IP_A,
            &b,
            SocketAddrV4::new(IP_B, 9000),
            1500,
            200,
            1000.0,
        )
    });
    let live = Command::new(NETLENS)
        .args(["snapshot", "--json", "--count", "5", "--interval", "250ms"])
        .args(["--netns", &pair.b.name, "--record", path.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let result = traffic.join().unwrap();
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    assert!(result.received > 0);
    let replayed = replay(&["--json", path.to_str().unwrap()]);
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let live_text = String::from_utf8(live.stdout).unwrap();
    let replay_text = String::from_utf8(replayed.stdout).unwrap();
    assert_eq!(live_text.lines().count(), 5);
    // Byte for byte: same samples, same rates, same findings.
    assert_eq!(replay_text, live_text);
    // And the traffic is in it: veth rx rate near 1000 pps on the peer.
    let samples = parse_lines(replay_text.as_bytes());
    let peak = samples
        .iter()
        .filter_map(|s| opt_f64(must_iface(s, DEV_B), "rx_packets_per_s"))
        .fold(0.0, f64::max);
    assert!(peak > 500.0, "peak rx {peak} pps");
}

fn wait_for_samples(path: &std::path::Path, samples: u64) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let info = replay(&["--info", path.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&info.stdout).to_string();
        let count = text
            .lines()
            .find_map(|l| l.strip_prefix("samples:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
        if count >= samples {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the recorder never wrote {samples} samples");
}

#[test]
fn sigkill_leaves_a_replayable_file_and_sigint_closes_cleanly() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let pair = VethPair::new("reck");
    let (a, b) = (pair.a.path(), pair.b.path());
    // Packets to record while both recorders run (6 s at most).
    let traffic = std::thread::spawn(move || {
        udp_traffic(
            &a,
            IP_A,
            &b,
            SocketAddrV4::new(IP_B, 9000),
            1200,
            100,
            200.0,
        )
    });
    for (signal, tag) in [(libc::SIGKILL, "kill"), (libc::SIGINT, "int")] {
        let path = crate::common::scratch("record-ns", &format!("{tag}.nlrec"));
        let child = Command::new(NETLENS)
            .args([
                "record",
                "-o",
                path.to_str().unwrap(),
                "--interval",
                "100ms",
            ])
            .args(["--netns", &pair.b.name, "--duration", "30s"])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut guard = ChildGuard(child);
        wait_for_samples(&path, 8);
        // SAFETY: kill(2) on the child this test started.
        assert_eq!(unsafe { libc::kill(guard.pid() as libc::pid_t, signal) }, 0);
        let status = guard.0.wait().unwrap();
        let info = replay(&["--info", path.to_str().unwrap()]);
        let info_text = String::from_utf8_lossy(&info.stdout).to_string();
        assert!(info.status.success(), "{info_text}");
        let json = replay(&["--json", path.to_str().unwrap()]);
        assert!(
            json.status.success(),
            "{}",
            String::from_utf8_lossy(&json.stderr)
        );
        let samples = parse_lines(&json.stdout);
        assert!(samples.len() >= 7, "{} samples replayed", samples.len());
        assert!(samples.iter().all(|s| iface(s, DEV_B).is_some()));
        assert!(info_text.contains("packets ("), "{info_text}");
        if signal == libc::SIGKILL {
            assert!(info_text.contains("not closed"), "{info_text}");
        } else {
            assert!(status.success(), "SIGINT is a clean stop: {status}");
            assert!(info_text.contains("closed cleanly"), "{info_text}");
            assert!(info_text.contains("damage:     none"), "{info_text}");
        }
    }
    assert!(traffic.join().unwrap().received > 0);
}

/// One TCP connection from namespace `a` (198.18.0.1) to a server in
/// namespace `b` (198.18.0.2:9100): `messages` writes of 100 bytes, 10 ms
/// apart, each answered with 10 bytes. Bounded: `messages` round trips,
/// 5 s timeouts. Returns the client's port.
fn tcp_conversation(a: String, b: String, messages: u32) -> u16 {
    let (ready, is_ready) = std::sync::mpsc::channel();
    let server = std::thread::spawn(move || {
        enter_netns(&b).unwrap();
        let listener = TcpListener::bind(SocketAddrV4::new(IP_B, 9100)).unwrap();
        ready.send(()).unwrap();
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buffer = [0u8; 100];
        for _ in 0..messages {
            stream.read_exact(&mut buffer).unwrap();
            stream.write_all(&buffer[..10]).unwrap();
        }
    });
    is_ready.recv().unwrap();
    let client = std::thread::spawn(move || {
        enter_netns(&a).unwrap();
        let server = SocketAddr::V4(SocketAddrV4::new(IP_B, 9100));
        let mut stream = TcpStream::connect_timeout(&server, Duration::from_secs(5)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let port = stream.local_addr().unwrap().port();
        let mut answer = [0u8; 10];
        for _ in 0..messages {
            stream.write_all(&[b'q'; 100]).unwrap();
            stream.read_exact(&mut answer).unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
        port
    });
    let port = client.join().unwrap();
    server.join().unwrap();
    port
}

/// Whether the kernel counted flows on the namespace's two interfaces
/// (lo and the veth) in a JSON sample.
fn counting_both(sample: &serde_json::Value) -> bool {
    sample["capture"]["kernel_counts"]["interfaces"]
        .as_u64()
        .is_some_and(|n| n >= 2)
}

/// The flow `198.18.0.1:port > 198.18.0.2:9100` in a JSON sample.
fn tcp_flow(sample: &serde_json::Value, port: u16) -> Option<&serde_json::Value> {
    let src = format!("198.18.0.1:{port}");
    sample["flows"]
        .as_array()?
        .iter()
        .find(|f| f["src"] == src.as_str() && f["dst"] == "198.18.0.2:9100")
}

#[test]
fn recorded_tcp_flows_and_packets_replay_as_seen_live() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let pair = VethPair::new("rectcp");
    let path = crate::common::scratch("record-ns", "tcp.nlrec");
    let live = Command::new(NETLENS)
        .args(["snapshot", "--json", "--count", "12", "--interval", "400ms"])
        .args(["--netns", &pair.b.name, "--record", path.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = ChildGuard(live);
    // Capture and the kernel's flow counter are up on both of the
    // namespace's interfaces before the connection: loading eBPF takes a
    // while on a busy box, and the counter attaches over ticks.
    let mut out = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let mut stdout = Vec::new();
    loop {
        let start = stdout.len();
        let read = std::io::BufRead::read_until(&mut out, b'\n', &mut stdout).unwrap();
        assert!(read > 0, "the counter never attached to both interfaces");
        let sample: serde_json::Value = serde_json::from_slice(&stdout[start..]).unwrap();
        if counting_both(&sample) {
            break;
        }
    }
    let port = tcp_conversation(pair.a.path(), pair.b.path(), 100);
    out.read_to_end(&mut stdout).unwrap();
    let status = child.0.wait().unwrap();
    assert!(status.success(), "snapshot failed: {status}");
    let replayed = replay(&["--json", path.to_str().unwrap()]);
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    // Byte for byte, flows[] included.
    assert_eq!(
        String::from_utf8_lossy(&replayed.stdout),
        String::from_utf8_lossy(&stdout)
    );
    let samples = parse_lines(&replayed.stdout);
    let flow = samples
        .iter()
        .rev()
        .find_map(|s| tcp_flow(s, port))
        .unwrap_or_else(|| panic!("no flow from port {port} in the replay"));
    // 100 requests and 100 answers, each one segment, plus the handshake.
    assert!(flow["packets"].as_u64().unwrap() >= 203, "{flow}");
    assert!(flow["bytes"].as_u64().unwrap() >= 100 * 110, "{flow}");
    assert_eq!(flow["proto"], "tcp");

    let info = replay(&["--info", path.to_str().unwrap()]);
    let info = String::from_utf8_lossy(&info.stdout).to_string();
    assert!(info.contains("capture:    on, packet headers"), "{info}");
    let kept: u64 = info
        .lines()
        .find_map(|l| l.trim().strip_prefix("packets "))
        .and_then(|l| l.split(", ").nth(2))
        .and_then(|n| n.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no packet count in {info}"));
    assert!(kept >= 203, "{info}");

    // The replay's Flows tab lists the conversation's packets, and the
    // replayed flow table holds the flow.
    let player = Player::new(Reader::open(&path).unwrap()).unwrap();
    let mut app = App::new(Tab::Flows, Duration::from_secs(1), false);
    app.start_replay(player);
    app.on_key(Key::Char('G'));
    let needle = format!("198.18.0.1.{port} > 198.18.0.2.9100");
    let lines: Vec<&str> = app.flows.packets.iter().map(|p| p.line.as_str()).collect();
    let seen = lines.iter().filter(|l| l.contains(&needle)).count();
    assert!(seen >= 100, "{seen} of the requests listed: {lines:?}");
    let table = app.flows.capture.as_ref().unwrap().summary();
    let src = format!("198.18.0.1:{port}");
    assert!(
        table.flows.iter().any(|f| f.src == src && f.packets >= 203),
        "{:?}",
        table.flows
    );
}

#[test]
fn headless_record_captures_and_no_capture_records_no_packets() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let pair = VethPair::new("recrec");
    let path = crate::common::scratch("record-ns", "headless.nlrec");
    let recorder = Command::new(NETLENS)
        .args(["record", "-o", path.to_str().unwrap(), "--duration", "6s"])
        .args(["--interval", "500ms", "--netns", &pair.b.name])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut recorder = ChildGuard(recorder);
    // Capture and the kernel's flow counter are up on both interfaces
    // (loading eBPF takes a while on a busy box, and the counter attaches
    // over ticks) once a recorded sample says so.
    crate::common::wait_until(
        "the counter on both interfaces",
        Duration::from_secs(20),
        || {
            let json = replay(&["--json", path.to_str().unwrap()]);
            parse_lines(&json.stdout).last().is_some_and(counting_both)
        },
    );
    let port = tcp_conversation(pair.a.path(), pair.b.path(), 50);
    assert!(recorder.0.wait().unwrap().success());
    let json = replay(&["--json", path.to_str().unwrap()]);
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let samples = parse_lines(&json.stdout);
    let flow = samples.iter().rev().find_map(|s| tcp_flow(s, port));
    assert!(
        flow.is_some_and(|f| f["packets"].as_u64().unwrap() >= 103),
        "{flow:?}"
    );
    let info = replay(&["--info", path.to_str().unwrap()]);
    let info = String::from_utf8_lossy(&info.stdout).to_string();
    assert!(info.contains("packets ("), "{info}");

    let quiet = crate::common::scratch("record-ns", "nocapture.nlrec");
    let status = Command::new(NETLENS)
        .args(["record", "-o", quiet.to_str().unwrap(), "--duration", "1s"])
        .args([
            "--interval",
            "250ms",
            "--netns",
            &pair.b.name,
            "--no-capture",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let info = replay(&["--info", quiet.to_str().unwrap()]);
    let info = String::from_utf8_lossy(&info.stdout).to_string();
    assert!(!info.contains("packets ("), "{info}");
    assert!(!info.contains("payloads ("), "{info}");
    assert!(info.contains("capture:    off"), "{info}");
    let json = replay(&["--json", quiet.to_str().unwrap()]);
    assert!(
        parse_lines(&json.stdout)
            .iter()
            .all(|s| s["flows"].is_null())
    );
}
