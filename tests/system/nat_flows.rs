//! A flow that conntrack translates shows both sides: a client connects to
//! a router's address, the router DNATs it to the server behind it, and
//! netlens, capturing in the router, must give both flows it sees (the
//! request before the DNAT and after it) the entry's two tuples exactly as
//! `conntrack -L` lists them, its state and which side each flow is: in
//! `snapshot --json`, in a recording's `replay --json`, and in the Flows
//! tab and the flow screen of the live view in tmux (80x24).

use crate::common::path_chain::{self, Chain};
use crate::common::{self, ChildGuard, NETLENS};
use common::tmux::Tmux;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The router's own address the client asks for, and the port.
const PUBLIC: &str = "198.18.1.1:80";

/// A client in the chain's client namespace that connects to PUBLIC,
/// prints its local address, sends a little every 100 ms for `seconds`,
/// then closes.
fn client(chain: &Chain, seconds: u32) -> ChildGuard {
    let (host, port) = PUBLIC.split_once(':').unwrap();
    let script = format!(
        "import socket, time\n\
         s = socket.create_connection(('{host}', {port}))\n\
         print('%s:%d' % s.getsockname(), flush=True)\n\
         for _ in range({seconds} * 10):\n\
         \x20   s.sendall(b'x' * 100)\n\
         \x20   time.sleep(0.1)\n\
         s.close()\n"
    );
    common::python_in(&chain.client.name, &script)
}

/// The conntrack entry of `local` (the client's address) in the router, as
/// `conntrack -L` prints it: (original src, dst), (reply src, dst), state.
fn conntrack_entry(chain: &Chain, local: &str) -> ((String, String), (String, String), String) {
    let (ip, port) = local.split_once(':').unwrap();
    let out = common::ns_exec(
        &chain.r1.name,
        &["conntrack", "-L", "-p", "tcp", "--sport", port],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains(&format!("src={ip} ")))
        .unwrap_or_else(|| panic!("no conntrack entry for {local}: {text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let values = |key: &str| -> Vec<&str> {
        let prefix = format!("{key}=");
        words
            .iter()
            .filter_map(|w| w.strip_prefix(&prefix))
            .collect()
    };
    let (src, dst, sport, dport) = (
        values("src"),
        values("dst"),
        values("sport"),
        values("dport"),
    );
    let end = |i: usize, ip: &[&str], port: &[&str]| format!("{}:{}", ip[i], port[i]);
    (
        (end(0, &src, &sport), end(0, &dst, &dport)),
        (end(1, &src, &sport), end(1, &dst, &dport)),
        words[3].to_string(),
    )
}

/// The two flows of the client's connection in one sample's flows[]:
/// before the DNAT and after it.
fn flows_of<'a>(sample: &'a Value, local: &str) -> Vec<&'a Value> {
    let flows = sample["flows"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    flows
        .iter()
        .filter(|f| f["src"] == local || f["dst"] == local)
        .collect()
}

fn check_flows(flows: &[&Value], entry: &((String, String), (String, String), String), what: &str) {
    let ((osrc, odst), (rsrc, rdst), state) = entry;
    assert_eq!(flows.len(), 2, "{what}: {flows:?}");
    for flow in flows {
        let nat = &flow["nat"];
        assert_eq!(nat["kind"], "dnat", "{what}: {flow}");
        assert_eq!(nat["original"]["src"], osrc.as_str(), "{what}: {flow}");
        assert_eq!(nat["original"]["dst"], odst.as_str(), "{what}: {flow}");
        assert_eq!(nat["reply"]["src"], rsrc.as_str(), "{what}: {flow}");
        assert_eq!(nat["reply"]["dst"], rdst.as_str(), "{what}: {flow}");
        assert_eq!(nat["state"], state.as_str(), "{what}: {flow}");
        // Which side: the flow to the public address is the original one.
        let to_public = flow["dst"] == PUBLIC || flow["src"] == PUBLIC;
        assert_eq!(nat["translated"], !to_public, "{what}: {flow}");
    }
}

