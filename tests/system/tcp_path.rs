//! What a sender's own accounting says about its rate and its path
//! (tcp_info's pacing rate and cap, reord_seen, reordering, dsack_dups,
//! notsent), as the connection catalogue's findings and `snapshot --json`
//! give it, against `ss -ti` read just before and just after, for senders
//! made the way real ones get there, each at two sizes: an application
//! that caps its own rate (SO_MAX_PACING_RATE), a path that reorders (a
//! delay line holding one packet in N), and a bulk writer behind a shaper
//! whose data waits in its own socket.

use super::tcp_limits::{
    between, conn_findings, cubic_writer, fast_reader, netlens_sender, polled_during, shape,
    ss_info, subnet_of_b,
};
use crate::common::socket_findings::wait_ready;
use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A number `ss -ti` printed: "1234", "1234bps", "12bps/34bps" (the
/// part before the slash).
fn number(info: &HashMap<String, String>, key: &str) -> f64 {
    let text = info.get(key).map_or("0", String::as_str);
    let first = text.split('/').next().unwrap().trim_end_matches("bps");
    first.parse().unwrap_or_else(|_| panic!("ss {key}: {text}"))
}

/// ss's reading of the sender to `port` before and after the connection
/// findings of `ns` were taken, with the seconds between the two reads
/// (from the middle of one `ss` run to the middle of the other: each takes
/// a while to start on a loaded box).
fn findings_beside_ss(
    ns: &str,
    port: u16,
) -> (
    Vec<Value>,
    HashMap<String, String>,
    HashMap<String, String>,
    f64,
) {
    let timed = || {
        let started = Instant::now();
        let info = ss_info(ns, port);
        (info, started + started.elapsed() / 2)
    };
    let (before, first) = timed();
    let found = conn_findings(ns);
    let (after, second) = timed();
    (found, before, after, (second - first).as_secs_f64())
}

/// The unsent bytes a conn:unsent-wait summary gives ("(2.0 MiB unsent"),
/// with half its last digit's worth.
fn unsent_bytes(summary: &str) -> (f64, f64) {
    let number = after_word(summary, "is sent (");
    let at = summary.find(" unsent at").unwrap();
    let unit = summary[..at].rsplit(' ').next().unwrap();
    match unit {
        "MiB" => (number * 1_048_576.0, 0.05 * 1_048_576.0),
        "KiB" => (number * 1024.0, 512.0),
        _ => (number, 0.5),
    }
}

/// The one finding of `id`, whose summary starts with the sender's PID
/// and IP_B's subnet.
fn the_finding<'a>(found: &'a [Value], id: &str, pid: u32) -> &'a str {
    let of_id: Vec<&Value> = found.iter().filter(|f| f["id"] == id).collect();
    assert_eq!(of_id.len(), 1, "one {id}: {found:?}");
    let summary = of_id[0]["summary"].as_str().unwrap();
    let who = format!("PID {pid} (python3) -> {}: ", subnet_of_b());
    assert!(summary.starts_with(&who), "{summary}");
    summary
}

/// The number just after `before` in `text`: "delivered 9.8 Mbit/s" with
/// `before` "delivered " -> 9.8.
fn after_word(text: &str, before: &str) -> f64 {
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} in {text}"));
    text[at + before.len()..]
        .split([' ', ',', '('])
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("a number after {before:?} in {text}"))
}

