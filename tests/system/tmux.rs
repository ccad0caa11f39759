//! netlens in real tmux: compact panes, keys, resizes, TERM, NO_COLOR and
//! the mouse, `netlens tmux --detached`, and the layout file in assets/.
//!
//! Every test runs its own tmux server (`tmux -L netlens-<tag>-<pid>`,
//! with TMUX_TMPDIR in a private directory and no user config), and kills
//! only that server. The panes run with --no-capture (except the layout's
//! Flows pane) and watch the host's counters; nothing is sent anywhere.

use crate::common;

use common::NETLENS;
use common::tmux::Tmux as Server;
use std::process::Command;
use std::time::{Duration, Instant};

fn netlens_in(term: &str, args: &str) -> String {
    format!("env TERM={term} {NETLENS} {args}")
}

/// `netlens --tab tcp --compact` in a 40x10 pane: the compact TCP tab,
/// keys switch tabs and open the help and the findings, every line fits.
#[test]
fn compact_tcp_tab_in_a_40x10_pane_takes_keys() {
    let Some(server) = Server::new("keys") else {
        return;
    };
    for (session, term) in [("screen", "screen-256color"), ("tmux", "tmux-256color")] {
        let command = netlens_in(term, "--tab tcp --compact --no-capture --interval 200ms");
        server.session(session, 40, 10, &command);
        let shown = server.wait_for(session, "the TCP tab", |lines| {
            lines.first().is_some_and(|l| l.starts_with("3 TCP"))
                && lines.iter().any(|l| l.contains("ESTABLISHED"))
        });
        assert_eq!(shown.len(), 10, "{shown:?}");
        assert!(shown.iter().all(|l| l.chars().count() <= 40), "{shown:?}");
        assert!(!shown.iter().any(|l| l.contains("netlens ")), "{shown:?}");
        server.run(&["send-keys", "-t", session, "2"]);
        server.wait_for(session, "the Sockets tab", |lines| {
            lines.first().is_some_and(|l| l.starts_with("2 Sockets"))
                && lines.iter().any(|l| l.contains("Local"))
        });
        server.run(&["send-keys", "-t", session, "?"]);
        server.wait_for(session, "the help", |lines| {
            lines.iter().any(|l| l.contains("Keys"))
        });
        server.run(&["send-keys", "-t", session, "Escape"]);
        server.wait_for(session, "the help closed", |lines| {
            !lines.iter().any(|l| l.contains("Keys"))
        });
        server.run(&["send-keys", "-t", session, "!"]);
        server.wait_for(session, "the findings list", |lines| {
            lines.iter().any(|l| l.contains("Findings"))
        });
        server.run(&["send-keys", "-t", session, "q"]);
        server.wait_for(session, "netlens gone", |_| {
            server
                .run(&["display-message", "-p", "-t", session, "#{pane_dead}"])
                .trim()
                == "1"
        });
    }
}

/// Resizing the pane while netlens runs: each redraw fits the new size,
/// switching between the compact and the full layout.
#[test]
fn pane_resizes_redraw_to_fit() {
    let Some(server) = Server::new("resize") else {
        return;
    };
    let command = netlens_in(
        "tmux-256color",
        "--tab sockets --no-capture --interval 200ms",
    );
    server.session("r", 40, 10, &command);
    server.wait_for("r", "compact Sockets", |lines| {
        lines.first().is_some_and(|l| l.starts_with("2 Sockets"))
    });
    server.run(&["resize-window", "-t", "r", "-x", "100", "-y", "30"]);
    let wide = server.wait_for("r", "the full layout", |lines| {
        lines.first().is_some_and(|l| l.starts_with("netlens "))
            && lines.iter().any(|l| l.contains("q quit"))
    });
    assert_eq!(wide.len(), 30);
    server.run(&["resize-window", "-t", "r", "-x", "45", "-y", "9"]);
    let small = server.wait_for("r", "compact again", |lines| {
        lines.len() == 9 && lines.first().is_some_and(|l| l.starts_with("2 Sockets"))
    });
    assert!(small.iter().all(|l| l.chars().count() <= 45), "{small:?}");
    // Nothing of the full layout is left behind.
    assert!(
        !small
            .iter()
            .any(|l| l.contains("q quit") || l.contains("netlens ")),
        "{small:?}"
    );
    server.run(&["send-keys", "-t", "r", "q"]);
}

