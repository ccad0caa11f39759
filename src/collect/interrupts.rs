//! /proc/interrupts: the numbered lines (device interrupts) with their
//! count per CPU and their name, the last word (`eth1-TxRx-0`,
//! `virtio2-input.0`, `mlx5_comp3@pci:0000:3b:00.0`). Host-wide.

use super::softirqs::MAX_CPUS;
use crate::model::cpu::Irq;

/// The most interrupt lines kept (a large host has a few thousand).
const MAX_LINES: usize = 65_536;

/// Every numbered line. The header gives the CPU count; a line's counts
/// are the first that many numbers after "N:".
pub fn parse(text: &str) -> Vec<Irq> {
    let mut lines = text.lines();
    let cpus = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter(|c| c.starts_with("CPU"))
        .count()
        .min(MAX_CPUS);
    lines
        .take(MAX_LINES)
        .filter_map(|line| {
            let (irq, rest) = line.split_once(':')?;
            let irq = irq.trim();
            if irq.is_empty() || !irq.bytes().all(|b| b.is_ascii_digit()) {
                return None; // NMI, LOC...: not a device's
            }
            let mut words = rest.split_whitespace();
            let per_cpu: Vec<u64> = words
                .by_ref()
                .take(cpus)
                .map(|w| w.parse().unwrap_or(0))
                .collect();
            let name = words.last().unwrap_or("").to_string();
            Some(Irq {
                irq: irq.to_string(),
                name,
                per_cpu,
            })
        })
        .collect()
}

/// Whether an interrupt line belongs to a device: its name starts with the
/// interface name followed by a separator (`eth1-TxRx-0`, not `eth10-...`),
/// or with the device's bus name (`virtio2-input.0` for eth0 on virtio2),
/// or names the device's PCI address (`mlx5_comp0@pci:0000:3b:00.0`).
pub fn belongs(irq_name: &str, ifname: &str, device: Option<&str>) -> bool {
    let starts = |prefix: &str| {
        irq_name
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_', '.', '@']))
    };
    starts(ifname) || device.is_some_and(|d| starts(d) || irq_name.ends_with(&format!("@pci:{d}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::collect::proc_fixture as data;

    #[test]
    fn sixteen_cpus_and_queue_names() {
        let irqs = parse(&data("interrupts_16cpu"));
        assert_eq!(
            irqs.len(),
            1 + 8 + 4 + 1,
            "NMI and ERR are not device lines"
        );
        let comp3 = irqs.iter().find(|i| i.irq == "103").unwrap();
        assert_eq!(comp3.per_cpu.len(), 16);
        assert_eq!(comp3.per_cpu[3], 4000);
        assert_eq!(comp3.name, "mlx5_comp3@pci:0000:3b:00.0");
        let eth1: Vec<_> = irqs
            .iter()
            .filter(|i| belongs(&i.name, "eth1", None))
            .collect();
        assert_eq!(eth1.len(), 4, "eth10's line is not eth1's");
        let mlx: Vec<_> = irqs
            .iter()
            .filter(|i| belongs(&i.name, "ens1f0", Some("0000:3b:00.0")))
            .collect();
        assert_eq!(mlx.len(), 8);
        assert!(belongs("virtio2-input.0", "eth0", Some("virtio2")));
        assert!(!belongs("virtio21-input.0", "eth0", Some("virtio2")));
    }
}
