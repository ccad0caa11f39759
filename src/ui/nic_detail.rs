//! Two lines of the interface detail about the NIC's queues: `ethtool -l`
//! and `-g`, the RPS/XPS masks per queue, and its queues' interrupts per
//! CPU per second (/proc/interrupts).
//!
//! ```text
//! queues combined 4/8 rx 0 tx 0 │ ring rx 512/4096 tx 512/4096 │ rps rx-0 0 rx-1 0 │ xps tx-0 1
//! irq/s (4 lines) CPU0 1200 CPU1 0 CPU2 35 CPU3 0
//! ```

use crate::model::Sample;
use crate::model::cpu::NicQueues;
use crate::model::rates::counter_rate;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

fn nic<'a>(sample: &'a Sample, name: &str) -> Option<&'a NicQueues> {
    sample.cpu.as_ref()?.nics.iter().find(|n| n.name == name)
}

/// The interface's neighbours by state, as `ip neigh show dev IF` counts
/// them ("neigh inet REACHABLE 1 FAILED 2 │ inet6 STALE 1"); None without any.
pub fn neigh_line(sample: &Sample, name: &str) -> Option<String> {
    let entries = &sample.neighbours.as_ref()?.entries;
    let mut families: Vec<String> = Vec::new();
    for family in ["inet", "inet6"] {
        let states: Vec<String> = entries
            .iter()
            .filter(|e| e.interface == name && e.family == family)
            .map(|e| format!("{} {}", e.state, e.count))
            .collect();
        if !states.is_empty() {
            families.push(format!("{family} {}", states.join(" ")));
        }
    }
    (!families.is_empty()).then(|| format!("neigh {}", families.join(" │ ")))
}

/// Whether the sample has this interface's queues.
pub fn collected(sample: &Sample, name: &str) -> bool {
    nic(sample, name).is_some()
}

/// The queues line.
pub fn queues_line(q: &NicQueues) -> String {
    let mut parts = Vec::new();
    parts.push(match q.channels {
        Some(c) => format!(
            "queues combined {}/{} rx {}/{} tx {}/{}",
            c.combined, c.max_combined, c.rx, c.max_rx, c.tx, c.max_tx
        ),
        None => "queues ? (no ethtool -l)".into(),
    });
    parts.push(match q.ring {
        Some(r) => format!("ring rx {}/{} tx {}/{}", r.rx, r.rx_max, r.tx, r.tx_max),
        None => "ring ? (no ethtool -g)".into(),
    });
    let masks = |label: &str, map: &std::collections::BTreeMap<String, String>| {
        let list: Vec<String> = map.iter().map(|(q, m)| format!("{q} {m}")).collect();
        (!list.is_empty()).then(|| format!("{label} {}", list.join(" ")))
    };
    parts.extend(masks("rps", &q.rps_cpus));
    parts.extend(masks("xps", &q.xps_cpus));
    parts.join(" │ ")
}

/// Interrupts per CPU per second over the device's queue lines, busiest
/// CPUs first; None without a previous sample.
pub fn irq_line(previous: Option<&Sample>, current: &Sample, name: &str) -> String {
    let Some(now) = nic(current, name) else {
        return "irq/s: not collected".into();
    };
    if now.irqs.is_empty() {
        return "irq/s: no /proc/interrupts line names this device".into();
    }
    let before = previous.and_then(|p| nic(p, name));
    let seconds = previous.map_or(0.0, |p| current.mono - p.mono);
    let cpus = now.irqs.iter().map(|i| i.per_cpu.len()).max().unwrap_or(0);
    let mut per_cpu: Vec<(usize, Option<f64>)> = (0..cpus)
        .map(|cpu| {
            let rate = now
                .irqs
                .iter()
                .map(|irq| {
                    let old = before?.irqs.iter().find(|b| b.irq == irq.irq)?;
                    counter_rate(*old.per_cpu.get(cpu)?, *irq.per_cpu.get(cpu)?, seconds)
                })
                .sum::<Option<f64>>();
            (cpu, rate)
        })
        .collect();
    per_cpu.sort_by(|a, b| {
        b.1.unwrap_or(0.0)
            .total_cmp(&a.1.unwrap_or(0.0))
            .then(a.0.cmp(&b.0))
    });
    let list: Vec<String> = per_cpu
        .iter()
        .map(|(cpu, rate)| {
            format!(
                "CPU{cpu} {}",
                rate.map_or("–".into(), |r| format!("{r:.0}"))
            )
        })
        .collect();
    let names: Vec<&str> = now.irqs.iter().map(|i| i.name.as_str()).collect();
    format!(
        "irq/s ({}: {}) {}",
        names.len(),
        names.join(","),
        list.join(" ")
    )
}

pub fn render(
    frame: &mut Frame,
    area: Rect,
    previous: Option<&Sample>,
    current: &Sample,
    name: &str,
) {
    let Some(q) = nic(current, name) else {
        return;
    };
    let lines = vec![
        Line::from(queues_line(q)),
        Line::from(irq_line(previous, current, name)),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}
