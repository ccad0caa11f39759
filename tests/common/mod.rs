//! Shared helpers for netlens integration tests.
//!
//! Network safety: every namespace is created by the test itself and removed
//! by a Drop guard; all traffic stays inside those namespaces and is
//! addressed from 198.18.0.0/15 (RFC 2544 benchmarking range). Every send loop
//! is bounded in packets and in seconds.
#![allow(dead_code)]

pub mod bpf_support;
pub mod dns_server;
pub mod exporter;
pub mod heap;
pub mod host_sysctl;
pub mod need;
pub mod netns_traffic;
pub mod path_chain;
pub mod random;
pub mod socket_findings;
pub mod tmux;
pub mod transfer;

// One binary may not use them all.
#[allow(unused_imports)]
pub use need::{
    heavy, is_root, need, need_root, need_root_alone, need_root_heavy, skip_unless_root,
};

use std::collections::BTreeSet;
use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// Path of the binary under test.
pub const NETLENS: &str = env!("CARGO_BIN_EXE_netlens");

/// Fixed MACs (locally administered) for the two veth ends.
pub const MAC_A: &str = "02:00:c6:12:00:01";
pub const MAC_B: &str = "02:00:c6:12:00:02";
pub const IP_A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
pub const IP_B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Veth device names (distinct so a snapshot can tell the two sides apart).
pub const DEV_A: &str = "nlva";
pub const DEV_B: &str = "nlvb";

/// Ethernet (14) + IPv4 (20) + UDP (8) header bytes per datagram as counted by veth.
pub const UDP_FRAME_OVERHEAD: u64 = 14 + 20 + 8;

/// Serialises `ip netns add/del`: concurrent first-time `ip netns add` calls
/// race on the /run/netns bind mount.
pub static NETNS_LOCK: Mutex<()> = Mutex::new(());

/// Namespace names in use by this process' tests: one binary runs every
/// test, so two modules choosing the same tag would share a namespace.
static NETNS_NAMES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// True when `ip` lies in 198.18.0.0/15.
pub fn is_bench_addr(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    o[0] == 198 && (o[1] == 18 || o[1] == 19)
}

pub fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock before 1970")
        .as_secs_f64()
}

