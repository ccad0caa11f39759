//! Renders the man page from the clap definitions and the keymap, so the page
//! cannot drift from the code. `netlens man` prints it; man/netlens.1 is the
//! committed copy.

#[path = "src/cli.rs"]
#[allow(dead_code)]
mod cli;

#[path = "src/app/keymap.rs"]
#[allow(dead_code)]
mod keymap;

#[path = "src/man_sections.rs"]
mod man_sections;

use clap::CommandFactory;
use std::io::Write;

fn main() {
    println!("cargo:rerun-if-changed=src/cli.rs");
    println!("cargo:rerun-if-changed=src/app/keymap.rs");
    println!("cargo:rerun-if-changed=src/man_sections.rs");
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
    man.render_subcommands_section(&mut page)
        .expect("render subcommands");
    write_keys(&mut page);
    page.extend_from_slice(man_sections::SECTIONS.as_bytes());
    man.render_version_section(&mut page)
        .expect("render version");
    std::fs::write(out.join("netlens.1"), page).expect("write the man page");
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
    writeln!(
        page,
        ".TP\n\\fBmouse click\\fR\nselect a tab or a row (off with \\-\\-no\\-mouse)"
    )
    .unwrap();
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('-', "\\-")
}
