//! What limited a sending connection, as the kernel accounts it
//! (tcp_info's busy, rwnd_limited, sndbuf_limited, delivery rate,
//! app_limited, minrtt, notsent, snd_wnd): netlens' `snapshot --json`
//! against `ss -ti` read just before and just after it, for senders made
//! the way real ones get there: a receiver that reads slowly through a
//! small buffer (the sender waits on its window), and a sender whose
//! application writes less than the path carries (application-limited),
//! each at two rates.

use crate::common::socket_findings::wait_ready;
use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

/// A receiver on IP_B:`port` with a `rcvbuf`-byte SO_RCVBUF that reads
/// `chunk` bytes every `pause_ms`, for at most 20 s.
fn slow_reader(ns: &str, port: u16, rcvbuf: u32, chunk: u32, pause_ms: u32) -> ChildGuard {
    python_in(
        ns,
        &format!(
            "import socket, time\n\
             s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
             s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, {rcvbuf})\n\
             s.bind(('{IP_B}', {port})); s.listen(1); print('ready', flush=True)\n\
             c, _ = s.accept(); end = time.time() + 20\n\
             while time.time() < end:\n\
             \x20   if not c.recv({chunk}): break\n\
             \x20   time.sleep({pause_ms} / 1000)\n"
        ),
    )
}

/// A sender from IP_A to IP_B:`port` that writes `chunk` bytes every
/// `pause_ms` (0: as fast as the socket takes them), for at most 20 s.
fn writer(ns: &str, port: u16, chunk: u32, pause_ms: u32) -> ChildGuard {
    python_in(
        ns,
        &format!(
            "import socket, time\n\
             c = socket.create_connection(('{IP_B}', {port})); print('ready', flush=True)\n\
             data = b'x' * {chunk}; end = time.time() + 20\n\
             while time.time() < end:\n\
             \x20   c.sendall(data)\n\
             \x20   if {pause_ms}: time.sleep({pause_ms} / 1000)\n"
        ),
    )
}

/// A receiver that reads whatever comes, at once, for at most 20 s.
pub(super) fn fast_reader(ns: &str, port: u16) -> ChildGuard {
    python_in(
        ns,
        &format!(
            "import socket, time\n\
             s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
             s.bind(('{IP_B}', {port})); s.listen(1); print('ready', flush=True)\n\
             c, _ = s.accept(); end = time.time() + 20\n\
             while time.time() < end and c.recv(65536): pass\n"
        ),
    )
}

