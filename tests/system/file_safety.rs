//! Files netlens creates as root: never through a symlink another user
//! planted (existing target or dangling), never over an existing file, a
//! one-line refusal and a non-zero exit; and a full disk named as such,
//! with the whole packets written kept as a valid pcap.
//!
//! Network safety: the full-disk test sends 20 MiB once between two
//! namespaces it creates (198.18.0.1 and 198.18.0.2).

use crate::common;

use common::transfer::{PAYLOAD, SERVER_PORT, finish, received, receiver, send};
use common::{ChildGuard, NETLENS, Netns, VethPair};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `args` as the unprivileged user nobody.
fn as_nobody(args: &[&str]) {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(args)
        .output()
        .expect("run setpriv");
    assert!(
        out.status.success(),
        "as nobody {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A directory removed on drop.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(tag: &str, mode: u32) -> Dir {
    let path = std::env::temp_dir().join(format!("netlens-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    Dir(path)
}

/// `netlens capture -w file` as root: (success, stderr).
fn capture_to(ns: &Netns, file: &Path) -> (bool, String) {
    let out = Command::new(NETLENS)
        .args(["capture", "--netns", &ns.name, "-i", "lo", "-c", "1"])
        .args(["--duration", "2s", "-w"])
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn capture_w_refuses_links_and_files_planted_by_another_user() {
    if crate::common::need_root(&["ip", "python3", "setpriv", "tcpdump", "mount"]) {
        return;
    }
    let ns = Netns::new("fsafe");
    ns.ip(&["link", "set", "lo", "up"]);
    // root's secret, in a directory only root enters.
    let secret = dir("fsafe-secret", 0o700);
    let target = secret.0.join("shadow");
    std::fs::write(&target, b"precious").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let never = secret.0.join("created-through-a-link");
    // A shared sticky directory like /tmp, where nobody plants links.
    let shared = dir("fsafe-shared", 0o1777);
    let link = shared.0.join("capture.pcap");
    let dangling = shared.0.join("dangling.pcap");
    let existing = shared.0.join("existing.pcap");
    as_nobody(&[
        "ln",
        "-s",
        &target.display().to_string(),
        &link.display().to_string(),
    ]);
    as_nobody(&[
        "ln",
        "-s",
        &never.display().to_string(),
        &dangling.display().to_string(),
    ]);
    as_nobody(&["sh", "-c", &format!("echo mine > {}", existing.display())]);

    for (path, why) in [
        (&link, "symbolic link"),
        (&dangling, "symbolic link"),
        (&existing, "already exists"),
    ] {
        let (ok, stderr) = capture_to(&ns, path);
        assert!(!ok, "{}: {stderr}", path.display());
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {stderr}");
        assert!(
            lines[0].contains(why) && lines[0].contains(&path.display().to_string()),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(
        !never.exists(),
        "a file was created through the dangling link"
    );
    assert_eq!(std::fs::read(&existing).unwrap(), b"mine\n");

    // A new name works, and the file is root's alone.
    let fresh = shared.0.join("fresh.pcap");
    let (_, stderr) = capture_to(&ns, &fresh);
    let mode = std::fs::metadata(&fresh)
        .expect(&stderr)
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// A tmpfs of `size`, unmounted (and its directory removed) on drop.
struct Tmpfs(Dir);

impl Tmpfs {
    fn new(size: &str) -> Tmpfs {
        let d = dir("fsafe-full", 0o700);
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(&d.0)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(d)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0.0).status();
    }
}

#[test]
fn capture_w_on_a_full_disk_names_it_and_keeps_the_whole_packets() {
    if crate::common::need_root(&["ip", "python3", "setpriv", "tcpdump", "mount"]) {
        return;
    }
    let disk = Tmpfs::new("64k");
    let file = disk.0.0.join("full.pcap");
    let pair = VethPair::new("fs");
    let capture = ChildGuard(
        Command::new(NETLENS)
            .args(["capture", "--netns", &pair.a.name, "--duration", "7s", "-w"])
            .arg(&file)
            .args(["-f", &format!("tcp port {SERVER_PORT}")])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let server = receiver(&pair.b.name);
    std::thread::sleep(Duration::from_millis(1000));
    send(&pair.a.name);
    assert_eq!(received(server), PAYLOAD);
    let (status, stderr) = finish(capture, true);
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(!status.success(), "{stderr}");
    let error = stderr
        .lines()
        .find(|l| l.contains("No space left on device"))
        .unwrap_or_else(|| panic!("the cause is not named: {stderr}"));
    let kept: usize = error
        .split("keeps the first ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("how many packets were kept: {error}"));
    assert!(kept > 0, "{error}");
    let out = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(&file)
        .output()
        .unwrap();
    let tcpdump_err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{tcpdump_err}");
    assert!(!tcpdump_err.contains("truncated"), "{tcpdump_err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), kept);
}

/// `replay` of a FIFO (or a directory) is a one-line error at once, not an
/// open that waits forever for a writer.
#[test]
fn replay_refuses_what_is_not_a_regular_file() {
    let dir = dir("fsafe-fifo", 0o700);
    let fifo = dir.0.join("pipe.nlrec");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for path in [&fifo, &dir.0] {
        let mut child = ChildGuard(
            Command::new(NETLENS)
                .args(["replay", "--info"])
                .arg(path)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.0.try_wait().unwrap() {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "replay of {} hangs",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let (_, stderr) = finish(child, true);
        let stderr = String::from_utf8_lossy(&stderr);
        assert!(!status.success());
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
}
