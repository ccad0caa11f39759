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
use crate::model::netdev::{self, LinkCounter};
use crate::model::rates::{InterfaceRates, QdiscRates, counter_rate, links_interval, sum_known};
use crate::model::{InterfaceRef, InterfaceSample, LinkCounters, netns};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table,
};

#[derive(Default)]
struct Series {
    rx_bits: Vec<(f64, f64)>,
    tx_bits: Vec<(f64, f64)>,
    rx_packets: Vec<(f64, f64)>,
    tx_packets: Vec<(f64, f64)>,
    /// errors + drops + overruns per direction.
    rx_trouble: Vec<(f64, f64)>,
    tx_trouble: Vec<(f64, f64)>,
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, index: usize, theme: Theme) {
    let Some(at) = app.interfaces.selected.clone() else {
        return;
    };
    let name = at.name.as_str();
    // The NIC queues and neighbours are collected in the watched namespace
    // only: another namespace's interface of the same name is not that one.
    let watched = at.netns == netns::PRIMARY;
    let (previous, current) = app.history.pair(index);
    let Some(current) = current else {
        return;
    };
    let Some(iface) = current.interface_at(&at) else {
        let text = format!("{name} is gone: it was deleted or renamed. Esc goes back to the list.");
        frame.render_widget(Paragraph::new(text).style(theme.alert()), area);
        return;
    };
    let rates = InterfaceRates::for_interface(previous, current, iface);
    let series = series(app, index, &at);

    // The NIC's queues, when collected (not in recordings made before).
    let neigh = watched
        .then(|| super::nic_detail::neigh_line(current, name))
        .flatten();
    let neigh_height = u16::from(neigh.is_some() && area.height >= 15);
    let nic_height = if area.height >= 16 && watched && super::nic_detail::collected(current, name)
    {
        2
    } else {
        0
    };
    let [info, queue, neigh_area, nic, rest] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Length(neigh_height),
        Constraint::Length(nic_height),
        Constraint::Min(0),
    ])
    .areas(area);
    if let Some(line) = neigh.filter(|_| neigh_height > 0) {
        frame.render_widget(Paragraph::new(line), neigh_area);
    }
    if nic_height > 0 {
        super::nic_detail::render(frame, nic, previous, current, name);
    }
    super::interfaces::render_detail_info(frame, info, current, iface, theme);
    render_qdisc(frame, queue, previous, current, iface, theme);
    // Charts on the left, counters on the right; stacked when narrow.
    let (charts, side) = if rest.width >= 72 {
        let [charts, side] =
            Layout::horizontal([Constraint::Min(40), Constraint::Length(COUNTERS_WIDTH)])
                .spacing(1)
                .areas(rest);
        (charts, side)
    } else {
        let counters_height = if rest.height >= 16 { 13 } else { 0 };
        let [charts, side] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(counters_height)]).areas(rest);
        (charts, side)
    };
    let [bits, packets] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(charts);
    let [counters, trouble] =
        Layout::vertical([Constraint::Length(13), Constraint::Min(0)]).areas(side);
    chart(
        frame,
        bits,
        "bits/s",
        (
            &series.rx_bits,
            rates.rate(&netdev::RX_BYTES).map(|b| format::bits(b * 8.0)),
        ),
        (
            &series.tx_bits,
            rates.rate(&netdev::TX_BYTES).map(|b| format::bits(b * 8.0)),
        ),
        format::bits,
        theme,
    );
    chart(
        frame,
        packets,
        "packets/s",
        (
            &series.rx_packets,
            rates.rate(&netdev::RX_PACKETS).map(format::packets),
        ),
        (
            &series.tx_packets,
            rates.rate(&netdev::TX_PACKETS).map(format::packets),
        ),
        format::packets,
        theme,
    );
    // The same interface one sample earlier, unless it was re-created.
    let before = previous.and_then(|p| {
        p.interface_at(&at)
            .filter(|b| b.index == iface.index)
            .map(|b| (p, b))
    });
    render_counters(
        frame,
        counters,
        before.map(|(_, b)| &b.counters),
        &iface.counters,
        before.map_or(0.0, |(p, _)| links_interval(p, current, iface.netns)),
        theme,
    );
    let rx_trouble = sum_known(RX_TROUBLE.map(|c| rates.rate(&c)));
    let tx_trouble = sum_known(TX_TROUBLE.map(|c| rates.rate(&c)));
    chart(
        frame,
        trouble,
        "err+drop/s",
        (&series.rx_trouble, rx_trouble.map(|v| format!("{v:.1}"))),
        (&series.tx_trouble, tx_trouble.map(|v| format!("{v:.1}"))),
        |v| format!("{v:.0}"),
        theme,
    );
}

