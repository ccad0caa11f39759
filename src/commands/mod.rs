//! One module per subcommand: each turns the parsed command line into the
//! core's plain options and runs it. main.rs only parses and dispatches.

pub mod capture;
pub mod completions;
pub mod config;
pub mod conns;
pub mod event_loop;
pub mod explain;
pub mod export;
pub mod live;
pub mod load;
pub mod man;
pub mod nftrace;
pub mod options;
pub mod read;
pub mod record;
pub mod replay;
pub mod snapshot;
pub mod stdout;
pub mod tmux;
pub mod trace;

use crate::cli::{CaptureArgs, CollectArgs, DnsArgs};
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
        target: collect.target(),
        interval: collect.interval,
        capture: capture.map(CaptureArgs::options),
        dns: dns.options(),
        conntrack_entries: false,
        firewall_rules: false,
        owners: true,
        first_is_baseline: false,
        drop_reasons: !collect.no_bpf,
        all_netns: collect.all_netns,
        start: crate::collect::Start::Whole,
    }
}
