//! `netlens export`: the real binary on 127.0.0.1 (port 0), scraped over
//! TCP, parsed with the prometheus-parse crate (and promtool when it is
//! installed), compared with `snapshot --json`.

use crate::common;

use common::exporter::Exporter;
use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const CLASSIC: &str = "text/plain; version=0.0.4; charset=utf-8";
/// What Prometheus 2.x sends when it scrapes.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

struct Response {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

/// Sends `raw` as is and reads the whole response (the server closes).
fn request(addr: SocketAddr, raw: &[u8]) -> Response {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(raw).expect("send request");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).expect("read response");
    let text = String::from_utf8(bytes).expect("utf-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("response head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    Response {
        status,
        headers,
        body: body.to_string(),
    }
}

fn get(addr: SocketAddr, path: &str) -> Response {
    request(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {OPENMETRICS}\r\n\r\n").as_bytes(),
    )
}

/// A 200 scrape of /metrics, checked for OpenMetrics structure.
fn scrape(addr: SocketAddr) -> String {
    let r = get(addr, "/metrics");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.headers["content-type"], OPENMETRICS);
    assert_eq!(r.headers["content-length"], r.body.len().to_string());
    check_structure(&r.body);
    r.body
}

/// What prometheus-parse does not check: each family declared once with
/// TYPE before its samples, contiguous; counters' samples end in _total;
/// UNIT is a suffix of the name; no duplicate series; `# EOF` last.
fn check_structure(text: &str) {
    assert!(text.ends_with("# EOF\n"), "no # EOF terminator");
    assert_eq!(text.matches("# EOF").count(), 1);
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    let mut series = BTreeSet::new();
    for line in text.lines().filter(|l| *l != "# EOF") {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE line");
            assert!(
                ["counter", "gauge", "histogram"].contains(&kind),
                "type {kind}"
            );
            assert!(
                types.insert(name.into(), kind.into()).is_none(),
                "family {name} declared twice"
            );
            current = Some((name.into(), kind.into()));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# UNIT ") {
            let (name, unit) = rest.split_once(' ').unwrap();
            assert!(name.ends_with(&format!("_{unit}")), "{line}");
            assert_eq!(Some(name), current.as_ref().map(|c| c.0.as_str()));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            assert_eq!(Some(name), current.as_ref().map(|c| c.0.as_str()));
            continue;
        }
        assert!(
            !line.starts_with('#') && !line.is_empty(),
            "stray line {line:?}"
        );
        let (family, kind) = current.as_ref().expect("sample before any TYPE");
        let name = line.split(['{', ' ']).next().unwrap();
        let allowed: Vec<String> = match kind.as_str() {
            "counter" => vec![format!("{family}_total")],
            "histogram" => ["_bucket", "_count", "_sum"]
                .iter()
                .map(|s| format!("{family}{s}"))
                .collect(),
            _ => vec![family.clone()],
        };
        assert!(
            allowed.iter().any(|a| a == name),
            "{name} does not belong to {kind} family {family}"
        );
        let (key, value) = line.rsplit_once(' ').unwrap();
        assert!(value.parse::<f64>().is_ok(), "value in {line:?}");
        assert!(series.insert(key.to_string()), "duplicate series {key}");
    }
    assert!(types.len() > 10, "only {} families", types.len());
}

fn parse(text: &str) -> prometheus_parse::Scrape {
    prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("parse")
}

fn value_of(sample: &prometheus_parse::Sample) -> f64 {
    match sample.value {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => v,
        ref other => panic!("unexpected value {other:?}"),
    }
}

/// The value of `metric` with the given labels; panics when absent.
fn find(scrape: &prometheus_parse::Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    let found: Vec<_> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{metric} {labels:?}: {} matches",
        found.len()
    );
    value_of(found[0])
}

/// A 200 scrape of /metrics in the classic text format (no Accept header,
/// as promtool, curl and older agents scrape).
fn scrape_classic(addr: SocketAddr) -> String {
    let r = request(
        addr,
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.headers["content-type"], CLASSIC);
    assert_eq!(r.headers["content-length"], r.body.len().to_string());
    r.body
}

