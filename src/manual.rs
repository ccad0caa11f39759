//! The man page: rendered by build.rs from src/cli.rs, the keymap and the
//! sections below, and committed as man/netlens.1 (a test keeps it fresh).

/// The rendered page.
pub const MAN_PAGE: &str = include_str!(concat!(env!("OUT_DIR"), "/netlens.1"));

/// The hand-written sections and the threshold table (build.rs includes the
/// same file).
#[path = "man_sections.rs"]
pub mod sections;
