//! The Flows tab: a status line (capture, filter, kernel drops), the packet
//! list (tcpdump lines; follow or frozen) and the flow table.
//!
//! ```text
//! any  filter: tcp port 80  1.2k pkt/s 96 kB/s  kernel drops 0  flows 45 (0 evicted)
//! ┌ Packets (following) ──────────── f filter  w write  F freeze  a group ┐
//! │ 12:00:00.000001 IP 198.18.0.1.40000 > 198.18.0.2.80: Flags [S], ...   │
//! ┌ Flows: 45, sorted by BYTES ───────────────────────────────────────────┐
//! │ PROTO FLOW                         PKTS  BYTES    B/s  STATE  RTT RETX│
//! ```

use super::format;
use super::table;
use super::theme::Theme;
use crate::app::App;
use crate::app::flows::columns::{ColumnSpec, FLOW_COLUMNS, FlowCell, GROUP_COLUMNS};
use crate::app::flows::{Column, Grouping, Row as FlowRow};
use crate::config::Columns;
use crate::model::capture::{CaptureRates, CaptureSample};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let editing = app.flows.capture_edit.is_some();
    let edit_height = if editing { 2 } else { 0 };
    let [status, edit, rest] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(edit_height),
        Constraint::Min(0),
    ])
    .areas(area);
    let (previous, current) = app.shown();
    let capture = current.and_then(|s| s.capture.as_ref());
    let rates = current.map(|c| CaptureRates::new(previous, c));
    let line = status_line(app, capture, rates.as_ref(), theme);
    frame.render_widget(Paragraph::new(line), status);
    if editing {
        render_editor(frame, edit, app, theme);
    }
    // The first frame, drawn while the capture starts.
    if current.is_none() && app.flows.packets.is_empty() {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), rest);
        return;
    }
    let unavailable = capture.is_none_or(|c| !c.active);
    if unavailable && app.flows.packets.is_empty() {
        let text = capture
            .and_then(|c| c.error.clone())
            .or_else(|| app.flows.failed.clone())
            .unwrap_or_else(|| "capture is off (--no-capture, or not started)".into());
        let lines = vec![
            Line::from(Span::styled(text, theme.warn())),
            Line::from(""),
            Line::from("The other tabs work without capture."),
        ];
        frame.render_widget(
            Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: true }),
            rest,
        );
        return;
    }
    let sampled = capture.and_then(CaptureSample::sampled);
    if app.flows.grouping == Grouping::Server {
        let servers = super::servers::rows(previous, current);
        // Its header and a note line when empty.
        let height = table_height(rest.height, servers.len().max(1) + 1);
        let [packets, table] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(height)]).areas(rest);
        render_packets(frame, packets, app, sampled, theme);
        super::servers::render(frame, table, &servers, sampled.is_some(), theme);
        return;
    }
    let rows = app.flow_rows();
    let table_height = table_height(rest.height, rows.len());
    let [packets, table] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(table_height)]).areas(rest);
    render_packets(frame, packets, app, sampled, theme);
    render_table(frame, table, app, rows, theme);
}

/// The table's frame below the packets: a top border carrying `title`;
/// the area inside it, None when nothing fits.
pub(super) fn section(frame: &mut Frame, area: Rect, title: String, theme: Theme) -> Option<Rect> {
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.header()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    (inner.height > 0).then_some(inner)
}

/// The flow table's share of `height`: its title, header and rows, at most
/// three fifths (half in a small pane); the packet list takes the rest, so
/// a quiet host with few flows shows more packets.
fn table_height(height: u16, rows: usize) -> u16 {
    let most = if height >= 12 {
        height * 3 / 5
    } else {
        height - height / 2
    };
    let wanted = u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2);
    wanted.clamp(most.min(4), most)
}

