//! port-exhaustion against the kernel: a client namespace with a narrowed
//! net.ipv4.ip_local_port_range (a per-namespace sysctl) connects to a
//! server namespace until connect() fails with EADDRNOTAVAIL. The finding's
//! counts, range, process and fixes are checked against `ss -tanp` read
//! while the sockets stand (TIME_WAIT lasts 60 s), at two range sizes and
//! three fill levels, and it goes once tcp_tw_reuse=1 frees the TIME_WAIT
//! ports.
//!
//! Network safety: traffic only between this test's two namespaces
//! (198.18.0.1 -> 198.18.0.2); at most 2,750 connections, each closed at
//! once or held by a helper that ends by itself within 40 s; helpers are
//! killed by PID on drop; the namespaces, with every socket and sysctl, go
//! on drop.

use crate::common;
use crate::common::python_in;

use common::socket_findings::{
    closing_server, finish_snapshot, last_findings, ss_rows, ss_user, start_snapshot, text,
    wait_ready,
};
use common::{IP_A, IP_B, VethPair};
use serde_json::Value;

/// The client: `closed[port]` connects closed at once (TIME_WAIT on this
/// side), then `held` connections to `held_port` kept open. Prints how
/// many connects failed and the errno of the last failure, then "ready".
fn client(ns: &str, closed: &[(u16, u32)], held: (u16, u32)) -> (common::ChildGuard, u32, String) {
    let closed: Vec<String> = closed.iter().map(|(p, n)| format!("({p},{n})")).collect();
    let mut child = python_in(
        ns,
        &format!(
            "import socket,os,time\n\
             failed=0; errno=None\n\
             for port,n in [{closed}]:\n\
             \x20   for i in range(n):\n\
             \x20       s=socket.socket()\n\
             \x20       try: s.connect(('{IP_B}',port))\n\
             \x20       except OSError as e: failed+=1; errno=e.errno\n\
             \x20       s.close()\n\
             held=[socket.create_connection(('{IP_B}',{hp}),timeout=5) for i in range({hn})]\n\
             time.sleep(0.5)\n\
             print(os.getpid(), failed, errno); print('ready',flush=True)\n\
             time.sleep(30)",
            closed = closed.join(","),
            hp = held.0,
            hn = held.1
        ),
    );
    let said = wait_ready(&mut child);
    let fields: Vec<&str> = said[0].split_whitespace().collect();
    let pid = fields[0].parse().unwrap();
    (child, pid, format!("{} {}", fields[1], fields[2]))
}

/// Per destination: sockets, in TIME_WAIT, (pid, open sockets) of the owner.
type Destinations = std::collections::HashMap<String, (u32, u32, Option<(u32, u32)>)>;

/// `ss -tanp` in `ns`: per destination, (sockets, in TIME_WAIT, (pid,
/// open sockets) of the owner).
fn per_destination(ns: &str) -> Destinations {
    let mut out = Destinations::new();
    for row in ss_rows(ns, &["-tanp"]) {
        if row[0] == "LISTEN" {
            continue;
        }
        let entry = out.entry(row[4].clone()).or_default();
        entry.0 += 1;
        if row[0] == "TIME-WAIT" {
            entry.1 += 1;
        }
        if let Some((_, pid)) = ss_user(&row) {
            let owner = entry.2.get_or_insert((pid, 0));
            owner.1 += 1;
        }
    }
    out
}

fn finding_to<'a>(found: &'a [Value], destination: &str) -> Option<&'a Value> {
    found
        .iter()
        .find(|f| f["evidence"]["row"] == format!("{IP_A} {destination}"))
}

