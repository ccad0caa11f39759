//! README.md stays true to the program: its example config says which
//! values are not the defaults (and what the defaults are).

mod common;

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
