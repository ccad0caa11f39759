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

mod abuse;
mod format;
mod values;

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
