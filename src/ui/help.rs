//! The help overlay, generated from the keymap table: every scope's keys,
//! flowed into two columns when there is room, scrolled with the movement
//! keys when it is taller than the pane.

use super::theme::Theme;
use crate::app::keymap::{BINDINGS, PROMPT_KEYS, SCOPES, key_label, keys_label};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Draws the help and returns the scroll offset actually used (clamped).
pub fn render(frame: &mut Frame, area: Rect, scroll: u16, theme: Theme) -> u16 {
    frame.render_widget(Clear, area);
    let lines = help_lines(theme);
    let two_columns = area.width >= 78;
    let per_column = if two_columns {
        lines.len().div_ceil(2)
    } else {
        lines.len()
    };
    let height = usize::from(area.height.saturating_sub(2));
    let max_scroll = per_column.saturating_sub(height) as u16;
    let scroll = scroll.min(max_scroll);
    let title = if max_scroll > 0 {
        " Keys (? or Esc closes, j/k scroll) "
    } else {
        " Keys (? or Esc closes) "
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if two_columns {
        let mut left = lines;
        let right = left.split_off(per_column);
        let [left_area, right_area] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .spacing(1)
                .areas(inner);
        frame.render_widget(Paragraph::new(left).scroll((scroll, 0)), left_area);
        frame.render_widget(Paragraph::new(right).scroll((scroll, 0)), right_area);
    } else {
        frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), inner);
    }
    scroll
}

fn help_lines(theme: Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for scope in SCOPES {
        lines.push(Line::from(Span::styled(scope.title(), theme.header())));
        for binding in BINDINGS.iter().filter(|b| b.scope == *scope) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<10}", keys_label(binding.keys)), theme.key()),
                Span::raw(binding.help),
            ]));
        }
        lines.push(Line::from(""));
    }
    lines.push(Line::from(Span::styled(
        "Typing (filter, target, probe, time)",
        theme.header(),
    )));
    for (key, help) in PROMPT_KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<10}", key_label(*key)), theme.key()),
            Span::raw(*help),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled("Mouse", theme.header())));
    lines.push(Line::from("  click a tab or a row to select it;"));
    lines.push(Line::from("  only with --mouse or mouse = true"));
    lines
}