#[test]
fn a_pacing_cap_the_application_set_is_named_with_its_value() {
    if need_root(&["ip", "ss", "python3"]) {
        return;
    }
    let pair = VethPair::new("nltp");
    let (a, b) = (pair.a.name.clone(), pair.b.name.clone());
    for (port, mbit) in [(7331u16, 8u64), (7332, 40)] {
        let mut reader = fast_reader(&b, port);
        wait_ready(&mut reader);
        // SO_MAX_PACING_RATE (47), in bytes a second.
        let cap = mbit * 125_000;
        let mut sender = cubic_writer(
            &a,
            port,
            &format!("c.setsockopt(socket.SOL_SOCKET, 47, {cap})"),
        );
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(1500));
        let (found, before, after, seconds) = findings_beside_ss(&a, port);
        eprintln!("cap {mbit} Mbit/s: ss {after:?}; {found:?}");
        // ss prints the cap after the pacing rate: "pacing_rate X/CAPbps".
        let ss_cap = after["pacing_rate"].split('/').nth(1).unwrap();
        assert_eq!(ss_cap, format!("{}bps", mbit * 1_000_000));
        let summary = the_finding(&found, "conn:pacing-capped", sender.0.id());
        assert!(
            summary.contains(&format!(
                "1 connection capped by the application at {mbit}.0 Mbit/s each \
                 (SO_MAX_PACING_RATE)"
            )),
            "{summary}"
        );
        // What it delivered over its interval against ss's bytes_acked
        // over the reads around it: a paced sender is steady.
        let ours = after_word(summary, "delivered ");
        let acked = number(&after, "bytes_acked") - number(&before, "bytes_acked");
        let theirs = acked * 8.0 / seconds / 1e6;
        assert!(
            (ours - theirs).abs() <= 0.1 * theirs,
            "netlens {ours} Mbit/s, ss {theirs:.2}"
        );
        // The same cap in the socket's JSON.
        let socket = netlens_sender(&a, port);
        assert_eq!(
            socket["limits"]["max_pacing_rate_bps"].as_u64(),
            Some(mbit * 1_000_000),
            "{socket}"
        );
        // A recording replays the same finding and socket.
        let recording = scratch("tcp-path", &format!("paced-{port}.nlrec"));
        let path = recording.to_str().unwrap();
        let live = snapshot(&["--netns", &a, "--no-capture", "--record", path]);
        let replayed = std::process::Command::new(NETLENS)
            .args(["replay", "--json", path])
            .output()
            .expect("netlens replay");
        std::fs::remove_file(&recording).unwrap();
        assert!(replayed.status.success(), "replay --json");
        let replayed = parse_lines(&replayed.stdout);
        let (live, again) = (live.last().unwrap(), replayed.last().unwrap());
        assert_eq!(live["findings"], again["findings"]);
        assert!(
            live["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["id"] == "conn:pacing-capped"),
            "{}",
            live["findings"]
        );
        let mine = |s: &Value| {
            s["sockets"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["peer"] == format!("{IP_B}:{port}").as_str())
                .cloned()
        };
        assert_eq!(
            mine(live).unwrap()["limits"],
            mine(again).unwrap()["limits"]
        );
        drop((sender, reader));
    }
    let _ = std::fs::remove_dir(scratch_dir("tcp-path"));
}

/// In `ns`, the delay line holding every `every`th packet to `port` for
/// `delay_ms`, for at most 20 s (the rule goes with the namespace).
fn reorder(ns: &str, port: u16, every: u32, delay_ms: u32) -> ChildGuard {
    let matching = format!("--dport {port} -m statistic --mode nth --every {every} --packet 0");
    delay_line(ns, &matching, delay_ms)
}

/// In `ns`, the delay line holding the TCP packets it sends that
/// `matching` (iptables words) selects for `delay_ms`, for at most 20 s
/// (the rule goes with the namespace).
pub(super) fn delay_line(ns: &str, matching: &str, delay_ms: u32) -> ChildGuard {
    delay_line_for(ns, &format!("-p tcp {matching}"), delay_ms)
}

