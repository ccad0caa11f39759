//! Container names with a real runtime: podman (runc, explicit ulimits in a
//! containers.conf the test writes) runs two containers from a busybox
//! image made offline with `podman import`, on an `--internal` network of
//! their own (198.18.227.0/24: no route out, no NAT). One serves HTTP
//! (busybox httpd: a listener, and a child per connection), the other holds
//! a connection to it (busybox nc, fed by sleep). netlens entered with
//! `--pid` into each container's namespace names the container on the
//! listener and on both ends of the connection, in `snapshot --json`
//! (sockets[] and processes[]), in `export --per-process` and in the live
//! Sockets tab at 80x24 (tmux). What podman itself says (`podman
//! inspect`) is the independent source. Podman's API (started on a socket
//! of the test's own), conmon's command line and `container_of_pid` are
//! checked against it too.
//!
//! Everything is undone on drop, pass or fail: containers, network, image,
//! the API server, ip_forward (netavark sets it), and /run/netns's bind
//! mount when podman made it.
//!
//! A failed connect of a process that exited before netlens looked it up
//! is named by its cgroup v2 id (the eBPF owner program's): the test makes
//! a cgroup named as Docker's systemd driver names a container's scope, so
//! it needs no container runtime, only a cgroup v2 hierarchy (the unified
//! one of a hybrid host will do).

use crate::common;

use common::tmux::Tmux;
use common::{ChildGuard, NETLENS};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const SUBNET: &str = "198.18.227.0/24";
const SERVER_IP: &str = "198.18.227.10";
const CLIENT_IP: &str = "198.18.227.11";
const NETWORK: &str = "netlens-ctr";
const IMAGE: &str = "localhost/netlens-ctr:1";
const SERVER: &str = "nlc-web";
const CLIENT: &str = "nlc-cli";

/// podman with the test's containers.conf, and everything it made.
struct Podman {
    dir: PathBuf,
    forward_before: String,
    netns_mounted_before: bool,
    netns_existed_before: bool,
}

fn mounted(path: &str) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(path))
}

