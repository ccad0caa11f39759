//! The flight recorder against the kernel: `netlens record --ring` in a
//! namespace of its own stays within its size and window over many times
//! that window, and `--freeze-on` writes one incident bundle per incident
//! (connect-refused, provoked by a python3 client refused on the
//! namespace's loopback) that replays, whose pcap tcpdump reads and whose
//! summary names the finding and its fix; the per-hour cap suppresses the
//! next incident with one line, and `--on-finding` still sees every start
//! and clear.
//!
//! Network safety: loopback inside the test's own namespaces only; the
//! client makes a bounded number of connects.

use crate::common;
use crate::common::python_in;

use common::socket_findings::replay_json;
use common::{ChildGuard, NETLENS, Netns, refuse, stop_for_stderr, tcpdump_read, wait_until};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The ring's files, oldest first, with their sizes.
fn ring_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    // None yet before the recorder made the directory.
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(PathBuf, u64)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("ring-"))
        // A file dropped between the listing and its size is gone.
        .filter_map(|e| Some((e.path(), e.metadata().ok()?.len())))
        .collect();
    files.sort();
    files
}

/// The times of the first and last samples the ring's files replay (each
/// file alone: its first sample is the baseline of its rates, so a file of
/// one sample, rolled just before the stop, replays none).
fn span(files: &[(PathBuf, u64)]) -> (f64, f64) {
    let times: Vec<f64> = files
        .iter()
        .flat_map(|(path, _)| replay_json(path))
        .map(|sample| sample["t"].as_f64().unwrap())
        .collect();
    assert!(times.len() >= 2, "{files:?}");
    (times[0], *times.last().unwrap())
}

