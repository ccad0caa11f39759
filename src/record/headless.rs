//! `netlens record -o FILE`: a session's samples (and, with a capture, the
//! flows and packets captured) to a file, without a terminal.

use super::flight::{FlightOptions, FlightRecorder};
use super::inspect::{saved_text, size};
use super::{Recorder, time};
use crate::collect::SamplerEvent;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::notify::{FindingHook, HookOptions};
use crate::session::Session;
use crate::session::stop::{Stop, StopSignals};
use anyhow::{Result, bail};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Where to record, and for how long (None: until a signal).
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The file, or the flight recorder's ring and freeze.
    pub output: Output,
    pub duration: Option<Duration>,
    pub interval: Duration,
    /// `--on-finding`: a command run when a finding starts or clears.
    pub hook: Option<HookOptions>,
}

#[derive(Debug, Clone)]
pub enum Output {
    File(PathBuf),
    Ring(FlightOptions),
}

/// What the sample loop writes to: a recording or the flight recorder.
trait Headless {
    /// Writes a sample; returns lines to print.
    fn write(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<Vec<String>>;
    /// The progress line shown on a terminal.
    fn progress(&self, elapsed: f64) -> String;
}

impl Headless for Recorder {
    fn write(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<Vec<String>> {
        self.record(previous, sample).map(|()| Vec::new())
    }

    fn progress(&self, elapsed: f64) -> String {
        let stats = self.stats();
        format!(
            "recording to {}: {} samples, {}, {}",
            self.path().display(),
            stats.records[0],
            size(stats.bytes),
            time::span(elapsed),
        )
    }
}

impl Headless for FlightRecorder {
    fn write(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<Vec<String>> {
        self.observe(previous, sample)
    }

    fn progress(&self, elapsed: f64) -> String {
        let ring = self.ring();
        format!(
            "ring in {}: {}, {} segments dropped, {} bundles, {}",
            ring.options().dir.display(),
            size(ring.bytes()),
            ring.dropped,
            self.bundles.len(),
            time::span(elapsed),
        )
    }
}

/// Records `session` until the duration is up or SIGINT / SIGTERM /
/// SIGHUP; either way the file is closed with its index. A write error
/// stops it with the reason and what was saved.
pub fn record(
    session: Session,
    stop: Stop,
    options: &RecordOptions,
    limits: &Thresholds,
) -> Result<()> {
    if let Some(error) = session.capture().and_then(|c| c.summary().error) {
        eprintln!("netlens: warning: no packets recorded: {error}");
    }
    let output = match &options.output {
        Output::File(path) => path,
        Output::Ring(flight) => return record_ring(session, stop, options, flight, limits),
    };
    let mut recorder = Recorder::create_output(
        output,
        &super::meta(session.label(), options.interval),
        session.capture(),
    )?;
    recorder.thresholds = *limits;
    let (outcome, hook) = drive(session, stop, &mut recorder, options, limits);
    let path = recorder.path().to_path_buf();
    let mut stderr = std::io::stderr();
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

/// As `record`, into the flight recorder's ring: on a stop the open file
/// is closed, and an incident still open gets its bundle.
fn record_ring(
    session: Session,
    stop: Stop,
    options: &RecordOptions,
    flight: &FlightOptions,
    limits: &Thresholds,
) -> Result<()> {
    let mut recorder = FlightRecorder::create(
        flight,
        &super::meta(session.label(), options.interval),
        session.capture(),
        *limits,
    )?;
    let (outcome, hook) = drive(session, stop, &mut recorder, options, limits);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let bundles = recorder.bundles.len();
    let dir = recorder.ring().options().dir.clone();
    let (closed, lines) = recorder.finish(now);
    for line in lines {
        let _ = writeln!(std::io::stderr(), "netlens: {line}");
    }
    finish_hook(hook);
    outcome?;
    closed?;
    let _ = writeln!(
        std::io::stderr(),
        "the ring in {} is closed ({bundles} incident bundles written)",
        dir.display()
    );
    Ok(())
}

/// Runs the sample loop into `sink` with the hook; returns how it ended
/// and the hook, to finish once the file is closed.
fn drive(
    mut session: Session,
    stop: Stop,
    sink: &mut dyn Headless,
    options: &RecordOptions,
    limits: &Thresholds,
) -> (Result<()>, Option<FindingHook>) {
    let Stop {
        runtime,
        mut signals,
    } = stop;
    let progress = std::io::stderr().is_terminal();
    let mut hook = options
        .hook
        .clone()
        .map(|options| FindingHook::start(options, *limits));
    let outcome = runtime.block_on(write_samples(
        &mut session,
        &mut signals,
        sink,
        &mut hook,
        options.duration,
        progress,
    ));
    drop(session);
    if progress {
        let _ = writeln!(std::io::stderr());
    }
    (outcome, hook)
}

/// Waits for the hook's last commands and prints its failures.
fn finish_hook(hook: Option<FindingHook>) {
    for line in hook.map(FindingHook::finish).unwrap_or_default() {
        let _ = writeln!(std::io::stderr(), "netlens: {line}");
    }
}

async fn write_samples(
    session: &mut Session,
    stop: &mut StopSignals,
    recorder: &mut dyn Headless,
    hook: &mut Option<FindingHook>,
    duration: Option<Duration>,
    progress: bool,
) -> Result<()> {
    let started = std::time::Instant::now();
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
                    for line in recorder.write(previous.as_ref(), &mut sample)? {
                        let _ = writeln!(std::io::stderr(), "\rnetlens: {line}");
                    }
                    if let Some(hook) = hook {
                        hook.observe(previous.as_ref(), &sample);
                        while let Some(line) = hook.take_failure() {
                            let _ = writeln!(std::io::stderr(), "\rnetlens: {line}");
                        }
                    }
                    previous = Some(*sample);
                    if progress {
                        // Never eprint!: it panics once stderr is a
                        // terminal that hung up, before the file closes.
                        let _ = write!(
                            std::io::stderr(),
                            "\r{}   ",
                            recorder.progress(started.elapsed().as_secs_f64())
                        );
                    }
                }
                Some(SamplerEvent::Error(error)) => {
                    let _ = writeln!(std::io::stderr(), "\rnetlens: warning: {error}");
                }
                None => bail!("the sampler stopped unexpectedly"),
            },
            () = stop.recv() => return Ok(()),
            _ = until => return Ok(()),
        }
    }
}