const COUNTERS_WIDTH: u16 = 32;

/// The counters the err+drop chart sums per direction.
const RX_TROUBLE: [LinkCounter; 3] = [
    netdev::RX_ERRORS,
    netdev::RX_DROPPED,
    netdev::RX_OVER_ERRORS,
];
const TX_TROUBLE: [LinkCounter; 3] = [
    netdev::TX_ERRORS,
    netdev::TX_DROPPED,
    netdev::TX_CARRIER_ERRORS,
];

/// The root qdisc in `tc -s qdisc show`'s words, backlog and drops first:
/// for a device without a link speed this is where it shows its limit.
fn render_qdisc(
    frame: &mut Frame,
    area: Rect,
    previous: Option<&crate::model::Sample>,
    current: &crate::model::Sample,
    iface: &InterfaceSample,
    theme: Theme,
) {
    let Some(q) = &iface.qdisc else {
        let line = Line::from(Span::styled("qdisc not collected", theme.dim()));
        frame.render_widget(Paragraph::new(line), area);
        return;
    };
    let rates = QdiscRates::for_interface(previous, current, iface);
    let trouble = if rates.drops.is_some_and(|d| d > 0.0) {
        theme.alert()
    } else {
        Style::new()
    };
    let line = Line::from(vec![
        Span::styled("qdisc ", theme.dim()),
        Span::raw(format!(
            "{} {} backlog {}b {}p ",
            q.kind, q.handle, q.backlog_bytes, q.backlog_packets
        )),
        Span::styled(
            format!("dropped {} {}/s", q.drops, format::rate(rates.drops)),
            trouble,
        ),
        Span::raw(format!(
            " overlimits {} requeues {}",
            q.overlimits, q.requeues
        )),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

/// Rates of one interface over the history window, x in seconds before the
/// shown sample (negative), so "now" is 0.
fn series(app: &App, index: usize, at: &InterfaceRef) -> Series {
    let mut out = Series::default();
    let Some(now) = app.history.get(index).map(|s| s.mono) else {
        return out;
    };
    for (before, after) in app.history.pairs_until(index) {
        let (Some(a), Some(b)) = (before.interface_at(at), after.interface_at(at)) else {
            continue;
        };
        if a.index != b.index {
            continue;
        }
        let seconds = links_interval(before, after, b.netns);
        let r = InterfaceRates::between(&a.counters, &b.counters, seconds);
        let x = after.mono - now;
        let push = |list: &mut Vec<(f64, f64)>, value: Option<f64>| {
            if let Some(v) = value {
                list.push((x, v));
            }
        };
        let bits = |counter| r.rate(&counter).map(|v| v * 8.0);
        push(&mut out.rx_bits, bits(netdev::RX_BYTES));
        push(&mut out.tx_bits, bits(netdev::TX_BYTES));
        push(&mut out.rx_packets, r.rate(&netdev::RX_PACKETS));
        push(&mut out.tx_packets, r.rate(&netdev::TX_PACKETS));
        push(
            &mut out.rx_trouble,
            sum_known(RX_TROUBLE.map(|c| r.rate(&c))),
        );
        push(
            &mut out.tx_trouble,
            sum_known(TX_TROUBLE.map(|c| r.rate(&c))),
        );
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
        Span::raw(format!(" {what} 5m ")),
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

/// Every error counter: total since the interface was created, and its rate
/// over the shown interval.
fn render_counters(
    frame: &mut Frame,
    area: Rect,
    before: Option<&LinkCounters>,
    c: &LinkCounters,
    seconds: f64,
    theme: Theme,
) {
    let row = |counter: &LinkCounter| {
        let rate = before.and_then(|b| counter_rate(counter.of(b), counter.of(c), seconds));
        let style = if rate.is_some_and(|v| v > 0.0) {
            theme.alert()
        } else {
            Style::new()
        };
        Row::new([
            Cell::from(counter.detail.unwrap_or(counter.kernel)),
            Cell::from(Line::from(counter.of(c).to_string()).right_aligned()),
            Cell::from(Line::from(Span::styled(format::rate(rate), style)).right_aligned()),
        ])
    };
    // The receive side first, then the rest, each in the rows' order.
    let (rx, others): (Vec<_>, Vec<_>) = netdev::ALL
        .iter()
        .filter(|counter| counter.detail.is_some())
        .partition(|counter| counter.kernel.starts_with("rx_"));
    let rows: Vec<Row> = rx.into_iter().chain(others).map(row).collect();
    let header = Row::new(["counter", "total", "/s"]).style(theme.header());
    let widths = [
        Constraint::Length(11),
        Constraint::Length(11),
        Constraint::Length(8),
    ];
    frame.render_widget(Table::new(rows, widths).header(header), area);
}
