//! Names other users choose reach no terminal raw: a process named by
//! prctl(PR_SET_NAME) with ESC, OSC, C1 (U+009B, CSI) and U+202E (bidi
//! override), holding TCP connections, and an interface named with
//! the same kinds of bytes (one end of a veth pair), both in a namespace the test makes; and a
//! recording whose description carries a hostile hostname (set in a UTS
//! namespace) and file name. Every output that shows them (snapshot text
//! and JSON, conns and conns --json, replay --info and --json, an export
//! scrape) must hold no raw control or bidi character, and show the name
//! escaped: `\x1b` in text and labels, `\u001b` (or that text form) in JSON.

use crate::common::exporter::Exporter;
use crate::common::{ChildGuard, NETLENS, Netns};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// ESC ] 0 ; pwn BEL (an OSC that sets the window title), CSI as one C1
/// character, and RIGHT-TO-LEFT OVERRIDE: 13 bytes, within comm's 15.
const COMM: &str = "\x1b]0;pwn\x07\u{9b}\u{202e}";
/// As `text::escape_control` writes it.
const COMM_ESCAPED: &str = "\\x1b]0;pwn\\x07\\x9b\\u{202e}";
/// ESC [ 7 m (reverse video), CSI, bidi: 10 bytes (IFNAMSIZ 16); the
/// kernel refuses only '/', ':' and whitespace.
const IFACE: &str = "h\x1b[7m\u{9b}\u{202e}";
const IFACE_ESCAPED: &str = "h\\x1b[7m\\x9b\\u{202e}";
const HOST: &str = "host\x1b]0;pwn\x07\u{9b}\u{202e}";
const HOST_ESCAPED: &str = "host\\x1b]0;pwn\\x07\\x9b\\u{202e}";

/// Two TCP connections on the namespace's loopback, in a process named
/// argv[1] (hex); each line on stdin closes the next one.
const HOSTILE: &str = r#"
import ctypes, socket, sys, time
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(bytes.fromhex(sys.argv[1])), 0, 0, 0)
pairs = []
for n in range(2):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("198.18.0.1", 5301 + n))
    s.listen(1)
    c = socket.socket()
    c.bind(("198.18.0.2", 40301 + n))
    c.connect(("198.18.0.1", 5301 + n))
    a, _ = s.accept()
    pairs.append((s, c, a))
for s, c, a in pairs:
    if not sys.stdin.readline():
        break
    c.close()
    a.close()
time.sleep(5)
"#;

