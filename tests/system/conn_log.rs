//! The connection log against real sockets: 1,000 connections between a
//! client and a server namespace, each ending one known way, must each
//! appear exactly once in `netlens conns --json` (watching the client's
//! namespace) with the right ending and the bytes both ends counted.

use crate::common;

use common::random::XorShift;
use common::{NETLENS, VethPair, abort_on_close, enter_netns};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::FromRawFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const CONNS: usize = 1000;
const PORT: u16 = 7100;
const CLOSED_PORT: u16 = 7199;
/// Client ports: connection i binds FIRST_PORT + i, so each is told apart.
const FIRST_PORT: u16 = 41000;
/// Answers no SYN: a permanent neighbour entry with a MAC nobody has.
const BLACKHOLE: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 9);
const NOBODY_MAC: &str = "02:00:c6:12:00:99";
const TIMEOUTS: usize = 8;
const SYN_TIMEOUTS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    FinClientFirst,
    FinServerFirst,
    RstReceived,
    RstSent,
    RstUnread,
    Refused,
    SynTimeout,
    Timeout,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::FinClientFirst | Kind::FinServerFirst => "fin",
            Kind::RstReceived => "rst-received",
            Kind::RstSent => "rst-sent",
            Kind::RstUnread => "rst",
            Kind::Refused => "refused",
            Kind::SynTimeout => "syn-timeout",
            Kind::Timeout => "timeout",
        }
    }

    fn code(self) -> u8 {
        self as u8
    }
}

#[derive(Debug, Clone, Copy)]
struct Plan {
    kind: Kind,
    port: u16,
    upload: usize,
    download: usize,
    /// The server address: its own for a timeout (its neighbour entry is
    /// then broken alone).
    server: Ipv4Addr,
}

/// What the client counted: bytes it read.
#[derive(Debug, Default, Clone, Copy)]
struct ClientCount {
    read: u64,
}

fn plans() -> Vec<Plan> {
    let mut rng = XorShift(0x5eed_c0ff_ee00_0028);
    (0..CONNS)
        .map(|i| {
            let kind = if i < TIMEOUTS {
                Kind::Timeout
            } else if i < TIMEOUTS + SYN_TIMEOUTS {
                Kind::SynTimeout
            } else {
                match rng.below(20) {
                    0..=5 => Kind::FinClientFirst,
                    6..=10 => Kind::FinServerFirst,
                    11..=12 => Kind::RstReceived,
                    13..=14 => Kind::RstSent,
                    15..=16 => Kind::RstUnread,
                    _ => Kind::Refused,
                }
            };
            // A third tiny (a few bytes: done in well under 5 ms), the rest
            // up to 256 KiB each way.
            let mut size = |tiny: bool| {
                if tiny {
                    rng.below(64)
                } else {
                    rng.below(256 * 1024)
                }
            };
            let tiny = i % 3 == 0;
            let upload = size(tiny);
            let mut download = size(tiny);
            if kind == Kind::RstUnread {
                download = 1 + download % 1000; // arrives whole before close
            }
            Plan {
                kind,
                port: FIRST_PORT + i as u16,
                upload,
                download,
                server: if kind == Kind::Timeout {
                    Ipv4Addr::new(198, 18, 0, 20 + i as u8)
                } else if kind == Kind::SynTimeout {
                    BLACKHOLE
                } else {
                    common::IP_B
                },
            }
        })
        .collect()
}

/// A TCP socket bound to IP_A:port, then connected (blocking).
fn connect_from(port: u16, to: SocketAddrV4) -> std::io::Result<TcpStream> {
    let bind = libc::sockaddr_in {
        sin_family: libc::AF_INET as u16,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(common::IP_A.octets()),
        },
        sin_zero: [0; 8],
    };
    let peer = libc::sockaddr_in {
        sin_family: libc::AF_INET as u16,
        sin_port: to.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(to.ip().octets()),
        },
        sin_zero: [0; 8],
    };
    let length = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: plain socket calls on a descriptor this function owns; the
    // addresses outlive the calls.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let stream = TcpStream::from_raw_fd(fd);
        let one: libc::c_int = 1;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&raw const one).cast(),
            4,
        );
        if libc::bind(fd, (&raw const bind).cast(), length) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::connect(fd, (&raw const peer).cast(), length) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stream)
    }
}

