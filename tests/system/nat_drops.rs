//! A firewall's drop after NAT names both destinations: a client connects
//! to a router's address, the router DNATs it (198.18.1.1:80 to the server
//! behind it, 198.18.3.2:8080) and its FORWARD chain drops the translated
//! packets. netlens, watching the router, must give the NETFILTER_DROP row
//! the destination the packets had when dropped and the one they had before
//! the DNAT, with as many packets as the rule's counter. Datagrams dropped
//! without a translation have a destination and nothing translated. A
//! scan of more destinations than the kernel map holds loses no drop and
//! makes no more rows than netlens keeps: the ones past them count at the
//! site without a destination. Root only, in namespaces these tests create
//! (198.18.0.0/15), at most 20,000 datagrams.

use crate::common::bpf_support::{rows, snapshot_attached};
use crate::common::path_chain::{self, Chain};
use crate::common::{self, ns_exec};
use serde_json::Value;

/// The router's own address the client connects to.
const PUBLIC: &str = "198.18.1.1:80";
const CONNECTS: u32 = 40;
/// UDP port on the server the router drops without translating.
const UDP_PORT: u16 = 9000;
const DATAGRAMS: u32 = 30;

/// Runs in the client: connects without waiting (each SYN is dropped once:
/// closed before the first retransmission, 1 s), then datagrams.
fn client_script() -> String {
    let (host, port) = PUBLIC.split_once(':').unwrap();
    format!(
        "import socket, time\n\
         held = []\n\
         for _ in range({CONNECTS}):\n\
         \x20   s = socket.socket()\n\
         \x20   s.setblocking(False)\n\
         \x20   try: s.connect(('{host}', {port}))\n\
         \x20   except BlockingIOError: pass\n\
         \x20   held.append(s)\n\
         u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         for _ in range({DATAGRAMS}): u.sendto(b'x' * 100, ('{}', {UDP_PORT}))\n\
         time.sleep(0.5)\n\
         for s in held: s.close()\n",
        path_chain::SERVER
    )
}

/// Adds each rule (iptables arguments) in r1.
fn add_rules(chain: &Chain, rules: &[&[&str]]) {
    for rule in rules {
        let mut args = vec!["iptables", "-w"];
        args.extend_from_slice(rule);
        let out = ns_exec(&chain.r1.name, &args);
        assert!(out.status.success(), "{rule:?}: {out:?}");
    }
}

/// `netlens snapshot --json` of r1's drops, 5 samples a second apart,
/// started once its program is attached.
fn snapshot_router(chain: &Chain) -> std::process::Child {
    let router = chain.r1.path();
    snapshot_attached(&[
        "--netns",
        &router,
        "--section",
        "drops",
        "--count",
        "5",
        "--no-capture",
    ])
}

/// The last sample, which must have been taken after `traffic_done`.
fn last_sample(snapshot: std::process::Child, traffic_done: f64) -> Value {
    let samples = common::snapshot_samples(snapshot);
    let last = samples.last().expect("a snapshot sample").clone();
    assert!(
        last["t"].as_f64().unwrap() > traffic_done,
        "the last sample came before the traffic ended"
    );
    last
}

/// The packets of the rows.
fn packets<'a>(rows: impl IntoIterator<Item = &'a Value>) -> u64 {
    rows.into_iter()
        .map(|r| r["packets"].as_u64().unwrap())
        .sum()
}

/// The packet counter of r1's FORWARD DROP rule whose line contains
/// `matching` ("tcp dpt:8080"; "" for the only one).
fn rule_packets(chain: &Chain, matching: &str) -> u64 {
    let out = ns_exec(
        &chain.r1.name,
        &["iptables", "-L", "FORWARD", "-v", "-x", "-n"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.contains("DROP") && l.contains(matching))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no counter for the rule {matching:?}: {text}"))
}

/// The NETFILTER_DROP rows to `destination` in the last sample.
fn rows_to<'a>(rows: &'a [Value], destination: &str) -> Vec<&'a Value> {
    rows.iter()
        .filter(|r| r["reason"] == "NETFILTER_DROP" && r["destination"] == destination)
        .collect()
}

/// Within 2% of the rule's count, which must be at least `at_least` (the
/// traffic reached the rule).
fn assert_agrees(what: &str, netlens: u64, rule: u64, at_least: u32) {
    eprintln!("{what}: netlens {netlens}, iptables {rule}");
    assert!(
        rule >= u64::from(at_least),
        "{what}: the rule counted only {rule}"
    );
    assert!(
        netlens.abs_diff(rule) as f64 <= rule as f64 * 0.02,
        "{what}: netlens counted {netlens}, the rule {rule}"
    );
}