/// Runs a command, panicking with its stderr when it fails.
pub fn run(prog: &str, args: &[&str]) -> Output {
    let out = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {prog} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{prog} {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    out
}

/// `ip -n NS args...`
pub fn ip_n(ns: &str, args: &[&str]) -> Output {
    let mut all = vec!["-n", ns];
    all.extend_from_slice(args);
    run("ip", &all)
}

/// `ip netns exec NS args...`
pub fn ns_exec(ns: &str, args: &[&str]) -> Output {
    let mut all = vec!["netns", "exec", ns];
    all.extend_from_slice(args);
    run("ip", &all)
}

/// A network namespace created by this test; `ip netns del` on drop.
pub struct Netns {
    pub name: String,
}

impl Netns {
    /// Creates `netlens-t<pid>-<tag>` (unique per test process and test).
    /// IPv6 is disabled (all/default) right away, before any link exists.
    pub fn new(tag: &str) -> Netns {
        // The first use sweeps what killed runs left.
        scratch_root();
        let name = format!("netlens-t{}-{}", std::process::id(), tag);
        assert!(
            NETNS_NAMES
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(name.clone()),
            "two tests use the namespace tag {tag}: give one another"
        );
        {
            let _g = NETNS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            // A stale namespace of the same name can only come from a crashed
            // earlier run with a recycled pid; it is ours to remove.
            if std::path::Path::new(&format!("/run/netns/{name}")).exists() {
                let _ = Command::new("ip").args(["netns", "del", &name]).status();
            }
            run("ip", &["netns", "add", &name]);
        }
        let ns = Netns { name };
        ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
        ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
        ns
    }

    pub fn path(&self) -> String {
        format!("/run/netns/{}", self.name)
    }

    pub fn sysctl(&self, key: &str, val: &str) {
        ns_exec(&self.name, &["sysctl", "-q", "-w", &format!("{key}={val}")]);
    }

    pub fn ip(&self, args: &[&str]) -> Output {
        ip_n(&self.name, args)
    }

    /// (dev, ino) of the namespace file, to compare with /proc/PID/ns/net.
    pub fn id(&self) -> (u64, u64) {
        let m = std::fs::metadata(self.path()).expect("stat netns");
        (m.dev(), m.ino())
    }

    /// Polls until `dev` shows LOWER_UP (or panics after `timeout`).
    pub fn wait_lower_up(&self, dev: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let out = self.ip(&["-o", "link", "show", "dev", dev]);
            if String::from_utf8_lossy(&out.stdout).contains("LOWER_UP") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{dev} in {} never got LOWER_UP",
                self.name
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        NETNS_NAMES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.name);
        let _g = NETNS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        match Command::new("ip")
            .args(["netns", "del", &self.name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
        {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!(
                "warning: ip netns del {} failed: {}",
                self.name,
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => eprintln!("warning: ip netns del {}: {e}", self.name),
        }
    }
}

/// Two namespaces joined by a veth pair with exact, quiet counters:
/// fixed MACs, IPv6 disabled before link-up, permanent static neighbours.
pub struct VethPair {
    // Field order = drop order: deleting A also removes the veth pair.
    pub a: Netns,
    pub b: Netns,
}

impl VethPair {
    pub fn new(tag: &str) -> VethPair {
        let a = Netns::new(&format!("{tag}a"));
        let b = Netns::new(&format!("{tag}b"));
        a.ip(&[
            "link", "add", DEV_A, "address", MAC_A, "type", "veth", "peer", "name", DEV_B,
            "address", MAC_B, "netns", &b.name,
        ]);
        a.sysctl(&format!("net.ipv6.conf.{DEV_A}.disable_ipv6"), "1");
        b.sysctl(&format!("net.ipv6.conf.{DEV_B}.disable_ipv6"), "1");
        a.ip(&["addr", "add", &format!("{IP_A}/24"), "dev", DEV_A]);
        b.ip(&["addr", "add", &format!("{IP_B}/24"), "dev", DEV_B]);
        a.ip(&["link", "set", DEV_A, "up"]);
        b.ip(&["link", "set", DEV_B, "up"]);
        // Static neighbours after link-up (a down transition flushes them).
        a.ip(&[
            "neigh",
            "replace",
            &IP_B.to_string(),
            "lladdr",
            MAC_B,
            "dev",
            DEV_A,
            "nud",
            "permanent",
        ]);
        b.ip(&[
            "neigh",
            "replace",
            &IP_A.to_string(),
            "lladdr",
            MAC_A,
            "dev",
            DEV_B,
            "nud",
            "permanent",
        ]);
        a.wait_lower_up(DEV_A, Duration::from_secs(5));
        b.wait_lower_up(DEV_B, Duration::from_secs(5));
        VethPair { a, b }
    }
}

/// Moves the calling thread into the network namespace at `path`.
pub fn enter_netns(path: &str) -> io::Result<()> {
    let f = File::open(path)?;
    // SAFETY: valid fd for the duration of the call; CLONE_NEWNET only
    // affects the calling thread.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
pub struct TrafficResult {
    pub sent: u64,
    pub received: u64,
    /// Unix time just before the first datagram was sent.
    pub start_unix: f64,
    /// Unix time just after the last datagram was sent.
    pub end_unix: f64,
}

/// Sends `count` UDP datagrams of `payload` bytes from `src` (inside netns
/// `src_ns`) to `dst` (bound by a draining receiver inside netns `dst_ns`),
/// paced at `rate_pps` on a deadline schedule. Bounded: at most `count`
/// packets and `count / rate_pps + 5` seconds. Blocks until done.
pub fn udp_traffic(
    src_ns: &str,
    src: Ipv4Addr,
    dst_ns: &str,
    dst: SocketAddrV4,
    count: u64,
    payload: usize,
    rate_pps: f64,
) -> TrafficResult {
    assert!(
        is_bench_addr(src) && is_bench_addr(*dst.ip()),
        "refusing non-198.18.0.0/15 traffic"
    );
    assert!(count <= 100_000 && rate_pps > 0.0 && rate_pps <= 100_000.0);
    let max_dur = Duration::from_secs_f64(count as f64 / rate_pps + 5.0);

    // Receiver.
    let (ready_tx, ready_rx) = mpsc::channel::<io::Result<()>>();
    let dst_ns = dst_ns.to_string();
    let receiver = thread::spawn(move || -> u64 {
        let sock = match enter_netns(&dst_ns).and_then(|_| UdpSocket::bind(dst)) {
            Ok(s) => s,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return 0;
            }
        };
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        // Room for seconds of datagrams: on a loaded host this thread may
        // wait that long for a CPU, and the counts must stay whole. (Root
        // only, as every namespace test is; the default stays otherwise.)
        let room: libc::c_int = 16 << 20;
        // SAFETY: setsockopt(2) on a socket we own, with an int we own.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&raw const room).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        let _ = ready_tx.send(Ok(()));
        let deadline = Instant::now() + max_dur + Duration::from_secs(1);
        let mut buf = vec![0u8; 65536];
        let mut got = 0u64;
        while got < count && Instant::now() < deadline {
            if sock.recv_from(&mut buf).is_ok() {
                got += 1;
            }
        }
        got
    });
    ready_rx
        .recv()
        .expect("receiver thread died")
        .expect("receiver setup (setns/bind) failed");

    // Sender.
    let src_ns = src_ns.to_string();
    let sender = thread::spawn(move || -> (u64, f64, f64) {
        enter_netns(&src_ns).expect("sender setns");
        let sock = UdpSocket::bind(SocketAddrV4::new(src, 0)).expect("sender bind");
        let data = vec![0x5au8; payload];
        let period = Duration::from_secs_f64(1.0 / rate_pps);
        let start_unix = now_unix();
        let start = Instant::now();
        let mut sent = 0u64;
        for i in 0..count {
            let due = start + period.mul_f64(i as f64);
            let now = Instant::now();
            if due > now {
                thread::sleep(due - now);
            }
            if start.elapsed() > max_dur {
                break;
            }
            match sock.send_to(&data, dst) {
                Ok(n) if n == payload => sent += 1,
                Ok(n) => panic!("short send: {n} of {payload}"),
                Err(e) => panic!("send_to {dst} failed after {sent} packets: {e}"),
            }
        }
        (sent, start_unix, now_unix())
    });
    let (sent, start_unix, end_unix) = sender.join().expect("sender panicked");
    let received = receiver.join().expect("receiver panicked");
    TrafficResult {
        sent,
        received,
        start_unix,
        end_unix,
    }
}

/// SO_LINGER 0: close() then aborts the connection with a reset.
pub fn abort_on_close(stream: &std::net::TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt reads one struct linger, which outlives the call.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
}

/// Kills (by PID, via `Child::kill`) and reaps a child on drop.
pub struct ChildGuard(pub Child);

impl ChildGuard {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Parses netlens' JSON-lines stdout.
pub fn parse_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line ({e}): {l}")))
        .collect()
}

/// Runs `netlens snapshot --json ARGS`, asserts success, returns the samples.
pub fn snapshot(args: &[&str]) -> Vec<Value> {
    let samples = snapshot_samples(spawn_snapshot(args));
    assert!(
        !samples.is_empty(),
        "netlens snapshot {args:?} printed nothing"
    );
    samples
}

/// Starts `netlens snapshot --json ARGS` in the background (to watch
/// traffic the test makes meanwhile); [`snapshot_samples`] collects it.
pub fn spawn_snapshot(args: &[&str]) -> std::process::Child {
    Command::new(NETLENS)
        .arg("snapshot")
        .arg("--json")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens")
}

/// Waits for a snapshot started by [`spawn_snapshot`], asserts success and
/// returns its samples.
pub fn snapshot_samples(child: std::process::Child) -> Vec<Value> {
    let out = child.wait_with_output().expect("wait for netlens");
    assert!(
        out.status.success(),
        "netlens snapshot --json failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    parse_lines(&out.stdout)
}

/// The interface object named `name` in one sample, if present.
pub fn iface<'a>(sample: &'a Value, name: &str) -> Option<&'a Value> {
    sample["interfaces"]
        .as_array()
        .unwrap_or_else(|| panic!("sample without interfaces[]: {sample}"))
        .iter()
        .find(|i| i["name"] == name)
}

pub fn must_iface<'a>(sample: &'a Value, name: &str) -> &'a Value {
    iface(sample, name).unwrap_or_else(|| panic!("interface {name} missing from {sample}"))
}

