//! The config file through the real binary: errors name file and line and
//! exit non-zero, --print-config parses back, flags override it, and a
//! threshold in it decides whether a real finding fires.

use crate::common;

use common::{NETLENS, Netns, enter_netns, snapshot};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::process::{Command, Stdio};

fn write_config(name: &str, text: &str) -> std::path::PathBuf {
    let dir = crate::common::scratch_dir("tmux-cfg");
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs netlens with `args`; (exit code, stdout, stderr).
fn netlens(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(NETLENS);
    command.args(args).stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().expect("spawn netlens");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn errors_name_file_and_line_and_exit_1() {
    let cases: [(&str, &str, usize, &str); 6] = [
        (
            "unknown.toml",
            "tab = \"tcp\"\n\ncolour = true\n",
            3,
            "unknown field `colour`",
        ),
        (
            "threshold.toml",
            "# mine\n[thresholds]\nsyn_flood_syn_recv = -4\n",
            3,
            "invalid value: integer `-4`, expected u32",
        ),
        ("tab.toml", "tab = \"nope\"\n", 1, "unknown tab 'nope'"),
        ("syntax.toml", "mouse = \n", 1, ""),
        (
            "order.toml",
            "[thresholds]\n\nflood_warn_pps = 5000.0\nflood_crit_pps = 10.0\n",
            3,
            "flood_warn_pps (5000) is above flood_crit_pps (10)",
        ),
        (
            "column.toml",
            "[columns]\ninterfaces = [\"IFACE\",\n  \"bogus\"]\n",
            2,
            "unknown interfaces column 'bogus'",
        ),
    ];
    for (name, text, line, words) in cases {
        let path = write_config(name, text);
        let path_text = path.display().to_string();
        let (code, stdout, stderr) =
            netlens(&["--config", &path_text, "snapshot", "--no-capture"], &[]);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(stdout.is_empty(), "{name}: {stdout}");
        let first = stderr.lines().next().unwrap_or_default();
        assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
        assert!(
            first.starts_with(&format!("netlens: {path_text}:{line}: ")),
            "{name}: {first}"
        );
        assert!(first.contains(words), "{name}: {first}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

#[test]
fn print_config_parses_back_and_a_missing_file_is_an_error() {
    let (code, printed, _) = netlens(&["--print-config"], &[]);
    assert_eq!(code, 0);
    for key in [
        "tab =",
        "[thresholds]",
        "dns_slow_p90_ms = 100.0",
        "[dns]",
        "mouse = false",
    ] {
        assert!(printed.contains(key), "{key}: {printed}");
    }
    let path = write_config("printed.toml", &printed);
    let samples = snapshot(&[
        "--config",
        &path.display().to_string(),
        "--no-capture",
        "--interval",
        "200ms",
        "--section",
        "interfaces",
    ]);
    assert_eq!(samples.len(), 1);
    let (code, _, stderr) = netlens(&["--config", "/nonexistent/netlens.toml", "snapshot"], &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("cannot read config /nonexistent/netlens.toml"),
        "{stderr}"
    );
}

#[test]
fn xdg_config_home_is_read_and_flags_override_it() {
    let dir = std::env::temp_dir().join(format!("netlens-tmux-xdg-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("netlens")).unwrap();
    std::fs::write(dir.join("netlens/config.toml"), "interval = \"300ms\"\n").unwrap();
    let xdg = dir.display().to_string();
    // The interval a run was set to, as its recording's header keeps it:
    // a sample's measured interval stretches on a loaded host (1.3 s for
    // 300ms beside the suite's floods), the setting does not.
    let interval = |extra: &[&str]| {
        let file = dir.join(format!("run-{}.nlrec", extra.len()));
        let file = file.display().to_string();
        let mut args = vec!["record", "--no-capture", "--duration", "1s", "-o", &file];
        args.extend_from_slice(extra);
        let (code, _, stderr) = netlens(&args, &[("XDG_CONFIG_HOME", &xdg)]);
        assert_eq!(code, 0, "{stderr}");
        let (code, info, stderr) = netlens(&["replay", "--info", &file], &[]);
        assert_eq!(code, 0, "{stderr}");
        let set = info
            .split(", interval ")
            .nth(1)
            .and_then(|rest| rest.split_once('s'))
            .unwrap_or_else(|| panic!("no interval in replay --info:\n{info}"));
        set.0.parse::<f64>().unwrap()
    };
    // The config's 300ms, then the flag's 1500ms over it.
    assert_eq!(interval(&[]), 0.3);
    assert_eq!(interval(&["--interval", "1500ms"]), 1.5);
    // A broken file at the XDG path is an error too, with its path.
    std::fs::write(dir.join("netlens/config.toml"), "interval = 3\n").unwrap();
    let (code, _, stderr) = netlens(&["snapshot"], &[("XDG_CONFIG_HOME", &xdg)]);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with(&format!("netlens: {xdg}/netlens/config.toml:1: ")),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn finding_ids(sample: &serde_json::Value) -> Vec<String> {
    sample["findings"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|f| f["id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A connection whose server never reads has a Recv-Q that stays put. By
/// default socket-backlog needs 3 samples of it; with
/// `stuck_queue_samples = 1` in the config it fires on the first printed
/// sample (whose streak is 2: the baseline's and its own).
#[test]
fn a_config_threshold_decides_whether_socket_backlog_fires() {
    if crate::common::need_root(&["ip", "tmux"]) {
        return;
    }
    let ns = Netns::new("tmuxcfg");
    ns.ip(&["link", "set", "lo", "up"]);
    let path = ns.path();
    let held = std::thread::spawn(move || {
        enter_netns(&path).expect("enter netns");
        let at = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7100);
        let listener = TcpListener::bind(at).expect("bind");
        let mut client = TcpStream::connect(at).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        client.write_all(&[0x5a; 1000]).expect("write");
        (listener, client, server)
    })
    .join()
    .expect("socket thread");
    let ns_name = ns.name.clone();
    let run = |config: Option<&str>| {
        let mut args = vec![
            "--netns",
            &ns_name,
            "--no-capture",
            "--interval",
            "200ms",
            "--section",
            "findings,sockets",
        ];
        if let Some(config) = config {
            args.extend(["--config", config]);
        }
        snapshot(&args)
    };
    let default = run(None);
    let socket = default[0]["sockets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["recv_q"] == 1000)
        .cloned()
        .expect("the unread socket");
    assert_eq!(socket["queue_streak"], 2, "{socket}");
    assert!(
        !finding_ids(&default[0]).contains(&"socket-backlog".to_string()),
        "{:?}",
        default[0]["findings"]
    );
    let config = write_config("stuck.toml", "[thresholds]\nstuck_queue_samples = 1\n");
    let configured = run(Some(&config.display().to_string()));
    let found = &configured[0]["findings"];
    assert!(
        finding_ids(&configured[0]).contains(&"socket-backlog".to_string()),
        "{found}"
    );
    assert!(found.to_string().contains("Recv-Q 1000 B stuck"), "{found}");
    drop(held);
}

#[test]
fn config_dns_probes_reach_snapshot_with_the_command_line_ones() {
    // A closed UDP port on loopback: the probes fail fast (refused), which is
    // enough to see that each configured probe was sent to the configured server.
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("free port")
        .port();
    let path = write_config(
        "dns-probes",
        &format!("[dns]\nprobes = [\"fast.test\"]\nservers = [\"127.0.0.1:{port}\"]\n"),
    );
    let path = path.to_str().expect("utf-8 path");
    let (code, out, err) = netlens(
        &[
            "--config",
            path,
            "snapshot",
            "--json",
            "--count",
            "2",
            "--no-capture",
            "--dns-timeout",
            "300ms",
            "--section",
            "dns",
            "--dns-probe",
            "AAAA:other.test",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let mut seen = Vec::new();
    for line in out.lines() {
        let sample: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        for probe in sample["dns"]["probes"].as_array().into_iter().flatten() {
            assert_eq!(probe["server"], format!("127.0.0.1:{port}"), "{line}");
            seen.push(format!("{} {}", probe["qtype"], probe["name"]));
        }
    }
    assert!(
        seen.iter().any(|p| p == "\"A\" \"fast.test\""),
        "{seen:?}\n{out}"
    );
    assert!(
        seen.iter().any(|p| p == "\"AAAA\" \"other.test\""),
        "{seen:?}\n{out}"
    );
}

/// The config's column title lists (what `[columns]` accepts and
/// --print-config lists) are the tables' own titles, in table order.
#[test]
fn config_column_titles() {
    use netlens::config::{Tab, column_titles};
    fn titles<C, S, D>(specs: &[netlens::app::table::ColumnSpec<C, S, D>]) -> Vec<&'static str> {
        specs.iter().map(|c| c.title).collect()
    }
    assert_eq!(
        column_titles(Tab::Interfaces),
        titles(netlens::app::interfaces::COLUMNS)
    );
    assert_eq!(
        column_titles(Tab::Sockets),
        titles(netlens::app::sockets::COLUMNS)
    );
    assert_eq!(
        column_titles(Tab::Conntrack),
        titles(netlens::app::conntrack::COLUMNS)
    );
    assert_eq!(
        column_titles(Tab::Flows),
        netlens::ui::flows::column_titles()
    );
}
