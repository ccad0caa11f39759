//! The flow's packets through the nftables rules (`T`): each rule, return
//! and policy a packet met, as `nft monitor trace` prints it; before `T`,
//! what it does. Lines are wrapped to the pane.

use crate::app::flow_detail::FlowDetail;
use crate::ui::format::wrap;
use crate::ui::theme::Theme;
use ratatui::text::{Line, Span};

pub fn lines(detail: &FlowDetail, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let Some(trace) = &detail.trace else {
        return [
            "T traces this flow's packets through the nftables rules (nftrace), both",
            "directions: each rule, return and policy they meet, with its verdict.",
            "It adds a table, inet netlens_trace_PID, that marks only this flow's",
            "packets, and removes it on T again, Esc or quit. Needs CAP_NET_ADMIN;",
            "rules of the legacy iptables are not traced.",
        ]
        .into_iter()
        .map(|text| Line::raw(text.to_string()))
        .collect();
    };
    let seen = trace.lines();
    let mut out = Vec::new();
    if let Some(error) = &seen.error {
        out.push(Line::from(Span::styled(error.clone(), theme.warn())));
    }
    if let Some(table) = &seen.table {
        let mut head = format!("tracing in table inet {table}; T stops");
        if seen.dropped > 0 {
            head.push_str(&format!(" ({} older lines dropped)", seen.dropped));
        }
        out.push(Line::from(Span::styled(head, theme.header())));
        if seen.lines.is_empty() {
            out.push(Line::raw("no packet of the flow met a rule yet"));
        }
    }
    for line in &seen.lines {
        for part in wrap(line, width.max(20)) {
            out.push(Line::raw(part));
        }
    }
    out
}