#[test]
fn a_drop_after_dnat_names_the_translated_and_the_original_destination() {
    if crate::common::need_root(&["ip", "iptables", "python3"]) {
        return;
    }
    let chain = Chain::new("natdrop");
    let to = format!("{}:{}", path_chain::SERVER, path_chain::PORT);
    let server = path_chain::SERVER.to_string();
    let (public_ip, public_port) = PUBLIC.split_once(':').unwrap();
    let port = path_chain::PORT.to_string();
    let udp_port = UDP_PORT.to_string();
    add_rules(
        &chain,
        &[
            &[
                "-t",
                "nat",
                "-A",
                "PREROUTING",
                "-p",
                "tcp",
                "-d",
                public_ip,
                "--dport",
                public_port,
                "-j",
                "DNAT",
                "--to-destination",
                &to,
            ],
            &[
                "-A", "FORWARD", "-d", &server, "-p", "tcp", "--dport", &port, "-j", "DROP",
            ],
            &[
                "-A", "FORWARD", "-d", &server, "-p", "udp", "--dport", &udp_port, "-j", "DROP",
            ],
        ],
    );
    let snapshot = snapshot_router(&chain);
    let out = ns_exec(&chain.client.name, &["python3", "-c", &client_script()]);
    assert!(out.status.success(), "client: {out:?}");
    let traffic_done = common::now_unix();
    let tcp_rule = rule_packets(&chain, &format!("tcp dpt:{}", path_chain::PORT));
    let udp_rule = rule_packets(&chain, &format!("udp dpt:{UDP_PORT}"));

    let rows = rows(&last_sample(snapshot, traffic_done));
    let dnat = rows_to(&rows, &to);
    assert!(!dnat.is_empty(), "no NETFILTER_DROP row to {to}: {rows:?}");
    for row in &dnat {
        assert_eq!(row["translated_from"], PUBLIC, "{row}");
        assert_eq!(row["interface"], "r1in", "{row}");
    }
    assert_agrees("DNAT then DROP", packets(dnat.clone()), tcp_rule, CONNECTS);

    let plain_to = format!("{server}:{UDP_PORT}");
    let plain = rows_to(&rows, &plain_to);
    assert!(
        !plain.is_empty(),
        "no NETFILTER_DROP row to {plain_to}: {rows:?}"
    );
    for row in &plain {
        assert_eq!(row["translated_from"], Value::Null, "{row}");
    }
    assert_agrees(
        "DROP untranslated",
        packets(plain.clone()),
        udp_rule,
        DATAGRAMS,
    );
    // Every NETFILTER_DROP of the router is one of the two.
    let all = packets(rows.iter().filter(|r| r["reason"] == "NETFILTER_DROP"));
    assert_eq!(all, packets(dnat) + packets(plain), "{rows:?}");
}

/// The drop map's size in ebpf/drops.bpf.c.
const MAP_ENTRIES: usize = 16384;
/// How many destinations have rows (MAX_DESTINATIONS in
/// src/collect/drops/mod.rs).
const ROWS: usize = 256;
/// More destinations than the map holds: ports 1 to SCAN of the server.
const SCAN: u32 = 20_000;

#[test]
fn a_scan_of_more_destinations_than_the_map_holds_loses_no_drop() {
    // A burst of datagrams, and a full map for netlens to read each second.
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "iptables", "python3"]) else {
        return;
    };
    let chain = Chain::new("natscan");
    let server = path_chain::SERVER.to_string();
    add_rules(
        &chain,
        &[&["-A", "FORWARD", "-d", &server, "-p", "udp", "-j", "DROP"]],
    );
    let snapshot = snapshot_router(&chain);
    let script = format!(
        "import socket\n\
         u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         for port in range(1, {SCAN} + 1): u.sendto(b'x', ('{server}', port))\n"
    );
    let out = ns_exec(&chain.client.name, &["python3", "-c", &script]);
    assert!(out.status.success(), "client: {out:?}");
    let traffic_done = common::now_unix();
    let rule = rule_packets(&chain, "");

    let last = last_sample(snapshot, traffic_done);
    assert_eq!(last["drops"]["lost"], 0, "drops not counted");
    let rows = rows(&last);
    let dropped: Vec<&Value> = rows
        .iter()
        .filter(|r| r["reason"] == "NETFILTER_DROP")
        .collect();
    // The first ports have rows; the rest count at the site without one.
    let overflow: Vec<&Value> = dropped
        .iter()
        .copied()
        .filter(|r| r["destination"].is_null())
        .collect();
    eprintln!(
        "{} rows, {} without a destination ({} packets)",
        dropped.len(),
        overflow.len(),
        packets(overflow.iter().copied())
    );
    assert_eq!(dropped.len(), ROWS + 1, "{} rows", dropped.len());
    assert_eq!(overflow.len(), 1, "{overflow:?}");
    assert!(packets(overflow.iter().copied()) > 0);
    // Over the map's size: the overflow path was taken.
    assert_agrees(
        "a scan",
        packets(dropped.iter().copied()),
        rule,
        MAP_ENTRIES as u32 + 1000,
    );
}
