//! `netlens replay FILE`: the live view's UI fed by a recording, or the
//! recording as JSON Lines (--json, --follow) or a summary (--info).

use crate::cli::{Cli, ReplayArgs};
use crate::config::Config;
use crate::record::inspect;
use crate::record::player::Player;
use crate::record::reader::Reader;
use anyhow::{Result, bail};
use std::io::{IsTerminal, stdout};
use std::path::{Path, PathBuf};

pub fn run(cli: &Cli, args: &ReplayArgs, config: &Config) -> Result<()> {
    let file = &recording_of(&args.file)?;
    if args.info {
        let reader = Reader::open(file)?;
        // Into memory first (a few lines), so a failed write is stdout's.
        let mut text = Vec::new();
        inspect::print_info(&reader, &mut text)?;
        return super::stdout::print(text);
    }
    if args.json {
        let mut out = super::stdout::Stdout::lock();
        let printed = if args.follow {
            crate::record::follow::print_json(file, &mut out, &config.thresholds)
        } else {
            let reader = Reader::open(file)?;
            inspect::note_if_being_written(&reader);
            inspect::print_json(&reader, &mut out, &config.thresholds)
        };
        if out.closed_pipe() {
            return Ok(());
        }
        return printed;
    }
    if !stdout().is_terminal() {
        bail!(
            "stdout is not a terminal, and replay needs one; for scripts use \
             `netlens replay --json FILE` or `netlens replay --info FILE`"
        );
    }
    let reader = if args.follow {
        crate::record::follow::first_samples(file)?
    } else {
        Reader::open(file)?
    };
    let mut player = Player::new(reader)?;
    player.speed = args.speed;
    if args.follow {
        player.follow();
    }
    let mut app = super::live::configured_app(cli, config);
    app.start_replay(player);
    if let Some(at) = &args.at {
        app.jump_to_text(at);
        if let Some(error) = app.error.take() {
            bail!("--at {at}: {error}");
        }
    }
    super::event_loop::replay(app, cli.mouse)
}

/// The recording `path` names: the file itself, or an incident bundle's
/// recording.nlrec when it is a bundle directory.
fn recording_of(path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let inside = path.join(crate::record::bundle::RECORDING);
    if inside.symlink_metadata().is_err() {
        bail!(
            "{}: not a recording (not a regular file), nor an incident bundle (no {} in it)",
            path.display(),
            crate::record::bundle::RECORDING
        );
    }
    Ok(inside)
}
