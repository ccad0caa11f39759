//! `netlens load ...` end to end: each client against `load serve` (and the
//! HTTP client against nginx), counts compared between the two ends.
//!
//! Network safety: traffic goes to 127.0.0.1, or (root tests) between
//! namespaces this test creates, addressed from 198.18.0.0/15. Every run
//! has a duration of a few seconds at most; every server this test starts
//! has its own --duration cap and is killed by PID when the test ends.

use crate::common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// A `netlens load serve --json` child and the lines it printed so far.
struct Serve {
    _child: ChildGuard,
    port: u16,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Serve {
    fn start(netns: Option<&str>, bind: &str, extra: &[&str]) -> Serve {
        let mut command = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, NETLENS]);
                c
            }
            None => Command::new(NETLENS),
        };
        command
            .args([
                "load",
                "serve",
                "--json",
                "--port",
                "0",
                "--duration",
                "120s",
            ])
            .args(["--bind", bind])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("spawn load serve");
        let stdout = child.stdout.take().unwrap();
        let guard = ChildGuard(child);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        {
            let lines = lines.clone();
            thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    let value: Value = serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("serve printed non-JSON ({e}): {line}"));
                    if value["type"] == "listening" {
                        let _ = port_tx.send(value["port"].as_u64().unwrap() as u16);
                    } else {
                        lines.lock().unwrap().push(value);
                    }
                }
            });
        }
        let port = port_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("load serve did not say where it listens");
        Serve {
            _child: guard,
            port,
            lines,
        }
    }

    /// Waits until `done` holds for the served lines (or 5 s pass).
    fn wait_for(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let lines = self.lines.lock().unwrap().clone();
            if done(&lines) || Instant::now() > deadline {
                return lines;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Runs `netlens load ARGS` (in a namespace when given), killing it after
/// `limit`: a hang fails the test instead of blocking it.
fn netlens_load(netns: Option<&str>, args: &[&str], limit: Duration) -> Output {
    let mut command = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, NETLENS]);
            c
        }
        None => Command::new(NETLENS),
    };
    let child = command
        .arg("load")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens load");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.expect("wait for netlens load"),
        Err(_) => {
            // SAFETY: kill(2) on the PID of the child this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("netlens load {args:?} did not finish within {limit:?}");
        }
    }
}