fn status_line(
    app: &App,
    capture: Option<&CaptureSample>,
    rates: Option<&CaptureRates>,
    theme: Theme,
) -> Line<'static> {
    let Some(c) = capture else {
        let text = app
            .flows
            .failed
            .clone()
            .unwrap_or_else(|| "no capture data yet".into());
        return Line::from(Span::styled(text, theme.dim()));
    };
    if let Some(message) = &app.flows.message {
        return Line::from(Span::styled(message.clone(), theme.good()));
    }
    if !c.active {
        return Line::from(Span::styled(
            format!("capture unavailable on {}", c.iface),
            theme.warn(),
        ));
    }
    let mut spans = vec![Span::styled(c.iface.clone(), theme.title())];
    if !c.filter.is_empty() {
        spans.push(Span::styled("  filter: ", theme.dim()));
        spans.push(Span::raw(c.filter.clone()));
    }
    if let Some(r) = rates {
        spans.push(Span::raw(format!(
            "  {} {}/s",
            format::packets_short(r.packets_per_s.unwrap_or(0.0)),
            format::bytes(r.bytes_per_s.unwrap_or(0.0))
        )));
    }
    let drops = Span::styled(
        format!("  kernel drops {}", c.kernel_dropped),
        if c.kernel_dropped > 0 {
            theme.alert()
        } else {
            theme.dim()
        },
    );
    spans.push(drops);
    spans.push(counts_note(c, theme));
    spans.push(Span::raw(format!(
        "  flows {} ({} evicted)",
        c.flows_active, c.flows_evicted
    )));
    if app.flows.unprinted > 0 {
        spans.push(Span::styled(
            format!("  {} not listed (rate)", app.flows.unprinted),
            theme.dim(),
        ));
    }
    Line::from(spans)
}

/// Who counted the flows' bytes and packets, and what the capture's drops
/// thin: with the kernel counting, only packet lines and the flow screen's
/// packets; without, every flow count (marked ≥).
fn counts_note(c: &CaptureSample, theme: Theme) -> Span<'static> {
    let kernel = c.kernel_counts.as_ref().filter(|_| c.counted_by_kernel());
    match kernel {
        Some(k) if k.not_counted_packets > 0 => Span::styled(
            format!(
                "  counts: kernel ({}), {} packets not counted (map full)",
                k.attach, k.not_counted_packets
            ),
            theme.warn(),
        ),
        Some(k) if c.sampled().is_some() => Span::styled(
            format!("  counts: kernel ({}); lines sampled", k.attach),
            theme.dim(),
        ),
        Some(k) if c.kernel_dropped > 0 => Span::styled(
            format!("  counts: kernel ({}), exact; packet lines thin", k.attach),
            theme.warn(),
        ),
        Some(k) => Span::styled(format!("  counts: kernel ({})", k.attach), theme.dim()),
        None if c.kernel_dropped > 0 => {
            // Beside "kernel drops N": the capture's counts are at least.
            Span::styled("  counts ≥", theme.alert())
        }
        None => Span::styled("  counts: capture", theme.dim()),
    }
}