/// The first character a terminal would act on (a newline ends a line and
/// is allowed), if any.
fn raw_unsafe(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

fn assert_clean(what: &str, text: &str) {
    let raw: Vec<String> = text
        .lines()
        .filter(|l| raw_unsafe(l).is_some())
        .map(|l| l.escape_debug().to_string())
        .collect();
    assert!(
        raw.is_empty(),
        "{what} wrote control or bidi characters raw, in {} lines:\n{}",
        raw.len(),
        raw[..raw.len().min(5)].join("\n")
    );
}

/// Runs netlens with ARGS, killed (by its pid) after `patience`.
fn netlens(args: &[&str], patience: Duration) -> Output {
    let child = Command::new(NETLENS)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens");
    finish(child, args, patience)
}

fn finish(child: std::process::Child, what: &[&str], patience: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(patience) {
        Ok(output) => output.expect("wait for netlens"),
        Err(_) => {
            // SAFETY: kill of the pid of our own child, still unreaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("netlens {what:?} did not finish within {patience:?}");
        }
    }
}

fn stdout_of(what: &str, output: &Output) -> String {
    assert!(
        output.status.success(),
        "netlens {what} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Whether a JSON string value shows `raw` escaped: decoded, it is the raw
/// name (\u escapes decode to it) or its text escape (a name bounded at
/// the source), and the line itself held no raw character.
fn json_names(value: &Value, raw: &str, escaped: &str) -> bool {
    match value {
        Value::String(s) => s.contains(raw) || s.contains(escaped),
        Value::Array(items) => items.iter().any(|v| json_names(v, raw, escaped)),
        Value::Object(map) => map.values().any(|v| json_names(v, raw, escaped)),
        _ => false,
    }
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// A file or directory of the test, removed on drop.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Hostile {
    stdin: ChildStdin,
    _child: ChildGuard,
}

impl Hostile {
    fn start(ns: &Netns) -> Hostile {
        let mut child = Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns.name,
                "python3",
                "-c",
                HOSTILE,
                &hex(COMM),
            ])
            .stdin(Stdio::piped())
            .spawn()
            .expect("python3");
        let stdin = child.stdin.take().unwrap();
        let hostile = Hostile {
            stdin,
            _child: ChildGuard(child),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let ss = crate::common::ns_exec(&ns.name, &["ss", "-Htn"]);
            if String::from_utf8_lossy(&ss.stdout).contains("198.18.0.2:40302") {
                return hostile;
            }
            assert!(Instant::now() < deadline, "the connections never came up");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Closes the next connection.
    fn close_one(&mut self) {
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }
}

/// GET /metrics, with a deadline.
fn scrape(exporter: &Exporter) -> String {
    let mut stream =
        std::net::TcpStream::connect_timeout(&exporter.addr, Duration::from_secs(5)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    // The body: the header lines end in CRLF, as HTTP has them.
    match response.split_once("\r\n\r\n") {
        Some((_, body)) => body.to_string(),
        None => panic!("not an HTTP response: {response:?}"),
    }
}

/// `netlens conns` (text or --json) while one connection of the hostile
/// process ends: its line names the process, escaped.
fn conns(ns: &Netns, hostile: &mut Hostile, json: bool) -> String {
    let mut args = vec!["conns", "--netns", &ns.name, "--interval", "200ms"];
    args.extend(["--duration", "3s"]);
    if json {
        args.push("--json");
    }
    let mut child = Command::new(NETLENS)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens conns");
    // Subscribed once it says so; then a sample or two learns the owners.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stderr).read_line(&mut line);
        let _ = tx.send(line);
    });
    let said = rx.recv_timeout(Duration::from_secs(10));
    assert!(
        said.as_ref()
            .is_ok_and(|l| l.contains("logging TCP connections")),
        "netlens conns did not start: {said:?}"
    );
    std::thread::sleep(Duration::from_millis(800));
    hostile.close_one();
    let output = finish(child, &args, Duration::from_secs(20));
    stdout_of("conns", &output)
}

#[test]
fn hostile_names_reach_no_output_raw() {
    if crate::common::need_root(&["ip", "python3", "ss", "unshare"]) {
        return;
    }
    let ns = Netns::new("escapes");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.0.1/32", "dev", "lo"]);
    ns.ip(&["addr", "add", "198.18.0.2/32", "dev", "lo"]);
    ns.ip(&[
        "link", "add", "name", IFACE, "type", "veth", "peer", "name", "nlesc0",
    ]);
    ns.ip(&["link", "set", IFACE, "up"]);
    ns.ip(&["link", "set", "nlesc0", "up"]);
    let mut hostile = Hostile::start(&ns);
    let watch = [
        "--netns",
        ns.name.as_str(),
        "--interval",
        "200ms",
        "--no-bpf",
    ];
    let patience = Duration::from_secs(30);

    // snapshot, text: the interfaces, sockets and processes sections.
    let mut args = vec!["snapshot", "--no-capture"];
    args.extend(watch);
    let text = stdout_of("snapshot", &netlens(&args, patience));
    assert_clean("snapshot", &text);
    let line_with = |needle: &str| text.lines().any(|l| l.contains(needle));
    assert!(line_with(IFACE_ESCAPED), "interfaces:\n{text}");
    assert!(
        line_with(&format!("users:((\"{COMM_ESCAPED}\",pid=")),
        "sockets:\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains(COMM_ESCAPED) && !l.contains("users:")),
        "processes:\n{text}"
    );

    // snapshot --json.
    args.push("--json");
    let json = stdout_of("snapshot --json", &netlens(&args, patience));
    assert_clean("snapshot --json", &json);
    let sample: Value = serde_json::from_str(json.trim()).expect("one JSON line");
    assert!(
        json_names(&sample["interfaces"], IFACE, IFACE_ESCAPED),
        "{json}"
    );
    assert!(json_names(&sample["sockets"], COMM, COMM_ESCAPED), "{json}");
    assert!(
        json_names(&sample["processes"], COMM, COMM_ESCAPED),
        "{json}"
    );

    // export: device and command labels.
    let mut args = vec!["--per-process"];
    args.extend(watch);
    let exporter = Exporter::start(&args);
    let deadline = Instant::now() + Duration::from_secs(15);
    let metrics = loop {
        let metrics = scrape(&exporter);
        if metrics.contains("command=") || Instant::now() > deadline {
            break metrics;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    drop(exporter);
    assert_clean("export", &metrics);
    let label = |escaped: &str| escaped.replace('\\', "\\\\");
    assert!(
        metrics.contains(&format!("device=\"{}\"", label(IFACE_ESCAPED))),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!("command=\"{}\"", label(COMM_ESCAPED))),
        "{metrics}"
    );

    // A recording made on a host with a hostile name, in a hostile file.
    let dir = Scratch(std::env::temp_dir().join(format!("netlens-escapes-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let file = dir.0.join("rec\x1b[2J.nlrec");
    // hostname(1) refuses such a name; sethostname(2) takes any bytes.
    let set_hostname = "import os, socket, sys\n\
        socket.sethostname(bytes.fromhex(sys.argv[1]))\n\
        os.execv(sys.argv[2], sys.argv[2:])";
    let record = Command::new("unshare")
        .args(["--uts", "python3", "-c", set_hostname, &hex(HOST)])
        .arg(NETLENS)
        .args(["snapshot", "--no-capture", "--count", "2", "--record"])
        .arg(&file)
        .args(watch)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare");
    stdout_of(
        "snapshot --record",
        &finish(record, &["snapshot --record"], patience),
    );
    let path = file.to_str().unwrap();
    let info = stdout_of(
        "replay --info",
        &netlens(&["replay", "--info", path], patience),
    );
    assert_clean("replay --info", &info);
    assert!(info.contains(&format!("on {HOST_ESCAPED},")), "{info}");
    assert!(info.contains("rec\\x1b[2J.nlrec"), "{info}");
    let replayed = stdout_of(
        "replay --json",
        &netlens(&["replay", "--json", path], patience),
    );
    assert_clean("replay --json", &replayed);
    let first: Value = serde_json::from_str(replayed.lines().next().unwrap()).unwrap();
    assert!(
        json_names(&first["interfaces"], IFACE, IFACE_ESCAPED),
        "{replayed}"
    );
    assert!(
        json_names(&first["sockets"], COMM, COMM_ESCAPED),
        "{replayed}"
    );

    // conns and conns --json, each while one connection ends.
    let table = conns(&ns, &mut hostile, false);
    assert_clean("conns", &table);
    assert!(table.contains(COMM_ESCAPED), "conns:\n{table}");
    let lines = conns(&ns, &mut hostile, true);
    assert_clean("conns --json", &lines);
    let closed: Value = serde_json::from_str(lines.lines().next().unwrap_or("null")).unwrap();
    assert!(
        json_names(&closed["comm"], COMM, COMM_ESCAPED),
        "conns --json:\n{lines}"
    );
}

/// An error quoting a hostile file name (one another user left in a
/// shared directory) reaches stderr escaped; needs no root.
#[test]
fn an_error_naming_a_hostile_file_is_escaped() {
    let dir = std::env::temp_dir().join(format!("netlens-esc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = dir.join(format!("ring{HOST}.nlrec"));
    std::fs::write(&name, b"not a recording").unwrap();
    let output = netlens(
        &["replay", "--info", name.to_str().unwrap()],
        Duration::from_secs(20),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "a bad file must fail: {stderr}");
    assert_clean("replay --info's error", &stderr);
    assert!(
        stderr.contains(HOST_ESCAPED),
        "escaped name missing: {stderr}"
    );
}
