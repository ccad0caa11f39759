//! `netlens record -o FILE`: a session's samples (and, with a capture, the
//! flows and packets captured) to a file, without a terminal.

use super::inspect::{saved_text, size};
use super::{Recorder, time};
use crate::collect::SamplerEvent;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::notify::{FindingHook, HookOptions};
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
    /// `--on-finding`: a command run when a finding starts or clears.
    pub hook: Option<HookOptions>,
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
    let mut hook = options
        .hook
        .clone()
        .map(|options| FindingHook::start(options, *limits));
    let outcome = runtime.block_on(write_samples(
        &mut session,
        &mut recorder,
        &mut hook,
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
        finish_hook(hook);
        bail!("{error:#}; {}", saved_text(&saved, &path, closed));
    }
    // Close the file properly even when sampling failed.
    let stats = recorder.finish();
    // After the file is closed: the last commands may take their timeout.
    finish_hook(hook);
    let stats = stats?;
    let _ = writeln!(
        stderr,
        "recorded {} samples ({}) to {}",
        stats.records[0],
        size(stats.bytes),
        path.display()
    );
    Ok(())
}

/// Waits for the hook's last commands and prints its failures.
fn finish_hook(hook: Option<FindingHook>) {
    for line in hook.map(FindingHook::finish).unwrap_or_default() {
        let _ = writeln!(std::io::stderr(), "netlens: {line}");
    }
}

async fn write_samples(
    session: &mut Session,
    recorder: &mut Recorder,
    hook: &mut Option<FindingHook>,
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
                    if let Some(hook) = hook {
                        hook.observe(previous.as_ref(), &sample);
                        while let Some(line) = hook.take_failure() {
                            let _ = writeln!(std::io::stderr(), "\rnetlens: {line}");
                        }
                    }
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
