//! udp-drops against the kernel: a real UDP receiver (python3) that does
//! not read, fed by a paced sender in another namespace, at two rates (so
//! two severities) and two buffer sizes. The finding must name the socket,
//! the receiver's PID and command, its rcvbuf as `ss -uamn` prints it (rb),
//! and drops/s that agree with the socket's drop counter in the same JSON;
//! those counters must lie between `ss`'s `d` read just before and just
//! after the snapshot, and nstat's UdpRcvbufErrors must have risen as much
//! as ss's `d` over that window. The live view names it too (tmux), and
//! Enter on it selects the socket in the Sockets tab.
//!
//! Network safety: traffic only from 198.18.0.1 to 198.18.0.2 between two
//! namespaces of this test; the sender is bounded (at most 400 + rate * 8
//! datagrams of 200 bytes, 8 s); namespaces and helpers are removed by
//! their guards (helpers killed by PID).

use crate::common;
use crate::common::python_in;

use common::{ChildGuard, IP_B, NETLENS, VethPair};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

fn wait_ready(child: &mut ChildGuard) {
    use std::io::BufRead;
    let stdout = child.0.stdout.take().expect("piped");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "the helper failed to start");
}

/// A receiver bound to 198.18.0.2:`port` that never reads; `rcvbuf` 0
/// keeps the default buffer.
fn receiver(ns: &str, port: u16, rcvbuf: u32) -> ChildGuard {
    let mut child = python_in(
        ns,
        &format!(
            "import socket,time\n\
             s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
             if {rcvbuf}: s.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,{rcvbuf})\n\
             s.bind(('{IP_B}',{port})); print('ready',flush=True); time.sleep(40)"
        ),
    );
    wait_ready(&mut child);
    child
}

/// A burst of 400 datagrams (fills the buffer), then `rate` per second for
/// 8 s: bounded.
fn sender(ns: &str, port: u16, rate: u32) -> ChildGuard {
    python_in(
        ns,
        &format!(
            "import socket,time\n\
             s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
             d=('{IP_B}',{port}); m=b'x'*200\n\
             for i in range(400): s.sendto(m,d)\n\
             t0=time.time(); n=0\n\
             while time.time()<t0+8:\n\
             \x20   want=int((time.time()-t0)*{rate})\n\
             \x20   while n<want: s.sendto(m,d); n+=1\n\
             \x20   time.sleep(0.005)\n"
        ),
    )
}

