//! Queueing on a device without a link speed: a veth's root qdisc as
//! `tc -s qdisc show` reports it, in snapshot --json, and iface-saturated
//! judging the veth by its qdisc drops instead of %util. Needs root.

use crate::common;

use common::*;
use serde_json::Value;
use std::net::SocketAddrV4;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

/// (sent packets, dropped) of the root qdisc, from `tc -s qdisc show`.
fn tc_counters(ns: &Netns, dev: &str) -> (u64, u64) {
    let out = ns_exec(&ns.name, &["tc", "-s", "qdisc", "show", "dev", dev]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    // " Sent 218755 bytes 2096 pkt (dropped 0, overlimits 0 requeues 0)"
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Sent "))
        .unwrap_or_else(|| panic!("no Sent line in tc output:\n{text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |after: &str| -> u64 {
        let at = words.iter().position(|w| *w == after).unwrap();
        words[at + 1]
            .trim_end_matches(',')
            .parse()
            .unwrap_or_else(|_| panic!("bad tc line: {line}"))
    };
    let packets: u64 = words[3].parse().expect("tc pkt count");
    (packets, number("(dropped"))
}

/// Runs snapshot --json on namespace `ns`, one-second samples, while
/// `traffic` runs (started at the first sample), and returns the samples
/// from that one to the first taken after the traffic ended (its queue drained: at 1 Mbit/s
/// tbf's 3000 bytes take 24 ms). A loaded host may start the traffic
/// late: the samples follow it, not a fixed count.
fn snapshot_during(ns: &Netns, traffic: impl FnOnce() -> TrafficResult) -> Vec<Value> {
    use std::io::BufRead;
    let mut child = ChildGuard(
        Command::new(NETLENS)
            .args([
                "snapshot",
                "--json",
                "--no-capture",
                "--section",
                "interfaces,findings",
                "--count",
                "15",
                "--interval",
                "1s",
                "--netns",
                &ns.name,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn netlens"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (line, lines) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for text in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if line.send(text).is_err() {
                break;
            }
        }
    });
    // The traffic starts once netlens samples (its first line), not after
    // a fixed wait a loaded host may outlast.
    let first = lines
        .recv_timeout(Duration::from_secs(15))
        .expect("a first sample");
    let mut samples: Vec<Value> = vec![serde_json::from_str(&first).expect("a JSON line")];
    let sent = traffic();
    eprintln!("traffic: {sent:?}");
    while samples
        .last()
        .is_none_or(|s| s["t"].as_f64().unwrap() < sent.end_unix + 0.1)
    {
        let text = lines
            .recv_timeout(Duration::from_secs(15))
            .unwrap_or_else(|_| panic!("no sample after the traffic: {samples:?}"));
        samples.push(serde_json::from_str(&text).expect("a JSON line"));
    }
    let during = samples.iter().any(|s| {
        let t = s["t"].as_f64().unwrap();
        t > sent.start_unix && t <= sent.end_unix
    });
    assert!(during, "a sample during the traffic: {samples:?}");
    samples
}

fn saturated_for<'a>(sample: &'a Value, dev: &str) -> Option<&'a Value> {
    sample["findings"]
        .as_array()
        .expect("findings[]")
        .iter()
        .find(|f| f["id"] == "iface-saturated" && f["evidence"]["row"] == dev)
}

#[test]
fn qdisc_drops_on_a_veth_raise_iface_saturated() {
    if crate::common::need_root(&["ip", "tc"]) {
        return;
    }
    let pair = VethPair::new("qdisc-drop");
    let tc = ns_exec(
        &pair.a.name,
        &[
            "tc", "qdisc", "add", "dev", DEV_A, "root", "tbf", "rate", "1mbit", "burst", "1600",
            "limit", "3000",
        ],
    );
    assert!(tc.status.success(), "tc qdisc add failed: {tc:?}");
    // 20,000 datagrams of 200 bytes in 2 s (1.6 MB/s): far over 1 Mbit/s.
    let samples = snapshot_during(&pair.a, || {
        udp_traffic(
            &pair.a.path(),
            IP_A,
            &pair.b.path(),
            SocketAddrV4::new(IP_B, 9400),
            20_000,
            200,
            10_000.0,
        )
    });
    let last = samples.last().unwrap();
    let qdisc = &must_iface(last, DEV_A)["qdisc"];
    assert_eq!(qdisc["kind"], "tbf", "{qdisc}");
    // The traffic ended before the last sample and the queue drained, so
    // tc now says what netlens saw then (`snapshot_during` waits for it).
    let (tc_packets, tc_dropped) = tc_counters(&pair.a, DEV_A);
    eprintln!("tc: sent {tc_packets} pkt, dropped {tc_dropped}; netlens: {qdisc}");
    assert!(tc_dropped > 1000, "tbf should drop most of the burst");
    let drops = u64f(qdisc, "drops");
    assert!(
        drops.abs_diff(tc_dropped) <= 5,
        "netlens drops {drops} vs tc dropped {tc_dropped}"
    );
    assert!(u64f(qdisc, "packets").abs_diff(tc_packets) <= 5);
    // While the burst ran, the veth was saturated by its qdisc, not by %util.
    let during = samples
        .iter()
        .skip(1)
        .take(2)
        .find_map(|s| saturated_for(s, DEV_A))
        .unwrap_or_else(|| panic!("no iface-saturated for {DEV_A}: {samples:?}"));
    let summary = during["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(&format!("{DEV_A}: no link speed; qdisc tbf dropped ")),
        "{summary}"
    );
    assert!(summary.contains("packets/s"), "{summary}");
    assert_eq!(during["severity"], "crit");
    let hint = during["hint"].as_str().unwrap();
    assert!(hint.contains("tbf"), "{hint}");
    assert!(
        hint.contains(&format!("tc -s qdisc show dev {DEV_A}")),
        "{hint}"
    );
    assert!(must_iface(last, DEV_A)["util_percent"].is_null());
}

#[test]
fn healthy_veth_under_its_rate_stays_quiet() {
    if crate::common::need_root(&["ip", "tc"]) {
        return;
    }
    let pair = VethPair::new("qdisc-ok");
    let tc = ns_exec(
        &pair.a.name,
        &[
            "tc", "qdisc", "add", "dev", DEV_A, "root", "tbf", "rate", "1mbit", "burst", "1600",
            "limit", "3000",
        ],
    );
    assert!(tc.status.success(), "tc qdisc add failed: {tc:?}");
    // 200 datagrams of 200 bytes at 100/s: 20 kB/s, well under 1 Mbit/s.
    let samples = snapshot_during(&pair.a, || {
        udp_traffic(
            &pair.a.path(),
            IP_A,
            &pair.b.path(),
            SocketAddrV4::new(IP_B, 9401),
            200,
            200,
            100.0,
        )
    });
    let (tc_packets, tc_dropped) = tc_counters(&pair.a, DEV_A);
    assert_eq!(tc_dropped, 0);
    assert!(tc_packets >= 200);
    for sample in &samples {
        assert!(
            saturated_for(sample, DEV_A).is_none(),
            "iface-saturated on a healthy veth: {sample}"
        );
        let qdisc = &must_iface(sample, DEV_A)["qdisc"];
        assert_eq!(u64f(qdisc, "drops"), 0);
    }
    let last = &must_iface(samples.last().unwrap(), DEV_A)["qdisc"];
    assert_eq!(u64f(last, "packets"), tc_packets);
    // Rates are there once the qdisc has an earlier sample.
    assert!(last["packets_per_s"].is_number(), "{last}");
}
