//! Root-only checks of the Conntrack collector against conntrack(8), with
//! real TCP connections through a DNAT rule, in namespaces the test builds:
//!
//! ```text
//!  client ns                 router ns (DNAT 8080 → 198.18.1.2:80)        server ns
//!  198.18.0.1 ── veth ── 198.18.0.2 | 198.18.1.1 ── veth ── 198.18.1.2:80
//! ```
//!
//! Only the router has a netfilter table, so only it tracks connections.
//! Traffic: TCP between those 198.18.0.0/15 addresses only, a bounded number
//! of connections, each with a timeout.

use crate::common;

use common::*;
use netlens::collect::conntrack::{read_stat_file, read_sysctl};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const ROUTER_FRONT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);

pub(crate) struct Topology {
    pub(crate) client: Netns,
    pub(crate) router: Netns,
    pub(crate) server: Netns,
}

impl Topology {
    pub(crate) fn new(tag: &str) -> Topology {
        let client = Netns::new(&format!("{tag}c"));
        let router = Netns::new(&format!("{tag}r"));
        let server = Netns::new(&format!("{tag}s"));
        client.ip(&[
            "link",
            "add",
            "ctc0",
            "type",
            "veth",
            "peer",
            "name",
            "ctr0",
            "netns",
            &router.name,
        ]);
        router.ip(&[
            "link",
            "add",
            "ctr1",
            "type",
            "veth",
            "peer",
            "name",
            "cts0",
            "netns",
            &server.name,
        ]);
        for (ns, dev, addr) in [
            (&client, "ctc0", "198.18.0.1/24"),
            (&router, "ctr0", "198.18.0.2/24"),
            (&router, "ctr1", "198.18.1.1/24"),
            (&server, "cts0", "198.18.1.2/24"),
        ] {
            ns.ip(&["addr", "add", addr, "dev", dev]);
            ns.ip(&["link", "set", dev, "up"]);
        }
        for ns in [&client, &router, &server] {
            ns.ip(&["link", "set", "lo", "up"]);
        }
        client.ip(&["route", "add", "198.18.1.0/24", "via", "198.18.0.2"]);
        server.ip(&["route", "add", "198.18.0.0/24", "via", "198.18.1.1"]);
        router.sysctl("net.ipv4.ip_forward", "1");
        router.sysctl("net.netfilter.nf_conntrack_acct", "1");
        ns_exec(
            &router.name,
            &[
                "iptables",
                "-t",
                "nat",
                "-A",
                "PREROUTING",
                "-p",
                "tcp",
                "-d",
                "198.18.0.2",
                "--dport",
                "8080",
                "-j",
                "DNAT",
                "--to-destination",
                "198.18.1.2:80",
            ],
        );
        for (ns, dev) in [
            (&client, "ctc0"),
            (&router, "ctr0"),
            (&router, "ctr1"),
            (&server, "cts0"),
        ] {
            ns.wait_lower_up(dev, Duration::from_secs(5));
        }
        Topology {
            client,
            router,
            server,
        }
    }
}

