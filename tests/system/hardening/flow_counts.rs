//! Per-flow counts from the kernel (eBPF at tc clsact): a small-packet UDP
//! flood at the sender's full rate beside an iperf3 TCP transfer, so the
//! capture falls behind; the Flows table, the flow screen and `snapshot
//! --json` still give the TCP flow's bytes within header overhead of what
//! iperf3 moved. Through a router namespace (watched, forwarding) the
//! forwarded flow is counted once, not once per interface.
//!
//! Network safety: traffic only between namespaces this test creates
//! (nlf*, 198.18.40.0/24 .. 198.18.42.0/24); the flood is bounded by 3M
//! packets (its rate cap) and 5 s, the TCP transfers by 4 s, every process killed by PID.

use crate::common::tmux::Tmux;
use crate::common::{ChildGuard, NETLENS, Netns, ns_exec};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

const TCP_PORT: u16 = 5201;
const UDP_PORT: u16 = 5202;
/// Bytes on the wire over iperf3's payload: Ethernet, IP and TCP headers
/// of each (GSO) packet plus the ACKs, well under 10 %.
const HEADERS: f64 = 1.10;

/// A veth between `a` and `b`, `a_addr`/`b_addr` as "198.18.x.y/24".
fn link(a: &Netns, a_dev: &str, a_addr: &str, b: &Netns, b_dev: &str, b_addr: &str) {
    a.ip(&[
        "link", "add", a_dev, "type", "veth", "peer", "name", b_dev, "netns", &b.name,
    ]);
    a.ip(&["addr", "add", a_addr, "dev", a_dev]);
    b.ip(&["addr", "add", b_addr, "dev", b_dev]);
    for (ns, dev) in [(a, a_dev), (b, b_dev)] {
        ns.ip(&["link", "set", dev, "up"]);
        ns.ip(&["link", "set", "lo", "up"]);
    }
}

/// A command left running in `ns`, killed by PID on drop.
fn spawn_in(ns: &Netns, args: &[&str]) -> ChildGuard {
    ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &ns.name])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn in the namespace"),
    )
}

