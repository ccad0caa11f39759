//! The flow's findings, each with the evidence packets (marked "►") as
//! tcpdump lines, so the finding can be checked against the packets.

use super::timeline::strip_addresses;
use super::{fit, ms, rel};
use crate::app::flow_detail::FlowDetail;
use crate::model::capture::FlowSample;
use crate::ui::format;
use crate::ui::theme::Theme;
use ratatui::text::{Line, Span};

/// Evidence packets listed per finding at most (the first ones).
const EVIDENCE_SHOWN: usize = 12;

pub fn lines(
    detail: &FlowDetail,
    flow: &FlowSample,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let found = detail.findings();
    let earlier = detail.earlier_findings(flow);
    if found.is_empty() && earlier.is_empty() {
        return vec![Line::from(Span::styled(
            "no findings for this flow: no Nagle stall, retransmit, zero window, unanswered \
             SYN or reset after data in the packets seen",
            theme.dim(),
        ))];
    }
    let mut out = Vec::new();
    // The flow table analyses every packet of the flow; this screen only
    // the ones it kept, so older evidence is named but cannot be shown.
    for f in earlier {
        out.push(Line::from(Span::styled(f.id.clone(), theme.alert())));
        for chunk in format::wrap(&f.summary, width.saturating_sub(2).max(10)) {
            out.push(Line::from(format!("  {chunk}")));
        }
        out.push(Line::from(Span::styled(
            "  evidence: in the whole flow, before the packets this screen holds",
            theme.dim(),
        )));
        out.push(Line::from(""));
    }
    for f in &found {
        out.push(Line::from(Span::styled(f.id.clone(), theme.alert())));
        for chunk in format::wrap(&f.summary, width.saturating_sub(2).max(10)) {
            out.push(Line::from(format!("  {chunk}")));
        }
        let evidence = detail.analysis.evidence(&f.id);
        let kept: Vec<u32> = evidence
            .iter()
            .copied()
            .filter(|n| detail.packet(*n).is_some())
            .collect();
        out.push(Line::from(Span::styled(
            format!(
                "  evidence: {} packets{}",
                evidence.len(),
                if kept.len() < evidence.len() {
                    format!(" ({} no longer kept)", evidence.len() - kept.len())
                } else {
                    String::new()
                }
            ),
            theme.dim(),
        )));
        let mut previous_t: Option<f64> = None;
        for n in kept.iter().take(EVIDENCE_SHOWN) {
            let Some(p) = detail.packet(*n) else { continue };
            let delta =
                previous_t.map_or(String::new(), |t| format!("+{}", ms((p.t - t) * 1000.0)));
            previous_t = Some(p.t);
            let arrow = if p.from_client { "→" } else { "←" };
            let text = format!(
                "  ►{:>4} {} {:>8} {arrow} {}",
                p.n,
                rel(detail, p.t),
                delta,
                strip_addresses(&p.line)
            );
            out.push(Line::from(Span::styled(fit(&text, width), theme.warn())));
        }
        if kept.len() > EVIDENCE_SHOWN {
            out.push(Line::from(Span::styled(
                format!(
                    "  … and {} more (see Packets, marked *)",
                    kept.len() - EVIDENCE_SHOWN
                ),
                theme.dim(),
            )));
        }
        out.push(Line::from(""));
    }
    out
}
