//! Issue 38, defect 10: an output the user names may be an existing
//! character device or FIFO, as tcpdump allows (`capture -w /dev/null`
//! said "it already exists"). An existing regular file and a symlink
//! planted in its place (even one to /dev/null) are still refused, and a
//! FIFO nobody reads is an error after a few seconds, not a hang.

use super::writers_util::{Running, TempDir, captured, test_port, udp_to_loopback, wait_within};
use crate::common::ChildGuard;
use std::os::unix::fs::FileTypeExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// netlens `args` must exit 0 within 30 s.
fn succeeds(args: &[&str]) {
    let running = Running::start(args);
    let (status, stderr) = running.wait(Duration::from_secs(30));
    assert!(status.success(), "netlens {args:?}: {status}: {stderr}");
}

/// netlens `args` must fail within 30 s with one line containing `why`.
fn refused(args: &[&str], why: &str) {
    let running = Running::start(args);
    let (status, stderr) = running.wait(Duration::from_secs(30));
    assert_eq!(
        status.code(),
        Some(1),
        "netlens {args:?}: {status}: {stderr}"
    );
    assert!(stderr.contains(why), "netlens {args:?}: {stderr}");
}

fn mkfifo(path: &std::path::Path) {
    let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

#[test]
fn every_writer_writes_to_dev_null() {
    if crate::common::need_root(&[]) {
        return;
    }
    succeeds(&["capture", "-i", "lo", "--duration", "1s", "-w", "/dev/null"]);
    succeeds(&[
        "record",
        "--interval",
        "200ms",
        "--duration",
        "1s",
        "-o",
        "/dev/null",
    ]);
    succeeds(&[
        "snapshot",
        "--count",
        "1",
        "--interval",
        "200ms",
        "--record",
        "/dev/null",
    ]);
    let null = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(
        null.file_type().is_char_device(),
        "/dev/null is no longer a device"
    );
}

#[test]
fn a_fifo_with_a_reader_gets_the_pcap() {
    if crate::common::need_root(&["tcpdump"]) {
        return;
    }
    let dir = TempDir::new("fifo-reader");
    let fifo = dir.join("packets");
    mkfifo(&fifo);
    // tcpdump -r - reads the FIFO (the shell opens it for reading).
    let reader = Command::new("sh")
        .args([
            "-c",
            "exec tcpdump -n -r - < \"$0\"",
            fifo.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = ChildGuard(reader);
    let port = test_port(2);
    let filter = format!("udp port {port}");
    let path = fifo.to_str().unwrap();
    let mut running = Running::start(&["capture", "-i", "lo", "-f", &filter, "-w", path]);
    running.wait_for_line("capturing on", Duration::from_secs(10));
    udp_to_loopback(port, 50);
    std::thread::sleep(Duration::from_millis(300));
    running.signal(libc::SIGTERM);
    let (status, stderr) = running.wait(Duration::from_secs(10));
    assert!(status.success(), "capture -w FIFO: {status}: {stderr}");
    let saved = captured(&stderr);
    assert!(saved >= 50, "{saved} of 50 packets: {stderr}");
    wait_within(&mut reader, Duration::from_secs(10));
    let mut lines = String::new();
    use std::io::Read;
    reader
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut lines)
        .unwrap();
    assert_eq!(lines.lines().count(), saved, "tcpdump -r - read: {lines}");
}

#[test]
fn a_fifo_without_a_reader_is_an_error_not_a_hang() {
    if crate::common::need_root(&[]) {
        return;
    }
    let dir = TempDir::new("fifo-alone");
    let fifo = dir.join("nobody-reads");
    mkfifo(&fifo);
    let started = Instant::now();
    refused(
        &["capture", "-i", "lo", "-w", fifo.to_str().unwrap()],
        "no process opened for reading",
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_regular_file_and_a_planted_symlink_to_dev_null_are_still_refused() {
    if crate::common::need_root(&["setpriv"]) {
        return;
    }
    let dir = TempDir::new("refused");
    let file = dir.join("exists.pcap");
    std::fs::write(&file, b"keep").unwrap();
    refused(
        &[
            "capture",
            "-i",
            "lo",
            "--duration",
            "1s",
            "-w",
            file.to_str().unwrap(),
        ],
        "already exists",
    );
    let recording = dir.join("exists.nlrec");
    std::fs::write(&recording, b"keep").unwrap();
    let path = recording.to_str().unwrap();
    refused(
        &["record", "--duration", "1s", "-o", path],
        "already exists",
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    assert_eq!(std::fs::read(&recording).unwrap(), b"keep");

    // Another user (nobody) plants a link to /dev/null in a shared,
    // sticky directory where netlens is told to write.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let link = dir.join("planted.pcap");
    let planted = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "ln",
            "-s",
            "/dev/null",
        ])
        .arg(&link)
        .status()
        .unwrap();
    assert!(planted.success(), "setpriv ln -s failed");
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::symlink_metadata(&link).unwrap());
    assert_eq!(owner, 65534);
    let path = link.to_str().unwrap();
    refused(
        &["capture", "-i", "lo", "--duration", "1s", "-w", path],
        "symbolic link",
    );
    refused(&["record", "--duration", "1s", "-o", path], "symbolic link");
    refused(
        &["snapshot", "--count", "1", "--record", path],
        "symbolic link",
    );
}
