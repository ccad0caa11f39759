//! Failed connections against real failures: five named processes in a
//! client namespace each fail their own way a known number of times
//! (refused by an RST, SYNs unanswered, no neighbour, a router's ICMP
//! unreachable, reset after the handshake), and netlens probes a DNS
//! server of the test's for a name it does not know. Every consumer must
//! give each group its exact count under the right kind, process and
//! destination: `conns --json --failed`, the exporter, the live Failed
//! view in tmux (80x24), and a recording's `replay --json` and Failed view.

use crate::common::{self, ChildGuard, NETLENS, VethPair, enter_netns};
use common::tmux::Tmux;
use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use netlens::record::player::Player;
use netlens::record::reader::Reader;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Answers no SYN: a permanent neighbour entry with a MAC nobody has.
const BLACKHOLE: &str = "198.18.0.9";
const NOBODY_MAC: &str = "02:00:c6:12:00:99";
/// Routed through the server namespace, which has an unreachable route for
/// it and answers with ICMP host unreachable as a router does, 20 ms later
/// (a delay line): an ICMP that arrives while connect() itself still runs,
/// as over a bare veth, is read and cleared by the client's SO_ERROR
/// before netlens can see it (see ebpf/conn_owners.bpf.c).
const BEYOND: &str = "198.19.9.5";
const RESET_PORT: u16 = 7300;

/// kind, the process's name, where it connects, how many times.
/// 198.18.0.77-79 are on the link with no neighbour: ARP goes unanswered,
/// one connect each (connects sharing an unresolved neighbour race its
/// failure: a SYN sent while it is FAILED is dropped, and the connect may
/// time out instead).
const PLANS: &[(&str, &str, &str, usize)] = &[
    ("refused", "nlf-refused", "198.18.0.2:81", 5),
    ("syn-timeout", "nlf-synto", "198.18.0.9:80", 2),
    ("unreachable", "nlf-noneigh", "198.18.0.77:80", 1),
    ("unreachable", "nlf-noneigh", "198.18.0.78:80", 1),
    ("unreachable", "nlf-noneigh", "198.18.0.79:80", 1),
    ("unreachable", "nlf-icmp", "198.19.9.5:80", 3),
    ("reset", "nlf-reset", "198.18.0.2:7300", 4),
];

/// A client in the namespace named `ns` that names itself, makes `count` connects to `to` at once
/// (threads: the timeouts overlap), reads until the connection ends, and
/// prints "done".
fn client(ns: &str, name: &str, to: &str, count: usize) -> ChildGuard {
    let (host, port) = to.rsplit_once(':').unwrap();
    let script = format!(
        "import ctypes, socket, threading\n\
         ctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0)\n\
         def one():\n\
         \x20   s = socket.socket()\n\
         \x20   s.settimeout(20)\n\
         \x20   try:\n\
         \x20       s.connect(('{host}', {port}))\n\
         \x20       while s.recv(4096):\n\
         \x20           pass\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         \x20   s.close()\n\
         threads = [threading.Thread(target=one) for _ in range({count})]\n\
         for t in threads: t.start()\n\
         for t in threads: t.join()\n\
         print('done', flush=True)\n"
    );
    common::python_in(ns, &script)
}

/// A server in the namespace named `ns` that resets every connection it accepts (SO_LINGER 0).
fn resetting_server(ns: &str) -> ChildGuard {
    let script = format!(
        "import socket, struct\n\
         l = socket.socket()\n\
         l.bind(('0.0.0.0', {RESET_PORT}))\n\
         l.listen(64)\n\
         l.settimeout(60)\n\
         print('ready', flush=True)\n\
         while True:\n\
         \x20   c, _ = l.accept()\n\
         \x20   c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))\n\
         \x20   c.close()\n"
    );
    common::python_in(ns, &script)
}

fn read_line(child: &mut ChildGuard) -> String {
    let stdout = child.0.stdout.as_mut().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    line
}

/// (kind, process, destination) -> count, from a list of groups.
type Counts = HashMap<(String, String, String), u64>;

fn expected() -> Counts {
    PLANS
        .iter()
        .map(|(kind, name, to, n)| {
            (
                (kind.to_string(), name.to_string(), to.to_string()),
                *n as u64,
            )
        })
        .collect()
}