/// (rb, d) of the socket on `port` as `ss -uamn` prints them.
fn ss_skmem(ns: &str, port: u16) -> (u64, u64) {
    let out = common::ns_exec(ns, &["ss", "-uamn", "sport", "=", &format!(":{port}")]);
    let text = String::from_utf8_lossy(&out.stdout);
    let skmem = text
        .split("skmem:(")
        .nth(1)
        .unwrap_or_else(|| panic!("no skmem in ss output: {text}"));
    let field = |name: &str| -> u64 {
        skmem
            .split([',', ')'])
            .find_map(|f| f.strip_prefix(name)?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {skmem}"))
    };
    (field("rb"), field("d"))
}

/// nstat's UdpRcvbufErrors, absolute, without touching its history.
fn nstat_rcvbuf_errors(ns: &str) -> u64 {
    let out = common::ns_exec(ns, &["nstat", "-asz", "UdpRcvbufErrors"]);
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("UdpRcvbufErrors")).then(|| words.next()?.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no UdpRcvbufErrors in nstat output: {text}"))
}

fn number_before(text: &str, marker: &str) -> f64 {
    let head = &text[..text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in {text}"))];
    head.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before {marker:?} in {text}"))
}

/// The drop counter of the socket on `port` in one JSON sample.
fn json_drops(sample: &Value, port: u16) -> u64 {
    let local = format!("{IP_B}:{port}");
    sample["sockets"]
        .as_array()
        .expect("sockets[]")
        .iter()
        .find(|s| s["proto"] == "udp" && s["local"] == local.as_str())
        .and_then(|s| s["drops"].as_u64())
        .unwrap_or_else(|| panic!("no udp socket {local} with drops in {sample}"))
}

struct Case {
    port: u16,
    rate: u32,
    rcvbuf: u32,
    severity: &'static str,
}

fn check(pair: &VethPair, case: &Case) {
    let ns = &pair.b.name;
    let receiver = receiver(ns, case.port, case.rcvbuf);
    let _sender = sender(&pair.a.name, case.port, case.rate);
    std::thread::sleep(Duration::from_millis(1200));
    let (rb, d_before) = ss_skmem(ns, case.port);
    let nstat_before = nstat_rcvbuf_errors(ns);
    let recording = std::env::temp_dir().join(format!(
        "netlens-countfind-udp-{}-{}.nlrec",
        std::process::id(),
        case.port
    ));
    let _ = std::fs::remove_file(&recording);
    let samples = common::snapshot(&[
        "--no-capture",
        "--section",
        "findings,sockets",
        "--count",
        "3",
        "--interval",
        "1s",
        "--netns",
        ns,
        "--record",
        recording.to_str().unwrap(),
    ]);
    let (_, d_after) = ss_skmem(ns, case.port);
    let nstat_after = nstat_rcvbuf_errors(ns);

    let last = samples.last().unwrap();
    let finding = last["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "udp-drops")
        .unwrap_or_else(|| panic!("no udp-drops at {} datagrams/s: {last}", case.rate));
    let summary = finding["summary"].as_str().unwrap();
    eprintln!("{}/s: {summary}; ss rb {rb}", case.rate);
    assert_eq!(finding["severity"], case.severity, "{summary}");
    let named = format!(
        "udp {IP_B}:{} PID {} (python3) dropped ",
        case.port,
        receiver.pid()
    );
    assert!(summary.starts_with(&named), "{summary}\nwanted {named}");
    assert!(
        summary.contains(&format!("rcvbuf {rb} B")),
        "ss rb {rb}: {summary}"
    );
    assert_eq!(
        finding["evidence"]["row"],
        format!("{IP_B}:{} 0.0.0.0:0", case.port)
    );
    // drops/s is the socket counter's rise over the last interval.
    let per_s = number_before(summary, " datagrams/s");
    let before = &samples[samples.len() - 2];
    let rise = json_drops(last, case.port) - json_drops(before, case.port);
    // Over the socket dumps' interval, which the drop counters move in.
    let seconds = last["sockets_interval"].as_f64().unwrap();
    let expected = rise as f64 / seconds;
    assert!(
        (per_s - expected).abs() <= expected * 0.05 + 1.0,
        "{per_s}/s in the finding, {rise} drops in {seconds:.3} s in the JSON"
    );
    // The counters netlens read are the kernel's, bracketed by ss.
    let first = json_drops(&samples[0], case.port);
    let latest = json_drops(last, case.port);
    assert!(
        d_before <= first && first <= latest && latest <= d_after,
        "ss d {d_before} .. {d_after}, netlens {first} .. {latest}"
    );
    // nstat's UdpRcvbufErrors rose with the socket's drops (only this
    // socket receives in the namespace).
    let (nstat_rise, ss_rise) = (nstat_after - nstat_before, d_after - d_before);
    assert!(ss_rise > 0, "no drops during the snapshot");
    assert!(
        nstat_rise.abs_diff(ss_rise) <= ss_rise / 10 + u64::from(case.rate) / 5,
        "nstat UdpRcvbufErrors +{nstat_rise}, ss d +{ss_rise}"
    );
    assert!(
        summary.contains("Udp RcvbufErrors ") && !summary.contains("RcvbufErrors 0/s"),
        "{summary}"
    );
    assert!(finding["hint"].as_str().unwrap().contains("SO_REUSEPORT"));
    // The recording replays to the same finding (rcvbuf is recorded too).
    let replay = Command::new(NETLENS)
        .args(["replay", "--json", recording.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_file(&recording).unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let replayed = common::parse_lines(&replay.stdout);
    let again = replayed.last().unwrap()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "udp-drops")
        .cloned()
        .unwrap_or_else(|| panic!("replay lost udp-drops"));
    assert_eq!(again["summary"], finding["summary"]);
    assert_eq!(again["hint"], finding["hint"]);
}

#[test]
fn a_receiver_that_does_not_read_drops_at_two_rates() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let pair = VethPair::new("countfindudp");
    // Fast: 2000 datagrams/s into an 8 KiB buffer, critical.
    check(
        &pair,
        &Case {
            port: 5301,
            rate: 2000,
            rcvbuf: 8192,
            severity: "crit",
        },
    );
    // Slow: 30/s into the default buffer, a warning.
    check(
        &pair,
        &Case {
            port: 5302,
            rate: 30,
            rcvbuf: 0,
            severity: "warn",
        },
    );
}

/// The live view names it in the header; `!` lists it and Enter selects
/// the dropping socket in the Sockets tab.
#[test]
fn the_live_view_names_it_and_jumps_to_the_socket() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let Some(tmux) = common::tmux::Tmux::new("countfind-udp") else {
        return;
    };
    let pair = VethPair::new("countfindudplive");
    let receiver = receiver(&pair.b.name, 5303, 8192);
    let _sender = sender(&pair.a.name, 5303, 500);
    let command = format!(
        "env NO_COLOR=1 TERM=tmux-256color {NETLENS} --config /dev/null --no-capture --netns {}",
        pair.b.name
    );
    tmux.session("live", 100, 30, &command);
    tmux.wait_for("live", "udp-drops in the header", |lines| {
        lines.iter().any(|l| l.contains("udp-drops"))
    });
    tmux.keys("live", &["!"]);
    let list = tmux.wait_for("live", "the findings list", |lines| {
        lines.iter().any(|l| l.contains("Findings"))
    });
    let pid = format!("PID {} (python3)", receiver.pid());
    assert!(
        list.iter().any(|l| l.contains(&pid)) || list.join(" ").contains(&pid),
        "{}",
        list.join("\n")
    );
    tmux.keys("live", &["Enter"]);
    let sockets = tmux.wait_for(
        "live",
        "the Sockets tab with the socket selected",
        |lines| lines.iter().any(|l| l.contains("198.18.0.2:5303")),
    );
    tmux.keys("live", &["q"]);
    assert!(
        sockets.iter().any(|l| l.contains("2 Sockets")),
        "{}",
        sockets.join("\n")
    );
}
