//! `netlens trace` on a real kernel: a routed chain of namespaces
//! (tests/common/path_chain.rs), probes only to 198.18.0.0/15 inside them,
//! bounded by --count. No timed assertions: the figures asserted are
//! orders (which hop, which finding), not durations.

use crate::common;

use common::NETLENS;
use common::path_chain::{Chain, PORT, R1, R2, R2_FROM_R1, SERVER};
use serde_json::Value;
use std::process::{Command, Output};

fn netlens(args: &[&str]) -> Output {
    Command::new(NETLENS)
        .args(args)
        .output()
        .expect("run netlens")
}

/// `netlens trace --json` from the chain's client: fast rounds, a short
/// probe timeout, `count` rounds.
fn trace(chain: &Chain, extra: &[&str], count: u32) -> Value {
    let count = count.to_string();
    let dest = format!("{SERVER}:{PORT}");
    let mut args = vec![
        "trace",
        "--netns",
        &chain.client.name,
        "--json",
        "--interval",
        "100ms",
        "--timeout",
        "500ms",
        "--rate",
        "50",
        "--count",
        &count,
    ];
    args.extend_from_slice(extra);
    args.push(&dest);
    let out = netlens(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn addrs(report: &Value) -> Vec<String> {
    report["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["addr"].as_str().unwrap_or("???").to_string())
        .collect()
}

fn loss(report: &Value, ttl: usize) -> f64 {
    report["hop_figures"][ttl - 1]["loss_percent"]
        .as_f64()
        .unwrap()
}

fn finding_rows(report: &Value, id: &str) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id)
        .map(|f| f["evidence"]["row"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tcp_udp_and_icmp_probes_list_the_hops_in_order_to_the_server() {
    if crate::common::need_root(&["ip", "iptables", "sysctl", "tc"]) {
        return;
    }
    let chain = Chain::new("tr-hops");
    let expected = [R1, R2, SERVER].map(|a| a.to_string());
    for kind in [&[][..], &["--udp"], &["--icmp"]] {
        let report = trace(&chain, kind, 4);
        assert_eq!(addrs(&report), expected, "{kind:?}: {report}");
        assert_eq!(report["reached"], true, "{kind:?}");
        assert_eq!(report["rounds"], 4);
        for hop in report["hops"].as_array().unwrap() {
            assert_eq!(hop["sent"], 4, "{kind:?}: {hop}");
            assert!(hop["received"].as_u64().unwrap() >= 3, "{kind:?}: {hop}");
        }
        assert!(
            report["findings"].as_array().unwrap().is_empty(),
            "{report}"
        );
    }
}

#[test]
fn loss_from_hop_2_to_the_end_is_path_loss_named_at_hop_2() {
    if crate::common::need_root(&["ip", "iptables", "sysctl", "tc"]) {
        return;
    }
    let chain = Chain::new("tr-loss");
    // Every Nth packet entering r2 from r1 is dropped. A round sends r2
    // three: the probes for hop 2 and for the server, and the client
    // kernel's RST to the server's SYN-ACK; N prime to 3 spreads the drops
    // over all of them (N = 3 would drop only hop 2's probes).
    for every in ["4", "5"] {
        let rule = [
            "-t",
            "raw",
            "-A",
            "PREROUTING",
            "-i",
            R2_FROM_R1,
            "-m",
            "statistic",
            "--mode",
            "nth",
            "--every",
            every,
            "--packet",
            "0",
            "-j",
            "DROP",
        ];
        chain.in_r2(&[&["iptables"][..], &rule[..]].concat());
        let report = trace(&chain, &[], 20);
        chain.in_r2(&["iptables", "-t", "raw", "-F", "PREROUTING"]);
        assert_eq!(loss(&report, 1), 0.0, "every {every}: {report}");
        assert!(loss(&report, 2) > 0.0, "every {every}: {report}");
        assert!(loss(&report, 3) > 0.0, "every {every}: {report}");
        assert_eq!(
            finding_rows(&report, "path-loss"),
            [format!("hop 2 ({R2})")],
            "every {every}: {report}"
        );
    }
}

#[test]
fn a_router_limiting_its_own_icmp_shows_loss_there_alone_and_no_path_loss() {
    if crate::common::need_root(&["ip", "iptables", "sysctl", "tc"]) {
        return;
    }
    let chain = Chain::new("tr-limit");
    // r1 at the kernel's default ICMP rate limit (1000 ms per destination,
    // a burst of a few), then r1 dropping its own time exceeded instead.
    chain.r1.sysctl("net.ipv4.icmp_ratelimit", "1000");
    let limited = trace(&chain, &[], 20);
    chain.r1.sysctl("net.ipv4.icmp_ratelimit", "0");
    let drop_own = [
        "iptables",
        "-A",
        "OUTPUT",
        "-p",
        "icmp",
        "--icmp-type",
        "time-exceeded",
        "-m",
        "statistic",
        "--mode",
        "nth",
        "--every",
        "2",
        "--packet",
        "0",
        "-j",
        "DROP",
    ];
    common::ns_exec(&chain.r1.name, &drop_own);
    let dropping = trace(&chain, &[], 20);
    for report in [limited, dropping] {
        assert!(loss(&report, 1) > 0.0, "{report}");
        assert_eq!(loss(&report, 2), 0.0, "{report}");
        assert_eq!(loss(&report, 3), 0.0, "{report}");
        assert!(finding_rows(&report, "path-loss").is_empty(), "{report}");
    }
}

#[test]
fn a_delay_at_r2_is_path_latency_named_at_hop_2() {
    if crate::common::need_root(&["ip", "iptables", "sysctl", "tc"]) {
        return;
    }
    let chain = Chain::new("tr-delay");
    let _ = Command::new("modprobe").arg("sch_netem").status();
    for delay in ["40ms", "120ms"] {
        // On r2's side towards r1: r2's own answers and everything it
        // forwards back to the client wait there.
        let added = Command::new("ip")
            .args([
                "netns",
                "exec",
                &chain.r2.name,
                "tc",
                "qdisc",
                "replace",
                "dev",
            ])
            .args([R2_FROM_R1, "root", "netem", "delay", delay])
            .output()
            .expect("run tc");
        if !added.status.success() {
            eprintln!(
                "SKIP trace delay: tc netem is unavailable (the sch_netem module): {}",
                String::from_utf8_lossy(&added.stderr).trim()
            );
            return;
        }
        let report = trace(&chain, &[], 8);
        assert_eq!(
            finding_rows(&report, "path-latency"),
            [format!("hop 2 ({R2})")],
            "{delay}: {report}"
        );
        assert!(finding_rows(&report, "path-loss").is_empty(), "{report}");
    }
}

#[test]
fn bad_input_is_one_clear_line_and_a_failure() {
    for (args, says) in [
        (&["trace", "198.18.999.1"][..], "198.18.999.1"),
        (&["trace", "198.18.3.2:http"], "not a port"),
        (&["trace", "198.18.3.2:70000"], "not a port"),
        (&["trace", "--count", "0", "198.18.3.2"], "--count"),
        (&["trace", "--rate", "5000", "198.18.3.2"], "too high"),
        (&["trace", "--max-ttl", "0", "198.18.3.2"], "--max-ttl"),
        (&["trace", "--timeout", "0s", "198.18.3.2"], "--timeout"),
    ] {
        let out = netlens(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn without_cap_net_raw_it_names_the_capability() {
    if crate::common::need_root(&["ip", "iptables", "sysctl", "tc"]) {
        return;
    }
    let Ok(out) = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args([NETLENS, "trace", "--count", "1", "198.18.3.2"])
        .output()
    else {
        crate::common::need::missing("setpriv");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("CAP_NET_RAW"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}
