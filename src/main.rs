//! Dispatch only.

use clap::{CommandFactory, Parser};
use netlens::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        None => netlens::app::run::run(&cli),
        Some(Command::Snapshot(args)) => netlens::report::snapshot(&cli.collect, args),
        Some(Command::Read(args)) => netlens::capture::read::run(args),
        Some(Command::Load(args)) => netlens::load::cli::command(args, &cli.collect),
        Some(Command::Record(args)) => netlens::record::commands::record(&cli.collect, args),
        Some(Command::Replay(args)) => netlens::record::commands::replay(&cli, args),
        Some(Command::Capture(args)) => netlens::capture::headless::run(&cli.collect, args),
        Some(Command::Export(args)) => netlens::export::run(&cli.collect, args),
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("netlens: {error:#}");
            ExitCode::FAILURE
        }
    }
}
