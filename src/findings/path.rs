//! path-loss and path-latency: where on a traced path (`netlens trace`, the
//! Path view) loss or latency comes from. Pure functions of a
//! `model::path::PathReport`, not of samples: the sampler does not trace,
//! so these are raised by the trace alone (and `export` never carries
//! them; see `ON_DEMAND`).
//!
//! A router answers probes addressed *through* it in its fast path, but
//! makes its own ICMP time exceeded in the slow path, often rate-limited
//! (net.ipv4.icmp_ratelimit). So loss or delay at one hop that later hops do
//! not show is that router's ICMP, not the path: only what persists to the
//! destination counts, as mtr's documentation teaches.

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::model::path::{Hop, PathReport};

pub const PATH_LOSS: &str = "path-loss";
pub const PATH_LATENCY: &str = "path-latency";

/// Findings raised only by an on-demand probe, never by a sample: no
/// exported series carries them, so no alerting rule is generated for them.
pub const ON_DEMAND: &[&str] = &[PATH_LOSS, PATH_LATENCY];

/// Both path findings, worst first.
pub fn evaluate(report: &PathReport, limits: &Thresholds) -> Vec<Finding> {
    let mut findings: Vec<Finding> = [path_loss(report, limits), path_latency(report, limits)]
        .into_iter()
        .flatten()
        .collect();
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.id.cmp(b.id)));
    findings
}

/// "hop 2 (198.18.2.1)": how findings and the Path view name a hop.
pub fn hop_name(hop: &Hop) -> String {
    match (hop.addr, &hop.name) {
        (Some(addr), Some(name)) => format!("hop {} ({name} {addr})", hop.ttl),
        (Some(addr), None) => format!("hop {} ({addr})", hop.ttl),
        (None, _) => format!("hop {}", hop.ttl),
    }
}

/// The hops that answered at least once, with enough probes to judge, up to
/// the destination. Silent hops (routers that never answer) are skipped:
/// they neither start nor break a run of loss.
fn judged<'a>(report: &'a PathReport, limits: &Thresholds) -> Vec<&'a Hop> {
    report
        .hops
        .iter()
        .filter(|h| h.received > 0 && h.sent >= limits.path_min_probes)
        .collect()
}

