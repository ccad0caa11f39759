//! Names and container look-ups (issue 38, defects 1, 2 and 9): what a
//! user puts where netlens looks for a container's name (a FIFO or a huge
//! name in their rootless podman store, an API socket that never accepts)
//! neither stalls the sampler nor grows what netlens keeps. Each test runs
//! the real binary against a real user (useradd), a real process of that
//! user in a real cgroup `libpod-<id>.scope`, real files and sockets.

pub mod setup;

use crate::common::parse_lines;
use serde_json::Value;
use setup::{Contained, FullBacklog, MadeDir, TestUser, container_id, netlens_within};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// What every netlens run here samples: sockets and their owners only.
const QUIET: &[&str] = &["--no-capture", "--no-bpf"];

/// `netlens snapshot --json` of sockets and processes, within `limit`.
pub fn snapshot(extra: &[&str], limit: Duration) -> (Vec<Value>, usize) {
    let mut args = vec!["snapshot", "--json", "--section", "sockets,processes"];
    args.extend_from_slice(QUIET);
    args.extend_from_slice(extra);
    let out = netlens_within(&args, limit);
    assert!(
        out.status.success(),
        "snapshot failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    (parse_lines(&out.stdout), out.stdout.len())
}

/// The process `pid` of a snapshot's sample.
fn process(sample: &Value, pid: u32) -> Option<&Value> {
    sample["processes"]
        .as_array()?
        .iter()
        .find(|p| p["pid"] == pid)
}

/// The container of process `pid` in the sample, which must list it.
pub fn container_of(sample: &Value, pid: u32) -> &Value {
    let process = process(sample, pid)
        .unwrap_or_else(|| panic!("process {pid} missing from {}", sample["processes"]));
    &process["container"]
}

/// `netlens export ARGS` on 127.0.0.1 (port 0) and its address.
pub fn start_export(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(crate::common::NETLENS)
        .args(["export", "--listen", "127.0.0.1:0", "--no-bpf"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn netlens export");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("netlens export did not announce its address in 20 s");
    };
    let address = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (child, address)
}

/// One GET /metrics: the whole response, or None after 10 s.
fn scrape(address: &str) -> Option<Vec<u8>> {
    let mut stream = std::net::TcpStream::connect(address).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    Some(response)
}

/// Scrapes until the page has a series of process `pid` (the sampler has
/// looked it up), at most `limit`: the last page, and whether it had one.
pub fn scrape_until_listed(address: &str, pid: u32, limit: Duration) -> (Vec<u8>, bool) {
    let started = Instant::now();
    let needle = format!("pid=\"{pid}\"");
    loop {
        let page = scrape(address).unwrap_or_default();
        if String::from_utf8_lossy(&page).contains(&needle) {
            return (page, true);
        }
        if started.elapsed() > limit {
            return (page, false);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// SIGTERM, then the child must be gone within 5 s.
pub fn must_stop_on_sigterm(mut child: Child, what: &str) {
    setup::terminate(&child);
    let status = setup::wait_within(&mut child, Duration::from_secs(5));
    let status = status.unwrap_or_else(|| panic!("{what} ignored SIGTERM for 5 s: killed"));
    assert!(status.success(), "{what} after SIGTERM: {status}");
}

#[test]
fn a_fifo_for_the_store_stalls_no_sample() {
    let test = "a_fifo_for_the_store_stalls_no_sample";
    if crate::common::need_root(&["useradd", "userdel", "setpriv", "python3"]) {
        return;
    }
    let user = TestUser::new("f");
    let store = user.podman_store();
    let path = std::ffi::CString::new(store.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    user.chown(&store);
    let id = container_id("f1f0");
    let Some(process) = Contained::start(test, &user, &format!("libpod-{id}.scope")) else {
        return;
    };
    let pid = process.pid();

    // snapshot ends, and names what it can: the runtime and id.
    let started = Instant::now();
    let (samples, _) = snapshot(&[], Duration::from_secs(20));
    let container = container_of(&samples[0], pid);
    assert_eq!(container["runtime"], "podman", "{container}");
    assert_eq!(container["id"], id.as_str(), "{container}");
    assert!(
        container.get("name").is_none_or(Value::is_null),
        "{container}"
    );
    eprintln!("snapshot with a FIFO store: {:?}", started.elapsed());

    // record keeps sampling and stops on SIGTERM.
    let dir = tempdir("fifo");
    let recording = dir.path.join("fifo.rec");
    let record = Command::new(crate::common::NETLENS)
        .args(["record", "--interval", "200ms", "-o"])
        .arg(&recording)
        .args(QUIET)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn netlens record");
    std::thread::sleep(Duration::from_secs(2));
    must_stop_on_sigterm(record, "record");
    assert!(std::fs::metadata(&recording).is_ok_and(|m| m.len() > 0));

    // export serves samples that list the process, and stops on SIGTERM.
    let (export, address) = start_export(&["--interval", "200ms", "--per-process"]);
    let (page, listed) = scrape_until_listed(&address, pid, Duration::from_secs(10));
    if !listed {
        let _ = { export }.kill();
        panic!(
            "export never listed process {pid} in 10 s (sampler stalled); last page: {} bytes",
            page.len()
        );
    }
    must_stop_on_sigterm(export, "export");
}

/// A test's own directory under the temp dir, removed on drop.
fn tempdir(tag: &str) -> MadeDir {
    let path = std::env::temp_dir().join(format!("netlens-names-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    MadeDir::new(path, 0)
}

/// `len` letters no compressor shrinks much (an LCG's), after a title
/// escape sequence: a hostile name as a user would write it.
fn hostile_name(len: usize) -> String {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut name = String::from("\u{1b}]0;pwned\u{7}");
    name.extend((0..len).map(|_| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        char::from(b'a' + (state >> 59) as u8 % 26)
    }));
    name
}

#[test]
fn a_16_mb_container_name_costs_253_bytes() {
    let test = "a_16_mb_container_name_costs_253_bytes";
    if crate::common::need_root(&["useradd", "userdel", "setpriv", "python3"]) {
        return;
    }
    let user = TestUser::new("s");
    let store = user.podman_store();
    let id = container_id("516e");
    let entry = serde_json::json!([{ "id": id, "names": [hostile_name(16_000_000)] }]);
    std::fs::write(&store, serde_json::to_vec(&entry).unwrap()).unwrap();
    user.chown(&store);
    let Some(process) = Contained::start(test, &user, &format!("libpod-{id}.scope")) else {
        return;
    };
    let pid = process.pid();

    // Four samples: on a loaded box reading the 16 MB store can outlast
    // the first sample's deadline (the container is then unnamed, and its
    // lateness said); a later sample has the name.
    let (samples, printed) = snapshot(
        &["--count", "4", "--interval", "500ms"],
        Duration::from_secs(60),
    );
    let names: Vec<&str> = samples
        .iter()
        .filter_map(|s| container_of(s, pid)["name"].as_str())
        .collect();
    assert!(
        names.iter().all(|n| n.len() <= 253),
        "a name of {:?} bytes kept",
        names.iter().map(|n| n.len()).collect::<Vec<_>>()
    );
    let name = *names.first().unwrap_or_else(|| {
        panic!(
            "unnamed in every sample: {}",
            container_of(&samples[3], pid)
        )
    });
    assert!(name.starts_with("\\x1b]0;pwned\\x07"), "{name}");
    assert!(!name.contains(['\u{1b}', '\u{7}']), "{name}");
    assert!(
        printed < samples.len() << 20,
        "snapshot printed {printed} bytes in {} samples",
        samples.len()
    );

    // A recording of 2 s (10 samples) and an exporter's page stay small.
    let dir = tempdir("huge");
    let recording = dir.path.join("huge.rec");
    let mut args = vec!["record", "--interval", "200ms", "--duration", "2s", "-o"];
    args.push(recording.to_str().unwrap());
    args.extend_from_slice(QUIET);
    let out = netlens_within(&args, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size = std::fs::metadata(&recording).unwrap().len();
    eprintln!("recording of 2 s with a 16 MB name: {size} bytes");
    assert!(size < 4 << 20, "2 s recorded in {size} bytes");

    let (export, address) = start_export(&["--interval", "200ms", "--per-process"]);
    let (page, listed) = scrape_until_listed(&address, pid, Duration::from_secs(20));
    must_stop_on_sigterm(export, "export");
    assert!(listed, "export never listed process {pid}");
    eprintln!(
        "export --per-process page with a 16 MB name: {} bytes",
        page.len()
    );
    assert!(page.len() < 1 << 20, "a {} byte page", page.len());
}

/// Answers every `GET /containers/ID/json` on `path` with the name `name`
/// until dropped (polling accept, so it never blocks the test).
struct Daemon {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Daemon {
    fn new(path: &std::path::Path, name: &str) -> Daemon {
        let listener = UnixListener::bind(path).unwrap();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let body = format!(r#"{{"Id":"x","Name":"/{name}","Config":{{"Labels":{{}}}}}}"#);
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let thread = std::thread::spawn({
            let stop = stop.clone();
            move || {
                while !stop.load(Ordering::Relaxed) {
                    let Ok((mut conn, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    let _ = conn.set_nonblocking(false);
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                    let mut request = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !request.ends_with(b"\r\n\r\n") {
                        match conn.read(&mut buffer) {
                            Ok(n) if n > 0 => request.extend_from_slice(&buffer[..n]),
                            _ => break,
                        }
                    }
                    let _ = conn.write_all(reply.as_bytes());
                }
            }
        });
        Daemon {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

// A panic leaves the snapshot to end by itself (8 samples).
#[allow(clippy::zombie_processes)]
#[test]
fn a_full_api_backlog_holds_up_no_other_lookup() {
    let test = "a_full_api_backlog_holds_up_no_other_lookup";
    if crate::common::need_root(&["useradd", "userdel", "setpriv", "python3"]) {
        return;
    }
    // Two rootless podman users without stores: netlens asks each one's
    // API socket (/run/user/UID/podman/podman.sock). Ann's never accepts
    // (its backlog is full); Bob's answers at once.
    let (ann, bob) = (TestUser::new("a"), TestUser::new("b"));
    let sockets = |user: &TestUser| {
        let dir = MadeDir::new(format!("/run/user/{}/podman", user.uid).into(), user.uid);
        let path = dir.path.join("podman.sock");
        (dir, path)
    };
    let (_ann_dir, ann_socket) = sockets(&ann);
    let (_bob_dir, bob_socket) = sockets(&bob);
    let _stuck = FullBacklog::new(&ann_socket);
    let _daemon = Daemon::new(&bob_socket, "nl-api-bob");
    let (ann_id, bob_id) = (container_id("a9a1"), container_id("b0b1"));
    let Some(ann_process) = Contained::start(test, &ann, &format!("libpod-{ann_id}.scope")) else {
        return;
    };

    // Ann's container is looked up first (in netlens's first sample), Bob's
    // after: queued behind the stuck one.
    let mut args = vec!["snapshot", "--json", "--section", "sockets,processes"];
    args.extend_from_slice(QUIET);
    args.extend_from_slice(&["--interval", "500ms", "--count", "8"]);
    let mut netlens = Command::new(crate::common::NETLENS)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn netlens snapshot");
    let (tx, lines) = mpsc::channel();
    let stdout = netlens.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // Ann's is named from its cgroup, no API needed: in the first sample
    // whose owners are in (a loaded host may give one late).
    let mut named = false;
    while !named {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(20)) else {
            let _ = netlens.kill();
            let _ = netlens.wait();
            panic!("netlens named Ann's container in no sample within 20 s");
        };
        let sample: Value = serde_json::from_str(&line).unwrap();
        let id = &container_of(&sample, ann_process.pid())["id"];
        if !id.is_null() && id != ann_id.as_str() {
            let _ = netlens.kill();
            let _ = netlens.wait();
            panic!("Ann's container named {id}, not {ann_id}");
        }
        named = !id.is_null();
    }
    let Some(bob_process) = Contained::start(test, &bob, &format!("libpod-{bob_id}.scope")) else {
        return;
    };
    let status = setup::wait_within(&mut netlens, Duration::from_secs(30));
    reader.join().unwrap();
    assert!(
        status.is_some(),
        "snapshot --count 8 still running after 30 s: killed"
    );
    let samples: Vec<Value> = lines
        .try_iter()
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    let named = samples.iter().find_map(|sample| {
        let process = process(sample, bob_process.pid())?;
        process["container"]["name"].as_str().map(str::to_string)
    });
    assert_eq!(
        named.as_deref(),
        Some("nl-api-bob"),
        "Bob's container stayed unnamed for 7 samples (3.5 s) behind Ann's stuck API socket"
    );
    let ann_names: Vec<&Value> = samples
        .iter()
        .map(|s| &container_of(s, ann_process.pid())["name"])
        .collect();
    assert!(ann_names.iter().all(|n| n.is_null()), "{ann_names:?}");
}
