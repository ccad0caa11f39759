//! One module per subcommand: each turns the parsed command line into the
//! core's plain options and runs it. main.rs only parses and dispatches.

pub mod completions;
pub mod config;
pub mod export;
pub mod live;
pub mod man;
pub mod record;
pub mod replay;
pub mod snapshot;
pub mod tmux;

use crate::cli::{CaptureArgs, CollectArgs, DnsArgs};
use crate::collect::netns::Target;
use crate::session::SessionOptions;

/// The session the collection options ask for: capturing with `capture`
/// (None: no capture at all), probing with `dns`. Conntrack entries only
/// when asked, and the first sample is shown (the callers that print only
/// rates set `first_is_baseline`).
fn session_options(
    collect: &CollectArgs,
    capture: Option<&CaptureArgs>,
    dns: &DnsArgs,
) -> SessionOptions {
    SessionOptions {
        target: Target::from_args(collect.netns.as_deref(), collect.pid),
        interval: collect.interval,
        capture: capture.cloned(),
        dns: dns.clone(),
        conntrack_entries: false,
        first_is_baseline: false,
    }
}
