//! Hostile values on every input surface of the real binary: each is a
//! short clear error and a non-zero exit, never a panic (101), an abort
//! (134), a stack overflow or a hang.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const PCAP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nagle-stall.pcap");

/// Runs netlens with `args`; kills it when it runs past `limit` (a hang is
/// a failure, reported as such).
fn netlens_within(args: &[&str], limit: Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", crate::common::scratch_dir("hostile"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run netlens");
    let pid = child.id() as libc::pid_t;
    // The pipes are drained while waiting (an error may echo 100 KB).
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output().expect("output")));
    match result.recv_timeout(limit) {
        Ok(output) => output,
        Err(_) => {
            // SAFETY: kills the child this test started, by its pid.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("netlens {:?} still ran after {limit:?}", shorten(args));
        }
    }
}

fn netlens(args: &[&str]) -> Output {
    netlens_within(args, Duration::from_secs(30))
}

/// No panic, no abort, no signal; a non-zero exit.
fn assert_clean_failure(args: &[&str], output: &Output) {
    let code = output.status.code();
    assert!(
        matches!(code, Some(1 | 2)),
        "netlens {:?}: exit {:?}, stderr: {}",
        shorten(args),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The error for a failed run: a clap error's first line, or netlens's one line.
fn error_line(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    if output.status.code() == Some(1) {
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    }
    stderr.lines().next().unwrap_or_default().to_string()
}

fn shorten(args: &[&str]) -> Vec<String> {
    args.iter()
        .map(|a| a.chars().take(60).collect::<String>())
        .collect()
}

#[test]
fn huge_durations_are_errors_not_panics() {
    let out = crate::common::scratch_dir("hostile").join("never-created.nlrec");
    let out = out.to_str().unwrap();
    for value in [
        "99999999999999999999s",
        "18446744073709551616s",
        "6000000000000000h",
        "5000000000000000h",
        "8761h",
    ] {
        for args in [
            vec!["--interval", value, "snapshot"],
            vec!["--dns-timeout", value, "snapshot"],
            vec!["record", "-o", out, "--duration", value],
            vec!["capture", "--duration", value],
            vec!["load", "tcp", "--to", "127.0.0.1:9", "-t", value],
            vec!["load", "probe", "127.0.0.1:9", "--every", value],
        ] {
            let output = netlens(&args);
            assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
            let line = error_line(&output);
            assert!(line.contains("too long"), "{args:?}: {line}");
        }
    }
    assert!(!Path::new(out).exists());
    // The limits themselves, as the man page states them.
    let line = error_line(&netlens(&["--interval", "61m", "snapshot"]));
    assert!(line.contains("at most 1h"), "{line}");
    let line = error_line(&netlens(&["--dns-timeout", "61s", "snapshot"]));
    assert!(line.contains("at most 1m"), "{line}");
}

#[test]
fn a_huge_interval_in_the_config_is_an_error() {
    let config = crate::common::scratch_dir("hostile").join("huge-interval.toml");
    std::fs::write(&config, "interval = \"99999999999999999999s\"\n").unwrap();
    let output = netlens(&["--config", config.to_str().unwrap(), "read", PCAP]);
    assert_clean_failure(&[], &output);
    let line = error_line(&output);
    assert!(
        line.contains("huge-interval.toml:1") && line.contains("too long"),
        "{line}"
    );
}

#[test]
fn deep_filters_fail_cleanly() {
    let parens = format!("{}tcp{}", "(".repeat(15_000), ")".repeat(15_000));
    let nots = "not ".repeat(20_000) + "tcp";
    let deep = format!("{}tcp{}", "(".repeat(200), ")".repeat(200));
    for filter in [&parens, &nots, &deep] {
        for args in [
            vec!["read", "-f", filter.as_str(), PCAP],
            vec!["read", "--flows", "-f", filter.as_str(), PCAP],
            vec!["capture", "-f", filter.as_str(), "-c", "1"],
        ] {
            let output = netlens(&args);
            assert_eq!(output.status.code(), Some(1), "{:?}", shorten(&args));
            let line = error_line(&output);
            assert!(
                line.contains("nested more than 100 levels")
                    || line.contains("over the limit of 4096"),
                "{line}"
            );
        }
    }
    // A filter at the depth limit still works.
    let ok = format!("{}tcp{}", "(".repeat(99), ")".repeat(99));
    let output = netlens(&["read", "-c", "1", "-f", &ok, PCAP]);
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn the_config_must_be_a_small_regular_file() {
    let dir = crate::common::scratch_dir("hostile");
    let fifo = dir.join("config.fifo");
    let _ = std::fs::remove_file(&fifo);
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let big = dir.join("big.toml");
    std::fs::write(&big, format!("# {}\n", "x".repeat(2 << 20))).unwrap();
    for (config, why) in [
        ("/dev/zero", "not a regular file"),
        ("/dev/urandom", "not a regular file"),
        (fifo.to_str().unwrap(), "not a regular file"),
        (dir.to_str().unwrap(), "not a regular file"),
        (big.to_str().unwrap(), "larger than the limit of 1 MiB"),
    ] {
        let output = netlens_within(&["--config", config, "read", PCAP], Duration::from_secs(10));
        assert_eq!(output.status.code(), Some(1), "{config}: {output:?}");
        let line = error_line(&output);
        assert!(
            line.contains("cannot read config") && line.contains(why),
            "{config}: {line}"
        );
    }
    // A symlink to a regular file is a fine config.
    let real = dir.join("real.toml");
    std::fs::write(&real, "interval = \"2s\"\n").unwrap();
    let link = dir.join("link.toml");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let output = netlens(&["--config", link.to_str().unwrap(), "read", "-c", "1", PCAP]);
    assert!(output.status.success(), "{output:?}");
}

/// Every flag whose value netlens parses, with values no parser accepts:
/// each stops at the command line with exit 2 (never 101 or 134). Only
/// flags that cannot start anything with such values are listed.
#[test]
fn hostile_values_on_every_parsed_flag() {
    let huge = "9".repeat(100 * 1024);
    let values = [
        "99999999999999999999999",
        "-1",
        "",
        "é🙂",
        "1e308",
        "NaN",
        "inf",
        huge.as_str(),
    ];
    let flags: &[&[&str]] = &[
        &["--interval"],
        &["--dns-timeout"],
        &["snapshot", "--count"],
        &["snapshot", "--section"],
        &["--tab"],
        &["--pid"],
        &["replay", "x.nlrec", "--speed"],
        &["read", "x.pcap", "-c"],
        &["capture", "-c"],
        &["capture", "--duration"],
        &["export", "--listen"],
        &["load", "serve", "-p"],
        &["load", "serve", "--delay"],
        &["load", "serve", "--body"],
        &["load", "tcp", "--to", "127.0.0.1:9", "-P"],
        &["load", "tcp", "--to", "127.0.0.1:9", "-b"],
        &["load", "udp", "--to", "127.0.0.1:9", "--size"],
        &["load", "http", "http://127.0.0.1:9/", "-c"],
        &["load", "http", "http://127.0.0.1:9/", "-R"],
        &["load", "http", "http://127.0.0.1:9/", "--timeout"],
        &["load", "probe", "127.0.0.1:9", "-c"],
        &[
            "load",
            "pktgen",
            "--dev",
            "x",
            "--dst",
            "198.18.0.2",
            "--dst-mac",
            "02:00:00:00:00:02",
            "--size",
        ],
        &[
            "load",
            "pktgen",
            "--dev",
            "x",
            "--dst",
            "198.18.0.2",
            "--dst-mac",
            "02:00:00:00:00:02",
            "--delay",
        ],
    ];
    for flag in flags {
        for value in values {
            let mut args: Vec<&str> = flag.to_vec();
            args.push(value);
            let output = netlens(&args);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{:?}: {}",
                shorten(&args),
                String::from_utf8_lossy(&output.stderr)
                    .chars()
                    .take(300)
                    .collect::<String>()
            );
        }
    }
}

/// Messages that say what is true about a file that is not what it should be.
#[test]
fn wrong_files_are_named_for_what_they_are() {
    let dir = crate::common::scratch_dir("hostile");
    let line = error_line(&netlens(&["read", dir.to_str().unwrap()]));
    assert!(line.contains("is a directory"), "{line}");
    let line = error_line(&netlens(&["replay", "--info", "/dev/urandom"]));
    assert!(line.contains("not a regular file"), "{line}");
    let recording = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v2.0-capture.nlrec");
    let prefix = dir.join("prefix.nlrec");
    std::fs::write(&prefix, &std::fs::read(recording).unwrap()[..12]).unwrap();
    let line = error_line(&netlens(&["replay", "--info", prefix.to_str().unwrap()]));
    assert!(line.contains("the file ends inside its header"), "{line}");
}
