//! `netlens completions SHELL`: the shell's completion script on stdout.

use crate::cli::Cli;
use clap::CommandFactory;

pub fn run(shell: clap_complete::Shell) -> anyhow::Result<()> {
    clap_complete::generate(
        shell,
        &mut Cli::command(),
        "netlens",
        &mut std::io::stdout(),
    );
    Ok(())
}
