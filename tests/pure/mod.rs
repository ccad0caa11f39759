//! The tests that need no root and no network namespace: parsers, the
//! rendered screens (ratatui's TestBackend, insta snapshots), recordings
//! and their replay, hostile input to the real binary, and the fuzzers.
//! `cargo test --profile fast-build --test suite pure::` runs them anywhere in seconds.

mod findings_ui;
mod flight_input;
mod flows_ns_sort;
mod fuzz;
mod history_memory;
mod hostile_input;
mod load_form;
mod names_refilter;
mod read_flows_cap;
mod record;
mod record_damage;
mod replay_follow;
mod replay_prompt;
mod replay_ui;
mod socket_memory;
mod ui_dns;
mod ui_drops;
mod ui_flow_detail;
mod ui_render;