/// Runs a ring recorder for `seconds` of 100 ms samples (capturing on the
/// namespace's loopback with `capture`), watching the directory's bytes
/// while it runs; returns the largest total seen.
fn run_ring(
    ns: &Netns,
    dir: &Path,
    ring: &str,
    max_size: &str,
    seconds: u32,
    capture: bool,
) -> u64 {
    let capture = if capture {
        ["--iface", "lo"]
    } else {
        ["--no-capture", "--no-bpf"]
    };
    let mut record = ChildGuard(
        Command::new(NETLENS)
            .args(["record", "--netns", &ns.name, "--interval", "100ms"])
            .args(capture)
            .args(["--ring", ring, "--max-size", max_size])
            .arg("--ring-dir")
            .arg(dir)
            .args(["--duration", &format!("{seconds}s")])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("netlens record"),
    );
    let mut largest = 0;
    while record.0.try_wait().unwrap().is_none() {
        largest = largest.max(ring_files(dir).iter().map(|(_, size)| size).sum());
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = stop_for_stderr(&mut record);
    assert!(stderr.contains("the ring in"), "{stderr}");
    largest
}

#[test]
fn ring_keeps_its_window_and_drops_the_oldest() {
    if crate::common::need_root(&["ip", "python3", "tcpdump"]) {
        return;
    }
    let ns = Netns::new("ringtime");
    ns.ip(&["link", "set", "lo", "up"]);
    let dir = crate::common::scratch_dir_for("flight", "time").join("ring");
    // A 3 s ring rolls every second: 12 s is four windows.
    run_ring(&ns, &dir, "3s", "64M", 12, false);
    let mode = std::fs::metadata(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(mode.permissions().mode() & 0o777, 0o700);
    let files = ring_files(&dir);
    // The window (3 s) plus the segment being written (1 s) at most, and
    // the last segment closed early at the stop.
    assert!((3..=5).contains(&files.len()), "{files:?}");
    let (first_t, last_t) = span(&files);
    // The oldest data is gone: what is left spans about the window.
    assert!(last_t - first_t < 5.5, "{first_t} {last_t}");
    assert!(last_t - first_t >= 2.5, "{first_t} {last_t}");
    for (path, _) in &files {
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", path.display());
    }
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn ring_stays_within_its_size() {
    if crate::common::need_root(&["ip", "python3", "tcpdump"]) {
        return;
    }
    let ns = Netns::new("ringsize");
    ns.ip(&["link", "set", "lo", "up"]);
    let dir = crate::common::scratch_dir_for("flight", "size").join("ring");
    // Datagrams of random bytes, 100 a second for 8 s (33 KB/s that does
    // not compress): a minute's ring outgrows 64 KiB in two seconds, so
    // size decides what is dropped; a file (16 KiB) holds about 5 samples.
    let script = "import os, socket, time\n\
                  s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
                  time.sleep(1)\n\
                  for i in range(800):\n\
                  \x20   s.sendto(os.urandom(300), ('127.0.0.1', 9))\n\
                  \x20   time.sleep(0.01)\n";
    let _sender = python_in(&ns.name, script);
    let largest = run_ring(&ns, &dir, "1m", "64k", 10, true);
    // One record and a new file's header over the bound at most, seen
    // between a roll and the drop after it.
    assert!(largest <= (64 << 10) + (16 << 10), "{largest} bytes");
    let files = ring_files(&dir);
    let total: u64 = files.iter().map(|(_, size)| size).sum();
    assert!(total <= 64 << 10, "{total} bytes: {files:?}");
    let (oldest_t, newest_t) = span(&files);
    // Ten seconds were sampled; the size kept far less than the minute.
    assert!(newest_t - oldest_t < 9.0, "{oldest_t} {newest_t}");
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// Files the hook wrote for `event` (start or clear) of connect-refused.
fn hook_events(dir: &Path, event: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{event}-connect-refused-"))
        })
        .count()
}

#[test]
fn a_finding_freezes_one_bundle_and_the_cap_holds_the_next() {
    if crate::common::need_root(&["ip", "python3", "tcpdump"]) {
        return;
    }
    let ns = Netns::new("freeze");
    ns.ip(&["link", "set", "lo", "up"]);
    let base = crate::common::scratch_dir_for("flight", "freeze");
    let (ring, bundles, hooks) = (base.join("ring"), base.join("bundles"), base.join("hook"));
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = format!(
        "cat > {}/$NETLENS_EVENT-$NETLENS_FINDING-$(date +%s%N)",
        hooks.display()
    );
    let mut record = ChildGuard(
        Command::new(NETLENS)
            .args([
                "record",
                "--netns",
                &ns.name,
                "--interval",
                "200ms",
                "--no-bpf",
            ])
            .args(["--iface", "lo", "--ring", "30s", "--ring-dir"])
            .arg(&ring)
            .args([
                // By id: on a loaded host the host-wide softirq-imbalance
                // (a warning in every namespace's view) may start too.
                "--freeze-on",
                "connect-refused",
                "--freeze-after",
                "1s",
                "--bundle-dir",
            ])
            .arg(&bundles)
            .args(["--max-bundles-per-hour", "1", "--on-finding", &hook])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("netlens record"),
    );
    // Some samples before the incident, for the bundle's "before".
    std::thread::sleep(Duration::from_millis(2000));
    // Raised for longer than --freeze-after: still one bundle.
    refuse(&ns.name, 40, 3);
    wait_until("the first clear", Duration::from_secs(20), || {
        hook_events(&hooks, "clear") >= 1
    });
    // A second incident: over the cap of one an hour.
    refuse(&ns.name, 40, 1);
    wait_until("the second clear", Duration::from_secs(20), || {
        hook_events(&hooks, "clear") >= 2
    });
    unsafe { libc::kill(record.pid() as i32, libc::SIGTERM) };
    let stderr = stop_for_stderr(&mut record);
    assert_eq!(hook_events(&hooks, "start"), 2, "{stderr}");

    let made: Vec<PathBuf> = std::fs::read_dir(&bundles)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}\n{stderr}");
    let bundle = &made[0];
    let name = bundle.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.starts_with("netlens-incident-") && name.ends_with("-connect-refused"),
        "{name}"
    );
    let suppressed: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("no bundle for"))
        .collect();
    assert_eq!(suppressed.len(), 1, "{stderr}");
    assert!(
        suppressed[0].contains("connect-refused")
            && suppressed[0].contains("--max-bundles-per-hour 1"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("incident bundle {}", bundle.display())),
        "{stderr}"
    );
    check_bundle(bundle);
    let _ = std::fs::remove_dir_all(&base);
}

/// A bundle replays (the directory itself), its pcap reads in tcpdump with
/// the refused connects, its summary names the finding and its fix, and
/// its snapshot is the JSON of the sample at the start.
fn check_bundle(bundle: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(bundle).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let samples = replay_json(bundle);
    assert!(samples.len() >= 10, "{} samples", samples.len());
    let raised: Vec<&Value> = samples
        .iter()
        .filter(|s| {
            s["findings"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f["id"] == "connect-refused"))
        })
        .collect();
    assert!(!raised.is_empty());
    // The bundle starts before the incident and goes on after it started.
    let start_t = raised[0]["t"].as_f64().unwrap();
    assert!(samples[0]["t"].as_f64().unwrap() < start_t - 1.0);
    assert!(samples.last().unwrap()["t"].as_f64().unwrap() >= start_t + 0.9);

    let lines = tcpdump_read(&bundle.join("packets.pcapng"));
    assert!(lines.contains("127.0.0.1.9:"), "{lines}");

    let summary = std::fs::read_to_string(bundle.join("summary.md")).unwrap();
    assert!(summary.contains("### connect-refused"), "{summary}");
    assert!(summary.contains("- fix: "), "{summary}");
    assert!(summary.contains("- cleared: "), "{summary}");
    assert!(summary.contains("packets.pcapng holds the"), "{summary}");
    // The refused connects are in the connection log, and the summary
    // counts as many as the bundle's samples carry (the baseline's
    // interval aside: its closes came before the recording).
    let refused_logged: usize = samples
        .iter()
        .flat_map(|s| s["closed"].as_array().into_iter().flatten())
        .filter(|c| c["ending"] == "refused")
        .count();
    assert!(
        refused_logged > 0,
        "no refused connection in the bundle's log"
    );
    // "44 of the 44 TCP connections ... (refused 44); the newest 20:"
    let counted = summary
        .lines()
        .find(|l| l.contains("did not close with a FIN"))
        .and_then(|l| {
            l.split_once("(")?
                .1
                .split_once(')')
                .map(|(counts, _)| counts)
        })
        .and_then(|counts| {
            counts
                .split(", ")
                .find_map(|c| c.strip_prefix("refused ")?.parse::<usize>().ok())
        });
    assert!(
        summary.contains("## Connections that ended badly") && summary.contains("| refused |"),
        "{summary}"
    );
    assert!(
        counted.is_some_and(|n| n >= refused_logged),
        "summary counts {counted:?} refused, the replay shows {refused_logged}\n{summary}"
    );

    let snapshot: Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("snapshot.json")).unwrap())
            .unwrap();
    assert_eq!(snapshot["t"].as_f64().unwrap(), start_t);
    for file in [
        "recording.nlrec",
        "packets.pcapng",
        "summary.md",
        "snapshot.json",
    ] {
        let mode = std::fs::metadata(bundle.join(file))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file}");
    }
}

