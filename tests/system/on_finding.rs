//! `--on-finding CMD` against the kernel: the live view (in tmux),
//! `netlens record` and `netlens export` watch one namespace while a
//! python3 client in it is refused (connects to a closed port on loopback)
//! for two seconds, then stops. Each
//! hook must run exactly once when connect-refused starts and once when it
//! clears, with the finding as JSON on stdin and in its environment; the
//! recording must hold the same finding; a command that exits non-zero is
//! reported, one line per event (stderr; the live view's status line).
//!
//! Network safety: loopback inside the test's own namespace only; the
//! client makes a bounded number of connects (rate x seconds).

use crate::common;

use common::{ChildGuard, NETLENS, Netns, refuse};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Writes each event to DIR/<event>-<finding>-<nanoseconds>.json, plus the
/// environment's view of it, then exits with `status`.
fn hook_command(dir: &Path, status: u8) -> String {
    format!(
        "f={dir}/$NETLENS_EVENT-$NETLENS_FINDING-$(date +%s%N); cat > $f.json; \
         echo \"$NETLENS_EVENT $NETLENS_FINDING $NETLENS_SEVERITY\" > $f.env; exit {status}",
        dir = dir.display()
    )
}

/// The events a hook wrote, in time order, each with its environment line.
fn events(dir: &Path) -> Vec<(Value, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort_by_key(|p| {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        name.rsplit('-').next().unwrap().parse::<u128>().unwrap()
    });
    files
        .iter()
        .map(|p| {
            let json = std::fs::read_to_string(p).unwrap();
            let env = std::fs::read_to_string(p.with_extension("env")).unwrap();
            (
                serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}")),
                env.trim().to_string(),
            )
        })
        .collect()
}

/// The one start and the one clear of connect-refused, checked field by field.
fn assert_one_episode(events: &[(Value, String)], netns: &str, who: &str) {
    let refused: Vec<_> = events
        .iter()
        .filter(|(e, _)| e["finding"]["id"] == "connect-refused")
        .collect();
    let kinds: Vec<&str> = refused
        .iter()
        .map(|(e, _)| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["start", "clear"], "{who}: {events:#?}");
    let (start, start_env) = refused[0];
    let (clear, _) = refused[1];
    for event in [start, clear] {
        assert_eq!(event["netns"], netns, "{who}: {event}");
        assert_eq!(event["finding"]["evidence"]["tab"], "tcp", "{who}: {event}");
        assert!(
            event["host"].as_str().is_some_and(|h| !h.is_empty()),
            "{who}: {event}"
        );
    }
    let severity = start["finding"]["severity"].as_str().unwrap();
    assert_eq!(
        *start_env,
        format!("start connect-refused {}", severity.to_uppercase()),
        "{who}"
    );
    assert!(
        clear["time"].as_f64().unwrap() > start["time"].as_f64().unwrap(),
        "{who}: {start} {clear}"
    );
    assert!(
        start["finding"]["summary"]
            .as_str()
            .unwrap()
            .contains("refused"),
        "{who}: {start}"
    );
    // A clear carries the finding as it last showed: calm for the off count.
    assert!(
        clear["finding"]["calm"].as_u64().unwrap() >= 1,
        "{who}: {clear}"
    );
}

