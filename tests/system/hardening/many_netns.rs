//! Issue 38, defect 6: thousands of namespaces (any user can make them)
//! must not exhaust netlens's descriptors. Before, `--all-netns` kept six
//! descriptors open per namespace: 3,400 namespaces took 19,999 of 20,000,
//! every scrape failed and samples silently left namespaces out. Here 120
//! namespaces (`ip netns add`) meet a limit of 256 descriptors (set in the
//! child before exec): every namespace must still be in each sample, the
//! exporter must answer, and its descriptors must stay under half the
//! limit.

use super::writers_util::wait_within;
use crate::common::{ChildGuard, NETLENS, parse_lines};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const NAMESPACES: usize = 120;
const FD_LIMIT: u64 = 256;

/// `count` namespaces made (and deleted on drop) with one `ip -batch`.
struct ManyNetns {
    names: Vec<String>,
}

impl ManyNetns {
    fn new(tag: &str, count: usize) -> ManyNetns {
        let names: Vec<String> = (0..count)
            .map(|i| format!("netlens-t{}-{tag}{i}", std::process::id()))
            .collect();
        let many = ManyNetns { names };
        many.batch("add");
        many
    }

    fn batch(&self, verb: &str) {
        let script: String = self
            .names
            .iter()
            .map(|n| format!("netns {verb} {n}\n"))
            .collect();
        let mut ip = Command::new("ip")
            .args(["-force", "-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("ip -batch");
        ip.stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let status = ip.wait().unwrap();
        if verb == "add" {
            assert!(status.success(), "ip netns add (batch) failed");
        }
    }
}

impl Drop for ManyNetns {
    fn drop(&mut self) {
        self.batch("del");
    }
}

/// netlens `args` with RLIMIT_NOFILE at FD_LIMIT (soft and hard).
fn limited(args: &[&str]) -> Command {
    let mut command = Command::new(NETLENS);
    command.args(args).stdin(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; it runs in the child only.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: FD_LIMIT,
                rlim_max: FD_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

fn missing<'a>(names: &'a [String], labels: &[String]) -> Vec<&'a String> {
    names.iter().filter(|n| !labels.contains(n)).collect()
}

#[test]
fn snapshot_covers_every_namespace_under_a_low_descriptor_limit() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip"]) else {
        return;
    };
    let many = ManyNetns::new("fds", NAMESPACES);
    let child = limited(&[
        "snapshot",
        "--all-netns",
        "--json",
        "--count",
        "2",
        "--interval",
        "500ms",
        "--no-capture",
        "--no-bpf",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut child = ChildGuard(child);
    let mut stdout = child.0.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.read_to_end(&mut text);
        text
    });
    let status = wait_within(&mut child, Duration::from_secs(60));
    let mut stderr = String::new();
    let _ = child.0.stderr.take().unwrap().read_to_string(&mut stderr);
    assert!(status.success(), "snapshot --all-netns: {status}: {stderr}");
    let samples = parse_lines(&reader.join().unwrap());
    assert_eq!(samples.len(), 2, "{stderr}");
    for sample in &samples {
        let labels: Vec<String> = sample["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["label"].as_str().unwrap_or_default().to_string())
            .collect();
        let left_out = missing(&many.names, &labels);
        assert!(
            left_out.is_empty(),
            "{} of {NAMESPACES} namespaces left out of a sample under {FD_LIMIT} descriptors, e.g. {:?}",
            left_out.len(),
            left_out.first()
        );
    }
}

/// GET /metrics on `addr`: the body, or why not.
fn scrape(addr: SocketAddr) -> Result<String, String> {
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(3)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut text = String::new();
    stream
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if !text.starts_with("HTTP/1.1 200") {
        return Err(format!("answer: {:?}", text.lines().next()));
    }
    Ok(text)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

#[test]
fn export_answers_scrapes_and_bounds_descriptors_with_many_namespaces() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip"]) else {
        return;
    };
    let many = ManyNetns::new("exp", NAMESPACES);
    let child = limited(&[
        "export",
        "--listen",
        "127.0.0.1:0",
        "--all-netns",
        "--interval",
        "500ms",
        "--no-bpf",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut child = ChildGuard(child);
    let pid = child.pid();
    let stdout = child.0.stdout.take().unwrap();
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = send.send(line);
    });
    let line = lines
        .recv_timeout(Duration::from_secs(30))
        .expect("netlens export did not announce its address within 30s");
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    // Three seconds of scrapes, a few samples apart.
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut most_fds = 0;
    let mut last = String::new();
    while Instant::now() < deadline {
        most_fds = most_fds.max(open_fds(pid));
        last = scrape(addr).unwrap_or_else(|e| {
            panic!("a scrape failed with {NAMESPACES} namespaces and {FD_LIMIT} descriptors: {e}")
        });
        std::thread::sleep(Duration::from_millis(250));
    }
    let left_out: Vec<&String> = many
        .names
        .iter()
        .filter(|n| !last.contains(&format!("netlens_netns_info{{netns=\"{n}\"")))
        .collect();
    assert!(
        left_out.is_empty(),
        "{} of {NAMESPACES} namespaces have no netlens_netns_info, e.g. {:?}",
        left_out.len(),
        left_out.first()
    );
    assert!(
        most_fds < FD_LIMIT as usize / 2,
        "export held {most_fds} descriptors (limit {FD_LIMIT})"
    );
    assert!(child.0.try_wait().unwrap().is_none(), "export exited");
}
