//! Findings and socket numbers against the kernel, in namespaces made here:
//! the syn-flood fix follows net.ipv4.tcp_syncookies (a real flood into a
//! listener with backlog 1), orphans are the watched namespace's (sockstat's
//! are the host's), LISTEN peers print as `ss -tln` prints them, and a veth
//! has no link speed.
//!
//! Network safety: traffic only between two namespaces of this test
//! (198.18.0.1 <-> 198.18.0.2); every loop is bounded (400 SYNs, each
//! retried once; 5 connections); the namespaces, and with them every
//! socket, nft rule and sysctl, are removed on drop; helpers are killed by
//! PID.

use crate::common;
use crate::common::python_in;

use common::{ChildGuard, IP_B, NETLENS, VethPair, ns_exec};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Reads the helper's first line (it prints "ready" once set up).
fn wait_ready(child: &mut ChildGuard) {
    use std::io::BufRead;
    let stdout = child.0.stdout.take().expect("piped");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "the helper failed to start");
}

/// The syn-flood findings of a snapshot of `ns` taken while 400 SYNs
/// (handshakes never completed: the client drops the SYN-ACKs) hit a
/// listener with backlog 1.
fn flood_findings(pair: &VethPair) -> Vec<serde_json::Value> {
    let mut listener = python_in(
        &pair.b.name,
        &format!(
            "import socket,time,sys\n\
             s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('{IP_B}',80)); s.listen(1); print('ready',flush=True); time.sleep(20)"
        ),
    );
    wait_ready(&mut listener);
    // Four one-second samples: it ends by itself.
    let snapshot = Command::new(NETLENS)
        .args([
            "snapshot",
            "--json",
            "--no-capture",
            "--section",
            "findings",
        ])
        .args(["--count", "4", "--interval", "1s", "--netns", &pair.b.name])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // 400 non-blocking connects at once; tcp_syn_retries=1 bounds the rest.
    let flood = ns_exec(
        &pair.a.name,
        &[
            "python3",
            "-c",
            &format!(
                "import socket,time\n\
                 c=[]\n\
                 for i in range(400):\n\
                 \x20   s=socket.socket(); s.setblocking(False)\n\
                 \x20   try: s.connect(('{IP_B}',80))\n\
                 \x20   except BlockingIOError: pass\n\
                 \x20   c.append(s)\n\
                 time.sleep(3)"
            ),
        ],
    );
    assert!(flood.status.success());
    let out = snapshot.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::parse_lines(&out.stdout)
        .into_iter()
        .flat_map(|line| line["findings"].as_array().cloned().unwrap_or_default())
        .filter(|f| f["id"] == "syn-flood")
        .collect()
}

fn flood_pair(tag: &str, syncookies: &str) -> VethPair {
    let pair = VethPair::new(tag);
    pair.b.sysctl("net.ipv4.tcp_syncookies", syncookies);
    pair.b.sysctl("net.ipv4.tcp_max_syn_backlog", "128");
    pair.a.sysctl("net.ipv4.tcp_syn_retries", "1");
    ns_exec(
        &pair.a.name,
        &[
            "nft",
            "add table inet findings_test; \
             add chain inet findings_test in { type filter hook input priority 0; }; \
             add rule inet findings_test in tcp flags & (syn|ack) == syn|ack drop",
        ],
    );
    pair
}

#[test]
fn the_syn_flood_fix_follows_tcp_syncookies() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "nft", "python3", "ss", "sysctl"])
    else {
        return;
    };
    // Syncookies on: cookies answer the flood; the fix goes on from there.
    let pair = flood_pair("findings-syn1", "1");
    let found = flood_findings(&pair);
    assert!(!found.is_empty(), "no syn-flood finding with cookies on");
    for finding in &found {
        let fix = finding["hint"].as_str().unwrap();
        assert!(!fix.contains("set net.ipv4.tcp_syncookies"), "{fix}");
        assert!(
            fix.starts_with("syncookies are on (net.ipv4.tcp_syncookies=1)"),
            "{fix}"
        );
        assert!(
            fix.contains("raise net.ipv4.tcp_max_syn_backlog from 128 to 256"),
            "{fix}"
        );
        assert!(
            fix.contains("raise 198.18.0.2:80's listen() backlog from 1"),
            "{fix}"
        );
    }
    drop(pair);
    // Syncookies off: the full SYN queue drops SYNs; turning cookies on
    // is the first step, and the finding is critical.
    let pair = flood_pair("findings-syn0", "0");
    let found = flood_findings(&pair);
    assert!(!found.is_empty(), "no syn-flood finding with cookies off");
    assert!(found.iter().any(|f| f["severity"] == "crit"), "{found:?}");
    for finding in &found {
        let fix = finding["hint"].as_str().unwrap();
        assert!(
            fix.starts_with("set net.ipv4.tcp_syncookies=1 (now 0)"),
            "{fix}"
        );
    }
}

