//! The command line: `load probe`, bad input as one clear line, text
//! output that looks like the tools.

use super::*;

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
