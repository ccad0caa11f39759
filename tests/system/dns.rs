//! DNS: the real binary probing a real DNS server started by the test on
//! loopback (never any other server), passive matching from a real capture
//! on lo (root), the resolver-config parsers, and the exporter's histogram.

use crate::common;

use common::dns_server::{DnsServer, SLOW, send_query};
use common::*;
use hickory_proto::rr::RecordType;
use netlens::dns::config::{count_hosts, is_stub, nsswitch_hosts, parse_resolv_conf, stub_label};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every DNS result of `key` ("probes" or "passive") over all samples.
fn results(samples: &[Value], key: &str) -> Vec<Value> {
    samples
        .iter()
        .flat_map(|s| s["dns"][key].as_array().cloned().unwrap_or_default())
        .collect()
}

fn of<'a>(all: &'a [Value], name: &str) -> Vec<&'a Value> {
    all.iter().filter(|r| r["name"] == name).collect()
}

fn findings(samples: &[Value], id: &str) -> Vec<String> {
    samples
        .iter()
        .flat_map(|s| s["findings"].as_array().cloned().unwrap_or_default())
        .filter(|f| f["id"] == id)
        .map(|f| format!("{} | {}", f["summary"], f["hint"]))
        .collect()
}

/// `snapshot --json` of the DNS section and findings, probing `probes` at
/// the test's server only; (count, interval, DNS timeout).
fn probe_snapshot(
    server: &str,
    (count, interval, timeout): (&str, &str, &str),
    probes: &[&str],
) -> Vec<Value> {
    let mut args = vec![
        "--count",
        count,
        "--interval",
        interval,
        "--no-capture",
        "--section",
        "dns,findings",
        "--dns-server",
        server,
        "--dns-timeout",
        timeout,
    ];
    for probe in probes {
        args.extend(["--dns-probe", probe]);
    }
    snapshot(&args)
}

#[test]
fn probes_measure_latency_outcomes_and_timeouts_of_our_server_only() {
    let server = DnsServer::start();
    let addr = server.addr.to_string();
    let samples = probe_snapshot(
        &addr,
        ("3", "1s", "700ms"),
        &["fast.test", "A:slow.test", "nx.test", "198.18.0.9"],
    );
    assert_eq!(samples.len(), 3);
    let probes = results(&samples, "probes");
    // Nothing but our server was asked, and it saw every probe.
    assert!(!probes.is_empty());
    for p in &probes {
        assert_eq!(p["server"], addr.as_str(), "{p}");
    }
    let seen = server.seen();
    assert!(seen.len() >= probes.len(), "{seen:?} vs {probes:?}");

    let fast = of(&probes, "fast.test");
    assert!(!fast.is_empty());
    for p in &fast {
        assert_eq!(p["outcome"], "ok");
        assert_eq!(p["qtype"], "A");
        assert_eq!(p["answers"][0], "198.18.0.10");
        let ms = p["latency_ms"].as_f64().unwrap();
        assert!(ms < 150.0, "fast.test took {ms} ms");
    }
    let slow = of(&probes, "slow.test");
    assert!(!slow.is_empty());
    let delay = SLOW.as_secs_f64() * 1000.0;
    for p in &slow {
        assert_eq!(p["outcome"], "ok");
        let ms = p["latency_ms"].as_f64().unwrap();
        assert!(
            ms >= delay - 5.0 && ms < delay + 400.0,
            "slow.test: {ms} ms for a {delay} ms delay"
        );
    }
    for p in of(&probes, "nx.test") {
        assert_eq!(p["outcome"], "nxdomain");
        assert!(p["latency_ms"].is_number());
    }
    let ptr = of(&probes, "9.0.18.198.in-addr.arpa");
    assert!(!ptr.is_empty(), "the PTR probe timed out within the run");
    for p in &ptr {
        assert_eq!(
            (&p["outcome"], &p["qtype"]),
            (&"timeout".into(), &"PTR".into())
        );
        assert!(p["latency_ms"].is_null());
    }
    // Per-server figures count the timeouts.
    let timeouts: u64 = samples
        .iter()
        .flat_map(|s| s["dns"]["servers"].as_array().cloned().unwrap_or_default())
        .filter(|s| s["server"] == addr.as_str() && s["source"] == "probe")
        .map(|s| s["timeouts"].as_u64().unwrap())
        .sum();
    assert_eq!(timeouts, ptr.len() as u64);

    let timeout = findings(&samples, "dns-timeout");
    assert!(!timeout.is_empty(), "no dns-timeout in {samples:?}");
    assert!(
        timeout[0].contains(&addr) && timeout[0].contains("PTR 198.18.0.9"),
        "{timeout:?}"
    );
    let slow_found = findings(&samples, "dns-slow");
    assert!(!slow_found.is_empty(), "no dns-slow in {samples:?}");
    assert!(
        slow_found
            .iter()
            .any(|f| f.contains(&addr) && f.contains("A slow.test")),
        "{slow_found:?}"
    );
    assert!(slow_found[0].contains("dnsmasq"));
    // The config block is there, read from the real files.
    assert!(samples[0]["dns"]["config"]["nameservers"].is_array());
    assert_eq!(samples[0]["dns"]["probe_servers"][0], addr.as_str());
}

