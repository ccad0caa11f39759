//! The receiver's side of a window-limited connection: a namespace that
//! only receives, behind a delay line that holds its ACKs (the RTT), with
//! its receive buffer held by the application's SO_RCVBUF, then by
//! net.ipv4.tcp_rmem's maximum, each at another RTT; and with room to
//! spare behind a shaper, where nothing is raised. netlens' finding and
//! `snapshot --json` against `ss -tin` of the receiving socket read just
//! before and just after.

use super::tcp_limits::{conn_findings, cubic_writer, polled_during, shape, subnet_of_b};
use super::tcp_path::delay_line;
use crate::common::socket_findings::wait_ready;
use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A receiver on IP_B:`port` that runs `setup` on its listening socket
/// `s` (an accepted socket inherits its buffer) and reads whatever comes,
/// at once, for at most 20 s.
fn reader(ns: &str, port: u16, setup: &str) -> ChildGuard {
    python_in(
        ns,
        &format!(
            "import socket, time\n\
             s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
             {setup}\n\
             s.bind(('{IP_B}', {port})); s.listen(1); print('ready', flush=True)\n\
             c, _ = s.accept(); end = time.time() + 20\n\
             while time.time() < end and c.recv(1 << 20): pass\n"
        ),
    )
}

/// `ss -tinmH` of the receiving socket on `port`: its words ("rcv_rtt:20.5"
/// -> rcv_rtt = 20.5, "skmem:(r0,rb65536,...)" -> rb = 65536), and when
/// the middle of the `ss` run was.
fn receiver_info(ns: &str, port: u16) -> (HashMap<String, f64>, Instant) {
    let started = Instant::now();
    let out = ns_exec(
        ns,
        &[
            "ss",
            "-tinmH",
            "state",
            "established",
            "src",
            &format!("{IP_B}:{port}"),
        ],
    );
    let middle = started + started.elapsed() / 2;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut words = HashMap::new();
    for token in text.split_whitespace() {
        if let Some(skmem) = token.strip_prefix("skmem:(") {
            for part in skmem.trim_end_matches(')').split(',') {
                if let Some(rb) = part.strip_prefix("rb") {
                    words.insert("rb".to_string(), rb.parse().unwrap());
                }
            }
        } else if let Some((key, Ok(number))) = token
            .split_once(':')
            .map(|(key, value)| (key, value.parse::<f64>()))
        {
            words.insert(key.to_string(), number);
        }
    }
    assert!(words.contains_key("rcv_ssthresh"), "ss: {text}");
    (words, middle)
}

/// The least and the most of `key` in `polled`.
fn range(polled: &[HashMap<String, f64>], key: &str) -> (f64, f64) {
    polled
        .iter()
        .map(|info| info[key])
        .fold((f64::MAX, 0f64), |(low, high), v| (low.min(v), high.max(v)))
}

/// The number just after `before` in `text`.
fn after_word(text: &str, before: &str) -> f64 {
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} in {text}"));
    text[at + before.len()..]
        .split([' ', ',', '(', '%'])
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("a number after {before:?} in {text}"))
}

/// `value` lies within ss's two reads, widened by `slack` either way.
fn within(what: &str, value: f64, a: f64, b: f64, slack: f64) {
    let (low, high) = (a.min(b), a.max(b));
    assert!(
        low * (1.0 - slack) <= value && value <= high * (1.0 + slack),
        "{what}: netlens {value}, ss {a} and {b}"
    );
}

