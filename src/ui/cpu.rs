//! The Interfaces tab's CPU panel: per CPU, the NET_RX/NET_TX softirqs
//! (/proc/softirqs), top's si% (/proc/stat) and the backlog counters
//! (/proc/net/softnet_stat), busiest CPU first under a totals row, with the
//! backlog knobs and the neighbour table on its title line.
//!
//! ```text
//! CPUs  backlog 1000 budget 300/8000us rps_flow 0 │ arp 3/1024 REACH 2 FAIL 1
//! CPU   NET_RX/s NET_TX/s   si%    pkt/s drop/s sqz/s  rps/s flim/s NET_RX
//! all      41.2k      2.0   31.0  180.3k      0     0      0      0 ▁▂▅█
//! 1        40.9k      1.0   61.0  179.9k      0     0      0      0 ▁▂▅█
//! ```

use super::spark::spark;
use super::theme::Theme;
use crate::app::App;
use crate::model::Sample;
use crate::model::cpu::{CpuRate, cpu_rates, sort_busiest, total};
use crate::model::neigh::NeighSample;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Rows the panel wants for `sample`: title, header, totals and each CPU.
pub fn wanted_height(sample: &Sample) -> u16 {
    sample
        .cpu
        .as_ref()
        .map_or(0, |c| u16::try_from(c.cpus.len() + 3).unwrap_or(u16::MAX))
}

/// A count per second in at most 6 characters: 950, 41.2k, 1.3M; "–" unknown.
fn short(value: Option<f64>) -> String {
    match value {
        None => "–".into(),
        Some(v) if v < 10_000.0 => format!("{v:.0}"),
        Some(v) if v < 10_000_000.0 => format!("{:.1}k", v / 1000.0),
        Some(v) => format!("{:.1}M", v / 1_000_000.0),
    }
}

const HEADER: &str = "CPU   NET_RX/s NET_TX/s   si%    pkt/s drop/s sqz/s  rps/s flim/s";

fn row_text(label: &str, r: &CpuRate) -> String {
    format!(
        "{label:<5}{:>9}{:>9}{:>6}{:>9}{:>7}{:>6}{:>7}{:>7}",
        short(r.net_rx),
        short(r.net_tx),
        r.softirq_percent
            .map_or("–".to_string(), |p| format!("{p:.1}")),
        short(r.processed),
        short(r.dropped),
        short(r.time_squeeze),
        short(r.received_rps),
        short(r.flow_limit_count),
    )
}

/// The title line: knobs, then the ARP table's fill and states.
fn title(current: &Sample) -> String {
    let knob = |name: &str| {
        current
            .cpu
            .as_ref()
            .and_then(|c| c.knobs.get(name))
            .map_or("?", |v| v.as_str())
            .to_string()
    };
    let mut text = format!(
        "CPUs  backlog {} budget {}/{}us rps_flow {}",
        knob("net.core.netdev_max_backlog"),
        knob("net.core.netdev_budget"),
        knob("net.core.netdev_budget_usecs"),
        knob("net.core.rps_sock_flow_entries"),
    );
    if let Some(n) = current.neighbours.as_ref() {
        text.push_str(&format!(" │ {}", neigh_summary(n)));
    }
    text
}

/// "arp 12/1024 REACH 3 STALE 2 FAIL 1 INCOMP 0": the table's entries
/// against gc_thresh3 (host-wide) and this namespace's entries by state.
pub fn neigh_summary(n: &NeighSample) -> String {
    let mut text = match n.arp {
        Some(t) => format!(
            "arp {}/{}",
            t.entries,
            t.gc_thresh3.map_or("?".into(), |l| l.to_string())
        ),
        None => "arp ?".into(),
    };
    for (state, label) in [
        ("REACHABLE", "REACH"),
        ("STALE", "STALE"),
        ("FAILED", "FAIL"),
        ("INCOMPLETE", "INCOMP"),
    ] {
        let count = n.count_in(state);
        if count > 0 {
            text.push_str(&format!(" {label} {count}"));
        }
    }
    text
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, index: usize, theme: Theme) {
    let (previous, current) = app.history.pair(index);
    let Some(current) = current else {
        return;
    };
    let mut rates = cpu_rates(previous, current);
    sort_busiest(&mut rates);
    let width = usize::from(area.width);
    let spark_width = width.saturating_sub(HEADER.chars().count() + 1);
    let mut lines = vec![
        Line::from(Span::styled(title(current), theme.title())),
        Line::from(Span::styled(
            format!("{HEADER}{}", if spark_width >= 4 { " NET_RX" } else { "" }),
            theme.header(),
        )),
    ];
    if rates.is_empty() {
        lines.push(Line::from(Span::styled(
            "waiting for a second sample for the rates…",
            theme.dim(),
        )));
    }
    let history = history_rates(app, index, spark_width);
    let all = total(&rates);
    let series = |cpu: Option<u32>| -> Vec<f64> {
        history
            .iter()
            .map(|rates| match cpu {
                Some(cpu) => rates
                    .iter()
                    .find(|r| r.cpu == cpu)
                    .and_then(|r| r.net_rx)
                    .unwrap_or(0.0),
                None => total(rates).net_rx.unwrap_or(0.0),
            })
            .collect()
    };
    let shown = std::iter::once(("all".to_string(), all, None))
        .chain(rates.iter().map(|r| (r.cpu.to_string(), *r, Some(r.cpu))));
    for (label, rate, cpu) in shown.take(usize::from(area.height).saturating_sub(2)) {
        let trouble = rate.dropped.is_some_and(|d| d > 0.0);
        let style = if trouble {
            theme.alert()
        } else if cpu.is_none() {
            theme.title()
        } else {
            ratatui::style::Style::default()
        };
        let mut spans = vec![Span::styled(row_text(&label, &rate), style)];
        if spark_width >= 4 {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(spark(&series(cpu), spark_width), theme.rx()));
        }
        if trouble {
            spans.push(Span::styled(" DROP", theme.alert()));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// Each CPU's rates for the last `width` intervals up to `index`, oldest
/// first, of the shown sample's namespace.
fn history_rates(app: &App, index: usize, width: usize) -> Vec<Vec<CpuRate>> {
    let start = index.saturating_sub(width);
    (start.max(1)..=index)
        .filter_map(|i| {
            let (previous, current) = app.history.pair(i);
            let (previous, current) = (previous?, current?);
            (previous.netns == current.netns).then(|| cpu_rates(Some(previous), current))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_fits_beside_a_sparkline_in_80_columns() {
        let r = CpuRate {
            net_rx: Some(41_234.0),
            net_tx: Some(2.0),
            softirq_percent: Some(99.5),
            processed: Some(1_234_567.0),
            dropped: Some(12.0),
            time_squeeze: Some(3.0),
            received_rps: None,
            flow_limit_count: Some(0.0),
            cpu: 1,
        };
        let text = row_text("127", &r);
        assert_eq!(text.chars().count(), HEADER.chars().count(), "{text}");
        assert!(HEADER.chars().count() + 1 + 4 <= 80);
        assert!(text.contains("41.2k") && text.contains("1234.6k") && text.contains("99.5"));
    }
}
