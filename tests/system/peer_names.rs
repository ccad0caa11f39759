//! Peers by name (issue 27): reverse names from a PTR server this test runs
//! on loopback, for sockets to 198.18.77.x in a namespace this test
//! creates, in the real binary in tmux at 80x24. Without N no query reaches
//! the server; with N the named peer shows its name (and its port's service
//! name) while the peer whose lookup the server never answers keeps its
//! address, and the UI answers keys all the while. snapshot --resolve adds
//! the same names to its JSON, and `host:NAME` (`--where`, the tabs' `/`)
//! matches them in sockets, processes and flows.

use crate::common;

use common::{ChildGuard, NETLENS, Netns};
use hickory_proto::op::{Message, MessageType};
use hickory_proto::rr::rdata::PTR;
use hickory_proto::rr::{Name, RData, Record, RecordType};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const NAMED: &str = "198.18.77.9";
const STALLED: &str = "198.18.77.10";
const NAME: &str = "peer-nine.test";
const MAX_RUN: Duration = Duration::from_secs(90);

/// The name a PTR query for the IPv4 `address` asks (its octets reversed
/// under in-addr.arpa), written out here rather than taken from netlens.
fn ptr(address: &str) -> String {
    let octets: Vec<&str> = address.split('.').rev().collect();
    format!("{}.in-addr.arpa", octets.join("."))
}

