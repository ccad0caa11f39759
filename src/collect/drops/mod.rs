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
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

/// What `--no-bpf` leaves in every sample.
pub const DISABLED: &str = "disabled by --no-bpf (run without it, as root, to count drop reasons)";

// The reason whose drops the program keys on their destination.
use crate::model::drops::NETFILTER_DROP;

/// How many destinations get rows of their own: the first seen keep
/// theirs, later ones count at their site without a destination, so a scan
/// through a firewall makes at most this many rows, and a destination's
/// drops never move from one row to another.
const MAX_DESTINATIONS: usize = 256;

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
    /// The destination keys (normalized) that have rows of their own.
    destinations: HashSet<loader::DropKey>,
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
        // Read once the program loaded: not at all when it cannot.
        let mut reasons = None;
        let program = if enabled {
            loader::load(kernel_filter(watched, &labels), || {
                reasons
                    .get_or_insert_with(reasons::ReasonNames::from_kernel)
                    .number(NETFILTER_DROP)
            })
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
                reasons.unwrap_or_else(reasons::ReasonNames::from_kernel)
            } else {
                reasons::ReasonNames::default()
            },
            program,
            symbols: kallsyms::Symbols::default(),
            labels,
            watched,
            ephemeral: ephemeral_range(),
            destinations: HashSet::new(),
        }
    }

    /// Counting nothing, its program not loaded yet: each sample says
    /// `why` until `new` replaces it (the first sample of a quick start).
    pub fn waiting(label: &str, why: &str) -> Self {
        let mut collector = Self::new(false, label);
        collector.program = Err(why.to_string());
        collector
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
        let client = |port: u16| (low..=high).contains(&port);
        let destinations = &mut self.destinations;
        // Destination ports are in network order; a client's (a reply
        // dropped on its way back) is folded the same way.
        let (counts, lost) = program.read(|key| {
            let key = loader::DropKey {
                port: if client(key.port) { 0 } else { key.port },
                dst_port: if client(u16::from_be(key.dst_port)) {
                    0
                } else {
                    key.dst_port
                },
                orig_port: if client(u16::from_be(key.orig_port)) {
                    0
                } else {
                    key.orig_port
                },
                ..key
            };
            admit(destinations, key)
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
        // A site's entry the program made ahead of its first count (for its
        // destinations' overflow) is no row.
        let mut rows: Vec<DropRow> = rows
            .into_iter()
            .filter(|&(_, packets)| packets > 0)
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
        let destination = endpoint(key.dst_family, &key.dst_addr, key.dst_port);
        let translated_from = (key.orig_addr != [0; 16] || key.orig_port != 0)
            .then(|| endpoint(key.dst_family, &key.orig_addr, key.orig_port))
            .flatten()
            // Ports folded to 0 can make the two the same.
            .filter(|from| destination.as_ref() != Some(from));
        DropRow {
            netns_inode,
            netns: self.labels.label(netns_inode),
            reason: self.reasons.name(key.reason),
            location: self.symbols.name(key.location),
            interface,
            socket: socket(key.family, key.proto, key.port),
            destination,
            translated_from,
            packets: 0,
        }
    }
}

/// The key as it is counted: with its destination when that has a row
/// (or can still get one), else without.
fn admit(destinations: &mut HashSet<loader::DropKey>, key: loader::DropKey) -> loader::DropKey {
    if key.dst_family == 0 || destinations.contains(&key) {
        return key;
    }
    if destinations.len() < MAX_DESTINATIONS {
        destinations.insert(key);
        return key;
    }
    key.without_destination()
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

/// A destination as "198.18.3.2:8080" or "[2001:db8::1]:443", the address
/// alone without a port; None without an address family.
fn endpoint(family: u8, addr: &[u8; 16], port_be: u16) -> Option<String> {
    let ip = match i32::from(family) {
        libc::AF_INET => IpAddr::from([addr[0], addr[1], addr[2], addr[3]]),
        libc::AF_INET6 => IpAddr::from(*addr),
        _ => return None,
    };
    Some(match u16::from_be(port_be) {
        0 => ip.to_string(),
        port => SocketAddr::new(ip, port).to_string(),
    })
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
    fn a_destination_is_an_address_and_its_port() {
        let mut v4 = [0; 16];
        v4[..4].copy_from_slice(&[198, 18, 3, 2]);
        let v4_family = libc::AF_INET as u8;
        assert_eq!(
            endpoint(v4_family, &v4, 8080u16.to_be()).as_deref(),
            Some("198.18.3.2:8080")
        );
        assert_eq!(endpoint(v4_family, &v4, 0).as_deref(), Some("198.18.3.2"));
        let v6: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
        assert_eq!(
            endpoint(libc::AF_INET6 as u8, &v6.octets(), 443u16.to_be()).as_deref(),
            Some("[2001:db8::1]:443")
        );
        assert_eq!(endpoint(0, &v4, 80), None);
    }

    #[test]
    fn a_translated_drop_names_both_destinations() {
        let collector = DropsCollector::new(false, "host");
        let mut key = loader::DropKey {
            reason: 12,
            dst_family: libc::AF_INET as u8,
            dst_proto: libc::IPPROTO_TCP as u8,
            dst_port: 8080u16.to_be(),
            orig_port: 80u16.to_be(),
            ..loader::DropKey::default()
        };
        key.dst_addr[..4].copy_from_slice(&[198, 18, 3, 2]);
        key.orig_addr[..4].copy_from_slice(&[198, 18, 1, 1]);
        let row = collector.row(&key, &HashMap::new());
        assert_eq!(row.destination.as_deref(), Some("198.18.3.2:8080"));
        assert_eq!(row.translated_from.as_deref(), Some("198.18.1.1:80"));
        // Not translated, or no destination at all (another reason).
        let plain = collector.row(&key.without_destination(), &HashMap::new());
        assert_eq!((plain.destination, plain.translated_from), (None, None));
        key.orig_addr = [0; 16];
        key.orig_port = 0;
        assert_eq!(collector.row(&key, &HashMap::new()).translated_from, None);
    }

    #[test]
    fn destinations_past_the_first_ones_count_at_their_site() {
        let site = loader::DropKey {
            location: 1,
            reason: 12,
            ..loader::DropKey::default()
        };
        let to = |port: u16| loader::DropKey {
            dst_family: libc::AF_INET as u8,
            dst_proto: libc::IPPROTO_UDP as u8,
            dst_port: port.to_be(),
            ..site
        };
        let mut destinations = HashSet::new();
        for port in 1..=MAX_DESTINATIONS as u16 {
            assert_eq!(admit(&mut destinations, to(port)), to(port));
        }
        let past = to(MAX_DESTINATIONS as u16 + 1);
        assert_eq!(admit(&mut destinations, past), site);
        // Those admitted keep their rows; the site is no destination.
        assert_eq!(admit(&mut destinations, to(1)), to(1));
        assert_eq!(admit(&mut destinations, site), site);
        assert_eq!(destinations.len(), MAX_DESTINATIONS);
    }

    #[test]
    fn without_the_program_each_sample_says_why() {
        let mut collector = DropsCollector::new(false, "host");
        let sample = collector.collect(&HashMap::new());
        assert_eq!(sample.unavailable.as_deref(), Some(DISABLED));
        assert!(sample.rows.is_empty());
    }
}
