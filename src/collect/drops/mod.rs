//! Kernel drop reasons: an eBPF program on `skb:kfree_skb` counts every
//! dropped packet by (namespace, reason, location, device, socket) in a
//! per-CPU map; each tick this reads the map, names what it counted
//! (reasons from the running kernel, locations from /proc/kallsyms,
//! namespaces as `ip netns` does). The program counts only the watched
//! namespace's drops (every namespace's when that is the initial one), so
//! another namespace's cannot fill its map.

mod kallsyms;
mod labels;
mod loader;
mod reasons;

use crate::model::drops::{DropRow, DropSocket, DropsSample};
use std::collections::HashMap;
use std::time::Instant;

/// What `--no-bpf` leaves in every sample.
pub const DISABLED: &str = "disabled by --no-bpf (run without it, as root, to count drop reasons)";

pub struct DropsCollector {
    /// The attached program, or why there is none.
    program: Result<loader::Program, String>,
    reasons: reasons::ReasonNames,
    symbols: kallsyms::Symbols,
    labels: labels::NetnsLabels,
    /// The namespace the sampler watches (its thread's).
    watched: u64,
    /// The watched namespace's ip_local_port_range: a socket port in it
    /// is a client's, shown as 0 so that each connection is not a row.
    ephemeral: (u16, u16),
}

impl DropsCollector {
    /// Loads and attaches the program unless `enabled` is false. Never
    /// fails: a program that cannot load leaves the reason in each sample.
    /// Call on the sampler thread after it entered the watched namespace.
    /// `label` is the sampler's name for its namespace ("host"...).
    pub fn new(enabled: bool, label: &str) -> Self {
        let started = Instant::now();
        let watched =
            super::netns::link_inode(std::path::Path::new("/proc/thread-self/ns/net")).unwrap_or(0);
        let labels = labels::NetnsLabels::new(watched, label == "host");
        let program = if enabled {
            loader::load(kernel_filter(watched, &labels))
        } else {
            Err(DISABLED.to_string())
        };
        if let (Ok(program), true) = (&program, std::env::var_os("NETLENS_DEBUG_BPF").is_some()) {
            eprintln!(
                "netlens: drop-reason program attached ({}) in {:.1} ms",
                program.attached,
                started.elapsed().as_secs_f64() * 1e3
            );
        }
        Self {
            reasons: if program.is_ok() {
                reasons::ReasonNames::from_kernel()
            } else {
                reasons::ReasonNames::default()
            },
            program,
            symbols: kallsyms::Symbols::default(),
            labels,
            watched,
            ephemeral: ephemeral_range(),
        }
    }

    /// The counts so far; `ifnames` names the watched namespace's devices.
    pub fn collect(&mut self, ifnames: &HashMap<u32, String>) -> DropsSample {
        let program = match &mut self.program {
            Ok(program) => program,
            Err(why) => {
                return DropsSample {
                    unavailable: Some(why.clone()),
                    netns_inode: self.watched,
                    ..DropsSample::default()
                };
            }
        };
        let (low, high) = self.ephemeral;
        let (counts, lost) = program.read(|key| match key.port {
            port if (low..=high).contains(&port) => loader::DropKey { port: 0, ..key },
            _ => key,
        });
        // Only the watched namespace's keys: the kernel filters (WATCHED).
        let keys: Vec<_> = counts.into_iter().collect();
        self.symbols.learn(keys.iter().map(|(key, _)| key.location));
        self.labels
            .refresh_for(keys.iter().map(|(key, _)| u64::from(key.netns)));
        // Rows of one function, reason, device and socket are one row.
        let mut rows: HashMap<DropRow, u64> = HashMap::new();
        for (key, packets) in keys {
            *rows.entry(self.row(&key, ifnames)).or_default() += packets;
        }
        let mut rows: Vec<DropRow> = rows
            .into_iter()
            .map(|(row, packets)| DropRow { packets, ..row })
            .collect();
        rows.sort_by(|a, b| {
            b.packets
                .cmp(&a.packets)
                .then_with(|| a.reason.cmp(&b.reason))
        });
        DropsSample {
            unavailable: None,
            netns_inode: self.watched,
            rows,
            lost,
        }
    }

