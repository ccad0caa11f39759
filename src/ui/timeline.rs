//! The replay timeline: play state, speed, clock, a position bar (with a
//! ! where a finding starts) and the replay keys; or the prompt for a time to jump to.

use super::theme::Theme;
use crate::app::App;
use crate::app::keymap::{BINDINGS, Scope, key_label};
use crate::record::time;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// "0.25x", "2x".
pub fn speed(speed: f64) -> String {
    if speed.fract() == 0.0 {
        format!("{speed:.0}x")
    } else {
        format!("{speed}x")
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    if let Some(text) = app.time_prompt() {
        let line = Line::from(vec![
            Span::styled("jump to: ", theme.key()),
            Span::raw(crate::app::line_edit::shown(text)),
            Span::styled(
                "  14:05[:30] clock, +30s/-5m from here, 10m from the start  Enter go  Esc cancel",
                theme.dim(),
            ),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let Some(player) = app.replay.as_mut() else {
        return;
    };
    let (start, end) = (player.start_t(), player.end_t());
    let now = player.current_t().unwrap_or(start);
    let (position, total) = player.position();
    let offset = player.utc_offset;
    let state = if player.playing { "▶" } else { "‖" };
    let left = format!(
        "{state} {:>5} {} ",
        speed(player.speed),
        time::clock(now, offset)
    );
    let right = format!(
        " {} {}/{} #{}/{}",
        time::clock(end, offset),
        time::span(now - start),
        time::span(end - start),
        position + 1,
        total
    );
    let mut hints = Vec::new();
    for binding in BINDINGS.iter().filter(|b| b.scope == Scope::Replay) {
        if let Some(hint) = binding.hint {
            let keys: Vec<String> = binding.keys.iter().map(|k| key_label(*k)).collect();
            hints.push(Span::styled(format!(" {}", keys.join("/")), theme.key()));
            hints.push(Span::raw(format!(" {hint}")));
        }
    }
    let hints_width: usize = hints.iter().map(|s| s.content.chars().count()).sum();
    let fixed = left.chars().count() + right.chars().count();
    let width = usize::from(area.width);
    let (bar_width, show_hints) = if width >= fixed + hints_width + 12 {
        (width - fixed - hints_width, true)
    } else {
        (width.saturating_sub(fixed), false)
    };
    let mut spans = vec![Span::styled(left, theme.header())];
    if bar_width >= 3 {
        let at = |t: f64| -> usize {
            let fraction = if end > start {
                ((t - start) / (end - start)).clamp(0.0, 1.0)
            } else {
                1.0
            };
            ((bar_width - 1) as f64 * fraction).round() as usize
        };
        let marker = at(now);
        // "!" where a finding starts (a glyph, not only a colour).
        let mut marked = vec![false; bar_width];
        for t in app.finding_marks() {
            marked[at(*t)] = true;
        }
        for (cell, mark) in marked.iter().enumerate() {
            let (glyph, style) = match cell {
                _ if cell == marker => ("●", theme.title()),
                _ if *mark => ("!", theme.alert()),
                _ if cell < marker => ("━", theme.good()),
                _ => ("─", theme.dim()),
            };
            spans.push(Span::styled(glyph, style));
        }
    }
    spans.push(Span::raw(right));
    if show_hints {
        spans.extend(hints);
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
