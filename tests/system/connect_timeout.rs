//! connect-timeout against the kernel: a server namespace whose nftables
//! drops SYNs to two ports, clients in another namespace whose connects
//! hang in SYN_SENT. The finding's destination, count, processes and SYN
//! retransmissions are checked against `ss -tnpi state syn-sent` and
//! nstat read while the connects wait, at two sizes (3 clients of 3
//! processes: warn; 25 of 2: crit); connects that are answered (accepted,
//! or refused with RST) raise nothing.
//!
//! Network safety: traffic only between this test's two namespaces
//! (198.18.0.1 -> 198.18.0.2); 33 connects, each retrying its SYN at most
//! net.ipv4.tcp_syn_retries times; every helper ends by itself within 30 s
//! and is killed by PID on drop; the namespaces, with the nft rules and
//! every socket, go on drop.

use crate::common;
use crate::common::python_in;

use common::socket_findings::{
    closing_server, finding_rows, finish_snapshot, last_findings, replay_json, scrape, ss_rows,
    ss_user, start_export, start_snapshot_with, text, wait_ready,
};
use common::{ChildGuard, IP_B, VethPair, ns_exec, nstat};
use std::collections::{BTreeSet, HashMap};

/// A client process in `ns` making `count` connects to 198.18.0.2:`port`
/// (non-blocking, so they all wait at once), kept for 30 s. Its pid.
fn connects(ns: &str, port: u16, count: u32) -> (ChildGuard, u32) {
    let mut child = python_in(
        ns,
        &format!(
            "import socket,os,time\n\
             c=[]\n\
             for i in range({count}):\n\
             \x20   s=socket.socket(); s.setblocking(False)\n\
             \x20   try: s.connect(('{IP_B}',{port}))\n\
             \x20   except (BlockingIOError, ConnectionRefusedError): pass\n\
             \x20   c.append(s)\n\
             print(os.getpid()); print('ready',flush=True); time.sleep(30)"
        ),
    );
    let pid = wait_ready(&mut child)[0].trim().parse().unwrap();
    (child, pid)
}