/// The mouse is tmux's unless asked for; NO_COLOR means no colour at all.
#[test]
fn mouse_only_when_enabled_and_no_color_respected() {
    let Some(server) = Server::new("mouse") else {
        return;
    };
    let plain = netlens_in("tmux-256color", "--compact --no-capture --interval 200ms");
    let mouse = netlens_in(
        "tmux-256color",
        "--compact --no-capture --mouse --interval 200ms",
    );
    let no_color =
        format!("env NO_COLOR=1 TERM=tmux-256color {NETLENS} --no-capture --interval 200ms");
    server.session("plain", 80, 24, &plain);
    server.session("mouse", 80, 24, &mouse);
    server.session("mono", 80, 24, &no_color);
    for session in ["plain", "mouse", "mono"] {
        server.wait_for(session, "the Interfaces tab", |lines| {
            lines.iter().any(|l| l.contains("IFACE"))
        });
    }
    let flag = |session: &str| {
        server
            .run(&["display-message", "-p", "-t", session, "#{mouse_any_flag}"])
            .trim()
            .to_string()
    };
    assert_eq!(flag("plain"), "0");
    assert_eq!(flag("mouse"), "1");
    // -e keeps the escape sequences: no SGR colour (3x/4x/38;5/48;5).
    let escaped = server.run(&["capture-pane", "-p", "-e", "-t", "mono"]);
    let coloured = escaped.split("\x1b[").skip(1).any(|sgr| {
        let params = sgr.split('m').next().unwrap_or_default();
        params.split(';').any(|p| {
            p.len() == 2 && (p.starts_with('3') || p.starts_with('4')) && p != "39" && p != "49"
        })
    });
    assert!(!coloured, "{escaped:?}");
    let escaped = server.run(&["capture-pane", "-p", "-e", "-t", "plain"]);
    assert!(escaped.contains("\x1b["), "colour is on without NO_COLOR");
    for session in ["plain", "mouse", "mono"] {
        server.run(&["send-keys", "-t", session, "q"]);
    }
}

