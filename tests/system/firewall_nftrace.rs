//! The nftrace tracer (netlens::collect::firewall::trace) against the
//! kernel and `nft -a list ruleset`: in two namespaces joined by a veth
//! pair, B (198.18.0.2) loads a ruleset that jumps TCP to a chain dropping
//! port 7001; a tracer in B for the flow 198.18.0.1:* ↔ 198.18.0.2:7001
//! must report the jump and the drop, by their handles, for SYNs to 7001
//! only, never for those to 7000 (another flow) nor from its own table,
//! and leave no table behind. A table of a dead netlens is removed by the
//! next start.
//!
//! Network safety: traffic only from A to B, namespaces of this test;
//! 3 + 3 connects, each bounded by 300 ms; polling bounded by 5 s.

use crate::common::{self, IP_A, IP_B, Netns, VethPair, enter_netns, ns_exec};
use netlens::collect::firewall::trace::{TraceEvent, TraceFlow, Tracer};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const RULESET: &str = "table inet filter {
    chain input {
        type filter hook input priority 0; policy accept;
        tcp dport 7000 counter accept
        tcp dport 7003 counter drop
        meta l4proto tcp jump blocked
    }
    chain blocked {
        tcp dport 7001 counter drop
    }
}
";

fn nft(ns: &Netns, args: &[&str]) -> String {
    let mut all = vec!["nft"];
    all.extend_from_slice(args);
    String::from_utf8_lossy(&ns_exec(&ns.name, &all).stdout).into_owned()
}

/// The handle of the rule whose `nft -a` line contains `text`.
fn handle_of(listing: &str, text: &str) -> u64 {
    let line = listing
        .lines()
        .find(|line| line.contains(text))
        .unwrap_or_else(|| panic!("no rule with {text:?} in:\n{listing}"));
    line.rsplit("# handle ")
        .next()
        .and_then(|handle| handle.trim().parse().ok())
        .unwrap_or_else(|| panic!("no handle in {line:?}"))
}

/// The packets counted by the rule whose `nft` line contains `text`.
fn packets_of(listing: &str, text: &str) -> u64 {
    let line = listing.lines().find(|line| line.contains(text)).unwrap();
    let count = line.split("counter packets ").nth(1).unwrap();
    count.split_whitespace().next().unwrap().parse().unwrap()
}

/// Connects from namespace `ns` to B's `port` `count` times, each attempt
/// given 300 ms (a dropped SYN is not retransmitted within it).
fn connect_from(ns: &Netns, port: u16, count: usize) {
    let path = ns.path();
    thread::spawn(move || {
        enter_netns(&path).unwrap();
        let target = SocketAddr::from((IP_B, port));
        for _ in 0..count {
            let _ = TcpStream::connect_timeout(&target, Duration::from_millis(300));
        }
    })
    .join()
    .unwrap();
}

