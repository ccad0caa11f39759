//! Parse and dispatch only: each subcommand is in `netlens::commands`.

use clap::{CommandFactory, FromArgMatches};
use netlens::cli::{Cli, Command};
use netlens::commands;
use std::process::ExitCode;

fn main() -> ExitCode {
    netlens::memory::map_large_blocks();
    let matches = Cli::command().get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    if cli.print_config {
        let printed = commands::stdout::print(netlens::config::commented_default());
        return exit_code(printed);
    }
    let result = netlens::config::load(cli.config.as_deref()).and_then(|config| {
        commands::config::apply(&mut cli, &matches, &config);
        dispatch(&cli, &config)
    });
    exit_code(result)
}

/// Success, or a closed stdout pipe (the reader, e.g. `head`, has all it
/// wants): status 0; any other error: one line and status 1.
fn exit_code(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if commands::stdout::is_closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            // Not eprintln!: it panics when stderr is a terminal that hung
            // up, and the error (a draw that failed on it) is then moot.
            use std::io::Write;
            // Escaped line by line: an error may quote a file name or a
            // name from outside; its own line breaks (a --where caret) stay.
            let text = format!("{error:#}");
            let lines: Vec<_> = text
                .split('\n')
                .map(netlens::text::escape_control)
                .collect();
            let _ = writeln!(std::io::stderr(), "netlens: {}", lines.join("\n"));
            ExitCode::FAILURE
        }
    }
}

fn dispatch(cli: &Cli, config: &netlens::config::Config) -> anyhow::Result<()> {
    let limits = &config.thresholds;
    match &cli.command {
        None => commands::live::run(cli, config),
        Some(Command::Snapshot(args)) => commands::snapshot::run(&cli.collect, args, limits),
        Some(Command::Read(args)) => commands::read::run(args, limits),
        Some(Command::Load(args)) => commands::load::command(args, &cli.collect),
        Some(Command::Record(args)) => commands::record::run(&cli.collect, args, limits),
        Some(Command::Replay(args)) => commands::replay::run(cli, args, config),
        Some(Command::Capture(args)) => commands::capture::run(&cli.collect, args),
        Some(Command::Conns(args)) => commands::conns::run(&cli.collect, args),
        Some(Command::Export(args)) => commands::export::run(&cli.collect, args, limits),
        Some(Command::Tmux(args)) => commands::tmux::run(cli, args),
        Some(Command::Explain(args)) => commands::explain::run(args),
        Some(Command::Trace(args)) => commands::trace::run(&cli.collect, args, limits),
        Some(Command::Nftrace(args)) => commands::nftrace::run(&cli.collect, args),
        Some(Command::Man) => commands::man::run(),
        Some(Command::Completions { shell }) => commands::completions::run(*shell),
    }
}
