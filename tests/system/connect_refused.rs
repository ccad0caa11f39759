//! connect-refused against the kernel: a python3 client in one namespace
//! connects to a port nothing listens on in another (the server listens on
//! 127.0.0.1 only: "listens on another address"), at two rates. The
//! server's namespace must name the refusals it sends (Tcp OutRsts), the
//! client's the connects that failed (Tcp AttemptFails), each rate agreeing
//! with the counters in the same JSON, those counters bracketed by nstat
//! read just before and after, and the client's own count of
//! ECONNREFUSED. Severity follows the rate. With the capture on (the
//! default), both sides' summaries name the refusing address:port and the
//! peer refused, at the rate the client's own log of ECONNREFUSED gives
//! over the same interval.
//!
//! Network safety: traffic only between the two namespaces of this test
//! (198.18.0.1 -> 198.18.0.2); the client is bounded (rate * 8 connects,
//! 8 s); namespaces and helpers are removed by their guards.

use crate::common;
use crate::common::python_in;

use common::{IP_A, IP_B, VethPair, nstat};
use serde_json::Value;
use std::time::Duration;

fn snapshot_of(ns: &str) -> std::process::Child {
    common::spawn_snapshot(&[
        "--section",
        "findings,tcp",
        "--count",
        "3",
        "--interval",
        "1s",
        "--netns",
        ns,
    ])
}

fn counter(sample: &Value, name: &str) -> u64 {
    sample["tcp"]["counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no {name} in {}", sample["tcp"]["counters"]))
}

/// The finding in the last sample; its rate (the number before `marker`)
/// against `counter`'s rise over the last interval of the same JSON, and
/// the JSON's counters between nstat's `before` and `after`.
/// The last sample whose connect-refused holds over its own interval
/// (calm 0: a finding that stopped holding keeps its summary a while), not
/// the first, and that finding.
fn fresh(samples: &[Value]) -> (usize, &Value) {
    (1..samples.len())
        .rev()
        .find_map(|i| {
            let findings = samples[i]["findings"].as_array().unwrap();
            let found = findings
                .iter()
                .find(|f| f["id"] == "connect-refused" && f["calm"] == 0)?;
            Some((i, found))
        })
        .unwrap_or_else(|| panic!("no connect-refused: {}", samples.last().unwrap()))
}

