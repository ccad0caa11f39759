//! `netlens` with no subcommand: the live view.

use crate::app::App;
use crate::cli::Cli;
use crate::config::Config;
use crate::session::Session;
use anyhow::{Result, bail};
use std::io::{IsTerminal, stdout};

pub fn run(cli: &Cli, config: &Config) -> Result<()> {
    if !stdout().is_terminal() {
        bail!(
            "stdout is not a terminal, and the live view needs one; for scripts use \
             `netlens snapshot` (or `netlens snapshot --json`)"
        );
    }
    let mut options = super::session_options(&cli.collect, Some(&cli.capture), &cli.dns);
    // Data on the first screen: the eBPF programs load after the first
    // sample, unless that sample is recorded (a recording's first sample
    // counts from the start).
    if cli.record.is_none() {
        options.start = crate::collect::Start::Quick;
    }
    // A namespace that does not exist is an error before the terminal is
    // touched. The first frame is drawn before the session starts (50 ms:
    // the flow-count program, the capture): an error there (a bad filter
    // or interface; a missing capture privilege is none, the Flows tab
    // says how to grant it) puts the terminal back and is printed as one
    // line.
    options.target.open()?;
    let mut app = configured_app(cli, config);
    let terminal = super::event_loop::LiveTerminal::open(&mut app, cli.mouse)?;
    let session = Session::start(&options)?;
    let label = session.label().to_string();
    let parts = session.into_parts();
    app.dns.monitor = Some(parts.dns);
    app.demand = parts.sampler.demand();
    app.flows.capture = parts.capture;
    app.load.netns = options
        .target
        .open()?
        .map(|file| (std::sync::Arc::new(file), label.clone()));
    app.record_path = cli.record.clone();
    app.hook = cli
        .hook
        .options(false)
        .map(|hook| crate::notify::FindingHook::start(hook, config.thresholds));
    if let Some(path) = &cli.record {
        app.start_recording_to_output(path, &label)?;
    }
    super::event_loop::live(app, terminal, parts.sampler, parts.samples, parts.packets)
}

/// The App as the command line and the config (already merged into `cli`
/// by main) ask: first tab, colour, compact layout, thresholds, columns.
pub fn configured_app(cli: &Cli, config: &Config) -> App {
    let color = !cli.no_color && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let tab = cli.tab.unwrap_or(crate::config::Tab::Interfaces);
    let mut app = App::new(tab, cli.collect.interval, color);
    app.set_thresholds(config.thresholds);
    app.columns = config.columns.clone();
    app.sockets.closed.limit = config.closed_rows.0;
    app.config = config.clone();
    app.config_path = cli.config.clone().or_else(crate::config::default_path);
    app.compact = cli.compact;
    app.probe_from = Some(cli.collect.target());
    app.names = crate::app::names::Names::new(
        crate::dns::reverse::server(&cli.dns.dns_server),
        cli.names.resolve,
    );
    app
}
