//! One accounting path for a flow's packets and bytes: a known transfer
//! (20 MiB from a Python sender, over a veth pair whose large GSO packets
//! are captured at their wire length) shows the same bytes in the Flows
//! table, the flow screen, the host grouping, `snapshot --json` and the
//! replayed recording, never going down while it grows. The FLOW column
//! keeps its port numbers whole at 120, 80 and 40 columns, and `w` and `e`
//! save every packet (GSO super-packets included) in pcaps tcpdump reads.
//!
//! Network safety: traffic only between two namespaces the test creates
//! (198.18.0.1 and 198.18.0.2), 20 MiB once, bounded in time.

use crate::common;

use common::tmux::Tmux;
use common::transfer::{CLIENT_PORT, PAYLOAD, SERVER_PORT, finish, received, receiver, send};
use common::{ChildGuard, IP_A, IP_B, NETLENS, VethPair};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);

/// "20.0 MiB" (as the table prints it) in bytes.
fn parse_bytes(value: &str, unit: &str) -> f64 {
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        other => panic!("unit {other:?}"),
    };
    value.parse::<f64>().expect("a number") * scale
}

/// The row of the client's flow: its packets and bytes (the two cells after
/// the server's port).
fn flow_row(screen: &str) -> Option<(u64, f64)> {
    let line = screen
        .lines()
        .find(|l| l.contains(&format!(":{CLIENT_PORT} > ")))?;
    let at = line.find(&format!(":{SERVER_PORT} "))?;
    let cells: Vec<&str> = line[at + 6..].split_whitespace().collect();
    Some((
        cells.first()?.parse().ok()?,
        parse_bytes(cells.get(1)?, cells.get(2)?),
    ))
}

/// The row of a grouping whose key is `key`: flows, packets, bytes.
fn group_row(screen: &str, key: &str) -> Option<(u64, u64, f64)> {
    let line = screen
        .lines()
        .find(|l| l.split_whitespace().next() == Some(key))?;
    let cells: Vec<&str> = line.split_whitespace().skip(1).collect();
    Some((
        cells.first()?.parse().ok()?,
        cells.get(1)?.parse().ok()?,
        parse_bytes(cells.get(2)?, cells.get(3)?),
    ))
}

/// Within the table's three significant digits.
fn close(shown: f64, exact: u64) -> bool {
    (shown - exact as f64).abs() <= exact as f64 * 0.006
}

/// The client flow's (packets, bytes) in the last JSON line that has it.
fn json_flow(stdout: &[u8]) -> (u64, u64) {
    let lines = common::parse_lines(stdout);
    let flow = lines
        .iter()
        .rev()
        .filter_map(|l| l["flows"].as_array())
        .flatten()
        .find(|f| {
            f["src"].as_str() == Some(&format!("{IP_A}:{CLIENT_PORT}"))
                || f["dst"].as_str() == Some(&format!("{IP_A}:{CLIENT_PORT}"))
        })
        .expect("the flow in the JSON");
    (common::u64f(flow, "packets"), common::u64f(flow, "bytes"))
}