fn render_editor(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let text = app.flows.capture_edit.clone().unwrap_or_default();
    let prompt = "capture filter: ";
    let mut lines = vec![Line::from(vec![
        Span::styled(prompt, theme.key()),
        Span::raw(crate::app::line_edit::shown(&text)),
        Span::styled("  Enter apply  Esc cancel", theme.dim()),
    ])];
    match &app.flows.capture_error {
        Some((position, message)) => {
            // A caret under the character the error points at.
            // `position` counts from 0; people count from 1.
            let pad = prompt.len() + position;
            lines.push(Line::from(vec![
                Span::raw(" ".repeat(pad)),
                Span::styled(
                    format!("^ error at character {}: {message}", position + 1),
                    theme.alert(),
                ),
            ]));
        }
        None => lines.push(Line::from(Span::styled(
            "pcap-filter syntax, e.g. tcp port 443 and not host 198.18.0.1",
            theme.dim(),
        ))),
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// `sampled`: the capture keeps one in so many packets (control packets
/// all), so the lines are a sample.
fn render_packets(frame: &mut Frame, area: Rect, app: &App, sampled: Option<u32>, theme: Theme) {
    let frozen = app.flows.frozen_at.is_some() || app.paused();
    let title = if frozen {
        " Packets (frozen: F follows) ".to_string()
    } else if let Some(every) = sampled {
        format!(" Packets (sampled 1 in {every}) ")
    } else {
        format!(" Packets (following, {} kept) ", app.flows.packets.len())
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.header()))
        .title(
            Line::from(Span::styled(
                " f filter  w write  F freeze  a group ",
                theme.dim(),
            ))
            .right_aligned(),
        );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height);
    let width = usize::from(inner.width);
    let lines: Vec<Line> = if app.flows.packets.is_empty() {
        vec![Line::from(Span::styled(
            "no packets yet (lines are printed while this tab is open)",
            theme.dim(),
        ))]
    } else {
        app.flows
            .visible_packets(height)
            .map(|p| Line::from(format::fit(&p.line, width)))
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

type Spec = ColumnSpec;

/// Every column title of the flow and the grouped tables (for the config).
pub fn column_titles() -> Vec<&'static str> {
    let mut titles: Vec<&'static str> = Vec::new();
    for spec in FLOW_COLUMNS.iter().chain(GROUP_COLUMNS) {
        if !titles.contains(&spec.title) {
            titles.push(spec.title);
        }
    }
    titles
}

/// The columns that fit, by priority, in table order; only those the
/// config's `[columns] flows` names, when it names any; NAME only while a
/// row has a name, NAT only while a row was translated, and NS only while
/// `many` namespaces are sampled (the Sockets tab's rule). The key (FLOW) is
/// the row's identity, so other columns give way first: it gets `floor`
/// (both ports whole, short addresses) before the priority-1 columns and
/// up to `wanted` (the widest key) before the rest.
fn fitting(
    specs: &'static [Spec],
    width: u16,
    (shown, names, many, nat): (&[String], bool, bool, bool),
    (floor, wanted): (u16, u16),
) -> Vec<&'static Spec> {
    let width = width.max(1);
    let mut used = floor.min(width);
    let mut chosen: Vec<&Spec> = Vec::new();
    for priority in 1..=4 {
        if priority == 2 {
            used += wanted.saturating_sub(floor).min(width - used);
        }
        for s in specs
            .iter()
            .filter(|s| s.priority == priority)
            .filter(|s| Columns::shows(shown, s.title))
            .filter(|s| names || s.column != Column::Name)
            .filter(|s| many || s.column != Column::Netns)
            .filter(|s| nat || s.column != Column::Nat)
        {
            if used + 1 + s.width <= width {
                used += 1 + s.width;
                chosen.push(s);
            }
        }
    }
    let mut columns: Vec<&Spec> = specs
        .iter()
        .filter(|s| s.column == Column::Key || chosen.iter().any(|c| std::ptr::eq(*c, *s)))
        .collect();
    // The config's order (the setup screen's F7/F8); FLOW/KEY stays first.
    columns.sort_by_key(|s| shown.iter().position(|title| title == s.title));
    columns
}

/// The key column's (floor, wanted) widths for these rows: the widest key,
/// and what shows every port whole beside a few characters of each address.
fn key_widths(rows: &[FlowRow], grouping: Grouping) -> (u16, u16) {
    let widest = rows
        .iter()
        .map(|r| r.key.chars().count())
        .max()
        .unwrap_or(0);
    let floor = if grouping == Grouping::Flow { 22 } else { 16 };
    let wanted = u16::try_from(widest).unwrap_or(u16::MAX).max(8);
    (floor.min(wanted), wanted)
}

