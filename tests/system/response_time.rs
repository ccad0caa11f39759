//! Servers' response times from packets, against the servers' own clocks:
//! real HTTP servers (python3, plain and TLS) in a namespace whose
//! handlers take N ms, loaded from the host over a veth; `netlens
//! snapshot --netns` times each server's answers, names the slow ones
//! (conn:slow-response, with the process and its port) and not the fast;
//! `replay --json` of its recording gives the same times and findings;
//! the exporter's histogram counts every request under the right bound.

use crate::common::netns_traffic::Ns;
use crate::common::{ChildGuard, python_in, scratch_dir_for, snapshot_samples, spawn_snapshot};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A server on `port` whose handler sleeps `ms`, each request's own time
/// (parsed request to answer written) appended to `log`; TLS with `cert`.
fn server(ns: &Ns, port: u16, ms: u32, log: &str, cert: Option<&str>) -> ChildGuard {
    let tls = cert.map_or(String::new(), |dir| {
        format!(
            "import ssl\nctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
             ctx.load_cert_chain('{dir}/cert.pem', '{dir}/key.pem')\n\
             s.socket = ctx.wrap_socket(s.socket, server_side=True)\n"
        )
    });
    let script = format!(
        "import http.server, time\n\
         class H(http.server.BaseHTTPRequestHandler):\n\
         \x20   protocol_version = 'HTTP/1.1'\n\
         \x20   def do_GET(self):\n\
         \x20       t = time.monotonic()\n\
         \x20       time.sleep({ms} / 1000)\n\
         \x20       body = b'x' * 200\n\
         \x20       self.send_response(200)\n\
         \x20       self.send_header('Content-Length', str(len(body)))\n\
         \x20       self.end_headers()\n\
         \x20       self.wfile.write(body)\n\
         \x20       self.wfile.flush()\n\
         \x20       with open('{log}', 'a') as f: f.write('%f\\n' % ((time.monotonic() - t) * 1000))\n\
         \x20   def log_message(self, *a): pass\n\
         s = http.server.ThreadingHTTPServer(('{ip}', {port}), H)\n\
         {tls}s.serve_forever()\n",
        ip = ns.ip()
    );
    python_in(ns.name(), &script)
}

/// Two keep-alive connections per server, requests back to back for
/// `seconds` (bounded), from the host; each request's time as the client
/// saw it (request sent to answer read) goes to `log` as "port ms".
fn load(ns: &Ns, ports: &[(u16, bool)], seconds: f64, log: &str) -> ChildGuard {
    let targets: Vec<String> = ports
        .iter()
        .map(|(port, tls)| format!("({port}, {})", if *tls { "True" } else { "False" }))
        .collect();
    let script = format!(
        "import http.client, ssl, threading, time\n\
         ctx = ssl._create_unverified_context()\n\
         times = []\n\
         def run(port, tls):\n\
         \x20   end = time.monotonic() + {seconds}\n\
         \x20   while time.monotonic() < end:\n\
         \x20       c = (http.client.HTTPSConnection('{ip}', port, context=ctx, timeout=5) if tls\n\
         \x20            else http.client.HTTPConnection('{ip}', port, timeout=5))\n\
         \x20       for i in range(3):\n\
         \x20           t = time.monotonic()\n\
         \x20           c.request('GET', '/work/%d' % i)\n\
         \x20           c.getresponse().read()\n\
         \x20           times.append((port, (time.monotonic() - t) * 1000))\n\
         \x20       c.close()\n\
         ts = [threading.Thread(target=run, args=t) for t in [{targets}] for _ in range(2)]\n\
         [t.start() for t in ts]\n\
         [t.join() for t in ts]\n\
         open('{log}', 'w').write(''.join('%d %f\\n' % t for t in times))\n",
        ip = ns.ip(),
        targets = targets.join(", ")
    );
    ChildGuard(
        Command::new("python3")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .spawn()
            .expect("python3"),
    )
}

/// The exporter's scrape once its histogram counts every request the
/// servers logged (a sample after the load ended), bounded in time.
fn scrape_after_load(
    exporter: &crate::common::exporter::Exporter,
    servers: &[(u16, u32, bool)],
    ns: &Ns,
    dir: &str,
) -> String {
    let count = |text: &str, port: u16| {
        let series = format!(
            "netlens_server_response_seconds_count{{server=\"{}:{port}\",",
            ns.ip()
        );
        text.lines()
            .find(|l| l.starts_with(&series))
            .and_then(|l| l.rsplit(' ').next()?.parse::<usize>().ok())
            .unwrap_or(0)
    };
    let logged = |port: u16| {
        std::fs::read_to_string(format!("{dir}/{port}.log")).map_or(0, |text| text.lines().count())
    };
    let mut text = String::new();
    crate::common::wait_until(
        "the exporter counts every request",
        Duration::from_secs(10),
        || {
            text = crate::common::socket_findings::scrape(exporter.addr);
            servers
                .iter()
                .all(|&(port, ..)| count(&text, port) >= logged(port))
        },
    );
    text
}

