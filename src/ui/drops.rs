//! The Drops tab: why the kernel dropped packets, where, how many per
//! second, and the counters that moved.
//!
//! ```text
//! REASON            /s  total NETNS WHERE           IFACE/SOCKET    TREND   MEANING
//! NO_SOCKET      120.0   1234       __udp4_lib_rcv  udp:5353 (8/x)  ▁▃▅█    no socket…
//! NO_SOCKET: no socket for the packet: nothing listens on the port…
//! firewall rules that dropped      /s
//! inet filter input #4          120.0  tcp dport 7000 counter drop
//! counters that moved               /s
//! Udp.NoPorts                    120.0  datagrams to a port where nothing listens
//! ```

use super::format::{self, fit, wrap};
use super::spark::spark;
use super::theme::Theme;
use crate::app::App;
use crate::app::drops::{Line as DropLine, Table as DropTable, table};
use crate::findings::catalogue::{self, Level};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

/// Said for a reason the catalogue lacks (a newer kernel).
pub const NOT_IN_CATALOGUE: &str = "not in the catalogue";

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    if app.shown_index().is_none() {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    }
    let shown = app.shown_view();
    let data = table(&shown);
    let selected = app.drops.select_in(&data.lines);
    if app.drops.detail
        && let Some(at) = selected
    {
        render_detail(frame, area, &data, &data.lines[at], theme);
        return;
    }
    // The sites (or why there are none) first, then the counters in what
    // they leave, at least a third of the pane.
    let why = data.unavailable.as_ref().map(|why| {
        wrap(
            &format!("drop reasons unavailable: {why}"),
            usize::from(area.width).max(1),
        )
    });
    let top_rows = match &why {
        Some(lines) => lines.len() as u16,
        None => (data.lines.len().max(1) + 2) as u16,
    };
    let counter_rows = (data.counters.len() + 1) as u16;
    let top_height = top_rows.min(
        area.height
            .saturating_sub(counter_rows.min((area.height / 3).max(1))),
    );
    let [top, bottom] =
        Layout::vertical([Constraint::Length(top_height), Constraint::Min(0)]).areas(area);
    // The rules take from the counters' part, at most half of it.
    let rule_lines = rules_text(&data, usize::from(area.width), false);
    let rules_height = (rule_lines.len() as u16).min(bottom.height / 2);
    let [rules, bottom] =
        Layout::vertical([Constraint::Length(rules_height), Constraint::Min(0)]).areas(bottom);
    frame.render_widget(
        Paragraph::new(
            rule_lines
                .into_iter()
                .enumerate()
                .map(|(i, text)| match i {
                    0 => Line::styled(text, theme.header()),
                    _ => Line::raw(text),
                })
                .collect::<Vec<_>>(),
        ),
        rules,
    );
    match why {
        Some(lines) => {
            let lines: Vec<Line> = lines
                .into_iter()
                .enumerate()
                .map(
                    |(i, text)| match text.strip_prefix("drop reasons unavailable:") {
                        Some(rest) if i == 0 => Line::from(vec![
                            Span::styled("drop reasons unavailable:", theme.warn()),
                            Span::raw(rest.to_string()),
                        ]),
                        _ => Line::raw(text),
                    },
                )
                .collect();
            frame.render_widget(Paragraph::new(lines), top);
        }
        None => render_sites(frame, top, app, &data, selected, theme),
    }
    render_counters(frame, bottom, &data, theme);
}

