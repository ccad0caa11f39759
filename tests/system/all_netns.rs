//! `--all-netns` end to end (root): namespaces made here (`nsall-<pid>-K`,
//! each joined to this test's own namespace by a veth, 198.18.4K.0/24),
//! paced UDP into each, TCP sockets inside each; the real binary samples
//! them all at once.
//!
//! Network safety: every address is in 198.18.40.0/22, every datagram goes
//! from this process to a namespace it created, every sender is bounded in
//! packets and seconds, and every namespace is deleted on drop (its veth
//! goes with it).

use crate::common;

use common::netns_traffic::{Ns, namespace, paced_udp, snapshot_around_bursts, ss_of, tcp_of};
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// This file's namespaces: nsall-<pid>-K on 198.18.(40+K).0/24.
fn nsall(k: u8) -> Ns {
    Ns::new("nsall", 40, k)
}

#[test]
fn every_namespace_rates_sockets_and_labels() {
    if crate::common::need_root(&["ip", "ss"]) {
        return;
    }
    let spaces: Vec<Ns> = (0..3).map(nsall).collect();
    // TCP inside each: a listener and one connection to it, made by a
    // thread that entered the namespace (the sockets stay there).
    let mut held = Vec::new();
    for ns in &spaces {
        let (path, ip, port) = (ns.ns.path(), ns.ip(), 7000 + u16::from(ns.k));
        held.push(
            thread::spawn(move || {
                enter_netns(&path).unwrap();
                let listener = TcpListener::bind(SocketAddrV4::new(ip, port)).unwrap();
                let client = TcpStream::connect(SocketAddrV4::new(ip, port)).unwrap();
                let (server, _) = listener.accept().unwrap();
                (listener, client, server)
            })
            .join()
            .unwrap(),
        );
    }
    let bursts = snapshot_around_bursts(&spaces, &[300, 600, 900], &["interfaces", "sockets"]);
    let last = bursts.samples.last().unwrap();
    for (i, ns) in spaces.iter().enumerate() {
        let info = namespace(last, ns.name())
            .unwrap_or_else(|| panic!("{} not in {}", ns.name(), last["namespaces"]));
        bursts.assert_rates_match(i, info, ns.name());
        let seconds = info["interval"].as_f64().unwrap();
        let sent = [150u64, 300, 450][i];
        assert!(
            bursts.after[i][2] - bursts.before[i][2] >= sent,
            "every datagram arrived"
        );
        // The host-side veth is found and mirrors it.
        assert_eq!(info["host_peers"], serde_json::json!([ns.host_dev()]));
        // Each rate over the seconds it spans: the peer's are the host's
        // reads of its links, on a busy host not quite the namespace's.
        let host = namespace(last, "host").expect("the host's row");
        let peer_tx =
            info["host_peer_tx_bytes_per_s"].as_f64().unwrap() * host["interval"].as_f64().unwrap();
        let rx = info["rx_bytes_per_s"].as_f64().unwrap() * seconds;
        assert!((peer_tx - rx).abs() <= 0.02 * rx, "{peer_tx} vs {rx}");
        // Its interfaces carry its label; its lo is not the host's.
        let names: BTreeSet<&str> = last["interfaces"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["netns"] == ns.name())
            .map(|i| i["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, BTreeSet::from(["eth0", "lo"]));
        // Its sockets, exactly as ss lists them inside it, and nowhere else.
        let ours = tcp_of(last, ns.name());
        assert_eq!(ours, ss_of(ns), "{}", ns.name());
        assert_eq!(ours.len(), 3, "{ours:?}");
        let local = format!("{}:{}", ns.ip(), 7000 + u16::from(ns.k));
        let elsewhere = last["sockets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["local"] == local.as_str() && s["netns"] != ns.name())
            .count();
        assert_eq!(elsewhere, 0);
        assert_eq!(info["established"], 2);
        assert_eq!(info["listening"], 1);
    }
    // Ids are distinct, the watched namespace first.
    let ids: Vec<u64> = last["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids[0], 0);
    assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len());
    drop(held);
}

#[test]
fn namespaces_appear_and_disappear_while_sampling() {
    if crate::common::need_root(&["ip", "ss"]) {
        return;
    }
    let going = nsall(4);
    let mut child = ChildGuard(
        Command::new(NETLENS)
            .args([
                "snapshot",
                "--json",
                "--all-netns",
                "--no-capture",
                "--no-bpf",
                "--interval",
                "1s",
                "--count",
                "6",
                "--section",
                "interfaces",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(
        namespace(&first, going.name()).is_some(),
        "{}",
        first["namespaces"]
    );
    let going_name = going.name().to_string();
    drop(going);
    let coming = nsall(5);
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.0.wait().unwrap().success());
    let last = rest.last().expect("more samples");
    assert!(
        namespace(last, &going_name).is_none(),
        "{}",
        last["namespaces"]
    );
    let came = namespace(last, coming.name()).expect("the new namespace");
    // A new namespace gets a new id, never the gone one's.
    let old_id = namespace(&first, &going_name).unwrap()["id"].clone();
    assert_ne!(came["id"], old_id);
    let eth0 = last["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["netns"] == coming.name() && i["name"] == "eth0");
    assert!(eth0);
}

/// A connection from the watched namespace to a listener in another, seen
/// by the capture on the host-side veth: the flow carries the other
/// namespace (where the listener is), in the JSON and for `--where ns:`.
#[test]
fn flows_carry_the_namespace_of_their_socket() {
    if crate::common::need_root(&["ip", "ss"]) {
        return;
    }
    let ns = nsall(6);
    let (path, ip) = (ns.ns.path(), ns.ip());
    let listener = thread::spawn(move || {
        enter_netns(&path).unwrap();
        TcpListener::bind(SocketAddrV4::new(ip, 7100)).unwrap()
    })
    .join()
    .unwrap();
    let snapshot = |filter: &str, count: &str| {
        let mut command = Command::new(NETLENS);
        command.args(["snapshot", "--json", "--all-netns", "--no-bpf"]);
        command.args([
            "--iface",
            &ns.host_dev(),
            "--interval",
            "2s",
            "--count",
            count,
        ]);
        command.args(["--section", "flows", "--where", filter]);
        ChildGuard(
            command
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    };
    // Up to 12 samples for ours, stopping at the first that names the
    // owner: on a loaded test host the lookup (beside the sampler) left
    // it unknown for three samples.
    let mut mine = snapshot(&format!("ns:{}", ns.name()), "12");
    let mut host = snapshot("ns:host", "3");
    let mut mine_lines = BufReader::new(mine.0.stdout.take().unwrap()).lines();
    let mut host_lines = BufReader::new(host.0.stdout.take().unwrap()).lines();
    mine_lines.next().expect("sample 1").unwrap();
    host_lines.next().expect("sample 1").unwrap();
    let mut client = TcpStream::connect(SocketAddrV4::new(ip, 7100)).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    std::io::Write::write_all(&mut client, &[7u8; 1000]).unwrap();
    let mut got = [0u8; 1000];
    std::io::Read::read_exact(&mut server, &mut got).unwrap();
    let to_listener = format!("{ip}:7100");
    let ours = u64::from(std::process::id());
    let the_flow = |sample: &Value| {
        sample["flows"]
            .as_array()?
            .iter()
            .find(|f| f["dst"] == to_listener.as_str())
            .cloned()
    };
    let mut flows: Vec<Value> = Vec::new();
    for line in mine_lines {
        let sample: Value = serde_json::from_str(&line.unwrap()).unwrap();
        flows.extend(the_flow(&sample));
        if flows.last().is_some_and(|f| f["pid"] == ours) {
            break;
        }
    }
    drop(mine);
    let host_rest: Vec<Value> = host_lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(host.0.wait().unwrap().success());
    let host_last = host_rest.last().expect("host sample 2");
    let flow = flows
        .last()
        .unwrap_or_else(|| panic!("no flow to {to_listener} in {ns:?}", ns = ns.name()));
    assert_eq!(flow["netns"], ns.name(), "{flow}");
    // Its client end is this process, in the watched namespace: named once
    // the owner lookup (beside the sampler, late on a loaded host) found
    // it, and never another process.
    assert!(
        flows.iter().all(|f| f["pid"].is_null() || f["pid"] == ours),
        "{flows:?}"
    );
    assert!(flows.iter().any(|f| f["pid"] == ours), "{flows:?}");
    let in_host = host_last["flows"].as_array().unwrap();
    assert!(
        in_host.iter().all(|f| f["dst"] != to_listener.as_str()),
        "ns:host keeps it: {in_host:?}"
    );
    drop((client, server));
}

/// The value of the series `name{labels}` in an exposition, if any.
fn series(body: &str, name_and_labels: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(name_and_labels))
        .and_then(|rest| rest.trim().parse().ok())
}

#[test]
fn the_exporter_labels_each_namespace() {
    if crate::common::need_root(&["ip", "ss"]) {
        return;
    }
    let spaces: Vec<Ns> = (7..9).map(nsall).collect();
    let exporter =
        common::exporter::Exporter::start(&["--all-netns", "--no-bpf", "--interval", "500ms"]);
    for ns in &spaces {
        paced_udp(ns, 100, 500).join().unwrap();
    }
    // The namespaces are quiet now: a sample taken after the traffic shows
    // exactly the veth's counters.
    let deadline = Instant::now() + Duration::from_secs(30);
    for ns in &spaces {
        let rx = ns.counters()[0] as f64;
        let key = format!(
            "node_network_receive_bytes_total{{device=\"eth0\",netns=\"{}\"}}",
            ns.name()
        );
        let body = loop {
            let body = common::socket_findings::scrape(exporter.addr);
            if series(&body, &key) == Some(rx) || Instant::now() > deadline {
                break body;
            }
            thread::sleep(Duration::from_millis(200));
        };
        assert_eq!(series(&body, &key), Some(rx), "{key} in\n{body}");
        let inode = std::fs::metadata(ns.ns.path()).unwrap().ino();
        let info = format!(
            "netlens_netns_info{{netns=\"{}\",inode=\"{inode}\"}}",
            ns.name()
        );
        assert_eq!(series(&body, &info), Some(1.0), "{info}");
        let sockets = format!("netlens_netns_sockets{{netns=\"{}\"}}", ns.name());
        assert!(series(&body, &sockets).is_some(), "{sockets}");
        // Every netns label is one of the listed namespaces (the label's
        // cardinality is the namespace count).
        let listed: BTreeSet<&str> = body
            .lines()
            .filter(|l| l.starts_with("netlens_netns_info{"))
            .filter_map(|l| l.split("netns=\"").nth(1)?.split('"').next())
            .collect();
        let used: BTreeSet<&str> = body
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split("netns=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(used, listed);
    }
}
