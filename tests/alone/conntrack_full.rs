//! conntrack-full against the kernel: nf_conntrack_max is every
//! namespace's (writable only in the host's), so these tests lower it to 8
//! for a few seconds, holding the host alone, and restore it on drop. The
//! namespaces, the DNAT router and the echo server are those of
//! tests/system/conntrack.rs. Traffic: TCP between 198.18.0.0/15
//! addresses only, a bounded number of connections, each with a timeout.

use crate::common;
use crate::system::conntrack::{Server, Topology, connect_many, conntrack_stats};

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::thread;
use std::time::Duration;

const MAX_SYSCTL: &str = "/proc/sys/net/netfilter/nf_conntrack_max";

#[test]
fn full_table_drops_new_connections_and_raises_conntrack_full() {
    let Some(_alone) =
        crate::common::need_root_alone(&["ip", "conntrack", "iptables", "setpriv", "sysctl"])
    else {
        return;
    };
    let topology = Topology::new("ctf");
    let _server = Server::start(&topology.server);
    const MAX: usize = 8;
    let original = std::fs::read_to_string(MAX_SYSCTL)
        .unwrap()
        .trim()
        .to_string();
    let restore = crate::common::host_sysctl::HostSysctl::set(MAX_SYSCTL, &MAX.to_string());
    let (streams, failed) = connect_many(&topology.client, MAX, Duration::from_secs(3));
    assert_eq!((streams.len(), failed), (MAX, 0), "the first {MAX} fit");

    // While netlens samples, new connections keep failing: each SYN is
    // dropped by conntrack. Bounded: attempts of 250 ms, at least 12, and
    // on until netlens is done (at most 120: a loaded box may start it
    // late). Four samples: on a loaded box a conntrack read can come late
    // (its sample then holds an earlier read, and no rate), and two may
    // share one read.
    let snapshot_ns = topology.router.name.clone();
    let netlens = thread::spawn(move || {
        snapshot(&[
            "--section",
            "conntrack,findings",
            "--count",
            "4",
            "--netns",
            &snapshot_ns,
        ])
    });
    let (mut more, mut refused, mut attempts) = (Vec::new(), 0, 0);
    while attempts < 12 || (!netlens.is_finished() && attempts < 120) {
        let (opened, failed) = connect_many(&topology.client, 4, Duration::from_millis(250));
        more.extend(opened);
        (refused, attempts) = (refused + failed, attempts + 4);
    }
    let samples = netlens.join().unwrap();
    let stats = conntrack_stats(&topology.router);
    drop(restore);
    assert_eq!(
        std::fs::read_to_string(MAX_SYSCTL).unwrap().trim(),
        original,
        "nf_conntrack_max is restored"
    );
    assert!(more.is_empty(), "no connection fits in a full table");
    assert_eq!(refused, attempts);
    assert!(
        stats["drop"] >= attempts as u64,
        "conntrack -S counts the drops: {stats:?}"
    );

    let last = samples.last().unwrap();
    let ct = &last["conntrack"];
    assert_eq!(ct["count"].as_u64(), Some(MAX as u64), "{ct}");
    assert_eq!(ct["max"].as_u64(), Some(MAX as u64), "{ct}");
    assert_eq!(ct["usage_percent"].as_f64(), Some(100.0));
    assert!(ct["stats"]["drop"].as_u64().unwrap() >= 1, "{ct}");
    let drops: f64 = samples
        .iter()
        .filter_map(|s| s["conntrack"]["drop_per_s"].as_f64())
        .sum();
    assert!(drops > 0.0, "drop_per_s shows the drops: {samples:?}");
    let ids: BTreeSet<String> = samples
        .iter()
        .flat_map(|s| s["findings"].as_array().unwrap().clone())
        .filter_map(|f| f["id"].as_str().map(String::from))
        .collect();
    assert!(ids.contains("conntrack-full"), "{ids:?}");
    assert!(ids.contains("conntrack-drops"), "{ids:?}");
    let full = last["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "conntrack-full")
        .expect("conntrack-full in the last sample");
    assert_eq!(full["severity"], "crit");
    assert!(
        full["hint"].as_str().unwrap().contains("nf_conntrack_max"),
        "{full}"
    );
    drop(streams);
}

/// Records a conntrack-full incident with `netlens record` and checks the
/// replay shows it. With NETLENS_WRITE_DEMO=PATH the recording is kept
/// there: that is how assets/demo-conntrack-full.nlrec was made.
#[test]
fn recorded_conntrack_full_incident_replays() {
    let Some(_alone) =
        crate::common::need_root_alone(&["ip", "conntrack", "iptables", "setpriv", "sysctl"])
    else {
        return;
    };
    let topology = Topology::new("ctr");
    let _server = Server::start(&topology.server);
    let dir = std::env::temp_dir().join(format!("netlens-ct-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("incident.nlrec");
    let _ = std::fs::remove_file(&path);
    let recorder = std::process::Command::new(NETLENS)
        .args(["record", "-o", path.to_str().unwrap(), "--duration", "9s"])
        .args(["--interval", "500ms", "--netns", &topology.router.name])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut recorder = ChildGuard(recorder);
    // Quiet (two samples written, on a loaded host too), then the table
    // fills (max 8), 12 connections are dropped, then the limit is
    // restored and connections work again. All bounded.
    crate::common::wait_until("two samples recorded", Duration::from_secs(8), || {
        std::process::Command::new(NETLENS)
            .args(["replay", "--json", path.to_str().unwrap()])
            .stderr(std::process::Stdio::null())
            .output()
            .is_ok_and(|out| out.stdout.iter().filter(|&&b| b == b'\n').count() >= 2)
    });
    let restore = crate::common::host_sysctl::HostSysctl::set(MAX_SYSCTL, "8");
    let (mut streams, _) = connect_many(&topology.client, 8, Duration::from_secs(3));
    let (_, refused) = connect_many(&topology.client, 12, Duration::from_millis(250));
    drop(restore);
    thread::sleep(Duration::from_millis(1000));
    let (more, failed) = connect_many(&topology.client, 4, Duration::from_secs(3));
    streams.extend(more);
    assert_eq!((refused, failed), (12, 0));
    assert!(recorder.0.wait().unwrap().success());
    drop(streams);

    let out = std::process::Command::new(NETLENS)
        .args(["replay", "--json", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples = parse_lines(&out.stdout);
    let full: Vec<&Value> = samples
        .iter()
        .filter(|s| {
            s["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["id"] == "conntrack-full")
        })
        .collect();
    assert!(!full.is_empty(), "conntrack-full never shows in the replay");
    assert!(full.iter().any(|s| s["conntrack"]["max"] == 8));
    let dropped: f64 = samples
        .iter()
        .filter_map(|s| s["conntrack"]["drop_per_s"].as_f64())
        .sum();
    assert!(dropped > 0.0, "the drops are in the recording");
    // (Host-wide findings, such as softirq-imbalance on a loaded host, may
    // show in any namespace's view: only conntrack's count here.)
    let first = &samples.first().unwrap()["findings"];
    assert!(
        !first
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"].as_str().unwrap().starts_with("conntrack")),
        "the recording starts before the incident: {first}"
    );
    if let Some(keep) = std::env::var_os("NETLENS_WRITE_DEMO") {
        std::fs::copy(&path, keep).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
