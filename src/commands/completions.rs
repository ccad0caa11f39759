//! `netlens completions SHELL`: the shell's completion script on stdout.

use crate::cli::Cli;
use clap::CommandFactory;

pub fn run(shell: clap_complete::Shell) -> anyhow::Result<()> {
    // Into memory first: clap_complete panics when its writer fails.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "netlens", &mut script);
    super::stdout::print(script)
}