/// The TCP groups of `counts` that the plans name.
fn planned(counts: &Counts) -> Counts {
    let want = expected();
    counts
        .iter()
        .filter(|(key, _)| want.contains_key(*key))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// Sums failed[] groups of replayed samples.
fn add_groups(counts: &mut Counts, groups: &[Value]) {
    for g in groups {
        let key = (
            g["kind"].as_str().unwrap().to_string(),
            g["comm"].as_str().unwrap().to_string(),
            g["destination"].as_str().unwrap().to_string(),
        );
        *counts.entry(key).or_default() += g["count"].as_u64().unwrap();
    }
}

fn exported(text: &str) -> Counts {
    let mut counts = Counts::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("netlens_failed_total{"))
    {
        let label = |name: &str| {
            let start = line.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            line[start..].split('"').next().unwrap().to_string()
        };
        let value: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        counts.insert(
            (label("kind"), label("process"), label("destination")),
            value,
        );
    }
    counts
}

fn scrape(addr: std::net::SocketAddr) -> String {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = write!(stream, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    text
}

#[test]
fn failed_connections_are_grouped_by_kind_process_and_destination_everywhere() {
    if common::need_root(&["ip", "tmux", "python3", "iptables"]) {
        return;
    }
    let Some(tmux) = Tmux::new("failed") else {
        return;
    };
    let pair = VethPair::new("fc");
    let client_ns = pair.a.path();
    // Per-namespace knobs, gone with the namespaces: SYNs given up after
    // 3 s, ARP after 0.6 s (so no-neighbour ends before the SYN timeout).
    pair.a.sysctl("net.ipv4.tcp_syn_retries", "1");
    pair.a.sysctl(
        &format!("net.ipv4.neigh.{}.retrans_time_ms", common::DEV_A),
        "200",
    );
    pair.a.ip(&["link", "set", "lo", "up"]);
    pair.a.ip(&[
        "neigh",
        "replace",
        BLACKHOLE,
        "lladdr",
        NOBODY_MAC,
        "dev",
        common::DEV_A,
        "nud",
        "permanent",
    ]);
    pair.a.ip(&[
        "route",
        "add",
        &format!("{BEYOND}/32"),
        "via",
        &common::IP_B.to_string(),
    ]);
    pair.b.sysctl("net.ipv4.ip_forward", "1");
    // The router's unreachables are rate limited twice per destination,
    // by ip_error (5 s of burst, 1 s each) and by icmp_ratelimit, from the
    // same bucket (a limit of 0 empties it as another ICMP passes): ICMP
    // types out of icmp_ratemask never touch it.
    pair.b.sysctl("net.ipv4.icmp_ratemask", "0");
    pair.b
        .ip(&["route", "add", "unreachable", &format!("{BEYOND}/32")]);

    // A DNS server inside the client namespace, for netlens' probes.
    let (dns_tx, dns_rx) = mpsc::channel();
    let dns_ns = client_ns.clone();
    let (stop_dns_tx, stop_dns) = mpsc::channel::<()>();
    let dns_thread = std::thread::spawn(move || {
        enter_netns(&dns_ns).unwrap();
        let server = common::dns_server::DnsServer::start();
        dns_tx.send(server.addr).unwrap();
        let _ = stop_dns.recv_timeout(Duration::from_secs(90));
    });
    let dns = dns_rx.recv().unwrap().to_string();
    let dns_args = [
        "--dns-server",
        &dns,
        "--dns-probe",
        "A:nx.test",
        "--dns-timeout",
        "1s",
    ];

    let dir = common::scratch_dir("failed");
    let file = dir.join("failed.nlrec");
    let _ = std::fs::remove_file(&file);
    let mut conns = ChildGuard(
        Command::new(NETLENS)
            .args([
                "conns",
                "--json",
                "--failed",
                "--interval",
                "200ms",
                "--netns",
                &client_ns,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut said = String::new();
    BufReader::new(conns.0.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert!(said.contains("logging TCP connections"), "{said}");
    let (lines_tx, lines) = mpsc::channel::<Value>();
    let stdout = conns.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(serde_json::from_str(&line).unwrap());
        }
    });
    let mut export_args = vec!["--netns", &client_ns, "--interval", "200ms"];
    export_args.extend(dns_args);
    let exporter = common::exporter::Exporter::start(&export_args);
    let recorder = Command::new(NETLENS)
        .args([
            "record",
            "-o",
            file.to_str().unwrap(),
            "--netns",
            &client_ns,
        ])
        .args(["--interval", "200ms", "--duration", "90s", "--no-capture"])
        .args(dns_args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut recorder = ChildGuard(recorder);
    let live = format!(
        "{NETLENS} --netns {client_ns} --interval 200ms --tab sockets --no-capture {}",
        dns_args.join(" ")
    );
    tmux.start(80, 24, &dir, &live);
    tmux.wait("the Sockets tab", Duration::from_secs(20), |s| {
        s.contains("Local").then_some(())
    });
    tmux.send_keys(&["c"]);
    tmux.send_keys(&["c"]);
    tmux.wait("the Failed view", Duration::from_secs(10), |s| {
        s.contains("Destination").then_some(())
    });
    common::wait_until("a recorded sample", Duration::from_secs(60), || {
        std::fs::metadata(&file).is_ok_and(|m| m.len() > 1024)
    });

    // The failures, all at once: the timeouts (3 s) overlap.
    let _icmp_delay = super::tcp_path::delay_line_for(&pair.b.name, "-p icmp", 20);
    let mut server = resetting_server(&pair.b.name);
    assert_eq!(read_line(&mut server).trim(), "ready");
    let started = Instant::now();
    let mut clients: Vec<ChildGuard> = PLANS
        .iter()
        .map(|(_, name, to, n)| client(&pair.a.name, name, to, *n))
        .collect();
    for client in &mut clients {
        assert_eq!(read_line(client).trim(), "done");
    }
    let took = started.elapsed();

    // conns --json --failed: one line per failed connection, each named.
    let mut from_conns = Counts::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while planned(&from_conns) != expected() && Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            assert!(!line["failure"].is_null(), "not a failure: {line}");
            let key = (
                line["failure"].as_str().unwrap().to_string(),
                line["comm"].as_str().unwrap().to_string(),
                line["peer"].as_str().unwrap().to_string(),
            );
            *from_conns.entry(key).or_default() += 1;
        }
    }
    assert_eq!(
        planned(&from_conns),
        expected(),
        "conns --failed, all: {from_conns:?}"
    );

    // The exporter: one counter per group.
    let mut metrics = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        metrics = scrape(exporter.addr);
        if planned(&exported(&metrics)) == expected() && metrics.contains("dns-nxdomain") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(planned(&exported(&metrics)), expected(), "{metrics}");
    assert!(
        metrics.contains(&format!(
            "kind=\"dns-nxdomain\",process=\"-\",container=\"\",destination=\"{dns}\",question=\"nx.test A\""
        )),
        "{metrics}"
    );

    // Live, 80x24: each group's row with its count.
    let rows = |screen: &str| -> Option<String> {
        let all = PLANS.iter().all(|(kind, name, to, n)| {
            screen.lines().any(|l| {
                l.starts_with(kind)
                    && l.contains(name)
                    && l.contains(to)
                    && l.split_whitespace().any(|w| w == n.to_string())
            })
        });
        (all && screen.contains("dns-nxdomain")).then(|| screen.to_string())
    };
    let screen = tmux.wait("the failed groups", Duration::from_secs(20), rows);
    for line in screen.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    tmux.resize(40, 24);
    let narrow = tmux.wait("the narrow Failed view", Duration::from_secs(10), |s| {
        (s.contains("Destination") && !s.contains("Process")).then(|| s.to_string())
    });
    assert!(narrow.contains("refused"), "{narrow}");

    // The recording: failed[] per sample in replay --json sums to the same,
    // and the replayed Failed view lists the groups.
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill(2) on the PID of the child this test started.
    unsafe { libc::kill(recorder.pid() as i32, libc::SIGINT) };
    let status = recorder.0.wait().unwrap();
    assert!(status.success(), "netlens record: {status}");
    let replay = Command::new(NETLENS)
        .args(["replay", "--json", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(replay.status.success());
    let mut replayed = Counts::new();
    for sample in common::parse_lines(&replay.stdout) {
        add_groups(&mut replayed, sample["failed"].as_array().unwrap());
    }
    assert_eq!(
        planned(&replayed),
        expected(),
        "replay --json: {replayed:?}"
    );
    assert!(
        replayed
            .keys()
            .any(|(kind, _, to)| kind == "dns-nxdomain" && *to == dns),
        "{replayed:?}"
    );
    let mut player = Player::new(Reader::open(&file).unwrap()).unwrap();
    player.utc_offset = 0;
    let mut app = App::new(Tab::Sockets, Duration::from_millis(200), false);
    app.start_replay(player);
    assert!(app.on_key(Key::Char('G')));
    assert!(app.on_key(Key::Char('c')));
    assert!(app.on_key(Key::Char('c')));
    let view = super::conn_log_views::render(&mut app, 80, 24);
    assert!(rows(&view).is_some(), "{view}");

    println!("failures took {took:?}; conns saw {from_conns:?}");
    let _ = stop_dns_tx.send(());
    dns_thread.join().unwrap();
    drop(clients);
    drop(server);
}