/// An echo server on 198.18.1.2:80 in the server namespace; it keeps every
/// connection open until dropped. Bounded: it stops after 60 s regardless.
pub(crate) struct Server {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Server {
    pub(crate) fn start(ns: &Netns) -> Server {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready, is_ready) = mpsc::channel();
        let path = ns.path();
        let flag = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            enter_netns(&path).expect("server setns");
            let listener = TcpListener::bind(SocketAddrV4::new(SERVER, 80)).expect("bind :80");
            listener.set_nonblocking(true).unwrap();
            ready.send(()).unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut open = Vec::new();
            while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        stream
                            .set_read_timeout(Some(Duration::from_secs(2)))
                            .unwrap();
                        let mut buf = [0u8; 5];
                        if stream.read_exact(&mut buf).is_ok() {
                            let _ = stream.write_all(&buf);
                        }
                        open.push(stream);
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        is_ready.recv().expect("server thread died");
        Server {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Opens up to `count` connections from the client namespace to
/// 198.18.0.2:8080 (DNATed to the server), each with `timeout`, and echoes
/// "hello" on each. Returns the open streams (kept for the caller) and the
/// number that failed.
pub(crate) fn connect_many(ns: &Netns, count: usize, timeout: Duration) -> (Vec<TcpStream>, usize) {
    let path = ns.path();
    thread::spawn(move || {
        enter_netns(&path).expect("client setns");
        let target = SocketAddr::V4(SocketAddrV4::new(ROUTER_FRONT, 8080));
        let mut open = Vec::new();
        let mut failed = 0;
        for _ in 0..count {
            match TcpStream::connect_timeout(&target, timeout) {
                Ok(mut stream) => {
                    stream
                        .set_read_timeout(Some(Duration::from_secs(2)))
                        .unwrap();
                    stream.write_all(b"hello").unwrap();
                    let mut buf = [0u8; 5];
                    stream.read_exact(&mut buf).expect("echo through the DNAT");
                    assert_eq!(&buf, b"hello");
                    open.push(stream);
                }
                Err(_) => failed += 1,
            }
        }
        (open, failed)
    })
    .join()
    .expect("client thread panicked")
}

fn conntrack_cli(ns: &Netns, args: &[&str]) -> String {
    let mut all = vec!["conntrack"];
    all.extend_from_slice(args);
    let out = ns_exec(&ns.name, &all);
    // conntrack prints its summary ("N flow entries…") on stderr.
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `conntrack -S`, summed over CPUs, by field name.
pub(crate) fn conntrack_stats(ns: &Netns) -> std::collections::BTreeMap<String, u64> {
    let mut sums = std::collections::BTreeMap::new();
    for line in conntrack_cli(ns, &["-S"]).lines() {
        for field in line.split_whitespace().skip(1) {
            if let Some((name, value)) = field.split_once('=') {
                *sums.entry(name.to_string()).or_default() += value.parse::<u64>().unwrap();
            }
        }
    }
    assert!(sums.contains_key("found"), "conntrack -S printed no stats");
    sums
}

fn netlens_conntrack(ns: &Netns) -> Value {
    let samples = snapshot(&["--section", "conntrack,findings", "--netns", &ns.name]);
    samples.last().unwrap().clone()
}

fn local_ports(streams: &[TcpStream]) -> BTreeSet<u16> {
    streams
        .iter()
        .map(|s| s.local_addr().unwrap().port())
        .collect()
}

#[test]
fn dnat_entries_count_and_stats_match_conntrack_tool() {
    if crate::common::need_root(&["ip", "conntrack", "iptables", "setpriv", "sysctl"]) {
        return;
    }
    // nf_conntrack_max is every namespace's, read here: the tests that
    // lower it hold the host alone, so it is not lowered meanwhile.
    let topology = Topology::new("ctd");
    let _server = Server::start(&topology.server);
    let (streams, failed) = connect_many(&topology.client, 12, Duration::from_secs(3));
    assert_eq!(failed, 0, "every connection through the DNAT must open");
    let ports = local_ports(&streams);

    let stats_before = conntrack_stats(&topology.router);
    let count_tool: u64 = conntrack_cli(&topology.router, &["-C"])
        .trim()
        .parse()
        .unwrap();
    let sample = netlens_conntrack(&topology.router);
    let stats_after = conntrack_stats(&topology.router);
    assert_eq!(
        stats_before, stats_after,
        "idle connections: the counters must not move during the check"
    );

    let ct = &sample["conntrack"];
    assert_eq!(ct["available"], true, "{ct}");
    assert_eq!(ct["source"], "netlink", "{ct}");
    assert_eq!(ct["count"].as_u64(), Some(count_tool), "{ct}");
    assert_eq!(count_tool, 12, "one entry per connection in the router");
    assert_eq!(ct["acct"], true, "nf_conntrack_acct was set in the router");

    // Stats equal `conntrack -S` summed over CPUs.
    let stats = &ct["stats"];
    for (ours, theirs) in [
        ("found", "found"),
        ("invalid", "invalid"),
        ("insert", "insert"),
        ("insert_failed", "insert_failed"),
        ("drop", "drop"),
        ("early_drop", "early_drop"),
        ("error", "error"),
        ("search_restart", "search_restart"),
        ("clash_resolve", "clash_resolve"),
        ("chaintoolong", "chaintoolong"),
    ] {
        assert_eq!(
            stats[ours].as_u64(),
            stats_after.get(theirs).copied(),
            "{ours} differs from conntrack -S: {stats} vs {stats_after:?}"
        );
    }
    // Rates over an idle interval are zero, not unknown.
    assert_eq!(ct["found_per_s"].as_f64(), Some(0.0), "{ct}");

    // The entry list: every connection, with the DNAT decoded.
    let entries = ct["entries"].as_array().expect("entries listed");
    let dnat: Vec<&Value> = entries
        .iter()
        .filter(|e| e["orig_dst"] == "198.18.0.2:8080")
        .collect();
    assert_eq!(dnat.len(), 12, "{entries:?}");
    let mut seen = BTreeSet::new();
    for e in &dnat {
        assert_eq!(e["proto"], "tcp");
        assert_eq!(e["state"], "ESTABLISHED");
        assert_eq!(e["nat"], "dnat");
        assert_eq!(e["nat_dst"], "198.18.1.2:80");
        assert_eq!(e["reply_src"], "198.18.1.2:80");
        let src = e["orig_src"].as_str().unwrap();
        let (ip, port) = src.rsplit_once(':').unwrap();
        assert_eq!(ip, CLIENT.to_string());
        assert_eq!(
            e["reply_dst"], src,
            "no SNAT: the reply goes back to the client"
        );
        seen.insert(port.parse::<u16>().unwrap());
        assert!(e["timeout_s"].as_u64().unwrap() > 0);
        // SYN, ACK, "hello", at least.
        assert!(e["packets_orig"].as_u64().unwrap() >= 3, "{e}");
        assert!(e["bytes_orig"].as_u64().unwrap() > 0, "{e}");
    }
    assert_eq!(
        seen, ports,
        "the entries are exactly the client's connections"
    );

    // conntrack -L lists the same source ports.
    let listed: BTreeSet<u16> = conntrack_cli(&topology.router, &["-L", "-p", "tcp"])
        .lines()
        .filter(|l| l.contains("dport=8080"))
        .filter_map(|l| {
            l.split_whitespace()
                .find_map(|f| f.strip_prefix("sport="))
                .and_then(|p| p.parse().ok())
        })
        .collect();
    assert_eq!(seen, listed);

    // The text form lists the same connections, NAT decoded.
    let out = std::process::Command::new(NETLENS)
        .args([
            "snapshot",
            "--section",
            "conntrack",
            "--netns",
            &topology.router.name,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for port in &seen {
        let line = format!("198.18.0.1:{port} → 198.18.0.2:8080 ⇒ 198.18.1.2:80");
        assert!(text.contains(&line), "{line} missing from:\n{text}");
    }
    assert!(text.contains("conntrack count 12 max"), "{text}");

    // Without CAP_NET_ADMIN (dropped from the bounding set, so not even root
    // gets it back on exec): counters from /proc, and the reason in words.
    let out = std::process::Command::new("setpriv")
        .args([
            "--bounding-set",
            "-net_admin",
            NETLENS,
            "snapshot",
            "--json",
        ])
        .args(["--section", "conntrack", "--netns", &topology.router.name])
        .output()
        .expect("setpriv (util-linux)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let limited = &parse_lines(&out.stdout)[0]["conntrack"];
    assert_eq!(limited["source"], "proc", "{limited}");
    assert_eq!(limited["available"], true, "{limited}");
    assert_eq!(limited["count"].as_u64(), Some(12), "{limited}");
    assert_eq!(
        limited["stats"]["found"].as_u64(),
        stats_after.get("found").copied()
    );
    assert!(limited["entries"].is_null(), "{limited}");
    assert!(
        limited["entries_error"]
            .as_str()
            .unwrap()
            .contains("CAP_NET_ADMIN"),
        "{limited}"
    );

    // No finding on a healthy table.
    let ids: Vec<&str> = sample["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(!ids.iter().any(|id| id.starts_with("conntrack")), "{ids:?}");

    // The /proc fallback, read the way the sampler reads it (on a thread
    // inside the namespace), agrees too.
    let path = topology.router.path();
    let (proc_stats, proc_entries, sysctl_count, acct) = thread::spawn(move || {
        enter_netns(&path).unwrap();
        let (stats, entries) = read_stat_file().expect("stat file");
        (
            stats,
            entries,
            read_sysctl("nf_conntrack_count"),
            read_sysctl("nf_conntrack_acct"),
        )
    })
    .join()
    .unwrap();
    assert_eq!(proc_entries, Some(12));
    assert_eq!(
        sysctl_count,
        Some(12),
        "/proc/sys follows the thread's netns"
    );
    assert_eq!(acct, Some(1));
    assert_eq!(Some(proc_stats.found), stats_after.get("found").copied());
    assert_eq!(Some(proc_stats.insert), stats_after.get("insert").copied());
    drop(streams);
}

#[test]
fn namespace_without_rules_explains_itself() {
    if crate::common::need_root(&["ip", "conntrack", "iptables", "setpriv", "sysctl"]) {
        return;
    }
    let ns = Netns::new("ctnone");
    let sample = netlens_conntrack(&ns);
    let ct = &sample["conntrack"];
    assert_eq!(ct["available"], false, "{ct}");
    assert!(
        ct["reason"]
            .as_str()
            .unwrap()
            .contains("no connection tracking in this namespace"),
        "{ct}"
    );
    assert_eq!(ct["count"].as_u64(), Some(0));
}
