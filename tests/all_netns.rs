//! `--all-netns` end to end (root): namespaces made here (`nsall-<pid>-K`,
//! each joined to this test's own namespace by a veth, 198.18.4K.0/24),
//! paced UDP into each, TCP sockets inside each; the real binary samples
//! them all at once.
//!
//! Network safety: every address is in 198.18.40.0/22, every datagram goes
//! from this process to a namespace it created, every sender is bounded in
//! packets and seconds, and every namespace is deleted on drop (its veth
//! goes with it).

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn skip() -> bool {
    if is_root() {
        return false;
    }
    eprintln!("SKIP all_netns: needs root (ip netns, setns)");
    true
}

/// One namespace of this test: a veth "nsallhK" here, "eth0" there.
struct Ns {
    ns: Netns,
    k: u8,
}

impl Ns {
    fn new(k: u8) -> Ns {
        let name = format!("nsall-{}-{k}", std::process::id());
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run("ip", &["netns", "add", &name]);
        let ns = Ns {
            ns: Netns { name },
            k,
        };
        let host = ns.host_dev();
        ns.ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
        ns.ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
        let _ = Command::new("ip").args(["link", "del", &host]).output();
        run(
            "ip",
            &[
                "link",
                "add",
                &host,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                &ns.ns.name,
            ],
        );
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{host}/disable_ipv6"), "1");
        run(
            "ip",
            &["addr", "add", &format!("{}/24", ns.host_ip()), "dev", &host],
        );
        run("ip", &["link", "set", &host, "up"]);
        ns.ns
            .ip(&["addr", "add", &format!("{}/24", ns.ip()), "dev", "eth0"]);
        ns.ns.ip(&["link", "set", "eth0", "up"]);
        ns.ns.ip(&["link", "set", "lo", "up"]);
        ns.ns.wait_lower_up("eth0", Duration::from_secs(5));
        ns
    }

    fn name(&self) -> &str {
        &self.ns.name
    }

    fn host_dev(&self) -> String {
        format!("nsallh{}x{}", std::process::id() % 10000, self.k)
    }

    fn host_ip(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, 18, 40 + self.k, 1)
    }

    fn ip(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, 18, 40 + self.k, 2)
    }

    /// (rx_bytes, tx_bytes, rx_packets, tx_packets) of eth0, from `ip -s`.
    fn counters(&self) -> [u64; 4] {
        let out = self.ns.ip(&["-s", "-j", "link", "show", "dev", "eth0"]);
        let v: Value = serde_json::from_slice(&out.stdout).expect("ip -j");
        let s = &v[0]["stats64"];
        [
            s["rx"]["bytes"].as_u64().unwrap(),
            s["tx"]["bytes"].as_u64().unwrap(),
            s["rx"]["packets"].as_u64().unwrap(),
            s["tx"]["packets"].as_u64().unwrap(),
        ]
    }
}

/// Paced UDP from here into `ns`: `count` datagrams of 1000 bytes at
/// `pps` (a deadline schedule), drained by a receiver inside it. Bounded by
/// `count` and by count / pps + 5 seconds.
fn paced_udp(ns: &Ns, count: u64, pps: u32) -> thread::JoinHandle<()> {
    let (src, dst) = (ns.host_ip(), SocketAddrV4::new(ns.ip(), 9000));
    assert!(is_bench_addr(src) && is_bench_addr(*dst.ip()));
    let limit = Duration::from_secs_f64(count as f64 / f64::from(pps) + 5.0);
    let path = ns.ns.path();
    let (ready, is_ready) = std::sync::mpsc::channel();
    let receiver = thread::spawn(move || {
        enter_netns(&path).expect("setns");
        let socket = UdpSocket::bind(dst).expect("bind receiver");
        socket
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        ready.send(()).unwrap();
        let (mut got, start) = (0, Instant::now());
        let mut buffer = [0u8; 2048];
        while got < count && start.elapsed() < limit + Duration::from_secs(1) {
            if socket.recv(&mut buffer).is_ok() {
                got += 1;
            }
        }
    });
    is_ready.recv().unwrap();
    thread::spawn(move || {
        let socket = UdpSocket::bind(SocketAddrV4::new(src, 0)).expect("bind sender");
        let data = [0x5au8; 1000];
        let start = Instant::now();
        let period = Duration::from_secs_f64(1.0 / f64::from(pps));
        for i in 0..count {
            let due = start + period.mul_f64(i as f64);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                thread::sleep(wait);
            }
            if start.elapsed() > limit {
                break;
            }
            socket.send_to(&data, dst).expect("send");
        }
        receiver.join().unwrap();
    })
}

