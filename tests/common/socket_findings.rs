//! Helpers for the socket-table findings' tests (close-wait,
//! port-exhaustion, connect-timeout): python3 helpers in a namespace, a
//! snapshot running beside them, `ss` rows to compare with.

use super::{ChildGuard, NETLENS, ns_exec, python_in};
use serde_json::Value;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};

/// Reads the helper's lines up to "ready"; returns the lines before it.
pub fn wait_ready(child: &mut ChildGuard) -> Vec<String> {
    let stdout = child.0.stdout.take().expect("piped");
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.expect("helper output");
        if line.trim() == "ready" {
            return lines;
        }
        lines.push(line);
    }
    panic!("the helper ended before it was ready: {lines:?}");
}

/// `netlens snapshot --json --no-capture --section findings` of `ns`,
/// `count` samples one second apart, running in the background.
pub fn start_snapshot(ns: &str, count: u32) -> Child {
    start_snapshot_with(ns, count, &[])
}

/// `start_snapshot` with more arguments (`--record FILE`).
pub fn start_snapshot_with(ns: &str, count: u32, more: &[&str]) -> Child {
    Command::new(NETLENS)
        .args([
            "snapshot",
            "--json",
            "--no-capture",
            "--section",
            "findings",
        ])
        .args(["--count", &count.to_string(), "--interval", "1s"])
        .args(["--netns", ns])
        .args(more)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("netlens snapshot")
}

/// Waits for the snapshot; its JSON lines.
pub fn finish_snapshot(child: Child) -> Vec<Value> {
    let out = child.wait_with_output().expect("snapshot");
    assert!(
        out.status.success(),
        "snapshot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    super::parse_lines(&out.stdout)
}

/// Every finding `id` of every sample, in order.
pub fn findings(lines: &[Value], id: &str) -> Vec<Value> {
    lines
        .iter()
        .flat_map(|line| line["findings"].as_array().cloned().unwrap_or_default())
        .filter(|f| f["id"] == id)
        .collect()
}

/// The findings `id` of the last sample.
pub fn last_findings(lines: &[Value], id: &str) -> Vec<Value> {
    findings(&lines[lines.len() - 1..], id)
}

pub fn text<'a>(finding: &'a Value, key: &str) -> &'a str {
    finding[key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {finding}"))
}

/// The whitespace-separated fields of `ss -H ARGS` in `ns`.
pub fn ss_rows(ns: &str, args: &[&str]) -> Vec<Vec<String>> {
    let mut command = vec!["ss", "-H"];
    command.extend_from_slice(args);
    let out = ns_exec(ns, &command);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// The (command, pid) in an `ss -p` users:(("python3",pid=12,fd=3)) field.
pub fn ss_user(row: &[String]) -> Option<(String, u32)> {
    let users = row.iter().find(|f| f.starts_with("users:"))?;
    let name = users.split('"').nth(1)?.to_string();
    let pid = users.split("pid=").nth(1)?.split([',', ')']).next()?;
    Some((name, pid.parse().ok()?))
}

/// The number after `before` in `text` ("holds 950 sockets": 950).
pub fn number_after(text: &str, before: &str) -> f64 {
    let rest = text
        .split(before)
        .nth(1)
        .unwrap_or_else(|| panic!("no {before:?} in {text:?}"));
    let number: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))
        .collect();
    number
        .parse()
        .unwrap_or_else(|_| panic!("no number after {before:?} in {text:?}"))
}

/// A well-behaved server on `ip`:`ports` in `ns`: accepts everything,
/// closes each connection as soon as its peer closed it (EOF), echoes
/// nothing. Ends by itself after 40 s.
pub fn closing_server(ns: &str, ip: std::net::Ipv4Addr, ports: &[u16]) -> ChildGuard {
    let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
    let mut server = python_in(
        ns,
        &format!(
            "import socket,selectors,time\n\
             sel=selectors.DefaultSelector()\n\
             for p in [{ports}]:\n\
             \x20   s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             \x20   s.bind(('{ip}',p)); s.listen(4096); s.setblocking(False)\n\
             \x20   sel.register(s,selectors.EVENT_READ,None)\n\
             print('ready',flush=True)\n\
             end=time.time()+40\n\
             while time.time()<end:\n\
             \x20   for key,_ in sel.select(0.5):\n\
             \x20       if key.data is None:\n\
             \x20           try: c,_=key.fileobj.accept()\n\
             \x20           except BlockingIOError: continue\n\
             \x20           c.setblocking(False); sel.register(c,selectors.EVENT_READ,1)\n\
             \x20       else:\n\
             \x20           try: d=key.fileobj.recv(65536)\n\
             \x20           except BlockingIOError: continue\n\
             \x20           except OSError: d=b''\n\
             \x20           if not d: sel.unregister(key.fileobj); key.fileobj.close()",
            ports = ports.join(",")
        ),
    );
    wait_ready(&mut server);
    server
}

/// `netlens replay --json FILE`'s lines.
pub fn replay_json(path: &std::path::Path) -> Vec<Value> {
    let out = Command::new(NETLENS)
        .args(["replay", "--json"])
        .arg(path)
        .output()
        .expect("netlens replay");
    assert!(
        out.status.success(),
        "replay failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    super::parse_lines(&out.stdout)
}

/// The (id, severity, evidence row, summary) of findings `id`, sample by
/// sample: what must agree between a snapshot and its recording's replay.
pub fn finding_rows(lines: &[Value], id: &str) -> Vec<Vec<(String, String, String)>> {
    lines
        .iter()
        .map(|line| {
            findings(std::slice::from_ref(line), id)
                .iter()
                .map(|f| {
                    (
                        text(f, "severity").to_string(),
                        f["evidence"]["row"].as_str().unwrap_or("").to_string(),
                        text(f, "summary").to_string(),
                    )
                })
                .collect()
        })
        .collect()
}

/// `netlens export --listen 127.0.0.1:0 --netns NS`, killed on drop, and
/// the address it serves on.
pub fn start_export(ns: &str) -> (ChildGuard, std::net::SocketAddr) {
    let mut child = Command::new(NETLENS)
        .args(["export", "--listen", "127.0.0.1:0", "--netns", ns])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("netlens export");
    let stdout = child.stdout.take().unwrap();
    let guard = ChildGuard(child);
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (guard, addr)
}

/// One GET /metrics on loopback: the body.
pub fn scrape(addr: std::net::SocketAddr) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to the exporter");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}
