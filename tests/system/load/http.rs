//! `load http`: counts against serve and nginx, latency percentiles under
//! an injected delay, slow answers as timeouts, redirects never followed.

use super::*;

#[test]
fn http_request_and_byte_counts_agree_with_serve() {
    let _heavy = crate::common::heavy();
    let serve = Serve::start(None, "127.0.0.1", &["--body", "1000"]);
    let url = format!("http://127.0.0.1:{}/", serve.port);
    let summary = &http_for_a_second(&url);
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
    let summary = &http_for_a_second(&url);
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

/// `netlens load http URL` for 1 s, 8 connections on 2 threads: its
/// summary line.
fn http_for_a_second(url: &str) -> serde_json::Value {
    let args = [
        "http",
        url,
        "-c",
        "8",
        "--threads",
        "2",
        "-t",
        "1",
        "--json",
    ];
    load_json(None, &args).pop().expect("the summary line")
}
