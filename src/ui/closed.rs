//! The Sockets tab's Closed view (`c`): the connections that ended, as
//! bcc's tcplife lists them, newest first.
//!
//! ```text
//! Process     Local             Peer              Sent     Recv     How
//! curl/4242   198.18.0.1:40312  198.18.0.2:443    517 B    3.20 KiB fin
//! -           198.18.0.1:40314  198.18.0.2:9      0 B      0 B      refused
//! 12:00:01 198.18.0.1:40312 → 198.18.0.2:443 lived 1.2 s rtt 0.3 ms retr 0 fin
//! 2 closed (last 1000 kept) · 0 lost
//! ```
//! At 80 columns the table holds the process, the endpoints, the bytes and
//! the ending; wider panes add time, duration, rtt and retransmits.

use super::format;
use super::table;
use super::theme::Theme;
use crate::app::App;
use crate::app::closed::{CLOSED_COLUMNS, ClosedColumn, ClosedSpec, duration};
use crate::app::table::{CellText, Hint};
use crate::model::closed::{ClosedConn, Ending};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    let Some(index) = app.shown_index() else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    };
    let [table_area, info_area] = table_and_info(area);
    let status = status_text(app, index);
    let view = &mut app.sockets;
    let filter = view.filter.clone();
    let rows = view.closed.rows(&app.history, index, &filter).to_vec();
    let closed = &mut view.closed;
    closed.selected = closed.selected.min(rows.len().saturating_sub(1));
    let visible = table::visible_rows(table_area);
    closed
        .window
        .fit(Some(closed.selected), rows.len(), visible);
    let columns = table::fitting(CLOSED_COLUMNS, table_area.width, |_| true);
    let drawn = table::Drawn {
        sorted: Some(closed.sort),
        descending: closed.descending,
        selected: Some(closed.selected),
        offset: closed.window.offset,
        ..table::Drawn::new(columns, &[ClosedColumn::Local, ClosedColumn::Peer])
    };
    closed.on_screen = drawn.on_screen();
    let row = |i| rows.get(i);
    // A connection that did not end with a FIN stands out.
    let hint = |conn: &&ClosedConn| match conn.ending {
        Ending::Fin => Hint::Plain,
        _ => Hint::Warn,
    };
    let body = table::render(frame, table_area, drawn, row, text, hint, theme);
    if let Some(body_area) = body {
        app.hits.rows = Some((body_area, closed.window.offset));
        if rows.is_empty() {
            let note = if filter.is_empty() {
                "no TCP connection ended yet"
            } else {
                "no closed connection matches the filter"
            };
            table::render_empty_note(frame, body_area, note);
        }
    }
    render_info(frame, info_area, rows.get(closed.selected), &status);
}

/// A log view's table and, below it, two lines for the selected row and
/// the status (one in a short pane, none in a tiny one).
pub(super) fn table_and_info(area: Rect) -> [Rect; 2] {
    let info_height = match area.height {
        8.. => 2,
        4..=7 => 1,
        _ => 0,
    };
    Layout::vertical([Constraint::Min(0), Constraint::Length(info_height)]).areas(area)
}

/// The info lines: `selected` (the row in full) when there is room for
/// two, then `status`.
pub(super) fn render_info_lines(
    frame: &mut Frame,
    area: Rect,
    selected: Option<String>,
    status: &str,
) {
    if area.height == 0 {
        return;
    }
    let selected = selected.filter(|_| area.height >= 2);
    let lines: Vec<ratatui::text::Line> = selected
        .into_iter()
        .chain([status.to_string()])
        .map(Into::into)
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// A cell as its column's descriptor writes it, cut to the column's width.
fn text(conn: &&ClosedConn, spec: &ClosedSpec, width: u16) -> CellText {
    let mut text = (spec.cell)(conn, width);
    text.text = format::fit(&text.text, usize::from(width));
    text
}

/// The log's health at the shown sample: its error line, else the count
/// kept and the notifications lost.
fn status_text(app: &App, index: usize) -> String {
    let Some(log) = app.history.get(index).and_then(|s| s.closed.as_ref()) else {
        return "no connection log in this sample (a recording made before netlens kept one)"
            .to_string();
    };
    if let Some(error) = &log.error {
        return error.clone();
    }
    let mut text = format!(
        "closed connections, newest first (last {} kept) · {} lost",
        app.sockets.closed.limit, log.lost
    );
    if log.overflow > 0 {
        text.push_str(&format!(" · {} not kept this interval", log.overflow));
    }
    text
}

/// The selected connection in full (the table may have left columns out),
/// then the log's status.
fn render_info(frame: &mut Frame, area: Rect, selected: Option<&ClosedConn>, status: &str) {
    let selected = selected.map(|conn| {
        format!(
            "{} {} {} → {} lived {} rtt {:.2} ms retr {} {}",
            crate::clock::local_hms(conn.t),
            conn.pid()
                .map_or("-".to_string(), |p| format!("{}/{p}", conn.process())),
            conn.local,
            conn.peer,
            duration(conn.duration_s),
            f64::from(conn.rtt_us) / 1000.0,
            conn.retrans,
            conn.ending.name(),
        )
    });
    render_info_lines(frame, area, selected, status);
}
