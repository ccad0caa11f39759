//! close-wait against the kernel: servers in one namespace that accept and
//! never close, a client in another that closes its ends. The finding's
//! counts, process and port are checked against `ss -tnp state close-wait`
//! read while the piles stand, at three sizes (a small pile that grows, a
//! steady one above warn, one above crit); and in the live view, Enter on
//! the finding shows those sockets.
//!
//! Network safety: traffic only between this test's two namespaces
//! (198.18.0.1 -> 198.18.0.2); 760 connections at most; every helper ends
//! by itself within 40 s and is killed by PID on drop; the namespaces, and
//! with them every socket, go on drop.

use crate::common;
use crate::common::python_in;

use common::socket_findings::{
    findings, finish_snapshot, last_findings, number_after, ss_rows, ss_user, start_snapshot, text,
    wait_ready,
};
use common::tmux::Tmux;
use common::{ChildGuard, IP_B, NETLENS, VethPair};
use std::collections::HashMap;
use std::time::Duration;

/// A server on 198.18.0.2:`port` in `ns` that accepts and keeps every
/// connection, never closing one. Returns it and its pid.
fn hoarder(ns: &str, port: u16) -> (ChildGuard, u32) {
    let mut server = python_in(
        ns,
        &format!(
            "import socket,os,time\n\
             s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('{IP_B}',{port})); s.listen(1024); s.settimeout(1)\n\
             print(os.getpid()); print('ready',flush=True)\n\
             held=[]; end=time.time()+40\n\
             while time.time()<end:\n\
             \x20   try: held.append(s.accept()[0])\n\
             \x20   except socket.timeout: pass"
        ),
    );
    let pid = wait_ready(&mut server)[0].trim().parse().unwrap();
    (server, pid)
}

/// `ss -tnp state close-wait` in `ns`: sockets per (local port, pid, command).
fn close_waits(ns: &str) -> HashMap<u16, (usize, u32, String)> {
    let mut piles: HashMap<u16, (usize, u32, String)> = HashMap::new();
    for row in ss_rows(ns, &["-tnp", "state", "close-wait"]) {
        let port = row[2].rsplit(':').next().unwrap().parse().unwrap();
        let (name, pid) = ss_user(&row).expect("ss names the owner");
        let pile = piles.entry(port).or_insert((0, pid, name));
        pile.0 += 1;
    }
    piles
}

