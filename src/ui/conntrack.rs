//! The Conntrack tab: `conntrack -C`, `conntrack -S` and `conntrack -L` on one
//! screen, NAT decoded.
//!
//! ```text
//! count 12 / max 262144 [█░░░░░░░░░░░]  0.0%  buckets 262144  via netlink
//! found 0.0/s invalid 0.0/s insert 2.0/s insert_failed 0.0/s drop 0.0/s …
//! state ESTABLISHED 12 TIME_WAIT 3 │ proto tcp 15
//! top src 198.18.0.1 12 │ top dport 8080 12
//! PROTO STATE       ORIG SRC → DST ⇒ NAT                      TIMEOUT  PKTS …
//! tcp   ESTABLISHED 198.18.0.1:40000 → 198.18.0.2:8080 ⇒ 198.18.1.2:80 …
//! ```

use super::format;
use super::table;
use super::theme::Theme;
use crate::app::App;
use crate::app::conntrack::{COLUMNS, Column, ColumnSpec, ConntrackView};
use crate::model::conntrack::{ConntrackEntry, ConntrackSample, StatsSource};
use crate::model::conntrack_rates::{ConntrackRates, Summary};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// How many sources and ports the summary names.
const TOP_N: usize = 3;

const ACCT_NOTE: &str = "packets/bytes are off: sysctl -w net.netfilter.nf_conntrack_acct=1 \
    (counts connections made after it)";

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    // The view is taken out so the entries can stay borrowed from the
    // history while the view's selection and scroll are updated (no copy of
    // the entry list per frame).
    let mut view = std::mem::take(&mut app.conntrack);
    let rows = render_body(frame, area, app, &mut view, theme);
    app.conntrack = view;
    if rows.is_some() {
        app.hits.rows = rows;
    }
}

fn render_body(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    view: &mut ConntrackView,
    theme: Theme,
) -> Option<(Rect, usize)> {
    let (previous, current) = app.shown();
    let Some(current) = current else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return None;
    };
    let ct = &current.conntrack;
    let rates = ConntrackRates::for_samples(previous, current);
    if !ct.available && ct.stats.is_none() {
        unavailable(frame, area, ct, theme);
        return None;
    }
    let entries = app.conntrack_entries_at();
    let summary = match entries {
        Some((list, _, mono)) => view.summary(mono, list, TOP_N).clone(),
        None => Summary::default(),
    };
    let entries = entries.map(|(list, age, _)| (list, age));

    let mut header = vec![usage_line(ct, area.width, app.thresholds(), theme)];
    header.extend(rate_lines(&rates, area.width, theme));
    if !ct.available
        && let Some(reason) = &ct.reason
    {
        header.extend(wrapped(reason, area.width, theme.warn()));
    }
    if entries.is_some() {
        header.push(counts_line(&summary, theme));
        header.push(top_line(&summary, theme));
    }
    if ct.acct == Some(false) && entries.is_some() {
        header.extend(wrapped(ACCT_NOTE, area.width, theme.dim()));
    }
    // The header gives way to the table on short screens, but keeps its
    // first line.
    let keep = header
        .len()
        .min(usize::from(area.height.saturating_sub(3)).max(1));
    header.truncate(keep);
    let [header_area, table_area] =
        Layout::vertical([Constraint::Length(keep as u16), Constraint::Min(0)]).areas(area);
    frame.render_widget(Paragraph::new(header), header_area);
    if table_area.height == 0 {
        return None;
    }
    let Some((entries, age)) = entries else {
        let note = match &ct.entries_error {
            Some(error) => Line::from(Span::styled(error.clone(), theme.warn())),
            None => Line::from(Span::styled(
                "listing entries… (a dump runs at most once a second)",
                theme.dim(),
            )),
        };
        frame.render_widget(Paragraph::new(note).wrap(Wrap { trim: true }), table_area);
        return None;
    };
    view.refresh(&app.shown_view());
    let shown = &app.columns.conntrack;
    table(frame, table_area, view, (entries, age), ct, shown, theme)
}

