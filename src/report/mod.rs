//! Output for scripts: `snapshot` as JSON Lines or a sar-like table.

pub mod closed;
mod cpu_json;
pub mod dns_json;
pub mod drops_json;
pub mod flows;
pub mod json;
pub mod netns_json;
pub mod processes_json;
pub mod sockets_json;
pub mod sockets_text;
pub mod text;

use crate::collect::SamplerEvent;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::session::{Session, Sink};
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
    /// The kernel's drop reasons (JSON only).
    pub drops: bool,
    /// Traffic per process.
    pub processes: bool,
}

impl Sections {
    /// Every section (what `--section` not given means).
    pub const ALL: Sections = Sections {
        interfaces: true,
        conntrack: true,
        conntrack_entries: false,
        findings: true,
        sockets: true,
        tcp: true,
        flows: true,
        dns: true,
        drops: true,
        processes: true,
    };
}

/// What `snapshot` prints, and how many.
#[derive(Debug, Clone)]
pub struct SnapshotOptions {
    pub json: bool,
    pub count: u64,
    pub sections: Sections,
    /// `--where`: the sockets, processes and flows to print.
    pub filter: crate::model::filter::Expr,
}

/// `netlens snapshot`: after the session's baseline sample, `count`
/// samples one interval apart, each printed with rates over its interval
/// (and written to `sink`, a recording, with the baseline).
pub fn snapshot(
    session: &mut Session,
    options: &SnapshotOptions,
    mut sink: Option<&mut dyn Sink>,
    limits: &Thresholds,
) -> Result<()> {
    let sections = options.sections;
    let demand = session.demand();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut previous: Option<Sample> = None;
    let mut engine = crate::findings::Engine::default();
    let mut printed = 0;
    while printed < options.count {
        let mut sample = match session.blocking_next() {
            Some(SamplerEvent::Sample(sample)) => *sample,
            Some(SamplerEvent::Error(error)) => bail!("{error}"),
            None => bail!("the sampler stopped unexpectedly"),
        };
        if let Some(sink) = sink.as_mut() {
            sink.write(previous.as_ref(), &mut sample)?;
        }
        if previous.is_none() && sections.conntrack && (options.json || sections.conntrack_entries)
        {
            // A one-shot ask: the printed samples carry the entry list. Set
            // after the baseline so the first printed sample is not held back
            // by the dump rate limit.
            demand.set_conntrack_entries(true);
        }
        if let Some(previous) = &previous {
            let found = engine.step(Some(previous), &sample, limits);
            let written = if options.json {
                let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut out);
                json::write_sample_line(
                    &mut buffered,
                    previous,
                    &sample,
                    sections,
                    &found,
                    &options.filter,
                )
                    .and_then(|()| buffered.flush())
            } else {
                let first = printed == 0;
                let filter = &options.filter;
                text::write_table(&mut out, previous, &sample, sections, first, &found, filter)
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