    /// A key's row, without its count.
    fn row(&self, key: &loader::DropKey, ifnames: &HashMap<u32, String>) -> DropRow {
        let netns_inode = u64::from(key.netns);
        let interface = match key.ifindex {
            0 => None,
            index if netns_inode == self.watched => Some(
                ifnames
                    .get(&index)
                    .cloned()
                    .unwrap_or_else(|| format!("if{index}")),
            ),
            index => Some(format!("if{index}")),
        };
        DropRow {
            netns_inode,
            netns: self.labels.label(netns_inode),
            reason: self.reasons.name(key.reason),
            location: self.symbols.name(key.location),
            interface,
            socket: socket(key.family, key.proto, key.port),
            packets: 0,
        }
    }
}

/// The namespace whose drops the kernel counts: in the initial namespace
/// every namespace's drops show (0), in any other only its own.
fn kernel_filter(watched: u64, labels: &labels::NetnsLabels) -> u64 {
    if labels.initial() == Some(watched) {
        0
    } else {
        watched
    }
}

/// The namespace's ip_local_port_range (read on the sampler thread, inside
/// it), else the kernel's default.
fn ephemeral_range() -> (u16, u16) {
    let text =
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
    let mut numbers = text
        .split_whitespace()
        .filter_map(|n| n.parse::<u16>().ok());
    match (numbers.next(), numbers.next()) {
        (Some(low), Some(high)) if low > 0 && low <= high => (low, high),
        _ => (32768, 60999),
    }
}

/// The socket a drop concerned, as ss names its protocol.
fn socket(family: u8, proto: u8, port: u16) -> Option<DropSocket> {
    let proto = match (i32::from(family), i32::from(proto)) {
        (0, _) => return None,
        (libc::AF_UNIX, _) => "unix".to_string(),
        (libc::AF_NETLINK, _) => "netlink".to_string(),
        (libc::AF_PACKET, _) => "packet".to_string(),
        (libc::AF_INET | libc::AF_INET6, libc::IPPROTO_TCP) => "tcp".to_string(),
        (libc::AF_INET | libc::AF_INET6, libc::IPPROTO_UDP) => "udp".to_string(),
        (libc::AF_INET | libc::AF_INET6, libc::IPPROTO_UDPLITE) => "udplite".to_string(),
        (libc::AF_INET | libc::AF_INET6, libc::IPPROTO_SCTP) => "sctp".to_string(),
        (libc::AF_INET | libc::AF_INET6, libc::IPPROTO_ICMP | libc::IPPROTO_ICMPV6) => {
            "icmp".to_string()
        }
        (libc::AF_INET | libc::AF_INET6, libc::IPPROTO_RAW) => "raw".to_string(),
        (libc::AF_INET | libc::AF_INET6, other) => other.to_string(),
        (family, _) => format!("family {family}"),
    };
    Some(DropSocket { proto, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_is_named_by_its_family_and_protocol() {
        assert_eq!(socket(0, 0, 0), None);
        let udp = socket(libc::AF_INET6 as u8, libc::IPPROTO_UDP as u8, 5353).unwrap();
        assert_eq!((udp.proto.as_str(), udp.port), ("udp", 5353));
        assert_eq!(socket(libc::AF_UNIX as u8, 0, 0).unwrap().proto, "unix");
        assert_eq!(socket(2, 47, 0).unwrap().proto, "47");
    }

    #[test]
    fn without_the_program_each_sample_says_why() {
        let mut collector = DropsCollector::new(false, "host");
        let sample = collector.collect(&HashMap::new());
        assert_eq!(sample.unavailable.as_deref(), Some(DISABLED));
        assert!(sample.rows.is_empty());
    }
}
