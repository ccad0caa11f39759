//! Output for scripts: `snapshot` as JSON Lines or a sar-like table.

pub mod dns_json;
pub mod flows;
pub mod json;
pub mod sockets_json;
pub mod sockets_text;
pub mod text;

use crate::cli::{CollectArgs, Section, SnapshotArgs};
use crate::collect::netns::Target;
use crate::collect::{Sampler, SamplerEvent};
use crate::findings::Thresholds;
use crate::model::Sample;
use anyhow::{Result, bail};
use std::io::Write;

/// Which parts of a sample to print.
#[derive(Debug, Clone, Copy)]
pub struct Sections {
    pub interfaces: bool,
    pub conntrack: bool,
    /// The text table lists conntrack entries only when `--section`
    /// names conntrack (a busy host has tens of thousands); JSON always does.
    pub conntrack_entries: bool,
    pub findings: bool,
    pub sockets: bool,
    pub tcp: bool,
    /// Capture status and flows.
    pub flows: bool,
    /// Resolver configuration, probe and passive results.
    pub dns: bool,
}

impl Sections {
    pub fn from_list(list: &[Section]) -> Self {
        if list.is_empty() {
            return Self {
                interfaces: true,
                conntrack: true,
                conntrack_entries: false,
                findings: true,
                sockets: true,
                tcp: true,
                flows: true,
                dns: true,
            };
        }
        Self {
            interfaces: list.contains(&Section::Interfaces),
            conntrack: list.contains(&Section::Conntrack),
            conntrack_entries: list.contains(&Section::Conntrack),
            findings: list.contains(&Section::Findings),
            sockets: list.contains(&Section::Sockets),
            tcp: list.contains(&Section::Tcp),
            flows: list.contains(&Section::Flows),
            dns: list.contains(&Section::Dns),
        }
    }
}

/// `netlens snapshot`: a baseline sample, then `count` samples one interval
/// apart, each printed with rates over its interval.
pub fn snapshot(collect: &CollectArgs, args: &SnapshotArgs, limits: &Thresholds) -> Result<()> {
    let target = Target::from_args(collect.netns.as_deref(), collect.pid);
    let label = target.label().to_string();
    let (sampler, mut events) = Sampler::spawn(target.clone(), collect.interval)?;
    // As the live view: capture where permitted, unless --no-capture.
    let (capture, _lines) = crate::capture::live::start(&target, &args.capture.options())?;
    let dns = crate::dns::DnsMonitor::start(&target, &args.dns.options(), collect.interval)?;
    dns.attach(capture.as_ref());
    let mut recorder = match &args.record {
        Some(path) => {
            let mut recorder = crate::record::Recorder::create_with_capture(
                path,
                &crate::record::meta(&label, collect.interval),
                capture.as_ref(),
            )?;
            recorder.thresholds = *limits;
            Some(recorder)
        }
        None => None,
    };
    let result = print_samples(
        args,
        &mut events,
        &sampler,
        capture.as_ref(),
        &dns,
        recorder.as_mut(),
        limits,
    );
    drop(dns);
    drop(capture);
    drop(sampler);
    if let Some(recorder) = recorder {
        recorder.finish()?;
    }
    result
}

fn print_samples(
    args: &SnapshotArgs,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<SamplerEvent>,
    sampler: &Sampler,
    capture: Option<&crate::capture::live::Capture>,
    dns: &crate::dns::DnsMonitor,
    mut recorder: Option<&mut crate::record::Recorder>,
    limits: &Thresholds,
) -> Result<()> {
    let sections = Sections::from_list(&args.section);
    let demand = sampler.demand();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut previous: Option<Sample> = None;
    let mut engine = crate::findings::Engine::default();
    let mut printed = 0;
    while printed < args.count {
        let mut sample = match events.blocking_recv() {
            Some(SamplerEvent::Sample(mut sample)) => {
                sample.capture = capture.map(|c| c.summary());
                // DNS results since the baseline belong to the first
                // printed sample: the baseline takes none.
                if previous.is_some() {
                    sample.dns = Some(dns.sample(capture));
                }
                if let Some(c) = sample.capture.as_mut() {
                    crate::model::capture::join_owners(&mut c.flows, &sample.sockets);
                }
                *sample
            }
            Some(SamplerEvent::Error(error)) => bail!("{error}"),
            None => bail!("the sampler stopped unexpectedly"),
        };
        if let Some(recorder) = recorder.as_mut() {
            recorder.record(previous.as_ref(), &mut sample)?;
        }
        if previous.is_none() && sections.conntrack && (args.json || sections.conntrack_entries) {
            // A one-shot ask: the printed samples carry the entry list. Set
            // after the baseline so the first printed sample is not held back
            // by the dump rate limit.
            demand.set_conntrack_entries(true);
        }
        if let Some(previous) = &previous {
            let found = engine.step(Some(previous), &sample, limits);
            let written = if args.json {
                writeln!(
                    out,
                    "{}",
                    json::sample_line(previous, &sample, sections, &found)
                )
            } else {
                text::write_table(&mut out, previous, &sample, sections, printed == 0, &found)
            };
            if let Err(error) = written.and_then(|()| out.flush()) {
                // A closed pipe (`| head`) ends the run quietly.
                if error.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(());
                }
                return Err(error.into());
            }
            printed += 1;
        }
        previous = Some(sample);
    }
    Ok(())
}
