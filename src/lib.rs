//! netlens: an htop-style monitor of the Linux network stack.
//!
//! The core (model, collect, findings, report) has no terminal code and can
//! be used headless; app and ui are the live view.

pub mod app;
pub mod capture;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod config;
pub mod dns;
pub mod export;
pub mod findings;
pub mod load;
pub mod manual;
pub mod model;
pub mod record;
pub mod report;
pub mod safe_file;
pub mod tmux;
pub mod ui;
