//! README.md stays true to the program: its example config says which
//! values are not the defaults (and what the defaults are).

use crate::common;

use common::NETLENS;
use std::collections::HashMap;
use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md")
}

/// `key = value` of a TOML line, comment dropped.
fn setting(line: &str) -> Option<(String, String)> {
    let code = line.split('#').next()?.trim();
    let (key, value) = code.split_once('=')?;
    Some((
        key.trim().to_string(),
        value.trim().trim_matches('"').to_string(),
    ))
}

/// Every top-level setting of the README's example config that differs
/// from the default (`--print-config`) says so, naming the default.
#[test]
fn readme_example_config_names_the_defaults_it_changes() {
    let out = Command::new(NETLENS)
        .arg("--print-config")
        .output()
        .expect("run netlens --print-config");
    let printed = String::from_utf8_lossy(&out.stdout);
    let defaults: HashMap<String, String> = printed
        .lines()
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.starts_with('#'))
        .filter_map(setting)
        .collect();
    assert!(defaults.contains_key("interval"), "{printed}");
    let text = readme();
    let block = text
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```toml block in README.md");
    let mut checked = 0;
    for line in block.lines().take_while(|l| !l.starts_with('[')) {
        let Some((key, value)) = setting(line) else {
            continue;
        };
        let default = &defaults[&key];
        if &value != default {
            checked += 1;
            assert!(
                line.contains(&format!("default: {default}"))
                    || line.contains(&format!("default: \"{default}\"")),
                "README's example sets {key} = {value} without saying the default is {default}: {line}"
            );
        }
    }
    assert!(checked > 0, "the example changes nothing:\n{block}");
}

const BEGIN: &str = "<!-- screens:begin -->";
const END: &str = "<!-- screens:end -->";
/// The tabs in key order, with what each capture waits for.
const TABS: [(char, &str); 10] = [
    ('1', "1 Ifaces"),
    ('2', "2 Sockets"),
    ('3', "3 TCP"),
    ('4', "4 Conntrack"),
    ('5', "5 DNS"),
    ('6', "6 Flows"),
    ('7', "7 Load"),
    ('8', "8 Drops"),
    ('9', "9 Procs"),
    ('0', "0 NS"),
];

/// The 80x24 screens of every tab, as text, replaying
/// assets/demo-conntrack-full.nlrec to its end in tmux (TZ=UTC, NO_COLOR,
/// no config), so README.md's block between `<!-- screens:begin -->` and
/// `<!-- screens:end -->` is what the program draws.
///
/// After a change to any screen, update the block with:
///
/// ```sh
/// NETLENS_UPDATE_README=1 cargo test --release --test docs readme
/// ```
#[test]
fn readme_shows_each_tab_at_80x24_as_the_program_draws_it() {
    let Some(tmux) = common::tmux::Tmux::new("uitext-readme") else {
        return;
    };
    let asset = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/demo-conntrack-full.nlrec"
    );
    // The recording is 9 s long: from 8 s at 4x it reaches its end and stays.
    let command = format!(
        "env TZ=UTC NO_COLOR=1 TERM=tmux-256color {NETLENS} replay --config /dev/null \
         --at 8s --speed 4 {asset}"
    );
    tmux.session("readme", 80, 24, &command);
    let mut screens = String::new();
    for (key, title) in TABS {
        tmux.keys("readme", &[&key.to_string()]);
        let settled = |lines: &[String]| lines.iter().any(|l| l.contains(title));
        tmux.wait_for("readme", title, settled);
        // The same text twice in a row, 300 ms apart: nothing is moving.
        let mut last = Vec::new();
        loop {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let now = tmux.capture("readme");
            if now == last && settled(&now) {
                break;
            }
            last = now;
        }
        screens.push_str(&format!("{title}:\n\n```text\n"));
        for line in &last {
            screens.push_str(line.trim_end());
            screens.push('\n');
        }
        screens.push_str("```\n\n");
    }
    tmux.keys("readme", &["q"]);
    let text = readme();
    let (head, rest) = text
        .split_once(BEGIN)
        .unwrap_or_else(|| panic!("README.md has no {BEGIN}"));
    let (old, tail) = rest
        .split_once(END)
        .unwrap_or_else(|| panic!("README.md has no {END}"));
    let wanted = format!("\n{screens}");
    if std::env::var_os("NETLENS_UPDATE_README").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        std::fs::write(path, format!("{head}{BEGIN}{wanted}{END}{tail}")).unwrap();
        return;
    }
    assert!(
        old == wanted,
        "README.md's screens differ from what netlens draws; update them with\n  \
         NETLENS_UPDATE_README=1 cargo test --release --test docs readme\nnow:\n{wanted}"
    );
}

const FINDINGS_BEGIN: &str = "<!-- findings:begin -->";
const FINDINGS_END: &str = "<!-- findings:end -->";

/// README.md's "What netlens names" table is the names table the man page's
/// FINDINGS renders (src/findings/names.rs), as `netlens::manual`
/// renders it: every finding id, what it means, its evidence and its fix.
/// Update it with `NETLENS_UPDATE_README=1 cargo test --release --test docs readme`.
#[test]
fn readme_names_every_finding_from_the_names_table() {
    let text = readme();
    let (head, rest) = text
        .split_once(FINDINGS_BEGIN)
        .unwrap_or_else(|| panic!("README.md has no {FINDINGS_BEGIN}"));
    let (old, tail) = rest
        .split_once(FINDINGS_END)
        .unwrap_or_else(|| panic!("README.md has no {FINDINGS_END}"));
    let wanted = format!("\n{}", netlens::manual::findings_table());
    if std::env::var_os("NETLENS_UPDATE_README").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        std::fs::write(
            path,
            format!("{head}{FINDINGS_BEGIN}{wanted}{FINDINGS_END}{tail}"),
        )
        .unwrap();
        return;
    }
    assert!(
        old == wanted,
        "README.md's findings table differs from src/findings/names.rs; update it with\n  \
         NETLENS_UPDATE_README=1 cargo test --release --test docs readme\nnow:\n{wanted}"
    );
    // Each id the program raises has its row, and the man page says the same.
    for id in netlens::findings::IDS {
        assert!(old.contains(&format!("| `{id}` |")), "README lacks {id}");
        assert!(
            netlens::manual::MAN_PAGE.contains(&format!("\\fB{}\\fR", id.replace('-', "\\-"))),
            "man page lacks {id}"
        );
    }
}

/// .ci/run runs the README's test command (its first code block's second
/// line), so what CI passes is what a reader runs.
#[test]
fn ci_runs_the_readme_test_command() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md's first code block");
    let commands: Vec<&str> = block.lines().collect();
    assert_eq!(commands.len(), 2, "two commands: {block}");
    assert!(commands[1].starts_with("cargo test"), "{block}");
    let ci = std::fs::read_to_string(format!("{root}/.ci/run")).unwrap();
    assert!(
        ci.lines().any(|line| line == commands[1]),
        ".ci/run does not run the README's `{}`",
        commands[1]
    );
}
