//! netlens: an htop-style monitor of the Linux network stack.
//!
//! The core (model, collect, findings, session, report, record, export) has
//! no terminal code and can be used headless; app and ui are the live view;
//! commands turns each subcommand's command line into the core's options.

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
pub mod model;
pub mod packet;
pub mod record;
pub mod report;
pub mod safe_file;
pub mod session;
pub mod ui;
pub mod units;
