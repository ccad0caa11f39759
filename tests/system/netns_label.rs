//! The namespace label of a netlens started inside a namespace without
//! --netns (`ip netns exec NAME netlens`): the header, `snapshot --json`
//! ("netns") and a recording's `replay --info` name it as
//! `ip netns identify` does, not "host".
//!
//! The namespace is created by the test (`netlens-t<pid>-uitext...`) and
//! removed on drop; nothing is sent anywhere.

use crate::common;

use common::tmux::Tmux;
use common::*;
use std::process::{Command, Stdio};

#[test]
fn ip_netns_exec_names_the_namespace_in_snapshot_header_and_recording() {
    if crate::common::need_root(&["ip", "tmux"]) {
        return;
    }
    let ns = Netns::new("uitext-label");
    let exec = |args: &[&str]| {
        Command::new("ip")
            .args(["netns", "exec", &ns.name, NETLENS])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run ip netns exec netlens")
    };

    let out = exec(&["snapshot", "--json", "--no-capture"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples = parse_lines(&out.stdout);
    assert_eq!(samples[0]["netns"], ns.name.as_str(), "snapshot --json");

    let dir = std::env::temp_dir().join(format!("netlens-uitext-label-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ns.nlrec");
    let _ = std::fs::remove_file(&path);
    let out = exec(&[
        "record",
        "--no-capture",
        "--interval",
        "200ms",
        "--duration",
        "1s",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = Command::new(NETLENS)
        .args(["replay", "--info"])
        .arg(&path)
        .output()
        .expect("run replay --info");
    let info = String::from_utf8_lossy(&info.stdout).into_owned();
    assert!(
        info.contains(&format!("namespace {},", ns.name)),
        "replay --info:\n{info}"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    let Some(tmux) = Tmux::new("uitext-label") else {
        return;
    };
    let command = format!(
        "ip netns exec {} {NETLENS} --no-capture --interval 200ms",
        ns.name
    );
    tmux.session("label", 100, 24, &command);
    let shown = tmux.wait_for("label", "the namespace in the header", |lines| {
        // "ns:…" until the first sample arrives.
        lines
            .first()
            .is_some_and(|l| l.contains("ns:") && !l.contains("ns:…"))
    });
    let header = &shown[0];
    // The header fits the name to 20 columns: compare that much.
    let shown_name: String = ns.name.chars().take(19).collect();
    assert!(
        header.contains(&format!("ns:{shown_name}")) && !header.contains("ns:host"),
        "header: {header}"
    );
}
