//! The findings list (`!`): every active finding, worst first, one line
//! each with where its evidence is; Enter goes there.

use super::format;
use super::theme::Theme;
use crate::app::App;
use crate::findings::Severity;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    frame.render_widget(Clear, area);
    let found = &app.derived.findings;
    let selected = app
        .findings_list
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
    let height = usize::from(inner.height).max(1);
    let first = selected.saturating_sub(height - 1);
    let width = usize::from(inner.width);
    let lines: Vec<Line> = found
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(index, finding)| {
            let style = match finding.severity {
                Severity::Crit => theme.alert(),
                Severity::Warn => theme.warn(),
                Severity::Info => theme.dim(),
            };
            // "> " marks the selection without colour; the line is cut to
            // the width, never wrapped.
            let marker = if index == selected { "> " } else { "  " };
            let head = format!("{marker}{} {}", finding.severity.label(), finding.id);
            let place = format!("  → {}: {}", finding.evidence.tab, finding.evidence.row);
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
    frame.render_widget(Paragraph::new(lines), inner);
}
