//! `load pktgen`: the command sequence against a scratch directory, and
//! what it says without the kernel module.

use super::*;

#[test]
fn pktgen_command_sequence_against_a_scratch_directory() {
    eprintln!(
        "NOTE: the kernel's pktgen is not available here (no /proc/net/pktgen); this checks \
         netlens' command sequence against a scratch directory standing in for it"
    );
    let dir = TempDir::new("pktgen");
    // What a device file holds after a run (Documentation/networking/pktgen.rst).
    let result = |pps: u64| {
        format!(
            "Params: count 1000  min_pkt_size: 64  max_pkt_size: 64\n\
             Result: OK: 1310(c1220+d88) usec, 1000 (64byte,0frags)\n  \
             {pps}pps 366Mb/sec (366380160bps) errors: 3\n"
        )
    };
    for file in ["pgctrl", "kpktgend_0", "kpktgend_1"] {
        std::fs::write(dir.0.join(file), "").unwrap();
    }
    std::fs::write(dir.0.join("nlv0@0"), result(700_000)).unwrap();
    std::fs::write(dir.0.join("nlv0@1"), result(600_000)).unwrap();
    let root = dir.0.display().to_string();
    let lines = load_json(
        None,
        &[
            "pktgen",
            "--proc-root",
            &root,
            "--dev",
            "nlv0",
            "--dst",
            "198.18.0.2",
            "--dst-mac",
            "02:00:C6:12:00:02",
            "--count",
            "1000",
            "--size",
            "64",
            "--delay",
            "5",
            "--threads",
            "2",
            "--json",
        ],
    );
    let read = |f: &str| std::fs::read_to_string(dir.0.join(f)).unwrap();
    assert_eq!(read("kpktgend_0"), "rem_device_all\nadd_device nlv0@0\n");
    assert_eq!(read("kpktgend_1"), "rem_device_all\nadd_device nlv0@1\n");
    let commands = "count 1000\nclone_skb 0\npkt_size 64\ndelay 5\ndst 198.18.0.2\n\
                    dst_mac 02:00:c6:12:00:02\n";
    assert_eq!(read("nlv0@0"), result(700_000) + commands);
    assert_eq!(read("nlv0@1"), result(600_000) + commands);
    assert_eq!(read("pgctrl"), "start\n");
    let summary = lines.last().unwrap();
    assert_eq!(
        summary["packets_per_s"].as_u64(),
        Some(1_300_000),
        "{summary}"
    );
    assert_eq!(summary["errors"].as_u64(), Some(6));
    assert_eq!(summary["packets"].as_u64(), Some(2000));
    assert_eq!(summary["devices"].as_array().map(Vec::len), Some(2));
}

#[test]
fn pktgen_without_the_module_says_how_to_get_it() {
    if std::path::Path::new("/proc/net/pktgen").exists() {
        eprintln!("SKIP pktgen_without_the_module_says_how_to_get_it: pktgen is loaded here");
        return;
    }
    let output = netlens_load(
        None,
        &[
            "pktgen",
            "--dev",
            "lo",
            "--dst",
            "127.0.0.1",
            "--dst-mac",
            "00:00:00:00:00:00",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    for needle in ["CONFIG_NET_PKTGEN", "modprobe pktgen", "netlens load udp"] {
        assert!(err.contains(needle), "{needle} missing: {err}");
    }
}