/// `promtool check metrics` on a classic-format page: it must parse, and
/// the only lint notes allowed are about node_exporter's own camelCase
/// names (node_netstat_Tcp_*, node_sockstat_TCP_*), kept for dashboards.
fn promtool(text: &str) {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        panic!("promtool is needed (Debian: apt-get install prometheus; .ci/run installs it)");
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut accepted = 0;
    for line in report.lines().filter(|l| !l.trim().is_empty()) {
        let name = line.split(' ').next().unwrap_or("");
        let camel = line.ends_with("should be written in 'snake_case' not 'camelCase'")
            && (name.starts_with("node_netstat_") || name.starts_with("node_sockstat_"));
        assert!(camel, "promtool check metrics: {line}\n{report}");
        accepted += 1;
    }
    eprintln!(
        "promtool check metrics: parsed; {accepted} accepted lint notes (camelCase node_exporter names)"
    );
}

/// Series name and labels -> value, from either format (comments out).
fn series_of(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(series, value)| (series.to_string(), value.to_string()))
        .collect()
}

#[test]
fn the_accept_header_chooses_openmetrics_or_the_classic_format() {
    if common::need(&["promtool"]) {
        return;
    }
    // A gauge that cannot move between two scrapes of one sample: a long
    // interval keeps both scrapes on the first one.
    let exporter = Exporter::start(&["--interval", "1h"]);
    let prometheus = request(
        exporter.addr,
        format!("GET /metrics HTTP/1.1\r\nAccept: {PROMETHEUS_ACCEPT}\r\n\r\n").as_bytes(),
    );
    assert_eq!(prometheus.headers["content-type"], OPENMETRICS);
    check_structure(&prometheus.body);
    let old = request(
        exporter.addr,
        b"GET /metrics HTTP/1.1\r\nAccept: text/plain;version=0.0.4\r\n\r\n",
    );
    assert_eq!(old.headers["content-type"], CLASSIC);
    let classic = scrape_classic(exporter.addr);
    // One page per sample; only the sample's age moves between scrapes.
    let without_age = |page: &str| -> String {
        page.lines()
            .filter(|l| !l.starts_with("netlens_sample_age_seconds{"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(
        without_age(&old.body),
        without_age(&classic),
        "one classic page per sample"
    );
    assert!(classic.contains("netlens_sample_age_seconds{"));
    assert!(!classic.contains("# EOF") && !classic.contains("# UNIT"));
    assert!(classic.contains("# TYPE node_network_receive_bytes_total counter\n"));
    assert!(classic.contains("# HELP node_network_receive_bytes_total "));
    // The same series with the same values in both (but the age).
    assert_eq!(
        series_of(&without_age(&prometheus.body)),
        series_of(&without_age(&classic))
    );
    assert!(series_of(&classic).len() > 50);
    promtool(&classic);
}

#[test]
fn scrape_is_openmetrics_with_the_expected_series() {
    if common::need(&["promtool"]) {
        return;
    }
    // Sockets held open on loopback: LISTEN and ESTABLISHED are at least these.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let clients: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(listener.local_addr().unwrap()).unwrap())
        .collect();
    let accepted: Vec<TcpStream> = (0..3).map(|_| listener.accept().unwrap().0).collect();

    let exporter = Exporter::start(&["--interval", "200ms"]);
    promtool(&scrape_classic(exporter.addr));
    let text = scrape(exporter.addr);
    let s = parse(&text);
    let lo = [("device", "lo"), ("netns", "host")];
    for metric in [
        "node_network_receive_bytes_total",
        "node_network_transmit_bytes_total",
        "node_network_receive_packets_total",
        "node_network_transmit_packets_total",
        "node_network_receive_errs_total",
        "node_network_transmit_errs_total",
        "node_network_receive_drop_total",
        "node_network_transmit_drop_total",
    ] {
        find(&s, metric, &lo);
    }
    assert_eq!(find(&s, "node_network_mtu_bytes", &lo), 65536.0);
    assert!(find(&s, "netlens_tcp_connections", &[("state", "LISTEN")]) >= 1.0);
    assert!(find(&s, "netlens_tcp_connections", &[("state", "ESTABLISHED")]) >= 6.0);
    for state in [
        "ESTABLISHED",
        "SYN_SENT",
        "SYN_RECV",
        "FIN_WAIT1",
        "FIN_WAIT2",
        "TIME_WAIT",
        "CLOSE",
        "CLOSE_WAIT",
        "LAST_ACK",
        "LISTEN",
        "CLOSING",
    ] {
        find(&s, "netlens_tcp_connections", &[("state", state)]);
    }
    assert!(find(&s, "node_netstat_Tcp_ActiveOpens_total", &[]) >= 3.0);
    find(&s, "node_netstat_Tcp_RetransSegs_total", &[]);
    find(&s, "node_netstat_TcpExt_ListenOverflows_total", &[]);
    assert!(find(&s, "netlens_sample_timestamp_seconds", &[]) > 1.6e9);
    assert!(text.contains("# TYPE netlens_finding gauge\n"));
    // Per CPU, as node_exporter's softnet and softirqs collectors name them.
    let cpus = std::fs::read_to_string("/proc/softirqs")
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .count();
    for cpu in 0..cpus {
        let cpu = cpu.to_string();
        find(&s, "node_softnet_processed_total", &[("cpu", &cpu)]);
        find(&s, "node_softnet_dropped_total", &[("cpu", &cpu)]);
        find(&s, "node_softnet_times_squeezed_total", &[("cpu", &cpu)]);
        find(
            &s,
            "node_softirqs_functions_total",
            &[("cpu", &cpu), ("type", "NET_RX")],
        );
    }
    assert!(text.contains("# TYPE node_arp_entries gauge\n"));
    assert!(
        !text.contains("netlens_dns_probe_duration_seconds"),
        "no --dns-probe: no DNS series"
    );

    // HEAD: same headers, no body.
    let head = request(exporter.addr, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert!(head.headers["content-length"].parse::<usize>().unwrap() > 1000);

    // The page follows the sampler: a later scrape carries a later sample.
    let t0 = find(&s, "netlens_sample_timestamp_seconds", &[]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = find(
            &parse(&scrape(exporter.addr)),
            "netlens_sample_timestamp_seconds",
            &[],
        );
        if t > t0 {
            break;
        }
        assert!(Instant::now() < deadline, "the sample never advanced");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop((clients, accepted));
}

#[test]
fn bad_requests_get_4xx_and_the_server_survives() {
    let exporter = Exporter::start(&[]);
    let addr = exporter.addr;
    assert_eq!(get(addr, "/").status, 404);
    assert_eq!(get(addr, "/metricsx").status, 404);
    assert_eq!(get(addr, "/metrics/").status, 404);
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let r = request(
            addr,
            format!("{method} /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.headers["allow"], "GET, HEAD");
    }
    for raw in [
        &b"garbage\r\n\r\n"[..],
        b"GET /metrics\r\n\r\n",
        b"GET /metrics HTTP/9.9\r\n\r\n",
        b"GET  /metrics HTTP/1.1\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
        b"\xff\xfe\xfd /metrics HTTP/1.1\r\n\r\n",
        b"\r\n\r\n",
    ] {
        assert_eq!(request(addr, raw).status, 400, "{raw:?}");
    }
    // Too large a head.
    let mut big = b"GET /metrics HTTP/1.1\r\n".to_vec();
    big.extend(std::iter::repeat_n(b'a', 20_000));
    let r = request(addr, &big);
    assert_eq!(r.status, 431);
    // Clients that hang up mid-request.
    for raw in [&b""[..], b"GET /met"] {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(raw).unwrap();
        drop(s);
    }
    // Still serving.
    let text = scrape(addr);
    parse(&text);
}

/// Raw interface counters of `dev` in the JSON sample.
fn json_counters(sample: &Value, dev: &str) -> Vec<(String, u64)> {
    let i = must_iface(sample, dev);
    [
        "rx_bytes",
        "tx_bytes",
        "rx_packets",
        "tx_packets",
        "rx_errors",
        "tx_errors",
        "rx_dropped",
        "tx_dropped",
    ]
    .iter()
    .map(|k| (k.to_string(), u64f(i, k)))
    .collect()
}

fn export_counters(s: &prometheus_parse::Scrape, dev: &str, ns: &str) -> Vec<(String, u64)> {
    let labels = [("device", dev), ("netns", ns)];
    [
        ("rx_bytes", "node_network_receive_bytes_total"),
        ("tx_bytes", "node_network_transmit_bytes_total"),
        ("rx_packets", "node_network_receive_packets_total"),
        ("tx_packets", "node_network_transmit_packets_total"),
        ("rx_errors", "node_network_receive_errs_total"),
        ("tx_errors", "node_network_transmit_errs_total"),
        ("rx_dropped", "node_network_receive_drop_total"),
        ("tx_dropped", "node_network_transmit_drop_total"),
    ]
    .iter()
    .map(|(k, m)| (k.to_string(), find(s, m, &labels) as u64))
    .collect()
}

#[test]
fn values_agree_with_snapshot_json_in_a_namespace() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    const N: u64 = 500;
    const P: usize = 300;
    const K: usize = 4;
    let pair = VethPair::new("exp");
    let traffic = udp_traffic(
        &pair.a.path(),
        IP_A,
        &pair.b.path(),
        std::net::SocketAddrV4::new(IP_B, 40_100),
        N,
        P,
        2000.0,
    );
    assert_eq!(traffic.sent, N);

    // K TCP connections held open inside namespace a: 2K ESTABLISHED, 1 LISTEN.
    // Local connections go over lo, which a new namespace has down.
    pair.a.ip(&["link", "set", "lo", "up"]);
    let path = pair.a.path();
    let held = std::thread::spawn(move || {
        enter_netns(&path).unwrap();
        let listener = TcpListener::bind((IP_A, 40_200)).unwrap();
        let clients: Vec<TcpStream> = (0..K)
            .map(|_| {
                let to = SocketAddr::from((IP_A, 40_200));
                TcpStream::connect_timeout(&to, Duration::from_secs(5)).unwrap()
            })
            .collect();
        let accepted: Vec<TcpStream> = (0..K).map(|_| listener.accept().unwrap().0).collect();
        (listener, clients, accepted)
    })
    .join()
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let settled = now_unix();

    let ns = pair.a.name.clone();
    let exporter = Exporter::start(&["--netns", &ns, "--interval", "200ms"]);
    // A scrape whose sample was taken after the setup settled.
    let deadline = Instant::now() + Duration::from_secs(10);
    let before = loop {
        let s = parse(&scrape(exporter.addr));
        if find(&s, "netlens_sample_timestamp_seconds", &[]) > settled {
            break s;
        }
        assert!(Instant::now() < deadline, "no fresh sample");
        std::thread::sleep(Duration::from_millis(100));
    };
    let json = snapshot(&["--netns", &ns, "--interval", "200ms"]);
    let json = json.last().unwrap();
    let after = parse(&scrape(exporter.addr));
    assert_eq!(json["netns"], ns.as_str());

    for dev in [DEV_A, "lo"] {
        let from_json = json_counters(json, dev);
        assert_eq!(export_counters(&before, dev, &ns), from_json, "{dev}");
        assert_eq!(export_counters(&after, dev, &ns), from_json, "{dev}");
    }
    // And they are the traffic we sent.
    let a = must_iface(json, DEV_A);
    assert_eq!(u64f(a, "tx_packets"), N);
    assert_eq!(u64f(a, "tx_bytes"), N * (P as u64 + UDP_FRAME_OVERHEAD));
    assert_eq!(find(&before, "node_network_up", &[("device", DEV_A)]), 1.0);

    let states = json["tcp"]["states"].as_object().expect("tcp.states");
    assert_eq!(states.len(), 11);
    for (state, count) in states {
        let count = count.as_f64().unwrap();
        assert_eq!(
            find(&before, "netlens_tcp_connections", &[("state", state)]),
            count,
            "{state}"
        );
    }
    assert_eq!(states["ESTABLISHED"], 2 * K as u64);
    assert_eq!(states["LISTEN"], 1);

    let counters = json["tcp"]["counters"].as_object().expect("tcp.counters");
    assert!(counters.contains_key("Tcp.ActiveOpens"));
    for (key, value) in counters {
        let (group, name) = key.split_once('.').unwrap();
        let metric = format!("node_netstat_{group}_{name}_total");
        assert_eq!(
            find(&before, &metric, &[("netns", &ns)]),
            value.as_f64().unwrap(),
            "{metric}"
        );
    }
    assert_eq!(
        find(&before, "node_netstat_Tcp_ActiveOpens_total", &[]),
        K as f64
    );

    let ct = &json["conntrack"];
    if ct["available"] == true {
        if let Some(count) = ct["count"].as_f64() {
            assert_eq!(find(&before, "node_nf_conntrack_entries", &[]), count);
        }
        if let Some(max) = ct["max"].as_f64() {
            assert_eq!(find(&before, "node_nf_conntrack_entries_limit", &[]), max);
        }
    } else {
        assert!(
            !before
                .samples
                .iter()
                .any(|s| s.metric.starts_with("node_nf_conntrack"))
        );
    }
    let json_findings: BTreeSet<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    let export_findings: BTreeSet<String> = before
        .samples
        .iter()
        .filter(|s| s.metric == "netlens_finding")
        .map(|s| s.labels.get("id").unwrap().to_string())
        .collect();
    assert_eq!(export_findings, json_findings);
    drop(held);
}

#[test]
fn dashboard_and_scrape_config_use_real_series() {
    let dashboard: Value =
        serde_json::from_str(include_str!("../../assets/grafana-netlens.json")).expect("dashboard");
    let text = dashboard.to_string();
    let exporter = Exporter::start(&[]);
    let page = scrape(exporter.addr);
    // Sample names, and declared families (netlens_finding has no samples
    // while nothing is wrong).
    let names: BTreeSet<&str> = page
        .lines()
        .filter_map(|l| match l.strip_prefix("# TYPE ") {
            Some(rest) => rest.split(' ').next(),
            None if !l.starts_with('#') => l.split(['{', ' ']).next(),
            None => None,
        })
        .collect();
    let mut used = BTreeSet::new();
    for (start, _) in text
        .match_indices("node_")
        .chain(text.match_indices("netlens_"))
    {
        let name: String = text[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // Skip the prefix inside a longer identifier (e.g. "netlens_" in a uid).
        if start > 0 && text.as_bytes()[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        if name.len() > "netlens_".len() {
            used.insert(name);
        }
    }
    used.remove("netlens-export");
    assert!(used.len() > 15, "{used:?}");
    let conntrack_here = names.iter().any(|n| n.starts_with("node_nf_conntrack"));
    // Drop reasons need the eBPF program (root); without it only
    // netlens_drops_available says so.
    let drops_counted = page
        .lines()
        .any(|l| l.starts_with("netlens_drops_available{") && l.ends_with(" 1"));
    for name in &used {
        // Probe series only exist with --dns-probe; a counter family with
        // no sample yet (no drop counted) is declared by its TYPE line.
        let conditional = name.starts_with("netlens_dns_probe")
            || (!conntrack_here && name.starts_with("node_nf_conntrack"))
            || (!drops_counted && name.starts_with("netlens_drops"));
        let declared = names.contains(name.trim_end_matches("_total"));
        assert!(
            conditional || declared || names.contains(name.as_str()),
            "the dashboard uses {name}, which the exporter does not serve"
        );
    }
    match Command::new("promtool")
        .args(["check", "config"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/prometheus.yml"
        ))
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "promtool check config: {}",
            String::from_utf8_lossy(&out.stdout)
        ),
        Err(_) => {
            crate::common::need::missing("promtool");
        }
    }
}

/// Raises this process' soft descriptor limit to its hard one (the test holds
/// over a thousand sockets).
fn raise_descriptor_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write `limit`.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
}

/// Resident memory of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Starts a connection to `addr` without waiting for it to be established
/// (so a server that does not accept cannot hold up the test itself).
fn connect_nonblocking(addr: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    let SocketAddr::V4(v4) = addr else {
        panic!("IPv4 only: {addr}")
    };
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(v4.ip().octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: a fresh socket, connected with a valid sockaddr_in of the
    // length given; the fd is owned by the TcpStream from then on.
    unsafe {
        let fd = libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let rc = libc::connect(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        let error = std::io::Error::last_os_error();
        assert!(
            rc == 0 || error.raw_os_error() == Some(libc::EINPROGRESS),
            "connect: {error}"
        );
        TcpStream::from_raw_fd(fd)
    }
}

/// How many of `streams` are established.
fn established(streams: &[TcpStream]) -> usize {
    streams.iter().filter(|s| s.peer_addr().is_ok()).count()
}

/// `idle` connections that send nothing and `slow` ones that send a request
/// one byte per second (slowloris), for as long as the value lives.
struct Abusers {
    idle: Vec<TcpStream>,
    slow: Vec<TcpStream>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    dripper: Option<std::thread::JoinHandle<()>>,
}

impl Abusers {
    fn open(addr: SocketAddr, idle: usize, slow: usize) -> Abusers {
        let idle: Vec<TcpStream> = (0..idle).map(|_| connect_nonblocking(addr)).collect();
        let slow: Vec<TcpStream> = (0..slow).map(|_| connect_nonblocking(addr)).collect();
        let slow_clones: Vec<TcpStream> = slow.iter().map(|s| s.try_clone().unwrap()).collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        // Bounded: stops with the value, and after 60 s in any case.
        let dripper = std::thread::spawn(move || {
            let mut slow = slow;
            let request = b"GET /metrics HTTP/1.1\r\nX-a: ";
            let end = Instant::now() + Duration::from_secs(60);
            let mut sent = 0;
            while !flag.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < end {
                let byte = [request.get(sent).copied().unwrap_or(b'a')];
                sent += 1;
                for stream in &mut slow {
                    let _ = stream.write(&byte);
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        Abusers {
            idle,
            slow: slow_clones,
            stop,
            dripper: Some(dripper),
        }
    }
}

impl Drop for Abusers {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(dripper) = self.dripper.take() {
            let _ = dripper.join();
        }
        self.idle.clear();
    }
}

/// Issue 25: 1,000 idle plus 200 slowloris connections must not delay a
/// scrape past Prometheus' default 10 s scrape timeout (the client timeout of
/// `request`): before, 64 slots held 5 s each kept scrapes queued for minutes.
/// The exporter's memory stays bounded meanwhile. Latency figures:
/// benches/scripts/bench-export-abuse.sh.
#[test]
fn scrapes_are_answered_under_idle_and_slowloris_connections() {
    raise_descriptor_limit();
    let exporter = Exporter::start(&[]);
    let addr = exporter.addr;
    let pid = exporter.pid();
    scrape(addr);
    let before = rss_kib(pid);
    let abusers = Abusers::open(addr, 1000, 200);
    // At once, while the connections are being accepted: before, this scrape
    // waited behind them (64 at a time, 5 s each) past the client's 10 s.
    parse(&scrape(addr));
    let deadline = Instant::now() + Duration::from_secs(10);
    while established(&abusers.idle) + established(&abusers.slow) < 1200 {
        assert!(
            Instant::now() < deadline,
            "the exporter did not accept every connection"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Scrapes across the 5 s request timeout of the slow ones.
    for _ in 0..8 {
        parse(&scrape(addr));
        std::thread::sleep(Duration::from_millis(1000));
    }
    let during = rss_kib(pid);
    eprintln!("exporter RSS: {before} KiB idle, {during} KiB with 1,200 abusive connections");
    assert!(
        during < before + 32 * 1024,
        "RSS grew from {before} KiB to {during} KiB"
    );
    drop(abusers);
    parse(&scrape(addr));
}

/// Under a descriptor limit far below the number of connections, accept
/// fails with EMFILE: the exporter closes the oldest idle connections instead
/// of spinning or stalling, and scrapes are still answered.
#[test]
fn scrapes_are_answered_when_descriptors_run_out() {
    use std::os::unix::process::CommandExt;
    raise_descriptor_limit();
    let mut command = Command::new(NETLENS);
    command
        .args(["export", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 200,
                rlim_max: 200,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().expect("spawn netlens export");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let guard = ChildGuard(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let abusers = Abusers::open(addr, 1000, 200);
    for _ in 0..3 {
        parse(&scrape(addr));
    }
    drop(abusers);
    parse(&scrape(addr));
    drop(guard);
    let errors = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // One notice, not one line per failed accept.
    assert!(
        errors.lines().count() <= 2,
        "stderr floods with accept errors:\n{errors}"
    );
}
