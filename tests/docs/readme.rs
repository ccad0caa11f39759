//! README.md and docs/ stay true to the program: the screens are what it
//! draws, the findings table is its names table, the example config names
//! the defaults it changes, every `netlens ...` line in a shell block
//! parses, every page linked exists, and README.md stays short.
//!
//! Generated blocks are rewritten with
//! `NETLENS_UPDATE_DOCS=1 cargo test --profile fast-build --test suite docs::readme`
//! (NETLENS_UPDATE_README=1 does the same).

use crate::common;

use clap::{CommandFactory, FromArgMatches};
use common::NETLENS;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(page: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// Whether this run rewrites the generated blocks instead of checking them.
fn updating() -> bool {
    std::env::var_os("NETLENS_UPDATE_DOCS").is_some()
        || std::env::var_os("NETLENS_UPDATE_README").is_some()
}

/// Checks (or, when updating, rewrites) the text between `begin` and `end`
/// in `page` against `wanted`.
fn generated(page: &str, begin: &str, end: &str, wanted: &str, what: &str) {
    let text = read(page);
    let (head, rest) = text
        .split_once(begin)
        .unwrap_or_else(|| panic!("{page} has no {begin}"));
    let (old, tail) = rest
        .split_once(end)
        .unwrap_or_else(|| panic!("{page} has no {end}"));
    if updating() {
        let path = Path::new(ROOT).join(page);
        std::fs::write(path, format!("{head}{begin}{wanted}{end}{tail}")).unwrap();
        return;
    }
    assert!(
        old == wanted,
        "{page}'s {what} differ from the program; update them with\n  \
         NETLENS_UPDATE_DOCS=1 cargo test --profile fast-build --test suite docs::readme\nnow:\n{wanted}"
    );
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

/// Every top-level setting of docs/configuration.md's example config that
/// differs from the default (`--print-config`) says so, naming the default.
#[test]
fn example_config_names_the_defaults_it_changes() {
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
    let text = read("docs/configuration.md");
    let block = text
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```toml block in docs/configuration.md");
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
                "the example sets {key} = {value} without saying the default is {default}: {line}"
            );
        }
    }
    assert!(checked > 0, "the example changes nothing:\n{block}");
}

const SCREENS_BEGIN: &str = "<!-- screens:begin -->";
const SCREENS_END: &str = "<!-- screens:end -->";
const SCREEN_BEGIN: &str = "<!-- screen:begin -->";
const SCREEN_END: &str = "<!-- screen:end -->";
/// The tabs in key order.
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
/// The tab README.md shows.
const README_TAB: char = '4';

/// The replay timeline's sample position, `#5/19`: (5, 19).
fn position(lines: &[String]) -> Option<(u32, u32)> {
    let line = lines.iter().rev().find(|l| l.contains('#'))?;
    let (at, of) = line.rsplit('#').next()?.split_once('/')?;
    Some((at.trim().parse().ok()?, of.trim().parse().ok()?))
}

/// The 80x24 screens of every tab, as text, replaying
/// assets/demo-conntrack-full.nlrec (TZ=UTC, NO_COLOR, no config) until it
/// stops at its end, then back to where the last finding starts (`{`): the
/// conntrack table full. docs/screens.md holds every tab between its screens
/// markers, README.md the Conntrack tab between its screen markers.
#[test]
fn screens_show_each_tab_at_80x24_as_the_program_draws_it() {
    let Some(tmux) = common::tmux::Tmux::new("uitext-readme") else {
        return;
    };
    let asset = format!("{ROOT}/assets/demo-conntrack-full.nlrec");
    // The recording is 9 s long: from 8 s at 4x it reaches its end and
    // pauses there.
    let command = format!(
        "env TZ=UTC NO_COLOR=1 TERM=tmux-256color {NETLENS} replay --config /dev/null \
         --at 8s --speed 4 {asset}"
    );
    tmux.session("readme", 80, 24, &command);
    // The same text twice in a row, 300 ms apart: nothing is moving.
    let settle = || {
        let mut last = Vec::new();
        loop {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let now = tmux.capture("readme");
            if now == last {
                return now;
            }
            last = now;
        }
    };
    let (end, _) = position(&settle()).expect("the replay's timeline");
    tmux.keys("readme", &["{"]);
    tmux.wait_for("readme", "the last finding's start", |lines| {
        position(lines).is_some_and(|(at, _)| at < end)
    });
    let mut screens = String::from("\n");
    let mut readme_screen = String::new();
    for (key, title) in TABS {
        tmux.keys("readme", &[&key.to_string()]);
        let last = settle();
        let mut block = String::from("```text\n");
        for line in &last {
            block.push_str(line.trim_end());
            block.push('\n');
        }
        block.push_str("```\n");
        screens.push_str(&format!("{title}:\n\n{block}\n"));
        if key == README_TAB {
            readme_screen = format!("\n{block}");
        }
    }
    tmux.keys("readme", &["q"]);
    generated(
        "docs/screens.md",
        SCREENS_BEGIN,
        SCREENS_END,
        &screens,
        "screens",
    );
    generated(
        "README.md",
        SCREEN_BEGIN,
        SCREEN_END,
        &readme_screen,
        "screen",
    );
}

const FINDINGS_BEGIN: &str = "<!-- findings:begin -->";
const FINDINGS_END: &str = "<!-- findings:end -->";

/// docs/findings.md's table is the names table the man page's FINDINGS
/// renders (src/findings/names.rs), as `netlens::manual` renders it:
/// every finding id, what it means, its evidence and its fix.
#[test]
fn findings_page_names_every_finding_from_the_names_table() {
    let wanted = format!("\n{}", netlens::manual::findings_table());
    generated(
        "docs/findings.md",
        FINDINGS_BEGIN,
        FINDINGS_END,
        &wanted,
        "findings table",
    );
    let text = read("docs/findings.md");
    // Each id the program raises has its row, and the man page says the same.
    for id in netlens::findings::IDS {
        assert!(
            text.contains(&format!("| `{id}` |")),
            "docs/findings.md lacks {id}"
        );
        assert!(
            netlens::manual::MAN_PAGE.contains(&format!("\\fB{}\\fR", id.replace('-', "\\-"))),
            "man page lacks {id}"
        );
    }
}

/// README.md is the user's first page: short enough to read on call.
#[test]
fn readme_stays_under_20_kb() {
    let size = read("README.md").len();
    assert!(
        size < 20_000,
        "README.md is {size} bytes: move detail to docs/"
    );
}

/// The pages the checks below read: README.md, ARCHITECTURE.md,
/// CONTRIBUTING.md and every docs/*.md.
fn pages() -> Vec<String> {
    let mut pages: Vec<String> = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
        .map(String::from)
        .into();
    let mut docs: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// GitHub's anchor for a heading: lower case, spaces to '-', punctuation
/// but '-' and '_' dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// The targets of a page's markdown links `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            found.push(rest[..end].to_string());
        }
    }
    found
}

/// Every link of README.md, ARCHITECTURE.md, CONTRIBUTING.md and docs/
/// to a file of the repository names one that exists, and its #anchor a
/// heading of that page; README links at least the docs pages it names.
#[test]
fn every_linked_page_and_heading_exists() {
    let mut checked = 0;
    for page in pages() {
        let dir = Path::new(&page).parent().unwrap_or(Path::new(""));
        let text = read(&page);
        for target in links(&text) {
            if target.contains("://") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let path: PathBuf = if file.is_empty() {
                PathBuf::from(&page)
            } else {
                dir.join(file)
            };
            let full = Path::new(ROOT).join(&path);
            assert!(
                full.exists(),
                "{page} links {target}: {} does not exist",
                path.display()
            );
            if !fragment.is_empty() {
                let there = std::fs::read_to_string(&full).unwrap();
                assert!(
                    anchors(&there).iter().any(|a| a == fragment),
                    "{page} links {target}: {} has no heading #{fragment}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    let readme = links(&read("README.md"));
    for page in ["docs/tabs.md", "docs/privileges.md", "docs/screens.md"] {
        assert!(
            readme.iter().any(|l| l == page),
            "README.md does not link {page}"
        );
    }
    assert!(checked > 20, "only {checked} links found");
}

/// The commands of a shell line, split on `|`, `;`, `&&` and `||`, each as
/// its words: quotes removed, `$(...)` as "1", redirections and comments
/// dropped.
fn shell_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut skip_next = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut Option<String>, commands: &mut Vec<Vec<String>>, skip: &mut bool| {
        if let Some(w) = word.take() {
            if std::mem::take(skip) {
                return;
            }
            commands.last_mut().unwrap().push(w);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '$' if chars.peek() == Some(&'(') => {
                            skip_substitution(&mut chars);
                            w.push('1');
                        }
                        c => w.push(c),
                    }
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                skip_substitution(&mut chars);
                word.get_or_insert_with(String::new).push('1');
            }
            '#' if word.is_none() => break,
            ' ' | '\t' => end_word(&mut word, &mut commands, &mut skip_next),
            '|' | ';' | '&' => {
                end_word(&mut word, &mut commands, &mut skip_next);
                if !commands.last().unwrap().is_empty() {
                    commands.push(Vec::new());
                }
            }
            '>' | '<' => {
                // `2>` is a redirection of stderr, not a word.
                if word
                    .as_deref()
                    .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
                {
                    word = None;
                }
                end_word(&mut word, &mut commands, &mut skip_next);
                while chars.peek() == Some(&'>') || chars.peek() == Some(&'&') {
                    chars.next();
                }
                skip_next = true;
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    end_word(&mut word, &mut commands, &mut skip_next);
    commands.retain(|c| !c.is_empty());
    commands
}

/// Skips a `(...)` after `$`, nested parentheses and quotes included.
fn skip_substitution(chars: &mut std::iter::Peekable<std::str::Chars>) {
    let mut depth = 0;
    let mut quote = None;
    for c in chars.by_ref() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
            _ => {}
        }
    }
}

/// The lines of the page's ```sh and ```bash blocks, continuations joined,
/// with their line numbers.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut shell = None;
    let mut pending: Option<(usize, String)> = None;
    for (number, line) in text.lines().enumerate() {
        if let Some(lang) = line.strip_prefix("```") {
            shell = match shell {
                Some(_) => None,
                None => Some(matches!(lang.trim(), "sh" | "bash" | "shell")),
            };
            continue;
        }
        if shell != Some(true) {
            continue;
        }
        let (at, mut joined) = pending.take().unwrap_or((number + 1, String::new()));
        match line.strip_suffix('\\') {
            Some(part) => {
                joined.push_str(part);
                pending = Some((at, joined));
            }
            None => {
                joined.push_str(line);
                lines.push((at, joined));
            }
        }
    }
    lines
}

#[test]
fn shell_lines_split_as_the_shell_would() {
    let words = |line| shell_commands(line);
    assert_eq!(
        words("sudo netlens --pid \"$(docker inspect -f '{{.State.Pid}}' web)\"  # a container"),
        [["sudo", "netlens", "--pid", "1"]]
    );
    assert_eq!(
        words("netlens snapshot --json | jq '.a | .b' > out 2>/dev/null && echo ok"),
        vec![
            vec!["netlens", "snapshot", "--json"],
            vec!["jq", ".a | .b"],
            vec!["echo", "ok"]
        ]
    );
    let lines = shell_lines("```sh\nA=1 \\\n  netlens export\n```\n```text\nnetlens --bad\n```\n");
    assert_eq!(lines, [(2, "A=1   netlens export".to_string())]);
}

/// Every `netlens ...` command in a shell block of README.md,
/// ARCHITECTURE.md, CONTRIBUTING.md and docs/*.md parses as the binary
/// parses its command line (clap, then `--where` with the filter parser),
/// so an example cannot name a flag or subcommand that is gone.
#[test]
fn every_documented_command_line_parses() {
    let mut parsed = 0;
    let mut failures = Vec::new();
    for page in pages() {
        for (number, line) in shell_lines(&read(&page)) {
            for words in shell_commands(&line) {
                let Some(at) = words.iter().position(|w| w == "netlens") else {
                    continue;
                };
                let args = &words[at..];
                let result = netlens::cli::Cli::command()
                    .try_get_matches_from(args)
                    .and_then(|m| netlens::cli::Cli::from_arg_matches(&m));
                parsed += 1;
                match result {
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            clap::error::ErrorKind::DisplayHelp
                                | clap::error::ErrorKind::DisplayVersion
                        ) => {}
                    Err(e) => {
                        failures.push(format!("{page}:{number}: {}\n  {e}", args.join(" ")));
                        continue;
                    }
                }
                if let Some(expr) = args
                    .iter()
                    .position(|w| w == "--where")
                    .and_then(|i| args.get(i + 1))
                    && let Err(e) = netlens::model::filter::Expr::parse(expr)
                {
                    failures.push(format!("{page}:{number}: --where {expr}: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(parsed > 50, "only {parsed} netlens command lines found");
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