/// As `delay_line`, for the packets `rule` (iptables words, the protocol
/// included) selects.
pub(super) fn delay_line_for(ns: &str, rule: &str, delay_ms: u32) -> ChildGuard {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/delay_line.py");
    let mut line = ChildGuard(
        std::process::Command::new("ip")
            .args(["netns", "exec", ns, "python3", script, "0"])
            .args([delay_ms.to_string(), "20".to_string()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3"),
    );
    wait_ready(&mut line);
    let rule = format!("-I OUTPUT {rule} -j NFQUEUE --queue-num 0 --queue-bypass");
    let args: Vec<&str> = ["iptables", "-w"]
        .into_iter()
        .chain(rule.split(' '))
        .collect();
    let out = ns_exec(ns, &args);
    assert!(out.status.success(), "{out:?}");
    line
}

#[test]
fn a_path_that_reorders_is_named_as_ss_counts_it() {
    if need_root(&["ip", "ss", "nstat", "python3", "iptables"]) {
        return;
    }
    let pair = VethPair::new("nlto");
    let (a, b) = (pair.a.name.clone(), pair.b.name.clone());
    // One packet in 16 held 12 ms, then one in 40 held 5 ms: later ones
    // overtake it, as on a path that load-balances per packet.
    for (port, every, delay_ms) in [(7341u16, 16u32, 12u32), (7342, 40, 5)] {
        let line = reorder(&a, port, every, delay_ms);
        let mut reader = fast_reader(&b, port);
        wait_ready(&mut reader);
        // Its start, while the sender learns how far the path reorders:
        // a snapshot whose first sample is taken before it connects, so
        // its whole counts fall in the interval.
        let snapshot = spawn_snapshot(&[
            "--netns",
            &a,
            "--no-capture",
            "--section",
            "findings",
            "--interval",
            "3s",
        ]);
        std::thread::sleep(Duration::from_millis(1000));
        let nstat_at_start = nstat(&a, "TcpExtTCPDSACKRecvSegs");
        let mut sender = cubic_writer(&a, port, "");
        wait_ready(&mut sender);
        let pid = sender.0.id();
        let start = snapshot_samples(snapshot)[0]["findings"].clone();
        let at_start = ss_info(&a, port);
        let start: Vec<Value> = start.as_array().cloned().unwrap_or_default();
        eprintln!("1 in {every} held {delay_ms} ms, start: ss {at_start:?}; {start:?}");
        let ss_retrans: f64 = at_start["retrans"]
            .split('/')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        // The start is named for the path: needless retransmits when the
        // sender took at least 10 before it learned (how many depends on
        // how fast it grew), else the reordering itself.
        let spurious = start.iter().any(|f| f["id"] == "conn:spurious-retrans");
        if spurious {
            let summary = the_finding(&start, "conn:spurious-retrans", pid);
            assert!(
                summary.contains("because the path reordered segments"),
                "{summary}"
            );
            // Its counts, within what ss counted by just after.
            let retransmitted = after_word(summary, "retransmitted ");
            let needless = after_word(summary, "segments, ");
            assert!(retransmitted <= ss_retrans, "{summary} vs {at_start:?}");
            assert!(
                needless <= number(&at_start, "dsack_dups"),
                "{summary} vs {at_start:?}"
            );
        } else {
            let summary = the_finding(&start, "conn:reordering", pid);
            let times = after_word(summary, "out of order ");
            assert!(
                times <= number(&at_start, "reord_seen"),
                "{summary} vs {at_start:?}"
            );
        }
        std::thread::sleep(Duration::from_millis(500));
        let (found, before, after, _) = findings_beside_ss(&a, port);
        eprintln!("1 in {every} held {delay_ms} ms: ss {after:?}; {found:?}");
        // ss saw the reordering: the sender counted it and raised the
        // degree it waits for above net.ipv4.tcp_reordering's 3.
        assert!(number(&after, "reord_seen") > 0.0, "{after:?}");
        assert!(number(&after, "reordering") > 3.0, "{after:?}");
        let moved = |key| number(&after, key) - number(&before, key);
        // Later, needless retransmits or reordering: what the finding says
        // is counted within ss's reads around it.
        let spurious = found.iter().any(|f| f["id"] == "conn:spurious-retrans");
        if spurious {
            let summary = the_finding(&found, "conn:spurious-retrans", pid);
            assert!(
                summary.contains("because the path reordered segments"),
                "{summary}"
            );
            let dsack = after_word(summary, "segments, ");
            assert!(dsack <= moved("dsack_dups"), "{summary} vs {after:?}");
        } else {
            let summary = the_finding(&found, "conn:reordering", pid);
            let times = after_word(summary, "out of order ");
            assert!(times <= moved("reord_seen"), "{summary} vs {after:?}");
        }
        // The socket's cumulative counters in JSON lie between ss's reads,
        // and so do nstat's counts of the namespace's D-SACKed segments
        // since the connection began (it is the only sender there).
        let before = ss_info(&a, port);
        let limits = netlens_sender(&a, port)["limits"].clone();
        let dsack_segs = nstat(&a, "TcpExtTCPDSACKRecvSegs") - nstat_at_start;
        let after = ss_info(&a, port);
        between(
            "nstat TCPDSACKRecvSegs",
            dsack_segs as f64,
            number(&before, "dsack_dups"),
            number(&after, "dsack_dups"),
        );
        for (ours, theirs) in [
            ("reord_seen", "reord_seen"),
            ("dsack_dups", "dsack_dups"),
            ("reordering", "reordering"),
        ] {
            between(
                ours,
                limits[ours].as_f64().unwrap(),
                number(&before, theirs),
                number(&after, theirs),
            );
        }
        drop((sender, reader, line));
    }
}

/// `sysctl -n NAME` in `ns`, its words joined by one space.
fn sysctl(ns: &str, name: &str) -> String {
    let out = ns_exec(ns, &["sysctl", "-n", name]);
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn data_waiting_in_the_socket_is_named_as_the_applications_wait() {
    if need_root(&["ip", "ss", "tc", "python3", "sysctl"]) {
        return;
    }
    let pair = VethPair::new("nltu");
    let (a, b) = (pair.a.name.clone(), pair.b.name.clone());
    let lowat = sysctl(&a, "net.ipv4.tcp_notsent_lowat");
    // A shaper with a short queue (5 ms): the wait is not in the qdisc or
    // the path but in the writer's own socket, which a large send buffer
    // lets it fill: first its own SO_SNDBUF, then the namespace's
    // tcp_wmem default.
    let big_default = "4096 4194304 4194304";
    let sndbuf = "c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)";
    for (port, rate, setup, wmem) in [
        (7351u16, "20mbit", sndbuf, None),
        (7352, "80mbit", "", Some(big_default)),
    ] {
        if let Some(wmem) = wmem {
            pair.a.sysctl("net.ipv4.tcp_wmem", wmem);
            assert_eq!(sysctl(&a, "net.ipv4.tcp_wmem"), wmem);
        }
        shape(&a, rate, "10kb", "5ms");
        let mut reader = fast_reader(&b, port);
        wait_ready(&mut reader);
        let mut sender = cubic_writer(&a, port, setup);
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(2000));
        let ((found, before, after, seconds), polled) = polled_during(
            || number(&ss_info(&a, port), "notsent"),
            || findings_beside_ss(&a, port),
        );
        let least = polled.iter().copied().fold(f64::MAX, f64::min);
        let most = polled.iter().copied().fold(0f64, f64::max);
        eprintln!("tbf {rate}: ss {after:?}, notsent {least}..{most}; {found:?}");
        let summary = the_finding(&found, "conn:unsent-wait", sender.0.id());
        // The wait: ss's unsent bytes at the rate ss's bytes_acked rose.
        // The writer refills its buffer in bursts, so the unsent bytes
        // swing within a sample; netlens's lie within what ss saw while
        // netlens ran.
        let per_s = (number(&after, "bytes_acked") - number(&before, "bytes_acked")) / seconds;
        let (unsent, rounding) = unsent_bytes(summary);
        assert!(
            least * 0.95 - rounding <= unsent && unsent <= most * 1.05 + rounding,
            "netlens {unsent} unsent, ss {least}..{most}: {summary}"
        );
        let (low, high) = (least / per_s * 1000.0, most / per_s * 1000.0);
        let ms = after_word(summary, "now waits ");
        assert!(
            low * 0.8 <= ms && ms <= high * 1.25,
            "netlens {ms} ms, ss {low:.0}..{high:.0} ms: {summary}"
        );
        let hint = found
            .iter()
            .find(|f| f["id"] == "conn:unsent-wait")
            .unwrap()["hint"]
            .as_str()
            .unwrap();
        let wmem = sysctl(&a, "net.ipv4.tcp_wmem");
        for named in [
            format!("net.ipv4.tcp_wmem's default, here {wmem}"),
            format!("net.ipv4.tcp_notsent_lowat, here {lowat}"),
        ] {
            assert!(hint.contains(&named), "{named:?} in {hint}");
        }
        drop((sender, reader));
        // The same writer with TCP_NOTSENT_LOWAT (25) at 16 KiB keeps its
        // unsent part short: no wait to name.
        let port = port + 10;
        let mut reader = fast_reader(&b, port);
        wait_ready(&mut reader);
        let lowat = format!("{setup}\nc.setsockopt(socket.IPPROTO_TCP, 25, 16384)");
        let mut sender = cubic_writer(&a, port, &lowat);
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(2000));
        let (found, _, after, _) = findings_beside_ss(&a, port);
        assert!(number(&after, "notsent") <= 16384.0 + 65536.0, "{after:?}");
        let mine = format!("PID {} ", sender.0.id());
        assert!(
            !found.iter().any(|f| f["id"] == "conn:unsent-wait"
                && f["summary"].as_str().unwrap().starts_with(&mine)),
            "{found:?}"
        );
        drop((sender, reader));
    }
}
