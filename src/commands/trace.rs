//! `netlens trace HOST[:PORT]`: the path hop by hop, as `mtr --report`
//! prints it (or one JSON object with --json), with the path findings.

use crate::cli::{CollectArgs, TraceArgs};
use crate::findings::{Finding, Thresholds};
use crate::model::path::{Hop, PathReport, ProbeKind};
use crate::path::{Prober, TraceOptions, destination};
use crate::text::escape_control;
use crate::ui::spark::spark;
use anyhow::Result;
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// traceroute's defaults: TCP to the web port, UDP to 33434 (where its
/// classic probes start, a port nothing listens on).
const TCP_PORT: u16 = 80;
const UDP_PORT: u16 = 33434;

/// Rounds when neither --count nor --duration is given.
const DEFAULT_COUNT: u32 = 10;

pub fn run(collect: &CollectArgs, args: &TraceArgs, limits: &Thresholds) -> Result<()> {
    let options = options(collect, args)?;
    let prober = Prober::start(options)?;
    let report = prober.wait(&AtomicBool::new(false));
    let findings = crate::findings::path::evaluate(&report, limits);
    let text = if args.json {
        crate::text::json::to_string(&Json::new(&report, &findings))? + "\n"
    } else {
        table(&report, &findings)
    };
    super::stdout::print(text)?;
    match &report.error {
        Some(error) => anyhow::bail!("{error}"),
        None => Ok(()),
    }
}

/// The prober's options from the command line.
pub fn options(collect: &CollectArgs, args: &TraceArgs) -> Result<TraceOptions> {
    let kind = if args.udp {
        ProbeKind::Udp
    } else if args.icmp {
        ProbeKind::Icmp
    } else {
        ProbeKind::Tcp
    };
    let dest = destination::parse(&args.destination)?;
    let default_port = if kind == ProbeKind::Udp {
        UDP_PORT
    } else {
        TCP_PORT
    };
    Ok(TraceOptions {
        target: dest.host,
        addr: dest.addr,
        port: args.port.or(dest.port).unwrap_or(default_port),
        kind,
        max_ttl: args.max_ttl,
        count: match (args.count, args.duration) {
            (None, None) => Some(DEFAULT_COUNT),
            (count, _) => count,
        },
        duration: args.duration,
        rate: args.rate,
        timeout: args.timeout,
        interval: collect.interval,
        netns: collect.target(),
        resolve: args.resolve,
    })
}

/// The JSON object: the report with each hop's derived figures.
#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    report: &'a PathReport,
    hop_figures: Vec<HopFigures>,
    findings: &'a [Finding],
}

#[derive(Serialize)]
struct HopFigures {
    ttl: u8,
    loss_percent: f64,
    avg_ms: Option<f64>,
    stddev_ms: Option<f64>,
}

impl<'a> Json<'a> {
    fn new(report: &'a PathReport, findings: &'a [Finding]) -> Self {
        Json {
            report,
            hop_figures: report
                .hops
                .iter()
                .map(|h| HopFigures {
                    ttl: h.ttl,
                    loss_percent: h.loss_percent(),
                    avg_ms: h.avg_ms(),
                    stddev_ms: h.stddev_ms(),
                })
                .collect(),
            findings,
        }
    }
}

/// The mtr --report style table, then the findings.
pub fn table(report: &PathReport, findings: &[Finding]) -> String {
    let named = match report.target == report.addr.to_string() {
        true => String::new(),
        false => format!("{} = ", report.target),
    };
    let mut out = format!(
        "netlens trace {named}{}, netns {}: {} rounds, {}\n",
        report.label(),
        escape_control(&report.netns),
        report.rounds,
        if report.reached {
            "destination reached"
        } else {
            "destination not reached"
        }
    );
    out.push_str(&format!(
        "{:>3}  {:<24} {:>6} {:>5} {:>7} {:>7} {:>7} {:>7} {:>6}  {}\n",
        "HOP", "HOST", "LOSS%", "SENT", "LAST", "AVG", "BEST", "WORST", "STDEV", "RECENT"
    ));
    for hop in &report.hops {
        out.push_str(&row(hop));
        out.push('\n');
    }
    if findings.is_empty() {
        out.push_str("findings: none\n");
    }
    for finding in findings {
        out.push_str(&format!(
            "{} {}: {}\n    fix: {}\n",
            finding.severity.label(),
            finding.id,
            escape_control(&finding.summary),
            escape_control(&finding.hint)
        ));
    }
    out
}

fn row(hop: &Hop) -> String {
    let [host, loss, sent, last, avg, best, worst, stddev] = hop.columns();
    // A hop's name is its PTR record: whoever runs that DNS zone chose it.
    let host = escape_control(&host);
    let recent: Vec<f64> = hop.recent_ms.iter().copied().collect();
    let mut line = format!(
        "{:>3}. {host:<24} {loss:>6} {sent:>5} {last:>7} {avg:>7} {best:>7} {worst:>7} {stddev:>6}  {}",
        hop.ttl,
        spark(&recent, 16)
    );
    if let Some(why) = hop.unreachable {
        line.push_str(&format!("  ({why})"));
    }
    for other in &hop.other_addrs {
        line.push_str(&format!("\n     also {other}"));
    }
    line.trim_end().to_string()
}
