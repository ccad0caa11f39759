//! `netlens read FILE [-f EXPR] [-c N] [--flows] [--json]`.

use crate::cli::ReadArgs;
use crate::model::capture::FlowSample;
use crate::packet::decode::summarize;
use crate::packet::filter::Filter;
use crate::packet::flows::FlowTable;
use crate::packet::format::Formatter;
use crate::packet::pcap::PcapReader;
use anyhow::Result;
use std::io::{BufWriter, Write};

/// A pcapng packet's comment (whose it was, as netlens writes it) after
/// its line, with the interface it names: "  # veth0 (namespace web):
/// pid 812 (nginx)". Lines of packets without one stay tcpdump's. The
/// file's text is escaped: it may come from anyone.
fn push_notes(line: &mut String, notes: &crate::packet::pcapng::PacketNotes) {
    let Some(comment) = &notes.comment else {
        return;
    };
    line.push_str("  # ");
    if let Some(name) = &notes.interface {
        line.push_str(&crate::text::escape_control(name));
        if let Some(description) = &notes.description {
            line.push_str(" (");
            line.push_str(&crate::text::escape_control(description));
            line.push(')');
        }
        line.push_str(": ");
    }
    line.push_str(&crate::text::escape_control(comment));
}

/// Flows kept when reading a file (about 70 MB): past it the least
/// recently active flow is evicted, and the output says how many were.
pub const READ_MAX_FLOWS: usize = 100_000;

pub fn run(args: &ReadArgs, limits: &crate::findings::Thresholds) -> Result<()> {
    let filter = match &args.filter {
        Some(text) => Some(Filter::parse(text)?),
        None => None,
    };
    let mut reader = crate::capture::pcap_file::open(&args.file)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut fmt = Formatter::new(crate::capture::HOST);
    let mut table = FlowTable::new(READ_MAX_FLOWS, f64::INFINITY);
    let mut buf = Vec::with_capacity(65536);
    let mut line = String::with_capacity(256);
    let mut matched = 0u64;
    let mut failure = None;
    let mut progress = Progress::new(&args.file, args.flows);
    loop {
        if args.count.is_some_and(|c| matched >= c) {
            break;
        }
        progress.tick(&reader);
        let record = match reader.next_into(&mut buf) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        let summary = summarize(record.linktype, &buf, record.orig_len);
        if let Some(f) = &filter
            && !f.matches(&summary, &buf)
        {
            continue;
        }
        matched += 1;
        if args.flows {
            table.add_packet(&summary, &buf, record.ts.as_secs_f64());
            continue;
        }
        line.clear();
        fmt.line(record.linktype, record.ts, &buf, record.orig_len, &mut line);
        push_notes(&mut line, &reader.notes());
        line.push('\n');
        if let Err(e) = out.write_all(line.as_bytes()) {
            return quiet_pipe(e);
        }
    }
    progress.clear();
    if args.flows {
        let mut flows: Vec<FlowSample> = table.flows().map(FlowSample::from).collect();
        flows.sort_by(|a, b| {
            a.first_seen
                .total_cmp(&b.first_seen)
                .then_with(|| a.src.cmp(&b.src))
                .then_with(|| a.dst.cmp(&b.dst))
        });
        let duration = flows
            .iter()
            .map(|f| f.last_seen)
            .fold(f64::NEG_INFINITY, f64::max)
            - flows
                .iter()
                .map(|f| f.first_seen)
                .fold(f64::INFINITY, f64::min);
        let flood = (duration > 0.0)
            .then(|| {
                crate::findings::small_packet_flood(
                    &args.file.display().to_string(),
                    table.packets as f64 / duration,
                    table.bytes as f64 / duration,
                    limits,
                    None,
                )
            })
            .flatten();
        let written = if args.json {
            flows.iter().try_for_each(|flow| {
                let json = crate::text::json::to_string(&FlowLine::from(flow))
                    .expect("flow JSON has only serializable fields");
                writeln!(out, "{json}")
            })
        } else {
            write_table(&mut out, &flows)
                .and_then(|()| {
                    for flow in &flows {
                        for f in &flow.findings {
                            writeln!(
                                out,
                                "finding {} {} > {}: {}",
                                f.id,
                                flow.src,
                                flow.dst,
                                crate::text::escape_control(&f.summary)
                            )?;
                        }
                    }
                    Ok(())
                })
                .and_then(|()| match &flood {
                    Some(f) => writeln!(
                        out,
                        "finding {} {}: {}",
                        f.severity.label(),
                        f.id,
                        crate::text::escape_control(&f.summary)
                    ),
                    None => Ok(()),
                })
        };
        let written = written.and_then(|()| match table.evicted {
            0 => Ok(()),
            evicted if args.json => writeln!(
                out,
                "{}",
                crate::text::json::to_string(
                    &serde_json::json!({ "evicted_flows": evicted, "max_flows": READ_MAX_FLOWS })
                )
                .unwrap_or_default()
            ),
            _ => Ok(()),
        });
        if let Err(e) = written {
            return quiet_pipe(e);
        }
        if table.evicted > 0 {
            eprintln!(
                "netlens: {}: {} flows evicted: the table keeps at most {READ_MAX_FLOWS}, \
                 dropping the least recently active; a flow seen again counts from then",
                args.file.display(),
                table.evicted
            );
        }
    }
    if let Err(e) = out.flush() {
        return quiet_pipe(e);
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn quiet_pipe(e: std::io::Error) -> Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e.into())
    }
}