#[test]
fn live_record_and_export_run_the_hook_once_per_start_and_clear() {
    if crate::common::need_root(&["ip", "python3", "tmux"]) {
        return;
    }
    let Some(tmux) = common::tmux::Tmux::new("hook") else {
        return;
    };
    let ns = Netns::new("hook");
    ns.ip(&["link", "set", "lo", "up"]);
    let (record_dir, export_dir, live_dir) = (
        crate::common::scratch_dir_for("hook", "record"),
        crate::common::scratch_dir_for("hook", "export"),
        crate::common::scratch_dir_for("hook", "live"),
    );
    let recording = record_dir.join("session.nlr");
    // Not guarded: --duration ends it, and its output is read at the end.
    let record = Command::new(NETLENS)
        .args(["record", "--netns", &ns.name, "--interval", "500ms"])
        .args(["--duration", "9s", "--no-capture", "--no-bpf", "-o"])
        .arg(&recording)
        .args(["--on-finding", &hook_command(&record_dir, 0)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("netlens record");
    let mut export = ChildGuard(
        Command::new(NETLENS)
            .args(["export", "--netns", &ns.name, "--interval", "500ms"])
            .args(["--listen", "127.0.0.1:0", "--no-bpf"])
            .args(["--on-finding", &hook_command(&export_dir, 1)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("netlens export"),
    );
    // The live view too, in tmux; its command exits 2, which the status
    // line must say.
    tmux.start(
        100,
        24,
        &live_dir,
        &format!(
            "{NETLENS} --netns {} --interval 500ms --no-capture --no-bpf --tab tcp \
             --on-finding '{}'",
            ns.name,
            hook_command(&live_dir, 2).replace('\'', "'\\''")
        ),
    );
    std::thread::sleep(Duration::from_millis(2500));
    // 40 refusals a second for 2 s: above the warn threshold (5/s) in every
    // 500 ms sample of the burst.
    refuse(&ns.name, 40, 2);

    let record = record.wait_with_output().expect("netlens record");
    assert!(
        record.status.success(),
        "{}",
        String::from_utf8_lossy(&record.stderr)
    );
    // SIGTERM: the exporter stops cleanly and waits for its last commands.
    unsafe { libc::kill(export.pid() as i32, libc::SIGTERM) };
    let export_status = export.0.wait().unwrap();
    let mut export_err = String::new();
    use std::io::Read;
    export
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut export_err)
        .unwrap();
    assert!(export_status.success(), "{export_err}");

    // The live hook ran for connect-refused's clear, and the status line
    // says the last failure: that clear's, or a later event's of a
    // host-wide finding the namespace's view shows too (softirq-imbalance
    // beside another test's flood).
    let cleared = || {
        std::fs::read_dir(&live_dir).unwrap().flatten().any(|e| {
            let path = e.path();
            path.extension().is_some_and(|x| x == "env")
                && std::fs::read_to_string(&path)
                    .is_ok_and(|env| env.starts_with("clear connect-refused"))
        })
    };
    tmux.wait(
        "the live hook's failure",
        Duration::from_secs(10),
        |screen| {
            (cleared() && screen.contains("the command failed (exit status: 2) for ")).then_some(())
        },
    );
    tmux.send_keys(&["q"]);
    assert_one_episode(&events(&live_dir), &ns.name, "live");
    assert_one_episode(&events(&record_dir), &ns.name, "record");
    assert_one_episode(&events(&export_dir), &ns.name, "export");
    // The exporter's command exits 1: one line per event says so.
    for event in ["start", "clear"] {
        let line = format!("the command failed (exit status: 1) for {event} connect-refused");
        assert_eq!(
            export_err.matches(&line).count(),
            1,
            "{line:?} in {export_err}"
        );
    }
    // The recording's findings: connect-refused shows in the samples
    // between the hook's start and its clear.
    let replay = Command::new(NETLENS)
        .args(["replay", "--json"])
        .arg(&recording)
        .output()
        .expect("netlens replay");
    let samples = common::parse_lines(&replay.stdout);
    let hooked = events(&record_dir);
    let time_of = |kind: &str| {
        hooked
            .iter()
            .find(|(e, _)| e["event"] == kind && e["finding"]["id"] == "connect-refused")
            .map(|(e, _)| e["time"].as_f64().unwrap())
            .unwrap()
    };
    let (start, clear) = (time_of("start"), time_of("clear"));
    let shown: Vec<f64> = samples
        .iter()
        .filter(|s| {
            s["findings"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f["id"] == "connect-refused"))
        })
        .map(|s| s["t"].as_f64().unwrap())
        .collect();
    assert!(!shown.is_empty(), "no sample of the recording shows it");
    assert_eq!(shown[0], start, "{shown:?}");
    assert!(shown.iter().all(|t| *t < clear), "{shown:?} clear {clear}");
    let _ = std::fs::remove_dir_all(&record_dir);
    let _ = std::fs::remove_dir_all(&export_dir);
    let _ = std::fs::remove_dir_all(&live_dir);
}

/// Serves one HTTP request on `listener`, answers `status`, returns the
/// request's head and body.
fn serve_one(listener: &std::net::TcpListener, status: &str) -> (String, String) {
    use std::io::{BufRead, BufReader, Read, Write};
    let (stream, _) = listener.accept().unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        head.push_str(&line);
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let mut stream = reader.into_inner();
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    (head, String::from_utf8(body).unwrap())
}

/// assets/on-finding-webhook.sh posts the event it reads, as it is, to
/// NETLENS_WEBHOOK_URL (a server on loopback here), and fails when the
/// receiver refuses it, so netlens logs the failure.
#[test]
fn the_example_webhook_script_posts_the_event() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/on-finding-webhook.sh");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/netlens", listener.local_addr().unwrap());
    let event =
        r#"{"event":"start","time":1.5,"host":"h","netns":"host","finding":{"id":"retransmits"}}"#;
    for (status, ok) in [("200 OK", true), ("500 Internal Server Error", false)] {
        let mut child = Command::new(script)
            .env("NETLENS_WEBHOOK_URL", &url)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the webhook script (needs curl)");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.as_bytes())
            .unwrap();
        let (head, body) = serve_one(&listener, status);
        assert!(head.starts_with("POST /netlens HTTP/1.1\r\n"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        assert_eq!(body, event);
        assert_eq!(child.wait().unwrap().success(), ok, "{status}");
    }
    // Without a URL it says what is missing and fails.
    let missing = Command::new(script)
        .env_remove("NETLENS_WEBHOOK_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("NETLENS_WEBHOOK_URL"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}
