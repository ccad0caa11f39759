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
    let two_columns = area.width >= 78;
    // The inner width of one column: a text too long for it wraps under
    // itself instead of being cut.
    let inner_width = usize::from(area.width.saturating_sub(2));
    let column_width = if two_columns {
        inner_width.saturating_sub(1) / 2
    } else {
        inner_width
    };
    let lines = help_lines(theme, column_width);
    let mut per_column = if two_columns {
        lines.len().div_ceil(2)
    } else {
        lines.len()
    };
    // A wrapped entry stays in one column: its continuation lines follow it.
    while lines.get(per_column).is_some_and(is_continuation) {
        per_column += 1;
    }
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

fn help_lines(theme: Theme, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for scope in SCOPES {
        lines.push(Line::from(Span::styled(scope.title(), theme.header())));
        for binding in BINDINGS.iter().filter(|b| b.scope == *scope) {
            key_lines(
                &mut lines,
                &keys_label(binding.keys),
                binding.help,
                width,
                theme,
            );
        }
        lines.push(Line::from(""));
    }
    lines.push(Line::from(Span::styled(
        "Typing (filter, target, probe, time)",
        theme.header(),
    )));
    for (key, help) in PROMPT_KEYS {
        key_lines(&mut lines, &key_label(*key), help, width, theme);
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled("Mouse", theme.header())));
    lines.push(Line::from("  click a tab or a row to select it;"));
    lines.push(Line::from("  only with --mouse or mouse = true"));
    lines
}

/// A line of an entry's text wrapped under it (the key column blank).
fn is_continuation(line: &Line) -> bool {
    line.spans
        .first()
        .is_some_and(|span| span.content.len() == KEY_INDENT && span.content.trim().is_empty())
}

/// Where an entry's text starts, past its key.
const KEY_INDENT: usize = 12;

/// A key and what it does, the text wrapped under itself (indented past the
/// key) when the column is too narrow for it.
fn key_lines(lines: &mut Vec<Line<'static>>, keys: &str, help: &str, width: usize, theme: Theme) {
    const INDENT: usize = KEY_INDENT;
    let wrapped = super::format::wrap(help, width.saturating_sub(INDENT).max(8));
    // Keys too long for their room ("Space Enter") get a line of their own.
    let own_line = keys.chars().count() >= INDENT - 2;
    if own_line {
        lines.push(Line::from(Span::styled(format!("  {keys}"), theme.key())));
    }
    for (i, text) in wrapped.into_iter().enumerate() {
        let label = if i == 0 && !own_line {
            format!("  {keys:<10}")
        } else {
            " ".repeat(INDENT)
        };
        lines.push(Line::from(vec![
            Span::styled(label, theme.key()),
            Span::raw(text),
        ]));
    }
}
