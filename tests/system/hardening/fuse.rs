//! A FUSE mount over a user's container store whose daemon is stopped
//! (issue 38, defect 1's residual): open() and read() there wait for the
//! daemon forever, O_NONBLOCK or not. A real user (useradd), a real
//! process of theirs in a real `libpod-<id>.scope` cgroup, a real
//! fuse-overlayfs mounted over their rootless podman store, then stopped
//! with SIGSTOP: netlens's samples still come on time, and it still stops
//! on SIGTERM.

use super::names::setup::{
    Contained, MadeDir, TestUser, container_id, netlens_within, wait_within,
};
use super::names::{container_of, must_stop_on_sigterm, scrape_until_listed, start_export};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Sampling interval of the timed run; a sample may come late by at most
/// the resolver's one wait (200 ms) and some scheduling slack.
const INTERVAL: Duration = Duration::from_millis(500);
const LATE: Duration = Duration::from_millis(450);

/// fuse-overlayfs run in the foreground (so the child is the daemon) with
/// one lower layer, mounted over `mountpoint`. On drop, pass or fail: the
/// daemon continued, the mount undone (lazily if it must be), the daemon
/// reaped (killed by pid if it lingers).
struct FuseMount {
    daemon: Child,
    mountpoint: PathBuf,
}