/// `ss -tnpi state syn-sent` in `ns`: per destination, the pids waiting,
/// the sockets and the most SYN retransmissions (retrans:X/Y's Y).
fn waiting(ns: &str) -> HashMap<String, (BTreeSet<u32>, u32, u32)> {
    let mut out: HashMap<String, (BTreeSet<u32>, u32, u32)> = HashMap::new();
    let rows = ss_rows(ns, &["-tnpi", "state", "syn-sent"]);
    // Each socket is a line of addresses, then a line of tcp_info.
    for pair in rows.chunks(2) {
        let [socket, info] = pair else { continue };
        let entry = out.entry(socket[3].clone()).or_default();
        if let Some((_, pid)) = ss_user(socket) {
            entry.0.insert(pid);
        }
        entry.1 += 1;
        let total = info
            .iter()
            .find_map(|f| f.strip_prefix("retrans:"))
            .and_then(|r| r.split('/').nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        entry.2 = entry.2.max(total);
    }
    out
}

#[test]
fn connect_timeout_names_the_destination_and_the_clients_waiting() {
    if crate::common::need_root(&["ip", "nft", "python3", "ss"]) {
        return;
    }
    let pair = VethPair::new("sockfind-ct");
    // B drops SYNs to :80 and :443; :8080 accepts; :9 is closed (RST).
    ns_exec(
        &pair.b.name,
        &[
            "nft",
            "add table inet sockfind; \
             add chain inet sockfind in { type filter hook input priority 0; }; \
             add rule inet sockfind in tcp dport { 80, 443 } tcp flags & (syn|ack) == syn drop",
        ],
    );
    let _server = closing_server(&pair.b.name, IP_B, &[8080]);
    let small: Vec<_> = (0..3).map(|_| connects(&pair.a.name, 80, 1)).collect();
    let big = [
        connects(&pair.a.name, 443, 24),
        connects(&pair.a.name, 443, 1),
    ];
    let _answered = [
        connects(&pair.a.name, 8080, 5),
        connects(&pair.a.name, 9, 3),
    ];
    // Let every SYN be retransmitted once (the first RTO is 1 s).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let (_export, metrics) = start_export(&pair.a.name);
    let recording = std::env::temp_dir().join(format!("sockfind-ct-{}.nlrec", std::process::id()));
    let _ = std::fs::remove_file(&recording);
    let lines = finish_snapshot(start_snapshot_with(
        &pair.a.name,
        2,
        &["--record", recording.to_str().unwrap()],
    ));
    let ss = waiting(&pair.a.name);
    let syn_retrans = nstat(&pair.a.name, "TcpExtTCPSynRetrans");

    let found = last_findings(&lines, "connect-timeout");
    assert_eq!(found.len(), 2, "only the dropped ports: {found:?}");
    let cases = [
        ("198.18.0.2:80", &small[..], 3, "warn"),
        ("198.18.0.2:443", &big[..], 25, "crit"),
    ];
    for (destination, clients, count, severity) in cases {
        let (pids, sockets, most) = &ss[destination];
        let expected: BTreeSet<u32> = clients.iter().map(|(_, pid)| *pid).collect();
        assert_eq!((pids, *sockets), (&expected, count), "ss for {destination}");
        let finding = found
            .iter()
            .find(|f| f["evidence"]["row"] == format!("syn-sent {destination}"))
            .unwrap_or_else(|| panic!("no connect-timeout for {destination}: {found:?}"));
        assert_eq!(finding["severity"], severity);
        assert_eq!(finding["evidence"]["tab"], "sockets");
        let summary = text(finding, "summary");
        let processes = if pids.len() == 1 {
            "process"
        } else {
            "processes"
        };
        assert!(
            summary.starts_with(&format!(
                "{count} connects to {destination} unanswered in SYN_SENT, from {} {processes}: ",
                pids.len()
            )),
            "{summary}"
        );
        for (_, pid) in clients {
            assert!(
                summary.contains(&format!("PID {pid} (python3) ")),
                "{summary}"
            );
        }
        // SYNs sent: the first and the retransmissions tcp_info counts; ss
        // reads a moment later, so it may count one more.
        let sent: u32 = common::socket_findings::number_after(summary, "SYN sent up to") as u32;
        assert!(
            sent >= 2 && sent <= most + 1,
            "{summary}; ss retrans {most}"
        );
        // The counter's rate over the sample's interval: 0 is honest once
        // the SYNs' backoff (1, 2, 4 ... s) outgrows the interval, as on a
        // loaded host where the snapshot starts late; nstat below checks
        // that every socket retransmitted.
        let rate = common::socket_findings::number_after(summary, "TcpExt.TCPSynRetrans");
        assert!(rate >= 0.0, "{summary}");
        assert!(text(finding, "hint").contains("ip route get 198.18.0.2"));
    }
    // Every waiting socket retransmitted its SYN at least once.
    assert!(syn_retrans >= 28, "nstat TcpExtTCPSynRetrans {syn_retrans}");
    assert!(!ss.contains_key("198.18.0.2:8080") && !ss.contains_key("198.18.0.2:9"));

    // The recording replays to the same findings; the exporter, watching
    // the same namespace all along, counts one of each severity.
    let replayed = replay_json(&recording);
    let _ = std::fs::remove_file(&recording);
    assert_eq!(
        finding_rows(&replayed, "connect-timeout"),
        finding_rows(&lines, "connect-timeout")
    );
    let body = scrape(metrics);
    for severity in ["warn", "crit"] {
        let series = format!(
            "netlens_finding{{id=\"connect-timeout\",severity=\"{severity}\",netns=\"{}\"}} 1",
            pair.a.name
        );
        assert!(body.contains(&series), "no {series} in\n{body}");
    }
}
