//! Dispatch only.

use clap::{CommandFactory, FromArgMatches};
use netlens::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    if cli.print_config {
        print!("{}", netlens::config::commented_default());
        return ExitCode::SUCCESS;
    }
    let result = netlens::config::load(cli.config.as_deref()).and_then(|config| {
        netlens::config::apply(&mut cli, &matches, &config);
        dispatch(&cli, &config)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // Not eprintln!: it panics when stderr is a terminal that hung
            // up, and the error (a draw that failed on it) is then moot.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "netlens: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(cli: &Cli, config: &netlens::config::Config) -> anyhow::Result<()> {
    let limits = &config.thresholds;
    match &cli.command {
        None => netlens::app::run::run(cli, config),
        Some(Command::Snapshot(args)) => netlens::report::snapshot(&cli.collect, args, limits),
        Some(Command::Read(args)) => netlens::capture::read::run(args, limits),
        Some(Command::Load(args)) => netlens::load::cli::command(args, &cli.collect),
        Some(Command::Record(args)) => {
            netlens::record::commands::record(&cli.collect, args, limits)
        }
        Some(Command::Replay(args)) => netlens::record::commands::replay(cli, args, config),
        Some(Command::Capture(args)) => netlens::capture::headless::run(&cli.collect, args),
        Some(Command::Export(args)) => netlens::export::run(&cli.collect, args, limits),
        Some(Command::Tmux(args)) => netlens::tmux::run(cli, args),
        Some(Command::Explain(args)) => netlens::commands::explain::run(args),
        Some(Command::Man) => {
            print!("{}", netlens::manual::MAN_PAGE);
            Ok(())
        }
        Some(Command::Completions { shell }) => {
            clap_complete::generate(
                *shell,
                &mut Cli::command(),
                "netlens",
                &mut std::io::stdout(),
            );
            Ok(())
        }
    }
}
