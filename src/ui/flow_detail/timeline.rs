//! The packet timeline: number, time since the first kept packet, Δt since
//! the flow's previous packet, direction, and the tcpdump line. A long gap
//! is marked "◆" with its length; evidence packets of a finding "*".

use super::{fit, ms, no_packets, rel};
use crate::app::flow_detail::FlowDetail;
use crate::ui::theme::Theme;
use ratatui::text::{Line, Span};

pub fn lines(detail: &FlowDetail, width: usize, theme: Theme) -> Vec<Line<'static>> {
    if detail.packets.is_empty() {
        return no_packets(theme);
    }
    let evidence = detail.evidence_packets();
    let mut out = vec![Line::from(Span::styled(
        fit(
            "     #  time      Δt       dir  packet (◆ long gap, * evidence)",
            width,
        ),
        theme.header(),
    ))];
    for (i, p) in detail.packets.iter().enumerate() {
        let gap = detail.long_gap(i);
        let delta = match i.checked_sub(1).and_then(|j| detail.packets.get(j)) {
            Some(before) => format!("+{}", ms((p.t - before.t) * 1000.0)),
            None => String::new(),
        };
        let mark = match (gap.is_some(), evidence.contains(&p.n)) {
            (true, true) => "◆*",
            (true, false) => "◆ ",
            (false, true) => " *",
            (false, false) => "  ",
        };
        let arrow = if p.from_client { "→" } else { "←" };
        let text = format!(
            "{mark}{:>4} {} {:>8} {arrow}  {}",
            p.n,
            rel(detail, p.t),
            delta,
            strip_addresses(&p.line)
        );
        let style = if gap.is_some() || evidence.contains(&p.n) {
            theme.warn()
        } else {
            ratatui::style::Style::new()
        };
        out.push(Line::from(Span::styled(fit(&text, width), style)));
    }
    out
}

/// "IP 1.2.3.4.5 > 6.7.8.9.10: Flags [S], ..." → "Flags [S], ...": the
/// arrow column already says which way it went.
pub fn strip_addresses(line: &str) -> &str {
    match line.find(": ") {
        Some(at) if line.starts_with("IP") => &line[at + 2..],
        _ => line,
    }
}