fn namespace<'a>(sample: &'a Value, label: &str) -> Option<&'a Value> {
    sample["namespaces"]
        .as_array()?
        .iter()
        .find(|n| n["label"] == label)
}

/// (state, local, peer) of the TCP sockets the sample puts in `label`.
fn tcp_of(sample: &Value, label: &str) -> BTreeSet<(String, String, String)> {
    sample["sockets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["netns"] == label && s["proto"] == "tcp")
        .map(|s| {
            let state = s["state"].as_str().unwrap().to_string();
            let peer = if state == "LISTEN" {
                "*".to_string()
            } else {
                s["peer"].as_str().unwrap().to_string()
            };
            (state, s["local"].as_str().unwrap().to_string(), peer)
        })
        .collect()
}

/// The same from `ip netns exec NS ss -tan`.
fn ss_of(ns: &Ns) -> BTreeSet<(String, String, String)> {
    let out = ns_exec(ns.name(), &["ss", "-tanH"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let state = f.first()?.to_string();
            let peer = if state == "LISTEN" {
                "*".to_string()
            } else {
                f.get(4)?.to_string()
            };
            Some((state, f.get(3)?.to_string(), peer))
        })
        .collect()
}

#[test]
fn every_namespace_rates_sockets_and_labels() {
    if skip() {
        return;
    }
    let spaces: Vec<Ns> = (0..3).map(Ns::new).collect();
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
    // Sample 1 is printed once all its counters were read; the paced
    // bursts then run well inside sample 2's interval (5 s), so sample 2's
    // deltas are exactly what `ip -s link` counts around the bursts.
    let mut child = ChildGuard(
        Command::new(NETLENS)
            .args([
                "snapshot",
                "--json",
                "--all-netns",
                "--no-capture",
                "--no-bpf",
                "--interval",
                "5s",
                "--count",
                "2",
                "--section",
                "interfaces",
                "--section",
                "sockets",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let _first = lines.next().expect("sample 1").unwrap();
    let before: Vec<[u64; 4]> = spaces.iter().map(Ns::counters).collect();
    let senders: Vec<_> = spaces
        .iter()
        .zip([300u32, 600, 900])
        .map(|(ns, pps)| paced_udp(ns, u64::from(pps) / 2, pps))
        .collect();
    for sender in senders {
        sender.join().unwrap();
    }
    let after: Vec<[u64; 4]> = spaces.iter().map(Ns::counters).collect();
    let samples: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.0.wait().unwrap().success());
    let last = samples.last().unwrap();
    for (i, ns) in spaces.iter().enumerate() {
        let info = namespace(last, ns.name())
            .unwrap_or_else(|| panic!("{} not in {}", ns.name(), last["namespaces"]));
        // The rate over the interval times the interval is what the veth's
        // own counters (`ip -s link`) moved by around the bursts.
        let seconds = last["interval"].as_f64().unwrap();
        let keys = [
            "rx_bytes_per_s",
            "tx_bytes_per_s",
            "rx_packets_per_s",
            "tx_packets_per_s",
        ];
        for (k, key) in keys.iter().enumerate() {
            let ours = info[key].as_f64().unwrap() * seconds;
            let theirs = (after[i][k] - before[i][k]) as f64;
            assert!(
                (ours - theirs).abs() <= 0.02 * theirs.max(1.0) + 0.5,
                "{} {key}: netlens {ours:.1} vs ip -s link {theirs:.1} in {seconds} s",
                ns.name()
            );
        }
        let sent = [150u64, 300, 450][i];
        assert!(after[i][2] - before[i][2] >= sent, "every datagram arrived");
        // The host-side veth is found and mirrors it.
        assert_eq!(info["host_peers"], serde_json::json!([ns.host_dev()]));
        let peer_tx = info["host_peer_tx_bytes_per_s"].as_f64().unwrap();
        let rx = info["rx_bytes_per_s"].as_f64().unwrap();
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
    if skip() {
        return;
    }
    let going = Ns::new(4);
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
    let coming = Ns::new(5);
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

/// The value of the series `name{labels}` in an exposition, if any.
fn series(body: &str, name_and_labels: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(name_and_labels))
        .and_then(|rest| rest.trim().parse().ok())
}

#[test]
fn the_exporter_labels_each_namespace() {
    if skip() {
        return;
    }
    let spaces: Vec<Ns> = (6..8).map(Ns::new).collect();
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
