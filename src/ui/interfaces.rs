//! The Interfaces tab: `sar -n DEV` + `sar -n EDEV` + `ip -s link` on one
//! screen.
//!
//! ```text
//! IFACE      STATE  rxpck/s  txpck/s   rxkB/s   txkB/s %util  err/s drop/s …
//! eth0       up        12.0      8.0      1.4      0.9   0.0    0.0    0.0
//! ── selected: kind, MAC, MTU, speed/duplex, flags, addresses ──
//! ```
//! Columns that do not fit are dropped by priority; the detail pane (Enter)
//! has every counter.

use super::cpu;
use super::format;
use super::interface_detail;
use super::table;
use super::theme::Theme;
use crate::app::App;
use crate::app::interfaces::{COLUMNS, Column, ColumnSpec, Row};
use crate::model::{InterfaceSample, Sample};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    let Some(index) = app.shown_index() else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    };
    if app.interfaces.detail {
        interface_detail::render(frame, area, app, index, theme);
        return;
    }
    let (previous, current) = app.history.pair(index);
    let Some(current) = current else {
        return;
    };
    let info_height = if area.height >= 8 { 2 } else { 0 };
    // The CPU panel takes up to half the height once there is room for it.
    let cpu_height = if area.height >= 12 {
        cpu::wanted_height(current).min(area.height / 2)
    } else {
        0
    };
    let [table_area, info_area, cpu_area] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(info_height),
        Constraint::Length(cpu_height),
    ])
    .areas(area);
    if cpu_height > 0 {
        cpu::render(frame, cpu_area, app, index, theme);
    }
    let view = &mut app.interfaces;
    view.refresh(previous, current);
    let (count, selected) = {
        let rows = view.rows(current);
        (rows.len(), view.selected_index(&rows))
    };
    view.window
        .fit(selected, count, table::visible_rows(table_area));
    let many = current.many_namespaces();
    let columns = fitting_columns(table_area.width, &app.columns.interfaces, many);
    let drawn = table::Drawn {
        sorted: Some(view.sort),
        descending: view.descending,
        selected,
        offset: view.window.offset,
        ..table::Drawn::new(columns, &[Column::Name])
    };
    view.on_screen = drawn.on_screen();
    let offset = drawn.offset;
    let rows = app.interfaces.rows(current);
    // Only the visible rows are built.
    let row = |i| rows.get(i);
    let text = |row: &Row, spec: &ColumnSpec, width| (spec.cell)(row, current, width);
    if let Some(body_area) = table::render(frame, table_area, drawn, row, text, table::plain, theme)
    {
        app.hits.rows = Some((body_area, offset));
        if rows.is_empty() {
            let note = if app.interfaces.filter.is_empty() {
                "no interfaces"
            } else {
                "no interface matches the filter"
            };
            table::render_empty_note(frame, body_area, note);
        }
    }
    if let Some(row) = selected.and_then(|i| rows.get(i)) {
        render_detail_info(frame, info_area, current, row.iface, theme);
    }
}

/// The columns that fit in `width`, by priority, kept in table order. The name
/// column takes what is left over; the namespace column shows only when the
/// sample holds `many` namespaces.
fn fitting_columns(width: u16, shown: &[String], many: bool) -> Vec<&'static ColumnSpec> {
    table::fitting(COLUMNS, width, |spec| {
        (many || spec.column != Column::Netns) && crate::config::Columns::shows(shown, spec.title)
    })
}

/// Two lines about one interface: what `ip link` and `ethtool` say, and
/// its namespace when `sample` holds several.
pub fn render_detail_info(
    frame: &mut Frame,
    area: Rect,
    sample: &Sample,
    iface: &InterfaceSample,
    theme: Theme,
) {
    if area.height == 0 {
        return;
    }
    let mut flags = Vec::new();
    if iface.up {
        flags.push("UP");
    }
    if iface.lower_up {
        flags.push("LOWER_UP");
    } else if iface.up {
        flags.push("NO-CARRIER");
    }
    let namespace = if sample.many_namespaces() {
        let label = super::sockets::netns_cell(sample, iface.netns, u16::MAX);
        format!(" (ns {label})")
    } else {
        String::new()
    };
    let first = Line::from(vec![
        Span::styled(iface.name.clone(), theme.title()),
        Span::raw(format!(
            "{namespace}{} <{}> mtu {} {} speed {}",
            iface
                .kind
                .as_deref()
                .map(|k| format!(" {k}"))
                .unwrap_or_default(),
            flags.join(","),
            iface.mtu,
            iface.mac.as_deref().unwrap_or("no MAC"),
            format::speed(iface.link_speed(), iface.duplex),
        )),
    ]);
    let addresses = if iface.addresses.is_empty() {
        "no addresses".to_string()
    } else {
        iface.addresses.join(" ")
    };
    let second = Line::from(vec![
        Span::styled("addr ", theme.dim()),
        Span::raw(addresses),
    ]);
    frame.render_widget(Paragraph::new(vec![first, second]), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eighty_columns_keep_the_sar_essentials() {
        let titles: Vec<_> = fitting_columns(80, &[], false)
            .iter()
            .map(|s| s.title)
            .collect();
        assert_eq!(
            titles,
            [
                "IFACE", "STATE", "rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "%util", "err/s",
                "drop/s"
            ]
        );
    }

    #[test]
    fn narrow_keeps_name_and_rates() {
        let titles: Vec<_> = fitting_columns(40, &[], false)
            .iter()
            .map(|s| s.title)
            .collect();
        assert_eq!(titles, ["IFACE", "rxpck/s", "txpck/s", "rxkB/s"]);
        assert_eq!(fitting_columns(3, &[], false).len(), 1);
    }
}