#[test]
fn port_exhaustion_names_the_destination_the_range_and_the_fixes() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "python3", "ss", "sysctl"]) else {
        return;
    };
    // 1000 ports: 1200 connects to :80 (some fail), 850 to :81 (350 held
    // open), 700 to :82 (70%: quiet).
    let pair = VethPair::new("sockfind-pe");
    pair.a.sysctl("net.ipv4.ip_local_port_range", "40000 40999");
    let _server = closing_server(&pair.b.name, IP_B, &[80, 81, 82]);
    let (_client, pid, failed) =
        client(&pair.a.name, &[(80, 1200), (81, 500), (82, 700)], (81, 350));
    // EADDRNOTAVAIL is errno 99: no counter records it.
    assert!(
        failed.ends_with(" 99"),
        "connect() failures past the range: {failed}"
    );
    let lines = finish_snapshot(start_snapshot(&pair.a.name, 2));
    let ss = per_destination(&pair.a.name);
    let found = last_findings(&lines, "port-exhaustion");
    assert_eq!(found.len(), 2, "{found:?}");

    let full = finding_to(&found, "198.18.0.2:80").expect("the full destination");
    let (count, time_wait, _) = ss["198.18.0.2:80"];
    // The crit band (95% of the range): ss's count, as the kernel gives it.
    assert!(
        (950..=1000).contains(&count) && time_wait <= count,
        "ss: {:?}",
        ss["198.18.0.2:80"]
    );
    assert_eq!(full["severity"], "crit");
    assert_eq!(
        text(full, "summary"),
        format!(
            "{IP_A} -> 198.18.0.2:80: {count} of 1000 ephemeral ports in use ({time_wait} in \
             TIME_WAIT; ip_local_port_range 40000-40999): connect() to it fails with EADDRNOTAVAIL"
        )
    );
    let hint = text(full, "hint");
    for fix in [
        "reuse connections (HTTP keep-alive, a connection pool)",
        "set net.ipv4.tcp_tw_reuse=1 (now 2: loopback only)",
        "widen net.ipv4.ip_local_port_range (now 40000 40999: 1000 ports)",
        "more destination addresses or ports",
    ] {
        assert!(hint.contains(fix), "{fix:?} not in {hint}");
    }

    let near = finding_to(&found, "198.18.0.2:81").expect("the nearly full destination");
    let (count, time_wait, owner) = ss["198.18.0.2:81"];
    // The kernel now and then hands out a port still in TIME_WAIT to the
    // same destination (a few in a thousand here, 22 of 850 once in CI,
    // even with tcp_tw_reuse=2 off loopback): ss is the reference, not the
    // connects made. The setup only has to land in the warn band (80% of
    // the range, below the 95% of crit).
    assert!((800..950).contains(&count), "ss: {count}");
    assert_eq!(owner, Some((pid, 350)), "ss");
    assert_eq!(near["severity"], "warn");
    assert_eq!(
        text(near, "summary"),
        format!(
            "{IP_A} -> 198.18.0.2:81: {count} of 1000 ephemeral ports in use ({time_wait} in \
             TIME_WAIT; ip_local_port_range 40000-40999); PID {pid} (python3) holds 350 open: \
             connect() to it will fail with EADDRNOTAVAIL"
        )
    );
    assert!(ss["198.18.0.2:82"].0 <= 700);
    assert!(finding_to(&found, "198.18.0.2:82").is_none(), "70% fired");
    drop(pair);

    // 200 ports, tcp_tw_reuse=0: 300 connects, some fail; the fix quotes the
    // live 0. With tcp_tw_reuse=1 the TIME_WAIT ports are connect()'s
    // again: nothing to report.
    let pair = VethPair::new("sockfind-pe2");
    pair.a.sysctl("net.ipv4.ip_local_port_range", "50000 50199");
    pair.a.sysctl("net.ipv4.tcp_tw_reuse", "0");
    let _server = closing_server(&pair.b.name, IP_B, &[80]);
    let (_client, _, failed) = client(&pair.a.name, &[(80, 300)], (80, 0));
    assert!(failed.ends_with(" 99"), "{failed}");
    let lines = finish_snapshot(start_snapshot(&pair.a.name, 2));
    let ss = per_destination(&pair.a.name);
    let found = last_findings(&lines, "port-exhaustion");
    let full = finding_to(&found, "198.18.0.2:80").expect("the full destination");
    // ss is the reference again: a port or two may have been handed back
    // (198 once in CI). The setup only has to land in the crit band (95%).
    let (count, time_wait, _) = ss["198.18.0.2:80"];
    assert!((190..=200).contains(&count), "ss: {count}");
    assert_eq!(full["severity"], "crit");
    assert!(
        text(full, "summary").contains(&format!(
            "{count} of 200 ephemeral ports in use ({time_wait} in TIME_WAIT; \
             ip_local_port_range 50000-50199)"
        )),
        "{full}"
    );
    assert!(
        text(full, "hint").contains("set net.ipv4.tcp_tw_reuse=1 (now 0)"),
        "{full}"
    );
    pair.a.sysctl("net.ipv4.tcp_tw_reuse", "1");
    let lines = finish_snapshot(start_snapshot(&pair.a.name, 2));
    let firing: Vec<_> = last_findings(&lines, "port-exhaustion")
        .into_iter()
        .filter(|f| f["calm"] == 0)
        .collect();
    assert!(firing.is_empty(), "{firing:?}");
}
