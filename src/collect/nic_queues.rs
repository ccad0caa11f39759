//! One NIC's queues as `ethtool -l`, `ethtool -g` and
//! /sys/class/net/DEV/queues show them, and its queues' interrupt lines.
//! /sys/class/net is the namespace sysfs was mounted in, so a device is
//! read there only when its ifindex there is the one the sampler sees.

use super::ethtool::Ethtool;
use super::interrupts;
use crate::model::InterfaceSample;
use crate::model::cpu::{Irq, NicQueues};
use std::collections::BTreeMap;
use std::path::Path;

/// At most this many queues of one device are read (rx-N and tx-N each).
const MAX_QUEUES: usize = 1024;

/// Queues of the hardware interfaces and loopback. Software devices
/// (veth, bridge...: by link kind) are left out: a container host has
/// thousands, and their queues are not where the receive work is spread.
pub fn collect(interfaces: &[InterfaceSample], irqs: &[Irq]) -> Vec<NicQueues> {
    let ethtool = Ethtool::new().ok();
    interfaces
        .iter()
        .filter(|i| i.loopback || !i.is_virtual())
        .map(|iface| {
            let dir = Path::new("/sys/class/net").join(&iface.name);
            let ours = std::fs::read_to_string(dir.join("ifindex"))
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok())
                == Some(iface.index);
            let device = ours
                .then(|| std::fs::read_link(dir.join("device")).ok())
                .flatten()
                .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()));
            let (rps_cpus, xps_cpus) = if ours {
                (
                    masks(&dir, "rx-", "rps_cpus"),
                    masks(&dir, "tx-", "xps_cpus"),
                )
            } else {
                Default::default()
            };
            NicQueues {
                name: iface.name.clone(),
                channels: ethtool.as_ref().and_then(|e| e.channels(&iface.name)),
                ring: ethtool.as_ref().and_then(|e| e.ring(&iface.name)),
                rps_cpus: rps_cpus.into(),
                xps_cpus: xps_cpus.into(),
                irqs: irqs
                    .iter()
                    .filter(|irq| interrupts::belongs(&irq.name, &iface.name, device.as_deref()))
                    .cloned()
                    .collect(),
            }
        })
        .collect()
}

/// queues/PREFIX*/FILE, by queue name; a queue without the file (xps_cpus
/// on a single-queue device) is left out.
fn masks(dir: &Path, prefix: &str, file: &str) -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(dir.join("queues")) else {
        return BTreeMap::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let queue = e.file_name().to_string_lossy().into_owned();
            if !queue.starts_with(prefix) {
                return None;
            }
            let mask = std::fs::read_to_string(e.path().join(file)).ok()?;
            Some((queue, mask.trim().to_string()))
        })
        .take(MAX_QUEUES)
        .collect()
}