fn pane_commands(server: &Server, target: &str) -> Vec<String> {
    server
        .run(&["list-panes", "-t", target, "-F", "#{pane_start_command}"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Checks the four panes: compact, one tab each, Flows captures, DNS
/// captures DNS only, the others nothing.
fn assert_layout(commands: &[String]) {
    assert_eq!(commands.len(), 4, "{commands:?}");
    for (command, tab) in commands.iter().zip(["interfaces", "tcp", "flows", "dns"]) {
        assert!(command.contains("--compact"), "{command}");
        assert!(command.contains(&format!("--tab {tab}")), "{command}");
        assert_eq!(
            command.contains("--no-capture"),
            tab != "flows" && tab != "dns",
            "{command}"
        );
        assert_eq!(command.contains("udp port 53"), tab == "dns", "{command}");
    }
}

#[test]
fn netlens_tmux_detached_builds_the_layout() {
    let Some(server) = Server::new("layout") else {
        return;
    };
    let out = Command::new(NETLENS)
        .env("TMUX_TMPDIR", &server.tmpdir)
        .env_remove("TMUX")
        .args([
            "tmux",
            "--detached",
            "--session",
            "trouble",
            "--tmux-socket",
            &server.socket,
            "--interval",
            "2s",
        ])
        .output()
        .expect("run netlens tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("created session"), "{said}");
    let commands = pane_commands(&server, "trouble");
    assert_layout(&commands);
    assert!(
        commands.iter().all(|c| c.contains("--interval 2000ms")),
        "{commands:?}"
    );
    assert!(commands[0].contains(NETLENS), "{commands:?}");
    // The panes run netlens, compact in their quarter of 80x24.
    server.wait_for("trouble.0", "the interfaces pane", |lines| {
        lines.first().is_some_and(|l| l.starts_with("1 Ifaces"))
    });
    // The same name again: tmux's own words, exit 1.
    let again = Command::new(NETLENS)
        .env("TMUX_TMPDIR", &server.tmpdir)
        .env_remove("TMUX")
        .args([
            "tmux",
            "--detached",
            "--session",
            "trouble",
            "--tmux-socket",
            &server.socket,
        ])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    let error = String::from_utf8_lossy(&again.stderr);
    assert!(error.contains("duplicate session"), "{error}");
}

#[test]
fn without_tmux_the_error_is_one_line() {
    let out = Command::new(NETLENS)
        .env("PATH", "/nonexistent")
        .args(["tmux", "--detached"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let error = String::from_utf8_lossy(&out.stderr);
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(error.contains("tmux is not installed"), "{error}");
}

/// assets/netlens.tmux, sourced into a running server, opens the same
/// four panes (netlens found on tmux's PATH).
#[test]
fn layout_file_sources_into_tmux() {
    let Some(server) = Server::new("asset") else {
        return;
    };
    let bin_dir = std::path::Path::new(NETLENS).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The server takes its environment from the client that starts it.
    let started = server
        .command()
        .env("PATH", &path)
        .args(["new-session", "-d", "-s", "mine", "-x", "120", "-y", "40"])
        .status()
        .unwrap();
    assert!(started.success());
    let asset = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/netlens.tmux");
    // One session: the file's new-window goes there. A command from outside
    // tmux runs its panes with that client's environment: PATH too.
    let sourced = server
        .command()
        .env("PATH", &path)
        .args(["source-file", asset])
        .status()
        .unwrap();
    assert!(sourced.success());
    let commands = pane_commands(&server, "mine:netlens");
    assert_layout(&commands);
    server.wait_for("mine:netlens.1", "the TCP pane", |lines| {
        lines.first().is_some_and(|l| l.starts_with("3 TCP"))
    });
}

/// A real client attaches (in a pseudo-terminal), detaches and attaches
/// again at another size: netlens keeps running and redraws for each.
#[test]
fn survives_detach_and_attach() {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let Some(server) = Server::new("attach") else {
        return;
    };
    let command = netlens_in(
        "tmux-256color",
        "--tab sockets --no-capture --interval 200ms",
    );
    server.session("a", 40, 10, &command);
    server.run(&["set-option", "-t", "a", "window-size", "latest"]);
    server.wait_for("a", "compact Sockets", |lines| {
        lines.first().is_some_and(|l| l.starts_with("2 Sockets"))
    });
    let attach = |cols: u16, rows: u16| {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut client = CommandBuilder::new("tmux");
        client.args([
            "-L",
            &server.socket,
            "-f",
            "/dev/null",
            "attach-session",
            "-t",
            "a",
        ]);
        client.env("TMUX_TMPDIR", &server.tmpdir);
        // portable-pty starts in $HOME by default, which may not exist.
        client.cwd(std::env::temp_dir());
        client.env("TERM", "xterm-256color");
        client.env_remove("TMUX");
        let child = pair.slave.spawn_command(client).unwrap();
        // Keep the client's output flowing.
        let mut reader = pair.master.try_clone_reader().unwrap();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while matches!(std::io::Read::read(&mut reader, &mut buffer), Ok(n) if n > 0) {}
        });
        (pair, child)
    };
    // Attached at 100x30 (no status line): the full layout.
    let (first, mut first_child) = attach(100, 30);
    server.wait_for("a", "the full layout", |lines| {
        lines.first().is_some_and(|l| l.starts_with("netlens "))
    });
    server.run(&["detach-client", "-s", "a"]);
    let _ = first_child.wait();
    drop(first);
    // netlens is still there, and a new client at 50x10 gets a compact redraw.
    assert_eq!(
        server
            .run(&["display-message", "-p", "-t", "a", "#{pane_dead}"])
            .trim(),
        "0"
    );
    let (second, mut second_child) = attach(50, 10);
    let shown = server.wait_for("a", "compact after re-attach", |lines| {
        lines.first().is_some_and(|l| l.starts_with("2 Sockets")) && lines.len() == 10
    });
    assert!(shown.iter().all(|l| l.chars().count() <= 50), "{shown:?}");
    server.run(&["detach-client", "-s", "a"]);
    let _ = second_child.wait();
    drop(second);
    server.run(&["send-keys", "-t", "a", "q"]);
}

/// Run inside tmux ($TMUX set, as in any pane), `netlens tmux` opens a new
/// window in the current session instead of a new session.
#[test]
fn inside_tmux_it_opens_a_window() {
    let Some(server) = Server::new("inside") else {
        return;
    };
    let command = format!("{NETLENS} tmux --detached --session trouble; sleep 30");
    server.session("host", 100, 30, &command);
    let deadline = Instant::now() + Duration::from_secs(15);
    let windows = loop {
        let windows = server.run(&["list-windows", "-t", "host", "-F", "#{window_name}"]);
        if windows.lines().any(|w| w == "trouble") || Instant::now() > deadline {
            break windows;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(windows.lines().any(|w| w == "trouble"), "{windows}");
    // The window exists before netlens has split it into its panes.
    let commands = loop {
        let commands = pane_commands(&server, "host:trouble");
        if commands.len() >= 4 || Instant::now() > deadline {
            break commands;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let sessions = server.run(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(sessions.trim(), "host", "no new session: {sessions}");
    assert_layout(&commands);
}

/// Ctrl-U and Ctrl-W, typed into a real terminal, edit the prompt: the load
/// target is cleared and retyped (nothing is run), and Ctrl-S is not `s`.
#[test]
fn ctrl_keys_edit_a_prompt_in_a_real_terminal() {
    let Some(server) = Server::new("ctrl") else {
        return;
    };
    let command = netlens_in("tmux-256color", "--tab load --no-capture");
    server.session("ctrl", 80, 24, &command);
    server.wait_for("ctrl", "the Load form", |lines| {
        lines.iter().any(|l| l.contains("127.0.0.1:5201"))
    });
    server.run(&["send-keys", "-t", "ctrl", "Down", "Enter", "C-u"]);
    server.run(&["send-keys", "-t", "ctrl", "-l", "127.0.0.1:1 extra"]);
    server.run(&["send-keys", "-t", "ctrl", "C-w", "C-s", "Enter"]);
    // Wait for the edit to end (Enter kept it), not for the typing: the
    // screen may show "127.0.0.1:1 extra" before Ctrl-W reaches netlens.
    let shown = server.wait_for("ctrl", "the new target, kept", |lines| {
        lines.iter().any(|l| l.contains("target   127.0.0.1:1 "))
            && !lines.iter().any(|l| l.contains("Enter keep"))
    });
    let text = shown.join("\n");
    assert!(!text.contains("5201"), "{text}");
    assert!(!text.contains("extra"), "{text}");
    assert!(!text.contains("127.0.0.1:1s"), "{text}");
    server.run(&["send-keys", "-t", "ctrl", "q"]);
}

/// `netlens tmux --dns-probe NAME --dns-server ADDR`: the DNS pane gets the
/// probe and the server (only it: the other panes would send the same
/// queries) and shows the probe's results from a real DNS server on
/// loopback; a DNS pane with neither capture nor probe says why it is empty,
/// even 40 columns wide.
#[test]
fn the_dns_pane_gets_the_dns_options_and_says_why_it_is_empty() {
    let Some(server) = Server::new("dnspane") else {
        return;
    };
    let dns = common::dns_server::DnsServer::start();
    let address = dns.addr.to_string();
    let out = Command::new(NETLENS)
        .env("TMUX_TMPDIR", &server.tmpdir)
        .env_remove("TMUX")
        .args([
            "tmux",
            "--detached",
            "--session",
            "dnsp",
            "--tmux-socket",
            &server.socket,
            "--interval",
            "300ms",
            "--dns-probe",
            "A:fast.test",
            "--dns-server",
            &address,
        ])
        .output()
        .expect("run netlens tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let commands = pane_commands(&server, "dnsp");
    assert_layout(&commands);
    for (i, command) in commands.iter().enumerate() {
        assert_eq!(
            command.contains("--dns-probe A:fast.test"),
            i == 3,
            "{command}"
        );
        assert_eq!(
            command.contains(&format!("--dns-server {address}")),
            i == 3,
            "{command}"
        );
    }
    server.wait_for("dnsp.3", "the probed server's row", |lines| {
        lines.iter().any(|l| l.starts_with(&address))
    });
    assert!(
        dns.seen()
            .iter()
            .any(|(name, qtype)| name == "fast.test" && qtype == "A"),
        "{:?}",
        dns.seen()
    );

    let command = format!("{NETLENS} --compact --tab dns --no-capture --interval 200ms");
    server.session("empty", 40, 10, &command);
    server.wait_for("empty", "why the DNS pane is empty", |lines| {
        lines
            .iter()
            .any(|l| l.contains("capture off, no --dns-probe"))
    });
}
