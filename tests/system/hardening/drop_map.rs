//! Issue 40, part 5: the eBPF drop map (16,384 keys) was shared by every
//! namespace and filtered in user space, so another namespace's drops
//! filled it and the watched namespace's Drops tab said "40213 drops not
//! counted" about its own ten sites. Here a noisy namespace floods 17,500
//! UDP sockets with a tiny receive buffer each (a drop key per port, more
//! than the map holds) while the watched namespace drops datagrams to a
//! closed port (NO_SOCKET) and on an iptables rule (NETFILTER_DROP). Each
//! entry point (tp_btf, tp_btf without rx_sk, the classic tracepoint) must
//! count the watched drops within 2% of the kernel's counters and report
//! none uncounted; the host view, which counts every namespace, must show
//! the map did fill. Namespaces nld-PID-*, loopback only, bounded floods.

use crate::common::bpf_support::{BpfNs, assert_agrees, counted, holds_bpf_attachment, rows};
use crate::common::{ChildGuard, NETLENS, now_unix, parse_lines};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Receiving sockets in the noisy namespace: more drop keys than the
/// kernel map's 16,384, under the 20,000 descriptor limit.
const NOISY_SOCKETS: u32 = 17_500;
const NOISY_BASE_PORT: u32 = 33_000;
/// The flood's bounds, should "stop" not come: rounds over every socket
/// (about 0.3 s each), and seconds.
const FLOOD_ROUNDS: u32 = 100;
const FLOOD_SECONDS: u32 = 15;
const CLOSED_PORT: u16 = 7102;
const RULE_PORT: u16 = 7101;
/// Datagrams the watched namespace sends to each of its two ports.
const WATCHED_DROPS: u32 = 600;

/// Binds the sockets (SO_RCVBUF at its minimum, never read), says
/// "ready", waits for a line, sends 8 datagrams to each (a few fill its
/// buffer, the rest are dropped), says "full", then one to each a round,
/// every datagram a drop, until a line on stdin, FLOOD_ROUNDS or
/// FLOOD_SECONDS.
const FLOOD: &str = r#"
import resource, select, socket, sys, time
count, base, rounds, seconds = map(int, sys.argv[1:5])
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (min(count + 64, hard), hard))
ports = range(base, base + count)
sinks = []
for port in ports:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    s.bind(("127.0.0.1", port))
    sinks.append(s)
out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("ready", flush=True)
sys.stdin.readline()
end = time.monotonic() + seconds
sent = 0
for r in range(rounds):
    for port in ports:
        for _ in range(8 if r == 0 else 1):
            out.sendto(b"x" * 64, ("127.0.0.1", port))
            sent += 1
    if r == 0:
        print("full", flush=True)
    if time.monotonic() > end or select.select([sys.stdin], [], [], 0)[0]:
        break
print("sent", sent, r + 1, flush=True)
"#;

/// Paced: each of `count` turns sends one datagram to the closed port and
/// one to the dropped port, over about `seconds` (2: well within the
/// flood).
const WATCHED: &str = r#"
import socket, sys, time
closed, rule, count, seconds = map(int, sys.argv[1:5])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(count):
    s.sendto(b"y" * 32, ("127.0.0.1", closed))
    s.sendto(b"y" * 32, ("127.0.0.1", rule))
    time.sleep(seconds / count)
"#;

/// A `snapshot --json` of the drops, with NETLENS_BPF_ATTACH=`attach`
/// ("tp_btf" is the default), in `netns` (None: the host's). It ends by itself
/// after 20 samples, so a failed test leaves it to finish; `finish` ends it
/// sooner.
fn drops_snapshot(netns: Option<&str>, attach: &str) -> Child {
    let mut command = Command::new(NETLENS);
    command.args([
        "snapshot",
        "--json",
        "--count",
        "20",
        "--interval",
        "1s",
        "--no-capture",
        "--section",
        "drops",
    ]);
    if let Some(name) = netns {
        command.arg(format!("--netns={name}"));
    }
    command
        .env("NETLENS_BPF_ATTACH", attach)
        .env("NETLENS_DEBUG_BPF", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens")
}

/// Waits (at most 20 s) until every snapshot holds its attached program.
fn wait_attached(views: &[&Child]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !views.iter().all(|v| holds_bpf_attachment(v.id())) {
        assert!(Instant::now() < deadline, "netlens never attached");
        thread::sleep(Duration::from_millis(50));
    }
}

/// The next line the flood prints (empty at its end).
fn said(lines: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    lines.read_line(&mut line).expect("the flood's output");
    line.trim().to_string()
}

/// The samples and stderr of a snapshot, ended (SIGTERM, which it takes as
/// a clean stop) once it printed a sample taken after `done`: the drops
/// were all sent by then, and the rest of its 20 samples would only hold
/// the heavy tests' turn.
fn finish(mut view: Child, done: f64) -> (Vec<Value>, String) {
    let stdout = view.stdout.take().expect("piped stdout");
    let (past, is_past) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut text = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let t = serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|sample| sample["t"].as_f64());
            text.extend_from_slice(line.as_bytes());
            text.push(b'\n');
            if t.is_some_and(|t| t > done) {
                let _ = past.send(());
            }
        }
        text
    });
    // Else it ends by itself within its 20 samples.
    if is_past.recv_timeout(Duration::from_secs(25)).is_ok() {
        unsafe { libc::kill(view.id() as i32, libc::SIGTERM) };
    }
    let out = view.wait_with_output().expect("wait for netlens");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "netlens failed: {stderr}");
    (parse_lines(&reader.join().expect("the reader")), stderr)
}

