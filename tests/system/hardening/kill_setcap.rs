//! F9 in a netlens given CAP_NET_ADMIN by file capabilities, as README's
//! `setcap` line grants it, run by an unprivileged user: it must not kill
//! another user's connection (root's here), and says why; the user's own
//! connection it still kills.
//!
//! Real things throughout: a setcap'd copy of the binary, the user nobody
//! (setpriv), two TCP connections on the loopback of a namespace the test
//! makes (one held by root, one by nobody), netlens in tmux, ss as the
//! judge.

use crate::common::tmux::Tmux;
use crate::common::{ChildGuard, NETLENS, Netns};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// nobody, on Debian and most others.
const USER: u32 = 65534;

/// One TCP connection 198.18.0.2:CPORT -> 198.18.0.1:PORT, both ends in
/// this process; it lives a minute at most.
const PAIR: &str = r#"
import socket, sys, time
port, cport = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.0.1", port))
s.listen(1)
c = socket.socket()
c.bind(("198.18.0.2", cport))
c.connect(("198.18.0.1", port))
a, _ = s.accept()
time.sleep(60)
"#;

/// A directory nobody can read, holding the setcap'd copy; removed on drop.
struct SetcapCopy {
    dir: PathBuf,
}

impl SetcapCopy {
    fn new() -> SetcapCopy {
        let dir = std::env::temp_dir().join(format!("netlens-killcap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let copy = SetcapCopy { dir };
        std::fs::set_permissions(&copy.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::copy(NETLENS, copy.binary()).unwrap();
        std::fs::set_permissions(copy.binary(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let setcap = Command::new("setcap")
            .args(["cap_net_raw,cap_net_admin+ep"])
            .arg(copy.binary())
            .output()
            .expect("setcap (apt install libcap2-bin)");
        assert!(
            setcap.status.success(),
            "setcap: {}",
            String::from_utf8_lossy(&setcap.stderr)
        );
        copy
    }

    fn binary(&self) -> PathBuf {
        self.dir.join("netlens")
    }
}

impl Drop for SetcapCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `ip netns exec NS [setpriv as nobody] python3 PAIR PORT CPORT`.
fn pair(ns: &Netns, as_user: bool, port: u16, cport: u16) -> ChildGuard {
    let mut command = Command::new("ip");
    command.args(["netns", "exec", &ns.name]);
    if as_user {
        // The system python3: root's PATH may name one nobody cannot run.
        command
            .args(setpriv())
            .args(["env", "PATH=/usr/local/bin:/usr/bin:/bin"]);
    }
    let child = command
        .args(["python3", "-c", PAIR, &port.to_string(), &cport.to_string()])
        .stdin(Stdio::null())
        .spawn()
        .expect("python3");
    let guard = ChildGuard(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ss(ns).contains(&format!("198.18.0.2:{cport}")) {
        assert!(
            Instant::now() < deadline,
            "the connection from port {cport} never came up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    guard
}

fn setpriv() -> Vec<String> {
    vec![
        "setpriv".into(),
        format!("--reuid={USER}"),
        format!("--regid={USER}"),
        "--clear-groups".into(),
    ]
}

/// `ss -Htane` in the namespace: each socket with its uid:N.
fn ss(ns: &Netns) -> String {
    let out = crate::common::ns_exec(&ns.name, &["ss", "-Htane"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Searches (F3) for `text`, presses F9 and answers y if asked; returns
/// the status line that says what happened.
fn f9(server: &Tmux, text: &str) -> String {
    server.keys("k", &["F3", "C-u"]);
    server.type_text("k", text);
    server.keys("k", &["Enter"]);
    server.wait_for("k", "the search closed", |lines| {
        !lines.last().is_some_and(|l| l.starts_with("search"))
    });
    server.keys("k", &["F9"]);
    let shown = server.wait_for("k", "an answer to F9", |lines| {
        lines
            .last()
            .is_some_and(|l| l.starts_with("Kill ") || l.starts_with("cannot kill "))
    });
    let last = shown.last().unwrap().trim_end().to_string();
    if !last.starts_with("Kill ") {
        return last;
    }
    server.keys("k", &["y"]);
    let shown = server.wait_for("k", "the outcome of y", |lines| {
        lines
            .last()
            .is_some_and(|l| l.starts_with("killed ") || l.starts_with("cannot kill "))
    });
    shown.last().unwrap().trim_end().to_string()
}

#[test]
fn setcap_netlens_kills_only_the_callers_sockets() {
    if crate::common::need_root(&["ip", "python3", "setcap", "setpriv", "ss", "tmux"]) {
        return;
    }
    let Some(server) = Tmux::new("killcap") else {
        return;
    };
    let copy = SetcapCopy::new();
    let ns = Netns::new("killcap");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.0.1/32", "dev", "lo"]);
    ns.ip(&["addr", "add", "198.18.0.2/32", "dev", "lo"]);
    let _roots = pair(&ns, false, 5201, 40001);
    let _users = pair(&ns, true, 5202, 40002);
    let listed = ss(&ns);
    assert!(
        listed
            .lines()
            .any(|l| l.contains(":40002") && l.contains(&format!("uid:{USER}"))),
        "nobody's connection is not nobody's:\n{listed}"
    );

    let command = format!(
        "ip netns exec {} {} env TERM=tmux-256color HOME={} {} --no-capture --tab sockets --interval 200ms",
        ns.name,
        setpriv().join(" "),
        copy.dir.display(),
        copy.binary().display()
    );
    server.session("k", 220, 30, &command);
    server.wait_for("k", "both connections", |lines| {
        lines.iter().filter(|l| l.contains("ESTAB")).count() == 4
    });

    // Root's connection: refused, with the reason, and still there.
    let outcome = f9(&server, "40001");
    let listed = ss(&ns);
    assert!(
        listed
            .lines()
            .filter(|l| l.starts_with("ESTAB") && l.contains("198.18.0.2:40001"))
            .count()
            == 2,
        "a user killed root's connection with a setcap'd netlens ({outcome}):\n{listed}"
    );
    assert!(
        outcome.starts_with("cannot kill ")
            && outcome.contains("40001")
            && outcome.contains(&format!("it belongs to uid 0, not to you (uid {USER})")),
        "{outcome}"
    );

    // The user's own connection: killed as before.
    let outcome = f9(&server, "40002");
    if outcome.contains("CONFIG_INET_DIAG_DESTROY") {
        eprintln!("kernel without SOCK_DESTROY: checked the refusal only");
        return;
    }
    assert!(
        outcome.starts_with("killed ") && outcome.contains("40002"),
        "{outcome}"
    );
    let listed = ss(&ns);
    assert!(
        listed
            .lines()
            .filter(|l| l.starts_with("ESTAB") && l.contains("198.18.0.2:40002"))
            .count()
            < 2,
        "nobody's own connection was not killed ({outcome}):\n{listed}"
    );
    server.keys("k", &["q"]);
}