/// The sites table, and the selected row's meaning under it.
fn render_sites(
    frame: &mut Frame,
    area: Rect,
    app: &mut App,
    data: &DropTable,
    selected: Option<usize>,
    theme: Theme,
) {
    let [table_area, meaning_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    let columns = Columns::fitting(area.width, data.many_netns);
    let mut titles = vec!["REASON", "     /s", " total"];
    let mut widths = vec![
        Constraint::Length(columns.reason),
        Constraint::Length(7),
        Constraint::Length(6),
    ];
    if columns.netns > 0 {
        titles.push("NETNS");
        widths.push(Constraint::Length(columns.netns));
    }
    if columns.site > 0 {
        titles.extend(["WHERE", "IFACE/SOCKET"]);
        widths.extend([
            Constraint::Length(columns.site),
            Constraint::Length(columns.site),
        ]);
    }
    if columns.trend > 0 {
        titles.push("TREND");
        widths.push(Constraint::Length(columns.trend));
    }
    if columns.meaning {
        titles.push("MEANING");
        widths.push(Constraint::Min(0));
    }
    let visible = usize::from(table_area.height.saturating_sub(1));
    app.drops
        .window
        .fit(selected, data.lines.len(), visible.max(1));
    let offset = app.drops.window.offset;
    let rows: Vec<Row> = data
        .lines
        .iter()
        .enumerate()
        .skip(offset)
        .take(visible)
        .map(|(i, line)| {
            let mut cells = vec![
                Cell::from(fit(&line.row.reason, usize::from(columns.reason))),
                Cell::from(format!("{:>7}", format::rate(line.per_s))),
                Cell::from(format!("{:>6}", format::count_short(line.row.packets, 6))),
            ];
            if columns.netns > 0 {
                cells.push(Cell::from(fit(&line.row.netns, usize::from(columns.netns))));
            }
            let site = usize::from(columns.site);
            if site > 0 {
                cells.push(Cell::from(fit(&line.row.location, site)));
                cells.push(Cell::from(fit(&site_text(line), site)));
            }
            if columns.trend > 0 {
                cells.push(Cell::from(spark(&line.spark, usize::from(columns.trend))));
            }
            if columns.meaning {
                cells.push(Cell::from(meaning(line)));
            }
            let style = if Some(i) == selected {
                theme.selected()
            } else {
                level_style(line, theme)
            };
            Row::new(cells).style(style)
        })
        .collect();
    let header = Row::new(titles.iter().map(|t| Cell::from(*t))).style(theme.header());
    frame.render_widget(Table::new(rows, widths).header(header), table_area);
    app.hits.rows = super::table::body_area(table_area).map(|r| (r, offset));
    if data.lines.is_empty()
        && let Some(body) = super::table::body_area(table_area)
    {
        let note = "no packet dropped since netlens started counting";
        super::table::render_empty_note(frame, body, note);
    }
    // Uncounted drops first: they make every rate above a lower bound.
    let mut note = match (data.lost, &data.lost_in) {
        (0, _) => String::new(),
        (lost, None) => format!("{lost} drops not counted (the kernel map was full); "),
        (lost, Some(netns)) => {
            format!("{lost} drops in {netns} not counted (the kernel map was full); ")
        }
    };
    if let Some(line) = selected.map(|at| &data.lines[at]) {
        note.push_str(&format!("{}: {}", line.row.reason, meaning(line)));
    }
    frame.render_widget(
        Paragraph::new(fit(&note, usize::from(area.width))).style(theme.dim()),
        meaning_area,
    );
}

/// The sites table's column widths for a pane `width` wide (0: not shown).
struct Columns {
    reason: u16,
    netns: u16,
    /// WHERE and IFACE/SOCKET, each.
    site: u16,
    trend: u16,
    meaning: bool,
}

impl Columns {
    fn fitting(width: u16, many_netns: bool) -> Columns {
        // REASON, /s and total always; then the sites, the namespace, the
        // trend and the meaning as they fit (each column and a space).
        let mut c = Columns {
            reason: match width {
                100.. => 18,
                60.. => 16,
                _ => 14,
            },
            netns: 0,
            site: 0,
            trend: 0,
            meaning: false,
        };
        let mut used = c.reason + 1 + 8 + 7;
        let mut take = |want: u16| {
            let fits = used + want < width;
            if fits {
                used += want + 1;
            }
            fits
        };
        let site = if width >= 100 { 22 } else { 15 };
        if take(2 * site + 1) {
            c.site = site;
        }
        if many_netns && take(8) {
            c.netns = 8;
        }
        if take(6) {
            c.trend = 6;
        }
        c.meaning = take(20);
        c
    }
}

/// The socket, destination or interface of a site: "udp:5353 (812/avahi)",
/// "→198.18.3.2:8080" (a firewall's drop), "eth0", "".
fn site_text(line: &DropLine) -> String {
    match (&line.socket, &line.row.destination, &line.row.interface) {
        (Some(socket), _, _) => socket.clone(),
        (None, Some(to), _) => format!("→{to}"),
        (None, None, Some(iface)) => iface.clone(),
        (None, None, None) => String::new(),
    }
}

fn meaning(line: &DropLine) -> String {
    match line.reason {
        Some(r) => r.meaning.to_string(),
        None => NOT_IN_CATALOGUE.to_string(),
    }
}

/// Trouble is marked by more than colour: the level is in the detail and
/// the finding names it; colour only helps.
fn level_style(line: &DropLine, theme: Theme) -> Style {
    match line.reason.map(|r| r.level) {
        Some(Level::Info) => theme.dim(),
        Some(Level::Crit) if line.per_s.unwrap_or(0.0) > 0.0 => theme.alert(),
        _ if line.per_s.unwrap_or(0.0) > 0.0 => theme.warn(),
        _ => Style::default(),
    }
}

/// The firewall's lines: a title, then each rule that dropped with its
/// rate, then the candidates ("?": they have no counter); nothing when the
/// rules were not read or none dropped. `whole`: each rule's text wrapped
/// under its place (the detail), else cut to the line.
fn rules_text(data: &DropTable, width: usize, whole: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(why) = &data.rules_unavailable {
        lines.push(fit(&format!("firewall rules unavailable: {why}"), width));
        return lines;
    }
    if data.rules.is_empty() {
        return lines;
    }
    lines.push(fit(
        &format!("{:<30} {:>8}  rule", "firewall rules that dropped", "/s"),
        width,
    ));
    let mut candidates = false;
    for rule in &data.rules {
        if rule.per_s.is_none() && !candidates {
            candidates = true;
            lines.push(fit(
                &format!(
                    "  {}/s not counted by a rule; without a counter (? candidates):",
                    format::rate(Some(data.unexplained_per_s))
                ),
                width,
            ));
        }
        let place = format!("{} {}", rule.place, rule.at);
        let rate = match rule.per_s {
            Some(_) => format::rate(rule.per_s),
            None => "?".to_string(),
        };
        let head = format!("{:<30} {rate:>8}", fit(&place, 30));
        if whole {
            lines.push(fit(&head, width));
            lines.extend(
                wrap(&rule.text, width.saturating_sub(4).max(10))
                    .into_iter()
                    .map(|part| format!("    {part}")),
            );
        } else {
            lines.push(fit(&format!("{head}  {}", rule.text), width));
        }
    }
    lines
}

/// The catalogue counters (and unknown fields) that moved this interval.
fn render_counters(frame: &mut Frame, area: Rect, data: &DropTable, theme: Theme) {
    if area.height == 0 {
        return;
    }
    let width = usize::from(area.width);
    let mut lines = vec![Line::styled(
        if data.counters.is_empty() {
            "no failure counter moved in this interval".to_string()
        } else {
            format!("{:<30} {:>8}", "counters that moved", "/s")
        },
        theme.header(),
    )];
    for counter in &data.counters {
        let name = match &counter.iface {
            Some(iface) => format!("{iface}: {}", counter.id),
            None => counter.id.clone(),
        };
        let what = counter.entry.map_or(NOT_IN_CATALOGUE, |e| e.meaning);
        let text = format!(
            "{:<30} {:>8}  {what}",
            fit(&name, 30),
            format::rate(Some(counter.per_s))
        );
        lines.push(Line::raw(fit(&text, width)));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// Enter on a site: the reason's meaning and fix, its sites, the related
/// counters with their rates, and where `o` and `i` go.
fn render_detail(frame: &mut Frame, area: Rect, data: &DropTable, line: &DropLine, theme: Theme) {
    let width = usize::from(area.width).max(20);
    let name = &line.row.reason;
    let level = match line.reason {
        Some(r) => catalogue::reason_raises(r),
        None => format!(
            "{NOT_IN_CATALOGUE}: warn (finding drop:unknown) above {}/s",
            catalogue::UNKNOWN_PER_S
        ),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{name} "), theme.title()),
        Span::raw(format!("(SKB_DROP_REASON_{name}) {level}")),
    ])];
    let (what, fix) = match line.reason {
        Some(r) => (r.meaning, r.fix),
        None => (
            NOT_IN_CATALOGUE,
            "see SKB_DROP_REASON_ in this kernel's include/net/dropreason-core.h",
        ),
    };
    for (label, text) in [("meaning: ", what), ("fix: ", fix)] {
        for (i, part) in wrap(text, width.saturating_sub(9)).into_iter().enumerate() {
            let head = if i == 0 { label } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{head:<9}"), theme.key()),
                Span::raw(part),
            ]));
        }
    }
    lines.push(Line::styled("sites", theme.header()));
    for site in data.lines.iter().filter(|l| &l.row.reason == name) {
        // The destination is said in words after the site, not as its "→".
        let (whom, to) = match (&site.socket, &site.row.destination) {
            (None, Some(to)) => (site.row.interface.clone().unwrap_or_default(), Some(to)),
            (_, to) => (site_text(site), to.as_ref()),
        };
        let mut text = format!(
            "  {:>8}/s {:>7}  netns {}  at {}  {whom}",
            format::rate(site.per_s),
            format::count_short(site.row.packets, 7),
            site.row.netns,
            site.row.location,
        );
        if let Some(to) = to {
            text.push_str(&format!("  to {to}"));
            if let Some(from) = &site.row.translated_from {
                text.push_str(&format!(" (DNAT from {from})"));
            }
        }
        lines.push(Line::raw(fit(&text, width)));
    }
    if name == crate::findings::drops::NETFILTER_DROP {
        for text in rules_text(data, width, true) {
            lines.push(Line::raw(text));
        }
    }
    lines.push(Line::styled("related counters", theme.header()));
    let related: Vec<_> = catalogue::related_counters(name).collect();
    if related.is_empty() {
        lines.push(Line::raw("  none in the catalogue counts these drops"));
    }
    for entry in related {
        let rate = data
            .counters
            .iter()
            .filter(|c| c.id == entry.id)
            .map(|c| c.per_s)
            .fold(0.0, |sum, r| sum + r);
        let text = format!(
            "  {:<24} {:>8}/s  {}",
            entry.id,
            format::rate(Some(rate)),
            entry.meaning
        );
        lines.push(Line::raw(fit(&text, width)));
    }
    let mut keys = vec![Span::styled("Esc", theme.key()), Span::raw(" back")];
    if let Some(socket) = &line.socket {
        keys.extend([
            Span::styled("  o", theme.key()),
            Span::raw(format!(" socket {socket}")),
        ]);
    }
    if let Some(iface) = &line.row.interface {
        keys.extend([
            Span::styled("  i", theme.key()),
            Span::raw(format!(" interface {iface}")),
        ]);
    }
    lines.push(Line::from(keys));
    frame.render_widget(Paragraph::new(lines), area);
}