pub fn iface_names(sample: &Value) -> Vec<String> {
    sample["interfaces"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

pub fn u64f(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("field {key} not a u64 in {v}"))
}

pub fn f64f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("field {key} not a number in {v}"))
}

/// A nullable number field: Some(x), None for null; panics when absent or mistyped.
pub fn opt_f64(v: &Value, key: &str) -> Option<f64> {
    match &v[key] {
        Value::Null if v.get(key).is_some() => None,
        Value::Null => panic!("field {key} absent in {v}"),
        x => Some(
            x.as_f64()
                .unwrap_or_else(|| panic!("field {key} not a number in {v}")),
        ),
    }
}

pub const RATE_FIELDS: &[&str] = &[
    "rx_packets_per_s",
    "tx_packets_per_s",
    "rx_bytes_per_s",
    "tx_bytes_per_s",
    "rx_errors_per_s",
    "tx_errors_per_s",
    "rx_dropped_per_s",
    "tx_dropped_per_s",
    "rx_overruns_per_s",
    "tx_carrier_per_s",
    "collisions_per_s",
];

pub fn approx_eq(a: f64, b: f64, abs: f64, rel: f64) -> bool {
    (a - b).abs() <= abs + rel * a.abs().max(b.abs())
}

/// A python3 client in `ns` refused `per_second` times a second for
/// `seconds` (connects to a closed port on the namespace's loopback):
/// connect-refused. Bounded: rate x seconds connects.
pub fn refuse(ns: &str, per_second: u32, seconds: u32) {
    let script = format!(
        "import socket, time\n\
         for i in range({total}):\n\
         \x20   s = socket.socket()\n\
         \x20   try: s.connect(('127.0.0.1', 9))\n\
         \x20   except OSError: pass\n\
         \x20   s.close()\n\
         \x20   time.sleep(1 / {per_second})\n",
        total = per_second * seconds
    );
    let status = Command::new("ip")
        .args(["netns", "exec", ns, "python3", "-c", &script])
        .status()
        .expect("python3");
    assert!(status.success());
}

