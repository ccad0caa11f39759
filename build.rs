//! Renders the man page from the clap definitions and the keymap, so the page
//! cannot drift from the code. `netlens man` prints it; man/netlens.1 is the
//! committed copy.

#[path = "src/cli/mod.rs"]
#[allow(dead_code, unused_imports)]
mod cli;

#[path = "src/config/tab.rs"]
#[allow(dead_code)]
mod tab;
/// cli.rs names the tabs as `crate::config::{ALL, Tab}`.
mod config {
    pub use super::tab::{ALL, Tab};
}

#[path = "src/units.rs"]
#[allow(dead_code)]
mod units;

#[path = "src/app/keymap/mod.rs"]
#[allow(dead_code)]
mod keymap;

#[path = "src/manual/sections/mod.rs"]
mod sections;

#[path = "src/manual/connlog.rs"]
mod connlog;
#[path = "src/manual/netns.rs"]
mod netns;

#[path = "src/model/filter/fields.rs"]
mod filter_fields;

#[path = "src/findings/thresholds/table.rs"]
mod thresholds;

#[path = "src/findings/catalogue/mod.rs"]
#[allow(dead_code, unused_imports)]
mod catalogue;
#[path = "src/findings/names.rs"]
mod names;

use clap::CommandFactory;
use std::io::Write;

fn main() {
    println!("cargo:rerun-if-changed=src/cli");
    println!("cargo:rerun-if-changed=src/units.rs");
    println!("cargo:rerun-if-changed=src/config/tab.rs");
    println!("cargo:rerun-if-changed=src/app/keymap");
    println!("cargo:rerun-if-changed=src/manual/sections");
    println!("cargo:rerun-if-changed=src/manual/connlog.rs");
    println!("cargo:rerun-if-changed=src/model/filter/fields.rs");
    println!("cargo:rerun-if-changed=src/manual/netns.rs");
    println!("cargo:rerun-if-changed=src/findings/thresholds/table.rs");
    println!("cargo:rerun-if-changed=src/findings/catalogue");
    println!("cargo:rerun-if-changed=src/findings/names.rs");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let command = cli::Cli::command();
    let man = clap_mangen::Man::new(command);
    let mut page = Vec::new();
    man.render_title(&mut page).expect("render title");
    man.render_name_section(&mut page).expect("render name");
    man.render_synopsis_section(&mut page)
        .expect("render synopsis");
    man.render_description_section(&mut page)
        .expect("render description");
    man.render_options_section(&mut page)
        .expect("render options");
    write_subcommands(&cli::Cli::command(), &mut page);
    write_keys(&mut page);
    write_configuration(&mut page);
    page.extend_from_slice(with_findings(&sections::SECTIONS.concat()).as_bytes());
    page.extend_from_slice(filter_fields::man_section().as_bytes());
    page.extend_from_slice(connlog::CONNECTION_LOG.as_bytes());
    page.extend_from_slice(netns::ALL_NAMESPACES.as_bytes());
    page.extend_from_slice(catalogue::man_section().as_bytes());
    page.extend_from_slice(catalogue::reasons_man_section().as_bytes());
    page.extend_from_slice(catalogue::conns_man_section().as_bytes());
    man.render_version_section(&mut page)
        .expect("render version");
    std::fs::write(out.join("netlens.1"), page).expect("write the man page");
}

/// The subcommands, then each one's own options as "SNAPSHOT OPTIONS" and so
/// on (clap_mangen alone would point at netlens-snapshot(1) pages that do not
/// exist).
fn write_subcommands(command: &clap::Command, page: &mut Vec<u8>) {
    writeln!(page, ".SH SUBCOMMANDS").unwrap();
    // Nested subcommands (`load tcp`) are listed and documented like the others.
    let mut all: Vec<(String, clap::Command)> = Vec::new();
    for sub in command.get_subcommands() {
        all.push((sub.get_name().to_string(), sub.clone()));
        for nested in sub.get_subcommands() {
            all.push((
                format!("{} {}", sub.get_name(), nested.get_name()),
                nested.clone(),
            ));
        }
    }
    for (name, sub) in &all {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        writeln!(page, ".TP\n\\fBnetlens {}\\fR\n{}", name, escape(&about)).unwrap();
    }
    for (name, sub) in &all {
        if sub
            .get_arguments()
            .all(|a| a.is_global_set() || a.get_id() == "help" || a.is_hide_set())
        {
            continue;
        }
        let mut section = Vec::new();
        clap_mangen::Man::new(sub.clone())
            .render_options_section(&mut section)
            .expect("render subcommand options");
        let section = String::from_utf8(section).expect("roff is UTF-8");
        let title = format!(".SH \"{} OPTIONS\"", name.to_uppercase());
        page.extend_from_slice(section.replacen(".SH OPTIONS", &title, 1).as_bytes());
    }
}

fn write_keys(page: &mut Vec<u8>) {
    writeln!(page, ".SH KEYS").unwrap();
    for binding in keymap::BINDINGS {
        writeln!(
            page,
            ".TP\n\\fB{}\\fR\n{}",
            escape(&keymap::keys_label(binding.keys)),
            escape(binding.help)
        )
        .unwrap();
    }
    for (key, help) in keymap::PROMPT_KEYS {
        writeln!(
            page,
            ".TP\n\\fB{}\\fR\nwhile typing a filter, target, probe or time: {}",
            escape(&keymap::key_label(*key)),
            escape(help)
        )
        .unwrap();
    }
    writeln!(
        page,
        ".TP\n\\fBmouse click\\fR\nselect a tab or a row (with \\-\\-mouse or mouse = true in the config)"
    )
    .unwrap();
}

/// CONFIGURATION: the settings, then every threshold with its default.
fn write_configuration(page: &mut Vec<u8>) {
    page.extend_from_slice(sections::CONFIGURATION.as_bytes());
    writeln!(page, ".RS").unwrap();
    for (key, default, meaning) in thresholds::THRESHOLDS {
        writeln!(
            page,
            ".TP\n\\fB{}\\fR = {}\n{}",
            escape(key),
            default,
            escape(meaning)
        )
        .unwrap();
    }
    writeln!(page, ".RE").unwrap();
}

/// SECTIONS with FINDINGS' marker line replaced by one entry per finding
/// of the names table: what it means, its evidence, its fix.
fn with_findings(sections: &str) -> String {
    const MARKER: &str = ".\\\" FINDINGS TABLE: build.rs puts src/findings/names.rs here\n";
    let mut entries = String::new();
    for entry in names::NAMES {
        entries.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n.br\nEvidence: {}\n.br\nFix: {}\n",
            escape(entry.id),
            escape(entry.means),
            escape(entry.evidence),
            escape(entry.fix)
        ));
    }
    assert!(sections.contains(MARKER), "FINDINGS lost its marker line");
    sections.replacen(MARKER, &entries, 1)
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('-', "\\-")
}
