//! The documents stay true to the program: README.md's generated blocks
//! and example config, the man page, help texts and completions, the
//! counter catalogue, the generated alert rules, what the Debian package
//! installs, and the layer table of src/lib.rs (`layers`).
//! `NETLENS_UPDATE_README=1 cargo test --profile fast-build --test suite docs::` rewrites
//! what is generated.

mod alerts;
mod catalogue;
mod cli;
mod layers;
mod package;
mod readme;