#[test]
fn nftrace_follows_one_flow_through_the_ruleset() {
    if common::need_root(&["ip", "nft"]) {
        return;
    }
    let pair = VethPair::new("ntr");
    let ruleset = common::scratch("nftrace", "ruleset.nft");
    std::fs::write(&ruleset, RULESET).unwrap();
    nft(&pair.b, &["-f", ruleset.to_str().unwrap()]);
    let listing = nft(&pair.b, &["-a", "list", "ruleset"]);
    let jump = handle_of(&listing, "jump blocked");
    let drop = handle_of(&listing, "tcp dport 7001 counter");
    let other_port = handle_of(&listing, "tcp dport 7003");
    let accept = handle_of(&listing, "tcp dport 7000");

    let flow = TraceFlow {
        proto: libc::IPPROTO_TCP as u8,
        a: SocketAddr::from((IP_A, 0)),
        b: SocketAddr::from((IP_B, 7001)),
    };
    let (started, ready) = mpsc::channel();
    let (sent, done) = mpsc::channel::<()>();
    let path = pair.b.path();
    let tracer = thread::spawn(move || {
        enter_netns(&path).unwrap();
        let mut tracer = Tracer::start(&flow).expect("start the tracer");
        started.send(tracer.table().to_string()).unwrap();
        done.recv().unwrap();
        // Events come at once; the drops of all three SYNs, or 5 s.
        let mut events: Vec<TraceEvent> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            events.extend(tracer.poll().expect("poll"));
            if events
                .iter()
                .filter(|e| e.verdict.as_deref() == Some("drop"))
                .count()
                >= 3
            {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        events
    });
    let table = ready.recv().unwrap();
    let ours = nft(&pair.b, &["list", "table", "inet", &table]);
    eprintln!("{ours}");
    assert!(ours.contains("hook prerouting priority -350"), "{ours}");
    assert!(ours.contains("meta nftrace set 1"), "{ours}");
    connect_from(&pair.a, 7000, 3);
    connect_from(&pair.a, 7001, 3);
    sent.send(()).unwrap();
    let events = tracer.join().expect("tracer thread");
    for event in &events {
        eprintln!("{event:?}");
    }

    let listing = nft(&pair.b, &["list", "ruleset"]);
    assert!(packets_of(&listing, "tcp dport 7000") >= 3, "{listing}");
    assert!(
        !listing.contains("netlens_trace"),
        "the table outlived the tracer:\n{listing}"
    );
    assert!(!events.is_empty(), "no trace event");
    for event in &events {
        assert_eq!(
            (event.family.as_str(), event.table.as_str()),
            ("inet", "filter"),
            "{event:?}"
        );
        assert_eq!(event.hook.as_deref(), Some("input"), "{event:?}");
        assert!(
            event.handle != Some(other_port) && event.handle != Some(accept),
            "{event:?}"
        );
        if let Some(packet) = &event.packet {
            assert!(packet.starts_with("198.18.0.1:"), "{event:?}");
            assert!(packet.ends_with(" > 198.18.0.2:7001 tcp"), "{event:?}");
            assert_eq!(event.iif.as_deref(), Some(common::DEV_B), "{event:?}");
        }
    }
    let jumps: Vec<_> = events
        .iter()
        .filter(|e| e.chain == "input" && e.handle == Some(jump))
        .collect();
    let drops: Vec<_> = events
        .iter()
        .filter(|e| e.chain == "blocked" && e.handle == Some(drop))
        .collect();
    assert_eq!(jumps.len(), 3, "one jump per SYN: {events:#?}");
    assert_eq!(drops.len(), 3, "one drop per SYN: {events:#?}");
    for (jump, drop) in jumps.iter().zip(&drops) {
        assert_eq!(
            (jump.kind.as_str(), jump.verdict.as_deref()),
            ("rule", Some("jump blocked"))
        );
        assert!(
            jump.packet.is_some(),
            "the first event in a chain has the packet"
        );
        assert_eq!(
            (drop.kind.as_str(), drop.verdict.as_deref()),
            ("rule", Some("drop"))
        );
        assert_eq!(jump.id, drop.id, "one packet's events share the id");
    }
}

#[test]
fn a_dead_tracers_table_goes_at_the_next_start() {
    if common::need_root(&["ip", "nft"]) {
        return;
    }
    let ns = Netns::new("ntstale");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = format!("netlens_trace_{dead}");
    nft(&ns, &["add", "table", "inet", &stale]);
    // Pid 1 lives: its table stays.
    nft(&ns, &["add", "table", "inet", "netlens_trace_1"]);

    let flow = TraceFlow {
        proto: libc::IPPROTO_UDP as u8,
        a: SocketAddr::from((IP_A, 0)),
        b: SocketAddr::from((IP_B, 53)),
    };
    let path = ns.path();
    let (started, ready) = mpsc::channel();
    let (checked, done) = mpsc::channel::<()>();
    let tracer = thread::spawn(move || {
        enter_netns(&path).unwrap();
        let tracer = Tracer::start(&flow).expect("start the tracer");
        let second = Tracer::start(&flow).err().map(|e| e.raw_os_error());
        started.send((tracer.table().to_string(), second)).unwrap();
        done.recv().unwrap();
    });
    let (table, second) = ready.recv().unwrap();
    // EPERM when the kernel keeps the first one's table to its socket.
    assert!(
        matches!(second, Some(Some(libc::EEXIST | libc::EPERM))),
        "one tracer per process and namespace: {second:?}"
    );
    let tables = nft(&ns, &["list", "tables"]);
    checked.send(()).unwrap();
    tracer.join().unwrap();
    assert!(!tables.contains(&stale), "{tables}");
    assert!(tables.contains("table inet netlens_trace_1\n"), "{tables}");
    assert!(tables.contains(&table), "{tables}");
    let tables = nft(&ns, &["list", "tables"]);
    assert!(!tables.contains(&table), "{tables}");
    assert!(tables.contains("netlens_trace_1"), "{tables}");
}

/// `netlens nftrace` prints the same walk as `nft monitor trace` would:
/// per packet its headers, the jump and the drop with the rules' texts as
/// `nft list ruleset` prints them; nothing of the other flow; and its
/// table goes when it stops.
#[test]
fn the_nftrace_command_prints_each_rule_met() {
    if common::need_root(&["ip", "nft"]) {
        return;
    }
    let pair = VethPair::new("ntc");
    let ruleset = common::scratch("nftrace-cli", "ruleset.nft");
    std::fs::write(&ruleset, RULESET).unwrap();
    nft(&pair.b, &["-f", ruleset.to_str().unwrap()]);
    let mut child = std::process::Command::new(common::NETLENS)
        .args([
            "nftrace",
            "--netns",
            &pair.b.name,
            "--count",
            "2",
            "--duration",
            "10s",
        ])
        .args(["tcp", &IP_A.to_string(), &format!("{IP_B}:7001")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its table is in place once it says so on stderr.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut said).unwrap();
    assert!(said.contains("tracing tcp"), "{said}");
    connect_from(&pair.a, 7000, 2);
    connect_from(&pair.a, 7001, 2);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    let lines: Vec<&str> = text.lines().collect();
    let packets = lines.iter().filter(|l| l.contains(" packet: ")).count();
    assert_eq!(packets, 2, "{text}");
    for line in &lines {
        assert!(line.starts_with("trace id "), "{line}");
        assert!(line.contains(" inet filter "), "{line}");
        assert!(!line.contains("7000") && !line.contains("7003"), "{line}");
    }
    let jumps = lines
        .iter()
        .filter(|l| l.ends_with(" input rule meta l4proto tcp jump blocked (verdict jump blocked)"))
        .count();
    let drops = lines
        .iter()
        .filter(|l| l.ends_with(" blocked rule tcp dport 7001 counter drop (verdict drop)"))
        .count();
    assert_eq!((jumps, drops), (2, 2), "{text}");
    let listing = nft(&pair.b, &["list", "tables"]);
    assert!(!listing.contains("netlens_trace"), "{listing}");
}

/// `T` on a flow's screen in the live view (tmux, 80x24) traces that flow:
/// its packets' rule, as nft prints it, with the verdict; `T` again removes
/// the trace's table.
#[test]
fn t_on_the_flow_screen_traces_the_flow() {
    if common::need_root(&["ip", "nft", "python3", "tmux"]) {
        return;
    }
    let Some(tmux) = common::tmux::Tmux::new("nftrace-ui") else {
        return;
    };
    let pair = VethPair::new("ntu");
    let ruleset = common::scratch("nftrace-ui", "ruleset.nft");
    std::fs::write(&ruleset, RULESET).unwrap();
    nft(&pair.b, &["-f", ruleset.to_str().unwrap()]);
    // A server on 7000 and a client sending 100 bytes every 100 ms, for
    // at most 30 s.
    let _server = common::python_in(
        &pair.b.name,
        &format!(
            "import socket\nl=socket.socket()\nl.bind(('{IP_B}',7000))\nl.listen(1)\n\
             c,_=l.accept()\nwhile c.recv(1000): pass\n"
        ),
    );
    thread::sleep(Duration::from_millis(300));
    let _client = common::python_in(
        &pair.a.name,
        &format!(
            "import socket,time\ns=socket.create_connection(('{IP_B}',7000))\n\
             for _ in range(300):\n    s.send(b'x'*100)\n    time.sleep(0.1)\n"
        ),
    );
    let command = format!(
        "env TZ=UTC NO_COLOR=1 TERM=tmux-256color {} --config /dev/null --netns {} --tab flows",
        common::NETLENS,
        pair.b.name
    );
    tmux.session("t", 80, 24, &command);
    tmux.wait_for("t", "the flow in the table", |lines| {
        lines
            .iter()
            .any(|l| l.contains("198.18.0.2:7000") || l.contains("198.18.0.2.7000"))
    });
    tmux.keys("t", &["Enter"]);
    tmux.wait_for("t", "the flow screen", |lines| {
        lines
            .iter()
            .any(|l| l.starts_with("tcp 198.18.0.1:") && l.contains("→ 198.18.0.2:7000"))
    });
    tmux.keys("t", &["T"]);
    let screen = tmux.wait_for("t", "a traced packet's rule", |lines| {
        lines
            .iter()
            .any(|l| l.contains("inet filter input rule tcp dport 7000 counter accept"))
    });
    let text = screen.join("\n");
    assert!(text.contains("[Rules]"), "{text}");
    assert!(
        text.contains("tracing in table inet netlens_trace_"),
        "{text}"
    );
    assert!(!text.contains("7003"), "{text}");
    assert!(screen.iter().all(|l| l.chars().count() <= 80), "{text}");
    assert!(nft(&pair.b, &["list", "tables"]).contains("netlens_trace_"));
    tmux.keys("t", &["T"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while nft(&pair.b, &["list", "tables"]).contains("netlens_trace_") {
        assert!(Instant::now() < deadline, "T did not remove the table");
        thread::sleep(Duration::from_millis(100));
    }
    tmux.keys("t", &["q"]);
}
