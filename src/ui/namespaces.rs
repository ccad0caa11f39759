//! The Namespaces tab ("NS"): which namespace or container is busy.
//!
//! ```text
//! NAMESPACE      rx/s       tx/s rxpk/s txpk/s ESTAB LSTN   TW retr/s FIND
//! host        1.20 KiB/s  800 B/s    9.0    7.0     3    2    0    0.0    0
//! » web-1     9.78 MiB/s 120 KiB/s 7000.0 3500.0    1    1    0    0.0    1
//! web-1 (podman:web-1) net:[4026532288] pid 4242
//! host peer veth1a: rx 9.78 MiB/s tx 120 KiB/s; retr 0.0/s, drop 0.0/s
//! TCP 1 estab, 1 listen, 0 time-wait, 0 other; 2 UDP; conntrack 4; 1 finding
//! Enter: scope every tab to it (u or Esc: every namespace again)
//! ```
//!
//! "»" marks the namespace the tabs are scoped to.

use super::format::{self, fit, per_s};
use super::table;
use super::theme::Theme;
use crate::app::App;
use crate::app::namespaces::{COLUMNS, Column, ColumnSpec, NsRow, conntrack_count};
use crate::app::view::Shown;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    let Some(index) = app.shown_index() else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    };
    // Not app.shown_view(): that borrows all of App, the view is mutated.
    let shown = Shown {
        history: &app.history,
        index: Some(index),
    };
    let all = shown.current().is_some_and(|s| !s.namespaces.is_empty());
    let rows = app.namespaces.rows(&shown).to_vec();
    let selected = app.namespaces.selected_index();
    let scoped = app.scope().map(|s| s.id);
    let info_height = match area.height {
        16.. => 4,
        12..=15 => 3,
        8..=11 => 2,
        _ => 0,
    };
    let [table_area, info_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(info_height)]).areas(area);
    let view = &mut app.namespaces;
    view.window
        .fit(selected, rows.len(), table::visible_rows(table_area));
    let columns = table::fitting(COLUMNS, table_area.width, |_| true);
    let drawn = table::Drawn {
        sorted: view.sort,
        descending: view.descending,
        selected,
        offset: view.window.offset,
        ..table::Drawn::new(columns, &[Column::Label])
    };
    view.on_screen = drawn.on_screen();
    let offset = drawn.offset;
    let row = |i| rows.get(i);
    let mark = |row: &&NsRow, spec: &ColumnSpec, width| {
        (spec.cell)(row, width, scoped == Some(row.info.id))
    };
    if let Some(body_area) = table::render(frame, table_area, drawn, row, mark, table::plain, theme)
    {
        app.hits.rows = Some((body_area, offset));
        if rows.is_empty() {
            table::render_empty_note(frame, body_area, "no namespace matches the filter");
        }
    }
    let mut lines: Vec<String> = selected
        .and_then(|i| rows.get(i))
        .map(|row| summary(row).to_vec())
        .unwrap_or_default();
    lines.push(if all {
        "Enter: scope every tab to it (u or Esc: every namespace again)".into()
    } else {
        "one namespace: netlens --all-netns (as root) lists every namespace".into()
    });
    // The hint line is the last to go when the pane is short.
    let keep = usize::from(info_area.height);
    if lines.len() > keep {
        lines.drain(keep.saturating_sub(1)..lines.len() - 1);
        lines.truncate(keep);
    }
    let lines: Vec<Line> = lines
        .iter()
        .map(|text| Line::raw(fit(text, usize::from(info_area.width))))
        .collect();
    frame.render_widget(Paragraph::new(lines), info_area);
}

/// The selected namespace in three lines: who it is; its host-side peers
/// and stack counters; its sockets by state, conntrack and findings (what
/// the narrow table leaves out).
pub fn summary(row: &NsRow) -> [String; 3] {
    let info = &row.info;
    let r = &row.rates;
    let mut who = info.display();
    if info.inode != 0 {
        who.push_str(&format!(" net:[{}]", info.inode));
    }
    if let Some(pid) = info.pid {
        who.push_str(&format!(" pid {pid}"));
    }
    let peers = if r.host_peers.is_empty() {
        "no host-side veth peer".to_string()
    } else {
        format!(
            "host peer {}: rx {} tx {}",
            r.host_peers.join(","),
            per_s(r.peer_rx_bytes),
            per_s(r.peer_tx_bytes)
        )
    };
    let counters = format!(
        "{peers}; retr {}/s, drop {}/s",
        format::rate(r.retrans),
        format::rate(r.drops)
    );
    let plural = if row.findings == 1 { "" } else { "s" };
    let states = format!(
        "TCP {} estab, {} listen, {} time-wait, {} other; {} UDP; conntrack {}; {} finding{plural}",
        r.established,
        r.listening,
        r.time_wait,
        r.tcp_other(),
        r.sockets - r.tcp,
        conntrack_count(row),
        row.findings,
    );
    [who, counters, states]
}
