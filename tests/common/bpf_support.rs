//! Namespaces, traffic and readings for tests/system/drop_reasons.rs: a sender and
//! a receiver namespace (bpf-PID-TAG, 198.18.26.0/24), the kernel's counters
//! in them, and netlens' drop rows.

use crate::common::*;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

pub const IP_SENDER: &str = "198.18.26.1";
pub const IP_RECEIVER: &str = "198.18.26.2";
pub const NETFILTER_PORT: u16 = 7001;
pub const CLOSED_PORT: u16 = 7002;
pub const SLOW_READER_PORT: u16 = 7003;
pub const LISTEN_PORT: u16 = 7004;

/// A namespace named bpf-PID-TAG, deleted on drop.
pub struct BpfNs {
    pub name: String,
}

impl BpfNs {
    pub fn new(tag: &str) -> Self {
        Self::named(format!("bpf-{}-{tag}", std::process::id()))
    }

    /// A namespace of exactly this name (unique to the caller).
    pub fn named(name: String) -> Self {
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run("ip", &["netns", "add", &name]);
        let ns = BpfNs { name };
        ns.exec(&["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns.exec(&["sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1"]);
        ns.exec(&["ip", "link", "set", "lo", "up"]);
        ns
    }

    pub fn exec(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&ns_exec(&self.name, args).stdout).into_owned()
    }

    /// A command left running in the namespace (killed by PID on drop).
    pub fn spawn(&self, args: &[&str]) -> ChildGuard {
        ChildGuard(
            Command::new("ip")
                .args(["netns", "exec", &self.name])
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .expect("spawn in namespace"),
        )
    }

    /// A counter from /proc/net/snmp or /proc/net/netstat ("Udp",
    /// "NoPorts"), read in this namespace.
    pub fn counter(&self, group: &str, name: &str) -> u64 {
        for file in ["/proc/net/snmp", "/proc/net/netstat"] {
            let text = self.exec(&["cat", file]);
            let lines: Vec<&str> = text.lines().collect();
            for pair in lines.chunks(2) {
                let [header, values] = pair else { continue };
                let prefix = format!("{group}:");
                if !header.starts_with(&prefix) || !values.starts_with(&prefix) {
                    continue;
                }
                let names = header.split_whitespace().skip(1);
                let numbers = values.split_whitespace().skip(1);
                if let Some((_, v)) = names.zip(numbers).find(|(n, _)| *n == name) {
                    return v.parse().expect("counter value");
                }
            }
        }
        panic!("no counter {group} {name}");
    }

    /// Datagrams of `size` bytes to the receiver's `port`.
    pub fn send_udp(&self, port: u16, count: u32, size: usize) {
        let script = format!(
            "import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
             for _ in range({count}): s.sendto(b'x'*{size},('{IP_RECEIVER}',{port}))\n"
        );
        self.exec(&["python3", "-c", &script]);
    }
}

impl Drop for BpfNs {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// A sender and a receiver joined by a veth pair.
pub fn pair(tag: &str) -> (BpfNs, BpfNs) {
    let sender = BpfNs::new(&format!("{tag}s"));
    let receiver = BpfNs::new(&format!("{tag}r"));
    sender.exec(&[
        "ip",
        "link",
        "add",
        "bpfva",
        "type",
        "veth",
        "peer",
        "name",
        "bpfvb",
        "netns",
        &receiver.name,
    ]);
    sender.exec(&[
        "ip",
        "addr",
        "add",
        &format!("{IP_SENDER}/24"),
        "dev",
        "bpfva",
    ]);
    receiver.exec(&[
        "ip",
        "addr",
        "add",
        &format!("{IP_RECEIVER}/24"),
        "dev",
        "bpfvb",
    ]);
    sender.exec(&["ip", "link", "set", "bpfva", "up"]);
    receiver.exec(&["ip", "link", "set", "bpfvb", "up"]);
    (sender, receiver)
}

/// `netlens snapshot --json` with `args`, once its eBPF program is
/// attached (it holds a bpf link or a perf event for it).
// A panic here ends the test process, which reaps nothing anyway.
#[allow(clippy::zombie_processes)]
pub fn snapshot_attached(args: &[&str]) -> std::process::Child {
    let child = spawn_snapshot(args);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let attached = holds_bpf_attachment(child.id());
        if attached {
            return child;
        }
        assert!(
            Instant::now() < deadline,
            "netlens never attached its program"
        );
        thread::sleep(Duration::from_millis(50));
    }
}

/// The packets of the last sample's rows of `netns` and `reason`.
pub fn counted(samples: &[Value], netns: &str, reason: &str) -> u64 {
    let last = samples.last().expect("samples");
    rows(last)
        .iter()
        .filter(|r| r["netns"] == netns && r["reason"] == reason)
        .map(|r| r["packets"].as_u64().unwrap())
        .sum()
}

pub fn rows(sample: &Value) -> Vec<Value> {
    let drops = &sample["drops"];
    assert_eq!(drops["available"], true, "drops unavailable: {drops}");
    drops["rows"].as_array().expect("rows").clone()
}

/// Within 2% or 5 packets of the kernel's count, and enough drops that the
/// comparison means something.
pub fn assert_agrees(what: &str, netlens: u64, kernel: u64, at_least: u64) {
    eprintln!("{what}: netlens {netlens}, kernel {kernel}");
    assert!(
        kernel >= at_least,
        "{what}: the kernel counted only {kernel}"
    );
    let diff = netlens.abs_diff(kernel);
    assert!(
        diff <= 5 || diff as f64 <= kernel as f64 * 0.02,
        "{what}: netlens counted {netlens}, the kernel {kernel}"
    );
}

/// Whether `pid` holds the fd of an attached program: a bpf link (tp_btf,
/// and a tracepoint through a perf link) or a perf event (older kernels).
pub fn holds_bpf_attachment(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|l| {
            let l = l.to_string_lossy();
            l.contains("bpf_link") || l.contains("[perf_event]")
        })
}
