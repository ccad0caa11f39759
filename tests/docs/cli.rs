//! The command line as users and scripts see it: help text, man page,
//! completions and errors, from the real binary.

use std::process::{Command, Output};

fn netlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run netlens")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8 output")
}

#[test]
fn help_text() {
    let output = netlens(&["--help"]);
    assert!(output.status.success());
    insta::assert_snapshot!(stdout(&output));
}

#[test]
fn snapshot_help_text() {
    let output = netlens(&["snapshot", "--help"]);
    assert!(output.status.success());
    insta::assert_snapshot!(stdout(&output));
}

#[test]
fn export_help_text() {
    let output = netlens(&["export", "--help"]);
    assert!(output.status.success());
    insta::assert_snapshot!(stdout(&output));
}

#[test]
fn load_help_texts() {
    for kind in ["serve", "tcp", "udp", "http", "pktgen", "probe"] {
        let output = netlens(&["load", kind, "--help"]);
        assert!(output.status.success(), "{kind}");
        let text = stdout(&output);
        assert!(text.contains("--json"), "load {kind} has --json");
        assert!(
            !text.contains("proc-root"),
            "the test-only flag stays hidden"
        );
        insta::assert_snapshot!(format!("load_{kind}_help"), text);
    }
}

#[test]
fn committed_man_page_is_current() {
    let output = netlens(&["man"]);
    assert!(output.status.success());
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/netlens.1"))
        .expect("man/netlens.1 is committed");
    assert!(
        stdout(&output) == committed,
        "man/netlens.1 is stale: run `cargo run -- man > man/netlens.1`"
    );
}

#[test]
fn man_page_documents_keys_json_and_findings() {
    let page = stdout(&netlens(&["man"]));
    for needle in [
        ".SH KEYS",
        ".SH \"SNAPSHOT OPTIONS\"",
        "rx_packets_per_s",
        "util_percent",
        "NO_COLOR",
        ".SH LOAD JSON KEYS",
        ".SH \"LOAD HTTP OPTIONS\"",
        "requests_per_s",
        "CONFIG_NET_PKTGEN",
    ] {
        assert!(page.contains(needle), "man page lacks {needle}");
    }
    for id in netlens::findings::IDS {
        assert!(
            page.contains(&id.replace('-', "\\-")),
            "man page lacks finding {id}"
        );
    }
    for binding in netlens::app::keymap::BINDINGS {
        let help = binding.help.replace('-', "\\-");
        assert!(
            page.contains(&help),
            "man page lacks key help '{}'",
            binding.help
        );
    }
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = netlens(&["completions", shell]);
        assert!(output.status.success(), "{shell}");
        assert!(
            stdout(&output).contains("snapshot"),
            "{shell} completions lack subcommands"
        );
    }
    let bash = stdout(&netlens(&["completions", "bash"]));
    assert!(bash.contains("--netns") && bash.contains("--json"));
}

#[test]
fn usage_errors_exit_2_with_one_message() {
    for args in [
        &["--interval", "fast"][..],
        &["--interval", "0s"],
        &["--interval", "5ms"],
        &["--tab", "nope"],
        &["snapshot", "--count", "0"],
        &["snapshot", "--section", "bogus"],
        &["--netns", "a", "--pid", "1"],
    ] {
        let output = netlens(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let err = stderr(&output);
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn unknown_namespace_is_one_clear_line() {
    let output = netlens(&["snapshot", "--netns", "netlens-no-such-ns"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("'netlens-no-such-ns' not found"), "{err}");
    let output = netlens(&["snapshot", "--pid", "999999999"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("pid 999999999"));
}

/// Commands that work inside one namespace refuse --all-netns in one line
/// rather than quietly watching only netlens' own namespace.
#[test]
fn one_namespace_commands_refuse_all_netns() {
    for args in [
        &["conns", "--all-netns"][..],
        &["capture", "--all-netns", "--count", "1"],
        &[
            "load",
            "--all-netns",
            "probe",
            "127.0.0.1:9",
            "--count",
            "1",
        ],
    ] {
        let output = netlens(args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let err = stderr(&output);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(&format!("netlens {}", args[0])) && err.contains("--netns NAME"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn live_view_without_a_terminal_points_to_snapshot() {
    let output = netlens(&[]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains("not a terminal") && err.contains("netlens snapshot"),
        "{err}"
    );
}

#[test]
fn snapshot_json_lines_have_the_stable_keys() {
    let output = netlens(&["snapshot", "--json", "--count", "2", "--interval", "200ms"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    for line in lines {
        let sample: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
        assert!(sample["t"].as_f64().unwrap() > 1.0e9);
        let interval = sample["interval"].as_f64().unwrap();
        assert!(interval > 0.1 && interval < 5.0, "{interval}");
        let interfaces = sample["interfaces"].as_array().unwrap();
        let lo = interfaces
            .iter()
            .find(|i| i["name"] == "lo")
            .expect("lo is listed");
        for key in [
            "name",
            "up",
            "lower_up",
            "mtu",
            "speed_mbps",
            "rx_packets_per_s",
            "tx_packets_per_s",
            "rx_bytes_per_s",
            "tx_bytes_per_s",
            "util_percent",
            "rx_errors_per_s",
            "tx_errors_per_s",
            "rx_dropped_per_s",
            "tx_dropped_per_s",
            "rx_overruns_per_s",
            "tx_carrier_per_s",
            "collisions_per_s",
            "rx_bytes",
            "tx_bytes",
            "rx_packets",
            "tx_packets",
        ] {
            assert!(lo.get(key).is_some(), "interfaces[] lacks {key}");
        }
        // Loopback has no ethtool speed: unknown, never 0.
        assert!(lo["speed_mbps"].is_null() && lo["util_percent"].is_null());
        // A rate, unless the sample says its link read was late (a loaded
        // host at 200 ms): then it has no rate rather than a wrong one.
        let links_late = sample["late"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|l| l["part"] == "interfaces");
        assert!(lo["rx_packets_per_s"].is_number() || links_late, "{sample}");
        assert!(sample["findings"].is_array());
    }
}

#[test]
fn snapshot_section_limits_output_and_text_is_sar_like() {
    let output = netlens(&[
        "snapshot",
        "--json",
        "--section",
        "findings",
        "--interval",
        "100ms",
    ]);
    let sample: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert!(sample.get("interfaces").is_none() && sample.get("findings").is_some());

    let output = netlens(&["snapshot", "--interval", "100ms"]);
    assert!(output.status.success());
    let text = stdout(&output);
    let header = text.lines().next().unwrap();
    for column in [
        "IFACE", "rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "%ifutil", "rxerr/s", "txdrop/s",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let lo = text
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("lo"))
        .expect("lo row");
    // %ifutil of lo is unknown: "-", never 0.00.
    assert_eq!(lo.split_whitespace().nth(6), Some("-"), "{lo}");
}

#[test]
fn snapshot_into_closed_pipe_ends_quietly() {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["snapshot", "--json", "--count", "3", "--interval", "100ms"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
