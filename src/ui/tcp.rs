//! The TCP tab: `ss -s`, `netstat -s` / `nstat` as rates, and the knobs.
//!
//! ```text
//! state        now  5m              │ counter                /s     total 5m
//! ESTAB       1204  ▁▂▃▅▇█          │ ListenOverflows       12.0      340  ▁▁▅█
//! SYN-RECV       3  ▁▁▁▁▁▁          │ RetransSegs (0.4%)     3.0     1200  ▁▂▁▁
//! knobs: somaxconn 4096  tcp_max_syn_backlog 2048 …
//! findings of this tab, with evidence and fix
//! ```

use super::spark::spark;
use super::theme::Theme;
use crate::app::App;
use crate::app::history::History;
use crate::app::tcp::TcpView;
use crate::findings;
use crate::model::Sample;
use crate::model::snmp;
use crate::model::sockets::{COUNTERS, KNOBS, TCP_STATES, TcpSample};
use crate::model::tcp_rates::TcpRates;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

const TAB_FINDINGS: &[&str] = &[
    findings::SYN_FLOOD,
    findings::LISTEN_OVERFLOW,
    findings::SOCKET_BACKLOG,
    findings::RETRANSMITS,
];

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    let Some(index) = app.shown_index() else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    };
    let (previous, current) = app.history.pair(index);
    let Some(current) = current else {
        return;
    };
    let Some(tcp) = current.tcp.as_ref() else {
        frame.render_widget(Paragraph::new("no TCP data in this sample"), area);
        return;
    };
    // The same findings as the header (computed once per sample).
    let found: Vec<_> = app
        .derived
        .findings
        .iter()
        .filter(|f| TAB_FINDINGS.contains(&f.id))
        .cloned()
        .collect();
    // The findings whole (wrapped), up to half the tab.
    let finding_lines: Vec<Line> = found
        .iter()
        .flat_map(|f| super::findings_list::whole(f, usize::from(area.width), theme, Some(current)))
        .collect();
    let findings_height = (finding_lines.len() as u16).clamp(1, (area.height / 2).max(1));
    let knobs = knob_lines(tcp, area.width, theme);
    let knobs_height = if area.height >= 14 {
        (knobs.len() as u16).min(4)
    } else {
        0
    };
    let [top, knobs_area, findings_area] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(knobs_height),
        Constraint::Length(findings_height),
    ])
    .areas(area);
    let (states_area, counters_area) = if top.width >= 70 {
        let [left, right] = Layout::horizontal([Constraint::Length(32), Constraint::Min(0)])
            .spacing(1)
            .areas(top);
        (left, right)
    } else {
        let [left, right] =
            Layout::vertical([Constraint::Length(top.height / 2), Constraint::Min(0)]).areas(top);
        (left, right)
    };
    let history: Vec<&Sample> = (0..=index).filter_map(|i| app.history.get(i)).collect();
    render_states(frame, states_area, tcp, (&history, &app.tcp), theme);
    let rates = TcpRates::new(previous, current);
    let cited = cited_counters(&found);
    render_counters(
        frame,
        counters_area,
        (&app.history, &mut app.tcp),
        (index, &cited),
        rates,
        theme,
    );
    frame.render_widget(Paragraph::new(knobs), knobs_area);
    render_findings(frame, findings_area, finding_lines, theme);
}

