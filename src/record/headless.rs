//! `netlens record -o FILE`: a session's samples (and, with a capture, the
//! flows and packets captured) to a file, without a terminal.

use super::inspect::{saved_text, size};
use super::{Recorder, time};
use crate::collect::SamplerEvent;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::session::Session;
use anyhow::{Context, Result, bail};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};

/// Where to record, and for how long (None: until a signal).
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub output: PathBuf,
    pub duration: Option<Duration>,
    pub interval: Duration,
}

/// Records `session` until the duration is up or SIGINT / SIGTERM /
/// SIGHUP; either way the file is closed with its index. A write error
/// stops it with the reason and what was saved.
pub fn record(mut session: Session, options: &RecordOptions, limits: &Thresholds) -> Result<()> {
    if let Some(error) = session.capture().and_then(|c| c.summary().error) {
        eprintln!("netlens: warning: no packets recorded: {error}");
    }
    let mut recorder = Recorder::create_with_capture(
        &options.output,
        &super::meta(session.label(), options.interval),
        session.capture(),
    )?;
    recorder.thresholds = *limits;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let progress = std::io::stderr().is_terminal();
    let outcome = runtime.block_on(write_samples(
        &mut session,
        &mut recorder,
        options.duration,
        progress,
    ));
    drop(session);
    let path = recorder.path().to_path_buf();
    let mut stderr = std::io::stderr();
    if progress {
        let _ = writeln!(stderr);
    }
    if let Err(error) = outcome {
        // A failed write (a full disk) names its cause; the file holds
        // what was written before it.
        let saved = recorder.stats();
        let closed = recorder.finish().is_ok();
        bail!("{error:#}; {}", saved_text(&saved, &path, closed));
    }
    // Close the file properly even when sampling failed.
    let stats = recorder.finish()?;
    let _ = writeln!(
        stderr,
        "recorded {} samples ({}) to {}",
        stats.records[0],
        size(stats.bytes),
        path.display()
    );
    Ok(())
}

async fn write_samples(
    session: &mut Session,
    recorder: &mut Recorder,
    duration: Option<Duration>,
    progress: bool,
) -> Result<()> {
    let started = std::time::Instant::now();
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sigterm = signal(SignalKind::terminate())?;
    // An SSH session that drops: close the file as on SIGTERM.
    let mut sighup = signal(SignalKind::hangup())?;
    let deadline = duration.map(|d| tokio::time::Instant::now() + d);
    let mut previous: Option<Sample> = None;
    loop {
        let until = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = session.next() => match event {
                Some(SamplerEvent::Sample(mut sample)) => {
                    recorder.record(previous.as_ref(), &mut sample)?;
                    previous = Some(*sample);
                    if progress {
                        let stats = recorder.stats();
                        // Never eprint!: it panics once stderr is a
                        // terminal that hung up, before the file closes.
                        let _ = write!(
                            std::io::stderr(),
                            "\rrecording to {}: {} samples, {}, {}   ",
                            recorder.path().display(),
                            stats.records[0],
                            size(stats.bytes),
                            time::span(started.elapsed().as_secs_f64()),
                        );
                    }
                }
                Some(SamplerEvent::Error(error)) => {
                    let _ = writeln!(std::io::stderr(), "\rnetlens: warning: {error}");
                }
                None => bail!("the sampler stopped unexpectedly"),
            },
            _ = sigint.recv() => return Ok(()),
            _ = sigterm.recv() => return Ok(()),
            _ = sighup.recv() => return Ok(()),
            _ = until => return Ok(()),
        }
    }
}
