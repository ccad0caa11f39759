//! The row filter language end to end (issue 27): `snapshot --where` on
//! real sockets in a namespace the test creates, each expression checked
//! against the sockets `ss`'s own filter selects there; `--where` errors on
//! the command line; and the Sockets tab's `/` in tmux with a field
//! expression and an error.
//!
//! Network safety: every address is in 198.18.40.0/24 on the loopback of
//! a namespace the test creates; the connections stay inside it, and the
//! processes holding them exit after 300 s at most.

use crate::common;

use common::tmux::Tmux;
use common::{ChildGuard, NETLENS, Netns, ns_exec, snapshot};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The server: named fltserver (its comm), a TCP listener on
/// 198.18.40.1:8443 that keeps what it accepts, a TCP listener on
/// 198.18.40.2:9000 and a UDP socket on 198.18.40.1:5353.
const SERVER: &str = r#"
import ctypes, socket, time
ctypes.CDLL(None).prctl(15, b"fltserver", 0, 0, 0)
tcp = socket.socket(); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("198.18.40.1", 8443)); tcp.listen(8)
other = socket.socket(); other.bind(("198.18.40.2", 9000)); other.listen(8)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.bind(("198.18.40.1", 5353))
tcp.settimeout(1); kept = []; end = time.time() + 300
while time.time() < end:
    try: kept.append(tcp.accept()[0])
    except socket.timeout: pass
"#;

/// The client: named fltclient, two connections from 198.18.40.2 to the
/// server's 8443, held.
const CLIENT: &str = r#"
import ctypes, socket, time
ctypes.CDLL(None).prctl(15, b"fltclient", 0, 0, 0)
held = []
for _ in range(2):
    s = socket.socket(); s.bind(("198.18.40.2", 0)); s.connect(("198.18.40.1", 8443)); held.append(s)
time.sleep(300)
"#;

struct Scene {
    ns: Netns,
    server: ChildGuard,
    client: ChildGuard,
}

fn python(ns: &Netns, script: &str) -> ChildGuard {
    ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &ns.name, "python3", "-c", script])
            .stdin(Stdio::null())
            .spawn()
            .expect("python3"),
    )
}

