//! The plain-text `snapshot` table, laid out like `sar -n DEV` + `-n EDEV`.
//! Names and texts from outside are written through text::escape_control:
//! an interface, process or container name another user chose must not
//! reach the terminal as an escape sequence.

pub mod sockets;

use super::Sections;
use crate::findings;
use crate::model::Sample;
use crate::model::conntrack_rates::ConntrackRates;
use crate::model::netdev::{self, Kind, LinkCounter};
use crate::model::rates::{InterfaceRates, interface_util};
use crate::text::escape_control;
use std::fmt::Write as _;
use std::io::{self, Write};

fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

/// One line per interface, columns from the netdev rows' `column`
/// (sar's titles), %ifutil between the volume and the trouble ones.
fn write_interfaces(
    out: &mut impl Write,
    time: &str,
    previous: &Sample,
    current: &Sample,
) -> io::Result<()> {
    let (volume, trouble) = netdev::volume_then_trouble(|c| c.column.is_some());
    let cells = |first: String, cell: &dyn Fn(&LinkCounter) -> String, util: String| {
        let mut line = format!("{time}  {first:<12}");
        let mut push = |text: &str, width: usize| {
            let _ = write!(line, " {text:>width$}");
        };
        let width = |c: &LinkCounter| c.column.map_or(0, |c| c.width);
        volume.iter().for_each(|c| push(&cell(c), width(c)));
        push(&util, 8);
        trouble.iter().for_each(|c| push(&cell(c), width(c)));
        line
    };
    let title = |c: &LinkCounter| c.column.map_or("", |c| c.title).to_string();
    writeln!(out, "{}", cells("IFACE".into(), &title, "%ifutil".into()))?;
    for iface in &current.interfaces {
        let r = InterfaceRates::for_interface(Some(previous), current, iface);
        let rate = |c: &LinkCounter| {
            let per_s = r.rate(c);
            // sar shows bytes as kB/s.
            number(per_s.map(|v| if c.kind == Kind::Bytes { v / 1024.0 } else { v }))
        };
        let name = escape_control(&iface.name).into_owned();
        let util = number(interface_util(iface, &r));
        writeln!(out, "{}", cells(name, &rate, util))?;
    }
    Ok(())
}

pub fn write_table(
    out: &mut impl Write,
    previous: &Sample,
    current: &Sample,
    sections: Sections,
    first: bool,
    found: &[findings::Finding],
    filter: crate::model::filter::Where<'_>,
) -> io::Result<()> {
    let time = crate::clock::local_hms(current.t);
    if sections.interfaces {
        if !first {
            writeln!(out)?;
        }
        write_interfaces(out, &time, previous, current)?;
    }
    if sections.conntrack {
        write_conntrack(out, previous, current, &time, sections.conntrack_entries)?;
    }
    if sections.tcp {
        sockets::write_tcp(out, &time, previous, current)?;
    }
    if sections.sockets {
        sockets::write_sockets(out, &time, current, filter)?;
    }
    if sections.processes {
        sockets::write_processes(out, &time, previous, current, filter)?;
    }
    if sections.findings {
        for finding in found {
            writeln!(
                out,
                "{time}  {}{} {}: {} (hint: {})",
                finding.severity.label(),
                calm_note(finding),
                finding.id,
                escape_control(&finding.summary),
                escape_control(&finding.hint)
            )?;
        }
    }
    Ok(())
}

/// " (calm 2)" for a finding whose condition stopped holding 2 samples ago
/// (the hysteresis keeps it shown a while), else nothing.
pub fn calm_note(finding: &findings::Finding) -> String {
    if finding.hold.firing() {
        String::new()
    } else {
        format!(" (calm {})", finding.hold.calm)
    }
}