/// `severity` None: as the rate makes it (crit from 100/s), for a client
/// whose pace a loaded host may slow.
fn check(
    samples: &[Value],
    marker: &str,
    name: &str,
    nstat: (u64, u64),
    severity: Option<&str>,
) -> f64 {
    let (at, finding) = fresh(samples);
    let last = &samples[at];
    let summary = finding["summary"].as_str().unwrap();
    eprintln!("{summary}");
    let head = &summary[..summary
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in {summary}"))];
    let per_s: f64 = head.rsplit(' ').next().unwrap().parse().unwrap();
    let by_rate = if per_s >= 100.0 { "crit" } else { "warn" };
    assert_eq!(
        finding["severity"],
        severity.unwrap_or(by_rate),
        "{summary}"
    );
    let before = &samples[at - 1];
    let seconds = last["t"].as_f64().unwrap() - before["t"].as_f64().unwrap();
    let rise = counter(last, name) - counter(before, name);
    let expected = rise as f64 / seconds;
    // Nothing else in the namespace aborts connections: the rate is the
    // counter's.
    assert!(
        (per_s - expected).abs() <= expected * 0.05 + 1.0,
        "{per_s}/s in the finding, {name} +{rise} in {seconds:.3} s"
    );
    let (first, latest) = (
        counter(&samples[0], name),
        counter(samples.last().unwrap(), name),
    );
    assert!(
        nstat.0 <= first && first <= latest && latest <= nstat.1,
        "nstat {name} {} .. {}, netlens {first} .. {latest}",
        nstat.0,
        nstat.1
    );
    assert_eq!(
        finding["evidence"],
        serde_json::json!({"tab": "tcp", "row": name})
    );
    per_s
}

/// The client's refused count at wall-clock time `t`: its last log line
/// at or before `t`.
fn refused_by(log: &[(f64, u64)], t: f64) -> u64 {
    log.iter()
        .take_while(|(at, _)| *at <= t)
        .last()
        .map_or(0, |(_, n)| *n)
}

/// The last sample's connect-refused summary starts "refused N/s: " and
/// names `port_name` ("198.18.0.2:8081 refused 198.18.0.1 (") at a rate
/// within a few of the client's own count of ECONNREFUSED over the same
/// interval.
fn named_at_client_rate(samples: &[Value], port_name: &str, log: &[(f64, u64)]) {
    let last = samples.last().unwrap();
    let before = &samples[samples.len() - 2];
    let summary = connect_refused_summary(last);
    assert!(summary.starts_with("refused "), "{summary}");
    let at = summary
        .find(port_name)
        .unwrap_or_else(|| panic!("no {port_name:?} in {summary}"));
    let rest = &summary[at + port_name.len()..];
    let per_s: f64 = rest[..rest.find("/s)").unwrap()].parse().unwrap();
    let (t0, t1) = (before["t"].as_f64().unwrap(), last["t"].as_f64().unwrap());
    let client = (refused_by(log, t1) - refused_by(log, t0)) as f64 / (t1 - t0);
    eprintln!("capture: {per_s}/s; client ECONNREFUSED {client:.1}/s");
    assert!(
        (per_s - client).abs() <= client * 0.05 + 2.0,
        "capture {per_s}/s, client {client:.1}/s: {summary}"
    );
}

/// The connect-refused finding's summary in `sample`.
fn connect_refused_summary(sample: &Value) -> &str {
    sample["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "connect-refused")
        .unwrap_or_else(|| panic!("no connect-refused: {sample}"))["summary"]
        .as_str()
        .unwrap()
}

fn refused_at(pair: &VethPair, port: u16, rate: u32, severity: &str) {
    let (client_ns, server_ns) = (&pair.a.name, &pair.b.name);
    // The service listens, but on loopback only.
    let mut server = python_in(
        server_ns,
        &format!(
            "import socket,time\n\
             s=socket.socket(); s.bind(('127.0.0.1',{port})); s.listen(16)\n\
             print('ready',flush=True); time.sleep(30)"
        ),
    );
    {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(server.0.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready");
    }
    let mut client = python_in(
        client_ns,
        &format!(
            "import socket,time\n\
             t0=time.time(); n=0; refused=0\n\
             while time.time()<t0+8:\n\
             \x20   want=int((time.time()-t0)*{rate})\n\
             \x20   while n<want:\n\
             \x20       s=socket.socket(); s.settimeout(2)\n\
             \x20       try: s.connect(('{IP_B}',{port}))\n\
             \x20       except ConnectionRefusedError: refused+=1\n\
             \x20       s.close(); n+=1\n\
             \x20   print(time.time(),refused,flush=True)\n\
             \x20   time.sleep(0.005)\n\
             print('done',n,refused,flush=True)"
        ),
    );
    std::thread::sleep(Duration::from_millis(1000));
    let rsts_before = nstat(server_ns, "TcpOutRsts");
    let fails_before = nstat(client_ns, "TcpAttemptFails");
    let (server_view, client_view) = (snapshot_of(server_ns), snapshot_of(client_ns));
    let (server_samples, client_samples) = (
        common::snapshot_samples(server_view),
        common::snapshot_samples(client_view),
    );
    let rsts_after = nstat(server_ns, "TcpOutRsts");
    let fails_after = nstat(client_ns, "TcpAttemptFails");
    let here = check(
        &server_samples,
        " connections/s",
        "Tcp.OutRsts",
        (rsts_before, rsts_after),
        Some(severity),
    );
    let there = check(
        &client_samples,
        " connects/s from here failed",
        "Tcp.AttemptFails",
        (fails_before, fails_after),
        Some(severity),
    );
    // Every connect the client made was refused: its count and the kernel's
    // agree.
    let mut text = String::new();
    std::io::Read::read_to_string(&mut client.0.stdout.take().unwrap(), &mut text).unwrap();
    let done = text.lines().last().unwrap();
    let mut words = done
        .strip_prefix("done ")
        .unwrap_or_else(|| panic!("client did not finish: {done}"))
        .split_whitespace()
        .map(|w| w.parse::<u64>().unwrap());
    let (made, refused) = (words.next().unwrap(), words.next().unwrap());
    // The capture names the port and the peer on both sides, at the rate
    // the client's log gives over the same interval.
    let log: Vec<(f64, u64)> = text
        .lines()
        .filter(|l| !l.starts_with("done"))
        .map(|l| {
            let (t, n) = l.split_once(' ').unwrap();
            (t.parse().unwrap(), n.parse().unwrap())
        })
        .collect();
    let port_name = format!("{IP_B}:{port} refused {IP_A} (");
    for samples in [&server_samples, &client_samples] {
        named_at_client_rate(samples, &port_name, &log);
    }
    // The server's side names the setting behind it: the listener on
    // another address, with its process.
    let listener = format!(
        "(port {port} is listened on at 127.0.0.1:{port} only, by PID {} (python3): not at {IP_B})",
        server.0.id()
    );
    let summary = connect_refused_summary(server_samples.last().unwrap());
    assert!(summary.contains(&listener), "{listener:?} in {summary}");
    let summary = connect_refused_summary(client_samples.last().unwrap());
    assert!(!summary.contains("listened on"), "{summary}");
    assert_eq!(made, refused, "{text}");
    eprintln!("{rate}/s asked: refused here {here}/s, there {there}/s; {refused} refused in all");
    assert!(
        fails_after - fails_before <= refused,
        "AttemptFails +{} but {refused} refused",
        fails_after - fails_before
    );
}

#[test]
fn refused_connections_are_named_on_both_sides_at_two_rates() {
    if crate::common::need_root(&["ip", "python3"]) {
        return;
    }
    let pair = VethPair::new("countfindrst");
    pair.b.ip(&["link", "set", "lo", "up"]);
    refused_at(&pair, 8081, 25, "warn");
    refused_at(&pair, 8082, 400, "crit");
}

/// Connects from the client namespace to `rate`/s addresses on its link
/// that nothing answers ARP for (198.18.0.100-139, none of them
/// assigned), each given up by the kernel after its ARP probes: the
/// application gets "No route to host". The finding must say unreachable,
/// no neighbour answered, with the interface's unresolved neighbours,
/// never refused; its rate agrees with AttemptFails in the same JSON, and
/// over the client's whole run the kernel failed as many connects as the
/// client saw EHOSTUNREACH.
fn unreachable_at(pair: &VethPair, rate: u32) {
    let client_ns = &pair.a.name;
    // Non-blocking connects, so that each waits out its ARP probes beside
    // the others; bounded: rate * 9 connects, 14 s.
    let fails_at_start = nstat(client_ns, "TcpAttemptFails");
    let mut client = python_in(
        client_ns,
        &format!(
            "import errno,select,socket,time\n\
             t0=time.time(); n=0; unreachable=0; other=[]; waiting={{}}\n\
             while time.time()<t0+14 and (n<{rate}*9 or waiting):\n\
             \x20   want=min(int((time.time()-t0)*{rate}),{rate}*9)\n\
             \x20   while n<want:\n\
             \x20       s=socket.socket(); s.setblocking(False)\n\
             \x20       s.connect_ex(('198.18.0.%d' % (100+n%40),7))\n\
             \x20       waiting[s.fileno()]=s; n+=1\n\
             \x20   _,done,_=select.select([],list(waiting.values()),[],0.02)\n\
             \x20   for s in done:\n\
             \x20       e=s.getsockopt(socket.SOL_SOCKET,socket.SO_ERROR)\n\
             \x20       if e==errno.EHOSTUNREACH: unreachable+=1\n\
             \x20       else: other.append(errno.errorcode.get(e,str(e)))\n\
             \x20       del waiting[s.fileno()]; s.close()\n\
             \x20   print(time.time(),unreachable,flush=True)\n\
             print('done',n,unreachable,len(other),*other,flush=True)"
        ),
    );
    // The first connects fail after about 3 s of ARP probes.
    std::thread::sleep(Duration::from_millis(4500));
    let fails_before = nstat(client_ns, "TcpAttemptFails");
    let samples = common::snapshot_samples(snapshot_of(client_ns));
    let fails_after = nstat(client_ns, "TcpAttemptFails");
    let per_s = check(
        &samples,
        " connects/s from here failed",
        "Tcp.AttemptFails",
        (fails_before, fails_after),
        None,
    );
    let (_, finding) = fresh(&samples);
    let summary = finding["summary"].as_str().unwrap();
    assert!(
        summary.contains("unreachable, no neighbour answered (")
            && summary.contains(&format!(" unresolved on {};", common::DEV_A)),
        "{summary}"
    );
    assert!(!summary.contains("refused (an RST)"), "{summary}");
    let hint = finding["hint"].as_str().unwrap();
    assert!(hint.contains("ip neigh show nud failed"), "{hint}");
    // The client's own count of EHOSTUNREACH over the last interval.
    let mut text = String::new();
    std::io::Read::read_to_string(&mut client.0.stdout.take().unwrap(), &mut text).unwrap();
    let done = text.lines().last().unwrap();
    let words: Vec<u64> = done
        .strip_prefix("done ")
        .unwrap_or_else(|| panic!("client did not finish: {done}"))
        .split_whitespace()
        .take(3)
        .map(|w| w.parse().unwrap())
        .collect();
    // (A connect whose SYN waited out a neighbour's re-probing may end
    // otherwise; named in the line.)
    assert!(
        words[2] * 50 <= words[0],
        "nearly every connect was unreachable: {done}"
    );
    // The client notices a batch of failures (ARP gives up on all of a
    // neighbour's queued SYNs at once) when its loop next runs, which a
    // loaded host delays: its times say little about one interval, but
    // over its whole run every connect the kernel failed was one it saw
    // unreachable.
    let failed = nstat(client_ns, "TcpAttemptFails") - fails_at_start;
    eprintln!(
        "{rate}/s asked: netlens {per_s}/s unreachable; the kernel failed {failed}, \
         the client saw {} unreachable",
        words[1]
    );
    assert!(
        words[1] <= failed && failed <= words[0],
        "{done}: the kernel failed {failed}"
    );
}

#[test]
fn unreachable_connects_are_named_unreachable_not_refused_at_two_rates() {
    if crate::common::need_root(&["ip", "python3", "nstat"]) {
        return;
    }
    let pair = VethPair::new("countfindunr");
    // The ICMP the host sends itself goes through lo.
    pair.a.ip(&["link", "set", "lo", "up"]);
    unreachable_at(&pair, 10);
    unreachable_at(&pair, 120);
}
