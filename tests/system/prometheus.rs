//! A real Prometheus server scraping `netlens export`: netlens watches a
//! namespace with traffic this test makes, Prometheus (Debian's package,
//! which .ci/run installs) scrapes it every second on loopback, and the
//! test asks Prometheus' HTTP API what it stored: `up`, the namespace's
//! received bytes against `snapshot --json` and `ip -s link`, their
//! increase() over the traffic, and a finding provoked in the namespace.

use crate::common;

use common::exporter::Exporter;
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A free port on loopback (bound and released: Prometheus takes no port 0).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET `path` from `addr`; the body of a 200 answer.
fn http_get(addr: SocketAddr, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    // Prometheus answers small queries with a Content-Length, larger ones
    // chunked: de-chunk when it says so.
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            if size == 0 {
                break;
            }
            out.push_str(tail.get(..size)?);
            rest = tail.get(size + 2..)?;
        }
        return Some(out);
    }
    Some(body.to_string())
}

/// An instant query; the result vector.
fn query(prometheus: SocketAddr, promql: &str) -> Vec<Value> {
    let encoded: String = promql
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let Some(body) = http_get(prometheus, &format!("/api/v1/query?query={encoded}")) else {
        return Vec::new();
    };
    let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    answer["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `dev`'s received bytes in `ns`, from `ip -s -j link`.
fn ip_rx_bytes(ns: &Netns, dev: &str) -> u64 {
    let out = ns.ip(&["-s", "-j", "link", "show", "dev", dev]);
    let links: Value = serde_json::from_slice(&out.stdout).expect("ip -j link");
    links[0]["stats64"]["rx"]["bytes"]
        .as_u64()
        .expect("ip -s -j link gives stats64.rx.bytes")
}

fn value(result: &Value) -> f64 {
    result["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Polls `promql` until `ok` holds for its result or `timeout` passes.
fn wait_for(
    prometheus: SocketAddr,
    promql: &str,
    timeout: Duration,
    ok: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        let result = query(prometheus, promql);
        if ok(&result) || Instant::now() > deadline {
            return result;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A listener in `ns` with backlog 2 that never accepts, and six clients
/// from `peer_ns`: its accept queue is full (listen-overflow). Held until
/// the returned sockets drop.
fn full_listener(ns: &str, peer_ns: &str, address: SocketAddrV4) -> (TcpListener, Vec<TcpStream>) {
    let (ns, peer_ns) = (ns.to_string(), peer_ns.to_string());
    let listener = std::thread::spawn(move || {
        enter_netns(&ns).unwrap();
        let listener = TcpListener::bind(address).unwrap();
        // SAFETY: a valid listening socket; listen() again sets the backlog.
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 2) }, 0);
        listener
    })
    .join()
    .unwrap();
    let clients = std::thread::spawn(move || {
        enter_netns(&peer_ns).unwrap();
        (0..6)
            .filter_map(|_| {
                TcpStream::connect_timeout(&address.into(), Duration::from_millis(500)).ok()
            })
            .collect::<Vec<_>>()
    })
    .join()
    .unwrap();
    (listener, clients)
}

#[test]
fn prometheus_scrapes_the_exporter_and_agrees_with_snapshot() {
    if crate::common::need_root(&["ip", "prometheus"]) {
        return;
    }
    let pair = VethPair::new("prom");
    let ns = pair.a.path();

    // The exporter watches namespace a; it listens on loopback of ours.
    let exporter = Exporter::start(&["--interval", "1s", "--netns", &pair.a.name]);
    let target = exporter.addr;

    // Prometheus scrapes only that exporter, every second.
    let dir = std::env::temp_dir().join(format!("netlens-prom-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: netlens\n    static_configs:\n\
             \x20     - targets: [\"{target}\"]\n"
        ),
    )
    .unwrap();
    let prometheus: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let server = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={prometheus}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus is needed (Debian: apt-get install prometheus; .ci/run installs it)");
    let _server = ChildGuard(server);

    let up = wait_for(
        prometheus,
        "up{job=\"netlens\"}",
        Duration::from_secs(60),
        |r| r.len() == 1 && value(&r[0]) == 1.0,
    );
    assert!(
        up.len() == 1 && value(&up[0]) == 1.0,
        "Prometheus never scraped netlens successfully: {up:?}"
    );

    // A full accept queue in the namespace, and traffic into it: 1,500
    // datagrams/s of 1,000 bytes for 20 s (bounded). The comparisons take
    // counters at rest on both sides of it, so a generator that falls
    // behind under load and catches up later changes no result: rates
    // over two windows that are not the same seconds would.
    let (_listener, _clients) = full_listener(&ns, &pair.b.path(), SocketAddrV4::new(IP_A, 7003));
    let before = ip_rx_bytes(&pair.a, DEV_A);
    let started = Instant::now();
    let (b_path, a_path) = (pair.b.path(), ns.clone());
    let result = udp_traffic(
        &b_path,
        IP_B,
        &a_path,
        SocketAddrV4::new(IP_A, 9100),
        30_000,
        1000,
        1500.0,
    );
    assert!(result.sent > 0);

    // At rest: Prometheus' stored counter, snapshot --json's and `ip -s
    // link`'s are the same bytes (a stray IPv6 packet may differ).
    let counter = format!("node_network_receive_bytes_total{{device=\"{DEV_A}\"}}");
    let after = ip_rx_bytes(&pair.a, DEV_A);
    let stored = wait_for(prometheus, &counter, Duration::from_secs(20), |r| {
        r.len() == 1 && (value(&r[0]) - after as f64).abs() <= 1024.0
    });
    assert_eq!(stored.len(), 1, "{counter}: {stored:?}");
    let stored = value(&stored[0]);
    let snapshot_now = snapshot(&[
        "--netns",
        &pair.a.name,
        "--interval",
        "200ms",
        "--no-capture",
    ]);
    let ours = must_iface(snapshot_now.last().unwrap(), DEV_A)["rx_bytes"]
        .as_f64()
        .expect("rx_bytes");
    eprintln!(
        "received bytes: Prometheus {stored:.0}, snapshot --json {ours:.0}, ip -s link {after}"
    );
    assert!(
        (stored - ours).abs() <= 1024.0 && (ours - after as f64).abs() <= 1024.0,
        "counters at rest: Prometheus {stored:.0}, snapshot --json {ours:.0}, ip -s link {after}"
    );

    // Prometheus' own arithmetic on what it scraped: increase() over a
    // window from before the traffic to now is what `ip -s link` counted
    // meanwhile (its extrapolation at the quiet edges adds at most a
    // scrape interval's share of the window).
    let window = started.elapsed().as_secs() + 2;
    let promql = format!("increase({counter}[{window}s])");
    let theirs = query(prometheus, &promql);
    assert_eq!(theirs.len(), 1, "{promql}: {theirs:?}");
    let theirs = value(&theirs[0]);
    let delta = (after - before) as f64;
    eprintln!("received over {window}s: Prometheus increase() {theirs:.0}, ip -s link {delta:.0}");
    assert!(
        delta > 10_000_000.0 && approx_eq(theirs, delta, 0.0, 0.10),
        "Prometheus increase() {theirs:.0} B vs ip -s link {delta:.0} B"
    );

    let finding = wait_for(
        prometheus,
        "netlens_finding{id=\"listen-overflow\"}",
        Duration::from_secs(20),
        |r| r.iter().any(|s| value(s) >= 1.0),
    );
    assert!(
        finding
            .iter()
            .any(|s| value(s) >= 1.0 && s["metric"]["netns"] == pair.a.name.as_str()),
        "listen-overflow did not reach Prometheus: {finding:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