#[test]
fn close_wait_names_the_process_and_port_at_three_sizes() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let pair = VethPair::new("sockfind-cw");
    let (_small, small_pid) = hoarder(&pair.b.name, 8443);
    let (_steady, steady_pid) = hoarder(&pair.b.name, 9443);
    let (_big, big_pid) = hoarder(&pair.b.name, 7443);
    // The client connects everything, then closes 600 + 100 + 12 at once
    // and, 2.5 s later, 12 more to :8443: that pile grows from 12 to 24.
    let mut client = python_in(
        &pair.a.name,
        &format!(
            "import socket,time\n\
             def conns(port,n): return [socket.create_connection(('{IP_B}',port),timeout=5) for i in range(n)]\n\
             big=conns(7443,600); steady=conns(9443,100); first=conns(8443,12); second=conns(8443,12)\n\
             print('ready',flush=True)\n\
             time.sleep(1.5)\n\
             [c.close() for c in big+steady+first]\n\
             time.sleep(2.5)\n\
             [c.close() for c in second]\n\
             time.sleep(5)"
        ),
    );
    wait_ready(&mut client);
    let lines = finish_snapshot(start_snapshot(&pair.b.name, 7));
    let piles = close_waits(&pair.b.name);
    drop(client);
    assert_eq!(piles[&7443], (600, big_pid, "python3".into()), "{piles:?}");
    assert_eq!(
        piles[&9443],
        (100, steady_pid, "python3".into()),
        "{piles:?}"
    );
    assert_eq!(piles[&8443], (24, small_pid, "python3".into()), "{piles:?}");

    // The steady piles: in the last sample, with the figures ss shows.
    let last = last_findings(&lines, "close-wait");
    for (port, pid, severity) in [(7443, big_pid, "crit"), (9443, steady_pid, "warn")] {
        let count = piles[&port].0;
        let finding = last
            .iter()
            .find(|f| f["evidence"]["row"] == format!("close-wait pid={pid} :{port}"))
            .unwrap_or_else(|| panic!("no close-wait for :{port} in {last:?}"));
        assert_eq!(finding["severity"], severity, "{finding}");
        assert_eq!(finding["evidence"]["tab"], "sockets");
        let summary = text(finding, "summary");
        assert!(
            summary.starts_with(&format!(
                "PID {pid} (python3) holds {count} sockets in CLOSE_WAIT on :{port}, "
            )),
            "{summary}"
        );
        assert!(summary.ends_with("it does not close connections its peers closed"));
        let hint = text(finding, "hint");
        assert!(hint.contains(&format!("PID {pid} (python3)")), "{hint}");
        assert!(hint.contains("No sysctl frees CLOSE_WAIT"), "{hint}");
    }

    // The small pile (under warn) fired only while it grew, never at a
    // steady 12: at 24, or on the way there when a sample falls while
    // the client's closes are still reaching the server (a loaded host).
    let small: Vec<_> = findings(&lines, "close-wait")
        .into_iter()
        .filter(|f| f["evidence"]["row"] == format!("close-wait pid={small_pid} :8443"))
        .collect();
    assert!(!small.is_empty(), "the growing pile was never named");
    for finding in &small {
        let summary = text(finding, "summary");
        let held = number_after(summary, "holds");
        assert!(held > 12.0 && held <= 24.0, "{summary}");
        assert!(number_after(summary, "on :8443,") > 0.0, "{summary}");
        assert_eq!(finding["severity"], "warn");
    }
}

#[test]
fn live_view_names_close_wait_and_enter_shows_the_sockets() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("sockfind-cw") else {
        return;
    };
    let pair = VethPair::new("sockfind-cwl");
    let (_server, pid) = hoarder(&pair.b.name, 8443);
    let client = python_in(
        &pair.a.name,
        &format!(
            "import socket,time\n\
             c=[socket.create_connection(('{IP_B}',8443),timeout=5) for i in range(150)]\n\
             [s.close() for s in c]\n\
             print('ready',flush=True); time.sleep(30)"
        ),
    );
    let mut client = client;
    wait_ready(&mut client);
    let dir = std::env::temp_dir();
    tmux.start(
        80,
        24,
        &dir,
        &format!("{NETLENS} --no-capture --netns {}", pair.b.name),
    );
    let patience = Duration::from_secs(20);
    tmux.wait("close-wait in the header", patience, |s| {
        s.contains("close-wait").then_some(())
    });
    tmux.send_keys(&["!"]);
    // The list itself (its title), not the header's findings line, which
    // says the same words and may show before `!` is handled.
    let list = tmux.wait("the findings list", patience, |s| {
        (s.contains(" Findings ") && s.contains(&format!("close-wait pid={pid} :8443")))
            .then(|| s.to_string())
    });
    assert!(
        list.contains(&format!("PID {pid} (python3) holds 150 sockets")),
        "{list}"
    );
    assert!(
        list.contains(&format!("close-wait pid={pid} :8443")),
        "{list}"
    );
    tmux.send_keys(&["Enter"]);
    let screen = tmux.wait("the Sockets tab filtered", patience, |s| {
        s.contains(&format!("close-wait pid={pid} :8443"))
            .then(|| s.to_string())
            .filter(|s| s.contains("CLOSE-WAIT"))
    });
    // Only the pile's sockets: every socket row is CLOSE-WAIT on :8443.
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("198.18.0.")).collect();
    assert!(rows.len() >= 5, "{screen}");
    for row in rows {
        assert!(
            row.contains("CLOSE-WAIT") && row.contains(":8443"),
            "{row}\n{screen}"
        );
    }
}
