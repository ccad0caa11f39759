//! The names clients send, read from captured packets (issue 27): the TLS
//! SNI from `openssl s_client -servername` against `openssl s_server` with
//! a certificate this test makes, the HTTP Host from curl against python's
//! http.server, and the QUIC SNI of RFC 9001's client Initial sent as a
//! real datagram; all inside a namespace this test creates (198.18.78.0/24
//! on its loopback), seen by `netlens snapshot --json` in its flows.

use crate::common;

use common::Netns;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

const SERVER: &str = "198.18.78.1";
const TLS_NAME: &str = "tls.peers.test";
const HTTP_NAME: &str = "web.peers.test";

fn in_ns(ns: &Netns, args: &[&str]) -> Command {
    let mut command = Command::new("ip");
    command.args(["netns", "exec", &ns.name]).args(args);
    command
}

/// A server run as `timeout 60 SERVER`. Dropping it sends SIGTERM, which
/// timeout passes on to the server; a SIGKILL would end timeout alone and
/// leave the server running with no timer.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the pid of a child this test started and has
        // not yet reaped.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

fn background(mut command: Command, dir: &std::path::Path) -> Server {
    Server(
        command
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn a server"),
    )
}

fn flow<'a>(sample: &'a Value, dst: &str) -> Option<&'a Value> {
    sample["flows"]
        .as_array()?
        .iter()
        .find(|f| f["dst"].as_str() == Some(dst))
}

#[test]
fn sni_host_and_quic_sni_from_real_clients_show_on_their_flows() {
    if crate::common::need_root(&["ip", "openssl", "curl", "python3"]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("netlens-peers-sni-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out",
            "cert.pem", "-days", "1", "-subj",
        ])
        .arg(format!("/CN={TLS_NAME}"))
        .current_dir(&dir)
        .output()
        .expect("run openssl (apt install openssl)");
    assert!(made.status.success(), "{made:?}");

    let ns = Netns::new("peers-sni");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", &format!("{SERVER}/24"), "dev", "lo"]);
    let accept = format!("{SERVER}:4433");
    let _tls = background(
        in_ns(
            &ns,
            &[
                "timeout", "60", "openssl", "s_server", "-accept", &accept, "-cert", "cert.pem",
                "-key", "key.pem", "-www",
            ],
        ),
        &dir,
    );
    let _http = background(
        in_ns(
            &ns,
            &[
                "timeout",
                "60",
                "python3",
                "-m",
                "http.server",
                "8080",
                "--bind",
                SERVER,
            ],
        ),
        &dir,
    );
    // Samples for 4 s; the clients run after the first second, and the flow
    // table keeps their flows, so the last sample carries them.
    let snapshot = common::spawn_snapshot(&[
        "--netns",
        &ns.name,
        "--section",
        "flows",
        "--interval",
        "1s",
        "--count",
        "4",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    let tls = in_ns(
        &ns,
        &[
            "timeout",
            "10",
            "openssl",
            "s_client",
            "-connect",
            &accept,
            "-servername",
            TLS_NAME,
        ],
    )
    .stdin(Stdio::null())
    .output()
    .unwrap();
    assert!(
        String::from_utf8_lossy(&tls.stdout).contains("BEGIN CERTIFICATE"),
        "{tls:?}"
    );
    let resolve = format!("{HTTP_NAME}:8080:{SERVER}");
    let url = format!("http://{HTTP_NAME}:8080/");
    let http = in_ns(
        &ns,
        &[
            "timeout",
            "10",
            "curl",
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--resolve",
            &resolve,
            &url,
        ],
    )
    .output()
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&http.stdout), "200", "{http:?}");
    // A real QUIC v1 client Initial (RFC 9001 A.2) as one datagram to :443.
    let quic = format!(
        "import socket\nb=bytes.fromhex(open('{}').read().strip())\n\
         s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\ns.sendto(b,('{SERVER}',443))\n",
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/quic/rfc9001-a2-client-initial.hex")
            .display()
    );
    let sent = in_ns(&ns, &["python3", "-c", &quic]).output().unwrap();
    assert!(sent.status.success(), "{sent:?}");

    let samples = common::snapshot_samples(snapshot);
    let last = samples.last().unwrap();
    let text = serde_json::to_string_pretty(&last["flows"]).unwrap();
    let tls = flow(last, &accept).unwrap_or_else(|| panic!("no TLS flow: {text}"));
    assert_eq!(tls["sni"], TLS_NAME, "{text}");
    assert_eq!(tls["http_host"], Value::Null, "{text}");
    let web = flow(last, &format!("{SERVER}:8080")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(web["http_host"], format!("{HTTP_NAME}:8080"), "{text}");
    assert_eq!(web["sni"], Value::Null, "{text}");
    let quic = flow(last, &format!("{SERVER}:443")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(quic["proto"], "udp", "{text}");
    assert_eq!(quic["sni"], "example.com", "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
