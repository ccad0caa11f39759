//! Findings per namespace under `--all-netns`, against the kernel: a server
//! in one test namespace that accepts and never closes, a client in the
//! other that closes its ends, so the server's namespace holds a pile of
//! CLOSE_WAIT sockets (as `ss -tn state close-wait` inside it counts them).
//! `snapshot --all-netns --json` must raise close-wait in that namespace
//! (its evidence carries the namespace's id, its text the server's pid),
//! and each namespace's `findings` count must be the findings carrying its
//! id: the server's namespace at least one, the client's none.
//!
//! Network safety: traffic only between this test's two namespaces
//! (198.18.0.1 -> 198.18.0.2); 150 connections; every helper ends by
//! itself within 40 s and is killed by PID on drop; the namespaces, and
//! with them every socket, go on drop.

use crate::common;
use crate::common::python_in;

use common::socket_findings::{ss_rows, wait_ready};
use common::{IP_B, NETLENS, VethPair};
use serde_json::Value;
use std::process::Command;

#[test]
fn close_wait_counts_in_the_namespace_that_holds_the_pile() {
    if crate::common::need_root(&["ip", "python3", "ss"]) {
        return;
    }
    let pair = VethPair::new("nsfind");
    let mut server = python_in(
        &pair.b.name,
        &format!(
            "import socket,os,time\n\
             s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('{IP_B}',8443)); s.listen(1024); s.settimeout(1)\n\
             print(os.getpid()); print('ready',flush=True)\n\
             held=[]; end=time.time()+40\n\
             while time.time()<end:\n\
             \x20   try: held.append(s.accept()[0])\n\
             \x20   except socket.timeout: pass"
        ),
    );
    let pid: u32 = wait_ready(&mut server)[0].trim().parse().unwrap();
    let mut client = python_in(
        &pair.a.name,
        &format!(
            "import socket,time\n\
             c=[socket.create_connection(('{IP_B}',8443),timeout=5) for i in range(150)]\n\
             time.sleep(1)\n\
             [x.close() for x in c]\n\
             print('ready',flush=True)\n\
             time.sleep(20)"
        ),
    );
    wait_ready(&mut client);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let piled = loop {
        let rows = ss_rows(&pair.b.name, &["-tn", "state", "close-wait"]);
        if rows.len() >= 150 || std::time::Instant::now() > deadline {
            break rows.len();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(piled, 150, "ss -tn state close-wait in {}", pair.b.name);

    let out = Command::new(NETLENS)
        .args(["snapshot", "--all-netns", "--json", "--no-capture"])
        .args(["--count", "4", "--interval", "1s"])
        .output()
        .expect("netlens snapshot");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples = common::parse_lines(&out.stdout);
    let last = samples.last().expect("samples");
    let namespaces = last["namespaces"].as_array().expect("namespaces");
    let id_of = |name: &str| {
        namespaces
            .iter()
            .find(|n| n["label"] == name)
            .and_then(|n| n["id"].as_u64())
            .unwrap_or_else(|| panic!("no namespace {name}: {namespaces:?}"))
    };
    let (server_ns, client_ns) = (id_of(&pair.b.name), id_of(&pair.a.name));
    let findings = last["findings"].as_array().expect("findings");
    let in_ns = |id: u64| -> Vec<&Value> {
        findings
            .iter()
            .filter(|f| f["evidence"]["netns"].as_u64() == Some(id))
            .collect()
    };
    let close_wait: Vec<&Value> = in_ns(server_ns)
        .into_iter()
        .filter(|f| f["id"] == "close-wait")
        .collect();
    assert_eq!(close_wait.len(), 1, "{findings:?}");
    let text = close_wait[0].to_string();
    eprintln!("close-wait in {}: {text}", pair.b.name);
    assert!(text.contains("150"), "the pile's size: {text}");
    assert!(
        text.contains(&pid.to_string()),
        "the server's pid {pid}: {text}"
    );
    assert!(in_ns(client_ns).is_empty(), "{findings:?}");
    // Every namespace's count is the findings carrying its id.
    for ns in namespaces {
        let id = ns["id"].as_u64().unwrap();
        assert_eq!(
            ns["findings"].as_u64(),
            Some(in_ns(id).len() as u64),
            "{ns}\n{findings:?}"
        );
    }
    let server_row = namespaces.iter().find(|n| n["id"] == server_ns).unwrap();
    assert!(server_row["findings"].as_u64() >= Some(1), "{server_row}");
}