fn path_loss(report: &PathReport, limits: &Thresholds) -> Option<Finding> {
    let destination = report.destination()?;
    let warn = limits.path_loss_warn_percent;
    let loss = destination.loss_percent();
    if destination.sent < limits.path_min_probes || loss < warn || loss <= 0.0 {
        return None;
    }
    // Walk back from the destination while the hops lose as well: the loss
    // starts at the first hop of that unbroken run.
    let hops = judged(report, limits);
    let mut start = destination;
    for hop in hops.iter().rev().filter(|h| h.ttl < destination.ttl) {
        if hop.loss_percent() < warn {
            break;
        }
        start = hop;
    }
    let severity = if loss >= limits.path_loss_crit_percent {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let at = hop_name(start);
    let summary = if start.ttl == destination.ttl {
        format!(
            "{}: loss at the destination only, {at}: {loss:.0}% of {} probes",
            report.label(),
            destination.sent
        )
    } else {
        format!(
            "{}: loss starts at {at} ({:.0}% there) and persists to the destination ({loss:.0}% of {} probes)",
            report.label(),
            start.loss_percent(),
            destination.sent
        )
    };
    Some(Finding {
        hold: Hold::default(),
        id: PATH_LOSS,
        severity,
        summary,
        hint: format!(
            "the link into hop {} or that router drops packets: check its interface errors and \
             queues (or ask its operator with this report); loss at one hop that later hops do \
             not show is only its ICMP rate limit",
            start.ttl
        ),
        evidence: Evidence {
            netns: None,
            tab: "path",
            row: at,
        },
    })
}

fn path_latency(report: &PathReport, limits: &Thresholds) -> Option<Finding> {
    let hops = judged(report, limits);
    let last = hops.last()?;
    if report.reached && report.destination().is_some_and(|d| d.ttl != last.ttl) {
        // The destination itself is not judged yet (too few probes).
        return None;
    }
    // At each hop: the rise of its mean over the slowest hop before it,
    // counting only what every hop after it keeps (the smallest mean from
    // there on), so one slow ICMP answerer is no step.
    let mut best: Option<(&Hop, f64, f64, f64)> = None;
    for (i, hop) in hops.iter().enumerate() {
        let before = hops[..i]
            .iter()
            .filter_map(|h| h.avg_ms())
            .fold(0.0, f64::max);
        let kept = hops[i..]
            .iter()
            .filter_map(|h| h.avg_ms())
            .fold(f64::INFINITY, f64::min);
        let step = kept - before;
        if best.is_none_or(|(_, b, _, _)| step > b) {
            best = Some((hop, step, before, kept));
        }
    }
    let (hop, step, before, kept) = best?;
    if step < limits.path_latency_step_ms {
        return None;
    }
    let severity = if step >= limits.path_latency_crit_ms {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let at = hop_name(hop);
    Some(Finding {
        hold: Hold::default(),
        id: PATH_LATENCY,
        severity,
        summary: format!(
            "{}: latency steps up {step:.1} ms at {at}: mean RTT at most {before:.1} ms before it, \
             at least {kept:.1} ms from there to the end",
            report.label()
        ),
        hint: format!(
            "the link into hop {} or that router adds the delay (a long or congested link, a \
             queue: look for bufferbloat and its qdisc); a step at one hop that later hops do \
             not keep is only its slow ICMP",
            hop.ttl
        ),
        evidence: Evidence {
            netns: None,
            tab: "path",
            row: at,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::path::ProbeKind;
    use std::net::IpAddr;

    const D: Thresholds = Thresholds::DEFAULT;

    /// A path of hops given as (lost of 20, mean RTT in ms; None: silent).
    fn path(hops: &[Option<(u32, f64)>]) -> PathReport {
        let dst: IpAddr = format!("198.18.9.{}", hops.len()).parse().unwrap();
        let mut report = PathReport::new("t".into(), dst, Some(80), ProbeKind::Tcp);
        for (i, hop) in hops.iter().enumerate() {
            let ttl = i as u8 + 1;
            let addr: IpAddr = format!("198.18.9.{ttl}").parse().unwrap();
            let row = report.hop_mut(ttl);
            for n in 0..20 {
                match hop {
                    Some((lost, rtt)) if n >= *lost => row.answered(addr, *rtt),
                    _ => row.lost(),
                }
            }
        }
        report.reached = true;
        report
    }

    fn ids(report: &PathReport) -> Vec<(&'static str, String)> {
        evaluate(report, &D)
            .into_iter()
            .map(|f| (f.id, f.evidence.row))
            .collect()
    }

    #[test]
    fn loss_that_persists_names_the_hop_it_starts_at() {
        let lossy = path(&[
            Some((0, 1.0)),
            Some((6, 1.0)),
            Some((5, 1.0)),
            Some((7, 1.0)),
        ]);
        assert_eq!(ids(&lossy), [(PATH_LOSS, "hop 2 (198.18.9.2)".into())]);
        assert_eq!(evaluate(&lossy, &D)[0].severity, Severity::Crit);
        // A silent router inside the run neither starts nor breaks it.
        let silent = path(&[Some((0, 1.0)), Some((4, 1.0)), None, Some((3, 1.0))]);
        assert_eq!(ids(&silent), [(PATH_LOSS, "hop 2 (198.18.9.2)".into())]);
        assert_eq!(evaluate(&silent, &D)[0].severity, Severity::Warn);
    }

    #[test]
    fn loss_at_one_router_alone_is_its_icmp_limit_not_path_loss() {
        let limited = path(&[Some((15, 1.0)), Some((0, 1.0)), Some((0, 1.0))]);
        assert!(ids(&limited).is_empty());
        // Rate-limited at hop 1 and real loss from hop 3: named at hop 3.
        let both = path(&[
            Some((15, 1.0)),
            Some((0, 1.0)),
            Some((4, 1.0)),
            Some((4, 1.0)),
        ]);
        assert_eq!(ids(&both), [(PATH_LOSS, "hop 3 (198.18.9.3)".into())]);
        // An unreached destination says nothing of loss to it.
        let mut unreached = path(&[Some((0, 1.0)), Some((10, 1.0))]);
        unreached.reached = false;
        assert!(evaluate(&unreached, &D).iter().all(|f| f.id != PATH_LOSS));
    }

    #[test]
    fn a_latency_step_must_persist_to_the_end() {
        let step = path(&[
            Some((0, 0.5)),
            Some((0, 51.0)),
            Some((0, 50.5)),
            Some((0, 52.0)),
        ]);
        assert_eq!(ids(&step), [(PATH_LATENCY, "hop 2 (198.18.9.2)".into())]);
        assert_eq!(evaluate(&step, &D)[0].severity, Severity::Warn);
        // One router slow to make its ICMP: no step.
        let spike = path(&[Some((0, 0.5)), Some((0, 300.0)), Some((0, 1.0))]);
        assert!(ids(&spike).is_empty());
        let big = path(&[Some((0, 0.5)), Some((0, 1.0)), Some((0, 150.0))]);
        let found = evaluate(&big, &D);
        assert_eq!(
            (found[0].id, found[0].severity),
            (PATH_LATENCY, Severity::Crit)
        );
        assert_eq!(found[0].evidence.row, "hop 3 (198.18.9.3)");
    }
}
