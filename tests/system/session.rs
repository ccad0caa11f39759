//! One session for every way of watching: a headless `netlens record` and
//! the live view's `--record`, recording the same known transfer at the
//! same time, replay (`replay --json`) the same flow with the same owning
//! process (pid and command). Headless record once skipped the owner join
//! the live view did, so its flows had no process.
//!
//! Network safety: traffic only between two namespaces the test creates
//! (198.18.0.1 and 198.18.0.2), 20 MiB once, bounded in time.

use crate::common;

use common::tmux::Tmux;
use common::transfer::{CLIENT_PORT, PAYLOAD, SERVER_PORT, finish, received, receiver, send};
use common::{ChildGuard, IP_A, IP_B, NETLENS, VethPair};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);

/// A flow as a recording's `replay --json` shows it: its two ends, and
/// every (pid, process) it was seen owned by.
#[derive(Debug, PartialEq)]
struct Replayed {
    ends: (String, String),
    owners: BTreeSet<(u64, String)>,
}

/// The client's flow in `replay --json FILE`.
fn replayed_flow(file: &Path) -> Replayed {
    let out = Command::new(NETLENS)
        .args(["replay", "--json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "replay --json {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let client = format!("{IP_A}:{CLIENT_PORT}");
    let lines = common::parse_lines(&out.stdout);
    let flows: Vec<&serde_json::Value> = lines
        .iter()
        .filter_map(|l| l["flows"].as_array())
        .flatten()
        .filter(|f| f["src"].as_str() == Some(&client) || f["dst"].as_str() == Some(&client))
        .collect();
    let first = flows
        .first()
        .unwrap_or_else(|| panic!("no flow of {client} in {}", file.display()));
    let ends = (
        first["src"].as_str().unwrap().to_string(),
        first["dst"].as_str().unwrap().to_string(),
    );
    let owners = flows
        .iter()
        .filter_map(|f| Some((f["pid"].as_u64()?, f["process"].as_str()?.to_string())))
        .collect();
    Replayed { ends, owners }
}

#[test]
fn headless_record_and_live_record_store_the_same_flow_and_process() {
    if crate::common::need_root(&["ip", "python3", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("sesslive") else {
        return;
    };
    let pair = VethPair::new("sess");
    let dir = std::env::temp_dir().join(format!("netlens-sess-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let live_file = dir.join("live.nlrec");
    let headless_file = dir.join("headless.nlrec");
    let filter = format!("tcp port {SERVER_PORT}");
    tmux.start(
        120,
        40,
        &dir,
        &format!(
            "{NETLENS} --netns {} --interval 500ms --tab flows --filter '{filter}' --record {}",
            pair.a.name,
            live_file.display()
        ),
    );
    tmux.wait("the Flows tab", PATIENCE, |s| {
        s.contains("kernel drops").then_some(())
    });
    let headless = ChildGuard(
        Command::new(NETLENS)
            .args(["record", "--netns", &pair.a.name, "--interval", "500ms"])
            .args(["--duration", "10s", "--filter", &filter, "-o"])
            .arg(&headless_file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let server = receiver(&pair.b.name);
    // Both are sampling before the transfer starts.
    std::thread::sleep(Duration::from_millis(1500));
    send(&pair.a.name);
    assert_eq!(received(server), PAYLOAD);
    let (status, stderr) = finish(headless, true);
    assert!(
        status.success(),
        "record: {}",
        String::from_utf8_lossy(&stderr)
    );
    tmux.send_keys(&["q"]);
    tmux.wait("netlens to quit", PATIENCE, |s| {
        (!s.contains("kernel drops")).then_some(())
    });

    let live = replayed_flow(&live_file);
    let headless = replayed_flow(&headless_file);
    let client = format!("{IP_A}:{CLIENT_PORT}");
    let server = format!("{IP_B}:{SERVER_PORT}");
    assert_eq!(live.ends, (client, server));
    assert!(
        live.owners.iter().any(|(_, command)| command == "python3"),
        "the live view's recording names the sender: {live:?}"
    );
    assert_eq!(
        headless, live,
        "headless record vs the live view's --record"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
