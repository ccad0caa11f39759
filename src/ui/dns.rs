//! The DNS tab: the resolver configuration, a per-server table (probes and
//! queries seen on the wire), the selected server's latency histogram and
//! probe timeline, the slowest and failing names, and PTR lookups.
//!
//! ```text
//! resolver 127.0.0.53 (systemd-resolved stub) · search corp.test · timeout 5s …
//! hosts: files dns · /etc/hosts 7 entries · passive: on · probes: A fast.test
//! server               via      n   p50   p90   p99   max  tmo SRVF NXD% REF%
//! 127.0.0.1:5353       probe    9   0.2   301   301   301    3    0    0    0
//! latency ≤1ms 6 ███  ≤500ms 3 █▌
//! timeline ▁▁x▇▁▁x▇  x timeout u port unreachable ! error · none
//! slowest: A slow.test 301ms · A fast.test 0.3ms
//! failing: PTR 198.18.0.9 timeout 3/3
//! PTR: 3 reverse lookups, 3 unanswered: each stalls its caller 5 s
//! n add a probe (NAME, AAAA:NAME, an address for PTR)
//! ```

use super::format::fit;
use super::theme::Theme;
use crate::app::App;
use crate::app::dns::{DnsSummary, ServerRow, Tick};
use crate::dns::Outcome;
use crate::dns::config::stub_label;
use crate::dns::stats::{self, BUCKETS_MS, Stats};
use crate::findings::dns::ptr_address;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    let prompt = app.dns.prompt.clone();
    let message = app.dns.message.clone();
    let selected = app.dns.selected;
    let summary = app.dns_summary().clone();
    if area.height == 0 {
        return;
    }
    let width = usize::from(area.width);
    let probing = app.replay.is_none();
    let status = status_line(
        prompt.as_deref(),
        message.as_deref(),
        &summary,
        probing,
        theme,
    );
    let config = config_lines(&summary, width, theme);
    let names = name_lines(&summary, width, theme);
    let detail = summary
        .servers
        .get(selected)
        .map(|row| detail_lines(row, width, theme))
        .unwrap_or_default();
    // Rows by priority: status, config, table (header + rows), detail, names.
    let mut left = area.height;
    let status_h = left.min(1);
    left -= status_h;
    let config_h = left.min(config.len() as u16).min(match left {
        14.. => 3,
        8.. => 2,
        _ => 1,
    });
    left -= config_h;
    // The table keeps room for the detail and names below it.
    let rows = summary.servers.len().max(1) as u16;
    let table_h = left.min(1 + rows.min(if left >= 12 { 6 } else { 3 }));
    left -= table_h;
    let detail_h = left.min(detail.len() as u16);
    left -= detail_h;
    let names_h = left.min(names.len() as u16);
    let [
        config_area,
        table_area,
        detail_area,
        names_area,
        _,
        status_area,
    ] = Layout::vertical([
        Constraint::Length(config_h),
        Constraint::Length(table_h),
        Constraint::Length(detail_h),
        Constraint::Length(names_h),
        Constraint::Min(0),
        Constraint::Length(status_h),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(config), config_area);
    server_table(frame, table_area, &summary, selected, app, theme);
    frame.render_widget(Paragraph::new(detail), detail_area);
    frame.render_widget(Paragraph::new(names), names_area);
    frame.render_widget(Paragraph::new(status), status_area);
}

