//! `read --flows` keeps a bounded flow table and says how many flows it
//! evicted, on stderr and as the last JSON line.

use std::process::Command;

/// A pcap (Ethernet) of `n` UDP packets, each its own 5-tuple from
/// 198.18.0.0/15.
fn many_flows_pcap(n: u32) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("netlens-flows-cap-{}.pcap", std::process::id()));
    let mut out = Vec::with_capacity(24 + n as usize * 58);
    out.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    for i in 0..n {
        let mut frame = vec![0u8; 42];
        frame[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let ip = &mut frame[14..34];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&28u16.to_be_bytes());
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&[198, 18, (i >> 16) as u8, (i >> 8) as u8]);
        ip[16..20].copy_from_slice(&[198, 19, 0, 1]);
        let udp = &mut frame[34..42];
        udp[0..2].copy_from_slice(&(1024 + (i & 0xff) as u16).to_be_bytes());
        udp[2..4].copy_from_slice(&53u16.to_be_bytes());
        udp[4..6].copy_from_slice(&8u16.to_be_bytes());
        out.extend_from_slice(&(1_700_000_000 + i / 1000).to_le_bytes());
        out.extend_from_slice(&(i % 1000 * 1000).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn read_flows_is_bounded_and_says_what_it_evicted() {
    let n = 130_000;
    let pcap = many_flows_pcap(n);
    let output = Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["read", "--flows", "--json"])
        .arg(&pcap)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&pcap);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("flows evicted"), "{stderr}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (last, flows) = lines.split_last().unwrap();
    let evicted = last["evicted_flows"].as_u64().unwrap();
    assert_eq!(last["max_flows"], 100_000);
    assert!(flows.len() <= 100_000, "{}", flows.len());
    assert_eq!(flows.len() as u64 + evicted, u64::from(n));
    // The flows that are shown are right: one packet each.
    assert!(flows.iter().all(|f| f["packets"] == 1), "{:?}", flows[0]);
}