impl Podman {
    /// None, with a SKIP line, when not root or podman cannot run here.
    fn start() -> Option<Podman> {
        // busybox: the image is made from it (busybox-static).
        if common::need_root(&["podman", "busybox", "nsenter", "tmux", "ss"]) {
            return None;
        }
        let busybox = Path::new("/bin/busybox");
        let dir = std::env::temp_dir().join(format!("netlens-containers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("image/bin")).unwrap();
        // crun fails on this hybrid cgroup host and the default rlimits are
        // above what root may set here: runc, and limits it may.
        std::fs::write(
            dir.join("containers.conf"),
            "[containers]\ndefault_ulimits = [\"nofile=20000:20000\", \"nproc=32768:32768\"]\n[engine]\nruntime = \"runc\"\n",
        )
        .unwrap();
        let podman = Podman {
            forward_before: std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward")
                .unwrap_or_default()
                .trim()
                .to_string(),
            netns_mounted_before: mounted("/run/netns"),
            netns_existed_before: Path::new("/run/netns").exists(),
            dir,
        };
        // Leftovers of an earlier run that died before its cleanup.
        podman.teardown_objects();
        let image = podman.dir.join("image");
        std::fs::copy(busybox, image.join("bin/busybox")).unwrap();
        for link in ["sh", "sleep", "nc", "httpd", "timeout"] {
            std::os::unix::fs::symlink("busybox", image.join("bin").join(link)).unwrap();
        }
        let import = format!(
            "tar -C {} -c . | podman import --change 'ENV PATH=/bin' - {IMAGE}",
            image.display()
        );
        let out = podman.command("sh").args(["-c", &import]).output().unwrap();
        if !out.status.success() {
            eprintln!(
                "SKIP containers: podman cannot import an image here: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        podman.ok(&[
            "network",
            "create",
            "--internal",
            "--subnet",
            SUBNET,
            NETWORK,
        ]);
        Some(podman)
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .env("CONTAINERS_CONF", self.dir.join("containers.conf"))
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command("podman").args(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Starts a container bounded in time; its full id.
    fn container(&self, name: &str, ip: &str, command: &[&str]) -> String {
        let mut args = vec![
            "run",
            "-d",
            "--init",
            "--name",
            name,
            "--network",
            NETWORK,
            "--ip",
            ip,
            IMAGE,
        ];
        args.extend_from_slice(command);
        self.ok(&args)
    }

    fn pid(&self, name: &str) -> u32 {
        self.ok(&["inspect", "-f", "{{.State.Pid}}", name])
            .parse()
            .unwrap()
    }

    fn teardown_objects(&self) {
        for args in [
            &["rm", "-f", "-t", "0", SERVER, CLIENT][..],
            &["network", "rm", "-f", NETWORK],
            &["rmi", "-f", IMAGE],
        ] {
            // Absent objects (the first cleanup) fail quietly.
            let _ = self.run(args);
        }
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        self.teardown_objects();
        let _ = std::fs::write("/proc/sys/net/ipv4/ip_forward", &self.forward_before);
        // podman bind-mounts /run/netns onto itself; other tests' `ip netns`
        // share it, so it is undone only when podman made it and it is empty.
        let empty = std::fs::read_dir("/run/netns").is_ok_and(|mut d| d.next().is_none());
        if !self.netns_mounted_before && mounted("/run/netns") && empty {
            let _ = Command::new("umount").arg("/run/netns").status();
            if !self.netns_existed_before {
                let _ = std::fs::remove_dir("/run/netns");
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Polls `ready` every 100 ms for at most `seconds`.
fn wait_until<T>(what: &str, seconds: u64, ready: impl Fn() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(found) = ready() {
            return found;
        }
        assert!(Instant::now() < deadline, "never saw {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `ss -tn` in the namespace of `pid`: (state, local, peer) rows.
fn ss_in(pid: u32) -> Vec<(String, String, String)> {
    let out = Command::new("nsenter")
        .args(["-t", &pid.to_string(), "-n", "ss", "-tanH"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((
                f.first()?.to_string(),
                f.get(3)?.to_string(),
                f.get(4)?.to_string(),
            ))
        })
        .collect()
}

fn snapshot(pid: u32) -> Value {
    let pid = pid.to_string();
    let lines = common::snapshot(&[
        "--pid",
        &pid,
        "--no-capture",
        "--no-bpf",
        "--config",
        "/dev/null",
        "--section",
        "sockets",
        "--section",
        "processes",
    ]);
    lines.last().unwrap().clone()
}

/// The sockets[] entries whose local endpoint ends with `local`.
fn sockets<'a>(sample: &'a Value, state: &str, local: &str) -> Vec<&'a Value> {
    sample["sockets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == state && s["local"].as_str().unwrap().ends_with(local))
        .collect()
}

fn container_name(socket: &Value) -> Option<&str> {
    socket["container"]["name"].as_str()
}

#[test]
fn podman_containers_are_named_on_their_sockets() {
    let Some(podman) = Podman::start() else {
        return;
    };
    let server_id = podman.container(
        SERVER,
        SERVER_IP,
        &["timeout", "300", "httpd", "-f", "-p", "8080"],
    );
    let client_id = podman.container(
        CLIENT,
        CLIENT_IP,
        &["sh", "-c", "sleep 300 | timeout 300 nc 198.18.227.10 8080"],
    );
    let (server, client) = (podman.pid(SERVER), podman.pid(CLIENT));
    // The connection is up on both ends, as ss sees it in each namespace.
    let client_port = wait_until("the client's connection", 15, || {
        ss_in(client)
            .into_iter()
            .find(|(state, _, peer)| state == "ESTAB" && peer == "198.18.227.10:8080")
            .map(|(_, local, _)| local.rsplit(':').next().unwrap().to_string())
    });
    wait_until("the server's end", 15, || {
        ss_in(server)
            .iter()
            .any(|(s, _, peer)| s == "ESTAB" && peer.ends_with(&format!(":{client_port}")))
            .then_some(())
    });

    // The server's namespace: the listener and the accepted end.
    let sample = snapshot(server);
    let listeners = sockets(&sample, "LISTEN", ":8080");
    assert_eq!(listeners.len(), 1, "{sample}");
    assert_eq!(
        container_name(listeners[0]),
        Some(SERVER),
        "{}",
        listeners[0]
    );
    assert_eq!(listeners[0]["container"]["id"], server_id.as_str());
    assert_eq!(listeners[0]["container"]["runtime"], "podman");
    let accepted = sockets(&sample, "ESTAB", ":8080");
    assert_eq!(accepted.len(), 1, "{sample}");
    assert!(
        accepted[0]["peer"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{CLIENT_IP}]:{client_port}"))
    );
    assert_eq!(container_name(accepted[0]), Some(SERVER));
    for process in sample["processes"].as_array().unwrap() {
        assert_eq!(process["container"]["name"], SERVER, "{process}");
        assert_eq!(process["cgroup"], format!("podman:{}", &server_id[..12]));
    }

    // The client's namespace: the other end.
    let sample = snapshot(client);
    let connecting = sockets(&sample, "ESTAB", &format!(":{client_port}"));
    assert_eq!(connecting.len(), 1, "{sample}");
    assert_eq!(connecting[0]["peer"], "198.18.227.10:8080");
    assert_eq!(container_name(connecting[0]), Some(CLIENT));
    assert_eq!(connecting[0]["container"]["id"], client_id.as_str());
    assert_eq!(connecting[0]["process"], "nc");

    failed_connect_names_the_container(&podman, client);
    exporter_labels_the_container(server);
    api_and_conmon_agree(&podman, &server_id, server);
    live_sockets_tab(server, client);
    pcapng_names_the_container(&podman, server);
}

/// `capture -w FILE.pcapng` in the server's namespace: the packets of
/// short requests from the client container (connections no sample sees
/// open; the connection log names the listener's owner) say, in Wireshark
/// too, that they were the server container's httpd's.
fn pcapng_names_the_container(podman: &Podman, server: u32) {
    if common::need(&["tshark"]) {
        return;
    }
    let file = common::scratch_dir("containers").join(format!("web-{}.pcapng", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut capture = ChildGuard(
        Command::new(NETLENS)
            .args(["capture", "--pid", &server.to_string(), "--duration", "5s"])
            .args(["--config", "/dev/null", "-f", "tcp port 8080", "-w"])
            .arg(&file)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_until("the capture file", 15, || file.exists().then_some(()));
    for _ in 0..3 {
        // A 404 is an answer too: the request and its packets are what
        // count.
        let out = podman.run(&[
            "exec",
            CLIENT,
            "sh",
            "-c",
            &format!("(echo 'GET / HTTP/1.0'; echo) | timeout 5 nc {SERVER_IP} 8080"),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let stderr = common::stop_for_stderr(&mut capture);
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&file)
        .args(["-T", "fields", "-e", "frame.comment"])
        .output()
        .unwrap();
    let comments = String::from_utf8_lossy(&out.stdout);
    let container = format!(", container {SERVER} (podman)");
    assert!(comments.lines().count() >= 15, "{stderr}\n{comments}");
    assert!(
        comments
            .lines()
            .all(|c| c.starts_with("pid ") && c.contains("(httpd)") && c.ends_with(&container)),
        "{comments}"
    );
    let _ = std::fs::remove_file(&file);
}

/// A short-lived process in the client container (`podman exec` of nc)
/// connects to a port the server does not listen on and exits at once:
/// `conns --json --failed` in the client's namespace still names the
/// container, from the cgroup the eBPF program recorded (the pid is gone
/// by the time netlens looks it up).
fn failed_connect_names_the_container(podman: &Podman, client: u32) {
    let mut conns = ChildGuard(
        Command::new(NETLENS)
            .args(["conns", "--json", "--failed", "--interval", "200ms"])
            .args(["--config", "/dev/null", "--pid", &client.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut said = String::new();
    BufReader::new(conns.0.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert!(said.contains("logging TCP connections"), "{said}");
    let lines = json_lines(conns.0.stdout.take().unwrap());
    let out = podman.run(&["exec", CLIENT, "nc", SERVER_IP, "8081"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("refused"), "{said}");
    let line = wait_for_line(&lines, |l| l["comm"] == "nc");
    assert_eq!(line["failure"], "refused", "{line}");
    let pid = line["pid"].as_u64().unwrap();
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "{line}");
    assert_eq!(line["container"], format!("{CLIENT} (podman)"), "{line}");
}

/// A thread that parses each line of `stdout` (netlens' JSON lines).
fn json_lines(stdout: std::process::ChildStdout) -> mpsc::Receiver<Value> {
    let (lines_tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(serde_json::from_str(&line).unwrap());
        }
    });
    lines
}

/// The first of `lines` that `wanted` takes, within 15 s.
fn wait_for_line(lines: &mpsc::Receiver<Value>, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        assert!(Instant::now() < deadline, "no such line within 15 s");
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200))
            && wanted(&line)
        {
            return line;
        }
    }
}

/// `export --per-process` labels each process's series with its container.
fn exporter_labels_the_container(server: u32) {
    let exporter = common::exporter::Exporter::start(&[
        "--pid",
        &server.to_string(),
        "--no-bpf",
        "--interval",
        "500ms",
        "--per-process",
    ]);
    let line = wait_until("a per-process series", 10, || {
        common::socket_findings::scrape(exporter.addr)
            .lines()
            .find(|l| l.starts_with("netlens_process_tcp_sent_bytes_total{"))
            .map(str::to_string)
    });
    assert!(line.contains(&format!("container=\"{SERVER}\"")), "{line}");
    assert!(line.contains("command=\"httpd\""), "{line}");
}

/// Podman's own API (a server the test starts) and conmon's command line
/// give the name `podman inspect` gives.
fn api_and_conmon_agree(podman: &Podman, id: &str, pid: u32) {
    use netlens::collect::containers::{api, files};
    let socket = podman.dir.join("podman.sock");
    let service = podman
        .command("podman")
        .args(["system", "service", "--time=0"])
        .arg(format!("unix://{}", socket.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _service = ChildGuard(service);
    let names = wait_until("podman's API", 10, || {
        api::inspect(&socket, id).ok().flatten()
    });
    assert_eq!(names.name.as_deref(), Some(SERVER));
    assert_eq!(
        api::inspect(&socket, &"0".repeat(64)),
        Ok(None),
        "an unknown id"
    );
    let conmon = files::conmon(Path::new("/"), pid, id).expect("conmon above the container");
    assert_eq!(conmon.name.as_deref(), Some(SERVER));
    // What labels a network namespace by the container owning it.
    let owner = netlens::collect::containers::container_of_pid(pid).unwrap();
    assert_eq!(
        (owner.name.as_deref(), owner.id.as_str()),
        (Some(SERVER), id)
    );
}

/// The live Sockets tab at 80x24 leads each owner with its container.
fn live_sockets_tab(server: u32, client: u32) {
    let Some(tmux) = Tmux::new("ctr") else {
        return;
    };
    for (pid, name, wanted) in [
        (server, SERVER, ["LISTEN", "ESTAB"]),
        (client, CLIENT, ["ESTAB", "ESTAB"]),
    ] {
        let command =
            format!("{NETLENS} --pid {pid} --no-capture --no-bpf --config /dev/null --tab sockets");
        tmux.session(name, 80, 24, &command);
        let cell = format!("[{name}]");
        let screen = tmux.wait_for(name, "the container in the Process column", |lines| {
            wanted.iter().all(|state| {
                lines
                    .iter()
                    .any(|l| l.starts_with(state) && l.contains(&cell))
            })
        });
        assert!(screen.iter().all(|l| l.chars().count() <= 80));
        // The info line under the table says what the container is.
        tmux.wait_for(name, "the selected socket's container", |lines| {
            lines
                .iter()
                .any(|l| l.contains(&format!("container {name} (podman ")))
        });
        if pid == server {
            // The Processes tab names the container instead of its cgroup.
            tmux.keys(name, &["9"]);
            tmux.wait_for(name, "the container in the Processes tab", |lines| {
                // At 80 columns the Cgroup column is off screen; the
                // selected process's line names where it runs.
                let summary = format!(" httpd (root) in {name}: ");
                lines.iter().any(|l| l.starts_with("PID"))
                    && lines
                        .iter()
                        .any(|l| l.starts_with("pid ") && l.contains(&summary))
            });
        }
        tmux.keys(name, &["q"]);
    }
}

/// Refuses every connect: an address of the test's namespace with nothing
/// listening on `REFUSING_PORT`.
const REFUSING_IP: &str = "198.18.228.1";
const REFUSING_PORT: u16 = 7399;
/// The short-lived process's name (PR_SET_NAME).
const SHORT_LIVED: &str = "nlcg-curl";

/// The unified (cgroup2) hierarchy's mount point, from mountinfo.
fn unified_mount() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        if !fs.starts_with("cgroup2 ") {
            return None;
        }
        Some(PathBuf::from(mount.split(' ').nth(4)?))
    })
}

/// A cgroup named as Docker's systemd driver names a container's scope,
/// removed on drop (empty by then: its one process has exited).
struct ScopeCgroup {
    slice: PathBuf,
    scope: PathBuf,
    /// The "container" id: 64 hex digits.
    id: String,
}

impl ScopeCgroup {
    fn new(unified: &Path) -> ScopeCgroup {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let id = format!("{:08x}{nanos:056x}", std::process::id());
        let slice = unified.join(format!("netlens-test-{}.slice", std::process::id()));
        let scope = slice.join(format!("docker-{id}.scope"));
        std::fs::create_dir_all(&scope).unwrap();
        ScopeCgroup { slice, scope, id }
    }
}

impl Drop for ScopeCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.scope);
        let _ = std::fs::remove_dir(&self.slice);
    }
}

/// A process in `cgroup` connects to the refusing port and exits; its
/// parent (outside) reaps it before closing the socket, so the
/// connection ends (and netlens looks its owner up) only once the process
/// is gone. Prints the child's pid, then "refused". `ns`: the
/// namespace's path.
fn connect_from_a_gone_process(ns: &str, cgroup: &ScopeCgroup) -> Vec<String> {
    let procs = cgroup.scope.join("cgroup.procs");
    let script = format!(
        "import ctypes, os, socket\n\
         s = socket.socket()\n\
         pid = os.fork()\n\
         if pid == 0:\n\
         \x20   ctypes.CDLL(None).prctl(15, b'{SHORT_LIVED}', 0, 0, 0)\n\
         \x20   with open('{procs}', 'w') as f:\n\
         \x20       f.write(str(os.getpid()))\n\
         \x20   try:\n\
         \x20       s.connect(('{REFUSING_IP}', {REFUSING_PORT}))\n\
         \x20   except ConnectionRefusedError:\n\
         \x20       os._exit(0)\n\
         \x20   os._exit(1)\n\
         print(pid, flush=True)\n\
         _, status = os.waitpid(pid, 0)\n\
         s.close()\n\
         print('refused' if status == 0 else 'not refused', flush=True)\n",
        procs = procs.display()
    );
    // nsenter, not `ip netns exec`: that remounts /sys, hiding the cgroups.
    let out = Command::new("nsenter")
        .arg(format!("--net={ns}"))
        .args(["python3", "-c", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines.get(1).map(String::as_str),
        Some("refused"),
        "{lines:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

#[test]
fn a_failed_connect_of_a_gone_process_is_named_by_its_cgroup() {
    if common::need_root(&["ip", "nsenter", "python3"]) {
        return;
    }
    let Some(unified) = unified_mount() else {
        eprintln!(
            "SKIP a_failed_connect_of_a_gone_process_is_named_by_its_cgroup: no cgroup v2 hierarchy"
        );
        return;
    };
    let ns = common::Netns::new("cgfail");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", &format!("{REFUSING_IP}/32"), "dev", "lo"]);
    let cgroup = ScopeCgroup::new(&unified);
    let label = format!("docker:{} (docker)", &cgroup.id[..12]);

    let mut conns = ChildGuard(
        Command::new(NETLENS)
            .args(["conns", "--json", "--failed", "--interval", "200ms"])
            .args(["--config", "/dev/null", "--netns", &ns.path()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut said = String::new();
    BufReader::new(conns.0.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert!(said.contains("logging TCP connections"), "{said}");
    let lines = json_lines(conns.0.stdout.take().unwrap());
    // A snapshot's failed[] too: its first sample says its sampler is up.
    let mut snapshot = ChildGuard(common::spawn_snapshot(&[
        "--section",
        "sockets",
        "--count",
        "20",
        "--interval",
        "300ms",
        "--no-capture",
        "--config",
        "/dev/null",
        "--netns",
        &ns.path(),
    ]));
    let mut samples = BufReader::new(snapshot.0.stdout.take().unwrap()).lines();
    assert!(
        samples.next().is_some_and(|l| l.is_ok()),
        "the snapshot printed nothing"
    );

    let printed = connect_from_a_gone_process(&ns.path(), &cgroup);
    let pid: u32 = printed[0].parse().unwrap();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} runs"
    );

    let line = wait_for_line(&lines, |l| l["comm"] == SHORT_LIVED);
    assert_eq!(line["failure"], "refused", "{line}");
    assert_eq!(line["pid"], pid, "{line}");
    // The failed connect cleared the peer's port; no dump saw the socket.
    assert_eq!(line["peer"], format!("{REFUSING_IP}:0"), "{line}");
    assert_eq!(line["container"], label.as_str(), "{line}");

    let group = samples
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .find_map(|sample| {
            let failed = sample["failed"].as_array()?;
            failed.iter().find(|g| g["comm"] == SHORT_LIVED).cloned()
        })
        .expect("no snapshot sample's failed[] has the connect");
    assert_eq!(group["kind"], "refused", "{group}");
    assert_eq!(group["container"], label.as_str(), "{group}");
}
