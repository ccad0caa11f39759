//! Root-only end-to-end checks of the Sockets and TCP data against `ss`, in
//! throw-away namespaces joined by a veth pair (198.18.0.1 <-> 198.18.0.2).
//!
//! Network safety: every address is in 198.18.0.0/15, every socket lives in
//! a namespace the test creates, and the SYN flood is 2000 packets in about
//! two seconds, sent inside those namespaces.

use crate::common;

use common::*;
use pnet_packet::ip::IpNextHeaderProtocols;
use pnet_packet::ipv4::{self, MutableIpv4Packet};
use pnet_packet::tcp::{self, MutableTcpPacket, TcpFlags};
use serde_json::Value;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Runs `f` on a thread that entered the namespace at `path`: sockets it
/// creates belong to that namespace.
fn in_netns<T: Send + 'static>(path: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = path.to_string();
    thread::spawn(move || {
        enter_netns(&path).expect("setns");
        f()
    })
    .join()
    .expect("namespace thread panicked")
}

/// A listener with exactly this backlog (listen() again adjusts it).
fn listener(address: SocketAddrV4, backlog: i32) -> TcpListener {
    let listener = TcpListener::bind(address).expect("bind");
    // SAFETY: a valid listening socket; listen() on it only sets the backlog.
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), backlog) }, 0);
    listener
}

/// A non-blocking connect left pending: the kernel keeps retrying its SYN.
fn pending_connect(to: SocketAddrV4) -> OwnedFd {
    // SAFETY: plain socket calls on a descriptor we own.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0);
        assert!(fd >= 0);
        let address = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: to.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(*to.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        libc::connect(
            fd,
            (&address as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as u32,
        );
        OwnedFd::from_raw_fd(fd)
    }
}

/// (state, recv_q, send_q, local, peer) from `ss -tan` in a namespace.
fn ss(ns: &Netns) -> Vec<(String, u32, u32, String, String)> {
    let out = ns_exec(&ns.name, &["ss", "-tanH"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Some((
                f.first()?.to_string(),
                f.get(1)?.parse().ok()?,
                f.get(2)?.parse().ok()?,
                f.get(3)?.to_string(),
                f.get(4)?.to_string(),
            ))
        })
        .collect()
}

fn sockets(sample: &Value) -> &Vec<Value> {
    sample["sockets"].as_array().expect("sockets[]")
}

fn find<'a>(sample: &'a Value, local: &str, peer: Option<&str>) -> Option<&'a Value> {
    sockets(sample)
        .iter()
        .find(|s| s["local"] == local && peer.is_none_or(|p| s["peer"] == p))
}

