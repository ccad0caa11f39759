//! Every column of the Namespaces tab's wide pane (200x40, the real binary
//! in tmux under `--all-netns`) against the kernel, for two namespaces
//! made here (root):
//!
//! - at rest: ESTAB, LSTN, TW, OTH and UDP against `ss -tan` / `ss -uan`
//!   inside each, CT against `conntrack -C` inside each (an iptables
//!   conntrack rule in the first; the second never asked for tracking),
//!   every rate against `ip -s link` (here and on the host-side peer) and
//!   `nstat` not moving;
//! - with paced traffic: rx/s, tx/s, rxpk/s, txpk/s against `ip -s link`
//!   inside each, peer rx/s and peer tx/s against the host-side veth's
//!   `ip -s link`, drop/s against the stack's drop counters (`nstat`) in
//!   the first (datagrams into a socket that never reads), retr/s against
//!   `nstat`'s TcpRetransSegs in the second (SYNs to an address nobody
//!   answers, retransmitted until the socket is closed), all within 2% of
//!   the counters over one of the 5 s windows the shown sample can span.
//!
//! CONTAINER is "-" (no container owns these namespaces) and FIND 0 (no
//! finding is raised in them); tests/system/netns_findings_list.rs checks FIND
//! against a real finding.
//!
//! Network safety: namespaces `h27-<pid>-0` (198.18.234.0/24) and
//! `h27-<pid>-1` (198.18.235.0/24), each joined to this test's namespace by
//! a veth; every datagram goes between this process and one of them; the
//! SYNs go to 198.18.235.77, a static neighbour entry in the second whose
//! MAC nobody has: the host-side veth drops them. Every sender is bounded
//! in packets and seconds; the namespaces (with their veths, sockets and
//! iptables rule, removed first by a guard) are deleted on drop, the
//! helpers killed by PID, the tmux server and netlens ended by their guard.
//! tests/system/netns_findings_list.rs uses the same names and /24s: the tests
//! take turns (`netns_traffic::h27_turn`).

use crate::common;

use common::netns_traffic::{Ns, paced_udp};
use common::python_in;
use common::tmux::Tmux;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

/// An iptables rule in a namespace that makes it track connections,
/// deleted on drop (before the namespace goes).
struct Tracking {
    ns: String,
}

const RULE: &[&str] = &[
    "INPUT",
    "-m",
    "conntrack",
    "--ctstate",
    "NEW,ESTABLISHED,RELATED",
    "-j",
    "ACCEPT",
];

impl Tracking {
    fn on(ns: &Ns) -> Tracking {
        let mut args = vec!["iptables", "-A"];
        args.extend_from_slice(RULE);
        ns_exec(ns.name(), &args);
        Tracking {
            ns: ns.name().to_string(),
        }
    }
}

impl Drop for Tracking {
    fn drop(&mut self) {
        let mut args = vec!["netns", "exec", &self.ns, "iptables", "-D"];
        args.extend_from_slice(RULE);
        let _ = std::process::Command::new("ip").args(&args).output();
    }
}

/// The sockets of the first namespace at rest: a listener, one connection
/// held open (2 ESTAB), two the client closed first (2 TIME-WAIT), one the
/// client half-closed and the server never closes (FIN-WAIT-2 and
/// CLOSE-WAIT: 2 other), and a UDP socket that never reads (the drops).
struct Held {
    _tcp: Vec<TcpStream>,
    _listener: TcpListener,
    udp: UdpSocket,
}

fn sockets_in(ns: &Ns) -> Held {
    let (path, ip) = (ns.ns.path(), ns.ip());
    thread::spawn(move || {
        enter_netns(&path).unwrap();
        let at = SocketAddrV4::new(ip, 7300);
        let listener = TcpListener::bind(at).unwrap();
        for _ in 0..2 {
            let client = TcpStream::connect(at).unwrap();
            let (server, _) = listener.accept().unwrap();
            drop(client);
            thread::sleep(Duration::from_millis(50));
            drop(server);
        }
        let mut tcp = Vec::new();
        for _ in 0..2 {
            let client = TcpStream::connect(at).unwrap();
            let (server, _) = listener.accept().unwrap();
            tcp.extend([client, server]);
        }
        // The second pair: the client sends its FIN, the server never.
        tcp[2].shutdown(Shutdown::Write).unwrap();
        let udp = UdpSocket::bind(SocketAddrV4::new(ip, 9001)).unwrap();
        Held {
            _tcp: tcp,
            _listener: listener,
            udp,
        }
    })
    .join()
    .unwrap()
}