fn read_all(stream: &mut TcpStream, want: Option<usize>) -> u64 {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        if want.is_some_and(|w| total as usize >= w) {
            return total;
        }
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n as u64,
        }
    }
}

/// The server: a 9-byte header (kind, upload, download), the upload, then
/// the download and the close the kind asks for. Counts what it read per
/// client port.
fn serve(listener: TcpListener, read: Arc<Mutex<HashMap<u16, u64>>>) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { return };
        let read = Arc::clone(&read);
        thread::spawn(move || {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
            let port = stream.peer_addr().map_or(0, |a| a.port());
            let mut header = [0u8; 9];
            if stream.read_exact(&mut header).is_err() {
                return;
            }
            let upload = u32::from_be_bytes(header[1..5].try_into().unwrap()) as usize;
            let download = u32::from_be_bytes(header[5..9].try_into().unwrap()) as usize;
            // The header is data too: the client's socket counts it.
            let got = 9 + read_all(&mut stream, Some(upload));
            read.lock().unwrap().insert(port, got);
            let _ = stream.write_all(&vec![b'd'; download]);
            match header[0] {
                k if k == Kind::FinServerFirst.code() => {}
                k if k == Kind::RstReceived.code() => {
                    // Sent data must arrive before the reset: wait for the
                    // client's acknowledgement of it (its 1-byte "got it").
                    let mut ack = [0u8; 1];
                    if stream.read_exact(&mut ack).is_ok() {
                        *read.lock().unwrap().entry(port).or_default() += 1;
                    }
                    abort_on_close(&stream);
                }
                _ => {
                    let rest = read_all(&mut stream, None);
                    *read.lock().unwrap().entry(port).or_default() += rest;
                }
            }
        });
    }
}

/// One connection as planned; what the client read (the upload's 9-byte
/// header is protocol, counted by the server like the rest).
fn run_client(plan: Plan, client_ns: &str) -> ClientCount {
    let port = if plan.kind == Kind::Refused {
        CLOSED_PORT
    } else {
        PORT
    };
    let Ok(mut stream) = connect_from(plan.port, SocketAddrV4::new(plan.server, port)) else {
        return ClientCount::default();
    };
    let mut header = vec![plan.kind.code()];
    header.extend_from_slice(&(plan.upload as u32).to_be_bytes());
    header.extend_from_slice(&(plan.download as u32).to_be_bytes());
    header.extend(std::iter::repeat_n(b'u', plan.upload));
    stream.write_all(&header).unwrap();
    let mut count = ClientCount::default();
    match plan.kind {
        Kind::FinClientFirst => {
            count.read = read_all(&mut stream, Some(plan.download));
            stream.shutdown(std::net::Shutdown::Write).unwrap();
            count.read += read_all(&mut stream, None);
        }
        Kind::FinServerFirst => count.read = read_all(&mut stream, None),
        Kind::RstReceived => {
            count.read = read_all(&mut stream, Some(plan.download));
            stream.write_all(b"k").unwrap();
            count.read += read_all(&mut stream, None); // until the reset
        }
        Kind::RstSent => {
            count.read = read_all(&mut stream, Some(plan.download));
            abort_on_close(&stream);
        }
        Kind::RstUnread => {
            // Wait until the whole download sits unread, then close.
            let mut peek = vec![0u8; plan.download];
            let _ = peek_all(&stream, &mut peek);
            count.read = plan.download as u64; // received, never read
        }
        Kind::Timeout => {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
            count.read = read_all(&mut stream, Some(plan.download));
            // Break this connection's path alone: its server address's
            // neighbour entry now names a MAC nobody has.
            common::ip_n(
                client_ns,
                &[
                    "neigh",
                    "replace",
                    &plan.server.to_string(),
                    "lladdr",
                    NOBODY_MAC,
                    "dev",
                    common::DEV_A,
                    "nud",
                    "permanent",
                ],
            );
            let _ = stream.write_all(&[b'x'; 1000]);
            let _ = read_all(&mut stream, None); // until ETIMEDOUT
        }
        Kind::Refused | Kind::SynTimeout => {}
    }
    count
}