#[test]
fn a_receive_window_that_holds_the_sender_is_named_on_the_receiver() {
    // Heavy: the delay line is a userspace queue forwarding tens of
    // Mbit/s; beside a flood the receiver gets less than its window lets
    // through, and the finding rightly stays quiet.
    let Some(_heavy) =
        crate::common::need_root_heavy(&["ip", "ss", "python3", "iptables", "tc", "sysctl"])
    else {
        return;
    };
    let pair = VethPair::new("nlrw");
    let (a, b) = (pair.a.name.clone(), pair.b.name.clone());
    let default_rmem = {
        let out = ns_exec(&b, &["sysctl", "-n", "net.ipv4.tcp_rmem"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    // The application's SO_RCVBUF (32 KiB, a 64 KiB buffer) at 20 ms, then
    // autotuning's ceiling (128 KiB) at 16 ms: each caps the sender near
    // 20-50 Mbit/s, far below what a veth carries and what the delay line
    // (a userspace queue) forwards on a loaded host.
    let rcvbuf = "s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)";
    for (port, delay_ms, setup, rmem) in [
        (7361u16, 20u32, rcvbuf, None),
        (7362, 16, "", Some("4096 65536 131072")),
    ] {
        if let Some(rmem) = rmem {
            pair.b.sysctl("net.ipv4.tcp_rmem", rmem);
        }
        let _line = delay_line(&b, &format!("--sport {port}"), delay_ms);
        let mut receiver = reader(&b, port, setup);
        wait_ready(&mut receiver);
        let mut sender = cubic_writer(&a, port, "");
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(2000));
        // One sample judges one interval: a delay line descheduled for a
        // moment (a userspace queue, on a loaded box) can leave one second
        // under the share. The finding must be raised in one of three
        // consecutive samples; the shaped case below, in none.
        let mut attempts = 0;
        let ((found, (before, first), (after, second)), polled) = loop {
            attempts += 1;
            let measured = polled_during(
                || receiver_info(&b, port).0,
                || {
                    let before = receiver_info(&b, port);
                    let found = conn_findings(&b);
                    (found, before, receiver_info(&b, port))
                },
            );
            let ((found, (before, _), (after, _)), _) = &measured;
            eprintln!("receiver {port}, sample {attempts}: ss {before:?} {after:?}; {found:?}");
            let raised = found.iter().any(|f| f["id"] == "conn:rcvbuf-limited");
            if raised || attempts == 3 {
                break measured;
            }
        };
        let seconds = (second - first).as_secs_f64();
        let mine: Vec<&Value> = found
            .iter()
            .filter(|f| f["id"] == "conn:rcvbuf-limited")
            .collect();
        assert_eq!(mine.len(), 1, "{found:?}");
        let summary = mine[0]["summary"].as_str().unwrap();
        let who = format!("PID {} (python3) <- {}: ", receiver.0.id(), subnet_of_b());
        assert!(summary.starts_with(&who), "{summary}");
        // What it received: ss's bytes_received over the same stretch.
        let per_s = (after["bytes_received"] - before["bytes_received"]) / seconds;
        let mbit = after_word(summary, " received ");
        within("Mbit/s received", mbit, per_s * 8e-6, per_s * 8e-6, 0.25);
        // The window and the RTT it names are ss's.
        let window_kib = after_word(summary, "(window ");
        let (low, high) = range(&polled, "rcv_ssthresh");
        within("window KiB", window_kib, low / 1024.0, high / 1024.0, 0.05);
        let rtt = after_word(summary, " KiB at ");
        let (low, high) = range(&polled, "rcv_rtt");
        within("rcv_rtt", rtt, low, high, 0.1);
        assert!(rtt >= f64::from(delay_ms) * 0.9, "{summary}");
        // The setting behind it, with its value.
        let hint = mine[0]["hint"].as_str().unwrap();
        let named = match rmem {
            None => "the application set SO_RCVBUF, which turns autotuning off for the socket; \
                     raise it, or leave it unset for autotuning to grow the buffer"
                .to_string(),
            Some(rmem) => format!("net.ipv4.tcp_rmem's maximum, here {rmem} ("),
        };
        assert!(hint.contains(&named), "{named:?} in {hint}");
        if rmem.is_none() {
            let here = format!("net.ipv4.tcp_rmem's maximum, here {default_rmem}");
            assert!(hint.contains(&here), "{here:?} in {hint}");
        }
        // The socket's receiver fields in JSON lie within ss's reads.
        let (samples, polled) = polled_during(
            || receiver_info(&b, port).0,
            || snapshot(&["--netns", &b, "--no-capture", "--section", "sockets"]),
        );
        let peer_port =
            |s: &&Value| s["local"] == format!("{IP_B}:{port}").as_str() && s["state"] != "LISTEN";
        let socket = samples[0]["sockets"]
            .as_array()
            .unwrap()
            .iter()
            .find(peer_port)
            .unwrap_or_else(|| panic!("no receiver on {port}: {}", samples[0]["sockets"]))
            .clone();
        let limits = &socket["limits"];
        for (ours, theirs) in [
            ("rcv_ssthresh", "rcv_ssthresh"),
            ("rcv_space", "rcv_space"),
            ("rcv_rtt_ms", "rcv_rtt"),
        ] {
            let value = limits[ours]
                .as_f64()
                .unwrap_or_else(|| panic!("{ours} in {socket}"));
            let (low, high) = range(&polled, theirs);
            within(ours, value, low, high, 0.01);
        }
        drop((sender, receiver));
    }
    // Room to spare: the default buffers behind a 100 Mbit/s shaper. The
    // window grows past what the path carries; nothing is raised.
    pair.b.sysctl("net.ipv4.tcp_rmem", &default_rmem);
    let port = 7363;
    shape(&a, "100mbit", "20kb", "20ms");
    let _line = delay_line(&b, &format!("--sport {port}"), 20);
    let mut receiver = reader(&b, port, "");
    wait_ready(&mut receiver);
    let mut sender = cubic_writer(&a, port, "");
    wait_ready(&mut sender);
    std::thread::sleep(Duration::from_millis(2000));
    for _ in 0..3 {
        let found = conn_findings(&b);
        assert!(
            !found.iter().any(|f| f["id"] == "conn:rcvbuf-limited"),
            "{found:?}"
        );
    }
    let (info, _) = receiver_info(&b, port);
    assert!(info["bytes_received"] > 1e6, "no transfer: {info:?}");
}
