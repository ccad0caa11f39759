//! The config file merged into the parsed command line. Not in cli/:
//! build.rs includes that file on its own (for the man page), where the
//! crate's other modules do not exist.

use crate::cli::{Cli, Command, DnsArgs};
use crate::config::{Config, Dns, ThemeName};

/// Merges the config file into the parsed command line: `config` applies
/// where the command line did not say otherwise.
pub fn apply(cli: &mut Cli, matches: &clap::ArgMatches, config: &Config) {
    if let Some(interval) = config.interval
        && !on_command_line(matches, "interval")
    {
        cli.collect.interval = interval;
    }
    if cli.tab.is_none() {
        cli.tab = config.tab;
    }
    if config.theme == ThemeName::Mono {
        cli.no_color = true;
    }
    if config.mouse && !cli.no_mouse {
        cli.mouse = true;
    }
    if config.compact {
        cli.compact = true;
    }
    let dns = match &mut cli.command {
        None => &mut cli.dns,
        Some(Command::Snapshot(args)) => &mut args.dns,
        Some(Command::Record(args)) => &mut args.dns,
        Some(Command::Export(args)) => &mut args.dns,
        Some(_) => return,
    };
    add_dns(dns, &config.dns);
}

/// The config's probes and servers come after those given on the command line.
fn add_dns(args: &mut DnsArgs, config: &Dns) {
    for probe in &config.probes {
        if !args.dns_probe.contains(probe) {
            args.dns_probe.push(probe.clone());
        }
    }
    for server in &config.servers {
        if !args.dns_server.contains(server) {
            args.dns_server.push(server.clone());
        }
    }
}

/// Whether the argument `id` was given on the command line, at the top level
/// or in a subcommand (global options may be in either).
fn on_command_line(matches: &clap::ArgMatches, id: &str) -> bool {
    let here = matches.try_contains_id(id).unwrap_or(false)
        && matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    here || matches
        .subcommand()
        .is_some_and(|(_, sub)| on_command_line(sub, id))
}