impl FuseMount {
    /// None (with a SKIP line naming `test`) where FUSE cannot be used.
    fn new(test: &str, scratch: &Path, mountpoint: &Path) -> Option<FuseMount> {
        if !Path::new("/dev/fuse").exists() {
            eprintln!("SKIP {test}: no /dev/fuse");
            return None;
        }
        let [lower, upper, work] = ["lower", "upper", "work"].map(|d| scratch.join(d));
        let options = format!(
            "lowerdir={},upperdir={},workdir={}",
            lower.display(),
            upper.display(),
            work.display()
        );
        let spawned = Command::new("fuse-overlayfs")
            .args(["-f", "-o", &options])
            .arg(mountpoint)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(daemon) = spawned else {
            eprintln!("SKIP {test}: fuse-overlayfs not installed");
            return None;
        };
        let mut mount = FuseMount {
            daemon,
            mountpoint: mountpoint.to_path_buf(),
        };
        let started = Instant::now();
        while !mounted(mountpoint) {
            if let Ok(Some(status)) = mount.daemon.try_wait() {
                eprintln!("SKIP {test}: fuse-overlayfs cannot mount here ({status})");
                return None;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "fuse-overlayfs has not mounted {} after 10 s",
                mountpoint.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(mount)
    }

    /// Stops the daemon: every request to the mount then waits.
    fn stop(&self) {
        self.signal(libc::SIGSTOP);
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on the pid of a child this test started.
        unsafe { libc::kill(self.daemon.id() as libc::pid_t, signal) };
    }
}

impl Drop for FuseMount {
    fn drop(&mut self) {
        // A stopped daemon answers nothing, not even the unmount.
        self.signal(libc::SIGCONT);
        let unmount = |args: &[&str]| {
            Command::new("umount")
                .args(args)
                .arg(&self.mountpoint)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !unmount(&[]) {
            unmount(&["-l"]);
        }
        if wait_within(&mut self.daemon, Duration::from_secs(5)).is_none() {
            eprintln!("fuse-overlayfs outlived its unmount by 5 s: killed");
        }
    }
}

/// Whether /proc/self/mountinfo lists a FUSE mount at `path`.
fn mounted(path: &Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let path = path.to_string_lossy();
    info.lines().any(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let fstype = fields.iter().skip_while(|f| **f != "-").nth(1);
        fields.get(4) == Some(&path.as_ref()) && fstype.is_some_and(|t| t.starts_with("fuse"))
    })
}

/// Whether opening `path` is still waiting after `limit` (on a thread of
/// its own, left to finish once the daemon continues).
fn open_waits(path: &Path, limit: Duration) -> bool {
    let (done, opened) = mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || done.send(std::fs::File::open(path).is_ok()));
    opened.recv_timeout(limit).is_err()
}

/// `netlens snapshot --json` of sockets and processes, `count` samples
/// `INTERVAL` apart, within `limit`: the samples and how long it took.
fn timed_snapshot(count: &str, limit: Duration) -> (Vec<Value>, Duration) {
    let interval = format!("{}ms", INTERVAL.as_millis());
    let args = [
        "snapshot",
        "--json",
        "--section",
        "sockets,processes",
        "--no-capture",
        "--no-bpf",
        "--interval",
        &interval,
        "--count",
        count,
    ];
    let started = Instant::now();
    let out = netlens_within(&args, limit);
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "snapshot failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    (crate::common::parse_lines(&out.stdout), took)
}

#[test]
fn a_stopped_fuse_store_stalls_no_sample() {
    let test = "a_stopped_fuse_store_stalls_no_sample";
    if crate::common::need_root(&["useradd", "userdel", "setpriv", "fuse-overlayfs", "umount"]) {
        return;
    }
    // Declared in this order, dropped in the reverse: the process, the
    // mount, its layers, the user (whose home holds the mount point).
    let user = TestUser::new("u");
    let scratch = MadeDir::new(
        std::env::temp_dir().join(format!("netlens-fuse-{}", std::process::id())),
        0,
    );
    let id = container_id("f5e");
    let lower = scratch.path.join("lower/overlay-containers");
    std::fs::create_dir_all(&lower).unwrap();
    for dir in ["upper", "work"] {
        std::fs::create_dir_all(scratch.path.join(dir)).unwrap();
    }
    let store = lower.join("containers.json");
    let entry = serde_json::json!([{ "id": id, "names": ["nl-fuse-web"] }]);
    std::fs::write(&store, serde_json::to_vec(&entry).unwrap()).unwrap();
    // The store and its directories are the user's, as podman leaves them.
    user.chown(&store);
    user.chown(&lower);
    let storage = user.home.join(".local/share/containers/storage");
    user.mkdir(&storage);
    let Some(mount) = FuseMount::new(test, &scratch.path, &storage) else {
        return;
    };
    let Some(contained) = Contained::start(test, &user, &format!("libpod-{id}.scope")) else {
        return;
    };
    let pid = contained.pid();

    // Running, the daemon serves the store: netlens names the container
    // through the mount in its first sample.
    let (samples, _) = timed_snapshot("1", Duration::from_secs(20));
    let container = container_of(&samples[0], pid);
    assert_eq!(container["name"], "nl-fuse-web", "{container}");

    // Stopped, the store waits for good.
    mount.stop();
    let path = storage.join("overlay-containers/containers.json");
    assert!(
        open_waits(&path, Duration::from_secs(1)),
        "the store still opens with its FUSE daemon stopped: the test is void"
    );

    // snapshot ends on time, each sample on time, the container shown by
    // runtime and id.
    let (samples, took) = timed_snapshot("3", Duration::from_secs(20));
    assert_eq!(samples.len(), 3, "{} samples", samples.len());
    let times: Vec<f64> = samples.iter().map(|s| s["t"].as_f64().unwrap()).collect();
    let gaps: Vec<Duration> = times
        .windows(2)
        .map(|t| Duration::from_secs_f64(t[1] - t[0]))
        .collect();
    eprintln!("snapshot --count 3 over a stopped FUSE store: {took:?}, gaps {gaps:?}");
    for gap in &gaps {
        assert!(
            *gap < INTERVAL + LATE,
            "a sample came {gap:?} after the last"
        );
    }
    assert!(
        took < Duration::from_secs(5),
        "snapshot --count 3 took {took:?}"
    );
    for sample in &samples {
        let container = container_of(sample, pid);
        assert_eq!(container["runtime"], "podman", "{container}");
        assert_eq!(container["id"], id.as_str(), "{container}");
        assert!(container["name"].is_null(), "{container}");
    }

    // export lists the process, and stops on SIGTERM with a thread still
    // waiting on the mount.
    let (export, address) = start_export(&["--interval", "200ms", "--per-process"]);
    let (page, listed) = scrape_until_listed(&address, pid, Duration::from_secs(10));
    if !listed {
        let mut export = export;
        let _ = export.kill();
        let _ = export.wait();
        panic!(
            "export never listed process {pid} in 10 s (sampler stalled); last page: {} bytes",
            page.len()
        );
    }
    let started = Instant::now();
    must_stop_on_sigterm(export, "export");
    eprintln!("export stopped {:?} after SIGTERM", started.elapsed());
}