#[test]
fn export_keeps_a_ring_too() {
    if crate::common::need_root(&["ip", "python3", "tcpdump"]) {
        return;
    }
    let ns = Netns::new("exportring");
    ns.ip(&["link", "set", "lo", "up"]);
    let dir = crate::common::scratch_dir_for("flight", "export").join("ring");
    let mut export = ChildGuard(
        Command::new(NETLENS)
            .args([
                "export",
                "--netns",
                &ns.name,
                "--interval",
                "100ms",
                "--no-bpf",
            ])
            .args(["--listen", "127.0.0.1:0", "--ring", "3s", "--ring-dir"])
            .arg(&dir)
            .args(["--freeze-on", "crit"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("netlens export"),
    );
    wait_until("the first ring file", Duration::from_secs(30), || {
        !ring_files(&dir).is_empty()
    });
    let first = ring_files(&dir)[0].0.clone();
    // The ring rolls every second and keeps 3 s: the first file goes.
    wait_until("the first file dropped", Duration::from_secs(30), || {
        let files = ring_files(&dir);
        files.len() >= 3 && files.iter().all(|(path, _)| *path != first)
    });
    unsafe { libc::kill(export.pid() as i32, libc::SIGTERM) };
    stop_for_stderr(&mut export);
    let files = ring_files(&dir);
    assert!((3..=5).contains(&files.len()), "{files:?}");
    span(&files);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// A ring recorded with a capture on every interface keeps each packet's
/// interface (the cooked header does not say it): the bundle's pcapng
/// names the namespace's `lo` on every packet, not "any", as tshark reads
/// it.
#[test]
fn a_bundle_of_a_capture_on_every_interface_names_each_packets_interface() {
    if crate::common::need_root(&["ip", "python3", "tshark"]) {
        return;
    }
    let ns = Netns::new("freezeany");
    ns.ip(&["link", "set", "lo", "up"]);
    let base = crate::common::scratch_dir_for("flight", "freezeany");
    let (ring, bundles) = (base.join("ring"), base.join("bundles"));
    let mut record = ChildGuard(
        Command::new(NETLENS)
            .args([
                "record",
                "--netns",
                &ns.name,
                "--interval",
                "200ms",
                "--no-bpf",
            ])
            .args(["--ring", "30s", "--ring-dir"])
            .arg(&ring)
            .args([
                "--freeze-on",
                "connect-refused",
                "--freeze-after",
                "1s",
                "--bundle-dir",
            ])
            .arg(&bundles)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("netlens record"),
    );
    std::thread::sleep(Duration::from_millis(1500));
    refuse(&ns.name, 40, 2);
    let summary = || -> Option<PathBuf> {
        let bundle = std::fs::read_dir(&bundles).ok()?.flatten().next()?.path();
        bundle.join("summary.md").is_file().then_some(bundle)
    };
    wait_until("the bundle", Duration::from_secs(20), || {
        summary().is_some()
    });
    unsafe { libc::kill(record.pid() as i32, libc::SIGTERM) };
    stop_for_stderr(&mut record);
    let bundle = summary().unwrap();
    let out = Command::new("tshark")
        .arg("-r")
        .arg(bundle.join("packets.pcapng"))
        .args([
            "-T",
            "fields",
            "-e",
            "frame.interface_name",
            "-e",
            "frame.interface_description",
        ])
        .output()
        .expect("tshark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 40, "{} packets\n{text}", lines.len());
    let expected = format!("lo\tnamespace {}", ns.name);
    assert!(lines.iter().all(|l| *l == expected), "{text}");
    let _ = std::fs::remove_dir_all(&base);
}
