//! `ip netns exec NS netlens tmux` with the tmux server started outside
//! NS: the server spawns the panes in its own namespace,
//! so each pane must be told which one to watch. Every pane's sampler is in
//! NS, every pane names NS, and the Interfaces pane lists NS's interfaces,
//! not the host's. The other subcommands (snapshot, record and its
//! replay, export, conns) watch the namespace they run in too.

use super::stale::{netlens_in, thread_named};
use crate::common::tmux::Tmux;
use crate::common::{NETLENS, run};
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
    if crate::common::need_root(&["ip", "tmux", "python3", "curl"]) {
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

/// `ip netns exec NS netlens SUBCOMMAND`: snapshot, record (then replay),
/// export and conns all watch NS, the namespace they run in, and say so.
#[test]
fn every_subcommand_watches_the_namespace_it_runs_in() {
    let test = "every_subcommand_watches_the_namespace_it_runs_in";
    if crate::common::need_root(&["ip", "tmux", "python3", "curl"]) {
        return;
    }
    let dummy = "nlsdummy0";
    let ns = Namespace::new("s", dummy);
    run("ip", &["-n", &ns.name, "link", "set", "lo", "up"]);
    let in_ns = |args: &[&str]| -> String {
        let out = Command::new("ip")
            .args(["netns", "exec", &ns.name, NETLENS])
            .args(args)
            .output()
            .expect("run netlens in the namespace");
        assert!(
            out.status.success(),
            "netlens {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let names_of = |json: &str| -> (String, Vec<String>) {
        let sample: serde_json::Value =
            serde_json::from_str(json.lines().next().expect("a sample")).expect("JSON");
        let names = sample["interfaces"]
            .as_array()
            .expect("interfaces")
            .iter()
            .map(|i| i["name"].as_str().unwrap_or_default().to_string())
            .collect();
        (
            sample["netns"].as_str().unwrap_or_default().to_string(),
            names,
        )
    };
    let mut want = vec!["lo".to_string(), format!("{dummy}p"), dummy.to_string()];
    want.sort();
    let check = |what: &str, (netns, mut names): (String, Vec<String>)| {
        names.sort();
        assert_eq!(netns, ns.name, "{what}: the sample's namespace");
        assert_eq!(names, want, "{what}: the interfaces");
    };

    check(
        "snapshot",
        names_of(&in_ns(&["--no-bpf", "snapshot", "--json", "--count", "1"])),
    );

    let dir = tempfile_dir(test);
    let recording = dir.join("ns.netlens");
    let path = recording.to_str().unwrap();
    in_ns(&["--no-bpf", "record", "-o", path, "--duration", "2s"]);
    let replayed = crate::common::run(NETLENS, &["replay", path, "--json"]);
    check(
        "replay",
        names_of(&String::from_utf8_lossy(&replayed.stdout)),
    );

    let scraped = scrape_in(&ns.name);
    for name in &want {
        let line = format!("node_network_up{{device=\"{name}\",netns=\"{}\"}}", ns.name);
        assert!(scraped.contains(&line), "export: no {line} in\n{scraped}");
    }
    assert!(
        !scraped.contains("netns=\"host\""),
        "export: the host's data"
    );

    // A connection that ends in NS is logged; one that ends on the host
    // meanwhile is not.
    let mut conns = Command::new("ip")
        .args(["netns", "exec", &ns.name, NETLENS, "--no-bpf", "conns"])
        // Ended by SIGINT once both connections are closed; the duration
        // only bounds it (a fixed 4 s ran out on a busy box before the
        // connections were made).
        .args(["--json", "--duration", "60s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start conns");
    // Its first line says it is subscribed: closes from then on are seen.
    // (The reader lives on: netlens may write to stderr again.)
    let mut said = String::new();
    let mut stderr = std::io::BufReader::new(conns.stderr.take().expect("stderr"));
    std::io::BufRead::read_line(&mut stderr, &mut said).unwrap();
    assert!(said.contains(&ns.name), "conns: {said}");
    let connect_and_close = "import socket\n\
        s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n\
        c = socket.create_connection(s.getsockname()); a, _ = s.accept()\n\
        print(c.getsockname()[1]); c.close(); a.close()";
    let in_ns_port = String::from_utf8_lossy(
        &run(
            "ip",
            &[
                "netns",
                "exec",
                &ns.name,
                "python3",
                "-c",
                connect_and_close,
            ],
        )
        .stdout,
    )
    .trim()
    .to_string();
    let host_port = String::from_utf8_lossy(&run("python3", &["-c", connect_and_close]).stdout)
        .trim()
        .to_string();
    std::thread::sleep(std::time::Duration::from_secs(1));
    // SAFETY: kill(2) on the PID of the child this test started (ip netns
    // exec execs netlens in place).
    unsafe { libc::kill(conns.id() as i32, libc::SIGINT) };
    let logged = conns.wait_with_output().expect("conns ends");
    drop(stderr);
    let logged = String::from_utf8_lossy(&logged.stdout);
    assert!(
        logged.contains(&format!("127.0.0.1:{in_ns_port}")),
        "conns: NS's connection (port {in_ns_port}) missing:\n{logged}"
    );
    assert!(
        !logged.contains(&format!("127.0.0.1:{host_port}")),
        "conns: the host's connection (port {host_port}) logged:\n{logged}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh directory for `test`'s files.
fn tempfile_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    dir
}

/// One scrape of `netlens export` started with `ip netns exec NS`, from
/// inside NS (its loopback is NS's own).
fn scrape_in(ns: &str) -> String {
    let mut export = Command::new("ip")
        .args(["netns", "exec", ns, NETLENS, "--no-bpf", "export"])
        .args(["--listen", "127.0.0.1:19466"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the exporter");
    let mut page = String::new();
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(200));
        let out = Command::new("ip")
            .args(["netns", "exec", ns, "curl", "-sf"])
            .arg("http://127.0.0.1:19466/metrics")
            .output()
            .expect("run curl");
        page = String::from_utf8_lossy(&out.stdout).into_owned();
        if page.contains("node_network_up") {
            break;
        }
    }
    let _ = export.kill();
    let _ = export.wait();
    page
}
