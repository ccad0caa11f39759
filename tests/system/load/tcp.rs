//! `load tcp`: byte counts against serve, the rate limit, and a real
//! iperf3 server's own report.

use super::*;

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

/// Issue 24: `load tcp` against a real `iperf3 -s` speaks iperf3's protocol
/// (found by its answer to the cookie) and reports the byte counts the
/// iperf3 server reports itself (`iperf3 -s -J -1`), forward and reverse.
/// Both ends run in a namespace this test creates, on 198.18.77.1.
#[test]
fn tcp_against_a_real_iperf3_server_agrees_with_its_report() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "iperf3"]) else {
        return;
    };
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
