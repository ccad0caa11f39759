//! Recording for real, in namespaces with known traffic: `replay --json`
//! prints exactly what `snapshot --json` printed live; a recorder killed
//! with SIGKILL leaves a file that replays; SIGINT closes it cleanly.

mod common;

use common::*;
use std::net::SocketAddrV4;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("netlens-record-ns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn replay(args: &[&str]) -> std::process::Output {
    Command::new(NETLENS)
        .arg("replay")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn netlens")
}

#[test]
fn replay_json_equals_the_live_snapshot_json() {
    if skip_unless_root() {
        return;
    }
    let pair = VethPair::new("rec");
    let path = scratch("live.nlrec");
    let (a, b) = (pair.a.path(), pair.b.path());
    let traffic = std::thread::spawn(move || {
        udp_traffic(
            &a,
            IP_A,
            &b,
            SocketAddrV4::new(IP_B, 9000),
            1500,
            200,
            1000.0,
        )
    });
    let live = Command::new(NETLENS)
        .args(["snapshot", "--json", "--count", "5", "--interval", "250ms"])
        .args(["--netns", &pair.b.name, "--record", path.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let result = traffic.join().unwrap();
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    assert!(result.received > 0);
    let replayed = replay(&["--json", path.to_str().unwrap()]);
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let live_text = String::from_utf8(live.stdout).unwrap();
    let replay_text = String::from_utf8(replayed.stdout).unwrap();
    assert_eq!(live_text.lines().count(), 5);
    // Byte for byte: same samples, same rates, same findings.
    assert_eq!(replay_text, live_text);
    // And the traffic is in it: veth rx rate near 1000 pps on the peer.
    let samples = parse_lines(replay_text.as_bytes());
    let peak = samples
        .iter()
        .filter_map(|s| opt_f64(must_iface(s, DEV_B), "rx_packets_per_s"))
        .fold(0.0, f64::max);
    assert!(peak > 500.0, "peak rx {peak} pps");
}

fn wait_for_samples(path: &std::path::Path, samples: u64) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let info = replay(&["--info", path.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&info.stdout).to_string();
        let count = text
            .lines()
            .find_map(|l| l.strip_prefix("samples:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
        if count >= samples {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the recorder never wrote {samples} samples");
}

#[test]
fn sigkill_leaves_a_replayable_file_and_sigint_closes_cleanly() {
    if skip_unless_root() {
        return;
    }
    let pair = VethPair::new("rkl");
    for (signal, tag) in [(libc::SIGKILL, "kill"), (libc::SIGINT, "int")] {
        let path = scratch(&format!("{tag}.nlrec"));
        let child = Command::new(NETLENS)
            .args([
                "record",
                "-o",
                path.to_str().unwrap(),
                "--interval",
                "100ms",
            ])
            .args(["--netns", &pair.b.name, "--duration", "30s"])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut guard = ChildGuard(child);
        wait_for_samples(&path, 8);
        // SAFETY: kill(2) on the child this test started.
        assert_eq!(unsafe { libc::kill(guard.pid() as libc::pid_t, signal) }, 0);
        let status = guard.0.wait().unwrap();
        let info = replay(&["--info", path.to_str().unwrap()]);
        let info_text = String::from_utf8_lossy(&info.stdout).to_string();
        assert!(info.status.success(), "{info_text}");
        let json = replay(&["--json", path.to_str().unwrap()]);
        assert!(
            json.status.success(),
            "{}",
            String::from_utf8_lossy(&json.stderr)
        );
        let samples = parse_lines(&json.stdout);
        assert!(samples.len() >= 7, "{} samples replayed", samples.len());
        assert!(samples.iter().all(|s| iface(s, DEV_B).is_some()));
        if signal == libc::SIGKILL {
            assert!(info_text.contains("not closed"), "{info_text}");
        } else {
            assert!(status.success(), "SIGINT is a clean stop: {status}");
            assert!(info_text.contains("closed cleanly"), "{info_text}");
            assert!(info_text.contains("damage:     none"), "{info_text}");
        }
    }
}
