//! The findings list (`!`): every active finding, worst first, one line
//! each with where its evidence is, and the selected one whole below the
//! list; Enter goes there.

use super::theme::Theme;
use super::{chrome, format};
use crate::app::App;
use crate::findings::Finding;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    frame.render_widget(Clear, area);
    let found = &app.derived.findings;
    let selected = app
        .findings_list()
        .map_or(0, |l| l.selected)
        .min(found.len().saturating_sub(1));
    let title = if area.width >= 44 {
        " Findings (Enter: evidence, Esc closes) "
    } else {
        " Findings "
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if found.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled("no findings", theme.dim())),
            inner,
        );
        return;
    }
    let width = usize::from(inner.width);
    // The selected finding whole (wrapped) under the list, so nothing of
    // it is lost to the width: summary, fix and where the evidence is.
    let mut detail = vec![Line::from(Span::styled("─".repeat(width), theme.dim()))];
    let current = app.shown().1;
    detail.extend(whole(&found[selected], width, theme, current));
    // The list keeps at least 3 rows (or all it has); the detail the rest.
    let list_rows = found.len().min(
        usize::from(inner.height)
            .saturating_sub(detail.len())
            .max(3),
    );
    let [list_area, detail_area] =
        Layout::vertical([Constraint::Length(list_rows as u16), Constraint::Min(0)]).areas(inner);
    let height = list_rows.max(1);
    let first = selected.saturating_sub(height - 1);
    let lines: Vec<Line> = found
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(index, finding)| {
            let style = chrome::severity_style(finding, theme);
            // "> " marks the selection without colour; the line is cut to
            // the width (the selected one shows whole below).
            let marker = if index == selected { "> " } else { "  " };
            let head = format!("{marker}{}", chrome::label(finding));
            let place = format!(
                "  → {}{}: {}",
                finding.evidence.tab,
                namespace_of(finding, current),
                finding.evidence.row
            );
            let rest = width.saturating_sub(head.chars().count() + place.chars().count() + 2);
            let mut spans = vec![
                Span::styled(head, style),
                Span::raw(format!(": {}", format::fit(&finding.summary, rest))),
                Span::styled(place, theme.dim()),
            ];
            if index == selected {
                spans = spans
                    .into_iter()
                    .map(|s| s.patch_style(theme.selected()))
                    .collect();
            }
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list_area);
    frame.render_widget(Paragraph::new(detail), detail_area);
}

/// " in NS" (its container, else its label) for a finding about a socket,
/// process or interface of a sample that holds several namespaces
/// (--all-netns); "" otherwise.
fn namespace_of(finding: &Finding, sample: Option<&crate::model::Sample>) -> String {
    match (finding.evidence.netns, sample) {
        (Some(id), Some(sample)) if sample.many_namespaces() => {
            format!(" in {}", super::sockets::netns_cell(sample, id, 16))
        }
        _ => String::new(),
    }
}

/// A finding whole, wrapped to `width`: its label and summary, the fix and
/// where the evidence is (in which namespace, when `sample` holds several),
/// continuation lines indented under the text.
pub fn whole(
    finding: &Finding,
    width: usize,
    theme: Theme,
    sample: Option<&crate::model::Sample>,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut add = |head: String, text: &str, style| {
        let indent = head.chars().count();
        let parts = format::wrap(text, width.saturating_sub(indent).max(8));
        for (i, part) in parts.into_iter().enumerate() {
            let lead = if i == 0 {
                head.clone()
            } else {
                " ".repeat(indent)
            };
            lines.push(Line::from(vec![Span::styled(lead, style), Span::raw(part)]));
        }
    };
    add(
        format!("{}: ", chrome::label(finding)),
        &finding.summary,
        chrome::severity_style(finding, theme),
    );
    add("  fix: ".into(), &finding.hint, theme.key());
    add(
        "  evidence: ".into(),
        &format!(
            "{} tab{}, {}",
            finding.evidence.tab,
            namespace_of(finding, sample),
            finding.evidence.row
        ),
        theme.dim(),
    );
    lines
}
