//! The flight recorder's options, refused: bad durations, sizes and
//! --freeze-on words, a ring or bundle directory that is a symbolic link or
//! cannot be one. Each is a clear error naming what is wrong, a non-zero
//! exit, no panic, and nothing written through a link. No traffic.

use crate::common;

use common::NETLENS;
use std::process::Command;

/// Runs netlens with `args`; it must fail with `expected` in its stderr.
fn refused(args: &[&str], expected: &str) {
    let out = Command::new(NETLENS).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    // The cause comes first (clap adds its usage hint below).
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") || first.starts_with("netlens: "),
        "{stderr}"
    );
}

#[test]
fn bad_values_are_one_clear_error() {
    let dir = crate::common::scratch_dir_for("flightin", "values");
    let ring = dir.join("ring").display().to_string();
    let with = |more: &[&str]| -> Vec<String> {
        let mut args = vec!["record", "--ring-dir", &ring];
        args.extend_from_slice(more);
        args.iter().map(|s| s.to_string()).collect()
    };
    let cases: &[(&[&str], &str)] = &[
        (&["--ring", "soon"], "'soon' is not a duration"),
        (&["--ring", "0s"], "must be greater than zero"),
        (
            &["--ring", "5m", "--max-size", "lots"],
            "'lots' is not a size",
        ),
        (&["--ring", "5m", "--max-size", "10x"], "unknown unit 'x'"),
        (
            &["--ring", "5m", "--max-size", "1k"],
            "too small (at least 64k)",
        ),
        (&["--ring", "5m", "--max-size", "2T"], "too large"),
        (
            &["--ring", "5m", "--freeze-on", "warn,nosuch"],
            "'nosuch' is neither warn, crit nor a finding id",
        ),
        (
            &[
                "--ring",
                "5m",
                "--freeze-on",
                "crit",
                "--freeze-after",
                "soon",
            ],
            "'soon' is not a duration",
        ),
        (
            &[
                "--ring",
                "5m",
                "--freeze-on",
                "crit",
                "--max-bundles-per-hour",
                "0",
            ],
            "1..=3600",
        ),
    ];
    for (more, expected) in cases {
        let args = with(more);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, expected);
    }
    // --ring without a directory, -o with --ring.
    refused(&["record", "--ring", "5m"], "--ring-dir");
    refused(
        &[
            "record",
            "--ring",
            "5m",
            "--ring-dir",
            &ring,
            "-o",
            "x.nlrec",
        ],
        "cannot be used with",
    );
    refused(&["export", "--freeze-on", "crit"], "--ring");
    assert!(!dir.join("ring").exists(), "a refused run made the ring");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn linked_or_impossible_directories_are_refused() {
    let dir = crate::common::scratch_dir_for("flightin", "dirs");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let file = dir.join("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let ring = dir.join("ring").display().to_string();
    let (link, file) = (link.display().to_string(), file.display().to_string());
    let under_file = format!("{file}/ring");
    for command in ["record", "export"] {
        let base = [command, "--no-bpf", "--ring", "5m"];
        let run = |more: &[&str], expected: &str| {
            let mut args = base.to_vec();
            args.extend_from_slice(more);
            refused(&args, expected);
        };
        run(&["--ring-dir", &link], "is a symbolic link");
        run(&["--ring-dir", &file], "not a directory");
        run(&["--ring-dir", &under_file], "Not a directory");
        run(
            &[
                "--ring-dir",
                &ring,
                "--freeze-on",
                "crit",
                "--bundle-dir",
                &link,
            ],
            "is a symbolic link",
        );
        run(
            &[
                "--ring-dir",
                &ring,
                "--freeze-on",
                "crit",
                "--bundle-dir",
                &under_file,
            ],
            "Not a directory",
        );
    }
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_of_a_directory_that_is_not_a_bundle_says_so() {
    let dir = crate::common::scratch_dir_for("flightin", "replay");
    refused(
        &["replay", "--json", &dir.display().to_string()],
        "nor an incident bundle (no recording.nlrec in it)",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