/// A note word-wrapped to the pane's width, one styled line per row.
fn wrapped(text: &str, width: u16, style: Style) -> impl Iterator<Item = Line<'static>> {
    format::wrap(text, usize::from(width).max(10))
        .into_iter()
        .map(move |l| Line::from(Span::styled(l, style)))
}

fn unavailable(frame: &mut Frame, area: Rect, ct: &ConntrackSample, theme: Theme) {
    let lines = vec![
        Line::from(Span::styled("Conntrack: not available", theme.header())),
        Line::from(""),
        Line::from(ct.reason.clone().unwrap_or_default()),
    ];
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}

/// count / max with a bar and the percentage in digits (not colour alone).
fn usage_line(
    ct: &ConntrackSample,
    width: u16,
    limits: &crate::findings::Thresholds,
    theme: Theme,
) -> Line<'static> {
    let count = ct.count.map_or("–".into(), |c| c.to_string());
    let max = ct.max.map_or("–".into(), |m| m.to_string());
    let usage = ct.usage_percent();
    let mut spans = vec![
        Span::styled("count ", theme.dim()),
        Span::raw(count),
        Span::styled(" / max ", theme.dim()),
        Span::raw(max),
        Span::raw(" "),
    ];
    let bar_width = if width >= 70 { 12 } else { 6 };
    let style = match usage {
        Some(u) if u >= limits.conntrack_full_crit_percent => theme.alert(),
        Some(u) if u >= limits.conntrack_full_warn_percent => theme.warn(),
        _ => theme.good(),
    };
    let filled = usage.map_or(0, |u| {
        ((u / 100.0 * bar_width as f64).ceil() as usize).min(bar_width)
    });
    spans.push(Span::raw("["));
    spans.push(Span::styled("█".repeat(filled), style));
    spans.push(Span::styled("░".repeat(bar_width - filled), theme.dim()));
    spans.push(Span::raw("]"));
    spans.push(Span::styled(
        usage.map_or(" –".into(), |u| format!("{u:5.1}%")),
        style,
    ));
    if let Some(buckets) = ct.buckets {
        spans.push(Span::styled("  buckets ", theme.dim()));
        spans.push(Span::raw(buckets.to_string()));
    }
    let source = match ct.source {
        StatsSource::Netlink => "netlink",
        StatsSource::Proc => "/proc",
        StatsSource::None => "–",
    };
    spans.push(Span::styled(format!("  via {source}"), theme.dim()));
    Line::from(spans)
}

/// The nine rates, wrapped over as many lines as the width needs.
fn rate_lines(rates: &ConntrackRates, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let items = [
        ("found", rates.found, false),
        ("invalid", rates.invalid, true),
        ("insert", rates.insert, false),
        ("insert_failed", rates.insert_failed, true),
        ("drop", rates.drop, true),
        ("early_drop", rates.early_drop, true),
        ("error", rates.error, true),
        ("search_restart", rates.search_restart, false),
        ("clash_resolve", rates.clash_resolve, false),
    ];
    let mut lines = Vec::new();
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (label, rate, bad) in items {
        let value = format!("{}/s", format::rate(rate));
        let len = label.chars().count() + 1 + value.chars().count() + 2;
        if used > 0 && used + len > usize::from(width) {
            lines.push(Line::from(std::mem::take(&mut spans)));
            used = 0;
        }
        let style = if bad && rate.is_some_and(|r| r > 0.0) {
            theme.alert()
        } else {
            ratatui::style::Style::new()
        };
        spans.push(Span::styled(format!("{label} "), theme.dim()));
        spans.push(Span::styled(value, style));
        spans.push(Span::raw("  "));
        used += len;
    }
    if !spans.is_empty() {
        lines.push(Line::from(spans));
    }
    lines
}

fn counts_line(summary: &Summary, theme: Theme) -> Line<'static> {
    let mut spans = vec![Span::styled("state ", theme.dim())];
    for (state, n) in &summary.by_state {
        spans.push(Span::raw(format!("{state} {n} ")));
    }
    spans.push(Span::styled("│ proto ", theme.dim()));
    for (proto, n) in &summary.by_proto {
        spans.push(Span::raw(format!("{proto} {n} ")));
    }
    Line::from(spans)
}