/// `iperf3 -c SERVER -t 4 -J` from `ns`: the payload bytes the server
/// received.
fn iperf3_tcp(ns: &Netns, server: &str) -> u64 {
    let out = ns_exec(
        &ns.name,
        &[
            "timeout", "15", "iperf3", "-c", server, "-p", "5201", "-t", "4", "-J",
        ],
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("iperf3 -J output");
    report["end"]["sum_received"]["bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("iperf3 reported no bytes: {report}"))
}

/// The biggest TCP flow to `server:5201` in a snapshot's last sample, and
/// the sample's capture object.
fn json_flow(stdout: &[u8], server: &str) -> (u64, Value) {
    let samples = crate::common::parse_lines(stdout);
    let last = samples.last().expect("a sample");
    let to = format!("{server}:{TCP_PORT}");
    let bytes = last["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .filter(|f| f["proto"] == "tcp" && (f["dst"] == to.as_str() || f["src"] == to.as_str()))
        .map(|f| crate::common::u64f(f, "bytes"))
        .max()
        .expect("the iperf3 flow in the JSON");
    (bytes, last["capture"].clone())
}

/// `snapshot --json` of `ns` with `more` arguments, a sample a second for
/// `count` samples, its lines written to a file so that the test can see
/// the first one come. A flow that starts after the first sample is
/// counted whole from the baseline on; one that starts before it is not.
struct FlowSnapshot {
    child: ChildGuard,
    out: std::path::PathBuf,
}

impl FlowSnapshot {
    fn start(ns: &Netns, count: u32, more: &[&str]) -> FlowSnapshot {
        static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let out = crate::common::scratch("flow-counts", &format!("{}-{run}.json", ns.name));
        let file = std::fs::File::create(&out).expect("the snapshot's output file");
        let child = ChildGuard(
            Command::new(NETLENS)
                .args(["snapshot", "--json", "--interval", "1s"])
                .args(["--count", &count.to_string(), "--netns", &ns.name])
                .args(more)
                .stdout(file)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let snapshot = FlowSnapshot { child, out };
        // On a loaded host netlens takes seconds to start: a fixed sleep
        // let the transfer's first second go by uncounted.
        crate::common::wait_until("netlens' first sample", Duration::from_secs(30), || {
            std::fs::read(&snapshot.out).is_ok_and(|b| b.contains(&b'\n'))
        });
        snapshot
    }

    /// Waits for the end; its samples' lines.
    fn finish(mut self) -> Vec<u8> {
        use std::io::Read;
        let mut stderr = String::new();
        let child = &mut self.child.0;
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert!(
            child.wait().unwrap().success(),
            "netlens snapshot: {stderr}"
        );
        let lines = std::fs::read(&self.out).expect("the snapshot's output");
        let _ = std::fs::remove_file(&self.out);
        lines
    }
}

fn within_headers(what: &str, counted: f64, payload: u64) {
    let ratio = counted / payload as f64;
    assert!(
        (1.0..HEADERS).contains(&ratio),
        "{what}: {counted} bytes counted for {payload} bytes of iperf3 payload ({ratio:.4})"
    );
}

/// "3.21 GiB" → bytes.
fn table_bytes(value: &str, unit: &str) -> Option<f64> {
    let scale = match unit {
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(value.parse::<f64>().ok()? * scale)
}

/// The first Flows row to `port` showing MiB or GiB: its bytes.
fn table_row(screen: &str, port: u16) -> Option<f64> {
    let line = screen
        .lines()
        .find(|l| l.contains(&format!(":{port} ")) && (l.contains("GiB") || l.contains("MiB")))?;
    let cells: Vec<&str> = line.split_whitespace().collect();
    let at = cells.iter().position(|c| *c == "GiB" || *c == "MiB")?;
    table_bytes(cells.get(at - 1)?, cells[at])
}

#[test]
fn a_flood_beside_a_transfer_leaves_the_transfer_counted_exactly() {
    let Some(_heavy) =
        crate::common::need_root_heavy(&["ip", "iperf3", "python3", "sysctl", "tc", "tmux"])
    else {
        return;
    };
    let Some(tmux) = Tmux::new("nlfflood") else {
        return;
    };
    let sender = Netns::new("nlf1a");
    let receiver = Netns::new("nlf1b");
    link(
        &sender,
        "nlf1a0",
        "198.18.40.1/24",
        &receiver,
        "nlf1b0",
        "198.18.40.2/24",
    );
    let dir = std::env::temp_dir().join(format!("netlens-nlf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    tmux.start(
        160,
        40,
        &dir,
        &format!("{NETLENS} --netns {} --tab flows", receiver.name),
    );
    tmux.wait("the Flows tab", Duration::from_secs(30), |s| {
        s.contains("counts: kernel").then_some(())
    });
    let _tcp = spawn_in(&receiver, &["iperf3", "-s", "-1", "-p", "5201"]);
    let udp_server = format!("198.18.40.2:{UDP_PORT}");
    let _udp = spawn_in(
        &receiver,
        &[
            NETLENS,
            "load",
            "serve",
            "--bind",
            "198.18.40.2",
            "--port",
            "5202",
            "--duration",
            "30s",
        ],
    );
    thread::sleep(Duration::from_millis(500));
    // The flood's 5 s and the transfer's 4 s, with margin.
    let snapshot = FlowSnapshot::start(&receiver, 11, &["--section", "flows"]);
    // 32-byte datagrams by sendmmsg, capped at 600 kpps for 5 s: at most
    // 3M packets, as fast as the sender goes on most machines.
    let flood = spawn_in(
        &sender,
        &[
            NETLENS,
            "load",
            "udp",
            "--to",
            &udp_server,
            "--size",
            "32",
            "-b",
            "153600k",
            "-t",
            "5s",
        ],
    );
    thread::sleep(Duration::from_millis(300));
    let payload = iperf3_tcp(&sender, "198.18.40.2");
    drop(flood);
    let stdout = snapshot.finish();
    let (bytes, capture) = json_flow(&stdout, "198.18.40.2");
    eprintln!(
        "flow_counts: iperf3 payload {payload}, kernel-counted {bytes}, capture dropped {}, counted by {}",
        capture["kernel_dropped"], capture["flow_counts"]
    );
    assert_eq!(capture["flow_counts"], "kernel", "{capture}");
    within_headers("snapshot --json", bytes as f64, payload);

    let shown = tmux.wait("the transfer's row", Duration::from_secs(15), |s| {
        table_row(s, TCP_PORT).filter(|b| *b >= payload as f64 * 0.99)
    });
    // Three significant digits in the table.
    within_headers("the Flows table", shown * 1.005, payload);
    tmux.send_keys(&["Enter"]);
    let screen = tmux.wait("the flow screen", Duration::from_secs(15), |s| {
        s.contains("kernel count").then(|| s.to_string())
    });
    let line = screen.lines().find(|l| l.contains("kernel count")).unwrap();
    let counted = line
        .split("kernel count ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .expect("the packet count");
    assert!(counted > 0, "{line}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_forwarded_flow_is_counted_once_in_the_router() {
    let Some(_heavy) =
        crate::common::need_root_heavy(&["ip", "iperf3", "python3", "sysctl", "tc", "tmux"])
    else {
        return;
    };
    let client = Netns::new("nlf2c");
    let router = Netns::new("nlf2r");
    let server = Netns::new("nlf2s");
    link(
        &client,
        "nlf2c0",
        "198.18.41.2/24",
        &router,
        "nlf2r0",
        "198.18.41.1/24",
    );
    link(
        &router,
        "nlf2r1",
        "198.18.42.1/24",
        &server,
        "nlf2s0",
        "198.18.42.2/24",
    );
    client.ip(&["route", "add", "default", "via", "198.18.41.1"]);
    server.ip(&["route", "add", "default", "via", "198.18.42.1"]);
    router.sysctl("net.ipv4.ip_forward", "1");
    let _server = spawn_in(&server, &["iperf3", "-s", "-1", "-p", "5201"]);
    thread::sleep(Duration::from_millis(500));
    // The transfer's 4 s, with margin.
    let snapshot = FlowSnapshot::start(&router, 7, &["--section", "flows"]);
    let payload = iperf3_tcp(&client, "198.18.42.2");
    let stdout = snapshot.finish();
    let (bytes, capture) = json_flow(&stdout, "198.18.42.2");
    eprintln!(
        "flow_counts router: iperf3 payload {payload}, kernel-counted {bytes}, \
         capture's own total {} (both interfaces)",
        capture["bytes"]
    );
    assert_eq!(capture["flow_counts"], "kernel", "{capture}");
    within_headers("the router's snapshot", bytes as f64, payload);
    // No clsact qdisc or filter is left behind on the router's devices.
    for dev in ["nlf2r0", "nlf2r1"] {
        let qdiscs = ns_exec(&router.name, &["tc", "qdisc", "show", "dev", dev]);
        let text = String::from_utf8_lossy(&qdiscs.stdout);
        assert!(!text.contains("clsact"), "{dev}: {text}");
    }
}

/// In the receiver: a TCP listener on :5300 that holds what it accepts and
/// a DNS responder on :53 (NOERROR, no answer), both gone after 30 s.
const CONTROL_SERVER: &str = r#"
import socket, threading, time
end = time.time() + 30
tcp = socket.socket(); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("198.18.45.2", 5300)); tcp.listen(8); tcp.settimeout(0.5)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("198.18.45.2", 53)); udp.settimeout(0.5)
held = []
def accept():
    while time.time() < end:
        try: held.append(tcp.accept()[0])
        except OSError: pass
threading.Thread(target=accept, daemon=True).start()
print("ready", flush=True)
while time.time() < end:
    try: query, peer = udp.recvfrom(512)
    except OSError: continue
    if len(query) >= 12:
        udp.sendto(query[:2] + bytes([0x81, 0x80]) + query[4:], peer)
"#;

/// From the sender: one TCP handshake to :5300 and one DNS query for
/// sampled.test to :53, answered within 2 s; prints "ok".
const CONTROL_CLIENT: &str = r#"
import socket, struct
s = socket.create_connection(("198.18.45.2", 5300), timeout=2)
q = struct.pack(">HHHHHH", 0x5a5a, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p for p in [b"sampled", b"test"]) + b"\0" + struct.pack(">HH", 1, 1)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(2)
u.sendto(q, ("198.18.45.2", 53))
answer = u.recv(512)
s.close()
print("ok" if answer[:2] == q[:2] else "bad answer", flush=True)
"#;

/// 32-byte datagrams to the receiver's :5202 for `seconds`, capped at 600
/// kpps (at most 600k packets a second of the run).
fn flood(sender: &Netns, seconds: &str) -> ChildGuard {
    spawn_in(
        sender,
        &[
            NETLENS,
            "load",
            "udp",
            "--to",
            &format!("198.18.45.2:{UDP_PORT}"),
            "--size",
            "32",
            "-b",
            "153600k",
            "-t",
            seconds,
            "--json",
        ],
    )
}

/// Waits for the flood; the packets it sent.
fn flood_sent(mut flood: ChildGuard) -> u64 {
    use std::io::Read;
    let mut out = Vec::new();
    let stdout = flood.0.stdout.as_mut().unwrap();
    stdout.read_to_end(&mut out).unwrap();
    assert!(flood.0.wait().unwrap().success(), "the generator failed");
    let last = crate::common::parse_lines(&out)
        .pop()
        .expect("the generator's summary");
    crate::common::u64f(&last, "sent_packets")
}

/// The receiver side of a sampling test: its veth's drops so far.
fn rx_dropped(receiver: &Netns) -> u64 {
    let path = "/sys/class/net/nlc1b0/statistics/rx_dropped";
    let out = ns_exec(&receiver.name, &["cat", path]);
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// The flood's flow in a sample: its packets.
fn flood_packets(sample: &Value) -> u64 {
    let to = format!("198.18.45.2:{UDP_PORT}");
    sample["flows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["proto"] == "udp" && f["dst"] == to.as_str())
        .map(|f| crate::common::u64f(f, "packets"))
        .max()
        .unwrap_or(0)
}

/// The kernel's count of the flood equals what the generator sent, less
/// what the receiving veth dropped before tc saw it; a few more are the
/// generator's exchanges with the server on the same ports.
fn counted_exactly(what: &str, counted: u64, sent: u64, dropped: u64) {
    assert!(
        counted + dropped >= sent && counted <= sent + 16,
        "{what}: {counted} packets counted, {sent} sent, {dropped} dropped at the veth"
    );
}

/// The sampling tests' pair of namespaces, one test at a time: they share
/// the namespaces' names, and two floods side by side would starve each
/// other's counts. The guard is held while the returned namespaces live.
static SAMPLING_PAIR: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn sampling_pair() -> (
    std::sync::MutexGuard<'static, ()>,
    Netns,
    Netns,
    ChildGuard,
    ChildGuard,
) {
    let turn = SAMPLING_PAIR.lock().unwrap_or_else(|e| e.into_inner());
    let sender = Netns::new("nlc1a");
    let receiver = Netns::new("nlc1b");
    link(
        &sender,
        "nlc1a0",
        "198.18.45.1/24",
        &receiver,
        "nlc1b0",
        "198.18.45.2/24",
    );
    let sink = spawn_in(
        &receiver,
        &[
            NETLENS,
            "load",
            "serve",
            "--bind",
            "198.18.45.2",
            "--port",
            "5202",
            "--duration",
            "30s",
        ],
    );
    let mut control = spawn_in(&receiver, &["python3", "-c", CONTROL_SERVER]);
    let mut ready = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(control.0.stdout.as_mut().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready.trim(), "ready");
    (turn, sender, receiver, sink, control)
}

#[test]
fn a_flood_is_sampled_and_control_packets_still_reach_the_capture() {
    let Some(_heavy) =
        crate::common::need_root_heavy(&["ip", "iperf3", "python3", "sysctl", "tc", "tmux"])
    else {
        return;
    };
    let (_turn, sender, receiver, _sink, _control) = sampling_pair();
    let sampled = FlowSnapshot::start(&receiver, 10, &["--section", "flows,dns"]);
    let whole = FlowSnapshot::start(&receiver, 10, &["--section", "flows", "--no-bpf"]);
    let dropped_before = rx_dropped(&receiver);
    let generator = flood(&sender, "6s");
    thread::sleep(Duration::from_secs(3));
    let client = ns_exec(
        &sender.name,
        &["timeout", "10", "python3", "-c", CONTROL_CLIENT],
    );
    assert_eq!(
        String::from_utf8_lossy(&client.stdout).trim(),
        "ok",
        "{client:?}"
    );
    let sent = flood_sent(generator);
    let dropped = rx_dropped(&receiver) - dropped_before;
    let samples = crate::common::parse_lines(&sampled.finish());
    let most = samples
        .iter()
        .map(|s| crate::common::u64f(&s["capture"], "sample_every"))
        .max()
        .unwrap_or(0);
    // A state is the capture's (the kernel's own flows have "-"): it saw
    // the SYN, SYN-ACK and FINs. The handshake's last ACK is a plain ACK,
    // sampled like data, so the RTT is not asked for.
    let handshake = samples
        .iter()
        .flat_map(|s| s["flows"].as_array().cloned().unwrap_or_default())
        .find(|f| f["proto"] == "tcp" && f["dst"] == "198.18.45.2:5300" && f["state"] != "-");
    let dns = samples
        .iter()
        .flat_map(|s| s["dns"]["passive"].as_array().cloned().unwrap_or_default())
        .find(|r| r["name"] == "sampled.test" && r["server"] == "198.18.45.2:53");
    let counted = flood_packets(samples.last().unwrap());
    eprintln!(
        "sampling: sent {sent}, kernel-counted {counted}, veth dropped {dropped}, \
         sampled 1 in {most} at most, handshake {handshake:?}, dns {dns:?}"
    );
    assert!(
        most > 1,
        "the capture never sampled: {:?}",
        samples.last().unwrap()["capture"]
    );
    assert!(handshake.is_some(), "the capture missed the handshake");
    assert_eq!(
        dns.expect("the capture missed the DNS query")["outcome"],
        "ok"
    );
    counted_exactly("sampled capture", counted, sent, dropped);
    let unsampled = crate::common::parse_lines(&whole.finish());
    for sample in &unsampled {
        assert_eq!(sample["capture"]["sample_every"], 1, "--no-bpf sampled");
        assert_eq!(sample["capture"]["flow_counts"], "capture");
    }
}

/// A capture stopped (SIGSTOP) for 2 s while a flood fills its ring drops
/// packets; the kernel's counts do not. A capture filter keeps every
/// packet owed to the capture, so the ring is not sampled here.
#[test]
fn a_stopped_capture_drops_and_the_kernel_counts_stay_exact() {
    let Some(_heavy) =
        crate::common::need_root_heavy(&["ip", "iperf3", "python3", "sysctl", "tc", "tmux"])
    else {
        return;
    };
    let (_turn, sender, receiver, _sink, _control) = sampling_pair();
    // 10 samples: the last must come after the flood's end, which on a
    // busy host (the generator starting late, the snapshot catching up
    // after its stop) 8 did not always leave.
    let snapshot = FlowSnapshot::start(&receiver, 10, &["--section", "flows", "--filter", "udp"]);
    let dropped_before = rx_dropped(&receiver);
    let generator = flood(&sender, "4s");
    thread::sleep(Duration::from_millis(500));
    let pid = snapshot.child.pid().to_string();
    crate::common::run("kill", &["-STOP", &pid]);
    thread::sleep(Duration::from_secs(2));
    crate::common::run("kill", &["-CONT", &pid]);
    let sent = flood_sent(generator);
    let dropped = rx_dropped(&receiver) - dropped_before;
    let samples = crate::common::parse_lines(&snapshot.finish());
    let last = samples.last().unwrap();
    let counted = flood_packets(last);
    eprintln!(
        "stopped capture: sent {sent}, kernel-counted {counted}, capture dropped {}, sampled 1 in {}",
        last["capture"]["kernel_dropped"], last["capture"]["sample_every"]
    );
    assert!(
        crate::common::u64f(&last["capture"], "kernel_dropped") > 0,
        "{}",
        last["capture"]
    );
    assert_eq!(last["capture"]["sample_every"], 1);
    assert_eq!(last["capture"]["flow_counts"], "kernel");
    counted_exactly("stopped capture", counted, sent, dropped);
}

/// A namespace with many interfaces: attaching the counting program takes
/// the kernel milliseconds per interface, so it is spread over the ticks
/// (a fifth of each) instead of holding the first sample. The number
/// counted on only grows, and reaches every interface.
#[test]
fn many_interfaces_are_attached_over_ticks_until_all_are_counted() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let ns = Netns::new("attach");
    ns.ip(&["link", "set", "lo", "up"]);
    const PAIRS: usize = 30;
    for i in 0..PAIRS {
        let (a, b) = (format!("nla{i}"), format!("nlb{i}"));
        ns.ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]);
        ns.ip(&["link", "set", &a, "up"]);
        ns.ip(&["link", "set", &b, "up"]);
    }
    let all = 2 * PAIRS as u64 + 1;
    let samples = crate::common::snapshot(&[
        "--netns",
        &ns.name,
        "--section",
        "flows",
        "--interval",
        "300ms",
        "--count",
        "40",
    ]);
    let counted: Vec<u64> = samples
        .iter()
        .map(|s| {
            s["capture"]["kernel_counts"]["interfaces"]
                .as_u64()
                .unwrap_or(0)
        })
        .collect();
    if samples[0]["capture"]["kernel_counts"]["unavailable"].is_string() {
        eprintln!("SKIP many_interfaces_are_attached_over_ticks: no eBPF here");
        return;
    }
    eprintln!("interfaces counted on, sample by sample: {counted:?}");
    assert!(
        counted.windows(2).all(|w| w[0] <= w[1]),
        "the interfaces counted on went down: {counted:?}"
    );
    assert_eq!(counted.last(), Some(&all), "{counted:?}");
}

/// Whether `netlens snapshot ARGS` in `ns` comes to hold a tc program
/// (BPF_PROG_TYPE_SCHED_CLS, the flow counter's: the others are tracing
/// programs) in its 3 s, whether attached by tcx or a clsact qdisc.
fn flow_program_while_running(ns: &Netns, args: &[&str]) -> bool {
    const SCHED_CLS: &str = "prog_type:\t3\n";
    let snapshot = ChildGuard(
        Command::new(NETLENS)
            .args(["snapshot", "--netns", &ns.name, "--json"])
            .args(["--interval", "500ms", "--count", "6"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("netlens snapshot"),
    );
    let fdinfo = format!("/proc/{}/fdinfo", snapshot.0.id());
    (0..25).any(|_| {
        thread::sleep(Duration::from_millis(100));
        std::fs::read_dir(&fdinfo)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .any(|fd| std::fs::read_to_string(fd.path()).is_ok_and(|t| t.contains(SCHED_CLS)))
    })
}

/// Without a capture nothing shows per-flow counts: the program that
/// counts them is not loaded at all (attached, it would cost every packet
/// on every interface), while with the capture it is.
#[test]
fn without_a_capture_no_flow_program_is_loaded() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let ns = Netns::new("nocapflow");
    ns.ip(&["link", "set", "lo", "up"]);
    if !flow_program_while_running(&ns, &[]) {
        eprintln!("SKIP without_a_capture_no_flow_program_is_loaded: no eBPF here");
        return;
    }
    assert!(
        !flow_program_while_running(&ns, &["--no-capture"]),
        "--no-capture loaded the flow-count program"
    );
}