fn render_states(
    frame: &mut Frame,
    area: Rect,
    tcp: &TcpSample,
    (history, view): (&[&Sample], &TcpView),
    theme: Theme,
) {
    let spark_width = usize::from(area.width.saturating_sub(20));
    let series = |f: &dyn Fn(&TcpSample) -> f64| -> Vec<f64> {
        history
            .iter()
            .filter_map(|s| s.tcp.as_ref().map(f))
            .collect()
    };
    let mut rows = Vec::new();
    // The states worth watching first, then the rest.
    for state in [1u8, 3, 6, 8, 10, 2, 4, 5, 9, 11, 7] {
        let name = TCP_STATES[usize::from(state) - 1];
        let count = tcp.state_count(state);
        let values = series(&|t| f64::from(t.state_count(state)));
        let row = Row::new([
            Cell::from(name),
            Cell::from(Line::from(count.to_string()).right_aligned()),
            Cell::from(Span::styled(spark(&values, spark_width), theme.rx())),
        ]);
        rows.push(if view.is_marked(name) {
            row.style(theme.selected())
        } else {
            row
        });
    }
    // This namespace's, counted from the dump (sockstat's is host-wide).
    let orphans = series(&|t| f64::from(t.orphans));
    let marked = |row: Row<'static>, name: &str| {
        if view.is_marked(name) {
            row.style(theme.selected())
        } else {
            row
        }
    };
    rows.push(marked(
        Row::new([
            Cell::from("orphans"),
            Cell::from(Line::from(tcp.orphans.to_string()).right_aligned()),
            Cell::from(Span::styled(spark(&orphans, spark_width), theme.rx())),
        ]),
        "orphans",
    ));
    let pressure = match tcp.memory_pressure() {
        Some(true) => Span::styled("PRESSURE", theme.alert()),
        Some(false) => Span::raw("ok"),
        None => Span::raw("–"),
    };
    rows.push(marked(
        Row::new([
            Cell::from("tcp mem"),
            Cell::from(Line::from(format!("{}p", tcp.sockstat.tcp_mem_pages)).right_aligned()),
            Cell::from(pressure),
        ]),
        "tcp mem",
    ));
    let header = Row::new(["state", "now", "5m"]).style(theme.header());
    let widths = [
        Constraint::Length(11),
        Constraint::Length(7),
        Constraint::Min(0),
    ];
    frame.render_widget(
        Table::new(rows, widths).header(header).column_spacing(1),
        area,
    );
}

/// Name, meaning, rate, total, rate history.
type CounterRow<'a> = (&'a str, &'a str, Option<f64>, u64, Vec<f64>);

/// The counters the shown findings rest on, to keep them in view.
fn cited_counters(found: &[findings::Finding]) -> Vec<&'static str> {
    let mut cited = Vec::new();
    for finding in found {
        cited.extend_from_slice(match finding.id {
            findings::LISTEN_OVERFLOW => {
                &[snmp::TCP_EXT_LISTEN_OVERFLOWS, snmp::TCP_EXT_LISTEN_DROPS][..]
            }
            findings::SYN_FLOOD => &[
                snmp::TCP_EXT_SYNCOOKIES_SENT,
                snmp::TCP_EXT_TCP_REQ_Q_FULL_DROP,
                snmp::TCP_EXT_LISTEN_DROPS,
            ],
            findings::RETRANSMITS => &[snmp::TCP_RETRANS_SEGS, snmp::TCP_EXT_TCP_TIMEOUTS],
            findings::UDP_DROPS => &[snmp::UDP_RCVBUF_ERRORS, snmp::UDP_IN_ERRORS],
            findings::CONNECT_REFUSED => &[
                snmp::TCP_OUT_RSTS,
                snmp::TCP_ATTEMPT_FAILS,
                snmp::TCP_EXT_TCP_ABORT_ON_TIMEOUT,
            ],
            findings::TCP_MEMORY => &[
                snmp::TCP_EXT_TCP_MEMORY_PRESSURES,
                snmp::TCP_EXT_TCP_ABORT_ON_MEMORY,
            ],
            _ => &[],
        });
    }
    cited
}

/// Where a counter goes in the list: what a finding cites, then what moves
/// now, then what moved within the chart's window, then the quiet ones
/// (each group in the table's order), so a counter that just stopped
/// (ListenOverflows after a burst) does not drop below the fold.
fn counter_rank(row: &CounterRow, cited: &[&str]) -> u8 {
    let (name, _, rate, _, series) = row;
    if cited.contains(name) {
        0
    } else if rate.is_some_and(|r| r > 0.0) {
        1
    } else if series.iter().any(|r| *r > 0.0) {
        2
    } else {
        3
    }
}

