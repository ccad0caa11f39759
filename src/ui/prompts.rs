//! The line the htop keys take over the footer (or the compact status
//! line) with: the setup screen's keys, F9's y/N question, F3's search
//! prompt, and the outcome of the last kill or search.

use super::theme::Theme;
use crate::app::App;
use crate::app::keymap::{BINDINGS, Scope, keys_label};
use ratatui::text::{Line, Span};

/// The line to show instead of the usual footer, if any.
pub fn line(app: &App, theme: Theme) -> Option<Line<'static>> {
    if app.setup().is_some() {
        let mut spans = vec![Span::styled("Up/Down", theme.key()), Span::raw(" select ")];
        for binding in BINDINGS.iter().filter(|b| b.scope == Scope::Setup) {
            if let Some(hint) = binding.hint {
                spans.push(Span::styled(keys_label(binding.keys), theme.key()));
                spans.push(Span::raw(format!(" {hint} ")));
            }
        }
        return Some(Line::from(spans));
    }
    if let Some(kill) = app.kill_prompt() {
        return Some(Line::from(vec![
            Span::styled(kill.question.clone(), theme.alert()),
            Span::raw(" y/N"),
        ]));
    }
    if app.searching() {
        let (text, failed) = app.search_text();
        let mut spans = vec![
            Span::styled("search: ", theme.key()),
            Span::raw(format!("{text}▏")),
        ];
        if failed {
            spans.push(Span::styled(" not found", theme.warn()));
        }
        spans.push(Span::styled("  F3 next  Enter/Esc done", theme.dim()));
        return Some(Line::from(spans));
    }
    app.status()
        .map(|status| Line::from(Span::styled(status.to_string(), theme.warn())))
}
