//! The Sockets tab's Failed view (`c` twice): what failed, for whom and
//! where to, grouped, most frequent first.
//!
//! ```text
//! Kind          Process          Destination             Count     /s Last
//! refused       curl/4242        198.18.0.2:81              12    2.0 12:00:03
//! unreachable   curl/4242        198.18.0.77:80              1    0.0 12:00:01
//! dns-nxdomain  -                nosuch.test A @198.18.…     3    0.5 12:00:02
//! refused: 12 times, 2.0/s, 12:00:01-12:00:03, curl/4242 → 198.18.0.2:81
//! failed connections and DNS queries since 12:00:00 · 3 groups
//! ```
//! At 80 columns: kind, process, destination, count, rate and last time;
//! wider panes add the container and the first time; at 40 the kind, the
//! destination and the count.

use super::format;
use super::table;
use super::theme::Theme;
use crate::app::App;
use crate::app::failed::{FAILED_COLUMNS, FailedColumn, FailedRow, FailedSpec};
use crate::app::table::{CellText, Hint};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    let Some(index) = app.shown_index() else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    };
    let [table_area, info_area] = super::closed::table_and_info(area);
    let log_error = app
        .history
        .get(index)
        .map(|s| s.closed.as_ref().and_then(|c| c.error.clone()));
    let view = &mut app.sockets;
    let filter = view.filter.clone();
    let rows = view.failed.rows(&app.history, index, &filter).to_vec();
    let failed = &mut view.failed;
    failed.selected = failed.selected.min(rows.len().saturating_sub(1));
    let visible = table::visible_rows(table_area);
    failed
        .window
        .fit(Some(failed.selected), rows.len(), visible);
    let columns = table::fitting(FAILED_COLUMNS, table_area.width, |_| true);
    let drawn = table::Drawn {
        sorted: Some(failed.sort),
        descending: failed.descending,
        selected: Some(failed.selected),
        offset: failed.window.offset,
        ..table::Drawn::new(columns, &[FailedColumn::Destination])
    };
    failed.on_screen = drawn.on_screen();
    let row = |i| rows.get(i);
    // Still failing in the shown interval stands out.
    let hint = |row: &&FailedRow| match row.counts.recent {
        0 => Hint::Plain,
        _ => Hint::Warn,
    };
    let body = table::render(frame, table_area, drawn, row, text, hint, theme);
    if let Some(body_area) = body {
        app.hits.rows = Some((body_area, failed.window.offset));
        if rows.is_empty() {
            let note = if !filter.is_empty() {
                "no failed connection matches the filter"
            } else if let Some(Some(error)) = &log_error {
                error.as_str()
            } else {
                "no connection failed and no DNS query went unanswered"
            };
            table::render_empty_note(frame, body_area, note);
        }
    }
    let status = status_text(&rows, failed.since, failed.overflow(), &filter);
    render_info(frame, info_area, rows.get(failed.selected), &status);
}

/// A cell as its column's descriptor writes it, cut to the column's width.
fn text(row: &&FailedRow, spec: &FailedSpec, width: u16) -> CellText {
    let mut text = (spec.cell)(row, width);
    text.text = format::fit(&text.text, usize::from(width));
    text
}

fn status_text(rows: &[FailedRow], since: Option<f64>, overflow: u64, filter: &str) -> String {
    let since = since.map_or(String::new(), |t| {
        format!(" since {}", crate::clock::local_hms(t))
    });
    let what = if filter.is_empty() {
        "failed connections and DNS queries"
    } else {
        "failed connections (filtered)"
    };
    let mut text = format!("{what}{since} · {} groups", rows.len());
    if overflow > 0 {
        text.push_str(&format!(" · {overflow} more in groups not kept"));
    }
    text
}

/// The selected group in full (the table may have left columns out), then
/// the status.
fn render_info(frame: &mut Frame, area: Rect, selected: Option<&FailedRow>, status: &str) {
    let selected = selected.map(|row| {
        let container = row
            .key
            .container
            .as_ref()
            .map_or(String::new(), |c| format!(" in {c}"));
        format!(
            "{}: {} times, {}/s, {}-{}, {}{container} → {}",
            row.key.kind.name(),
            row.counts.count,
            format::rate(row.rate),
            crate::clock::local_hms(row.counts.first_seen),
            crate::clock::local_hms(row.counts.last_seen),
            row.process(),
            row.destination(),
        )
    });
    super::closed::render_info_lines(frame, area, selected, status);
}