fn render_table(frame: &mut Frame, area: Rect, app: &mut App, rows: Vec<FlowRow>, theme: Theme) {
    // Not app.shown(): that borrows all of App, the view is mutated.
    let shown = crate::app::view::Shown {
        history: &app.history,
        index: app.shown_index(),
    };
    let current = shown.current();
    let now = current.map_or(0.0, |s| s.t);
    let many = current.is_some_and(|s| s.many_namespaces());
    // The capture counted and dropped packets: each count is a lower bound.
    let short = current
        .and_then(|s| s.capture.as_ref())
        .is_some_and(CaptureSample::counts_short);
    let view = &mut app.flows;
    view.selected = view.selected.min(rows.len().saturating_sub(1));
    let sort_title = FLOW_COLUMNS
        .iter()
        .chain(GROUP_COLUMNS)
        .find(|s| s.column == view.sort)
        .map_or("", |s| s.title);
    let filter = if view.filter.is_empty() {
        String::new()
    } else {
        format!(", filter \"{}\"", view.filter)
    };
    let title = format!(
        " Flows{}: {}, by {}{}{} ",
        match view.grouping {
            Grouping::Flow => String::new(),
            other => format!(" {}", other.label()),
        },
        rows.len(),
        sort_title,
        if view.descending { "▼" } else { "▲" },
        filter
    );
    let Some(inner) = section(frame, area, title, theme) else {
        return;
    };
    let specs = if view.grouping == Grouping::Flow {
        FLOW_COLUMNS
    } else {
        GROUP_COLUMNS
    };
    let names = rows.iter().any(|r| !r.name.is_empty());
    let nat = rows.iter().any(|r| !r.nat.is_empty());
    let columns = fitting(
        specs,
        inner.width,
        (&app.columns.flows, names, many, nat),
        key_widths(&rows, view.grouping),
    );
    view.netns_shown = columns.iter().any(|s| s.column == Column::Netns);
    // What the key column gets: the width the others leave.
    let key_width = usize::from(inner.width).saturating_sub(
        columns
            .iter()
            .filter(|s| s.column != Column::Key)
            .map(|s| usize::from(s.width) + 1)
            .sum(),
    );
    if rows.is_empty() {
        let text = if view.filter.is_empty() {
            "no flows yet"
        } else {
            "no flow matches the filter"
        };
        frame.render_widget(Paragraph::new(Span::styled(text, theme.dim())), inner);
        return;
    }
    // The selection on the last row shown.
    let offset = (view.selected + 1).saturating_sub(table::visible_rows(inner));
    let widths = (columns.iter())
        .map(|s| match s.column {
            Column::Key => u16::try_from(key_width).unwrap_or(u16::MAX),
            _ => s.width,
        })
        .collect();
    let drawn = table::Drawn {
        widths,
        sorted: Some(view.sort),
        descending: view.descending,
        selected: Some(view.selected),
        offset,
        ..table::Drawn::new(columns, &[Column::Key])
    };
    let context = FlowCell {
        sample: current,
        names: &app.names,
        now,
        short,
    };
    let text = |row: &&FlowRow, s: &Spec, width: u16| {
        let mut text = (s.cell)(row, &context, usize::from(width));
        text.text = format::fit(&text.text, usize::from(width));
        text
    };
    let row = |i| rows.get(i);
    let body = table::render(frame, inner, drawn, row, text, table::plain, theme);
    app.hits.rows = body.map(|area| (area, offset));
}

#[cfg(test)]
mod tests {
    use super::table_height;

    #[test]
    fn flow_table_takes_its_rows_and_leaves_the_rest_to_packets() {
        // Few flows: title, header and the rows, the packet list the rest.
        assert_eq!(table_height(20, 3), 5);
        assert_eq!(table_height(20, 0), 4);
        // Many flows: three fifths, or half in a small pane.
        assert_eq!(table_height(20, 500), 12);
        assert_eq!(table_height(8, 500), 4);
        assert_eq!(table_height(3, 500), 2);
        assert_eq!(table_height(0, 500), 0);
    }
}