fn peek_all(stream: &TcpStream, buffer: &mut [u8]) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: recv writes at most buffer.len() bytes into buffer.
    let n = unsafe {
        libc::recv(
            stream.as_raw_fd(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
            libc::MSG_PEEK | libc::MSG_WAITALL,
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// Within 1% or one byte (the peer's FIN, see tcp_destroy::bytes_received).
fn close_enough(reported: u64, truth: u64) -> bool {
    reported.abs_diff(truth) <= (truth / 100).max(1)
}

/// The parent of `pid`, None once it has exited.
fn parent_of(pid: u64) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("PPid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn every_connection_appears_once_with_its_ending_and_bytes() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "sysctl"]) else {
        return;
    };
    let pair = VethPair::new("cl");
    let (client_ns, server_ns) = (pair.a.path(), pair.b.path());
    // Per-namespace knobs, gone with the namespace: timeouts in seconds.
    pair.a.sysctl("net.ipv4.tcp_syn_retries", "1");
    pair.a.sysctl("net.ipv4.tcp_retries2", "2");
    let neigh = |ip: Ipv4Addr, mac: &str| {
        pair.a.ip(&[
            "neigh",
            "replace",
            &ip.to_string(),
            "lladdr",
            mac,
            "dev",
            common::DEV_A,
            "nud",
            "permanent",
        ]);
    };
    neigh(BLACKHOLE, NOBODY_MAC);
    for i in 0..TIMEOUTS {
        let ip = Ipv4Addr::new(198, 18, 0, 20 + i as u8);
        pair.b
            .ip(&["addr", "add", &format!("{ip}/24"), "dev", common::DEV_B]);
        neigh(ip, common::MAC_B);
    }
    let mut netlens = common::ChildGuard(
        Command::new(NETLENS)
            .args([
                "conns",
                "--json",
                "--interval",
                "100ms",
                "--netns",
                &client_ns,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = netlens.pid() as i32;
    let mut stderr = BufReader::new(netlens.0.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("logging TCP connections"), "{line}");
    let (lines_tx, lines) = mpsc::channel::<Value>();
    let stdout = netlens.0.stdout.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(serde_json::from_str(&line).unwrap());
        }
    });

    let server_read = Arc::new(Mutex::new(HashMap::new()));
    let (ready_tx, ready) = mpsc::channel();
    let read = Arc::clone(&server_read);
    thread::spawn(move || {
        enter_netns(&server_ns).unwrap();
        let listener = TcpListener::bind(("0.0.0.0", PORT)).unwrap();
        ready_tx.send(()).unwrap();
        serve(listener, read);
    });
    ready.recv().unwrap();

    let plans = plans();
    let next = Arc::new(AtomicUsize::new(0));
    let counts = Arc::new(Mutex::new(HashMap::new()));
    let workers: Vec<_> = (0..(TIMEOUTS + SYN_TIMEOUTS + 8))
        .map(|_| {
            let (plans, next, counts, client_ns) = (
                plans.clone(),
                Arc::clone(&next),
                Arc::clone(&counts),
                client_ns.clone(),
            );
            let client_name = pair.a.name.clone();
            thread::spawn(move || {
                enter_netns(&client_ns).unwrap();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(plan) = plans.get(i) else { return };
                    let count = run_client(*plan, &client_name);
                    counts.lock().unwrap().insert(plan.port, count);
                }
            })
        })
        .collect();
    let started = Instant::now();
    for worker in workers {
        worker.join().unwrap();
    }

    // Every connection's line, or give up after a bounded wait.
    let mut seen: HashMap<u16, Vec<Value>> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.values().map(Vec::len).sum::<usize>() < CONNS && Instant::now() < deadline {
        if let Ok(value) = lines.recv_timeout(Duration::from_millis(200)) {
            let local = value["local"].as_str().unwrap().to_string();
            let port: u16 = local.rsplit(':').next().unwrap().parse().unwrap();
            seen.entry(port).or_default().push(value);
        }
    }
    // A moment more for a duplicate to show, then stop netlens (by pid).
    while let Ok(value) = lines.recv_timeout(Duration::from_millis(500)) {
        let port: u16 = value["local"]
            .as_str()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        seen.entry(port).or_default().push(value);
    }
    // SAFETY: signals the netlens child this test started.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = netlens.0.wait().unwrap();
    let mut rest = String::new();
    let _ = stderr.read_to_string(&mut rest);
    assert!(status.success(), "netlens conns: {status} {rest}");
    assert!(!rest.contains("lost"), "{rest}");

    let server_read = server_read.lock().unwrap();
    let counts = counts.lock().unwrap();
    let mut wrong = Vec::new();
    let mut endings: HashMap<&str, usize> = HashMap::new();
    let (mut exact, mut off_by_one) = (0, HashMap::<&str, usize>::new());
    for plan in &plans {
        let Some(lines) = seen.get(&plan.port) else {
            wrong.push(format!("{plan:?}: missing"));
            continue;
        };
        if lines.len() != 1 {
            wrong.push(format!("{plan:?}: {} lines: {lines:?}", lines.len()));
            continue;
        }
        let line = &lines[0];
        let ending = line["ending"].as_str().unwrap();
        *endings.entry(ending).or_default() += 1;
        if ending != plan.kind.expected() {
            wrong.push(format!("{plan:?}: ending {ending}: {line}"));
            continue;
        }
        let sent = line["bytes_sent"].as_u64();
        let received = line["bytes_received"].as_u64();
        let truth_sent = server_read.get(&plan.port).copied().unwrap_or(0);
        let truth_received = counts.get(&plan.port).map_or(0, |c| c.read);
        let ok = match plan.kind {
            Kind::Refused | Kind::SynTimeout => sent == Some(0) && received == Some(0),
            // Counters zeroed by the abort: as of the last sample that saw
            // the socket (a lower bound), or unknown.
            Kind::RstSent => {
                sent.is_none_or(|s| s <= truth_sent) && received.is_none_or(|r| r <= truth_received)
            }
            _ => {
                sent.is_some_and(|s| close_enough(s, truth_sent))
                    && received.is_some_and(|r| close_enough(r, truth_received))
            }
        };
        if sent == Some(truth_sent) && received == Some(truth_received) {
            exact += 1;
        } else if ok && !matches!(plan.kind, Kind::RstSent) {
            *off_by_one.entry(plan.kind.expected()).or_default() += 1;
        }
        if !ok {
            wrong.push(format!(
                "{plan:?}: bytes {sent:?}/{received:?}, ends counted {truth_sent}/{truth_received}: {line}"
            ));
        }
        // Ours, or a child another test of this process forked: from the
        // fork until exec closes them it holds copies of our descriptors,
        // under the forking thread's name and, for a moment, the new
        // program's (exec renames it first). Such a child is ours or gone.
        if let Some(pid) = line["pid"].as_u64() {
            let forked = line["comm"].as_str().is_some_and(|c| c.contains("::"));
            let child = parent_of(pid).is_none_or(|p| p == std::process::id());
            assert!(
                pid == u64::from(std::process::id()) || forked || child,
                "{line}"
            );
        }
    }
    eprintln!(
        "endings: {endings:?}; bytes exact {exact}, within 1% or 1 byte by ending {off_by_one:?}; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    let extra: Vec<_> = seen
        .keys()
        .filter(|p| !(FIRST_PORT..FIRST_PORT + CONNS as u16).contains(p))
        .collect();
    assert!(extra.is_empty(), "lines for ports not planned: {extra:?}");
}