/// A server that never answers yields one timeout per timeout period, so
/// most intervals have no result at all: the finding still holds in every
/// sample once the first timeout came, over the window it names.
#[test]
fn dns_timeout_holds_between_the_timeouts_of_a_dead_server() {
    let server = DnsServer::start();
    let addr = server.addr.to_string();
    // The test's server never answers PTR.
    let samples = probe_snapshot(&addr, ("10", "300ms", "1s"), &["198.18.0.9"]);
    let has_timeout: Vec<bool> = samples
        .iter()
        .map(|s| {
            s["findings"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f["id"] == "dns-timeout"))
        })
        .collect();
    let first = has_timeout
        .iter()
        .position(|t| *t)
        .unwrap_or_else(|| panic!("no dns-timeout in {has_timeout:?}"));
    assert!(
        has_timeout[first..].iter().all(|t| *t),
        "the finding flickers: {has_timeout:?}"
    );
    // Fewer samples carry a timeout result than carry the finding.
    let with_results = samples
        .iter()
        .filter(|s| s["dns"]["probes"].as_array().is_some_and(|p| !p.is_empty()))
        .count();
    assert!(with_results < samples.len() - first, "{samples:?}");
    let summary = findings(&samples, "dns-timeout").pop().unwrap();
    assert!(summary.contains("in the last 10 s"), "{summary}");
}

#[test]
fn without_probes_nothing_is_sent() {
    let server = DnsServer::start();
    let samples = snapshot(&["--no-capture", "--section", "dns", "--interval", "300ms"]);
    assert_eq!(samples[0]["dns"]["probes"], Value::Array(vec![]));
    assert_eq!(samples[0]["dns"]["probe_specs"], Value::Array(vec![]));
    assert!(server.seen().is_empty());
}