#[test]
fn a_dnat_flow_shows_both_tuples_as_conntrack_lists_them() {
    if common::need_root(&["ip", "python3", "iptables", "conntrack", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("nat") else {
        return;
    };
    let chain = Chain::new("nat");
    let to = format!("{}:{}", path_chain::SERVER, path_chain::PORT);
    let rule = [
        "iptables",
        "-w",
        "-t",
        "nat",
        "-A",
        "PREROUTING",
        "-p",
        "tcp",
        "-d",
        "198.18.1.1",
        "--dport",
        "80",
        "-j",
        "DNAT",
        "--to-destination",
        &to,
    ];
    let out = common::ns_exec(&chain.r1.name, &rule);
    assert!(out.status.success(), "{out:?}");
    let router = chain.r1.path();
    let dir = common::scratch_dir("nat");
    let file = dir.join(format!("nat-{}.nlrec", std::process::id()));
    let _ = std::fs::remove_file(&file);

    // The server accepts and reads until the client closes.
    let listener = chain.listener.try_clone().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
            let mut sink = Vec::new();
            let _ = stream.read_to_end(&mut sink);
        }
    });
    let mut recorder = ChildGuard(
        Command::new(NETLENS)
            .args(["record", "-o", file.to_str().unwrap(), "--netns", &router])
            .args(["--interval", "1s", "--duration", "60s", "--filter", "tcp"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let live = format!("{NETLENS} --netns {router} --interval 1s --tab flows --filter tcp");
    tmux.start(80, 24, &dir, &live);
    tmux.wait("the Flows tab", Duration::from_secs(20), |s| {
        s.contains("Flows:").then_some(())
    });
    common::wait_until("a recorded sample", Duration::from_secs(60), || {
        std::fs::metadata(&file).is_ok_and(|m| m.len() > 1024)
    });

    let mut client = client(&chain, 6);
    let mut local = String::new();
    BufReader::new(client.0.stdout.as_mut().unwrap())
        .read_line(&mut local)
        .unwrap();
    let local = local.trim().to_string();
    let snapshot = common::spawn_snapshot(&[
        "--netns",
        &router,
        "--section",
        "flows",
        "--count",
        "2",
        "--interval",
        "1s",
        "--filter",
        "tcp",
    ]);
    let entry = conntrack_entry(&chain, &local);
    assert_eq!(entry.0, (local.clone(), PUBLIC.to_string()), "{entry:?}");
    assert_eq!(entry.1, (to.clone(), local.clone()), "{entry:?}");

    // snapshot --json: the last sample, both flows.
    let samples = common::snapshot_samples(snapshot);
    let last = samples.last().expect("a snapshot sample");
    check_flows(&flows_of(last, &local), &entry, "snapshot");

    // Live: the NAT column on both rows, then the flow screen of the first.
    let screen = tmux.wait("the NAT column", Duration::from_secs(20), |s| {
        let before = format!("dnat ⇒ {to}");
        let after = format!("dnat ⇐ {PUBLIC}");
        (s.contains("NAT") && s.contains(&before) && s.contains(&after)).then(|| s.to_string())
    });
    for line in screen.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    tmux.send_keys(&["Enter"]);
    let detail = tmux.wait(
        "the flow screen's conntrack line",
        Duration::from_secs(20),
        |s| s.contains("conntrack").then(|| s.to_string()),
    );
    let line = detail.lines().find(|l| l.contains("conntrack")).unwrap();
    assert!(
        line.contains("ESTABLISHED dnat:") && line.contains(&format!("{local} → {PUBLIC} ⇒ {to}")),
        "{detail}"
    );

    // The recording replays the same.
    let started = Instant::now();
    assert_eq!(client.0.wait().unwrap().code(), Some(0));
    std::thread::sleep(Duration::from_secs(1).saturating_sub(started.elapsed()));
    // SAFETY: kill(2) on the PID of the child this test started.
    unsafe { libc::kill(recorder.pid() as i32, libc::SIGINT) };
    assert!(recorder.0.wait().unwrap().success());
    let replay = Command::new(NETLENS)
        .args(["replay", "--json", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(replay.status.success());
    let replayed = common::parse_lines(&replay.stdout);
    let with_nat = replayed
        .iter()
        .rev()
        .map(|s| flows_of(s, &local))
        .find(|flows| flows.len() == 2 && flows.iter().all(|f| f["nat"]["state"] == entry.2))
        .expect("no replayed sample with both flows translated while established");
    check_flows(&with_nat, &entry, "replay");
    let _ = std::fs::remove_file(&file);
}