fn top_line(summary: &Summary, theme: Theme) -> Line<'static> {
    let mut spans = vec![Span::styled("top src ", theme.dim())];
    for (ip, n) in &summary.top_sources {
        spans.push(Span::raw(format!("{ip} {n} ")));
    }
    spans.push(Span::styled("│ top dport ", theme.dim()));
    for (port, n) in &summary.top_dports {
        spans.push(Span::raw(format!("{port} {n} ")));
    }
    Line::from(spans)
}

/// The columns that fit in `width`, by priority, kept in table order. The
/// flow column takes what is left.
fn fitting_columns(width: u16, acct: bool, shown: &[String]) -> Vec<&'static ColumnSpec> {
    table::fitting(COLUMNS, width, |spec| {
        (acct || !matches!(spec.column, Column::Packets | Column::Bytes))
            && crate::config::Columns::shows(shown, spec.title)
    })
}

fn table(
    frame: &mut Frame,
    area: Rect,
    view: &mut ConntrackView,
    (entries, age): (&[ConntrackEntry], usize),
    ct: &ConntrackSample,
    shown: &[String],
    theme: Theme,
) -> Option<(Rect, usize)> {
    // While a new order is sorted (off this thread) the last one shows, of
    // the dump it was made for.
    let rows = view.order.rows();
    let sorting = view.order.sorting();
    let selected = view.selected_index(&rows);
    let info_height = if area.height >= 8 { 1 } else { 0 };
    let [table_area, info_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(info_height)]).areas(area);
    view.window
        .fit(selected, rows.len(), table::visible_rows(table_area));

    let acct = ct.acct != Some(false) || entries.iter().any(|e| e.packets.is_some());
    let columns = fitting_columns(table_area.width, acct, shown);
    let drawn = table::Drawn {
        sorted: Some(view.sort),
        descending: view.descending,
        selected,
        offset: view.window.offset,
        ..table::Drawn::new(columns, &[Column::Flow])
    };
    view.on_screen = drawn.on_screen();
    let row = |i| rows.get(i);
    let text = |entry: &&ConntrackEntry, spec: &ColumnSpec, _| (spec.cell)(entry);
    let body_area = table::render(frame, table_area, drawn, row, text, table::plain, theme);
    if let Some(body_area) = body_area
        && rows.is_empty()
    {
        let note = if sorting {
            "sorting…"
        } else if view.filter.is_empty() {
            "no entries"
        } else {
            "no entry matches the filter"
        };
        table::render_empty_note(frame, body_area, note);
    }
    if info_area.height > 0 {
        let mut text = match selected.and_then(|i| rows.get(i)) {
            Some(entry) => detail(entry, selected.unwrap_or(0) + 1, rows.len(), age),
            None => format!("{} of {} entries", rows.len(), entries.len()),
        };
        if sorting {
            text.insert_str(0, "sorting… ");
        }
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(text, theme.dim()))),
            info_area,
        );
    }
    body_area.map(|area| (area, view.window.offset))
}

/// The selected entry in full, on one line.
fn detail(entry: &ConntrackEntry, row: usize, rows: usize, age: usize) -> String {
    let mut text = format!(
        "{row}/{rows} reply {} → {}",
        entry.reply.src_text(),
        entry.reply.dst_text()
    );
    if let Some(kind) = entry.nat().label() {
        text.push_str(&format!(" [{kind}]"));
    }
    if let (Some(p), Some(b)) = (entry.packets, entry.bytes) {
        text.push_str(&format!(" orig {}p/{}B reply {}p/{}B", p.0, b.0, p.1, b.1));
    }
    if entry.mark != 0 {
        text.push_str(&format!(" mark {:#x}", entry.mark));
    }
    if entry.zone != 0 {
        text.push_str(&format!(" zone {}", entry.zone));
    }
    if age > 0 {
        text.push_str(&format!(" (list from {age} sample(s) ago)"));
    }
    text
}