/// What `ss -tinH` prints of the sender's socket towards `port`.
pub(super) fn ss_text(ns: &str, port: u16) -> String {
    let out = ns_exec(ns, &["ss", "-tinH", "dst", &format!("{IP_B}:{port}")]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `ss -tinH` of the sender's socket towards `port`: its tcp_info words
/// ("busy:1234ms" -> busy = "1234ms", "app_limited" -> app_limited = "",
/// "delivery_rate 12bps" -> delivery_rate = "12bps").
pub(super) fn ss_info(ns: &str, port: u16) -> HashMap<String, String> {
    let text = ss_text(ns, port);
    let mut words = HashMap::new();
    let mut tokens = text.split_whitespace().skip(5).peekable();
    while let Some(token) = tokens.next() {
        match token.split_once(':') {
            Some((key, value)) => {
                words.insert(key.to_string(), value.to_string());
            }
            None => {
                // "delivery_rate 12bps", "send 1bps", "pacing_rate 2bps"
                // take a value; "app_limited" stands alone.
                let value = match tokens.peek() {
                    Some(next) if next.ends_with("bps") => tokens.next().unwrap().to_string(),
                    _ => String::new(),
                };
                words.insert(token.to_string(), value);
            }
        }
    }
    assert!(
        words.contains_key("busy"),
        "ss printed no busy time: {text}"
    );
    words
}

/// Waits (up to 20 s) until the sender's socket towards `port` has busy
/// time. The kernel counts it in jiffies (4 ms at HZ=250): a writer whose
/// every write is acked within the jiffy it was sent in (1 kB on a veth,
/// ~100 us) has none until one crosses a tick, which the first second
/// need not hold.
fn wait_busy(ns: &str, port: u16) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let text = ss_text(ns, port);
        if text.contains(" busy:") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no busy time in 20 s: {text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// "1234ms" or "1234ms(78.1%)" -> (1234, Some(78.1)).
fn ms_and_share(value: &str) -> (f64, Option<f64>) {
    let (ms, share) = match value.split_once('(') {
        Some((ms, share)) => (ms, share.trim_end_matches("%)").parse().ok()),
        None => (value, None),
    };
    (ms.trim_end_matches("ms").parse().unwrap(), share)
}

/// The sender's socket in netlens' one-sample snapshot of `ns`.
pub(super) fn netlens_sender(ns: &str, port: u16) -> Value {
    let samples = snapshot(&["--netns", ns, "--no-capture", "--section", "sockets"]);
    let peer = format!("{IP_B}:{port}");
    let sockets = samples[0]["sockets"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    sockets
        .into_iter()
        .find(|s| s["peer"] == peer.as_str())
        .unwrap_or_else(|| panic!("no socket to {peer} in netlens' snapshot"))
}

/// netlens' limits of the sender to `port`, with ss's just before and
/// just after.
fn limits_beside_ss(
    ns: &str,
    port: u16,
) -> (Value, HashMap<String, String>, HashMap<String, String>) {
    let before = ss_info(ns, port);
    let socket = netlens_sender(ns, port);
    let after = ss_info(ns, port);
    let limits = socket["limits"].clone();
    assert!(limits.is_object(), "no limits for a sender: {socket}");
    (limits, before, after)
}

/// `ours` lies between ss's `before` and `after` (cumulative counters),
/// allowing for ss's rounding down to whole ms.
pub(super) fn between(what: &str, ours: f64, before: f64, after: f64) {
    assert!(
        before - 1.0 <= ours && ours <= after + 1.0,
        "{what}: netlens {ours} not between ss's {before} and {after}"
    );
}

#[test]
fn a_slow_reader_limits_its_sender_by_window_as_ss_counts_it() {
    if crate::common::need_root(&["ip", "ss", "python3"]) {
        return;
    }
    let pair = VethPair::new("nltl");
    let (a, b) = (pair.a.name.clone(), pair.b.name.clone());
    // Two readers: one reads 8 kB every 20 ms through an 8 kB buffer, the
    // other 4 kB every 50 ms through a 4 kB one.
    for (port, rcvbuf, chunk, pause_ms) in [(7301, 8192, 8192, 20), (7302, 4096, 4096, 50)] {
        let mut reader = slow_reader(&b, port, rcvbuf, chunk, pause_ms);
        wait_ready(&mut reader);
        let mut sender = writer(&a, port, 65536, 0);
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(1500));
        let (limits, before, after) = limits_beside_ss(&a, port);
        eprintln!("reader {port}: netlens {limits}; ss {before:?}");
        let busy = limits["busy_ms"].as_f64().unwrap();
        between(
            "busy_ms",
            busy,
            ms_and_share(&before["busy"]).0,
            ms_and_share(&after["busy"]).0,
        );
        let (rwnd_before, share_before) = ms_and_share(&before["rwnd_limited"]);
        let (rwnd_after, share_after) = ms_and_share(&after["rwnd_limited"]);
        let rwnd = limits["rwnd_limited_ms"].as_f64().unwrap();
        between("rwnd_limited_ms", rwnd, rwnd_before, rwnd_after);
        let pct = limits["rwnd_limited_pct"].as_f64().unwrap();
        let (low, high) = (share_before.unwrap(), share_after.unwrap());
        // A share of cumulative times: it drifts slowly between the reads.
        assert!(
            low.min(high) - 5.0 <= pct && pct <= low.max(high) + 5.0,
            "rwnd_limited_pct {pct} vs ss {low}..{high}"
        );
        // The reader sets the pace: most of the busy time waits on its window.
        assert!(pct > 50.0, "a slow reader's sender was rwnd-limited {pct}%");
        assert_eq!(limits["app_limited"], false, "{limits}");
        // The window it waits on is the reader's buffer (SO_RCVBUF, which
        // the kernel doubles), never more.
        let window = limits["snd_wnd"].as_u64().unwrap();
        assert!(window <= 2 * u64::from(rcvbuf) + 1024, "snd_wnd {window}");
        let min_rtt: f64 = after["minrtt"].parse().unwrap();
        assert!(
            (limits["min_rtt_ms"].as_f64().unwrap() - min_rtt).abs() < 0.01,
            "minrtt: netlens {} vs ss {min_rtt}",
            limits["min_rtt_ms"]
        );
        // The connection catalogue names it: one finding for the process
        // and the subnet it sends to, with the cap and the setting.
        let found = conn_findings(&a);
        let rwnd: Vec<&Value> = found
            .iter()
            .filter(|f| f["id"] == "conn:rwnd-limited")
            .collect();
        assert_eq!(rwnd.len(), 1, "{found:?}");
        let summary = rwnd[0]["summary"].as_str().unwrap();
        eprintln!("reader {port}: {summary}");
        let who = format!(
            "PID {} (python3) -> {}: 1 connection",
            sender.0.id(),
            subnet_of_b()
        );
        assert!(summary.starts_with(&who), "{summary}");
        assert!(summary.contains("% of the busy time (window "), "{summary}");
        // The receiver is in another namespace: its tcp_rmem is not this
        // one's, so no value is named.
        let hint = rwnd[0]["hint"].as_str().unwrap();
        assert!(
            hint.contains("net.ipv4.tcp_rmem's maximum)") && !hint.contains(", here "),
            "{hint}"
        );
        assert_eq!(
            rwnd[0]["evidence"]["row"],
            format!("pid:{} dst:{} state:estab", sender.0.id(), subnet_of_b()).as_str()
        );
    }
}

/// The setting behind a window: a receiver that keeps the default buffer
/// (no SO_RCVBUF) gets at most net.ipv4.tcp_rmem's maximum. Sender and
/// receiver in one namespace, so the receiver's setting is the one netlens
/// reads; the test sets it to two values and the finding names each, with
/// the receiving process, as `sysctl` reads it back.
#[test]
fn the_receivers_tcp_rmem_is_named_with_the_value_the_test_set() {
    if crate::common::need_root(&["ip", "ss", "python3", "sysctl"]) {
        return;
    }
    let pair = VethPair::new("nltr");
    let b = pair.b.name.clone();
    // Sender and receiver on one host: their packets go through lo.
    pair.b.ip(&["link", "set", "lo", "up"]);
    for (port, rmem) in [(7311, "4096 8192 16384"), (7312, "4096 16384 49152")] {
        pair.b.sysctl("net.ipv4.tcp_rmem", rmem);
        let read_back = ns_exec(&b, &["sysctl", "-n", "net.ipv4.tcp_rmem"]);
        let read_back = String::from_utf8_lossy(&read_back.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(read_back, rmem);
        // 4 kB every 20 ms through the default buffer, from the same
        // namespace's writer.
        let mut reader = python_in(
            &b,
            &format!(
                "import socket, time\n\
                 s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
                 s.bind(('{IP_B}', {port})); s.listen(1); print('ready', flush=True)\n\
                 c, _ = s.accept(); end = time.time() + 20\n\
                 while time.time() < end:\n\
                 \x20   if not c.recv(4096): break\n\
                 \x20   time.sleep(0.02)\n"
            ),
        );
        wait_ready(&mut reader);
        let mut sender = writer(&b, port, 65536, 0);
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(1500));
        let found = conn_findings(&b);
        let rwnd: Vec<&Value> = found
            .iter()
            .filter(|f| f["id"] == "conn:rwnd-limited")
            .collect();
        assert_eq!(rwnd.len(), 1, "{found:?}");
        let hint = rwnd[0]["hint"].as_str().unwrap();
        eprintln!("tcp_rmem {rmem}: {hint}");
        assert!(
            hint.contains(&format!("the receiver, PID {} (python3),", reader.0.id())),
            "{hint}"
        );
        assert!(
            hint.contains(&format!("net.ipv4.tcp_rmem's maximum, here {read_back})")),
            "{hint}"
        );
    }
}

/// IP_B's /24, as the connection findings name a destination.
pub(super) fn subnet_of_b() -> String {
    let [a, b, c, _] = IP_B.octets();
    format!("{a}.{b}.{c}.0/24")
}

/// The connection catalogue's findings (`conn:*`) in a snapshot of `ns`.
pub(super) fn conn_findings(ns: &str) -> Vec<Value> {
    let samples = snapshot(&["--netns", ns, "--no-capture", "--section", "findings"]);
    samples[0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f["id"].as_str().is_some_and(|id| id.starts_with("conn:")))
        .collect()
}

#[test]
fn an_application_that_writes_little_is_app_limited_as_ss_says() {
    if crate::common::need_root(&["ip", "ss", "python3"]) {
        return;
    }
    let pair = VethPair::new("nlta");
    let (a, b) = (pair.a.name.clone(), pair.b.name.clone());
    // 1 kB every 20 ms, then 8 kB every 5 ms: both far below what a veth
    // carries, so the application, not the path, sets the pace.
    for (port, chunk, pause_ms) in [(7311, 1024, 20), (7312, 8192, 5)] {
        let mut reader = fast_reader(&b, port);
        wait_ready(&mut reader);
        let mut sender = writer(&a, port, chunk, pause_ms);
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(1000));
        wait_busy(&a, port);
        let (limits, before, after) = limits_beside_ss(&a, port);
        eprintln!("writer {port}: netlens {limits}; ss {before:?}");
        assert!(
            before.contains_key("app_limited") && after.contains_key("app_limited"),
            "ss did not call it app_limited: {after:?}"
        );
        assert_eq!(limits["app_limited"], true, "{limits}");
        assert!(
            limits["rwnd_limited_pct"].as_f64().unwrap() < 5.0,
            "{limits}"
        );
        assert!(
            limits["sndbuf_limited_pct"].as_f64().unwrap() < 5.0,
            "{limits}"
        );
        assert_eq!(limits["notsent_bytes"], 0, "{limits}");
        let busy = limits["busy_ms"].as_f64().unwrap();
        between(
            "busy_ms",
            busy,
            ms_and_share(&before["busy"]).0,
            ms_and_share(&after["busy"]).0,
        );
        // Nothing blames the network for it.
        let found = conn_findings(&a);
        assert!(
            found.iter().all(|f| f["severity"] == "info"),
            "an application-limited sender raised {found:?}"
        );
    }
}

/// A cubic sender (it fills a queue where bbr would pace below it) from
/// IP_A to IP_B:`port` that runs `setup` on its socket `c` before
/// connecting, then writes as fast as the socket takes, for at most 20 s.
pub(super) fn cubic_writer(ns: &str, port: u16, setup: &str) -> ChildGuard {
    python_in(
        ns,
        &format!(
            "import socket, time\n\
             c = socket.socket()\n\
             c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b'cubic')\n\
             {setup}\n\
             c.connect(('{IP_B}', {port})); print('ready', flush=True)\n\
             data = b'x' * 65536; end = time.time() + 20\n\
             while time.time() < end: c.sendall(data)\n"
        ),
    )
}

/// A token bucket at `rate` on DEV_A's egress in `ns`, replacing its
/// root qdisc.
pub(super) fn shape(ns: &str, rate: &str, burst: &str, latency: &str) {
    let tbf = [
        "tc", "qdisc", "replace", "dev", DEV_A, "root", "tbf", "rate", rate,
    ];
    let out = ns_exec(
        ns,
        &[&tbf[..], &["burst", burst, "latency", latency]].concat(),
    );
    assert!(out.status.success(), "{out:?}");
}

/// (srtt, minrtt) in ms as `ss -ti` prints them for the sender to `port`.
fn ss_rtts(ns: &str, port: u16) -> (f64, f64) {
    let info = ss_info(ns, port);
    let srtt = info["rtt"].split('/').next().unwrap().parse().unwrap();
    (srtt, info["minrtt"].parse().unwrap())
}

#[test]
fn a_shaped_link_queues_in_this_hosts_qdisc_and_the_finding_says_so() {
    if crate::common::need_root(&["ip", "ss", "tc", "python3"]) {
        return;
    }
    let pair = VethPair::new("nltq");
    let (a, b) = (pair.a.name.clone(), pair.b.name.clone());
    // A token bucket on the sender's side with room for 400 ms of data,
    // at two rates: the queue, not the wire, makes most of the RTT.
    for (port, rate) in [(7321, "8mbit"), (7322, "30mbit")] {
        shape(&a, rate, "16kb", "400ms");
        let mut reader = fast_reader(&b, port);
        wait_ready(&mut reader);
        let mut sender = cubic_writer(&a, port, "");
        wait_ready(&mut sender);
        std::thread::sleep(Duration::from_millis(2000));
        let (srtt_before, min_before) = ss_rtts(&a, port);
        let found = conn_findings(&a);
        let (srtt_after, min_after) = ss_rtts(&a, port);
        eprintln!("tbf {rate}: ss rtt {srtt_before}/{srtt_after} minrtt {min_before}; {found:?}");
        // ss agrees there is a queue: most of the RTT is waiting.
        assert!(srtt_before.min(srtt_after) - min_before.max(min_after) > 20.0);
        let queued: Vec<&Value> = found
            .iter()
            .filter(|f| f["id"] == "conn:queueing")
            .collect();
        assert_eq!(queued.len(), 1, "{found:?}");
        let summary = queued[0]["summary"].as_str().unwrap();
        let who = format!(
            "PID {} (python3) -> {}: 1 connection waiting in a queue: RTT ",
            sender.0.id(),
            subnet_of_b()
        );
        assert!(summary.starts_with(&who), "{summary}");
        assert!(
            summary.contains(&format!("in this host's tbf qdisc on {DEV_A} (backlog ")),
            "{summary}"
        );
        // Its RTT lies around ss's, read before and after.
        let rtt: f64 = summary[who.len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let (low, high) = (srtt_before.min(srtt_after), srtt_before.max(srtt_after));
        assert!(
            low * 0.5 <= rtt && rtt <= high * 1.5,
            "RTT {rtt} vs ss {low}..{high}"
        );
        drop((sender, reader));
    }
}

/// What `during` returns, with `read` taken before, over and over while,
/// and after it ran: a socket's tcp_info moves within one netlens sample
/// (a writer refills its buffer in bursts, a loaded box delays a delay
/// line), so netlens's figures are checked against the range ss saw.
pub(super) fn polled_during<T, R: Send>(
    read: impl Fn() -> R + Sync,
    during: impl FnOnce() -> T,
) -> (T, Vec<R>) {
    let done = std::sync::atomic::AtomicBool::new(false);
    let first = read();
    let (result, mut polled) = std::thread::scope(|scope| {
        let poll = scope.spawn(|| {
            let mut polled = vec![first];
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                polled.push(read());
            }
            polled
        });
        let result = during();
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        (result, poll.join().unwrap())
    });
    polled.push(read());
    (result, polled)
}