/// The packets tcpdump reads from `file`, and the longest length it prints.
fn tcpdump_read(file: &Path) -> (usize, u64) {
    let out = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(file)
        .output()
        .expect("run tcpdump");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tcpdump -r: {stderr}");
    assert!(!stderr.contains("truncated"), "tcpdump -r: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let longest = text
        .lines()
        .filter_map(|l| l.rsplit("length ").next()?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    (text.lines().count(), longest)
}

/// "wrote 812 packets to /dir/netlens-….pcapng" → (812, path).
fn saved(screen: &str, verb: &str) -> Option<(usize, PathBuf)> {
    let line = screen.lines().find(|l| l.contains(verb))?;
    let rest = &line[line.find(verb)? + verb.len()..];
    let count = rest.split_whitespace().next()?.parse().ok()?;
    let path = rest[rest.find(" to ")? + 4..].trim();
    path.ends_with(".pcapng")
        .then(|| (count, PathBuf::from(path)))
}

/// `netlens read` of a file `w` or `e` wrote: each of its `count` packets
/// names where it was captured (the veth in namespace `ns`) and the
/// sender's process (python3), whose socket had closed by then.
fn named_python3(file: &std::path::Path, ns: &str, count: usize) {
    let lines = Command::new(NETLENS)
        .arg("read")
        .arg(file)
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&lines.stdout);
    let owner = format!("  # {} (namespace {ns}): pid ", common::DEV_A);
    assert_eq!(lines.lines().count(), count);
    assert!(
        lines
            .lines()
            .all(|l| l.contains(&owner) && l.ends_with(" (python3)")),
        "{owner}\n{lines}"
    );
}

#[test]
fn known_bytes_agree_everywhere_and_never_go_down() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "python3", "tcpdump", "tmux"]) else {
        return;
    };
    let Some(tmux) = Tmux::new("flowsacct") else {
        return;
    };
    let pair = VethPair::new("fa");
    let dir = std::env::temp_dir().join(format!("netlens-flowsacct-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let recording = dir.join("session.nlrec");
    let filter = format!("tcp port {SERVER_PORT}");
    tmux.start(
        120,
        40,
        &dir,
        &format!(
            "{NETLENS} --netns {} --tab flows --filter '{filter}' --record {}",
            pair.a.name,
            recording.display()
        ),
    );
    tmux.wait("the Flows tab", PATIENCE, |s| {
        s.contains("kernel drops").then_some(())
    });
    let snapshot = ChildGuard(
        Command::new(NETLENS)
            .args([
                "snapshot",
                "--json",
                "--count",
                "9",
                "--netns",
                &pair.a.name,
            ])
            .args(["--filter", &filter])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let server = receiver(&pair.b.name);
    std::thread::sleep(Duration::from_millis(1500));
    // While the transfer runs, the row's bytes only grow.
    let sender = {
        let ns = pair.a.name.clone();
        std::thread::spawn(move || send(&ns))
    };
    let mut seen: Vec<f64> = Vec::new();
    while !sender.is_finished() {
        if let Some((_, bytes)) = flow_row(&tmux.screen()) {
            seen.push(bytes);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let sent = sender.join().unwrap();
    assert_eq!(received(server), PAYLOAD);
    let (status, stdout) = finish(snapshot, false);
    assert!(status.success());
    let (json_packets, json_bytes) = json_flow(&stdout);
    // Every packet at its wire length: the bytes the sender's kernel put
    // on the wire (retransmissions included) plus at most 100 bytes of
    // headers a packet (cooked 16, IP 20, TCP with options 32).
    assert!(
        json_bytes >= sent && json_bytes <= sent + json_packets * 100,
        "{json_packets} packets, {json_bytes} bytes for {sent} bytes sent \
         ({PAYLOAD} bytes of payload)"
    );
    let (packets, bytes) = tmux.wait("the whole flow in the table", PATIENCE, |s| {
        flow_row(s).filter(|(_, bytes)| close(*bytes, json_bytes))
    });
    seen.push(bytes);
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "the table's bytes went down: {seen:?}"
    );
    assert!(
        packets.abs_diff(json_packets) <= json_packets / 100,
        "{packets} vs {json_packets}"
    );

    // The FLOW column keeps both ports at 120, 80 and 40 columns.
    let whole = format!("{IP_A}:{CLIENT_PORT} > {IP_B}:{SERVER_PORT}");
    for (width, cut) in [(120, false), (80, false), (40, true)] {
        tmux.resize(width, 40);
        // tmux itself cuts the old screen to the new width: wait for the
        // redraw, a row that is whole or marked, with its ports.
        tmux.wait(&format!("the flow row at {width} columns"), PATIENCE, |s| {
            let row = s
                .lines()
                .find(|l| l.contains(&format!(":{CLIENT_PORT} > ")))?;
            let fits = s.lines().all(|l| l.chars().count() <= usize::from(width));
            let shown = if cut {
                row.contains('…')
                    && row.contains(&format!(":{SERVER_PORT} "))
                    && row.contains(" MiB")
            } else {
                row.contains(&whole) && row.contains(" MiB")
            };
            (fits && shown).then_some(())
        });
    }
    tmux.resize(120, 40);

    // `w` saves every listed packet, GSO super-packets whole.
    tmux.send_keys(&["w"]);
    let (count, file) = tmux.wait("w's message", PATIENCE, |s| saved(s, "wrote "));
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(file.starts_with(&dir), "{}", file.display());
    assert!(
        name.len() == "netlens-1700000000-0123abcd.pcapng".len() && name.starts_with("netlens-"),
        "{name}"
    );
    let (read, longest) = tcpdump_read(&file);
    assert_eq!(read, count);
    assert!(
        longest > 1500,
        "no GSO packet in the file (longest {longest})"
    );
    named_python3(&file, &pair.a.name, count);

    // The flow screen: the whole flow's count and bytes (the kernel's when
    // the eBPF counter runs, else the capture's flow table), and its own
    // packets' bytes per direction add up to the same.
    tmux.send_keys(&["Enter"]);
    let screen = tmux.wait("the flow screen", PATIENCE, |s| {
        s.contains("[Summary]").then(|| s.to_string())
    });
    let duration = screen.lines().find(|l| l.starts_with("duration")).unwrap();
    let counter = ["kernel count", "flow table"]
        .into_iter()
        .find(|c| duration.contains(c))
        .unwrap_or_else(|| panic!("{duration}"));
    assert!(
        duration.contains(&format!("{counter} {packets} (")),
        "{duration}"
    );
    // The summary's two count lines (the payload pane's headings start
    // with the same arrows).
    let counts: Vec<&str> = screen
        .lines()
        .filter(|l| l.starts_with("→ client") || l.starts_with("← server"))
        .filter(|l| l.contains(" on the wire"))
        .collect();
    assert_eq!(counts.len(), 2, "{screen}");
    let wire: f64 = counts
        .iter()
        .map(|l| {
            let before: Vec<&str> = l[..l.find(" on the wire").unwrap()]
                .split_whitespace()
                .collect();
            parse_bytes(before[before.len() - 2], before[before.len() - 1])
        })
        .sum();
    assert!(
        close(wire, json_bytes),
        "{wire} on screen, {json_bytes} in JSON\n{screen}"
    );
    let table_part = &duration[duration.find(counter).unwrap() + counter.len()..];
    let inner: Vec<&str> = table_part
        .split(['(', ')', ' '])
        .filter(|t| !t.is_empty())
        .collect();
    assert!(
        close(parse_bytes(inner[1], inner[2]), json_bytes),
        "{duration}"
    );

    // `e` exports the flow's packets; tcpdump reads them all.
    tmux.send_keys(&["e"]);
    let (count, file) = tmux.wait("e's message", PATIENCE, |s| saved(s, "exported "));
    let (read, longest) = tcpdump_read(&file);
    assert_eq!(read, count);
    assert!(
        longest > 1500,
        "no GSO packet in the export (longest {longest})"
    );
    named_python3(&file, &pair.a.name, count);
    tmux.send_keys(&["Escape"]);

    // By host: the sender's host has this flow's bytes.
    tmux.send_keys(&["a"]);
    let (flows, _, host_bytes) = tmux.wait("the host grouping", PATIENCE, |s| {
        group_row(s, &IP_A.to_string())
    });
    assert_eq!(flows, 1);
    assert!(
        close(host_bytes, json_bytes),
        "{host_bytes} vs {json_bytes}"
    );
    tmux.send_keys(&["q"]);
    tmux.wait("netlens to quit", PATIENCE, |s| {
        (!s.contains("kernel drops")).then_some(())
    });

    // The recording replays the same counts, in JSON and in the table.
    let replay = Command::new(NETLENS)
        .args(["replay", "--json"])
        .arg(&recording)
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let (_, replayed_bytes) = json_flow(&replay.stdout);
    assert!(
        replayed_bytes >= PAYLOAD && close(replayed_bytes as f64, json_bytes),
        "{replayed_bytes} vs {json_bytes}"
    );
    let replay_ui = Tmux::new("flowsreplay").unwrap();
    replay_ui.start(
        120,
        40,
        &dir,
        &format!("{NETLENS} replay {}", recording.display()),
    );
    replay_ui.wait("the replay", PATIENCE, |s| {
        s.contains("REPLAY").then_some(())
    });
    replay_ui.send_keys(&["G", "6"]);
    let (_, bytes) = replay_ui.wait("the replayed flow", PATIENCE, flow_row);
    assert!(close(bytes, replayed_bytes), "{bytes} vs {replayed_bytes}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn capture_w_saves_every_gso_packet_whole() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "python3", "tcpdump", "tmux"]) else {
        return;
    };
    let pair = VethPair::new("fw");
    let dir = std::env::temp_dir().join(format!("netlens-flowsw-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gso.pcap");
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
    assert!(status.success(), "{stderr}");
    let captured: usize = stderr
        .lines()
        .find_map(|l| l.strip_suffix(" packets captured")?.parse().ok())
        .expect("the count");
    let (read, longest) = tcpdump_read(&file);
    assert_eq!(read, captured, "{stderr}");
    assert!(longest > 1500, "no GSO packet (longest {longest})");
    let _ = std::fs::remove_dir_all(&dir);
}
