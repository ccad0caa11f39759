//! netlens: an htop-style monitor of the Linux network stack.
//!
//! ARCHITECTURE.md (at the repository's root) holds the design: the layers
//! each module sits in (`tests/docs/layers.rs` enforces them), the data flow of
//! one sample, one counter traced from the kernel to the screen, JSON and
//! the exporter, and where to add a counter, a column, a finding, a tab or
//! a subcommand. CONTRIBUTING.md holds the build, tests and CI.

pub mod app;
pub mod capture;
pub mod cli;
pub mod clock;
pub mod collect;
pub mod commands;
pub mod config;
pub mod dns;
pub mod export;
pub mod findings;
pub mod load;
pub mod manual;
pub mod memory;
pub mod model;
pub mod notify;
pub mod packet;
pub mod path;
pub mod record;
pub mod report;
pub mod safe_file;
pub mod session;
pub mod text;
pub mod ui;
pub mod units;
