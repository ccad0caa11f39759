//! The Load tab: the form, the running load (progress gauge, live rate
//! chart, latest interval) and the past runs with the selected result.
//!
//! ```text
//! ┌ Load ──────────────────────┐┌ tcp → 127.0.0.1:5201 ─────────────────┐
//! │ kind   ‹ tcp ›             ││ ██████████░░░░░░░░ 3.2s of 10s         │
//! │ target 127.0.0.1:5201      ││ ▁▂▅▇▇▇▆▇▇ (bits/s chart)               │
//! │ ...                        ││ latest interval line                   │
//! └────────────────────────────┘└────────────────────────────────────────┘
//! ┌ Result ─────────────────────────────────────────────────────────────┐
//! └ Past runs ──────────────────────────────────────────────────────────┘
//! ```

use super::theme::Theme;
use crate::app::App;
use crate::app::load::{Field, Kind, LoadView};
use crate::load::format::{count, millis};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Gauge, Paragraph, Sparkline, Wrap};

/// Below this width the form and the run are stacked, not side by side.
const NARROW: u16 = 60;

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let view = &app.load;
    // The form's fields, its hint line and the borders.
    let form_height = view.fields().len() as u16 + 3;
    let [top, result, past] = Layout::vertical([
        Constraint::Length(form_height),
        Constraint::Min(0),
        Constraint::Length((view.runs.len() as u16 + 2).clamp(3, 7)),
    ])
    .areas(area);
    if area.width < NARROW {
        // Too narrow for the run beside the form: the run takes the
        // result's place below it (its last result is in Past runs).
        render_form(frame, top, view, theme);
        render_run(frame, result, view, theme);
    } else {
        let [form, run] =
            Layout::horizontal([Constraint::Length(36), Constraint::Min(0)]).areas(top);
        render_form(frame, form, view, theme);
        render_run(frame, run, view, theme);
        render_result(frame, result, view, theme);
    }
    render_past(frame, past, view, theme);
    if let Some((_, target)) = &view.confirm {
        render_confirm(frame, area, target, theme);
    }
}

fn render_form(frame: &mut Frame, area: Rect, view: &LoadView, theme: Theme) {
    let block = Block::default().borders(Borders::ALL).title(" Load ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines = Vec::new();
    for (index, field) in view.fields().iter().enumerate() {
        let selected = index == view.field;
        let value = match (field, &view.editing) {
            (_, Some(text)) if selected => crate::app::line_edit::shown(text),
            (Field::Kind, _) => format!("‹ {} ›", view.kind.name()),
            (Field::Connections, _) if view.kind.connections_unit().is_none() => "–".into(),
            (other, _) => view.value(*other),
        };
        let unit = field.unit(view.kind);
        let style = if selected {
            theme.selected()
        } else {
            ratatui::style::Style::new()
        };
        let mut spans = vec![
            Span::styled(format!("{:<9}", field.label()), theme.dim()),
            Span::styled(value, style),
        ];
        if !unit.is_empty() {
            spans.push(Span::styled(format!(" {unit}"), theme.dim()));
        }
        lines.push(Line::from(spans));
    }
    match (&view.editing, &view.field_error) {
        // The refused value's error, where the eye is; it wraps under
        // the form when the box is too narrow for it.
        (Some(_), Some(error)) => lines.push(Line::from(Span::styled(
            format!("✗ {error} (Esc cancel)"),
            theme.alert(),
        ))),
        (Some(_), None) => lines.push(Line::from(Span::styled(
            "Enter keep  Esc cancel",
            theme.key(),
        ))),
        _ => lines.push(Line::from(Span::styled(
            "r run  Enter edit  ←→ kind",
            theme.key(),
        ))),
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A chart value as the kind's unit says it, short enough for the label.
fn show_value(kind: Kind, value: f64) -> String {
    match kind {
        Kind::Tcp | Kind::Udp => super::format::bits_short(value),
        Kind::Http => format!("{}/s", count(value)),
        Kind::Probe => millis(value),
        Kind::Pktgen => format!("{} pps", count(value)),
    }
}

fn render_run(frame: &mut Frame, area: Rect, view: &LoadView, theme: Theme) {
    let (title, series, kind) = match (&view.running, view.runs.first()) {
        (Some(r), _) => (
            format!(" {} → {} ", r.kind.name(), r.target),
            &r.series,
            r.kind,
        ),
        (None, Some(p)) => (
            format!(" #{} {} → {} ", p.id, p.kind.name(), p.target),
            &p.series,
            p.kind,
        ),
        (None, None) => (" No run yet ".to_string(), &Vec::new(), view.kind),
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if view.running.is_none()
        && view.kind == Kind::Pktgen
        && let Some(missing) = view.pktgen_missing()
    {
        let text = vec![
            Line::from(Span::styled(missing, theme.warn())),
            Line::from(Span::styled(
                "r: switch the form to udp to the same dst instead",
                theme.key(),
            )),
        ];
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), inner);
        return;
    }
    if view.running.is_none() && view.runs.is_empty() {
        let text = vec![
            Line::from("Fill in the form, then press r."),
            Line::from(Span::styled(
                "The other end: `netlens load serve` (like iperf3 -s), or any HTTP server for http.",
                theme.dim(),
            )),
        ];
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), inner);
        return;
    }
    let [gauge, chart, latest] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(inner);
    match &view.running {
        Some(running) => {
            let elapsed = running.started.elapsed().as_secs_f64();
            let label = if running.stopping {
                "stopping…".to_string()
            } else {
                format!("{elapsed:.1}s of {:.0}s", running.planned.as_secs_f64())
            };
            frame.render_widget(
                Gauge::default()
                    .gauge_style(theme.good())
                    .ratio(running.progress())
                    .label(label),
                gauge,
            );
            let text = match running.series.last() {
                Some(value) => Line::from(vec![
                    Span::styled("now ", theme.dim()),
                    Span::raw(show_value(running.kind, *value)),
                ]),
                None => Line::from(Span::styled("starting…", theme.dim())),
            };
            frame.render_widget(Paragraph::new(text), latest);
        }
        None => {
            let text = match view.runs.first() {
                Some(p) if p.ok => Line::from(vec![
                    Span::styled("done  ", theme.good()),
                    Span::raw(p.headline.clone()),
                ]),
                Some(p) => Line::from(Span::styled(p.headline.clone(), theme.alert())),
                None => Line::from(""),
            };
            frame.render_widget(Paragraph::new(text), gauge);
        }
    }
    if chart.height > 0 && !series.is_empty() {
        let width = usize::from(chart.width.saturating_sub(14)).max(1);
        let shown = &series[series.len().saturating_sub(width)..];
        let peak = shown.iter().copied().fold(0.0_f64, f64::max);
        let data: Vec<u64> = shown
            .iter()
            .map(|v| (v / peak.max(1e-9) * 1000.0) as u64)
            .collect();
        let [label, spark] =
            Layout::horizontal([Constraint::Length(14), Constraint::Min(0)]).areas(chart);
        frame.render_widget(
            Paragraph::new(vec![
                Line::from(Span::styled(
                    format!("{} max", kind.chart_unit()),
                    theme.dim(),
                )),
                Line::from(show_value(kind, peak)),
            ]),
            label,
        );
        frame.render_widget(
            Sparkline::default().data(&data).max(1000).style(theme.rx()),
            spark,
        );
    }
}

