//! `ip netns exec NS netlens tmux` with the tmux server started outside
//! NS: the server spawns the panes in its own namespace,
//! so each pane must be told which one to watch. Every pane's sampler is in
//! NS, every pane names NS, and the Interfaces pane lists NS's interfaces,
//! not the host's.

use crate::common::tmux::Tmux;
use crate::common::{NETLENS, run};
use crate::names::skip_unless_root;
use crate::stale::{netlens_in, thread_named};
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::time::Duration;

/// A namespace `nlt<pid><tag>` with a veth pair of its own (`dummy` and
/// its peer); deleted on drop.
struct Namespace {
    name: String,
}

impl Namespace {
    fn new(tag: &str, dummy: &str) -> Namespace {
        let name = format!("nlt{}{tag}", std::process::id());
        run("ip", &["netns", "add", &name]);
        let ns = Namespace { name };
        let peer = format!("{dummy}p");
        let add = [
            "-n", &ns.name, "link", "add", dummy, "type", "veth", "peer", "name", &peer,
        ];
        run("ip", &add);
        run("ip", &["-n", &ns.name, "link", "set", dummy, "up"]);
        ns
    }

    fn inode(&self) -> u64 {
        std::fs::metadata(format!("/run/netns/{}", self.name))
            .unwrap()
            .ino()
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// The namespace inode of thread `tid` of `pid`.
fn thread_netns(pid: u32, tid: i32) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{pid}/task/{tid}/ns/net")).ok()?;
    let text = link.to_string_lossy();
    text.strip_prefix("net:[")?.strip_suffix(']')?.parse().ok()
}

#[test]
fn tmux_run_in_a_netns_watches_it_in_every_pane() {
    let test = "tmux_run_in_a_netns_watches_it_in_every_pane";
    if skip_unless_root(test) {
        return;
    }
    let Some(tmux) = Tmux::new("nstmux") else {
        return;
    };
    let dummy = "nltdummy0";
    let ns = Namespace::new("t", dummy);
    // The server first, in the host's namespace, as a user's would be.
    tmux.session("hold", 200, 50, "sleep 300");
    tmux.run(&["set-option", "-g", "default-size", "200x50"]);
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.name, "env"])
        .arg(format!("TMUX_TMPDIR={}", tmux.tmpdir.display()))
        .args([
            "TERM=tmux-256color",
            NETLENS,
            "--no-capture",
            "--no-bpf",
            "tmux",
        ])
        .args([
            "--detached",
            "--session",
            "nlt",
            "--tmux-socket",
            &tmux.socket,
        ])
        .env_remove("TMUX")
        .output()
        .expect("run ip netns exec netlens tmux");
    assert!(
        out.status.success(),
        "netlens tmux: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let panes = tmux.run(&["list-panes", "-t", "nlt", "-F", "#{pane_id} #{pane_pid}"]);
    let panes: Vec<(&str, &str)> = panes
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    assert_eq!(panes.len(), 4, "{panes:?}");
    let inode = ns.inode();
    for (id, pid) in &panes {
        let shown = tmux.wait_for(id, &format!("ns:{}", ns.name), |lines| {
            lines.iter().any(|l| l.contains(&format!("ns:{}", ns.name)))
        });
        let netlens = netlens_in(pid).unwrap_or_else(|| panic!("pane {id}: no netlens"));
        let sampler = thread_named(netlens, "sampler").expect("a sampler thread");
        assert_eq!(
            thread_netns(netlens, sampler),
            Some(inode),
            "pane {id} samples another namespace:\n{}",
            shown.join("\n")
        );
    }
    // The Interfaces pane (the first) lists NS's dummy and loopback only.
    let (first, _) = panes[0];
    let shown = tmux.wait_for(first, dummy, |lines| {
        lines.iter().any(|l| l.contains(dummy))
    });
    let host_only = std::fs::read_dir("/sys/class/net")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "lo" && name.len() >= 3)
        .find(|name| shown.iter().any(|l| l.contains(name.as_str())));
    assert_eq!(
        host_only,
        None,
        "a host interface shows:\n{}",
        shown.join("\n")
    );
    let _ = tmux.run(&["kill-session", "-t", "nlt"]);
    std::thread::sleep(Duration::from_millis(200));
}
