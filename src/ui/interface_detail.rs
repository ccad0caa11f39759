//! One interface in detail: the last 5 minutes of bits/s and packets/s per
//! direction, and every error counter as total and rate.
//!
//! ```text
//! eth0 veth <UP,LOWER_UP> mtu 1500 02:… speed 10G full
//! addr 198.18.0.1/24
//! ┌ bits/s  ⣿ rx 1.20 Mb/s  • tx 3.40 Mb/s ─────────────┐
//! │ chart, -5m … now                                      │
//! ┌ packets/s ... ┐
//! counter        total      /s   counter       total     /s
//! ```

use super::format;
use super::theme::Theme;
use crate::app::App;
use crate::app::history::WINDOW_SECONDS;
use crate::model::LinkCounters;
use crate::model::rates::{InterfaceRates, interval};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table,
};

struct Series {
    rx_bits: Vec<(f64, f64)>,
    tx_bits: Vec<(f64, f64)>,
    rx_packets: Vec<(f64, f64)>,
    tx_packets: Vec<(f64, f64)>,
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, index: usize, theme: Theme) {
    let Some(name) = app.interfaces.selected.clone() else {
        return;
    };
    let (previous, current) = app.history.pair(index);
    let Some(current) = current else {
        return;
    };
    let Some(iface) = current.interface(&name) else {
        let text = format!("{name} is gone: it was deleted or renamed. Esc goes back to the list.");
        frame.render_widget(Paragraph::new(text).style(theme.alert()), area);
        return;
    };
    let rates = InterfaceRates::for_interface(previous, current, iface);
    let series = series(app, index, &name);

    let errors_height = if area.height >= 10 { 5 } else { 0 };
    let charts_height = area.height.saturating_sub(2 + errors_height);
    let [info, bits, packets, errors] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(charts_height.div_ceil(2)),
        Constraint::Length(charts_height / 2),
        Constraint::Length(errors_height),
    ])
    .areas(area);

    super::interfaces::render_detail_info(frame, info, iface, theme);
    chart(
        frame,
        bits,
        "bits/s",
        (
            &series.rx_bits,
            rates.rx_bytes.map(|b| format::bits(b * 8.0)),
        ),
        (
            &series.tx_bits,
            rates.tx_bytes.map(|b| format::bits(b * 8.0)),
        ),
        format::bits,
        theme,
    );
    chart(
        frame,
        packets,
        "packets/s",
        (&series.rx_packets, rates.rx_packets.map(format::packets)),
        (&series.tx_packets, rates.tx_packets.map(format::packets)),
        format::packets,
        theme,
    );
    render_errors(frame, errors, &iface.counters, &rates, theme);
}

/// Rates of one interface over the history window, x in seconds before the
/// shown sample (negative), so "now" is 0.
fn series(app: &App, index: usize, name: &str) -> Series {
    let mut out = Series {
        rx_bits: vec![],
        tx_bits: vec![],
        rx_packets: vec![],
        tx_packets: vec![],
    };
    let Some(now) = app.history.get(index).map(|s| s.mono) else {
        return out;
    };
    for (before, after) in app.history.pairs_until(index) {
        let (Some(a), Some(b)) = (before.interface(name), after.interface(name)) else {
            continue;
        };
        if a.index != b.index {
            continue;
        }
        let r = InterfaceRates::between(&a.counters, &b.counters, interval(before, after));
        let x = after.mono - now;
        let push = |list: &mut Vec<(f64, f64)>, value: Option<f64>| {
            if let Some(v) = value {
                list.push((x, v));
            }
        };
        push(&mut out.rx_bits, r.rx_bytes.map(|v| v * 8.0));
        push(&mut out.tx_bits, r.tx_bytes.map(|v| v * 8.0));
        push(&mut out.rx_packets, r.rx_packets);
        push(&mut out.tx_packets, r.tx_packets);
    }
    out
}

/// Two series in one chart. rx and tx differ by marker as well as colour,
/// and the title names both with their current value.
fn chart(
    frame: &mut Frame,
    area: Rect,
    what: &str,
    rx: (&[(f64, f64)], Option<String>),
    tx: (&[(f64, f64)], Option<String>),
    label: fn(f64) -> String,
    theme: Theme,
) {
    if area.height < 3 {
        return;
    }
    let max =
        rx.0.iter()
            .chain(tx.0)
            .map(|p| p.1)
            .fold(0.0, f64::max)
            .max(1.0)
            * 1.1;
    let title = Line::from(vec![
        Span::raw(format!(" {what}  ")),
        Span::styled("⣿ rx ", theme.rx()),
        Span::raw(rx.1.unwrap_or_else(|| "–".into())),
        Span::styled("  • tx ", theme.tx()),
        Span::raw(format!("{} ", tx.1.unwrap_or_else(|| "–".into()))),
    ]);
    let datasets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.rx())
            .data(rx.0),
        Dataset::default()
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(theme.tx())
            .data(tx.0),
    ];
    let chart = Chart::new(datasets)
        .block(Block::default().borders(Borders::TOP).title(title))
        .legend_position(None)
        .x_axis(
            Axis::default()
                .bounds([-WINDOW_SECONDS, 0.0])
                .labels(["-5m", "-2.5m", "now"]),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, max])
                .labels(["0".to_string(), label(max)]),
        );
    frame.render_widget(chart, area);
}

fn render_errors(
    frame: &mut Frame,
    area: Rect,
    c: &LinkCounters,
    r: &InterfaceRates,
    theme: Theme,
) {
    if area.height == 0 {
        return;
    }
    let pair = |name: &'static str, total: u64, rate: Option<f64>| {
        let style = if rate.is_some_and(|v| v > 0.0) {
            theme.alert()
        } else {
            ratatui::style::Style::new()
        };
        [
            Cell::from(name),
            Cell::from(Line::from(total.to_string()).right_aligned()),
            Cell::from(Line::from(Span::styled(format::rate(rate), style)).right_aligned()),
        ]
    };
    let rows = [
        (
            pair("rx errors", c.rx_errors, r.rx_errors),
            pair("tx errors", c.tx_errors, r.tx_errors),
        ),
        (
            pair("rx dropped", c.rx_dropped, r.rx_dropped),
            pair("tx dropped", c.tx_dropped, r.tx_dropped),
        ),
        (
            pair("rx overruns", c.rx_over_errors, r.rx_overruns),
            pair("tx carrier", c.tx_carrier_errors, r.tx_carrier),
        ),
        (
            pair("rx crc/frame", c.rx_crc_errors + c.rx_frame_errors, None),
            pair("collisions", c.collisions, r.collisions),
        ),
    ]
    .into_iter()
    .map(|(left, right)| Row::new(left.into_iter().chain(right)));
    let header =
        Row::new(["counter", "total", "/s", "counter", "total", "/s"]).style(theme.header());
    let widths = [
        Constraint::Length(13),
        Constraint::Length(12),
        Constraint::Length(8),
        Constraint::Length(12),
        Constraint::Length(12),
        Constraint::Length(8),
    ];
    frame.render_widget(Table::new(rows, widths).header(header), area);
}
