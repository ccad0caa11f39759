//! Helpers of the writer tests (stdout_errors, stop_signals,
//! device_outputs, many_netns): a temporary directory, a child with a
//! deadline, its stderr lines as they come, loopback UDP.

use crate::common::{ChildGuard, NETLENS};
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A directory of this test's, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("netlens-h38w-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A netlens child whose stderr lines arrive on `lines` as it prints them.
pub struct Running {
    pub child: ChildGuard,
    pub lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    /// Starts netlens with `args`, stdout to /dev/null.
    pub fn start(args: &[&str]) -> Running {
        let mut child = Command::new(NETLENS)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn netlens");
        let stderr = child.stderr.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child: ChildGuard(child),
            lines,
            seen: Vec::new(),
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.pid() as i32
    }

    /// Waits until a stderr line contains `needle` (panics after `within`).
    pub fn wait_for_line(&mut self, needle: &str, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(needle);
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(_) => panic!(
                    "netlens {} printed no line with {needle:?} within {within:?}; stderr: {:?}",
                    self.pid(),
                    self.seen
                ),
            }
        }
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on the pid of our own child, not yet reaped.
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0);
    }

    /// Waits for the exit (killing it and panicking after `within`);
    /// returns the status and the whole stderr.
    pub fn wait(mut self, within: Duration) -> (ExitStatus, String) {
        let status = wait_within(&mut self.child, within);
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(line);
        }
        (status, self.seen.join("\n"))
    }
}

/// Waits for `child`, killing it (by its PID) and panicking after `within`.
pub fn wait_within(child: &mut ChildGuard, within: Duration) -> ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.0.kill();
            let _ = child.0.wait();
            panic!("netlens {} still ran after {within:?}: killed", child.pid());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `count` 100-byte datagrams to 127.0.0.1:`port` (loopback only).
pub fn udp_to_loopback(port: u16, count: usize) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..count {
        let _ = socket.send_to(&[0x5a; 100], ("127.0.0.1", port));
        // Paced: the capture ring must not drop any.
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A UDP port for this test process's capture filter, so other tests'
/// loopback traffic does not match it.
pub fn test_port(offset: u16) -> u16 {
    30000 + (std::process::id() % 10000) as u16 * 3 + offset
}

/// The packets `tcpdump -r FILE` reads from a pcap (it must read it whole).
pub fn tcpdump_count(path: &Path) -> usize {
    let out = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(path)
        .output()
        .expect("tcpdump");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("truncated"),
        "tcpdump -r {}: {stderr}",
        path.display()
    );
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// "N packets captured" from netlens capture's stderr.
pub fn captured(stderr: &str) -> usize {
    stderr
        .lines()
        .find_map(|l| l.strip_suffix(" packets captured")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no 'packets captured' line in: {stderr}"))
}

/// `netlens replay --info FILE`'s stdout (it must succeed).
pub fn replay_info(path: &Path) -> String {
    let out = Command::new(NETLENS)
        .args(["replay", "--info"])
        .arg(path)
        .output()
        .expect("netlens replay --info");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "replay --info {}: {}{text}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}