fn config_lines(s: &DnsSummary, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let Some(c) = &s.config else {
        return vec![Line::from("waiting for the first DNS sample…")];
    };
    let servers = if c.nameservers.is_empty() {
        "none listed".to_string()
    } else {
        c.nameservers
            .iter()
            .map(|n| match stub_label(n) {
                Some(stub) => format!("{n} ({stub})"),
                None => n.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut first = format!("resolver {servers}");
    if !c.search.is_empty() {
        first.push_str(&format!(" · search {}", c.search.join(" ")));
    }
    if let Some(error) = &c.error {
        first = format!("resolver: {error}");
    }
    let hosts = c
        .hosts_entries
        .map_or("unreadable".to_string(), |n| format!("{n}"));
    let passive = if s.passive_on {
        "passive on".to_string()
    } else {
        format!(
            "passive off: {}",
            s.passive_error.as_deref().unwrap_or("no capture")
        )
    };
    let second = format!(
        "timeout {}s attempts {} ndots {}{} · nsswitch: {} · /etc/hosts: {hosts}",
        c.timeout_s,
        c.attempts,
        c.ndots,
        if c.rotate { " rotate" } else { "" },
        c.nsswitch_hosts.as_deref().unwrap_or("(no nsswitch.conf)")
    );
    let third = if s.probe_specs.is_empty() {
        format!("{passive} · no probes (opt-in: --dns-probe NAME, or n)")
    } else {
        format!(
            "{passive} · probes {} → {}",
            s.probe_specs.join(", "),
            servers_label(s)
        )
    };
    vec![
        Line::from(Span::styled(fit(&first, width), theme.title())),
        Line::from(fit(&second, width)),
        Line::from(Span::styled(fit(&third, width), theme.dim())),
    ]
}

fn ms(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(v) if v < 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
    }
}

fn percent(stats: &Stats, n: u64) -> String {
    if n == 0 {
        "0".into()
    } else {
        format!("{:.0}", stats.rate(n))
    }
}

const TITLES: [&str; 11] = [
    "server", "via", "n", "p50", "p90", "p99", "max", "tmo", "SRVF", "NXD%", "REF%",
];
const WIDTHS: [u16; 11] = [21, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4];
/// Columns by importance: a narrow pane drops from the end of this list
/// rather than squeezing the server address.
const PRIORITY: [usize; 11] = [0, 1, 4, 7, 2, 3, 6, 9, 8, 5, 10];

/// The column indexes (in table order) that fit in `width`.
fn columns_that_fit(width: u16) -> Vec<usize> {
    let mut used = 0u16;
    let mut keep = Vec::new();
    for &i in &PRIORITY {
        let need = WIDTHS[i] + u16::from(!keep.is_empty());
        if used + need > width && !keep.is_empty() {
            continue;
        }
        used += need;
        keep.push(i);
    }
    keep.sort_unstable();
    keep
}

fn server_table(
    frame: &mut Frame,
    area: Rect,
    s: &DnsSummary,
    selected: usize,
    app: &mut App,
    theme: Theme,
) {
    if area.height == 0 {
        return;
    }
    let keep = columns_that_fit(area.width);
    let pick = |cells: Vec<Cell<'static>>| -> Vec<Cell<'static>> {
        cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, c)| c)
            .collect()
    };
    let header =
        Row::new(pick(TITLES.iter().map(|t| Cell::from(*t)).collect())).style(theme.header());
    let body_height = usize::from(area.height.saturating_sub(1));
    let offset = crate::app::scroll_offset(0, selected, body_height);
    let rows: Vec<Row> = s
        .servers
        .iter()
        .enumerate()
        .skip(offset)
        .take(body_height)
        .map(|(i, row)| {
            let st = &row.stats;
            let mut cells = vec![
                Cell::from(st.key.clone()),
                Cell::from(if row.source == "probe" {
                    "probe"
                } else {
                    "wire"
                }),
                Cell::from(st.count.to_string()),
                Cell::from(ms(st.percentile(50.0))),
                Cell::from(ms(st.percentile(90.0))),
                Cell::from(ms(st.percentile(99.0))),
                Cell::from(ms(st.max())),
                Cell::from(st.timeouts.to_string()),
                Cell::from(percent(st, st.servfail)),
                Cell::from(percent(st, st.nxdomain)),
                Cell::from(percent(st, st.refused)),
            ];
            if st.timeouts > 0 {
                cells[7] = Cell::from(Span::styled(st.timeouts.to_string(), theme.alert()));
            }
            let row = Row::new(pick(cells));
            if i == selected {
                row.style(theme.selected())
            } else {
                row
            }
        })
        .collect();
    let empty = s.servers.is_empty();
    let widths: Vec<Constraint> = keep
        .iter()
        .map(|&i| Constraint::Length(WIDTHS[i]))
        .collect();
    frame.render_widget(Table::new(rows, widths).header(header), area);
    if empty && area.height >= 2 {
        let rest = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
        frame.render_widget(
            Paragraph::new(Span::styled(empty_reason(s), theme.dim()))
                .wrap(ratatui::widgets::Wrap { trim: true }),
            rest,
        );
    }
    let data = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
    app.hits.rows = (!empty).then_some((data, offset));
}

/// Why the server table is empty, the reason first so a narrow pane shows
/// it: without a capture no query is seen on the wire, and without a probe
/// none is sent.
fn empty_reason(s: &DnsSummary) -> &'static str {
    if s.config.is_none() {
        // No sample carried DNS at all (yet, or in this recording).
        return "no DNS data in the samples";
    }
    match (s.probe_specs.is_empty(), s.passive_on) {
        (false, _) => "no results yet: the first probes are on their way",
        (true, true) => "no queries on the wire yet; n probes a name",
        (true, false) => "capture off, no --dns-probe: n adds one",
    }
}

/// The selected server's histogram and (for probes) its timeline.
fn detail_lines(row: &ServerRow, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut spans = vec![Span::styled("latency ", theme.header())];
    let most = row.histogram.iter().copied().max().unwrap_or(0).max(1);
    for (i, &count) in row.histogram.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let label = match BUCKETS_MS.get(i) {
            Some(&b) if b >= 1000.0 => format!("≤{}s", b / 1000.0),
            Some(&b) => format!("≤{b}ms"),
            None => format!(">{}s", BUCKETS_MS[BUCKETS_MS.len() - 1] / 1000.0),
        };
        let bar = "█".repeat(((count * 6).div_ceil(most)) as usize);
        spans.push(Span::raw(format!("{label} {count} {bar}  ")));
    }
    if row.histogram.iter().all(|&c| c == 0) {
        spans.push(Span::styled("no answers", theme.alert()));
    }
    let mut lines = vec![Line::from(spans)];
    if row.source == "probe" {
        const LEGEND: &str = "  x timeout u port unreachable ! error · none";
        let room = width.saturating_sub(9 + LEGEND.chars().count()).max(8);
        let start = row.timeline.len().saturating_sub(room);
        let ticks: String = row.timeline[start..]
            .iter()
            .map(|t| tick_char(*t))
            .collect();
        lines.push(Line::from(vec![
            Span::styled("timeline ", theme.header()),
            Span::raw(ticks),
            Span::styled(LEGEND, theme.dim()),
        ]));
    }
    lines
}

