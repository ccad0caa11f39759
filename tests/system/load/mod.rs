//! `netlens load ...` end to end: each client against `load serve` (and the
//! HTTP client against nginx), counts compared between the two ends.
//!
//! Network safety: traffic goes to 127.0.0.1, or (root tests) between
//! namespaces this test creates, addressed from 198.18.0.0/15. Every run
//! has a duration of a few seconds at most; every server this test starts
//! has its own --duration cap and is killed by PID when the test ends.

use crate::common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod cli;
mod http;
mod pktgen;
mod stop;
mod tcp;
mod udp;

/// A `netlens load serve --json` child and the lines it printed so far.
struct Serve {
    _child: ChildGuard,
    port: u16,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Serve {
    fn start(netns: Option<&str>, bind: &str, extra: &[&str]) -> Serve {
        let mut command = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, NETLENS]);
                c
            }
            None => Command::new(NETLENS),
        };
        command
            .args([
                "load",
                "serve",
                "--json",
                "--port",
                "0",
                "--duration",
                "120s",
            ])
            .args(["--bind", bind])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("spawn load serve");
        let stdout = child.stdout.take().unwrap();
        let guard = ChildGuard(child);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        {
            let lines = lines.clone();
            thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    let value: Value = serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("serve printed non-JSON ({e}): {line}"));
                    if value["type"] == "listening" {
                        let _ = port_tx.send(value["port"].as_u64().unwrap() as u16);
                    } else {
                        lines.lock().unwrap().push(value);
                    }
                }
            });
        }
        let port = port_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("load serve did not say where it listens");
        Serve {
            _child: guard,
            port,
            lines,
        }
    }

    /// Waits until `done` holds for the served lines (or 5 s pass).
    fn wait_for(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let lines = self.lines.lock().unwrap().clone();
            if done(&lines) || Instant::now() > deadline {
                return lines;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Runs `netlens load ARGS` (in a namespace when given), killing it after
/// `limit`: a hang fails the test instead of blocking it.
fn netlens_load(netns: Option<&str>, args: &[&str], limit: Duration) -> Output {
    let mut command = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, NETLENS]);
            c
        }
        None => Command::new(NETLENS),
    };
    let child = command
        .arg("load")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens load");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.expect("wait for netlens load"),
        Err(_) => {
            // SAFETY: kill(2) on the PID of the child this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("netlens load {args:?} did not finish within {limit:?}");
        }
    }
}

/// The JSON lines of a successful run; the last one is the summary.
fn load_json(netns: Option<&str>, args: &[&str]) -> Vec<Value> {
    let output = netlens_load(netns, args, Duration::from_secs(30));
    assert!(
        output.status.success(),
        "netlens load {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = parse_lines(&output.stdout);
    let summary = lines.last().expect("a summary line");
    assert_eq!(summary["type"], "summary", "{summary}");
    lines
}

fn sum(lines: &[Value], kind: &str, key: &str) -> u64 {
    lines
        .iter()
        .filter(|l| l["kind"] == kind)
        .map(|l| l[key].as_u64().unwrap_or(0))
        .sum()
}

/// A free TCP port on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A scratch directory under the temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("netlens-{tag}-{}-{}", std::process::id(), now_ns()));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}
