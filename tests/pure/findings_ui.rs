//! Findings as the user sees them, driving the real binary on recordings
//! written here: hysteresis (a flickering condition does not blink, in
//! `replay --json` as in the views), the header (a calm CRIT never hides a
//! live WARN; the count), the `!` list and the TCP tab showing a finding
//! whole at 80x24, the TCP tab keeping the counters a finding cites in
//! view, and replay's finding marks with `{` / `}`.
//!
//! The recordings hold made-up samples (198.18.0.0/15 addresses); nothing
//! is sent anywhere. Each tmux test runs its own server and kills only it.

use crate::common;

use common::NETLENS;
use common::tmux::Tmux;
use netlens::model::sockets::{Proto, SocketSample, TCP_LISTEN, TCP_SYN_RECV, TcpSample};
use netlens::model::{InterfaceSample, Sample};
use netlens::record::Recorder;
use netlens::record::format::Meta;
use netlens::record::writer::Writer;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// 2024-01-01 10:00:00 UTC.
const T0: f64 = 1_704_103_200.0;

/// What happens at each second of a made-up recording.
#[derive(Clone, Copy, Default)]
struct Second {
    /// Segments retransmitted in this second (of 1000 sent).
    retrans: u64,
    /// Sockets in SYN_RECV (300: a syn-flood).
    syn_recv: u32,
    /// ListenOverflows in this second.
    overflows: u64,
    /// A LISTEN socket with more waiting than its backlog.
    full_listener: bool,
}