/// One line of `read --flows --json`: the flow's counters and the
/// findings of its analysis (the owner is unknown in a file: omitted).
#[derive(serde::Serialize)]
struct FlowLine<'a> {
    proto: &'a str,
    src: &'a str,
    dst: &'a str,
    packets: u64,
    bytes: u64,
    state: &'a str,
    rtt_ms: Option<f64>,
    retransmits: u64,
    first_seen: f64,
    last_seen: f64,
    findings: &'a [crate::packet::analysis::FlowFinding],
}

impl<'a> From<&'a FlowSample> for FlowLine<'a> {
    fn from(f: &'a FlowSample) -> Self {
        Self {
            proto: &f.proto,
            src: &f.src,
            dst: &f.dst,
            packets: f.packets,
            bytes: f.bytes,
            state: &f.state,
            rtt_ms: f.rtt_ms,
            retransmits: f.retransmits,
            first_seen: f.first_seen,
            last_seen: f.last_seen,
            findings: &f.findings,
        }
    }
}

fn write_table(out: &mut impl Write, flows: &[FlowSample]) -> std::io::Result<()> {
    // Endpoint columns as wide as the widest endpoint, as ss sizes its
    // columns: an IPv4 table is not padded for IPv6 addresses.
    let width = flows
        .iter()
        .map(|f| f.src.len().max(f.dst.len()))
        .max()
        .unwrap_or(0)
        .max(3);
    writeln!(
        out,
        "{:<5} {:<width$} {:<width$} {:>8} {:>10} {:<11} {:>8} {:>6}",
        "PROTO", "SRC", "DST", "PACKETS", "BYTES", "STATE", "RTT_MS", "RETX"
    )?;
    for f in flows {
        let rtt = f.rtt_ms.map_or("-".to_string(), |r| format!("{r:.3}"));
        writeln!(
            out,
            "{:<5} {:<width$} {:<width$} {:>8} {:>10} {:<11} {:>8} {:>6}",
            f.proto, f.src, f.dst, f.packets, f.bytes, f.state, rtt, f.retransmits
        )?;
    }
    Ok(())
}

/// A progress line on stderr while a long read gives no other sign of life:
/// with --flows (nothing prints until the end) or with stdout redirected,
/// and only when stderr is a terminal.
struct Progress {
    file: String,
    shown: bool,
    on: bool,
    packets: u64,
    last: std::time::Instant,
}

impl Progress {
    const EVERY: std::time::Duration = std::time::Duration::from_millis(250);

    fn new(file: &std::path::Path, flows: bool) -> Self {
        use std::io::IsTerminal;
        Self {
            file: file.display().to_string(),
            shown: false,
            on: std::io::stderr().is_terminal() && (flows || !std::io::stdout().is_terminal()),
            packets: 0,
            last: std::time::Instant::now(),
        }
    }

    /// Called once per packet; looks at the clock every 64k packets.
    fn tick(&mut self, reader: &PcapReader) {
        self.packets += 1;
        if !self.on || !self.packets.is_multiple_of(65_536) || self.last.elapsed() < Self::EVERY {
            return;
        }
        self.last = std::time::Instant::now();
        self.shown = true;
        eprint!(
            "\rreading {}: {} packets, {:.0}%   ",
            self.file,
            self.packets,
            reader.fraction() * 100.0
        );
    }

    fn clear(&mut self) {
        if self.shown {
            eprint!("\r{:width$}\r", "", width = self.file.len() + 40);
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {

    /// A file's comment and interface name reach the terminal escaped;
    /// a packet without a comment keeps tcpdump's line.
    #[test]
    fn notes_follow_the_line_escaped() {
        use crate::packet::pcapng::PacketNotes;
        let mut line = String::from("IP 198.18.0.1 > 198.18.0.2");
        push_notes(&mut line, &PacketNotes::default());
        assert_eq!(line, "IP 198.18.0.1 > 198.18.0.2");
        let notes = PacketNotes {
            interface: Some("eth\u{1b}0".into()),
            description: Some("namespace web".into()),
            comment: Some("pid 1 (evil\u{1b}[2J)".into()),
        };
        push_notes(&mut line, &notes);
        assert_eq!(
            line,
            "IP 198.18.0.1 > 198.18.0.2  # eth\\x1b0 (namespace web): pid 1 (evil\\x1b[2J)"
        );
    }

    use super::*;

    #[test]
    fn flow_table_columns_fit_the_widest_endpoint() {
        let flow = |src: &str, dst: &str| FlowSample {
            proto: "tcp".into(),
            src: src.into(),
            dst: dst.into(),
            packets: 32,
            bytes: 2538,
            state: "CLOSED".into(),
            rtt_ms: Some(0.024),
            ..Default::default()
        };
        let mut out = Vec::new();
        let flows = [
            flow("198.18.9.1:50748", "198.18.9.2:9001"),
            flow("198.18.0.10:53", "198.18.0.2:40000"),
        ];
        write_table(&mut out, &flows).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "tcp   198.18.9.1:50748 198.18.9.2:9001        32       2538 CLOSED         0.024      0"
        );
        assert!(lines.iter().all(|l| l.len() < 90), "{text}");
        assert_eq!(lines[0].find("DST"), lines[1].find("198.18.9.2"));
    }
}