/// The JSON lines of a successful run; the last one is the summary.
fn load_json(netns: Option<&str>, args: &[&str]) -> Vec<Value> {
    let output = netlens_load(netns, args, Duration::from_secs(30));
    assert!(
        output.status.success(),
        "netlens load {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = parse_lines(&output.stdout);
    let summary = lines.last().expect("a summary line");
    assert_eq!(summary["type"], "summary", "{summary}");
    lines
}

fn sum(lines: &[Value], kind: &str, key: &str) -> u64 {
    lines
        .iter()
        .filter(|l| l["kind"] == kind)
        .map(|l| l[key].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn tcp_byte_counts_agree_with_serve() {
    let _heavy = crate::common::heavy();
    let serve = Serve::start(None, "127.0.0.1", &[]);
    let to = format!("127.0.0.1:{}", serve.port);
    // Intervals of 250 ms in a 1 s run: a busy box that starts the run
    // late still reports some before the summary.
    let lines = load_json(
        None,
        &[
            "tcp",
            "--to",
            &to,
            "-t",
            "1",
            "--interval",
            "250ms",
            "-P",
            "2",
            "--json",
        ],
    );
    let summary = lines.last().unwrap();
    assert!(lines.len() >= 2, "an interval line before the summary");
    assert_eq!(lines[0]["type"], "interval");
    let sent = summary["sender"]["bytes"].as_u64().unwrap();
    assert!(sent > 0);
    assert_eq!(summary["receiver"]["bytes"].as_u64(), Some(sent));
    assert_eq!(summary["bytes"].as_u64(), Some(sent));
    for key in [
        "kind",
        "seconds",
        "bits_per_s",
        "retransmits",
        "packets_per_s",
        "loss_percent",
    ] {
        assert!(summary.get(key).is_some(), "summary lacks {key}: {summary}");
    }
    assert!(summary["retransmits"].is_u64());
    let served = serve.wait_for(|l| l.iter().filter(|l| l["kind"] == "tcp").count() == 2);
    assert_eq!(sum(&served, "tcp", "bytes"), sent, "{served:?}");

    // Reverse: the server sends, the client counts.
    let lines = load_json(None, &["tcp", "--to", &to, "-t", "1", "-R", "--json"]);
    let got = lines.last().unwrap()["receiver"]["bytes"].as_u64().unwrap();
    let served = serve.wait_for(|l| l.iter().any(|l| l["direction"] == "sent"));
    let sent_by_server: u64 = served
        .iter()
        .filter(|l| l["direction"] == "sent")
        .map(|l| l["bytes"].as_u64().unwrap())
        .sum();
    assert!(got > 0);
    assert_eq!(got, sent_by_server, "{served:?}");
}

#[test]
fn tcp_rate_limit_holds() {
    let _heavy = crate::common::heavy();
    let serve = Serve::start(None, "127.0.0.1", &[]);
    let to = format!("127.0.0.1:{}", serve.port);
    let lines = load_json(
        None,
        &["tcp", "--to", &to, "-t", "1", "-b", "40M", "--json"],
    );
    let bits = lines.last().unwrap()["bits_per_s"].as_f64().unwrap();
    assert!(
        (30e6..=44e6).contains(&bits),
        "asked for 40 Mbit/s, got {bits}"
    );
    // Reverse: the server keeps to the rate the client asked for.
    let lines = load_json(
        None,
        &["tcp", "--to", &to, "-t", "1", "-b", "40M", "-R", "--json"],
    );
    let bits = lines.last().unwrap()["bits_per_s"].as_f64().unwrap();
    assert!(
        (30e6..=44e6).contains(&bits),
        "asked the server for 40 Mbit/s, got {bits}"
    );
}

#[test]
fn http_request_and_byte_counts_agree_with_serve() {
    let _heavy = crate::common::heavy();
    let serve = Serve::start(None, "127.0.0.1", &["--body", "1000"]);
    let url = format!("http://127.0.0.1:{}/", serve.port);
    let lines = load_json(
        None,
        &[
            "http",
            &url,
            "-c",
            "8",
            "--threads",
            "2",
            "-t",
            "1",
            "--json",
        ],
    );
    let summary = lines.last().unwrap();
    let requests = summary["requests"].as_u64().unwrap();
    let bytes = summary["bytes"].as_u64().unwrap();
    assert!(requests > 100, "{summary}");
    for kind in ["connect", "read", "write", "timeout", "status"] {
        assert_eq!(summary["errors"][kind], 0, "{summary}");
    }
    let served = serve.wait_for(|l| sum(l, "http", "requests") >= requests);
    assert_eq!(sum(&served, "http", "requests"), requests, "{served:?}");
    assert_eq!(sum(&served, "http", "bytes_sent"), bytes);
}

/// A free TCP port on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("netlens-{tag}-{}-{}", std::process::id(), now_ns()));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

#[test]
fn http_counts_agree_with_nginx() {
    let _heavy = crate::common::heavy();
    // Not need(): nginx is in /usr/sbin, which a user's PATH may lack.
    let Some(nginx) = nginx() else {
        crate::common::need::missing("nginx");
        return;
    };
    let dir = TempDir::new("nginx");
    let port = free_port();
    let root = dir.0.display().to_string();
    std::fs::create_dir_all(dir.0.join("www")).unwrap();
    std::fs::write(dir.0.join("www/index.html"), "x".repeat(612)).unwrap();
    let conf = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {root}/nginx.pid;\n\
         error_log {root}/error.log;\nevents {{ worker_connections 1024; }}\n\
         http {{\n  log_format counts '$status $bytes_sent';\n  access_log {root}/access.log counts;\n\
         client_body_temp_path {root}/body;\n  proxy_temp_path {root}/proxy;\n\
         fastcgi_temp_path {root}/fastcgi;\n  uwsgi_temp_path {root}/uwsgi;\n  scgi_temp_path {root}/scgi;\n\
         keepalive_requests 1000000;\n\
         server {{ listen 127.0.0.1:{port}; location / {{ root {root}/www; }} }}\n}}\n"
    );
    std::fs::write(dir.0.join("nginx.conf"), conf).unwrap();
    let child = Command::new(&nginx)
        .args(["-p", &root, "-c", &format!("{root}/nginx.conf")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nginx");
    let _nginx = ChildGuard(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nginx did not start: {}",
            std::fs::read_to_string(dir.0.join("error.log")).unwrap_or_default()
        );
        thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/index.html");
    let lines = load_json(
        None,
        &[
            "http",
            &url,
            "-c",
            "8",
            "--threads",
            "2",
            "-t",
            "1",
            "--json",
        ],
    );
    let summary = lines.last().unwrap();
    let requests = summary["requests"].as_u64().unwrap();
    let bytes = summary["bytes"].as_u64().unwrap();
    assert!(requests > 100, "{summary}");
    assert_eq!(summary["errors"]["status"], 0, "{summary}");
    // nginx logs a request just after sending it: give the last ones a moment.
    let log = dir.0.join("access.log");
    let deadline = Instant::now() + Duration::from_secs(5);
    let entries = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let entries: Vec<(u16, u64)> = text
            .lines()
            .filter_map(|l| {
                let (status, sent) = l.split_once(' ')?;
                Some((status.parse().ok()?, sent.parse().ok()?))
            })
            .collect();
        if entries.len() as u64 >= requests || Instant::now() > deadline {
            break entries;
        }
        thread::sleep(Duration::from_millis(50));
    };
    // The connectivity check above made no request; the client's one
    // fail-fast connect makes none either.
    assert_eq!(entries.len() as u64, requests, "requests logged by nginx");
    assert!(entries.iter().all(|(status, _)| *status == 200));
    assert_eq!(entries.iter().map(|(_, b)| b).sum::<u64>(), bytes);
}

#[test]
fn latency_percentiles_follow_an_injected_delay() {
    let _heavy = crate::common::heavy();
    let serve = Serve::start(None, "127.0.0.1", &["--delay", "20ms"]);
    let url = format!("http://127.0.0.1:{}/", serve.port);
    let lines = load_json(None, &["http", &url, "-c", "4", "-t", "1", "--json"]);
    let summary = lines.last().unwrap();
    let latency = &summary["latency_ms"];
    let p: Vec<f64> = ["p50", "p75", "p90", "p99", "p999", "max"]
        .iter()
        .map(|k| {
            latency[*k]
                .as_f64()
                .unwrap_or_else(|| panic!("{k}: {summary}"))
        })
        .collect();
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "not monotonic: {p:?}");
    assert!(p[0] >= 20.0, "p50 {} below the 20 ms delay", p[0]);
    assert!(p[0] < 80.0, "p50 {} far above the 20 ms delay", p[0]);
    // 4 connections, each at most one answer per 20 ms, for 1 s.
    let requests = summary["requests"].as_u64().unwrap();
    assert!((40..=4 * 50 + 4).contains(&requests), "{requests} requests");

    // The same server without the delay answers well under it.
    let fast = Serve::start(None, "127.0.0.1", &[]);
    let url = format!("http://127.0.0.1:{}/", fast.port);
    let lines = load_json(None, &["http", &url, "-c", "4", "-t", "1", "--json"]);
    let p50 = lines.last().unwrap()["latency_ms"]["p50"].as_f64().unwrap();
    assert!(p50 < 10.0, "p50 {p50} without delay");
}

#[test]
fn udp_counts_agree_with_serve_on_loopback() {
    let _heavy = crate::common::heavy();
    let serve = Serve::start(None, "127.0.0.1", &[]);
    let to = format!("127.0.0.1:{}", serve.port);
    let lines = load_json(
        None,
        &[
            "udp", "--to", &to, "-t", "1", "-b", "20M", "--size", "1000", "--json",
        ],
    );
    let summary = lines.last().unwrap();
    let sent = summary["sent_packets"].as_u64().unwrap();
    // 20 Mbit/s of 1000-byte payloads for 1 s is 2500 datagrams.
    assert!((2000..=2600).contains(&sent), "{summary}");
    let received = summary["received_packets"].as_u64().unwrap();
    let served = serve.wait_for(|l| l.iter().any(|l| l["kind"] == "udp"));
    let line = served.iter().find(|l| l["kind"] == "udp").unwrap();
    assert_eq!(line["sent"].as_u64(), Some(sent));
    assert_eq!(line["packets"].as_u64(), Some(received));
    assert_eq!(summary["lost_packets"].as_u64(), Some(sent - received));
    assert!(summary["jitter_ms"].as_f64().unwrap() >= 0.0);
    assert!(summary["retransmits"].is_null());
}

/// An nftables table in a namespace that drops 10% of UDP to a port.
fn drop_ten_percent(ns: &Netns, port: u16) {
    ns_exec(&ns.name, &["nft", "add", "table", "inet", "netlens_test"]);
    ns_exec(
        &ns.name,
        &[
            "nft",
            "add chain inet netlens_test in { type filter hook input priority 0; policy accept; }",
        ],
    );
    ns_exec(
        &ns.name,
        &[
            "nft",
            &format!(
                "add rule inet netlens_test in udp dport {port} numgen random mod 100 < 10 drop"
            ),
        ],
    );
}

#[test]
fn udp_loss_is_measured_against_a_drop_rule_in_a_namespace() {
    if crate::common::need_root(&["ip", "nft", "ss"]) {
        return;
    }
    let _heavy = crate::common::heavy();
    let pair = VethPair::new("udpl");
    let serve = Serve::start(Some(&pair.b.name), &IP_B.to_string(), &[]);
    let to = format!("{IP_B}:{}", serve.port);
    let args = [
        "udp", "--to", &to, "-t", "2", "-b", "16M", "--size", "1000", "--json",
    ];
    // Without the rule nothing is lost.
    let clean = load_json(Some(&pair.a.name), &args);
    let clean = clean.last().unwrap();
    assert_eq!(clean["loss_percent"].as_f64(), Some(0.0), "{clean}");

    // The rule lives in the namespace and goes with it. This run enters the
    // namespace itself (--netns) rather than through `ip netns exec`.
    drop_ten_percent(&pair.b, serve.port);
    let mut with_netns = args.to_vec();
    with_netns.extend(["--netns", pair.a.name.as_str()]);
    let lossy = load_json(None, &with_netns);
    let summary = lossy.last().unwrap();
    let loss = summary["loss_percent"].as_f64().unwrap();
    let sent = summary["sent_packets"].as_u64().unwrap();
    assert!(sent >= 3000, "{summary}");
    // 4000 datagrams at p = 0.1: the standard deviation is 0.47 points.
    assert!(
        (7.0..=13.0).contains(&loss),
        "loss {loss}% with a 10% drop rule"
    );
    let served = serve.wait_for(|l| l.iter().filter(|l| l["kind"] == "udp").count() == 2);
    let last = served.iter().rev().find(|l| l["kind"] == "udp").unwrap();
    assert_eq!(last["sent"].as_u64(), Some(sent));
    assert_eq!(
        last["packets"].as_u64().unwrap() + last["lost"].as_u64().unwrap(),
        sent
    );
}

#[test]
fn probe_times_open_and_closed_ports() {
    let serve = Serve::start(None, "127.0.0.1", &[]);
    let to = format!("127.0.0.1:{}", serve.port);
    let lines = load_json(None, &["probe", &to, "-c", "3", "-i", "100ms", "--json"]);
    let summary = lines.last().unwrap();
    assert_eq!(lines.len(), 4, "three probes and a summary");
    assert_eq!(
        (summary["sent"].as_u64(), summary["received"].as_u64()),
        (Some(3), Some(3))
    );
    let (min, avg, max) = (
        summary["min_ms"].as_f64().unwrap(),
        summary["avg_ms"].as_f64().unwrap(),
        summary["max_ms"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= avg && avg <= max, "{summary}");
    assert!(lines[..3].iter().all(|l| l["flags"] == "SA"));

    let closed = format!("127.0.0.1:{}", free_port());
    let lines = load_json(None, &["probe", &closed, "-c", "2", "-i", "50ms", "--json"]);
    let summary = lines.last().unwrap();
    assert_eq!(summary["closed"].as_u64(), Some(2), "{summary}");
}

#[test]
fn pktgen_command_sequence_against_a_scratch_directory() {
    eprintln!(
        "NOTE: the kernel's pktgen is not available here (no /proc/net/pktgen); this checks \
         netlens' command sequence against a scratch directory standing in for it"
    );
    let dir = TempDir::new("pktgen");
    // What a device file holds after a run (Documentation/networking/pktgen.rst).
    let result = |pps: u64| {
        format!(
            "Params: count 1000  min_pkt_size: 64  max_pkt_size: 64\n\
             Result: OK: 1310(c1220+d88) usec, 1000 (64byte,0frags)\n  \
             {pps}pps 366Mb/sec (366380160bps) errors: 3\n"
        )
    };
    for file in ["pgctrl", "kpktgend_0", "kpktgend_1"] {
        std::fs::write(dir.0.join(file), "").unwrap();
    }
    std::fs::write(dir.0.join("nlv0@0"), result(700_000)).unwrap();
    std::fs::write(dir.0.join("nlv0@1"), result(600_000)).unwrap();
    let root = dir.0.display().to_string();
    let lines = load_json(
        None,
        &[
            "pktgen",
            "--proc-root",
            &root,
            "--dev",
            "nlv0",
            "--dst",
            "198.18.0.2",
            "--dst-mac",
            "02:00:C6:12:00:02",
            "--count",
            "1000",
            "--size",
            "64",
            "--delay",
            "5",
            "--threads",
            "2",
            "--json",
        ],
    );
    let read = |f: &str| std::fs::read_to_string(dir.0.join(f)).unwrap();
    assert_eq!(read("kpktgend_0"), "rem_device_all\nadd_device nlv0@0\n");
    assert_eq!(read("kpktgend_1"), "rem_device_all\nadd_device nlv0@1\n");
    let commands = "count 1000\nclone_skb 0\npkt_size 64\ndelay 5\ndst 198.18.0.2\n\
                    dst_mac 02:00:c6:12:00:02\n";
    assert_eq!(read("nlv0@0"), result(700_000) + commands);
    assert_eq!(read("nlv0@1"), result(600_000) + commands);
    assert_eq!(read("pgctrl"), "start\n");
    let summary = lines.last().unwrap();
    assert_eq!(
        summary["packets_per_s"].as_u64(),
        Some(1_300_000),
        "{summary}"
    );
    assert_eq!(summary["errors"].as_u64(), Some(6));
    assert_eq!(summary["packets"].as_u64(), Some(2000));
    assert_eq!(summary["devices"].as_array().map(Vec::len), Some(2));
}

#[test]
fn pktgen_without_the_module_says_how_to_get_it() {
    if std::path::Path::new("/proc/net/pktgen").exists() {
        eprintln!("SKIP pktgen_without_the_module_says_how_to_get_it: pktgen is loaded here");
        return;
    }
    let output = netlens_load(
        None,
        &[
            "pktgen",
            "--dev",
            "lo",
            "--dst",
            "127.0.0.1",
            "--dst-mac",
            "00:00:00:00:00:00",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    for needle in ["CONFIG_NET_PKTGEN", "modprobe pktgen", "netlens load udp"] {
        assert!(err.contains(needle), "{needle} missing: {err}");
    }
}

#[test]
fn bad_input_is_one_clear_line() {
    let closed = format!("127.0.0.1:{}", free_port());
    let closed_url = format!("http://{closed}/");
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["http", "ftp://127.0.0.1/"], 1),
        (vec!["http", "https://127.0.0.1/"], 1),
        (vec!["http", "http:///"], 1),
        (vec!["http", &closed_url, "-t", "1"], 1),
        (vec!["http", &closed_url, "-R", "-5"], 2),
        (vec!["tcp", "--to", &closed, "-t", "1"], 1),
        (vec!["tcp", "--to", "127.0.0.1", "-t", "1"], 1),
        (vec!["tcp", "--to", "127.0.0.1:5201", "-t", "2h"], 1),
        (vec!["udp", "--to", &closed, "-b", "fast"], 2),
        (vec!["udp", "--to", "0.0.0.0:9", "-t", "1"], 1),
        (vec!["udp", "--to", "255.255.255.255:9", "-t", "1"], 1),
        (vec!["probe", "127.0.0.1", "-c", "1"], 1),
        (vec!["probe", &closed, "-c", "0"], 2),
        (vec!["probe", &closed, "-c", "100", "-i", "1h"], 1),
        (
            vec![
                "pktgen",
                "--dev",
                "lo",
                "--dst",
                "x",
                "--dst-mac",
                "00:00:00:00:00:00",
            ],
            1,
        ),
        (
            vec![
                "pktgen",
                "--dev",
                "lo",
                "--dst",
                "127.0.0.1",
                "--dst-mac",
                "00:00",
            ],
            1,
        ),
        (vec!["serve", "--bind", "nope"], 1),
    ];
    for (args, code) in cases {
        let output = netlens_load(None, &args, Duration::from_secs(15));
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if code == 1 {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("netlens: "), "{args:?}: {err}");
        }
    }
}

#[test]
fn text_output_looks_like_the_tools() {
    let serve = Serve::start(None, "127.0.0.1", &[]);
    let to = format!("127.0.0.1:{}", serve.port);
    let out = netlens_load(
        None,
        &["tcp", "--to", &to, "-t", "1"],
        Duration::from_secs(20),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("Connecting to host 127.0.0.1"), "{text}");
    assert!(
        text.contains("sender") && text.contains("receiver"),
        "{text}"
    );
    assert!(text.contains("bits/sec"), "{text}");
    let url = format!("http://{to}/");
    let out = netlens_load(
        None,
        &["http", &url, "-t", "1", "-c", "2"],
        Duration::from_secs(20),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Latency Distribution") && text.contains("Requests/sec:"),
        "{text}"
    );
    let out = netlens_load(None, &["probe", &to, "-c", "1"], Duration::from_secs(20));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("flags=SA") && text.contains("round-trip min/avg/max"),
        "{text}"
    );
}

/// The library API the Load tab uses: a stop ends a long run at once.
#[test]
fn a_stop_ends_every_kind_at_once() {
    use netlens::load::serve::{ServeSpec, Server};
    use netlens::load::{Spec, Stop, http, probe, tcp, udp};
    let server = Server::start(
        &ServeSpec {
            bind: "127.0.0.1".parse().unwrap(),
            port: 0,
            delay: Duration::ZERO,
            body: 100,
        },
        Arc::new(|_, _| {}),
    )
    .unwrap();
    let to = server.addr;
    let long = Duration::from_secs(60);
    let interval = Duration::from_millis(200);
    let specs = [
        Spec::Tcp(tcp::TcpSpec {
            to,
            duration: long,
            streams: 2,
            bitrate: 0,
            reverse: false,
            interval,
        }),
        Spec::Tcp(tcp::TcpSpec {
            to,
            duration: long,
            streams: 1,
            bitrate: 0,
            reverse: true,
            interval,
        }),
        Spec::Udp(udp::UdpSpec {
            to,
            duration: long,
            bitrate: 10_000_000,
            size: 500,
            interval,
        }),
        Spec::Http(
            http::HttpSpec::new(
                &format!("http://{to}/"),
                4,
                long,
                2,
                Duration::from_secs(2),
                0.0,
                interval,
            )
            .unwrap(),
        ),
        Spec::Probe(probe::ProbeSpec {
            to,
            count: 1000,
            every: Duration::from_millis(100),
            timeout: Duration::from_secs(1),
        }),
    ];
    for spec in specs {
        let stop = Stop::new();
        let intervals = Arc::new(Mutex::new(0));
        let started = Instant::now();
        let runner = {
            let stop = stop.clone();
            let intervals = intervals.clone();
            let spec = spec.clone();
            thread::spawn(move || {
                spec.run(&stop, &|_| *intervals.lock().unwrap() += 1)
                    .map(|o| o.json)
            })
        };
        thread::sleep(Duration::from_millis(700));
        stop.stop();
        let stopped_at = Instant::now();
        let json = runner.join().unwrap().unwrap();
        assert!(
            stopped_at.elapsed() < Duration::from_secs(2),
            "{spec:?} took {:?} to stop",
            stopped_at.elapsed()
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(json["stopped"], true, "{json}");
        assert!(
            *intervals.lock().unwrap() >= 2,
            "{spec:?} reported no interval"
        );
    }
    server.stop();
}

#[test]
fn slow_answers_count_as_timeouts_and_the_run_still_ends() {
    let serve = Serve::start(None, "127.0.0.1", &["--delay", "2s"]);
    let url = format!("http://127.0.0.1:{}/", serve.port);
    let started = Instant::now();
    let lines = load_json(
        None,
        &[
            "http",
            &url,
            "-c",
            "3",
            "-t",
            "1",
            "--timeout",
            "300ms",
            "--json",
        ],
    );
    let summary = lines.last().unwrap();
    assert_eq!(summary["requests"].as_u64(), Some(0), "{summary}");
    // Each connection times out about every 300 ms for 1 s, then its last
    // request in flight times out too.
    let timeouts = summary["errors"]["timeout"].as_u64().unwrap();
    assert!(
        (6..=15).contains(&timeouts),
        "{timeouts} timeouts: {summary}"
    );
    assert!(summary["latency_ms"]["p50"].is_null());
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// The client sends only to the address in the URL: a redirect elsewhere is
/// counted as a response, never followed.
#[test]
fn http_never_follows_a_redirect() {
    use std::io::{ErrorKind, Read, Write};
    let elsewhere = std::net::TcpListener::bind("127.0.0.2:0").expect("127.0.0.2 on lo");
    elsewhere.set_nonblocking(true).unwrap();
    let location = format!("http://{}/", elsewhere.local_addr().unwrap());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let server = thread::spawn(move || {
        let answer = format!(
            "HTTP/1.1 301 Moved Permanently\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut workers = Vec::new();
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    let answer = answer.clone();
                    workers.push(thread::spawn(move || {
                        stream.set_nonblocking(false).unwrap();
                        stream
                            .set_read_timeout(Some(Duration::from_secs(5)))
                            .unwrap();
                        let mut buffer = [0u8; 4096];
                        while let Ok(n) = stream.read(&mut buffer) {
                            if n == 0 {
                                break;
                            }
                            let requests =
                                buffer[..n].windows(4).filter(|w| w == b"\r\n\r\n").count();
                            for _ in 0..requests {
                                if stream.write_all(answer.as_bytes()).is_err() {
                                    return;
                                }
                            }
                        }
                    }));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if workers.len() >= 3 && workers.iter().all(|w| w.is_finished()) {
                        break;
                    }
                    thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("accept: {e}"),
            }
        }
    });
    let url = format!("http://127.0.0.1:{port}/");
    let lines = load_json(
        None,
        &[
            "http",
            &url,
            "-c",
            "2",
            "--threads",
            "1",
            "-t",
            "1",
            "--json",
        ],
    );
    let summary = lines.last().unwrap();
    assert!(summary["requests"].as_u64().unwrap() > 10, "{summary}");
    server.join().unwrap();
    match elsewhere.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the redirect target was contacted: {other:?}"),
    }
}

/// Issue 24: `load tcp` against a real `iperf3 -s` speaks iperf3's protocol
/// (found by its answer to the cookie) and reports the byte counts the
/// iperf3 server reports itself (`iperf3 -s -J -1`), forward and reverse.
/// Both ends run in a namespace this test creates, on 198.18.77.1.
#[test]
fn tcp_against_a_real_iperf3_server_agrees_with_its_report() {
    if crate::common::need_root(&["ip", "iperf3"]) {
        return;
    }
    let _heavy = crate::common::heavy();
    let ns = Netns::new("exporter-iperf3");
    ns.ip(&["addr", "add", "198.18.77.1/32", "dev", "lo"]);
    ns.ip(&["link", "set", "lo", "up"]);
    for (extra, reverse) in [(&["-P", "2"][..], false), (&["-R"][..], true)] {
        let server = Command::new("ip")
            .args(["netns", "exec", &ns.name, "iperf3", "-s", "-1", "-J"])
            .args(["-B", "198.18.77.1", "-p", "5201"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn iperf3 -s");
        let mut server = ChildGuard(server);
        let deadline = Instant::now() + Duration::from_secs(5);
        while ns_exec(&ns.name, &["ss", "-Hltn", "sport = :5201"])
            .stdout
            .is_empty()
        {
            assert!(Instant::now() < deadline, "iperf3 -s did not listen");
            thread::sleep(Duration::from_millis(50));
        }
        let mut args = vec!["tcp", "--to", "198.18.77.1:5201", "-t", "2", "--json"];
        args.extend_from_slice(extra);
        let lines = load_json(Some(&ns.name), &args);
        let summary = lines.last().unwrap();
        assert_eq!(summary["server"], "iperf3", "{summary}");
        // iperf3 -s -1 prints its JSON and exits once the test is done.
        let mut report = String::new();
        std::io::Read::read_to_string(server.0.stdout.as_mut().unwrap(), &mut report).unwrap();
        let _ = server.0.wait();
        let report: Value = serde_json::from_str(&report).expect("iperf3 -J output");
        let end = &report["end"];
        if reverse {
            // The server sent; netlens received.
            let sent = end["sum_sent"]["bytes"].as_u64().unwrap();
            assert!(sent > 0, "{end}");
            assert_eq!(summary["sender"]["bytes"].as_u64(), Some(sent), "{summary}");
            let received = summary["receiver"]["bytes"].as_u64().unwrap();
            assert!(received > 0 && received <= sent, "{summary}");
        } else {
            let received = end["sum_received"]["bytes"].as_u64().unwrap();
            assert!(received > 0, "{end}");
            assert_eq!(
                summary["receiver"]["bytes"].as_u64(),
                Some(received),
                "{summary}"
            );
            assert_eq!(summary["bytes"].as_u64(), Some(received));
            assert!(summary["sender"]["bytes"].as_u64().unwrap() >= received);
            assert_eq!(report["start"]["test_start"]["num_streams"], 2);
        }
    }
}