fn socket(state: u8, local: &str, peer: &str, recv_q: u32, send_q: u32) -> SocketSample {
    SocketSample {
        proto: Proto::Tcp,
        state,
        local: local.parse().unwrap(),
        peer: peer.parse().unwrap(),
        recv_q,
        send_q,
        uid: 0,
        inode: 1,
        users: Default::default(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
        limits: None,
    }
}

/// The samples of `seconds`, counters accumulated.
fn samples(seconds: &[Second]) -> Vec<Sample> {
    let (mut out_segs, mut retrans, mut overflows) = (0u64, 0u64, 0u64);
    seconds
        .iter()
        .enumerate()
        .map(|(i, second)| {
            out_segs += 1000;
            retrans += second.retrans;
            overflows += second.overflows;
            let mut tcp = TcpSample::default();
            // Every counter the TCP tab lists, most of them quiet.
            for (name, _) in netlens::model::sockets::COUNTERS {
                tcp.counters.insert(name.to_string(), 0);
            }
            for (name, value) in [
                ("Tcp.OutSegs", out_segs),
                ("Tcp.RetransSegs", retrans),
                ("TcpExt.ListenOverflows", overflows),
                ("TcpExt.ListenDrops", overflows),
                ("Tcp.InSegs", out_segs),
                ("Tcp.ActiveOpens", 0),
            ] {
                tcp.counters.insert(name.into(), value);
            }
            for (knob, value) in [
                ("net.ipv4.tcp_syncookies", "1"),
                ("net.ipv4.tcp_max_syn_backlog", "512"),
                ("net.core.somaxconn", "4096"),
                ("net.ipv4.tcp_synack_retries", "5"),
            ] {
                tcp.knobs.insert(knob.into(), value.into());
            }
            let mut sockets = Vec::new();
            for n in 0..second.syn_recv {
                sockets.push(socket(
                    TCP_SYN_RECV,
                    "198.18.0.2:80",
                    &format!("198.18.7.{}:{}", 1 + n % 3, 10_000 + n),
                    0,
                    0,
                ));
            }
            sockets.push(socket(
                TCP_LISTEN,
                "198.18.0.2:80",
                "0.0.0.0:0",
                if second.full_listener { 129 } else { 0 },
                128,
            ));
            tcp.states[usize::from(TCP_SYN_RECV) - 1] = second.syn_recv;
            tcp.states[usize::from(TCP_LISTEN) - 1] = 1;
            Sample {
                t: T0 + i as f64,
                mono: 100.0 + i as f64,
                netns: "demo".into(),
                interfaces: vec![InterfaceSample {
                    index: 1,
                    name: "lo".into(),
                    up: true,
                    lower_up: true,
                    loopback: true,
                    ..Default::default()
                }],
                sockets: sockets.into(),
                tcp: Some(tcp),
                ..Default::default()
            }
        })
        .collect()
}

fn record(name: &str, seconds: &[Second]) -> PathBuf {
    let path = crate::common::scratch("findings-ui", name);
    let meta = Meta {
        interval: 1.0,
        netns: "demo".into(),
        ..Default::default()
    };
    let mut writer = Writer::create(&path, &meta).unwrap();
    for mut sample in samples(seconds) {
        writer.write_sample(&mut sample).unwrap();
    }
    writer.finish().unwrap();
    path
}

/// As `record`, through the Recorder: the file also carries the findings
/// the recorder showed each time they changed (its findings stream).
fn record_with_findings(name: &str, seconds: &[Second]) -> PathBuf {
    let path = crate::common::scratch("findings-ui", name);
    let meta = Meta {
        interval: 1.0,
        netns: "demo".into(),
        ..Default::default()
    };
    let mut recorder = Recorder::create(&path, &meta).unwrap();
    let mut previous: Option<Sample> = None;
    for mut sample in samples(seconds) {
        recorder.record(previous.as_ref(), &mut sample).unwrap();
        previous = Some(sample);
    }
    recorder.finish().unwrap();
    path
}

/// Retransmitting (50%: crit) every other second, from second 1.
fn flicker(n: usize) -> Vec<Second> {
    (0..n)
        .map(|i| Second {
            retrans: if i % 2 == 1 { 500 } else { 0 },
            ..Default::default()
        })
        .collect()
}

fn replay_json(path: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(NETLENS)
        .args(["replay", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::parse_lines(&out.stdout)
}

fn ids(line: &serde_json::Value) -> Vec<String> {
    line["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_flickering_condition_does_not_blink() {
    let path = record("flicker.nlrec", &flicker(12));
    let lines = replay_json(&path);
    assert_eq!(lines.len(), 11, "every sample but the baseline");
    // The condition holds at 1, 3, 5...; the finding shows from 1 on,
    // without a gap, "calm 1" on the even seconds.
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(ids(line), ["retransmits"], "second {}: {line}", i + 1);
        let calm = line["findings"][0]["calm"].as_u64().unwrap();
        assert_eq!(calm, if i % 2 == 0 { 0 } else { 1 }, "second {}", i + 1);
        assert_eq!(line["findings"][0]["since"].as_f64(), Some(T0 + 1.0));
    }
    // Once calm for findings_off_samples (3) in a row, it goes away.
    let mut quiet = flicker(6);
    quiet.extend(std::iter::repeat_n(Second::default(), 4));
    let lines = replay_json(&record("quiet.nlrec", &quiet));
    let shown: Vec<bool> = lines.iter().map(|l| !ids(l).is_empty()).collect();
    assert_eq!(
        shown,
        [true, true, true, true, true, true, true, false, false]
    );
}

/// The replay in a pane of the shared tmux helper.
trait ReplayPane {
    fn replay(&self, file: &Path);
    fn press(&self, keys: &[&str]);
    fn shows(&self, what: &str, ready: impl Fn(&str) -> bool) -> String;
}

impl ReplayPane for Tmux {
    /// `netlens replay FILE` in an 80x24 pane.
    fn replay(&self, file: &Path) {
        let command = format!(
            "env TERM=xterm-256color {NETLENS} replay {}",
            file.display()
        );
        self.start(80, 24, &std::env::temp_dir(), &command);
        self.shows("the replay", |s| s.contains("REPLAY"));
    }

    fn press(&self, keys: &[&str]) {
        for key in keys {
            self.send_keys(&[key]);
        }
    }

    /// Polls the pane until `ready` holds (at most 15 s).
    fn shows(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        self.wait(what, Duration::from_secs(15), |s| {
            ready(s).then(|| s.to_string())
        })
    }
}

/// The screen's words in order, whatever the line breaks.
fn words(screen: &str) -> String {
    let text: String = screen
        .chars()
        .map(|c| {
            if "│─┌┐└┘".contains(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The fix the syn-flood finding gives for the samples below.
fn syn_flood_fix(path: &Path, second: usize) -> String {
    let lines = replay_json(path);
    let finding = lines[second - 1]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "syn-flood")
        .cloned()
        .expect("a syn-flood finding");
    finding["hint"].as_str().unwrap().to_string()
}

#[test]
fn findings_show_whole_at_80x24_and_the_header_counts_them() {
    let Some(tmux) = Tmux::new("whole") else {
        return;
    };
    // A flood all along: a finding with a long fix.
    let seconds: Vec<Second> = (0..6)
        .map(|_| Second {
            syn_recv: 300,
            ..Default::default()
        })
        .collect();
    let path = record("whole.nlrec", &seconds);
    let fix = syn_flood_fix(&path, 2);
    assert!(fix.len() > 160, "a fix longer than two lines: {fix}");
    tmux.replay(&path);
    tmux.press(&["Right", "Right"]);
    tmux.shows("the finding", |s| s.contains("1 finding │ WARN syn-flood"));
    // The ! list: the selected finding whole below the list.
    // Waited for whole: a capture can catch the frame half written.
    tmux.press(&["!"]);
    let whole = words(&format!("fix: {fix}"));
    let list = tmux.shows("the list with the whole fix", |s| {
        s.contains("Findings") && words(s).contains(&whole)
    });
    assert!(list.lines().all(|l| l.chars().count() <= 80));
    // The TCP tab: the fix wrapped, not cut.
    tmux.press(&["Escape", "3"]);
    tmux.shows("the TCP tab with the whole fix", |s| {
        s.contains("knobs") && words(s).contains(&whole)
    });
}

#[test]
fn a_calm_crit_never_hides_a_live_warn() {
    let Some(tmux) = Tmux::new("calm") else {
        return;
    };
    // Second 1: 50% retransmitted (CRIT), then calm; from second 2 a
    // syn-flood (WARN: syncookies on, no SYN queue drops).
    let mut seconds = vec![Second::default(); 8];
    seconds[1].retrans = 500;
    for second in &mut seconds[2..] {
        second.syn_recv = 300;
    }
    let path = record("calm.nlrec", &seconds);
    let lines = replay_json(&path);
    // At second 2 the retransmits CRIT is calm, syn-flood (WARN: cookies on,
    // no queue drops) fires: the live WARN comes first.
    let at2 = &lines[1]["findings"];
    assert_eq!(at2[0]["id"], "syn-flood");
    assert_eq!(at2[0]["severity"], "warn");
    assert_eq!(at2[1]["id"], "retransmits");
    assert_eq!(at2[1]["severity"], "crit");
    assert_eq!(at2[1]["calm"], 1);
    tmux.replay(&path);
    tmux.press(&["Right", "Right"]);
    tmux.shows("the header at second 2", |s| {
        s.contains("2 findings │ WARN syn-flood")
    });
    tmux.press(&["!"]);
    tmux.shows("the list with the calm CRIT", |s| {
        s.contains("Findings") && s.contains("calm 1 retransmits (was CRIT)")
    });
}

#[test]
fn the_tcp_tab_keeps_cited_and_moved_counters_in_view() {
    let Some(tmux) = Tmux::new("counters") else {
        return;
    };
    // ListenOverflows jumps at second 2 (342), then stays; the listener's
    // queue stays full, so listen-overflow keeps firing.
    let mut seconds = vec![Second::default(); 10];
    seconds[2].overflows = 342;
    for second in &mut seconds[2..] {
        second.full_listener = true;
    }
    let path = record("counters.nlrec", &seconds);
    tmux.replay(&path);
    tmux.press(&["3", "G"]);
    let tcp = tmux.shows("the last sample's TCP tab", |s| {
        s.contains("#10/10") && s.contains("listen-overflow")
    });
    assert!(
        tcp.lines()
            .any(|l| l.contains("ListenOverflows") && l.contains("342")),
        "ListenOverflows 342 is in view:\n{tcp}"
    );
}

#[test]
fn replay_marks_where_findings_start_and_jumps_there() {
    let Some(tmux) = Tmux::new("marks") else {
        return;
    };
    // Retransmits at 20-22 and a flood at 50-52: two starts.
    let mut seconds = vec![Second::default(); 80];
    for second in &mut seconds[20..23] {
        second.retrans = 500;
    }
    for second in &mut seconds[50..53] {
        second.syn_recv = 300;
    }
    // The marks come from the file's findings stream when it has one, and
    // from evaluating every sample when not: the same two either way.
    let recorded = record_with_findings("marks-recorded.nlrec", &seconds);
    let inspect = Command::new(NETLENS)
        .args(["replay", "--info"])
        .arg(&recorded)
        .output()
        .unwrap();
    let inspect = String::from_utf8_lossy(&inspect.stdout);
    assert!(inspect.contains("findings"), "a findings stream: {inspect}");
    let shown = Tmux::new("marks-recorded").unwrap();
    shown.replay(&recorded);
    let recorded_bar = shown
        .screen()
        .lines()
        .find(|l| l.contains("#1/80"))
        .expect("the timeline")
        .to_string();
    shown.press(&["}"]);
    shown.shows("the first recorded start", |s| s.contains("#21/80"));
    drop(shown);
    let path = record("marks.nlrec", &seconds);
    tmux.replay(&path);
    let timeline = tmux.screen();
    let bar = timeline
        .lines()
        .find(|l| l.contains("#1/80"))
        .expect("the timeline");
    assert_eq!(bar.matches('!').count(), 2, "two marks: {bar}");
    assert_eq!(bar, recorded_bar, "the same marks from the findings stream");
    tmux.press(&["}"]);
    tmux.shows("the first start", |s| s.contains("#21/80"));
    tmux.press(&["}"]);
    let at = tmux.shows("the second start", |s| s.contains("#51/80"));
    assert!(at.contains("syn-flood"), "{at}");
    tmux.press(&["{"]);
    tmux.shows("back to the first", |s| s.contains("#21/80"));
    tmux.press(&["{"]);
    tmux.shows("nothing before", |s| {
        s.contains("no finding starts before this sample")
    });
    // The key table gives the man page (and help, footer) the keys.
    let man = Command::new(NETLENS).arg("man").output().unwrap();
    let man = String::from_utf8_lossy(&man.stdout);
    assert!(
        man.contains("previous/next sample where a finding starts"),
        "the man page lists {{ and }}"
    );
}