/// `tcpdump -n -r FILE`'s lines; it must read the file.
pub fn tcpdump_read(path: &std::path::Path) -> String {
    let out = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(path)
        .output()
        .expect("tcpdump");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits for a netlens child (stopped, or stopping) with piped stderr; it
/// must exit 0. Returns its stderr.
pub fn stop_for_stderr(child: &mut ChildGuard) -> String {
    use std::io::Read;
    let mut stderr = String::new();
    if let Some(mut pipe) = child.0.stderr.take() {
        pipe.read_to_string(&mut stderr).unwrap();
    }
    assert!(child.0.wait().unwrap().success(), "{stderr}");
    stderr
}

/// nstat's absolute value of `name` in `ns`, without touching its history.
pub fn nstat(ns: &str, name: &str) -> u64 {
    let out = ns_exec(ns, &["nstat", "-asz", name]);
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(name)).then(|| words.next()?.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no {name} in nstat output: {text}"))
}

/// A python3 helper run in `ns`, killed (by PID) on drop. The socket
/// helpers' scripts print "ready" once set up: see
/// `socket_findings::wait_ready`.
pub fn python_in(ns: &str, script: &str) -> ChildGuard {
    ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", ns, "python3", "-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3"),
    )
}

/// This run's scratch root, `netlens-tests-PID` under the temporary
/// directory, shared by the tests' scratch directories. Tests share their
/// tags' directories, so none can remove them; instead the first use in a
/// run removes the roots of earlier runs whose process is gone, and a
/// passing run leaves one root behind, not one directory per tag. Mode
/// 1777 as /tmp: the privilege tests' users write there too.
pub fn scratch_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let tmp = std::env::temp_dir();
        for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let gone = name
                .strip_prefix("netlens-tests-")
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists());
            if gone {
                host_sysctl::restore_noted(&entry.path());
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        remove_dead_runs_namespaces();
        let root = tmp.join(format!("netlens-tests-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o1777)).unwrap();
        root
    })
    .clone()
}

/// The namespaces of runs that were killed before their drops ran
/// (`netlens-t<pid>-<tag>`, the pid gone), with the processes they started
/// in them (their servers), ended by pid.
fn remove_dead_runs_namespaces() {
    for entry in std::fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let dead = name
            .strip_prefix("netlens-t")
            .and_then(|rest| rest.split('-').next()?.parse::<u32>().ok())
            .is_some_and(|pid| {
                pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists()
            });
        if !dead {
            continue;
        }
        let Ok(pids) = Command::new("ip").args(["netns", "pids", &name]).output() else {
            continue;
        };
        for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
            if let Ok(pid) = pid.parse::<i32>() {
                // SAFETY: kill(2) on a pid the dead run started in its namespace.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &name]).status();
    }
}

/// This run's scratch directory for `tag` (`TAG` under [`scratch_root`]),
/// made if missing and shared by the tests that name it.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = scratch_root().join(tag);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `name` in [`scratch_dir`]`(tag)`, no file there yet.
pub fn scratch(tag: &str, name: &str) -> PathBuf {
    let path = scratch_dir(tag).join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// Polls `ready` every 50 ms until it holds; fails naming `what` after
/// `patience`. For what a test waits for instead of a fixed sleep.
pub fn wait_until(what: &str, patience: std::time::Duration, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + patience;
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A directory of one test's own (`KIND-TAG` under [`scratch_root`]),
/// emptied first.
pub fn scratch_dir_for(kind: &str, tag: &str) -> PathBuf {
    let dir = scratch_root().join(format!("{kind}-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
