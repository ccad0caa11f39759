//! Namespaces joined to the test's own by a veth, with paced UDP into
//! them, and their TCP sockets as `snapshot --json` and `ss -tan` list them
//! (tests/system/all_netns.rs, tests/system/namespaces_tab/kernel.rs).
//!
//! Network safety: each test picks its own prefix and 198.18.0.0/15 /24s;
//! every datagram goes from the test to a namespace it created, every
//! sender is bounded in packets and seconds, and every namespace is deleted
//! on drop (its veth goes with it).

use super::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

/// The `h27` set (198.18.234.0/24 and 198.18.235.0/24), which
/// tests/system/netns_tab_columns.rs and netns_findings_list.rs share: its
/// tests take turns, as they run in one process.
static H27: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Held while a test uses the `h27` set.
pub fn h27_turn() -> std::sync::MutexGuard<'static, ()> {
    H27.lock().unwrap_or_else(|e| e.into_inner())
}

/// One namespace of a test: `PREFIX-<pid>-K`, joined to the test's own
/// namespace by a veth ("PREFIXh<pid>xK" here, "eth0" there), addressed
/// 198.18.(BASE+K).0/24: .1 here, .2 there.
pub struct Ns {
    pub ns: Netns,
    pub k: u8,
    prefix: &'static str,
    base: u8,
}

impl Ns {
    /// Namespace `k` of a test's set named `prefix` on 198.18.`base`+k.
    pub fn new(prefix: &'static str, base: u8, k: u8) -> Ns {
        let name = format!("{prefix}-{}-{k}", std::process::id());
        {
            // As Netns::new: concurrent `ip netns add` race on /run/netns.
            let _g = NETNS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            let _ = Command::new("ip").args(["netns", "del", &name]).output();
            run("ip", &["netns", "add", &name]);
        }
        let ns = Ns {
            ns: Netns { name },
            k,
            prefix,
            base,
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

    pub fn name(&self) -> &str {
        &self.ns.name
    }

    pub fn host_dev(&self) -> String {
        format!("{}h{}x{}", self.prefix, std::process::id() % 10000, self.k)
    }

    pub fn host_ip(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, 18, self.base + self.k, 1)
    }

    pub fn ip(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, 18, self.base + self.k, 2)
    }

    /// (rx_bytes, tx_bytes, rx_packets, tx_packets) of eth0, from `ip -s`.
    pub fn counters(&self) -> [u64; 4] {
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
pub fn paced_udp(ns: &Ns, count: u64, pps: u32) -> thread::JoinHandle<()> {
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

pub fn namespace<'a>(sample: &'a Value, label: &str) -> Option<&'a Value> {
    sample["namespaces"]
        .as_array()?
        .iter()
        .find(|n| n["label"] == label)
}

/// (state, local, peer) of the TCP sockets the sample puts in `label`.
pub fn tcp_of(sample: &Value, label: &str) -> BTreeSet<(String, String, String)> {
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
pub fn ss_of(ns: &Ns) -> BTreeSet<(String, String, String)> {
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

/// What `snapshot_around_bursts` saw: the JSON samples, and each
/// namespace's veth counters (`counters`) before and after its burst.
pub struct Bursts {
    pub samples: Vec<Value>,
    pub before: Vec<[u64; 4]>,
    pub after: Vec<[u64; 4]>,
}

impl Bursts {
    /// Namespace `i`'s four link rates in `info` (its `namespaces[]` row),
    /// times the seconds they span (its own two reads of its links, on a
    /// busy host not quite the tick's), are what its veth's own counters
    /// (`ip -s link`) moved by around the burst, within 2%.
    pub fn assert_rates_match(&self, i: usize, info: &Value, name: &str) {
        let seconds = info["interval"].as_f64().unwrap();
        let keys = [
            "rx_bytes_per_s",
            "tx_bytes_per_s",
            "rx_packets_per_s",
            "tx_packets_per_s",
        ];
        for (k, key) in keys.iter().enumerate() {
            let ours = info[key].as_f64().unwrap() * seconds;
            let theirs = (self.after[i][k] - self.before[i][k]) as f64;
            eprintln!("{name} {key}: netlens {ours:.0} ip -s link {theirs:.0}");
            assert!(
                (ours - theirs).abs() <= 0.02 * theirs.max(1.0) + 0.5,
                "{name} {key}: netlens {ours:.1} vs ip -s link {theirs:.1} in {seconds} s"
            );
        }
    }
}

/// Two samples of `snapshot --json --all-netns` (5 s apart, no capture, no
/// BPF, the `sections` asked) with a burst of half a second of paced UDP
/// into `spaces[i]` at `pps[i]` packets/s. Sample 1 is printed once all its
/// counters were read; the bursts then run well inside sample 2's
/// interval, so sample 2's deltas are exactly what `ip -s link` counts
/// around them.
pub fn snapshot_around_bursts(spaces: &[Ns], pps: &[u32], sections: &[&str]) -> Bursts {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut command = Command::new(NETLENS);
    command.args([
        "snapshot",
        "--json",
        "--all-netns",
        "--no-capture",
        "--no-bpf",
    ]);
    command.args(["--interval", "5s", "--count", "2"]);
    for section in sections {
        command.args(["--section", section]);
    }
    let mut child = ChildGuard(
        command
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
        .zip(pps)
        .map(|(ns, &pps)| paced_udp(ns, u64::from(pps) / 2, pps))
        .collect();
    for sender in senders {
        sender.join().unwrap();
    }
    let after: Vec<[u64; 4]> = spaces.iter().map(Ns::counters).collect();
    let samples: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.0.wait().unwrap().success());
    Bursts {
        samples,
        before,
        after,
    }
}