fn lost(sample: &Value) -> u64 {
    sample["drops"]["lost"].as_u64().expect("drops.lost")
}

/// The flood, started in `noisy` with its sockets bound; a line on its
/// stdin starts it, the next stops it.
fn bind_flood(noisy: &BpfNs) -> (ChildGuard, BufReader<ChildStdout>) {
    let numbers = [NOISY_SOCKETS, NOISY_BASE_PORT, FLOOD_ROUNDS, FLOOD_SECONDS];
    let mut flood = ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &noisy.name, "python3", "-c", FLOOD])
            .args(numbers.map(|n| n.to_string()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the flood"),
    );
    let mut said_by = BufReader::new(flood.0.stdout.take().unwrap());
    assert_eq!(said(&mut said_by), "ready", "the flood's sockets");
    (flood, said_by)
}

/// What the kernel counted of the watched namespace's drops.
struct Kernel {
    no_ports: u64,
    rule_packets: u64,
}

/// The watched namespace's drops, sent while the flood runs, and the
/// kernel's counts of them.
fn watched_drops(watched: &BpfNs, flood: &mut ChildGuard) -> Kernel {
    let no_ports = watched.counter("Udp", "NoPorts");
    let numbers = [CLOSED_PORT, RULE_PORT].map(|n| n.to_string());
    let count = WATCHED_DROPS.to_string();
    watched.exec(&[
        "python3",
        "-c",
        WATCHED,
        &numbers[0],
        &numbers[1],
        &count,
        "2",
    ]);
    assert!(
        flood.0.try_wait().unwrap().is_none(),
        "the flood ended before the watched drops"
    );
    let rule = watched.exec(&["iptables", "-L", "INPUT", "-v", "-x", "-n"]);
    let rule_packets = rule
        .lines()
        .find(|l| l.contains("DROP") && l.contains(&format!("dpt:{RULE_PORT}")))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("the DROP rule's packet counter");
    Kernel {
        no_ports: watched.counter("Udp", "NoPorts") - no_ports,
        rule_packets,
    }
}

/// A view of the watched namespace through entry point `attach`: its
/// counts agree with the kernel's, none uncounted, no other namespace.
fn check_view(view: Child, attach: &str, watched: &str, kernel: &Kernel, done: f64) {
    let (samples, stderr) = finish(view, done);
    assert!(stderr.contains(&format!("attached ({attach})")), "{stderr}");
    let last = samples.last().expect("samples");
    assert!(last["t"].as_f64().unwrap() > done, "{attach}: ended early");
    let no_socket = counted(&samples, watched, "NO_SOCKET");
    assert_agrees(
        &format!("{attach} NO_SOCKET"),
        no_socket,
        kernel.no_ports,
        500,
    );
    let netfilter = counted(&samples, watched, "NETFILTER_DROP");
    let what = format!("{attach} NETFILTER_DROP");
    assert_agrees(&what, netfilter, kernel.rule_packets, 500);
    let uncounted: Vec<u64> = samples.iter().map(lost).collect();
    assert!(
        uncounted.iter().all(|&n| n == 0),
        "{attach}: lost {uncounted:?}"
    );
    let foreign: Vec<Value> = rows(last)
        .into_iter()
        .filter(|r| r["netns"] != watched)
        .collect();
    assert!(foreign.is_empty(), "{attach}: other rows {foreign:?}");
}

// A panic leaves the snapshots to end by themselves (20 samples).
#[allow(clippy::zombie_processes)]
#[test]
fn another_namespaces_drops_cannot_crowd_out_the_watched_ones() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "iptables", "python3"]) else {
        return;
    };
    // The classic tracepoint attaches through tracefs.
    let _ = Command::new("sh")
        .args([
            "-c",
            "mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing",
        ])
        .status();
    let pid = std::process::id();
    let watched = BpfNs::named(format!("nld-{pid}-w"));
    let noisy = BpfNs::named(format!("nld-{pid}-n"));
    let port = RULE_PORT.to_string();
    let rule = ["-p", "udp", "--dport", &port, "-j", "DROP"];
    watched.exec(&[&["iptables", "-A", "INPUT"][..], &rule[..]].concat());
    let (mut flood, mut flood_said) = bind_flood(&noisy);
    let attaches = ["tp_btf", "tp_btf3", "tracepoint"];
    // The default, then each fallback forced (NETLENS_BPF_ATTACH).
    let views = attaches.map(|a| drops_snapshot(Some(&watched.name), a));
    let host = drops_snapshot(None, "tp_btf");
    wait_attached(&[&views[0], &views[1], &views[2], &host]);

    let started = Instant::now();
    writeln!(flood.0.stdin.as_mut().unwrap(), "go").unwrap();
    assert_eq!(said(&mut flood_said), "full", "the flood's first round");
    let first_round = started.elapsed();
    let kernel = watched_drops(&watched, &mut flood);
    let done = now_unix();
    writeln!(flood.0.stdin.as_mut().unwrap(), "stop").unwrap();
    eprintln!(
        "flood: {} (packets, rounds) in {:.1} s, the first round in {:.2} s",
        said(&mut flood_said),
        started.elapsed().as_secs_f64(),
        first_round.as_secs_f64()
    );
    drop(flood);

    let (host_samples, _) = finish(host, done);
    let host_lost = lost(host_samples.last().expect("host samples"));
    eprintln!("host view (every namespace): {host_lost} drops not counted");
    assert!(host_lost > 0, "the flood never filled the kernel map");
    for (view, attach) in views.into_iter().zip(attaches) {
        check_view(view, attach, &watched.name, &kernel, done);
    }
}