fn render_counters(
    frame: &mut Frame,
    area: Rect,
    (history, view): (&History, &mut TcpView),
    (index, cited): (usize, &[&str]),
    rates: Option<TcpRates>,
    theme: Theme,
) {
    let Some(rates) = rates else {
        return;
    };
    // Per-counter rate series over the history window.
    let pairs: Vec<(&Sample, &Sample)> = history.pairs_until(index).collect();
    let mut entries: Vec<CounterRow> = COUNTERS
        .iter()
        .filter_map(|(name, meaning)| {
            let total = rates.current().counter(name)?;
            let series = pairs
                .iter()
                .filter_map(|(a, b)| TcpRates::new(Some(a), b)?.rate(name))
                .collect();
            Some((*name, *meaning, rates.rate(name), total, series))
        })
        .collect();
    entries.sort_by_key(|e| counter_rank(e, cited));
    let visible = usize::from(area.height.saturating_sub(1));
    view.page = visible.max(1);
    view.rows = entries.len();
    if view.scroll_to_mark {
        view.scroll_to_mark = false;
        if let Some(at) = entries.iter().position(|e| view.is_marked(e.0)) {
            view.offset = crate::app::scroll_offset(view.offset, at, visible);
        }
    }
    view.offset = view
        .offset
        .min(entries.len().saturating_sub(visible.max(1)));
    let wide = area.width >= 70;
    // counter 20, rate 8, total 9, three gaps: 40; "meaning" takes 28 when wide.
    let spark_width = usize::from(area.width.saturating_sub(if wide { 40 + 29 } else { 40 }));
    let retrans = rates.retrans_percent();
    let rows = entries.iter().skip(view.offset).take(visible).map(
        |(name, meaning, rate, total, series)| {
            let short = name.split_once('.').map_or(*name, |(_, n)| n);
            let label = if *name == snmp::TCP_RETRANS_SEGS {
                match retrans {
                    Some(p) => format!("{short} ({p:.1}%)"),
                    None => short.to_string(),
                }
            } else {
                short.to_string()
            };
            let style = if rate.is_some_and(|r| r > 0.0) {
                theme.warn()
            } else {
                theme.dim()
            };
            let mut cells = vec![
                Cell::from(label),
                Cell::from(
                    Line::from(Span::styled(super::format::rate(*rate), style)).right_aligned(),
                ),
                Cell::from(Line::from(total.to_string()).right_aligned()),
                Cell::from(Span::styled(spark(series, spark_width), theme.rx())),
            ];
            if wide {
                cells.push(Cell::from(Span::styled(*meaning, theme.dim())));
            }
            if view.is_marked(name) {
                Row::new(cells).style(theme.selected())
            } else {
                Row::new(cells)
            }
        },
    );
    let mut titles = vec!["counter", "/s", "total", "5m"];
    let mut widths = vec![
        Constraint::Length(20),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(spark_width as u16),
    ];
    if wide {
        titles.push("meaning");
        widths.push(Constraint::Min(0));
    }
    let header = Row::new(titles).style(theme.header());
    frame.render_widget(
        Table::new(rows, widths).header(header).column_spacing(1),
        area,
    );
}

/// The knobs as lines of `width`: whole "name value" pairs per line, so a
/// value such as tcp_rmem's three numbers never wraps away from its name.
fn knob_lines(tcp: &TcpSample, width: u16, theme: Theme) -> Vec<Line<'static>> {
    // Whole "name value" pairs per line: a value such as tcp_rmem's three
    // numbers never wraps away from its name.
    let width = usize::from(width);
    let mut lines = vec![Line::from(Span::styled("knobs", theme.header()))];
    for name in KNOBS {
        let short = name.rsplit('.').next().unwrap_or(name);
        let value = tcp.knob(name).unwrap_or("?");
        let needed = 2 + short.chars().count() + 1 + value.chars().count();
        let line = lines.last_mut().expect("one line at least");
        if line.width() > 0 && line.width() + needed > width {
            lines.push(Line::default());
        }
        let line = lines.last_mut().expect("one line at least");
        let gap = if line.width() == 0 { "" } else { "  " };
        line.push_span(Span::styled(format!("{gap}{short} "), theme.dim()));
        line.push_span(Span::raw(value.to_string()));
    }
    lines
}

fn render_findings(frame: &mut Frame, area: Rect, mut lines: Vec<Line>, theme: Theme) {
    if lines.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                "no syn-flood, listen-overflow, socket-backlog or retransmits finding",
                theme.dim(),
            )),
            area,
        );
        return;
    }
    // What does not fit is said, not silently cut: ! shows every one whole.
    let room = usize::from(area.height);
    if lines.len() > room && room > 0 {
        let hidden = lines.len() - (room - 1);
        lines.truncate(room - 1);
        lines.push(Line::from(Span::styled(
            format!("… {hidden} more lines: ! lists every finding whole"),
            theme.dim(),
        )));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