#[test]
fn bad_probe_or_server_is_a_one_line_error() {
    for args in [
        &[
            "--dns-probe",
            "MX:example.test",
            "--dns-server",
            "127.0.0.1:9",
        ][..],
        &["--dns-probe", "bad name", "--dns-server", "127.0.0.1:9"],
        &["--dns-probe", "a.test", "--dns-server", "dns.example"],
        &[
            "--dns-probe",
            "AAAA:198.18.0.1",
            "--dns-server",
            "127.0.0.1:9",
        ],
    ] {
        let out = Command::new(NETLENS)
            .args(["snapshot", "--no-capture"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("--dns-"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn passive_matches_queries_seen_on_lo() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    // Port 53 (passive looks at port 53) on a loopback address of our own.
    let server = match DnsServer::start_on("127.0.0.153:53") {
        Ok(server) => server,
        Err(e) => {
            println!("SKIP passive_matches_queries_seen_on_lo: cannot bind 127.0.0.153:53: {e}");
            return;
        }
    };
    let child = Command::new(NETLENS)
        .args([
            "snapshot",
            "--json",
            "--count",
            "4",
            "--interval",
            "1s",
            "--iface",
            "lo",
            "--section",
            "dns,findings",
            "--dns-timeout",
            "1s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut child = ChildGuard(child);
    // Queries for 2.5 s from the test (bounded: 4 per round, 10 rounds).
    std::thread::sleep(Duration::from_millis(500));
    let mut sockets = Vec::new();
    for round in 0..10u16 {
        for (i, (name, qtype)) in [
            ("fast.test", RecordType::A),
            ("slow.test", RecordType::A),
            ("nx.test", RecordType::A),
            ("9.0.18.198.in-addr.arpa", RecordType::PTR),
        ]
        .into_iter()
        .enumerate()
        {
            sockets.push(send_query(server.addr, round * 4 + i as u16, name, qtype));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut stdout = String::new();
    child
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(child.0.wait().unwrap().success());
    let samples = parse_lines(stdout.as_bytes());
    let passive = results(&samples, "passive");
    let ours: Vec<Value> = passive
        .into_iter()
        .filter(|r| r["server"] == "127.0.0.153:53")
        .collect();
    let fast = of(&ours, "fast.test");
    assert!(fast.len() >= 3, "{ours:?}");
    for p in &fast {
        assert_eq!(p["outcome"], "ok");
        assert!(p["latency_ms"].as_f64().unwrap() < 150.0, "{p}");
    }
    // The server answers slow.test after 300 ms. On a loaded machine an
    // answer can come after --dns-timeout (1 s): a timeout then, without
    // a latency; every answer in time is measured from 300 ms.
    let slow = of(&ours, "slow.test");
    let answered: Vec<&Value> = slow
        .iter()
        .copied()
        .filter(|p| p["outcome"] == "ok")
        .collect();
    assert!(!answered.is_empty(), "{ours:?}");
    for p in &answered {
        let ms = p["latency_ms"].as_f64().unwrap();
        assert!((295.0..1000.0).contains(&ms), "slow.test seen at {ms} ms");
    }
    assert!(
        slow.iter()
            .all(|p| p["outcome"] == "ok"
                || (p["outcome"] == "timeout" && p["latency_ms"].is_null())),
        "{slow:?}"
    );
    assert!(
        of(&ours, "nx.test")
            .iter()
            .all(|p| p["outcome"] == "nxdomain")
    );
    let ptr = of(&ours, "9.0.18.198.in-addr.arpa");
    assert!(!ptr.is_empty(), "unanswered PTR became timeouts: {ours:?}");
    assert!(
        ptr.iter()
            .all(|p| p["outcome"] == "timeout" && p["latency_ms"].is_null())
    );
    let timeout = findings(&samples, "dns-timeout");
    assert!(
        timeout
            .iter()
            .any(|f| f.contains("127.0.0.153:53") && f.contains("PTR 198.18.0.9"))
    );
    drop(sockets);
}

#[test]
fn exporter_serves_probe_latency_histograms() {
    let server = DnsServer::start();
    let addr = server.addr.to_string();
    let mut child = Command::new(NETLENS)
        .args(["export", "--listen", "127.0.0.1:0", "--interval", "500ms"])
        .args(["--dns-server", &addr, "--dns-probe", "fast.test"])
        .args(["--dns-probe", "slow.test", "--dns-timeout", "500ms"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _guard = ChildGuard(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let listen: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    // Scrape until both series have two answers each (bounded: 15 s).
    let started = Instant::now();
    loop {
        let text = scrape(listen);
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
            .expect("OpenMetrics parses");
        let count = |name: &str| {
            scrape
                .samples
                .iter()
                .find(|s| {
                    s.metric == "netlens_dns_probe_duration_seconds_count"
                        && s.labels.get("name") == Some(name)
                        && s.labels.get("server") == Some(addr.as_str())
                })
                .map(|s| match s.value {
                    prometheus_parse::Value::Untyped(v)
                    | prometheus_parse::Value::Counter(v)
                    | prometheus_parse::Value::Gauge(v) => v,
                    _ => 0.0,
                })
                .unwrap_or(0.0)
        };
        if count("fast.test") >= 2.0 && count("slow.test") >= 2.0 {
            assert!(text.contains("# TYPE netlens_dns_probe_duration_seconds histogram\n"));
            let buckets = |name: &str| {
                scrape
                    .samples
                    .iter()
                    .find_map(|s| match &s.value {
                        prometheus_parse::Value::Histogram(h)
                            if s.metric == "netlens_dns_probe_duration_seconds"
                                && s.labels.get("name") == Some(name) =>
                        {
                            Some(h.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or_else(|| panic!("no buckets for {name}:\n{text}"))
            };
            // fast.test lands at or under 0.1 s; slow.test only from 0.5 s.
            let fast = buckets("fast.test");
            let at = |h: &[prometheus_parse::HistogramCount], le: f64| {
                h.iter()
                    .find(|b| b.less_than == le)
                    .map(|b| b.count)
                    .unwrap()
            };
            assert!(at(&fast, 0.1) >= 2.0);
            let slow = buckets("slow.test");
            assert_eq!(at(&slow, 0.2), 0.0);
            assert!(at(&slow, 0.5) >= 2.0, "{slow:?}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no histograms:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn scrape(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

// ------------------------------------------------------------ config parsers

#[test]
fn resolv_conf_variants() {
    // systemd-resolved's stub file.
    let c = parse_resolv_conf(
        "# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\n\
         nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch corp.example.test lab.test\n",
    );
    assert_eq!(c.nameservers, ["127.0.0.53"]);
    assert_eq!(c.search, ["corp.example.test", "lab.test"]);
    assert_eq!(
        (c.timeout_s, c.attempts, c.ndots, c.rotate),
        (5, 2, 1, false)
    );
    assert_eq!(stub_label("127.0.0.53"), Some("systemd-resolved stub"));
    // Docker / Kubernetes: ndots:5, several options lines, comments with ;.
    let c = parse_resolv_conf(
        "nameserver 198.18.0.10 ; cluster DNS\nsearch default.svc.cluster.local svc.cluster.local\n\
         options ndots:5\noptions timeout:2 attempts:3 rotate\n",
    );
    assert_eq!(c.nameservers, ["198.18.0.10"]);
    assert_eq!(
        (c.timeout_s, c.attempts, c.ndots, c.rotate),
        (2, 3, 5, true)
    );
    assert!(!is_stub("198.18.0.10"));
    // Several servers, IPv6 with a scope, domain then search (last wins),
    // glibc's clamps, junk ignored, tabs.
    let c = parse_resolv_conf(
        "domain old.test\nsearch new.test\nnameserver\t198.18.0.1\nnameserver fe80::1%eth0\n\
         nameserver ::1\nnameserver not-an-ip\noptions timeout:99 attempts:0 ndots:40 bogus\n\
         sortlist 198.18.0.0/255.254.0.0\n",
    );
    assert_eq!(c.nameservers, ["198.18.0.1", "fe80::1%eth0", "::1"]);
    assert_eq!(c.search, ["new.test"]);
    assert_eq!((c.timeout_s, c.attempts, c.ndots), (30, 1, 15));
    assert_eq!(stub_label("::1"), Some("local stub/cache"));
    // dnsmasq on 127.0.0.1, domain only.
    let c = parse_resolv_conf("domain home.test\nnameserver 127.0.0.1\n");
    assert_eq!(
        (c.search.as_slice(), c.nameservers.as_slice()),
        (
            &["home.test".to_string()][..],
            &["127.0.0.1".to_string()][..]
        )
    );
    assert!(is_stub("127.0.0.1"));
    // Empty: glibc's defaults, no server.
    let c = parse_resolv_conf("");
    assert!(c.nameservers.is_empty());
    assert_eq!((c.timeout_s, c.attempts), (5, 2));
}

#[test]
fn hosts_and_nsswitch() {
    let hosts = "127.0.0.1\tlocalhost\n::1 localhost ip6-localhost # v6\n\n# 198.18.0.5 gone\n\
                 198.18.0.6 db db.test\nfe80::1%lo0 link\nnot-an-address name\n198.18.0.7\n";
    assert_eq!(count_hosts(hosts), 4);
    assert_eq!(
        nsswitch_hosts(
            "passwd: files\nhosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname\n"
        )
        .as_deref(),
        Some("files mdns4_minimal [NOTFOUND=return] dns myhostname")
    );
    assert_eq!(
        nsswitch_hosts("# hosts: dns\nhosts: files dns # comment\n").as_deref(),
        Some("files dns")
    );
    assert_eq!(nsswitch_hosts("passwd: files\n"), None);
    assert_eq!(nsswitch_hosts("hostsfoo: x\n"), None);
}

/// /etc/netns/NAME for a namespace's own /etc files, removed whichever
/// way the test ends (and /etc/netns too when the test made it).
struct EtcDir {
    path: String,
    made_parent: bool,
}

impl EtcDir {
    fn new(ns: &Netns) -> EtcDir {
        let made_parent = !std::path::Path::new("/etc/netns").exists();
        let path = format!("/etc/netns/{}", ns.name);
        std::fs::create_dir_all(&path).unwrap();
        EtcDir { path, made_parent }
    }
}

impl Drop for EtcDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        if self.made_parent {
            let _ = std::fs::remove_dir("/etc/netns");
        }
    }
}

/// A nameserver of the namespace's own /etc/resolv.conf (`ip netns exec`
/// mounts /etc/netns/NAME/resolv.conf over it) that never answers: the
/// finding names its place in the list and the options in force.
#[test]
fn a_silent_nameserver_is_named_with_the_resolvers_options() {
    if need_root(&["ip", "python3"]) {
        return;
    }
    let ns = Netns::new("dnsopt");
    ns.ip(&["link", "set", "lo", "up"]);
    let etc = EtcDir::new(&ns);
    std::fs::write(
        format!("{}/resolv.conf", etc.path),
        "nameserver 127.0.0.1\nnameserver 127.0.0.2\noptions timeout:1 attempts:3\n",
    )
    .unwrap();
    // Bound to the nameserver's address and port, it reads and never
    // answers (for at most 20 s).
    let mut silent = python_in(
        &ns.name,
        "import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         s.bind(('127.0.0.1',53)); s.settimeout(0.5); print('ready',flush=True)\n\
         end=time.time()+20\nwhile time.time()<end:\n    try: s.recv(512)\n    \
         except OSError: pass\n",
    );
    common::socket_findings::wait_ready(&mut silent);
    let snapshot = Command::new("ip")
        .args(["netns", "exec", &ns.name, NETLENS, "snapshot", "--json"])
        .args(["--count", "6", "--interval", "500ms", "--no-capture"])
        .args(["--section", "dns,findings", "--dns-server", "127.0.0.1:53"])
        .args(["--dns-probe", "A:x.test"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("netlens");
    let samples = snapshot_samples(snapshot);
    let listed: Vec<&Value> = samples[0]["dns"]["config"]["nameservers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["address"])
        .collect();
    assert_eq!(listed, ["127.0.0.1", "127.0.0.2"]);
    let found = findings(&samples, "dns-timeout");
    let named = "it is nameserver 1 of 2 in /etc/resolv.conf: as the first, every lookup waits \
                 on it before it asks the next, here options timeout:1 attempts:3 (no rotate)";
    assert!(
        found.last().is_some_and(|f| f.contains(named)),
        "{named:?} in {found:?}"
    );
}
