//! Issue 38, defect 8: every command that prints ends quietly with status
//! 0 when its reader closed the pipe (as `ss | head` does) and with one
//! line and a non-zero status on a full device. Before: `man`, `explain`,
//! `completions` and `--print-config` panicked (status 101) on both;
//! `conns`, `replay --info` and `trace` exited 1 on a closed pipe.

use super::writers_util::{TempDir, test_port, udp_to_loopback};
use crate::common::{ChildGuard, NETLENS};
use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The write end of a pipe whose read end is already closed: the first
/// write gets EPIPE, as `| head` gives once head has its line.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two new descriptors, which we then own.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both were just created by pipe2 and are owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

/// Runs netlens `args` with stdout `out` and a 60 s deadline; returns
/// the status code (None: killed by a signal) and stderr.
fn run_into(args: &[&str], out: Stdio) -> (Option<i32>, String) {
    let child = Command::new(NETLENS)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens");
    let mut child = ChildGuard(child);
    let stderr = child.0.stderr.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let status = super::writers_util::wait_within(&mut child, Duration::from_secs(60));
    (status.code(), reader.join().unwrap())
}

/// `args` printing into a closed pipe and into /dev/full.
fn check_printer(args: &[&str]) -> Vec<String> {
    let mut wrong = Vec::new();
    let (code, stderr) = run_into(args, Stdio::from(closed_pipe()));
    if code != Some(0) || stderr.contains("panicked") || stderr.contains("Broken pipe") {
        wrong.push(format!(
            "{args:?} | closed pipe: status {code:?}, stderr {stderr:?}"
        ));
    }
    let full = File::options().write(true).open("/dev/full").unwrap();
    let (code, stderr) = run_into(args, Stdio::from(full));
    let last = stderr.lines().last().unwrap_or_default();
    let one_line = last.starts_with("netlens: ") && last.contains("No space left on device");
    if matches!(code, Some(0) | Some(101) | None) || stderr.contains("panicked") || !one_line {
        wrong.push(format!(
            "{args:?} > /dev/full: status {code:?}, stderr {stderr:?}"
        ));
    }
    wrong
}

/// The sample count `replay --info` gives for `path`.
fn recorded_samples(path: &str) -> u64 {
    let out = Command::new(NETLENS)
        .args(["replay", "--info", path])
        .output()
        .expect("replay --info");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|line| line.strip_prefix("samples:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sample count in {text}"))
}

fn check_all(printers: &[Vec<&str>]) {
    let wrong: Vec<String> = printers.iter().flat_map(|a| check_printer(a)).collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn printers_end_quietly_on_a_closed_pipe_and_say_one_line_on_a_full_device() {
    check_all(&[
        vec!["man"],
        vec!["explain", "TcpExt.ListenDrops"],
        vec!["completions", "bash"],
        vec!["--print-config"],
    ]);
}

#[test]
fn sampling_printers_end_quietly_on_a_closed_pipe_and_say_one_line_on_a_full_device() {
    if crate::common::need_root(&[]) {
        return;
    }
    let dir = TempDir::new("stdout");
    // A recording and a pcap to print. Replay's rates need two samples; a
    // loaded box may give a short recording only one, so it records again
    // for longer until it has two.
    let recording = (1..=3)
        .map(|attempt| {
            let path = dir.join(&format!("r{attempt}.nlrec"));
            let path = path.to_str().unwrap().to_string();
            let seconds = format!("{}s", 3 * attempt);
            let args = [
                "record",
                "--interval",
                "200ms",
                "--duration",
                &seconds,
                "--no-capture",
                "-o",
                &path,
            ];
            let (code, stderr) = run_into(&args, Stdio::null());
            assert_eq!(code, Some(0), "record: {stderr}");
            path
        })
        .find(|path| recorded_samples(path) >= 2)
        .expect("a recording of two samples in three tries");
    let recording = recording.as_str();
    let pcap = dir.join("p.pcap");
    let pcap = pcap.to_str().unwrap();
    let port = test_port(1);
    let filter = format!("udp port {port}");
    let capture = Command::new(NETLENS)
        .args([
            "capture",
            "-i",
            "lo",
            "-c",
            "5",
            "--duration",
            "20s",
            "-f",
            &filter,
            "-w",
            pcap,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut capture = ChildGuard(capture);
    // Bounded: 40 rounds of 5 datagrams, until the capture has its 5.
    for _ in 0..40 {
        udp_to_loopback(port, 5);
        if capture.0.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = super::writers_util::wait_within(&mut capture, Duration::from_secs(25));
    assert!(status.success(), "capture for the test pcap: {status}");
    check_all(&[
        vec![
            "snapshot",
            "--count",
            "1",
            "--interval",
            "200ms",
            "--no-capture",
        ],
        vec![
            "snapshot",
            "--json",
            "--count",
            "1",
            "--interval",
            "200ms",
            "--no-capture",
        ],
        vec!["replay", "--info", recording],
        vec!["replay", "--json", recording],
        vec!["read", pcap],
        vec!["read", "--flows", pcap],
        vec!["trace", "--count", "1", "--max-ttl", "2", "127.0.0.1"],
        vec!["conns", "--duration", "1s"],
    ]);
}