/// Bar height by latency bucket (log scale), a letter for a failure.
fn tick_char(tick: Tick) -> char {
    match tick {
        Tick::Idle => '·',
        Tick::Failed(Outcome::Timeout) => 'x',
        Tick::Failed(Outcome::Nxdomain) => 'n',
        Tick::Failed(Outcome::Unreachable) => 'u',
        Tick::Failed(Outcome::Error) => '!',
        Tick::Failed(_) => '!',
        Tick::Answered(ms) => {
            const BARS: [(f64, char); 7] = [
                (1.0, '▁'),
                (5.0, '▂'),
                (20.0, '▃'),
                (50.0, '▄'),
                (100.0, '▅'),
                (200.0, '▆'),
                (500.0, '▇'),
            ];
            BARS.iter()
                .find(|(bound, _)| ms <= *bound)
                .map_or('█', |(_, c)| *c)
        }
    }
}

fn name_label(stats: &Stats) -> String {
    match stats.key.split_once(' ') {
        Some(("PTR", name)) => match ptr_address(name) {
            Some(ip) => format!("PTR {ip}"),
            None => stats.key.clone(),
        },
        _ => stats.key.clone(),
    }
}

fn name_lines(s: &DnsSummary, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let slowest = stats::slowest(&s.names, 4);
    if !slowest.is_empty() {
        let text = slowest
            .iter()
            .map(|n| format!("{} {}ms", name_label(n), ms(n.max())))
            .collect::<Vec<_>>()
            .join(" · ");
        lines.push(Line::from(vec![
            Span::styled("slowest: ", theme.header()),
            Span::raw(fit(&text, width.saturating_sub(9))),
        ]));
    }
    for n in stats::failing(&s.names, 3) {
        let worst = [
            (n.timeouts, "timeout"),
            (n.servfail, "SERVFAIL"),
            (n.nxdomain, "NXDOMAIN"),
            (n.refused, "REFUSED"),
            (n.errors, "error"),
            (n.unreachable, "port unreachable (ICMP)"),
        ]
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!("{what} {count}/{}", n.count))
        .collect::<Vec<_>>()
        .join(", ");
        let text = format!("{} {worst} via {}", name_label(n), n.servers.join(" "));
        lines.push(Line::from(vec![
            Span::styled("failing: ", theme.alert()),
            Span::raw(fit(&text, width.saturating_sub(9))),
        ]));
    }
    let ptr: Vec<&Stats> = s.names.iter().filter(|n| n.ptr).collect();
    if !ptr.is_empty() {
        let count: u64 = ptr.iter().map(|n| n.count).sum();
        let unanswered: u64 = ptr.iter().map(|n| n.timeouts).sum();
        let text = if unanswered > 0 {
            format!(
                "{count} reverse lookups, {unanswered} unanswered: each stalls its caller {:.0} s \
                 (a tool resolving every address)",
                s.timeout_s
            )
        } else {
            format!("{count} reverse lookups, all answered")
        };
        let style = if unanswered > 0 {
            theme.warn()
        } else {
            theme.dim()
        };
        lines.push(Line::from(vec![
            Span::styled("PTR: ", style),
            Span::raw(fit(&text, width.saturating_sub(5))),
        ]));
    }
    lines
}

fn status_line(
    prompt: Option<&str>,
    message: Option<&str>,
    s: &DnsSummary,
    probing: bool,
    theme: Theme,
) -> Line<'static> {
    if let Some(text) = prompt {
        return Line::from(vec![
            Span::styled("probe (NAME, AAAA:NAME, an address for PTR): ", theme.key()),
            Span::raw(format!("{text}_")),
        ]);
    }
    if let Some(message) = message {
        return Line::from(Span::raw(message.to_string()));
    }
    let span = if s.span_s > 0.0 {
        format!("figures over the last {:.0} s; ", s.span_s)
    } else {
        String::new()
    };
    // Nothing is probed in replay: do not offer it.
    let offer = if probing {
        "n adds a probe"
    } else {
        "no probes in replay (the recorded results are shown)"
    };
    Line::from(Span::styled(format!("{span}{offer}"), theme.dim()))
}

fn servers_label(s: &DnsSummary) -> String {
    if s.probe_servers.is_empty() {
        "(no server: give --dns-server)".into()
    } else {
        s.probe_servers.join(" ")
    }
}