fn findings(sample: &Value) -> Vec<(String, String)> {
    sample["findings"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|f| {
                    (
                        f["id"].as_str().unwrap_or_default().to_string(),
                        f["summary"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn queues_owners_and_listen_overflow_match_ss() {
    if crate::common::need_root(&["ip", "ss", "sysctl"]) {
        return;
    }
    let pair = VethPair::new("sq");
    let (a, b) = (pair.a.path(), pair.b.path());
    let reading = SocketAddrV4::new(IP_B, 7001);
    let writing = SocketAddrV4::new(IP_B, 7002);
    let tiny = SocketAddrV4::new(IP_B, 7003);
    let (l1, l2, l3) = in_netns(&b, move || {
        (
            listener(reading, 64),
            listener(writing, 64),
            listener(tiny, 2),
        )
    });
    // 1. Five connections whose server never reads: Recv-Q = what was sent.
    let clients: Vec<TcpStream> = in_netns(&a, move || {
        (0..5)
            .map(|i| {
                let mut s = TcpStream::connect(reading).expect("connect");
                s.write_all(&vec![0x5a; 1000 * (i + 1)]).expect("write");
                s
            })
            .collect()
    });
    let servers: Vec<TcpStream> = (0..5).map(|_| l1.accept().expect("accept").0).collect();
    // 2. A peer that does not read: the server writes until its buffer is full.
    let idle_peer = in_netns(&a, move || TcpStream::connect(writing).expect("connect"));
    let (writer, _) = l2.accept().expect("accept");
    writer.set_nonblocking(true).unwrap();
    let chunk = vec![0xa5u8; 65536];
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match (&writer).write(&chunk) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("write: {e}"),
        }
    }
    // 3. A listener with backlog 2 that never accepts, and 6 clients.
    let pending: Vec<OwnedFd> =
        in_netns(&a, move || (0..6).map(|_| pending_connect(tiny)).collect());
    thread::sleep(Duration::from_millis(800)); // queues settle; SYNs retried

    let samples = snapshot(&[
        "--netns",
        &pair.b.name,
        "--count",
        "4",
        "--interval",
        "700ms",
    ]);
    let last = samples.last().unwrap();
    let table = ss(&pair.b);
    assert!(!table.is_empty());
    let mut compared = 0;
    for (state, recv_q, send_q, local, peer) in &table {
        let socket = if state == "LISTEN" {
            find(last, local, None)
        } else {
            find(last, local, Some(peer))
        };
        let socket = socket.unwrap_or_else(|| panic!("{local} {peer} missing: {last}"));
        assert_eq!(
            (socket["recv_q"].as_u64(), socket["send_q"].as_u64()),
            (Some(u64::from(*recv_q)), Some(u64::from(*send_q))),
            "{state} {local} {peer}: netlens {socket} vs ss {recv_q} {send_q}"
        );
        compared += 1;
    }
    assert!(compared >= 5 + 1 + 3 + 3, "compared {compared}: {table:?}");
    for (i, client) in clients.iter().enumerate() {
        let peer = client.local_addr().unwrap().to_string();
        let socket = find(last, &reading.to_string(), Some(&peer)).expect("server side");
        assert_eq!(socket["recv_q"], 1000 * (i as u64 + 1));
        assert_eq!(socket["state"], "ESTAB");
        // Among its users: a child another test forks holds a copy of
        // every descriptor until it execs, and ss lists it too.
        let users = socket["users"].as_array().expect("users");
        assert!(
            users.iter().any(|u| u["pid"] == std::process::id()),
            "{socket}"
        );
        assert!(socket["rtt_ms"].as_f64().is_some());
        assert!(socket["queue_streak"].as_u64().unwrap() >= 3, "{socket}");
    }
    let stuck_send = find(
        last,
        &writing.to_string(),
        Some(&idle_peer.local_addr().unwrap().to_string()),
    )
    .expect("writer");
    assert!(stuck_send["send_q"].as_u64().unwrap() > 0, "{stuck_send}");
    let tiny_listener = find(last, &tiny.to_string(), None).expect("tiny listener");
    assert_eq!(tiny_listener["state"], "LISTEN");
    assert_eq!(tiny_listener["send_q"], 2, "backlog");
    assert_eq!(tiny_listener["recv_q"], 3, "accept queue: backlog + 1");
    assert_eq!(tiny_listener["accept_queue_full"], true);
    let found = findings(last);
    assert!(
        found
            .iter()
            .any(|(id, s)| id == "listen-overflow" && s.contains("198.18.0.2:7003")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|(id, _)| id == "socket-backlog"),
        "{found:?}"
    );
    // ListenOverflows rises while the clients retry their SYNs.
    let overflows: f64 = samples
        .iter()
        .filter_map(|s| s["tcp"]["listen_overflows_per_s"].as_f64())
        .sum();
    assert!(overflows > 0.0, "{samples:?}");
    assert!(
        last["tcp"]["counters"]["TcpExt.ListenOverflows"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(last["tcp"]["states"]["ESTABLISHED"].as_u64().unwrap() >= 6 * 2 - 6);
    // Knobs are read in the watched namespace.
    assert_eq!(
        last["tcp"]["knobs"]["net.core.somaxconn"],
        ns_somaxconn(&pair.b)
    );
    drop((pending, l1, l2, l3, servers, writer));
}

fn ns_somaxconn(ns: &Netns) -> String {
    let out = ns_exec(&ns.name, &["cat", "/proc/sys/net/core/somaxconn"]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Sends `count` SYNs to `to` from the spoofed `sources` (round robin with
/// weights), paced over about `seconds`. Runs in the calling thread's
/// namespace. Bounded by count and by time.
fn syn_flood(to: SocketAddrV4, sources: &[(Ipv4Addr, u32)], count: u32, seconds: f64) -> u32 {
    assert!(is_bench_addr(*to.ip()));
    assert!(sources.iter().all(|(ip, _)| is_bench_addr(*ip)));
    assert!(count <= 5000 && seconds <= 5.0);
    // SAFETY: a raw socket we own; IPPROTO_RAW implies IP_HDRINCL.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW) };
    assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let weights: u32 = sources.iter().map(|(_, w)| w).sum();
    let period = Duration::from_secs_f64(seconds / f64::from(count));
    let start = Instant::now();
    let mut sent = 0;
    for i in 0..count {
        if start.elapsed() > Duration::from_secs_f64(seconds + 1.0) {
            break;
        }
        let mut pick = i % weights;
        let source = sources
            .iter()
            .find(|(_, w)| {
                if pick < *w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .map(|(ip, _)| *ip)
            .unwrap();
        let mut buffer = [0u8; 40];
        {
            let mut segment = MutableTcpPacket::new(&mut buffer[20..]).unwrap();
            segment.set_source(20_000 + (i % 40_000) as u16);
            segment.set_destination(to.port());
            segment.set_sequence(0x1000_0000 + i);
            segment.set_data_offset(5);
            segment.set_flags(TcpFlags::SYN);
            segment.set_window(64_240);
            let sum = tcp::ipv4_checksum(&segment.to_immutable(), &source, to.ip());
            segment.set_checksum(sum);
        }
        {
            let mut packet = MutableIpv4Packet::new(&mut buffer).unwrap();
            packet.set_version(4);
            packet.set_header_length(5);
            packet.set_total_length(40);
            packet.set_ttl(64);
            packet.set_identification(i as u16);
            packet.set_next_level_protocol(IpNextHeaderProtocols::Tcp);
            packet.set_source(source);
            packet.set_destination(*to.ip());
            let sum = ipv4::checksum(&packet.to_immutable());
            packet.set_checksum(sum);
        }
        let address = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from(*to.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        // SAFETY: sendto from our buffer to a sockaddr_in on the stack.
        let n = unsafe {
            libc::sendto(
                fd.as_raw_fd(),
                buffer.as_ptr().cast(),
                buffer.len(),
                0,
                (&address as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as u32,
            )
        };
        if n == 40 {
            sent += 1;
        }
        let due = start + period * (i + 1);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
    }
    sent
}

#[test]
fn syn_flood_is_found_named_and_clears() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "ss", "sysctl"]) else {
        return;
    };
    let pair = VethPair::new("sf");
    // SYN-ACKs to the spoofed sources go to A, which drops them (no
    // forwarding): the victim's request sockets wait, as in a real flood,
    // and with one SYN-ACK retry they expire about 3 s later.
    pair.b
        .ip(&["route", "add", "198.18.128.0/17", "via", &IP_A.to_string()]);
    pair.b.sysctl("net.ipv4.tcp_synack_retries", "1");
    pair.b.sysctl("net.ipv4.tcp_syncookies", "1");
    pair.b.sysctl("net.core.somaxconn", "4096");
    pair.b.sysctl("net.ipv4.tcp_max_syn_backlog", "4096");
    let victim = SocketAddrV4::new(IP_B, 7100);
    let server = in_netns(&pair.b.path(), move || listener(victim, 4096));
    let top = Ipv4Addr::new(198, 18, 128, 7);
    let mut netlens = ChildGuard(
        Command::new(NETLENS)
            .args(["snapshot", "--json", "--netns", &pair.b.name])
            .args([
                "--count",
                "22",
                "--interval",
                "500ms",
                "--section",
                "tcp,findings",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn netlens"),
    );
    thread::sleep(Duration::from_millis(1500));
    let sources = [
        (top, 6),
        (Ipv4Addr::new(198, 18, 128, 8), 2),
        (Ipv4Addr::new(198, 18, 129, 9), 2),
    ];
    let sent = in_netns(&pair.a.path(), move || {
        syn_flood(victim, &sources, 2000, 2.0)
    });
    assert_eq!(sent, 2000);
    // Read to the end first: a full pipe would stall netlens.
    let mut stdout = String::new();
    std::io::Read::read_to_string(netlens.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let status = netlens.0.wait().expect("netlens runs");
    assert!(status.success(), "netlens failed: {stdout}");
    let samples = parse_lines(stdout.as_bytes());
    let flagged: Vec<usize> = samples
        .iter()
        .enumerate()
        .filter(|(_, s)| findings(s).iter().any(|(id, _)| id == "syn-flood"))
        .map(|(i, _)| i)
        .collect();
    assert!(!flagged.is_empty(), "no syn-flood in {samples:?}");
    let first = &samples[flagged[0]];
    let summary = findings(first)
        .into_iter()
        .find(|(id, _)| id == "syn-flood")
        .unwrap()
        .1;
    assert!(summary.contains("from 198.18.128.7 ("), "{summary}");
    let peak = samples
        .iter()
        .filter_map(|s| s["tcp"]["states"]["SYN_RECV"].as_u64())
        .max()
        .unwrap();
    assert!(peak >= 256, "SYN_RECV peaked at {peak}");
    // The finding clears once the request sockets expired.
    let last = samples.last().unwrap();
    assert!(
        !findings(last).iter().any(|(id, _)| id == "syn-flood"),
        "still flagged at the end: {last}"
    );
    assert_eq!(last["tcp"]["states"]["SYN_RECV"], 0, "{last}");
    drop(server);
    let _ = SocketAddr::from(victim);
}

/// The sockets' owners are looked up unless the viewer asked for none
/// (`snapshot --section interfaces,tcp,dns`): this process's listener
/// (on loopback, in the test's own namespace) is named as held by it,
/// then, with the look-up off, as held by nobody and not pending, then
/// named again.
#[test]
fn owners_are_looked_up_unless_none_is_asked_for() {
    use netlens::collect::{stack::StackCollector, sysctl::HostKnobs};
    if crate::common::need_root(&[]) {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut stack = StackCollector::new(HostKnobs::open(), false, false).unwrap();
    let ours = |stack: &mut StackCollector| {
        let deadline = Instant::now() + Duration::from_secs(2);
        let (sockets, _, _) = stack.collect_with(deadline, |_, _| Ok(())).unwrap();
        sockets
            .iter()
            .find(|s| s.local.port() == port && s.state_name() == "LISTEN")
            .expect("the listener is dumped")
            .to_sample()
    };
    let named = |stack: &mut StackCollector| {
        // A new socket's owner may be pending for a sample or two.
        (0..10)
            .map(|_| ours(stack))
            .find(|s| !s.owner_pending)
            .expect("the owner found within 10 samples")
    };
    let me = std::process::id();
    let socket = named(&mut stack);
    assert!(socket.users.iter().any(|u| u.pid == me), "{socket:?}");
    stack.set_owners(false);
    let socket = ours(&mut stack);
    assert!(socket.users.is_empty(), "{socket:?}");
    assert!(!socket.owner_pending && !socket.owner_denied, "{socket:?}");
    stack.set_owners(true);
    let socket = named(&mut stack);
    assert!(socket.users.iter().any(|u| u.pid == me), "{socket:?}");
    drop(listener);
}