/// A PTR server on 127.0.0.1: NAMED's PTR name answered with NAME, STALLED's
/// never answered, others NXDOMAIN; every query counted.
struct PtrServer {
    addr: SocketAddr,
    queries: Arc<AtomicU64>,
    names: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PtrServer {
    fn start() -> PtrServer {
        Self::answering(vec![(ptr(NAMED), NAME.into())])
    }

    /// Answers each (PTR name, name) of `answers`; STALLED's never.
    fn answering(answers: Vec<(String, String)>) -> PtrServer {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let addr = socket.local_addr().unwrap();
        let queries = Arc::new(AtomicU64::new(0));
        let names = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (q, n, s) = (queries.clone(), names.clone(), stop.clone());
        let thread = std::thread::spawn(move || serve(&socket, &q, &n, (&s, &answers)));
        PtrServer {
            addr,
            queries,
            names,
            stop,
            thread: Some(thread),
        }
    }

    fn queries(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }
}

impl Drop for PtrServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(
    socket: &UdpSocket,
    queries: &AtomicU64,
    names: &Mutex<Vec<String>>,
    (stop, answers): (&AtomicBool, &[(String, String)]),
) {
    let started = Instant::now();
    let mut buffer = [0u8; 1500];
    while !stop.load(Ordering::Relaxed) && started.elapsed() < MAX_RUN {
        let Ok((n, from)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        queries.fetch_add(1, Ordering::Relaxed);
        let Ok(query) = Message::from_vec(&buffer[..n]) else {
            continue;
        };
        let Some(question) = query.queries.first().cloned() else {
            continue;
        };
        let name = question.name().to_ascii().trim_end_matches('.').to_string();
        names.lock().unwrap().push(name.clone());
        if name == ptr(STALLED) {
            continue; // the stall
        }
        let mut reply = Message::response(query.metadata.id, query.metadata.op_code);
        reply.metadata.message_type = MessageType::Response;
        reply.add_query(question.clone());
        let answer = answers.iter().find(|(ptr, _)| *ptr == name);
        if let Some((_, answer)) = answer.filter(|_| question.query_type() == RecordType::PTR) {
            reply.add_answer(Record::from_rdata(
                question.name().clone(),
                60,
                RData::PTR(PTR(Name::from_ascii(format!("{answer}.")).unwrap())),
            ));
        } else {
            reply.metadata.response_code = hickory_proto::op::ResponseCode::NXDomain;
        }
        if let Ok(bytes) = reply.to_vec() {
            let _ = socket.send_to(&bytes, from);
        }
    }
}

/// The namespace with 198.18.77.1/24 on its loopback and a process holding
/// UDP sockets connected to NAMED:443 and STALLED:40 (at most 90 s).
fn namespace_with_peers(tag: &str) -> (Netns, ChildGuard) {
    let ns = Netns::new(tag);
    ns.ip(&["link", "set", "lo", "up"]);
    // On lo: its /24 routes the peers' addresses there.
    ns.ip(&["addr", "add", "198.18.77.1/24", "dev", "lo"]);
    let script = format!(
        "import socket,time\n\
         a=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); a.connect(('{NAMED}',443))\n\
         b=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); b.connect(('{STALLED}',40))\n\
         time.sleep(90)\n"
    );
    let holder = ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &ns.name, "python3", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn the socket holder"),
    );
    (ns, holder)
}

#[test]
fn n_names_peers_from_the_server_and_a_stalled_lookup_never_blocks() {
    if crate::common::need_root(&["ip", "getent", "python3", "tmux"]) {
        return;
    }
    let Some(tmux) = common::tmux::Tmux::new("peers-names") else {
        return;
    };
    let server = PtrServer::start();
    let (ns, _holder) = namespace_with_peers("peers-n");
    let command = format!(
        "env TZ=UTC NO_COLOR=1 TERM=tmux-256color {NETLENS} --config /dev/null --no-capture \
         --netns {} --tab sockets --dns-server {}",
        ns.name, server.addr
    );
    tmux.session("n", 80, 24, &command);
    tmux.wait_for("n", "both peers as addresses", |lines| {
        let text = lines.join("\n");
        text.contains(&format!("{NAMED}:443")) && text.contains(&format!("{STALLED}:40"))
    });
    // Off: a few samples go by and the server hears nothing.
    let before = Instant::now();
    tmux.wait_for("n", "three more samples", |_| {
        before.elapsed() > Duration::from_secs(3)
    });
    assert_eq!(server.queries(), 0, "a query was sent without N");

    tmux.keys("n", &["N"]);
    let https = service_name(443, "udp").unwrap_or_else(|| "443".into());
    // The 17-column Peer cell cuts the name before the port, which stays.
    let screen = tmux.wait_for("n", "the named peer", |lines| {
        lines
            .iter()
            .any(|l| l.contains("peer-nine") && l.contains(&format!(":{https} ")))
    });
    let text = screen.join("\n");
    // The stalled lookup: the address shows, and the server was asked.
    assert!(text.contains(&format!("{STALLED}:40")), "{text}");
    let asked = server.names.lock().unwrap().clone();
    assert!(asked.iter().any(|n| *n == ptr(NAMED)), "{asked:?}");
    assert!(asked.iter().any(|n| *n == ptr(STALLED)), "{asked:?}");
    // Still answering keys while a lookup hangs: help opens and closes.
    tmux.keys("n", &["?"]);
    tmux.wait_for("n", "the help screen", |lines| {
        lines.iter().any(|l| l.contains("names for peers, ports"))
    });
    tmux.keys("n", &["Escape"]);
    tmux.wait_for("n", "the table again", |lines| {
        lines.iter().any(|l| l.contains("peer-nine"))
    });
    // Off again: numbers, and the cache asks nothing more.
    tmux.keys("n", &["N"]);
    tmux.wait_for("n", "addresses again", |lines| {
        lines.iter().any(|l| l.contains(&format!("{NAMED}:443")))
            && !lines.iter().any(|l| l.contains("peer-nine"))
    });
    let after_off = server.queries();
    let quiet = Instant::now();
    tmux.wait_for("n", "two more samples", |_| {
        quiet.elapsed() > Duration::from_secs(2)
    });
    assert_eq!(server.queries(), after_off, "queries after N off");
    // Each address was asked once (the rate cap and the cache: no repeat
    // while pending or known within the timeout's negative TTL).
    let asked = server.names.lock().unwrap().clone();
    assert_eq!(
        asked.iter().filter(|n| **n == ptr(NAMED)).count(),
        1,
        "{asked:?}"
    );
    tmux.keys("n", &["q"]);
}

#[test]
fn snapshot_resolve_adds_the_names_it_found() {
    if crate::common::need_root(&["ip", "getent", "python3", "tmux"]) {
        return;
    }
    let server = PtrServer::start();
    let (ns, _holder) = namespace_with_peers("peers-s");
    // Without --resolve: no names, no query.
    let plain = common::snapshot(&[
        "--netns",
        &ns.name,
        "--no-capture",
        "--section",
        "sockets",
        "--interval",
        "200ms",
        "--dns-server",
        &server.addr.to_string(),
    ]);
    assert!(plain[0].get("names").is_none());
    assert_eq!(server.queries(), 0);
    let named = common::snapshot(&[
        "--netns",
        &ns.name,
        "--no-capture",
        "--section",
        "sockets",
        "--interval",
        "200ms",
        "--resolve",
        "--dns-server",
        &server.addr.to_string(),
    ]);
    let names = &named[0]["names"];
    assert_eq!(names[NAMED], NAME, "{names}");
    // The stalled one timed out: left out, not waited for forever.
    assert!(names.get(STALLED).is_none(), "{names}");
    let asked = server.names.lock().unwrap().clone();
    assert!(asked.iter().any(|n| *n == ptr(STALLED)), "{asked:?}");
}

/// `host:NAME` by reverse name (--resolve): in a namespace of its own
/// (198.18.233.1/24 on its loopback), a process sends paced UDP to two
/// peers the PTR server names differently; `snapshot --where
/// host:nsf-nine.test` keeps exactly the socket, the process and the
/// captured flow to the first, and nothing without --resolve (the name
/// is only known from the server).
#[test]
fn host_name_filter_matches_reverse_names() {
    if crate::common::need_root(&["ip", "getent", "python3", "tmux"]) {
        return;
    }
    const NINE: &str = "198.18.233.9";
    const TEN: &str = "198.18.233.10";
    let server = PtrServer::answering(vec![
        (ptr(NINE), "nsf-nine.test".into()),
        (ptr(TEN), "nsf-ten.test".into()),
    ]);
    let ns = Netns::new("nsf-names");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.233.1/24", "dev", "lo"]);
    // Bounded: 300 datagrams to each at 5 a second (60 s), then it exits.
    let script = format!(
        "import socket,time\n\
         a=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); a.connect(('{NINE}',443))\n\
         b=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); b.connect(('{TEN}',40))\n\
         for i in range(300):\n\
         \tfor s in (a,b):\n\
         \t\ttry: s.send(b'x'*100)\n\
         \t\texcept OSError: pass\n\
         \ttime.sleep(0.2)\n"
    );
    let holder = ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &ns.name, "python3", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn the sender"),
    );
    let pid = u64::from(holder.0.id());
    let dns = server.addr.to_string();
    let run = |resolve: bool| {
        let mut args = vec!["--netns", &ns.name, "--no-bpf", "--interval", "1s"];
        args.extend(["--section", "sockets", "--section", "processes"]);
        args.extend(["--section", "flows", "--dns-server", &dns]);
        args.extend(["--where", "host:nsf-nine.test"]);
        if resolve {
            args.push("--resolve");
        }
        common::snapshot(&args).pop().unwrap()
    };
    let list = |sample: &serde_json::Value, key: &str| sample[key].as_array().cloned().unwrap();
    let plain = run(false);
    for key in ["sockets", "processes", "flows"] {
        assert!(list(&plain, key).is_empty(), "{key} without names: {plain}");
    }
    let named = run(true);
    assert_eq!(named["names"][NINE], "nsf-nine.test", "{named}");
    assert_eq!(named["names"][TEN], "nsf-ten.test", "{named}");
    let sockets = list(&named, "sockets");
    assert_eq!(sockets.len(), 1, "{sockets:?}");
    assert_eq!(sockets[0]["peer"], format!("{NINE}:443"));
    let processes = list(&named, "processes");
    assert_eq!(processes.len(), 1, "{processes:?}");
    assert_eq!(processes[0]["pid"], pid);
    let flows = list(&named, "flows");
    assert!(!flows.is_empty(), "no flow kept: {named}");
    for flow in &flows {
        let ends = [&flow["src"], &flow["dst"]];
        assert!(
            ends.iter().any(|e| e.as_str().unwrap().starts_with(NINE)),
            "{flow}"
        );
        assert!(
            !ends.iter().any(|e| e.as_str().unwrap().starts_with(TEN)),
            "{flow}"
        );
    }
}

/// getservbyport's answer, independent of netlens' parser.
fn service_name(port: u16, proto: &str) -> Option<String> {
    let out = Command::new("getent")
        .args(["services", &format!("{port}/{proto}")])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().next().map(str::to_string)
}