/// The series `netlens_server_response_seconds_bucket` of one server.
fn bucket(metrics: &str, server: &str, le: &str) -> u64 {
    let series = format!("netlens_server_response_seconds_bucket{{server=\"{server}\",");
    let bound = format!(",le=\"{le}\"}} ");
    metrics
        .lines()
        .filter(|l| l.starts_with(&series))
        .find_map(|l| l.split_once(&bound)?.1.parse().ok())
        .unwrap_or_else(|| panic!("no {series}..{bound}in the scrape"))
}

/// Each sample's response-time window of `server`, where it has one.
fn windows_of<'a>(samples: &'a [Value], server: &str) -> Vec<&'a Value> {
    samples
        .iter()
        .filter_map(|s| {
            s["capture"]["responses"]
                .as_array()?
                .iter()
                .find(|r| r["server"] == server)
        })
        .collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[test]
fn handlers_of_n_ms_answer_in_n_ms_and_only_the_slow_are_named() {
    if crate::common::need_root(&["ip", "python3", "openssl"]) {
        return;
    }
    let ns = Ns::new("nlrt", 150, 0);
    let dir = scratch_dir_for("response", "time");
    let d = dir.display().to_string();
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=netlens-test", "-keyout"])
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl");
    assert!(made.success(), "openssl req");
    // (port, handler ms, TLS): a fast and a slow one of each.
    let servers = [
        (8060u16, 40u32, false),
        (8250, 250, false),
        (8460, 60, true),
        (8650, 300, true),
    ];
    let guards: Vec<(u16, u32, ChildGuard)> = servers
        .iter()
        .map(|&(port, ms, tls)| {
            let log = format!("{d}/{port}.log");
            let g = server(&ns, port, ms, &log, tls.then_some(d.as_str()));
            (port, ms, g)
        })
        .collect();
    // Listening before the capture starts.
    crate::common::wait_until("the servers listen", Duration::from_secs(10), || {
        let out = Command::new("ip")
            .args(["netns", "exec", ns.name(), "ss", "-Htln"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        servers
            .iter()
            .all(|(port, ..)| text.contains(&format!(":{port} ")))
    });
    let exporter = crate::common::exporter::Exporter::start(&[
        "--netns",
        ns.name(),
        "--interval",
        "1s",
        "--capture",
    ]);
    let recording = format!("{d}/responses.nlrec");
    let snapshot = spawn_snapshot(&[
        "--netns",
        ns.name(),
        "--interval",
        "1s",
        "--count",
        "6",
        "--record",
        &recording,
    ]);
    // The same answers timed at the client: on this host, capturing on
    // its end of the veth only.
    let at_client = spawn_snapshot(&[
        "--iface",
        &ns.host_dev(),
        "--section",
        "flows",
        "--interval",
        "1s",
        "--count",
        "6",
    ]);
    std::thread::sleep(Duration::from_millis(1200));
    let ports: Vec<(u16, bool)> = servers.iter().map(|&(p, _, tls)| (p, tls)).collect();
    let client_log = format!("{d}/client.log");
    let mut client = load(&ns, &ports, 3.5, &client_log);
    assert!(client.0.wait().unwrap().success(), "the client failed");
    let samples = snapshot_samples(snapshot);
    let at_client = snapshot_samples(at_client);
    let metrics = scrape_after_load(&exporter, &servers, &ns, &d);
    // The recording replays the same servers' times and findings.
    let replayed = Command::new(crate::common::NETLENS)
        .args(["replay", "--json", &recording])
        .stdin(Stdio::null())
        .output()
        .expect("netlens replay");
    assert!(replayed.status.success(), "replay --json");
    let replayed = crate::common::parse_lines(&replayed.stdout);
    assert_eq!(replayed.len(), samples.len());
    for (live, again) in samples.iter().zip(&replayed) {
        assert_eq!(live["capture"]["responses"], again["capture"]["responses"]);
        assert_eq!(live["findings"], again["findings"]);
    }

    for (port, ms, guard) in &guards {
        let own: Vec<f64> = std::fs::read_to_string(format!("{d}/{port}.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.parse().ok())
            .collect();
        assert!(
            own.len() >= 5,
            "server :{port} answered {} requests",
            own.len()
        );
        let own_median = median(own.clone());
        let server = format!("{}:{port}", ns.ip());
        let windows = windows_of(&samples, &server);
        let answered: u64 = windows
            .iter()
            .map(|w| w["answered"].as_u64().unwrap())
            .sum();
        eprintln!(
            ":{port} ({ms} ms handler): the server answered {} (median {own_median:.1} ms), \
             netlens timed {answered}: {:?}",
            own.len(),
            windows
                .iter()
                .map(|w| (w["answered"].clone(), w["p50_ms"].clone()))
                .collect::<Vec<_>>()
        );
        // Requests still on their way when the capture ended are the
        // servers' only; every one netlens timed was answered.
        assert!(answered >= 5 && answered as usize <= own.len(), ":{port}");
        // The wire's time lies between the server's own clock (it starts
        // after the request is parsed and stops before the answer is sent)
        // and the client's (which adds the round trip and its own
        // scheduling): on a loaded host they part.
        let theirs: Vec<f64> = std::fs::read_to_string(&client_log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(p, _)| *p == port.to_string())
            .filter_map(|(_, t)| t.parse().ok())
            .collect();
        let their_median = median(theirs.clone());
        // At the client, one round trip is taken off each answer's time.
        let client_windows = windows_of(&at_client, &server);
        assert!(!client_windows.is_empty(), ":{port} timed at the client");
        for w in &client_windows {
            let p50 = w["p50_ms"].as_f64().unwrap();
            assert!(
                p50 > own_median * 0.9 && p50 < their_median * 1.1,
                ":{port} at the client: netlens' median {p50:.1} ms, the server's own \
                 {own_median:.1} ms, the client's {their_median:.1} ms"
            );
        }
        for w in &windows {
            let p50 = w["p50_ms"].as_f64().unwrap();
            assert!(
                p50 > own_median * 0.9 && p50 < their_median * 1.1,
                ":{port}: netlens' median {p50:.1} ms, the server's own {own_median:.1} ms, \
                 the client's {their_median:.1} ms"
            );
            assert_eq!(w["local"], true, "captured in the server's namespace");
            assert_eq!(w["pid"], guard.pid(), ":{port} is the python3 server's");
            if *port == 8060 || *port == 8250 {
                assert!(w["statuses"]["200"].as_u64().unwrap() > 0, "{w}");
            }
        }
        // The exporter counted all of them, none under a bound below the
        // handler's time.
        let bounds = [0.025, 0.05, 0.1, 0.25, 0.5];
        let below = bounds
            .iter()
            .rev()
            .find(|&&le| le * 1000.0 < f64::from(*ms))
            .unwrap();
        let above = bounds
            .iter()
            .find(|&&le| le * 1000.0 > own_median * 1.10)
            .unwrap();
        assert_eq!(
            bucket(&metrics, &server, &format!("{below:?}")),
            0,
            ":{port}"
        );
        // Under the bound past the median: between the client's count and
        // the server's own, give or take those within 5% of the bound (a
        // bucket counts by its mean).
        let bound_ms = above * 1000.0;
        let under = |times: &[f64]| times.iter().filter(|&&t| t <= bound_ms).count() as u64;
        let near = |times: &[f64]| {
            times
                .iter()
                .filter(|&&t| (t / bound_ms - 1.0).abs() < 0.05)
                .count() as u64
        };
        let (least, most) = (under(&theirs), under(&own));
        let counted = bucket(&metrics, &server, &format!("{above:?}"));
        assert!(
            counted + near(&theirs) >= least && counted <= most + near(&own),
            ":{port}: {counted} under {above} s; the client's times {least} (±{}), \
             the server's own {most} (±{})",
            near(&theirs),
            near(&own)
        );
        assert_eq!(
            bucket(&metrics, &server, "+Inf"),
            own.len() as u64,
            ":{port}"
        );
        let named: Vec<&Value> = samples
            .iter()
            .filter_map(|s| s["findings"].as_array())
            .flatten()
            .filter(|f| f["id"] == "conn:slow-response")
            .filter(|f| f["evidence"]["row"] == format!("port:{port}").as_str())
            .collect();
        if *ms >= 200 {
            let f = named
                .first()
                .unwrap_or_else(|| panic!(":{port} was not named"));
            let summary = f["summary"].as_str().unwrap();
            assert!(
                summary.contains(&format!("PID {} (python3) on {server}", guard.pid())),
                "{summary}"
            );
            if *port == 8250 {
                assert!(summary.contains("GET /work/"), "{summary}");
            }
        } else {
            assert!(named.is_empty(), ":{port} answers in {ms} ms: {named:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
