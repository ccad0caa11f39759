//! The help overlay, generated from the keymap table. Two columns when there
//! is room, so it fits 80x24.

use super::theme::Theme;
use crate::app::keymap::{BINDINGS, Scope, keys_label};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

pub fn render(frame: &mut Frame, area: Rect, theme: Theme) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Keys (? or Esc closes) ");
    let inner = block.inner(area);
    frame.render_widget(block, area);

    let mut global = scope_lines(Scope::Global, "Anywhere", theme);
    global.push(Line::from(""));
    global.push(Line::from(Span::styled("Mouse", theme.header())));
    global.push(Line::from("  click a tab or a row to select it;"));
    global.push(Line::from("  --no-mouse leaves it to the terminal"));
    let mut view = scope_lines(Scope::View, "In a table or detail", theme);
    view.push(Line::from(""));
    view.extend(scope_lines(Scope::Flows, "In Flows", theme));

    if inner.width >= 76 {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(inner);
        frame.render_widget(Paragraph::new(global), left);
        frame.render_widget(Paragraph::new(view), right);
    } else {
        global.extend(view);
        frame.render_widget(Paragraph::new(global), inner);
    }
}

fn scope_lines(scope: Scope, title: &'static str, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(title, theme.header()))];
    for binding in BINDINGS.iter().filter(|b| b.scope == scope) {
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<10}", keys_label(binding.keys)), theme.key()),
            Span::raw(binding.help),
        ]));
    }
    lines
}
