//! Socket owners on a host holding half a million open files elsewhere:
//! netlens looks only at the processes in the watched namespace, so its
//! samples stay on time and the owners agree with `ss -tanp` there, both
//! with the eBPF iterator and with the /proc walk (NETLENS_OWNERS=proc).

use crate::common::python_in;
use crate::common::socket_findings::wait_ready;
use crate::common::{ChildGuard, NETLENS, parse_lines, run};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

/// 26 processes x 19,500 files (under a hard RLIMIT_NOFILE of 20,000,
/// which root without CAP_SYS_RESOURCE cannot raise): the load other
/// users put on /proc.
const HOLDERS: usize = 26;
const FILES_EACH: usize = 19_500;
const INTERVAL_S: f64 = 1.0;
const SAMPLES: u32 = 8;

/// A namespace `nlo-<pid>-<tag>` with lo up; deleted on drop.
struct Space(String);

impl Space {
    fn new(tag: &str) -> Space {
        let name = format!("nlo-{}-{tag}", std::process::id());
        // A stale one of that name can only be from a crashed run of ours.
        let _ = Command::new("ip")
            .args(["netns", "del", &name])
            .stderr(Stdio::null())
            .status();
        run("ip", &["netns", "add", &name]);
        run("ip", &["-n", &name, "link", "set", "lo", "up"]);
        Space(name)
    }
}

impl Drop for Space {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// A process in `ns` holding FILES_EACH descriptors of /dev/null until
/// killed; "ready" once it holds them all.
fn holder(ns: &str) -> ChildGuard {
    let script = format!(
        "import os, resource, time\n\
         hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]\n\
         resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))\n\
         fds = [os.open('/dev/null', os.O_RDONLY) for _ in range({n})]\n\
         print('ready', flush=True)\n\
         time.sleep(120)\n",
        n = FILES_EACH
    );
    python_in(ns, &script)
}

/// A server on 127.0.0.1:7100 in `ns` and a client that opens a new
/// connection every 50 ms (at most 300, at most 30 s), keeping the newest
/// 10; it stops churning after `churn_s` seconds and holds the last ones.
fn churn(ns: &str, churn_s: u32) -> ChildGuard {
    let script = format!(
        "import socket, threading, time\n\
         srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         srv.bind(('127.0.0.1', 7100)); srv.listen(64)\n\
         held = []\n\
         def serve():\n\
         \x20   while True:\n\
         \x20       c, _ = srv.accept(); held.append(c)\n\
         \x20       while len(held) > 10: held.pop(0).close()\n\
         threading.Thread(target=serve, daemon=True).start()\n\
         print('ready', flush=True)\n\
         mine = []\n\
         end = time.time() + {churn_s}\n\
         for _ in range(300):\n\
         \x20   if time.time() > end: break\n\
         \x20   mine.append(socket.create_connection(('127.0.0.1', 7100)))\n\
         \x20   while len(mine) > 10: mine.pop(0).close()\n\
         \x20   time.sleep(0.05)\n\
         time.sleep(30)\n"
    );
    python_in(ns, &script)
}

/// (local, peer) -> (pid, process) of each socket `ss -tanp` shows a
/// process for in `ns`.
fn ss_owners(ns: &str) -> BTreeMap<(String, String), (u32, String)> {
    let out = run("ip", &["netns", "exec", ns, "ss", "-tanpH"]);
    let mut owners = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(users) = fields.iter().find(|f| f.starts_with("users:((")) else {
            continue;
        };
        // users:(("python3",pid=42,fd=3))
        let name = users.split('"').nth(1).unwrap_or("").to_string();
        let pid = users
            .split("pid=")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        owners.insert((fields[3].to_string(), fields[4].to_string()), (pid, name));
    }
    owners
}

/// `netlens snapshot` of `ns`'s sockets, SAMPLES samples.
fn snapshot(ns: &str, proc_only: bool) -> Vec<Value> {
    let mut command = Command::new(NETLENS);
    command
        .args(["snapshot", "--json", "--no-capture", "--section", "sockets"])
        .args(["--interval", "1s", "--count", &SAMPLES.to_string()])
        .args(["--netns", ns])
        .stdin(Stdio::null());
    if proc_only {
        command.env("NETLENS_OWNERS", "proc");
    }
    let out = command.output().expect("netlens snapshot");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_lines(&out.stdout)
}

fn sockets(sample: &Value) -> &Vec<Value> {
    sample["sockets"].as_array().expect("sockets")
}

/// Every socket's (local, peer) as ss prints them -> (pid, process).
fn netlens_owners(sample: &Value) -> BTreeMap<(String, String), (u32, String)> {
    sockets(sample)
        .iter()
        .filter_map(|s| {
            let pid = s["pid"].as_u64()? as u32;
            let name = s["users"][0]["process"].as_str()?.to_string();
            // JSON's unconnected peer "0.0.0.0:0" is ss's "0.0.0.0:*".
            let peer = s["peer"].as_str()?;
            let peer = match peer.strip_suffix(":0") {
                Some(address) => format!("{address}:*"),
                None => peer.to_string(),
            };
            let key = (s["local"].as_str()?.to_string(), peer);
            Some((key, (pid, name)))
        })
        .collect()
}

fn check(ns: &str, proc_only: bool) {
    let label = if proc_only { "/proc" } else { "default" };
    let _churn = {
        let mut churn = churn(ns, 4);
        wait_ready(&mut churn);
        churn
    };
    let samples = snapshot(ns, proc_only);
    assert_eq!(samples.len(), SAMPLES as usize, "{label}");
    let times: Vec<f64> = samples.iter().map(|s| s["t"].as_f64().unwrap()).collect();
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!("owners ({label}): sample gaps {gaps:.3?}");
    for gap in &gaps {
        assert!(
            *gap < 2.0 * INTERVAL_S,
            "{label}: a sample came {gap:.2} s after the one before: {gaps:?}"
        );
    }
    let pending: usize = samples
        .iter()
        .map(|s| {
            sockets(s)
                .iter()
                .filter(|x| x["owner_pending"] == true)
                .count()
        })
        .sum();
    eprintln!("owners ({label}): {pending} socket rows pending over {SAMPLES} samples");
    // The churn has stopped by the last sample: compare it with ss.
    let ss = ss_owners(ns);
    let ours = netlens_owners(samples.last().unwrap());
    assert!(
        ss.len() >= 20,
        "{label}: ss shows {} owned sockets",
        ss.len()
    );
    for (key, owner) in &ss {
        assert_eq!(
            ours.get(key),
            Some(owner),
            "{label}: {key:?}: netlens {:?} vs ss -tanp {owner:?}",
            ours.get(key)
        );
    }
}

#[test]
fn owners_match_ss_beside_half_a_million_files_in_another_namespace() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "python3", "ss"]) else {
        return;
    };
    let far = Space::new("far");
    let mut holders: Vec<ChildGuard> = (0..HOLDERS).map(|_| holder(&far.0)).collect();
    for h in &mut holders {
        wait_ready(h);
    }
    // The two ways at once, each watching a namespace of its own: the
    // same load on /proc, half the waiting.
    let (iterator, walk) = (Space::new("w"), Space::new("p"));
    std::thread::scope(|scope| {
        let by_iterator = scope.spawn(|| check(&iterator.0, false));
        check(&walk.0, true);
        by_iterator.join().expect("the eBPF iterator's check");
    });
    drop(holders);
}