/// The whitespace-separated fields of `ss ARGS` in `ns`, header skipped.
fn ss_rows(ns: &str, args: &[&str]) -> Vec<Vec<String>> {
    let mut command = vec!["ss", "-H"];
    command.extend_from_slice(args);
    let out = ns_exec(ns, &command);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn snapshot_text(ns: &str, section: &str) -> String {
    let out = Command::new(NETLENS)
        .args([
            "snapshot",
            "--no-capture",
            "--count",
            "1",
            "--interval",
            "200ms",
        ])
        .args(["--section", section, "--netns", ns])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The value under `column` in the snapshot's TCP table.
fn tcp_column(text: &str, column: &str) -> u64 {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let header = lines
        .iter()
        .position(|l| l.split_whitespace().any(|w| w == column))
        .expect("the TCP table");
    let at = lines[header]
        .split_whitespace()
        .position(|w| w == column)
        .unwrap();
    lines[header + 1]
        .split_whitespace()
        .nth(at)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn orphans_are_the_namespaces_and_listen_peers_print_as_ss() {
    if crate::common::need_root(&["ip", "nft", "python3", "ss", "sysctl"]) {
        return;
    }
    let pair = VethPair::new("findings-orph");
    // B: a server that accepts and never reads, and listeners on v4,
    // v6-only and dual-stack addresses.
    let mut server = python_in(
        &pair.b.name,
        &format!(
            "import socket,time\n\
             def listen(family, addr, port, v6only=None):\n\
             \x20   s=socket.socket(family)\n\
             \x20   if v6only is not None: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, v6only)\n\
             \x20   s.bind((addr, port)); s.listen(16); return s\n\
             a=listen(socket.AF_INET,'{IP_B}',9000)\n\
             l=[listen(socket.AF_INET,'0.0.0.0',8080), listen(socket.AF_INET6,'::',8081,1), listen(socket.AF_INET6,'::',8082,0)]\n\
             print('ready',flush=True)\n\
             conns=[a.accept()[0] for i in range(5)]\n\
             time.sleep(30)"
        ),
    );
    wait_ready(&mut server);
    // A: five connections; once B drops their packets, A writes and closes
    // them: five orphans in FIN-WAIT-1 in A, none in B.
    let client = ns_exec(
        &pair.a.name,
        &[
            "python3",
            "-c",
            &format!(
                "import socket,subprocess,time\n\
                 c=[socket.create_connection(('{IP_B}',9000),timeout=5) for i in range(5)]\n\
                 time.sleep(0.3)\n\
                 subprocess.run(['ip','netns','exec','{b}','nft','add table inet findings_test; add chain inet findings_test in {{ type filter hook input priority 0; }}; add rule inet findings_test in tcp dport 9000 drop'],check=True)\n\
                 [s.send(b'x'*1000) for s in c]\n\
                 [s.close() for s in c]\n\
                 time.sleep(0.5)",
                b = pair.b.name
            ),
        ],
    );
    assert!(client.status.success());
    let fin_wait = ss_rows(&pair.a.name, &["-tan", "state", "fin-wait-1"]).len();
    assert_eq!(fin_wait, 5, "ss -tan in A");
    let in_a = snapshot_text(&pair.a.name, "tcp");
    let in_b = snapshot_text(&pair.b.name, "tcp");
    assert_eq!(tcp_column(&in_a, "orphan"), 5, "{in_a}");
    assert_eq!(tcp_column(&in_b, "orphan"), 0, "{in_b}");
    let json = common::snapshot(&[
        "--no-capture",
        "--count",
        "1",
        "--interval",
        "200ms",
        "--section",
        "tcp",
        "--netns",
        &pair.b.name,
    ]);
    assert_eq!(json[0]["tcp"]["orphans"], 0);
    // The kernel's sockstat counts orphans host-wide: B's shows A's.
    assert!(json[0]["tcp"]["sockstat"]["tcp_orphan"].as_u64().unwrap() >= 5);

    // LISTEN sockets: local and peer exactly as ss -tln prints them.
    let sockets = snapshot_text(&pair.b.name, "sockets");
    let rows = ss_rows(&pair.b.name, &["-tln"]);
    for port in ["8080", "8081", "8082"] {
        let ss = rows
            .iter()
            .find(|r| r[3].ends_with(&format!(":{port}")))
            .unwrap_or_else(|| panic!("ss shows no :{port}: {rows:?}"));
        let (local, peer) = (&ss[3], &ss[4]);
        let line = sockets
            .lines()
            .find(|l| l.contains("LISTEN") && l.contains(&format!(":{port} ")))
            .unwrap_or_else(|| panic!("no LISTEN :{port} in\n{sockets}"));
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert!(
            fields.contains(&local.as_str()) && fields.contains(&peer.as_str()),
            "ss prints {local} {peer}; netlens: {line}"
        );
    }
    let expected = ["0.0.0.0:*", "[::]:*", "*:*"];
    for peer in expected {
        assert!(rows.iter().any(|r| r[4] == peer), "ss -tln: {rows:?}");
    }
}

#[test]
fn a_veth_has_no_link_speed() {
    if crate::common::need_root(&["ip", "nft", "python3", "ss", "sysctl"]) {
        return;
    }
    let pair = VethPair::new("findings-speed");
    let samples = common::snapshot(&[
        "--no-capture",
        "--count",
        "1",
        "--interval",
        "200ms",
        "--section",
        "interfaces",
        "--netns",
        &pair.a.name,
    ]);
    let veth = common::must_iface(&samples[0], common::DEV_A);
    assert_eq!(veth["kind"], "veth");
    // The driver says 10000 Mb/s; that is no link's speed.
    assert!(veth["speed_mbps"].is_null(), "{veth}");
    assert!(veth["util_percent"].is_null(), "{veth}");
}
