//! `replay --json --follow` on a recording the real recorder is still
//! writing: samples print as they are appended, the follower ends by itself
//! when the recorder closes the file, having printed what `replay --json`
//! prints afterwards; `replay --info` meanwhile says "still being written".
//! The live view's `replay --follow` plays from the end of the growing file,
//! shows each new sample, and says FOLLOW until the recorder closes it.

use crate::common;

use common::tmux::Tmux;
use common::{ChildGuard, NETLENS};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Generous: the machine may be loaded; these bound a hang, not speed.
const LIVENESS: Duration = Duration::from_secs(20);

fn timestamps(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("a JSON line");
            value["t"].to_string()
        })
        .collect()
}

/// The real recorder writing `file` every 200 ms, once the file exists.
fn start_recorder(file: &std::path::Path) -> ChildGuard {
    let recorder = ChildGuard(
        Command::new(NETLENS)
            .args(["record", "-o"])
            .arg(file)
            .args(["--no-capture", "--interval", "200ms"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while std::fs::metadata(file).map_or(0, |m| m.len()) == 0 {
        assert!(started.elapsed() < LIVENESS, "the recorder made no file");
        std::thread::sleep(Duration::from_millis(50));
    }
    recorder
}

#[test]
fn follow_prints_samples_as_they_are_written_and_ends_at_close() {
    let dir = std::env::temp_dir().join(format!("netlens-follow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("growing.nlrec");
    let _ = std::fs::remove_file(&file);
    let mut recorder = start_recorder(&file);

    let mut follower = ChildGuard(
        Command::new(NETLENS)
            .args(["replay", "--json", "--follow"])
            .arg(&file)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = follower.0.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines_tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let line = lines
            .recv_timeout(LIVENESS)
            .expect("the follower prints samples while the recorder runs");
        seen.push(line);
    }
    assert!(
        recorder.0.try_wait().unwrap().is_none(),
        "the recorder still runs"
    );

    // Meanwhile --info says what is true of the file, and how to follow it.
    let info = Command::new(NETLENS)
        .args(["replay", "--info"])
        .arg(&file)
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("still being written"), "{info}");
    assert!(info.contains("--follow"), "{info}");
    assert!(!info.contains("the recorder was stopped"), "{info}");

    // SIGINT: the recorder closes the file; the follower ends by itself.
    unsafe { libc::kill(recorder.pid() as i32, libc::SIGINT) };
    let deadline = Instant::now() + LIVENESS;
    while recorder.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the recorder did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = loop {
        if let Some(status) = follower.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the follower did not end when the file was closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "the follower exits 0: {status}");
    reader.join().unwrap();
    seen.extend(lines.try_iter());

    let whole = Command::new(NETLENS)
        .args(["replay", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        whole.status.success(),
        "replay --json: {}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let whole: Vec<String> = String::from_utf8_lossy(&whole.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert!(whole.len() >= 3, "{} samples", whole.len());
    assert_eq!(
        timestamps(&seen),
        timestamps(&whole),
        "the follower printed every sample replay --json prints"
    );
    let info = Command::new(NETLENS)
        .args(["replay", "--info"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&info.stdout).contains("closed cleanly"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The timeline's "#position/total".
fn position(screen: &str) -> Option<(usize, usize)> {
    let at = screen.rfind(" #")?;
    let (here, total) = screen[at + 2..]
        .split_whitespace()
        .next()?
        .split_once('/')?;
    Some((here.parse().ok()?, total.parse().ok()?))
}

#[test]
fn the_live_view_follows_a_growing_recording_until_it_closes() {
    let Some(tmux) = Tmux::new("followview") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("netlens-follow-ui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("growing.nlrec");
    let _ = std::fs::remove_file(&file);
    let mut recorder = start_recorder(&file);
    tmux.start(
        80,
        24,
        &dir,
        &format!("{NETLENS} replay --follow {}", file.display()),
    );
    // It plays at the end, and the end moves on as samples are appended.
    let first = tmux.wait("FOLLOW at the end", LIVENESS, |s| {
        position(s).filter(|(here, total)| s.contains("FOLLOW") && here == total)
    });
    let later = tmux.wait("new samples", LIVENESS, |s| {
        position(s)
            .filter(|(here, total)| s.contains("FOLLOW") && here == total && *total >= first.1 + 3)
    });
    assert!(later.1 > first.1);
    assert!(
        recorder.0.try_wait().unwrap().is_none(),
        "the recorder still runs"
    );

    // The recorder closes the file: the view shows all of it, as a replay.
    unsafe { libc::kill(recorder.pid() as i32, libc::SIGINT) };
    let deadline = Instant::now() + LIVENESS;
    while recorder.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the recorder did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
    let info = Command::new(NETLENS)
        .args(["replay", "--info"])
        .arg(&file)
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("closed cleanly"), "{info}");
    let samples: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("samples:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("replay --info counts the samples");
    tmux.wait("every sample, no longer following", LIVENESS, |s| {
        position(s).filter(|&(here, total)| {
            s.contains("REPLAY") && !s.contains("FOLLOW") && here == samples && total == samples
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
}
