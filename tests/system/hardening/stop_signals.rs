//! Issue 38, defect 7: SIGHUP, SIGTERM and SIGINT stop every command that
//! writes a file with the file complete. Before: `capture -w` + SIGHUP
//! exited 129 with a 0-byte pcap after 400 packets; `snapshot --record`
//! (HUP, TERM) and `export --ring` (HUP) left the recording not closed.

use super::writers_util::{
    Running, TempDir, captured, replay_info, tcpdump_count, test_port, udp_to_loopback,
};
use std::path::Path;
use std::time::{Duration, Instant};

const SIGNALS: [(i32, &str); 3] = [
    (libc::SIGHUP, "HUP"),
    (libc::SIGTERM, "TERM"),
    (libc::SIGINT, "INT"),
];

/// Waits until the recording at `path` has grown past its header (a
/// sample is in it), so the signal comes while it is being written.
fn wait_for_growth(path: &Path, running: &Running) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(path).map_or(0, |m| m.len()) < 1024 {
        assert!(
            Instant::now() < deadline,
            "netlens {} wrote no sample to {} within 20s",
            running.pid(),
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // A few more samples (200 ms apart).
    std::thread::sleep(Duration::from_millis(500));
}

fn assert_closed(path: &Path, what: &str) {
    let info = replay_info(path);
    assert!(
        info.contains("closed cleanly"),
        "{what}: {} is not closed: {info}",
        path.display()
    );
}

#[test]
fn capture_closes_its_pcap_on_hup_term_and_int() {
    if crate::common::need_root(&["tcpdump"]) {
        return;
    }
    let dir = TempDir::new("sig-capture");
    let port = test_port(0);
    let filter = format!("udp port {port}");
    for (signal, name) in SIGNALS {
        let file = dir.join(&format!("{name}.pcap"));
        let path = file.to_str().unwrap();
        let mut running = Running::start(&["capture", "-i", "lo", "-f", &filter, "-w", path]);
        running.wait_for_line("capturing on", Duration::from_secs(10));
        udp_to_loopback(port, 400);
        std::thread::sleep(Duration::from_millis(300));
        running.signal(signal);
        let (status, stderr) = running.wait(Duration::from_secs(10));
        assert!(
            status.success(),
            "capture after SIG{name}: {status}: {stderr}"
        );
        let saved = captured(&stderr);
        assert!(saved >= 400, "SIG{name}: {saved} of 400 packets: {stderr}");
        assert_eq!(
            tcpdump_count(&file),
            saved,
            "SIG{name}: tcpdump reads other than the {saved} packets netlens wrote"
        );
    }
}

/// Starts netlens with `args`, and once `file` grows sends `signal`: it
/// must then exit 0 within 15 s.
fn stop_once_grown(args: &[&str], file: &Path, signal: i32, what: &str) {
    stop_when_grown(Running::start(args), file, signal, what);
}

fn stop_when_grown(running: Running, file: &Path, signal: i32, what: &str) {
    wait_for_growth(file, &running);
    running.signal(signal);
    let (status, stderr) = running.wait(Duration::from_secs(15));
    assert!(status.success(), "{what}: {status}: {stderr}");
}

#[test]
fn record_closes_its_recording_on_hup_term_and_int() {
    if crate::common::need_root(&[]) {
        return;
    }
    let dir = TempDir::new("sig-record");
    for (signal, name) in SIGNALS {
        let file = dir.join(&format!("{name}.nlrec"));
        let path = file.to_str().unwrap();
        let args = ["record", "--interval", "200ms", "--no-capture", "-o", path];
        stop_once_grown(&args, &file, signal, &format!("record after SIG{name}"));
        assert_closed(&file, &format!("record, SIG{name}"));
    }
}

#[test]
fn snapshot_closes_its_recording_on_hup_term_and_int() {
    if crate::common::need_root(&[]) {
        return;
    }
    let dir = TempDir::new("sig-snapshot");
    for (signal, name) in SIGNALS {
        let file = dir.join(&format!("{name}.nlrec"));
        let path = file.to_str().unwrap();
        let args = [
            "snapshot",
            "--json",
            "--count",
            "1000",
            "--interval",
            "200ms",
            "--no-capture",
            "--record",
            path,
        ];
        stop_once_grown(&args, &file, signal, &format!("snapshot after SIG{name}"));
        assert_closed(&file, &format!("snapshot --record, SIG{name}"));
    }
}

#[test]
fn export_closes_its_ring_on_hup_term_and_int() {
    if crate::common::need_root(&[]) {
        return;
    }
    let dir = TempDir::new("sig-export");
    for (signal, name) in SIGNALS {
        let ring = dir.join(name);
        let args = [
            "export",
            "--listen",
            "127.0.0.1:0",
            "--interval",
            "200ms",
            "--ring",
            "5m",
            "--ring-dir",
            ring.to_str().unwrap(),
        ];
        let running = Running::start(&args);
        let deadline = Instant::now() + Duration::from_secs(20);
        let file = loop {
            let found = std::fs::read_dir(&ring)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "nlrec"));
            if let Some(file) = found {
                break file;
            }
            assert!(
                Instant::now() < deadline,
                "export wrote no ring file in 20s"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        stop_when_grown(running, &file, signal, &format!("export after SIG{name}"));
        for entry in std::fs::read_dir(&ring).unwrap().flatten() {
            if entry.path().extension().is_some_and(|x| x == "nlrec") {
                assert_closed(&entry.path(), &format!("export --ring, SIG{name}"));
            }
        }
    }
}
