//! Output for scripts: `snapshot` as JSON Lines or a sar-like table.

pub mod closed;
mod cpu;
pub mod dns;
pub mod drops;
pub mod firewall;
pub mod flows;
pub mod json;
pub mod netns;
pub mod processes;
pub mod sockets;
pub mod text;

use crate::dns::reverse::ReverseNames;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::session::stop::Stop;
use crate::session::{Session, Sink};
use anyhow::Result;
use std::collections::HashMap;
use std::io::Write;
use std::net::IpAddr;

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

/// The addresses a sample shows, for --resolve: the sockets' ends and
/// the flows' (unspecified and loopback addresses left out), each once.
pub fn addresses(sample: &Sample) -> Vec<IpAddr> {
    let mut out = std::collections::BTreeSet::new();
    for socket in &sample.sockets {
        out.insert(socket.local.ip().to_canonical());
        out.insert(socket.peer.ip().to_canonical());
    }
    for flow in sample.capture.iter().flat_map(|c| &c.flows) {
        for end in [&flow.src, &flow.dst] {
            if let Ok(addr) = end.parse::<std::net::SocketAddr>() {
                out.insert(addr.ip().to_canonical());
            }
        }
    }
    out.into_iter()
        .filter(|ip| !ip.is_unspecified() && !ip.is_loopback())
        .collect()
}

/// The JSON line with `"names": {"ADDRESS": "NAME", ...}` added (--resolve).
fn with_names(line: String, names: Option<&HashMap<IpAddr, String>>) -> String {
    let Some(names) = names else { return line };
    let Ok(serde_json::Value::Object(mut object)) = serde_json::from_str(&line) else {
        return line;
    };
    let sorted: std::collections::BTreeMap<String, &String> = names
        .iter()
        .map(|(ip, name)| (ip.to_string(), name))
        .collect();
    object.insert("names".into(), serde_json::json!(sorted));
    let object = serde_json::Value::Object(object);
    crate::text::json::to_string(&object).unwrap_or(line)
}

/// The text table's "Names" section (--resolve): address and name.
fn write_names(
    out: &mut impl Write,
    names: Option<&HashMap<IpAddr, String>>,
) -> std::io::Result<()> {
    let Some(names) = names else { return Ok(()) };
    let sorted: std::collections::BTreeMap<&IpAddr, &String> = names.iter().collect();
    writeln!(out, "Names ({} of the addresses shown)", sorted.len())?;
    for (ip, name) in sorted {
        writeln!(out, "  {ip:<39} {}", crate::text::escape_control(name))?;
    }
    Ok(())
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
/// (and written to `sink`, a recording, with the baseline), until `stop`
/// sees a stop signal.
pub fn snapshot(
    session: &mut Session,
    options: &SnapshotOptions,
    (mut sink, names): (Option<&mut dyn Sink>, Option<&ReverseNames>),
    limits: &Thresholds,
    stop: &mut Stop,
) -> Result<()> {
    let sections = options.sections;
    let demand = session.demand();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut previous: Option<Sample> = None;
    let mut engine = crate::findings::Engine::default();
    let mut printed = 0;
    while printed < options.count {
        // SIGINT, SIGTERM or SIGHUP: stop here; the caller closes the
        // recording.
        let Some(mut sample) = stop.next_sample(session)? else {
            break;
        };
        if let Some(sink) = sink.as_mut() {
            sink.write(previous.as_ref(), &mut sample)?;
        }
        let entries = sections.conntrack && (options.json || sections.conntrack_entries);
        // The flows' JSON names each translated flow's conntrack entry.
        let nat = sections.flows && options.json;
        if previous.is_none() && (entries || nat) {
            // A one-shot ask: the printed samples carry the entry list. Set
            // after the baseline so the first printed sample is not held back
            // by the dump rate limit.
            demand.set_conntrack_entries(true);
        }
        if let Some(previous) = &previous {
            let found = engine.step(Some(previous), &sample, limits);
            let named = names.map(|n| n.wait_for(&addresses(&sample), n.options.timeout));
            // `host:NAME` matches the names found for this sample.
            let filter = crate::model::filter::Where {
                expr: &options.filter,
                names: named.as_ref(),
            };
            let written = if options.json {
                match named.as_ref() {
                    // Names are added to the parsed line: a --resolve run
                    // is small enough to hold as one value.
                    Some(names) => {
                        let mut line = Vec::new();
                        json::write_sample_line(
                            &mut line, previous, &sample, sections, &found, filter,
                        )
                        .and_then(|()| {
                            let line = String::from_utf8_lossy(&line);
                            writeln!(
                                out,
                                "{}",
                                with_names(line.trim_end().to_string(), Some(names))
                            )
                        })
                    }
                    None => {
                        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut out);
                        json::write_sample_line(
                            &mut buffered,
                            previous,
                            &sample,
                            sections,
                            &found,
                            filter,
                        )
                        .and_then(|()| buffered.flush())
                    }
                }
            } else {
                let first = printed == 0;
                text::write_table(&mut out, previous, &sample, sections, first, &found, filter)
                    .and_then(|()| write_names(&mut out, named.as_ref()))
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