/// The namespace with its addresses on loopback, the server and the client, once
/// ss shows both connections established at both ends.
fn scene(tag: &str) -> Scene {
    let ns = Netns::new(tag);
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.40.1/24", "dev", "lo"]);
    ns.ip(&["addr", "add", "198.18.40.2/24", "dev", "lo"]);
    let server = python(&ns, SERVER);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ss(&ns, &["-t", "state", "listening"]).len() < 2 {
        assert!(Instant::now() < deadline, "the server never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    let client = python(&ns, CLIENT);
    while ss(&ns, &["-t", "state", "established"]).len() < 4 {
        assert!(Instant::now() < deadline, "the client never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
    Scene { ns, server, client }
}

/// (proto, local, peer) of one line of `ss -H`: its columns vary (no
/// Netid with -t or -u alone, no State with a state filter), so the ends
/// are the first two fields with a colon; `proto` when there is no Netid.
/// Peers are written as netlens writes them ("0.0.0.0:0" for "0.0.0.0:*").
fn ss_line(line: &str, proto: &str) -> Option<(String, String, String)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let proto = match *f.first()? {
        "tcp" | "udp" => f[0],
        _ => proto,
    };
    let at = f.iter().position(|w| w.contains(':'))?;
    let peer = f.get(at + 1)?.replace(":*", ":0");
    Some((proto.to_string(), f[at].to_string(), peer))
}

/// The sockets `ss -an -H ARGS` prints in `ns`; `args[0]` is -t, -u or -tu.
fn ss(ns: &Netns, args: &[&str]) -> BTreeSet<(String, String, String)> {
    let mut all = vec!["ss", "-anH"];
    all.extend_from_slice(args);
    let out = ns_exec(&ns.name, &all);
    let proto = if args[0] == "-u" { "udp" } else { "tcp" };
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.lines().filter_map(|l| ss_line(l, proto)).collect()
}

/// The sockets `snapshot --where EXPR` prints for the namespace.
fn kept(ns: &Netns, expression: &str) -> BTreeSet<(String, String, String)> {
    let samples = snapshot(&[
        "--netns",
        &ns.name,
        "--interval",
        "200ms",
        "--no-capture",
        "--no-bpf",
        "--section",
        "sockets",
        "--where",
        expression,
    ]);
    let sockets = samples[0]["sockets"].as_array().expect("sockets").clone();
    sockets
        .iter()
        .map(|s| {
            let text = |key: &str| s[key].as_str().unwrap_or_default().to_string();
            (text("proto"), text("local"), text("peer"))
        })
        .collect()
}

/// ss's sockets (with -p) whose process column says `needle`.
fn ss_owned(ns: &Netns, needle: &str) -> BTreeSet<(String, String, String)> {
    let out = ns_exec(&ns.name, &["ss", "-tuanpH"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let owned = text.lines().filter(|l| l.contains(needle));
    owned.filter_map(|l| ss_line(l, "tcp")).collect()
}

#[test]
fn snapshot_where_keeps_what_ss_filters_select() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let scene = scene("fltwhere");
    let ns = &scene.ns;
    let server = scene.server.pid();
    let table: Vec<(&str, BTreeSet<_>)> = vec![
        ("state:listen", ss(ns, &["-t", "state", "listening"])),
        ("proto:udp", ss(ns, &["-u"])),
        ("sport:8443", ss(ns, &["-tu", "sport", "=", ":8443"])),
        ("dport:8443", ss(ns, &["-tu", "dport", "=", ":8443"])),
        (
            "port:8443 !state:listen",
            ss(
                ns,
                &[
                    "-t",
                    "state",
                    "established",
                    "( sport = :8443 or dport = :8443 )",
                ],
            ),
        ),
        (
            "net:198.18.40.2/32",
            ss(ns, &["-tu", "( src 198.18.40.2 or dst 198.18.40.2 )"]),
        ),
        (
            "(sport:5353 or sport:9000) and ns:fltwhere",
            ss(ns, &["-tu", "( sport = :5353 or sport = :9000 )"]),
        ),
        (
            "uid:root state:estab",
            ss(ns, &["-t", "state", "established"]),
        ),
        // A bare word as before: a substring of what the row shows.
        (
            ":8443 estab",
            ss(
                ns,
                &[
                    "-t",
                    "state",
                    "established",
                    "( sport = :8443 or dport = :8443 )",
                ],
            ),
        ),
        ("proc:fltclient", ss_owned(ns, "\"fltclient\"")),
        (
            "pid:PID or proc:fltclient",
            ss_owned(ns, "\"fltclient\"")
                .union(&ss_owned(ns, &format!("pid={server},")))
                .cloned()
                .collect(),
        ),
    ];
    for (expression, want) in table {
        let expression = expression.replace("PID", &server.to_string());
        assert!(!want.is_empty(), "{expression}: ss selected nothing");
        assert_eq!(kept(ns, &expression), want, "{expression}");
    }

    // The processes section keeps the processes the expression names.
    let samples = snapshot(&[
        "--netns",
        &ns.name,
        "--interval",
        "200ms",
        "--no-capture",
        "--no-bpf",
        "--section",
        "processes",
        "--where",
        "proc:fltserver",
    ]);
    let pids: Vec<u64> = samples[0]["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .filter_map(|p| p["pid"].as_u64())
        .collect();
    assert_eq!(pids, [u64::from(server)]);
    drop(scene.client);
}

#[test]
fn where_errors_are_a_line_with_a_caret_and_a_failure() {
    let out = Command::new(NETLENS)
        .args(["snapshot", "--where", "port:80 and (state:bogus or x)"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with(
            "netlens: --where: filter error at character 20: unknown state 'bogus' (established"
        ),
        "{err}"
    );
    assert_eq!(lines[1], "  port:80 and (state:bogus or x)");
    assert_eq!(lines[2], "                     ^");
    // Limits: a clear line, not a hang or a crash.
    let deep = format!("{}x{}", "(".repeat(200), ")".repeat(200));
    let out = Command::new(NETLENS)
        .args(["snapshot", "--where", &deep])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nested more than 32 deep"), "{err}");
}

#[test]
fn the_sockets_filter_line_takes_fields_and_shows_errors_in_place() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("filter") else {
        return;
    };
    let scene = scene("flttui");
    let command = format!(
        "{NETLENS} --netns {} --no-capture --no-bpf --config /dev/null --tab sockets",
        scene.ns.name
    );
    tmux.start(80, 24, &std::env::temp_dir(), &command);
    tmux.wait_for("t", "the listener", |lines| {
        lines.iter().any(|l| l.contains("LISTEN"))
    });
    tmux.send_keys(&["/"]);
    tmux.type_text("t", "sport:8443 state:estab");
    // The server's accepted ends; without the filter the clients' ends
    // (peer 198.18.40.1:8443) would make it 4, and the listeners show.
    let estab_8443 = |l: &&String| l.starts_with("ESTAB") && l.contains("198.18.40.1:8443");
    tmux.wait_for("t", "the two accepted connections only", |lines| {
        lines.iter().filter(estab_8443).count() == 2
            && !lines.iter().any(|l| l.contains("198.18.40.2:9000"))
    });
    // A field that does not exist: the caret under it, the tab still open.
    tmux.type_text("t", " or prot:udp");
    let screen = tmux.wait_for("t", "the caret error", |lines| {
        lines
            .iter()
            .any(|l| l.contains("^ error at character 27: unknown field 'prot'"))
    });
    let caret = screen.iter().find(|l| l.contains("^ error")).unwrap();
    let prompt = screen.iter().find(|l| l.starts_with("filter: ")).unwrap();
    assert_eq!(
        caret.find('^'),
        prompt.find("prot:"),
        "{}",
        screen.join("\n")
    );
    // Enter keeps the line open on an error; fixing it applies it.
    tmux.send_keys(&["Enter"]);
    for _ in 0.."prot:udp".len() {
        tmux.send_keys(&["BSpace"]);
    }
    tmux.type_text("t", "proto:udp");
    tmux.send_keys(&["Enter"]);
    let screen = tmux.wait_for("t", "the filter applied", |lines| {
        lines
            .iter()
            .any(|l| l.contains("[filter: sport:8443 state:estab or proto:udp]"))
    });
    assert!(
        screen.iter().any(|l| l.contains("198.18.40.1:5353")),
        "{}",
        screen.join("\n")
    );
    assert_eq!(
        screen.iter().filter(estab_8443).count(),
        2,
        "{}",
        screen.join("\n")
    );
    tmux.send_keys(&["q"]);
    drop(scene.server);
}

/// The same in the drawn frame, without root: an Interfaces tab of two
/// interfaces, a field expression that keeps one, then an error whose caret
/// sits under the bad character, the tab still on screen, and Enter that
/// keeps the line open.
#[test]
fn a_drawn_filter_error_has_its_caret_under_the_bad_character() {
    use netlens::app::App;
    use netlens::app::keymap::Key;
    use netlens::app::tabs::Tab;
    use netlens::collect::SamplerEvent;
    use netlens::model::{InterfaceSample, Sample};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    let iface = |index: u32, name: &str, address: &str| InterfaceSample {
        index,
        name: name.into(),
        up: true,
        lower_up: true,
        mtu: 1500,
        addresses: vec![address.into()],
        ..InterfaceSample::default()
    };
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), false);
    for mono in [100.0, 101.0] {
        let sample = Sample {
            mono,
            t: mono,
            netns: "host".into(),
            interfaces: vec![
                iface(2, "fltone", "198.18.41.1/24"),
                iface(3, "flttwo", "198.19.41.1/24"),
            ],
            ..Sample::default()
        };
        app.on_sampler(SamplerEvent::Sample(Box::new(sample)));
    }
    let screen = |app: &mut App| {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal
            .draw(|frame| netlens::ui::draw(frame, app))
            .unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..24)
            .map(|y| {
                (0..80)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<String>>()
    };
    let type_text = |app: &mut App, text: &str| {
        for c in text.chars() {
            app.on_key(Key::Char(c));
        }
    };
    app.on_key(Key::Char('/'));
    type_text(&mut app, "net:198.18.0.0/16");
    let lines = screen(&mut app);
    assert!(lines.iter().any(|l| l.starts_with("fltone")), "{lines:#?}");
    assert!(!lines.iter().any(|l| l.starts_with("flttwo")), "{lines:#?}");
    type_text(&mut app, " or nett:x");
    let lines = screen(&mut app);
    let prompt = lines
        .iter()
        .position(|l| l.starts_with("filter: "))
        .unwrap();
    let caret = &lines[prompt + 1];
    // The message runs on to the pane's edge, where it is cut.
    let pad = " ".repeat("filter: net:198.18.0.0/16 or ".len());
    let want = format!("{pad}^ error at character 22: unknown field 'nett' (fiel");
    assert_eq!(caret, &want);
    // Unfiltered meanwhile, in the same tab.
    assert!(lines.iter().any(|l| l.starts_with("flttwo")), "{lines:#?}");
    assert!(lines[2].contains("1 Ifaces"), "{lines:#?}");
    app.on_key(Key::Enter);
    assert_eq!(app.editing_filter(), Some("net:198.18.0.0/16 or nett:x"));
    app.on_key(Key::Esc);
    assert_eq!(app.editing_filter(), None);
    assert!(app.filter().is_none());
}
