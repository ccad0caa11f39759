//! `netlens export`: the latest sample as OpenMetrics on GET /metrics.
//!
//! The Sampler thread collects once per interval (in the watched namespace);
//! each sample is rendered once and the text is shared by every scrape until
//! the next one, so a scrape costs a copy, not a socket or conntrack dump.

pub mod alerts;
pub mod closed;
pub mod cpu;
pub mod dns;
pub mod drops;
pub mod failed;
pub mod format;
pub mod http;
pub mod netns;
pub mod processes;
pub mod render;
pub mod responses;

use crate::collect::SamplerEvent;
use crate::findings;
use crate::model::Sample;
use crate::model::failed::Failures;
use crate::notify::{FindingHook, HookOptions};
use crate::record::flight::FlightRecorder;
use crate::session::{Session, SessionOptions};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::sync::Arc;
use tokio::sync::watch;

/// Renders `current` with the findings shown at it (`findings::Engine`),
/// the DNS probe histograms and the failures accumulated so far, in both
/// formats.
pub fn page(
    current: &Sample,
    found: &[findings::Finding],
    dns: &dns::Accumulator,
    processes: Option<&processes::Accumulator>,
    failures: &Failures,
) -> format::Pages {
    let text = render::render(current, found, &dns.series(), processes, Some(failures));
    format::Pages::new(text, current.t, &current.netns)
}

/// Raises the soft descriptor limit to the hard one (the default soft 1024
/// would cap the connections) and returns how many connections to hold.
fn connection_capacity() -> usize {
    crate::collect::raise_descriptor_limit()
        .saturating_sub(http::RESERVED_DESCRIPTORS)
        .clamp(1, http::MAX_CONNECTIONS)
}

/// Where to serve, and the session to serve (started without a capture:
/// probes only when asked, so no passive DNS).
#[derive(Debug, Clone)]
pub struct ExportOptions {
    pub listen: std::net::SocketAddr,
    pub session: SessionOptions,
    /// `--on-finding`: a command run when a finding starts or clears.
    pub hook: Option<HookOptions>,
    /// `--per-process`: serve per-process traffic counters.
    pub per_process: bool,
    /// `--ring` and `--freeze-on`: the flight recorder.
    pub flight: Option<crate::record::flight::FlightOptions>,
}

/// Feeds the flight recorder. A failed ring write (a full disk) stops the
/// flight recorder with one line; the exporter goes on serving.
fn fly(flight: &mut Option<FlightRecorder>, previous: Option<&Sample>, sample: &mut Sample) {
    let Some(recorder) = flight else { return };
    match recorder.observe(previous, sample) {
        Ok(lines) => lines
            .iter()
            .for_each(|line| eprintln!("netlens export: {line}")),
        Err(error) => {
            eprintln!("netlens export: flight recorder stopped: {error:#}");
            *flight = None;
        }
    }
}

pub fn run(options: &ExportOptions, limits: &findings::Thresholds) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(options, limits))
}

async fn serve(options: &ExportOptions, limits: &findings::Thresholds) -> Result<()> {
    // SIGINT, SIGTERM and SIGHUP close the flight recorder's file whole.
    let mut stop = crate::session::stop::StopSignals::new()?;
    let capacity = connection_capacity();
    // Bind before entering any namespace: the listener lives in ours.
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let address = listener.local_addr()?;
    let mut session = Session::start(&options.session)?;
    let mut histograms = dns::Accumulator::default();
    let mut processes = options.per_process.then(processes::Accumulator::default);
    let mut failures = Failures::default();
    let (publish, page_rx) = watch::channel::<Option<Arc<format::Pages>>>(None);

    // The first sample before announcing the address, so the first scrape
    // has data.
    // The baseline takes no DNS results: they go to the next sample.
    let mut previous = match session.next().await {
        Some(SamplerEvent::Sample(sample)) => *sample,
        Some(SamplerEvent::Error(error)) => bail!("{error}"),
        None => bail!("the sampler stopped unexpectedly"),
    };
    // Findings with hysteresis, as in the live view.
    let mut engine = findings::Engine::default();
    let found = engine.step(None, &previous, limits);
    let mut hook = options
        .hook
        .clone()
        .map(|options| FindingHook::start(options, *limits));
    if let Some(hook) = &mut hook {
        hook.observe(None, &previous);
    }
    let mut flight = match &options.flight {
        Some(flight) => Some(FlightRecorder::create(
            flight,
            &crate::record::meta(&previous.netns, options.session.interval),
            None,
            *limits,
        )?),
        None => None,
    };
    fly(&mut flight, None, &mut previous);
    publish.send_replace(Some(
        page(
            &previous,
            &found,
            &histograms,
            processes.as_ref(),
            &failures,
        )
        .into(),
    ));
    {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(
            stdout,
            "netlens export: serving http://{address}/metrics (netns {})",
            previous.netns
        );
        let _ = stdout.flush();
    }

    let server = tokio::spawn(http::serve(listener, page_rx, capacity));
    let result = loop {
        tokio::select! {
            event = session.next() => match event {
                Some(SamplerEvent::Sample(mut sample)) => {
                    fly(&mut flight, Some(&previous), &mut sample);
                    if let Some(dns) = &sample.dns {
                        histograms.add(dns);
                    }
                    let found = engine.step(Some(&previous), &sample, limits);
                    if let Some(processes) = &mut processes {
                        processes.add(&previous, &sample);
                    }
                    failures.add(&sample);
                    let page = page(&sample, &found, &histograms, processes.as_ref(), &failures);
                    publish.send_replace(Some(page.into()));
                    if let Some(hook) = &mut hook {
                        hook.observe(Some(&previous), &sample);
                        while let Some(line) = hook.take_failure() {
                            eprintln!("netlens export: {line}");
                        }
                    }
                    previous = *sample;
                }
                Some(SamplerEvent::Error(error)) => {
                    // Keep serving the last good sample; say why it is old.
                    eprintln!("netlens export: sample failed: {error}");
                }
                None => break Err(anyhow::anyhow!("the sampler stopped unexpectedly")),
            },
            () = stop.recv() => break Ok(()),
        }
    };
    server.abort();
    drop(session);
    if let Some(flight) = flight {
        let (closed, lines) = flight.finish(previous.t);
        for line in lines {
            eprintln!("netlens export: {line}");
        }
        if let Err(error) = closed {
            eprintln!("netlens export: flight recorder: {error:#}");
        }
    }
    if let Some(hook) = hook {
        for line in hook.finish() {
            eprintln!("netlens export: {line}");
        }
    }
    result
}
