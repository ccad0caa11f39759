//! Kernel drop reasons as series: `netlens_drops_total{reason,location,netns}`
//! summed over a site's interfaces and sockets (whose ports would multiply
//! the series), with `netns` the namespace the packet died in.

use super::render::{escape, family};
use crate::model::Sample;
use std::collections::BTreeMap;
use std::fmt::Write;

pub fn render(out: &mut String, sample: &Sample, ns: &str) {
    let Some(drops) = &sample.drops else {
        return;
    };
    family(
        out,
        "netlens_drops_available",
        "gauge",
        None,
        "1 when netlens counts the kernel's drop reasons (eBPF on skb:kfree_skb), 0 when it cannot",
    );
    let _ = writeln!(
        out,
        "netlens_drops_available{{netns=\"{}\"}} {}",
        escape(ns),
        u8::from(drops.unavailable.is_none())
    );
    if drops.unavailable.is_some() {
        return;
    }
    let mut sums: BTreeMap<(&str, &str, &str), u64> = BTreeMap::new();
    for row in &drops.rows {
        *sums
            .entry((
                row.netns.as_str(),
                row.reason.as_str(),
                row.location.as_str(),
            ))
            .or_default() += row.packets;
    }
    family(
        out,
        "netlens_drops",
        "counter",
        None,
        "Packets the kernel dropped, by drop reason and the function that dropped them, since netlens started counting",
    );
    for ((netns, reason, location), packets) in sums {
        let _ = writeln!(
            out,
            "netlens_drops_total{{reason=\"{}\",location=\"{}\",netns=\"{}\"}} {packets}",
            escape(reason),
            escape(location),
            escape(netns)
        );
    }
    family(
        out,
        "netlens_drops_lost",
        "counter",
        None,
        "The watched namespace's drops (every namespace's from the initial one) that netlens could not count (its map was full)",
    );
    let _ = writeln!(
        out,
        "netlens_drops_lost_total{{netns=\"{}\"}} {}",
        escape(ns),
        drops.lost
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::drops::{DropRow, DropSocket, DropsSample};

    fn row(reason: &str, port: u16, packets: u64) -> DropRow {
        DropRow {
            netns_inode: 1,
            netns: "blue".into(),
            reason: reason.into(),
            location: "udp_queue_rcv_one_skb".into(),
            interface: Some("veth0".into()),
            socket: Some(DropSocket {
                proto: "udp".into(),
                port,
            }),
            packets,
            ..DropRow::default()
        }
    }

    #[test]
    fn sites_of_one_reason_and_function_are_one_series() {
        let sample = Sample {
            drops: Some(DropsSample {
                rows: vec![
                    row("SOCKET_RCVBUFF", 5353, 10),
                    row("SOCKET_RCVBUFF", 9000, 5),
                    row("NO_SOCKET", 0, 2),
                ],
                lost: 3,
                ..DropsSample::default()
            }),
            ..Sample::default()
        };
        let mut out = String::new();
        render(&mut out, &sample, "host");
        assert!(out.contains("netlens_drops_total{reason=\"SOCKET_RCVBUFF\",location=\"udp_queue_rcv_one_skb\",netns=\"blue\"} 15\n"), "{out}");
        assert!(out.contains("netlens_drops_total{reason=\"NO_SOCKET\",location=\"udp_queue_rcv_one_skb\",netns=\"blue\"} 2\n"));
        assert!(out.contains("netlens_drops_lost_total{netns=\"host\"} 3\n"));
        assert!(out.contains("netlens_drops_available{netns=\"host\"} 1\n"));
    }

    #[test]
    fn without_the_program_only_availability_is_served() {
        let sample = Sample {
            drops: Some(DropsSample {
                unavailable: Some("needs root".into()),
                ..DropsSample::default()
            }),
            ..Sample::default()
        };
        let mut out = String::new();
        render(&mut out, &sample, "host");
        let series = out.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(series, 1, "{out}");
        assert!(out.contains("netlens_drops_available{netns=\"host\"} 0\n"));
    }
}