fn render_result(frame: &mut Frame, area: Rect, view: &LoadView, theme: Theme) {
    let block = Block::default().borders(Borders::ALL).title(" Result ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines: Vec<Line> = if let Some(error) = view.field_error.as_ref().or(view.error.as_ref()) {
        vec![Line::from(Span::styled(error.clone(), theme.alert()))]
    } else if let Some(past) = view.runs.first().filter(|_| view.running.is_none()) {
        past.text
            .lines()
            .map(|l| Line::from(l.to_string()))
            .collect()
    } else if let Some(running) = &view.running {
        // The run's output so far, newest at the bottom, as the command line
        // prints it.
        let room = usize::from(inner.height.saturating_sub(1));
        let mut lines = vec![Line::from(Span::styled(
            "running: watch its effect in the other tabs (1 Interfaces); s or Esc stops it",
            theme.dim(),
        ))];
        let from = running.log.len().saturating_sub(room);
        lines.extend(running.log[from..].iter().map(|l| Line::from(l.clone())));
        lines
    } else {
        vec![Line::from(Span::styled(
            "Load goes only to the target given; one off loopback asks first. \
             pktgen (the last kind) sends from the kernel on a device you name.",
            theme.dim(),
        ))]
    };
    let paragraph = Paragraph::new(lines);
    // A running log is cut at the edge so its newest line stays in sight.
    let paragraph = if view.running.is_some() && view.error.is_none() {
        paragraph
    } else {
        paragraph.wrap(Wrap { trim: false })
    };
    frame.render_widget(paragraph, inner);
}

fn render_past(frame: &mut Frame, area: Rect, view: &LoadView, theme: Theme) {
    let block = Block::default().borders(Borders::ALL).title(" Past runs ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines: Vec<Line> = if view.runs.is_empty() {
        vec![Line::from(Span::styled("none yet", theme.dim()))]
    } else {
        view.runs
            .iter()
            .take(usize::from(inner.height))
            .map(|p| {
                Line::from(vec![
                    Span::styled(format!("#{:<3}", p.id), theme.dim()),
                    Span::raw(format!("{:<7}{:<22} ", p.kind.name(), p.target)),
                    Span::styled(
                        p.headline.clone(),
                        if p.ok {
                            ratatui::style::Style::new()
                        } else {
                            theme.alert()
                        },
                    ),
                ])
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

fn render_confirm(frame: &mut Frame, area: Rect, target: &str, theme: Theme) {
    let width = area.width.min(60);
    let height = area.height.min(6);
    let popup = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Not loopback ")
        .border_style(theme.warn());
    let text = vec![
        Line::from(format!("Send load to {target}?")),
        Line::from("It is not on this host's loopback."),
        Line::from(Span::styled("y send   any other key cancels", theme.key())),
    ];
    frame.render_widget(
        Paragraph::new(text).block(block).wrap(Wrap { trim: true }),
        popup,
    );
}