/// Sockets by state as `ss -tan` and `ss -uan` inside `ns` count them:
/// [ESTAB, LSTN, TW, OTH, UDP].
fn ss_counts(ns: &Ns) -> [u64; 5] {
    let mut tcp: BTreeMap<String, u64> = BTreeMap::new();
    let out = ns_exec(ns.name(), &["ss", "-tanH"]);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(state) = line.split_whitespace().next() {
            *tcp.entry(state.to_string()).or_default() += 1;
        }
    }
    let udp = ns_exec(ns.name(), &["ss", "-uanH"]);
    let udp = String::from_utf8_lossy(&udp.stdout).lines().count() as u64;
    let get = |s: &str| tcp.get(s).copied().unwrap_or(0);
    let total: u64 = tcp.values().sum();
    let (e, l, t) = (get("ESTAB"), get("LISTEN"), get("TIME-WAIT"));
    [e, l, t, total - e - l - t, udp]
}

fn conntrack_count(ns: &Ns) -> u64 {
    let out = ns_exec(ns.name(), &["conntrack", "-C"]);
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// `nstat -asz` inside `ns`: every counter, absolute, history untouched.
fn nstat(ns: &Ns) -> BTreeMap<String, u64> {
    let out = ns_exec(ns.name(), &["nstat", "-asz", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("nstat --json");
    v["kernel"]
        .as_object()
        .expect("nstat kernel")
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
        .collect()
}

/// What netlens sums as a namespace's drops (model::netns::DROP_COUNTERS,
/// in nstat's names).
const DROPS: &[&str] = &[
    "IpInDiscards",
    "IpOutDiscards",
    "TcpExtListenDrops",
    "TcpExtTCPBacklogDrop",
    "UdpRcvbufErrors",
    "UdpInErrors",
];

/// What is measured around the screen: per namespace its eth0
/// (rx bytes, tx bytes, rx packets, tx packets), its host-side veth's
/// (rx bytes, tx bytes), the drops and the retransmits.
#[derive(Debug, Clone, Copy)]
struct Counters {
    own: [u64; 4],
    peer: [u64; 2],
    drops: u64,
    retrans: u64,
}

fn counters(ns: &Ns) -> Counters {
    let out = run("ip", &["-s", "-j", "link", "show", "dev", &ns.host_dev()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v[0]["stats64"];
    let stat = nstat(ns);
    Counters {
        own: ns.counters(),
        peer: [
            s["rx"]["bytes"].as_u64().unwrap(),
            s["tx"]["bytes"].as_u64().unwrap(),
        ],
        drops: DROPS
            .iter()
            .map(|k| stat.get(*k).copied().unwrap_or(0))
            .sum(),
        retrans: stat.get("TcpRetransSegs").copied().unwrap_or(0),
    }
}

/// One row of the wide table, cell by cell (bytes rates in bytes/s).
#[derive(Debug)]
struct Row {
    container: String,
    /// rx/s, tx/s, peer rx/s, peer tx/s.
    bytes: [f64; 4],
    /// rxpk/s, txpk/s, retr/s, drop/s.
    rates: [f64; 4],
    /// ESTAB, LSTN, TW, OTH, UDP, CT, FIND.
    counts: [u64; 7],
}

/// The cells after `label` on the screen.
fn row(screen: &str, label: &str) -> Option<Row> {
    let line = screen
        .lines()
        .find(|l| l.trim_start_matches("» ").starts_with(&format!("{label} ")))?;
    let t: Vec<&str> = line.trim_start_matches("» ")[label.len()..]
        .split_whitespace()
        .collect();
    if t.len() != 20 {
        return None;
    }
    let per_s = |n: &str, unit: &str| -> f64 {
        let n: f64 = n.parse().unwrap();
        n * match unit {
            "B/s" => 1.0,
            "KiB/s" => 1024.0,
            "MiB/s" => 1024.0 * 1024.0,
            other => panic!("unit {other} in {line}"),
        }
    };
    let num = |s: &str| -> f64 { s.parse().unwrap_or_else(|_| panic!("{s} in {line}")) };
    let count = |s: &str| -> u64 { s.parse().unwrap_or_else(|_| panic!("{s} in {line}")) };
    // CONTAINER rx unit tx unit rxpk txpk peer-rx unit peer-tx unit ESTAB
    // LSTN TW OTH UDP retr drop CT FIND
    Some(Row {
        container: t[0].to_string(),
        bytes: [
            per_s(t[1], t[2]),
            per_s(t[3], t[4]),
            per_s(t[7], t[8]),
            per_s(t[9], t[10]),
        ],
        rates: [num(t[5]), num(t[6]), num(t[16]), num(t[17])],
        counts: [
            count(t[11]),
            count(t[12]),
            count(t[13]),
            count(t[14]),
            count(t[15]),
            count(t[18]),
            count(t[19]),
        ],
    })
}

/// Paced UDP from this process's namespace or from inside `from` (a
/// namespace path): `count` datagrams of `size` bytes at `pps` to `to`.
/// Bounded by `count` and count / pps + 5 seconds.
fn paced_from(
    from: Option<String>,
    src: Ipv4Addr,
    to: SocketAddrV4,
    (count, pps, size): (u64, u32, usize),
) -> thread::JoinHandle<()> {
    assert!(is_bench_addr(src) && is_bench_addr(*to.ip()));
    thread::spawn(move || {
        if let Some(path) = from {
            enter_netns(&path).unwrap();
        }
        let socket = UdpSocket::bind(SocketAddrV4::new(src, 0)).unwrap();
        let data = vec![0x5au8; size];
        let limit = Duration::from_secs_f64(count as f64 / f64::from(pps) + 5.0);
        let period = Duration::from_secs_f64(1.0 / f64::from(pps));
        let start = Instant::now();
        for i in 0..count {
            let due = start + period.mul_f64(i as f64);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                thread::sleep(wait);
            }
            if start.elapsed() > limit {
                break;
            }
            socket.send_to(&data, to).unwrap();
        }
    })
}

/// `shown` within 2% of the range `low..=high`, plus half the last digit
/// it was rounded to.
fn within(shown: f64, (low, high): (f64, f64), rounding: f64) -> bool {
    shown >= low * 0.98 - rounding && shown <= high * 1.02 + rounding
}

/// The least and the most rate of `value` over the windows of `series`
/// (counters read every 500 ms, each read stamped when it began and when
/// it ended) that span `interval` seconds, give or take one read, and end
/// in the `interval` before `read_at`: the sample a screen read at
/// `read_at` shows is one of them. A read takes tens of milliseconds on a
/// loaded host (`ip` and `nstat` are processes), so a window's rate is
/// bounded over its longest and its shortest possible span.
fn window_rates(
    series: &[(Read, Vec<Counters>)],
    read_at: Instant,
    interval: f64,
    value: impl Fn(&[Counters]) -> u64,
) -> (f64, f64) {
    let (mut low, mut high) = (f64::MAX, f64::MIN);
    for (i, (from, a)) in series.iter().enumerate() {
        for (to, b) in &series[i + 1..] {
            let span = to.start.duration_since(from.start).as_secs_f64();
            let before_read = read_at.duration_since(to.start).as_secs_f64();
            if (span - interval).abs() <= 0.6 && before_read <= interval + 0.6 {
                let moved = (value(b) - value(a)) as f64;
                let longest = to.end.duration_since(from.start).as_secs_f64();
                let shortest = to.start.duration_since(from.end).as_secs_f64();
                (low, high) = (low.min(moved / longest), high.max(moved / shortest));
            }
        }
    }
    assert!(
        low <= high,
        "no {interval} s window in {} reads",
        series.len()
    );
    (low, high)
}

/// When one read of the counters began and ended.
#[derive(Debug, Clone, Copy)]
struct Read {
    start: Instant,
    end: Instant,
}

/// Half the last shown digit of a byte rate (3 significant digits).
fn rounding_of(bytes: f64) -> f64 {
    let unit = if bytes >= 1024.0 * 1024.0 {
        1024.0 * 1024.0
    } else if bytes >= 1024.0 {
        1024.0
    } else {
        return 0.5;
    };
    let value = bytes / unit;
    let step = if value < 9.995 {
        0.01
    } else if value < 99.95 {
        0.1
    } else {
        1.0
    };
    step / 2.0 * unit
}

#[test]
fn every_wide_column_matches_the_kernel_at_rest_and_under_traffic() {
    if crate::common::need_root(&["ip", "conntrack", "iptables", "python3", "ss", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("h27cols") else {
        return;
    };
    let _h27 = common::netns_traffic::h27_turn();
    let spaces = [Ns::new("h27", 234, 0), Ns::new("h27", 234, 1)];
    let labels: Vec<String> = spaces.iter().map(|n| n.name().to_string()).collect();
    let _tracking = Tracking::on(&spaces[0]);
    let held = sockets_in(&spaces[0]);
    // SO_RCVBUF as small as the kernel allows: the socket is full after a
    // few datagrams, and every later one is a drop.
    {
        use std::os::fd::AsRawFd;
        let one: libc::c_int = 1;
        // SAFETY: setsockopt reads one int that outlives the call.
        let rc = unsafe {
            libc::setsockopt(
                held.udp.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&raw const one).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0);
    }
    let command = format!(
        "env NO_COLOR=1 {NETLENS} --all-netns --no-capture --no-bpf --config /dev/null \
         --tab namespaces --interval 5s"
    );
    tmux.start(200, 40, &std::env::temp_dir(), &command);
    tmux.wait("the table", Duration::from_secs(20), |s| {
        s.contains("NAMESPACE").then_some(())
    });
    tmux.send_keys(&["/"]);
    tmux.type_text("t", &format!("ns:h27-{}-", std::process::id()));
    tmux.send_keys(&["Enter"]);
    let header = tmux.wait("every column", Duration::from_secs(20), |s| {
        s.lines()
            .find(|l| l.contains("NAMESPACE"))
            .map(str::to_string)
    });
    for title in [
        "CONTAINER",
        "rx/s",
        "tx/s",
        "rxpk/s",
        "txpk/s",
        "peer rx/s",
        "peer tx/s",
        "ESTAB",
        "LSTN",
        "TW",
        "OTH",
        "UDP",
        "retr/s",
        "drop/s",
        "CT",
        "FIND",
    ] {
        assert!(header.contains(title), "{title}: {header}");
    }

    // ---- At rest: two samples after the sockets were made, the counts
    // and the counters did not move between the reads around the screen.
    let counts_before: Vec<[u64; 5]> = spaces.iter().map(ss_counts).collect();
    let ct_before: Vec<u64> = spaces.iter().map(conntrack_count).collect();
    let before: Vec<Counters> = spaces.iter().map(counters).collect();
    thread::sleep(Duration::from_secs(11));
    let screen = tmux.screen();
    let rows: Vec<Row> = labels
        .iter()
        .map(|l| row(&screen, l).unwrap_or_else(|| panic!("{l}:\n{screen}")))
        .collect();
    let counts_after: Vec<[u64; 5]> = spaces.iter().map(ss_counts).collect();
    let ct_after: Vec<u64> = spaces.iter().map(conntrack_count).collect();
    let after: Vec<Counters> = spaces.iter().map(counters).collect();
    eprintln!("at rest:\n{screen}");
    assert_eq!(counts_before, counts_after, "sockets moved at rest");
    assert_eq!(ct_before, ct_after, "conntrack moved at rest");
    for (i, row) in rows.iter().enumerate() {
        let [e, l, t, o, u] = counts_after[i];
        eprintln!(
            "{}: screen {:?}; ss [estab {e}, listen {l}, tw {t}, other {o}, udp {u}], \
             conntrack -C {}",
            labels[i], row.counts, ct_after[i]
        );
        assert_eq!(row.counts[..5], counts_after[i], "{}: {row:?}", labels[i]);
        assert_eq!(row.counts[5], ct_after[i], "{}: {row:?}", labels[i]);
        assert_eq!(row.counts[6], 0, "{}: {row:?}", labels[i]);
        assert_eq!(row.container, "-", "{row:?}");
        // Nothing moved: every rate 0, as the counters say.
        assert_eq!(before[i].own, after[i].own, "{}", labels[i]);
        assert_eq!(before[i].peer, after[i].peer, "{}", labels[i]);
        assert_eq!(before[i].drops, after[i].drops, "{}", labels[i]);
        assert_eq!(before[i].retrans, after[i].retrans, "{}", labels[i]);
        assert_eq!(row.bytes, [0.0; 4], "{row:?}");
        assert_eq!(row.rates, [0.0; 4], "{row:?}");
    }
    // What the first namespace holds: 2+2 ESTAB (a held and a half-closed
    // connection), 1 LSTN, 2 TW, 2 other (FIN-WAIT-2, CLOSE-WAIT), 1 UDP;
    // its 4 connections tracked; the second nothing.
    assert_eq!(counts_after[0], [2, 1, 2, 2, 1]);
    assert!(ct_after[0] >= 4, "{ct_after:?}");
    assert_eq!(counts_after[1], [0; 5]);
    assert_eq!(ct_after[1], 0);

    // ---- Under traffic, for 24 s: into the first 500/s of 1000 bytes
    // (drained) and 100/s of 200 bytes (into the socket that never reads:
    // drops), out of it 250/s of 600 bytes to this process; from the
    // second 40 SYNs a second to an address nobody answers, each closed
    // after 2.5 s: retransmitted meanwhile (twice where
    // net.ipv4.tcp_syn_linear_timeouts keeps the first timeouts at 1 s).
    let (a, b) = (&spaces[0], &spaces[1]);
    let host_sink = UdpSocket::bind(SocketAddrV4::new(a.host_ip(), 9002)).unwrap();
    host_sink
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let sink = thread::spawn(move || {
        let (start, mut buffer) = (Instant::now(), [0u8; 2048]);
        while start.elapsed() < Duration::from_secs(30) {
            let _ = host_sink.recv(&mut buffer);
        }
    });
    b.ns.ip(&[
        "neigh",
        "replace",
        "198.18.235.77",
        "lladdr",
        "02:00:c6:12:eb:4d",
        "dev",
        "eth0",
        "nud",
        "permanent",
    ]);
    let syns = python_in(
        b.name(),
        "import socket,time\n\
         start=time.time(); held=[]\n\
         for i in range(960):\n\
         \x20   due=start+i/40\n\
         \x20   time.sleep(max(0,due-time.time()))\n\
         \x20   s=socket.socket(); s.setblocking(False)\n\
         \x20   s.connect_ex(('198.18.235.77',9)); held.append((time.time(),s))\n\
         \x20   while held and time.time()-held[0][0]>2.5: held.pop(0)[1].close()\n",
    );
    let senders = [
        paced_udp(a, 500 * 24, 500),
        paced_from(
            None,
            a.host_ip(),
            SocketAddrV4::new(a.ip(), 9001),
            (100 * 24, 100, 200),
        ),
        paced_from(
            Some(a.ns.path()),
            a.ip(),
            SocketAddrV4::new(a.host_ip(), 9002),
            (250 * 24, 250, 600),
        ),
    ];
    // The screen read at 14 s, its 5 s interval inside the traffic; the
    // counters every 500 ms from 3 s until then. The screen's rates span
    // the last 5 s sample before it was read, so each must be a 5 s window
    // of the counters ending in the 5 s before the read: on a loaded host
    // the paced senders are not steady enough for the average to do.
    thread::sleep(Duration::from_secs(3));
    let counts_before: Vec<[u64; 5]> = spaces.iter().map(ss_counts).collect();
    let ct_before: Vec<u64> = spaces.iter().map(conntrack_count).collect();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (series, screen, read_at) = thread::scope(|scope| {
        let recorder = scope.spawn(|| {
            let mut series = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let start = Instant::now();
                let read = spaces.iter().map(counters).collect::<Vec<_>>();
                let end = Instant::now();
                series.push((Read { start, end }, read));
                thread::sleep(Duration::from_millis(500).saturating_sub(start.elapsed()));
            }
            series
        });
        thread::sleep(Duration::from_secs(11));
        let screen = tmux.screen();
        let read_at = Instant::now();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (recorder.join().unwrap(), screen, read_at)
    });
    // The findings the traffic raises, as snapshot --json places them.
    let snapshot = spawn_snapshot(&[
        "--all-netns",
        "--no-capture",
        "--no-bpf",
        "--count",
        "3",
        "--interval",
        "1s",
    ]);
    thread::sleep(Duration::from_secs(7));
    let counts_after: Vec<[u64; 5]> = spaces.iter().map(ss_counts).collect();
    let ct_after: Vec<u64> = spaces.iter().map(conntrack_count).collect();
    let samples = snapshot_samples(snapshot);
    for sender in senders {
        sender.join().unwrap();
    }
    drop(syns);
    sink.join().unwrap();
    eprintln!("under traffic:\n{screen}");
    for (i, label) in labels.iter().enumerate() {
        let row = row(&screen, label).unwrap_or_else(|| panic!("{label}:\n{screen}"));
        let windows = |value: fn(&Counters) -> u64| {
            window_rates(&series, read_at, 5.0, |counters| value(&counters[i]))
        };
        let bytes = [
            ("rx/s", windows(|c| c.own[0])),
            ("tx/s", windows(|c| c.own[1])),
            ("peer rx/s", windows(|c| c.peer[0])),
            ("peer tx/s", windows(|c| c.peer[1])),
        ];
        for (k, (name, (low, high))) in bytes.iter().enumerate() {
            let shown = row.bytes[k];
            eprintln!("{label} {name}: screen {shown:.0} B/s, ip -s link {low:.0}-{high:.0} B/s");
            assert!(
                within(shown, (*low, *high), rounding_of(shown)),
                "{label} {name}: {row:?}"
            );
        }
        let rates = [
            ("rxpk/s", windows(|c| c.own[2])),
            ("txpk/s", windows(|c| c.own[3])),
            ("retr/s", windows(|c| c.retrans)),
            ("drop/s", windows(|c| c.drops)),
        ];
        for (k, (name, (low, high))) in rates.iter().enumerate() {
            let shown = row.rates[k];
            eprintln!("{label} {name}: screen {shown:.1}, kernel {low:.1}-{high:.1}");
            assert!(
                within(shown, (*low, *high), 0.05),
                "{label} {name}: {row:?}"
            );
        }
    }
    // What holds still under the traffic: the first namespace's sockets
    // (its three UDP sockets now: the drained receiver, the one that never
    // reads, the sender) and its tracked connections (4 TCP, 3 UDP flows),
    // the second's conntrack and sockets but its SYN_SENT ones (OTH, which
    // come and go); and each one's findings, against snapshot --json.
    let last = samples.last().expect("a sample");
    let findings = last["findings"].as_array().expect("findings");
    for (i, label) in labels.iter().enumerate() {
        let row = row(&screen, label).unwrap();
        let steady: Vec<usize> = if i == 0 {
            vec![0, 1, 2, 3, 4]
        } else {
            vec![0, 1, 2, 4]
        };
        for k in steady {
            assert_eq!(counts_before[i][k], counts_after[i][k], "{label} moved");
            assert_eq!(row.counts[k], counts_after[i][k], "{label} {k}: {row:?}");
        }
        assert_eq!(ct_before[i], ct_after[i], "{label}'s conntrack moved");
        assert_eq!(row.counts[5], ct_after[i], "{label} CT: {row:?}");
        let id = common::netns_traffic::namespace(last, label).unwrap()["id"].as_u64();
        let carrying = findings
            .iter()
            .filter(|f| f["evidence"]["netns"].as_u64() == id)
            .count() as u64;
        eprintln!(
            "{label} under traffic: screen {:?}; ss {:?}, conntrack -C {}; snapshot --json \
             findings {carrying}",
            row.counts, counts_after[i], ct_after[i]
        );
        assert_eq!(row.counts[6], carrying, "{label} FIND: {row:?}");
    }
    assert_eq!(counts_after[0], [2, 1, 2, 2, 3]);

    // The traffic is what was sent: the host-side peer is the other end
    // of each namespace's eth0, and the drops and retransmits are where
    // they were made.
    let ((first, before), (last, after)) = (&series[0], &series[series.len() - 1]);
    let elapsed = last.start.duration_since(first.start).as_secs_f64();
    let per_s = |i: usize, f: fn(&Counters) -> u64| (f(&after[i]) - f(&before[i])) as f64 / elapsed;
    assert!(per_s(0, |c| c.own[2]) > 0.95 * 600.0, "{after:?}");
    assert!(per_s(0, |c| c.own[3]) > 0.95 * 250.0, "{after:?}");
    assert!(per_s(0, |c| c.drops) > 0.95 * 2.0 * 100.0, "{after:?}");
    assert!(per_s(1, |c| c.retrans) > 0.95 * 40.0, "{after:?}");
    assert_eq!(per_s(0, |c| c.retrans), 0.0);
    assert_eq!(per_s(1, |c| c.drops), 0.0);
    tmux.send_keys(&["q"]);
    drop(held);
}