/// Conntrack like `conntrack -C`, `-S` (as rates) and `-L`, NAT decoded.
fn write_conntrack(
    out: &mut impl Write,
    previous: &Sample,
    current: &Sample,
    time: &str,
    list_entries: bool,
) -> io::Result<()> {
    let ct = &current.conntrack;
    let known = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    if !ct.available && ct.stats.is_none() {
        return writeln!(
            out,
            "{time}  conntrack unavailable: {}",
            escape_control(ct.reason.as_deref().unwrap_or("unknown"))
        );
    }
    let r = ConntrackRates::for_samples(Some(previous), current);
    writeln!(
        out,
        "{time}  conntrack count {} max {} ({}%) buckets {}",
        known(ct.count),
        known(ct.max),
        number(ct.usage_percent()),
        known(ct.buckets)
    )?;
    writeln!(
        out,
        "{time}  conntrack/s found {} invalid {} insert {} insert_failed {} drop {} early_drop {} error {} search_restart {} clash_resolve {}",
        number(r.found),
        number(r.invalid),
        number(r.insert),
        number(r.insert_failed),
        number(r.drop),
        number(r.early_drop),
        number(r.error),
        number(r.search_restart),
        number(r.clash_resolve),
    )?;
    if let Some(reason) = &ct.reason {
        writeln!(out, "{time}  conntrack note: {}", escape_control(reason))?;
    }
    if let Some(entries) = ct.entries.as_ref().filter(|_| list_entries) {
        for entry in entries {
            writeln!(
                out,
                "{time}  {:<5} {:<11} {} timeout {}s{}",
                entry.proto_name(),
                entry.state_name(),
                entry.flow_text(),
                entry.timeout,
                entry
                    .packets
                    .zip(entry.bytes)
                    .map(|(p, b)| format!(" packets {} bytes {}", p.0 + p.1, b.0 + b.1))
                    .unwrap_or_default()
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::filter::{Expr, Where};

    /// The interface table is sar's `-n DEV` + `-n EDEV`, column for column.
    #[test]
    fn interface_table_keeps_sars_columns() {
        use crate::model::{InterfaceSample, LinkCounters};
        let at = |mono: f64, n: u64| Sample {
            mono,
            interfaces: vec![InterfaceSample {
                index: 2,
                name: "eth0".into(),
                counters: LinkCounters {
                    rx_packets: 10 * n,
                    rx_bytes: 2048 * n,
                    tx_dropped: 3 * n,
                    rx_over_errors: n,
                    collisions: 5 * n,
                    ..LinkCounters::default()
                },
                ..InterfaceSample::default()
            }],
            ..Sample::default()
        };
        let only_interfaces = Sections {
            interfaces: true,
            conntrack: false,
            conntrack_entries: false,
            findings: false,
            sockets: false,
            tcp: false,
            flows: false,
            dns: false,
            drops: false,
            processes: false,
        };
        let mut out = Vec::new();
        let expr = Expr::default();
        let (before, after) = (at(0.0, 0), at(2.0, 1));
        write_table(
            &mut out,
            &before,
            &after,
            only_interfaces,
            true,
            &[],
            Where::new(&expr),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .map(|l| l.split_once("  ").unwrap().1)
            .collect();
        let header = format!(
            "{:<12} {:>9} {:>9} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "IFACE",
            "rxpck/s",
            "txpck/s",
            "rxkB/s",
            "txkB/s",
            "%ifutil",
            "rxerr/s",
            "txerr/s",
            "rxdrop/s",
            "txdrop/s",
            "rxovr/s",
            "txcarr/s",
            "coll/s"
        );
        let row = format!(
            "{:<12} {:>9} {:>9} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "eth0",
            "5.00",
            "0.00",
            "1.00",
            "0.00",
            "-",
            "0.00",
            "0.00",
            "0.00",
            "1.50",
            "0.50",
            "0.00",
            "2.50"
        );
        assert_eq!(lines, [header, row]);
    }

    /// A finding's text quotes names from outside (a process's comm, an
    /// interface); the findings line writes it escaped.
    #[test]
    fn a_finding_naming_a_hostile_process_is_written_escaped() {
        let sample = Sample::default();
        let finding = findings::Finding {
            id: "close-wait",
            severity: findings::Severity::Warn,
            summary: "PID 7 (\x1b]0;pwn\x07\u{9b}\u{202e}) holds 150 CLOSE_WAIT".into(),
            hint: "fix \x1b[2J".into(),
            evidence: findings::Evidence {
                tab: "Sockets",
                row: String::new(),
                netns: None,
            },
            hold: Default::default(),
        };
        let only_findings = Sections {
            interfaces: false,
            conntrack: false,
            conntrack_entries: false,
            findings: true,
            sockets: false,
            tcp: false,
            flows: false,
            dns: false,
            drops: false,
            processes: false,
        };
        let mut out = Vec::new();
        let expr = Expr::default();
        write_table(
            &mut out,
            &sample,
            &sample,
            only_findings,
            true,
            &[finding],
            Where::new(&expr),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            !text.chars().any(|c| c != '\n' && crate::text::is_unsafe(c)),
            "{text:?}"
        );
        assert!(
            text.contains("PID 7 (\\x1b]0;pwn\\x07\\x9b\\u{202e})"),
            "{text}"
        );
        assert!(text.contains("(hint: fix \\x1b[2J)"), "{text}");
    }
}
