//! Interfaces: rtnetlink link dump (stats64 counters, flags, MTU, MAC),
//! address dump, and ethtool speed/duplex.

use super::ethtool::Ethtool;
use super::rtnl::Rtnl;
use crate::model::{InterfaceSample, LinkCounters, QdiscStats};
use anyhow::Result;
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkInfo, LinkMessage, Stats64};
use netlink_packet_route::tc::{TcAttribute, TcHandle, TcMessage, TcStats2};
use std::collections::HashMap;

/// One read of the links by the deadlined "interfaces" part: when it read
/// the counters (the link dump's midpoint, CLOCK_BOOTTIME seconds; when it
/// began, for a failed read; 0 before any), and the interfaces or
/// why the dump failed.
#[derive(Debug, Clone, Default)]
pub struct LinkRead {
    pub mono: f64,
    pub interfaces: Vec<InterfaceSample>,
    pub error: Option<String>,
}

/// Collects every interface of the namespace it was created in.
pub struct LinkCollector {
    rtnl: Rtnl,
    ethtool: Ethtool,
    /// When the last link dump read the counters: the midpoint of the
    /// dump (CLOCK_BOOTTIME seconds). On a loaded host the thread may
    /// wait for a CPU before or during it; the midpoint halves what that
    /// does to a rate.
    pub counters_mono: f64,
}

impl LinkCollector {
    pub fn new() -> Result<Self> {
        Ok(Self {
            rtnl: Rtnl::new()?,
            ethtool: Ethtool::new()?,
            counters_mono: 0.0,
        })
    }

    /// A read stamped with its time, for the deadlined part: an RTNL
    /// lock held by a driver, or an ethtool query to a hung device, can
    /// block it for seconds.
    pub fn read(&mut self) -> LinkRead {
        let started = super::boottime_seconds();
        match self.collect() {
            Ok(interfaces) => LinkRead {
                mono: self.counters_mono,
                interfaces,
                error: None,
            },
            Err(error) => LinkRead {
                mono: started,
                interfaces: Vec::new(),
                error: Some(format!("{error:#}")),
            },
        }
    }

    pub fn collect(&mut self) -> Result<Vec<InterfaceSample>> {
        let before = super::boottime_seconds();
        let links = self
            .rtnl
            .dump(RouteNetlinkMessage::GetLink(LinkMessage::default()))?;
        self.counters_mono = (before + super::boottime_seconds()) / 2.0;
        let addresses = self
            .rtnl
            .dump(RouteNetlinkMessage::GetAddress(AddressMessage::default()))?;
        let mut by_index = addresses_by_index(addresses);
        // Queueing is where a device without a link speed shows its limit.
        let mut qdiscs = root_qdiscs(
            self.rtnl
                .dump(RouteNetlinkMessage::GetQueueDiscipline(TcMessage::default()))?,
        );
        let mut interfaces: Vec<InterfaceSample> = links
            .into_iter()
            .filter_map(|message| match message {
                RouteNetlinkMessage::NewLink(link) => Some(interface_from(link)),
                _ => None,
            })
            .collect();
        for iface in &mut interfaces {
            if let Some(list) = by_index.remove(&iface.index) {
                iface.addresses = list.into_iter().map(|(_, text)| text).collect();
            }
            iface.qdisc = qdiscs.remove(&iface.index);
            // A virtual device's reported speed is made up (veth: 10000).
            if !iface.is_virtual() {
                (iface.speed_mbps, iface.duplex) = self.ethtool.link_mode(&iface.name);
            }
        }
        interfaces.sort_by_key(|i| i.index);
        Ok(interfaces)
    }
}

fn interface_from(link: LinkMessage) -> InterfaceSample {
    let flags = link.header.flags;
    let mut iface = InterfaceSample {
        index: link.header.index,
        up: flags.contains(LinkFlags::Up),
        lower_up: flags.contains(LinkFlags::LowerUp),
        loopback: flags.contains(LinkFlags::Loopback),
        ..Default::default()
    };
    for attribute in link.attributes {
        match attribute {
            // Up to 15 bytes, but any of them: a name made in a user's own
            // namespace may hold control characters.
            LinkAttribute::IfName(name) => iface.name = crate::text::bounded_name(&name),
            LinkAttribute::Mtu(mtu) => iface.mtu = mtu,
            LinkAttribute::Address(mac) if mac.len() == 6 => iface.mac = Some(format_mac(&mac)),
            LinkAttribute::Stats64(stats) => iface.counters = counters_from(&stats),
            LinkAttribute::Link(index) => iface.link_index = Some(index),
            LinkAttribute::LinkNetNsId(id) => iface.link_netnsid = Some(id),
            LinkAttribute::LinkInfo(infos) => {
                iface.kind = infos.into_iter().find_map(|info| match info {
                    LinkInfo::Kind(kind) => Some(kind.to_string()),
                    _ => None,
                });
            }
            _ => {}
        }
    }
    iface
}

fn counters_from(s: &Stats64) -> LinkCounters {
    LinkCounters {
        rx_packets: s.rx_packets,
        tx_packets: s.tx_packets,
        rx_bytes: s.rx_bytes,
        tx_bytes: s.tx_bytes,
        rx_errors: s.rx_errors,
        tx_errors: s.tx_errors,
        rx_dropped: s.rx_dropped,
        tx_dropped: s.tx_dropped,
        rx_over_errors: s.rx_over_errors,
        rx_crc_errors: s.rx_crc_errors,
        rx_frame_errors: s.rx_frame_errors,
        rx_fifo_errors: s.rx_fifo_errors,
        rx_missed_errors: s.rx_missed_errors,
        tx_carrier_errors: s.tx_carrier_errors,
        tx_fifo_errors: s.tx_fifo_errors,
        collisions: s.collisions,
        multicast: s.multicast,
    }
}

/// The root qdisc (parent TC_H_ROOT) of each interface index, with the
/// statistics `tc -s qdisc show` prints: TCA_STATS2 when the kernel sends it
/// (64-bit bytes, requeues), else the old TCA_STATS.
fn root_qdiscs(messages: Vec<RouteNetlinkMessage>) -> HashMap<u32, QdiscStats> {
    let mut map = HashMap::new();
    for message in messages {
        let RouteNetlinkMessage::NewQueueDiscipline(tc) = message else {
            continue;
        };
        if tc.header.parent != TcHandle::ROOT || tc.header.index <= 0 {
            continue;
        }
        let handle = tc.header.handle;
        let mut qdisc = QdiscStats {
            handle: format!("{:x}:", handle.major),
            ..Default::default()
        };
        let mut have_stats2 = false;
        for attribute in tc.attributes {
            match attribute {
                TcAttribute::Kind(kind) => qdisc.kind = kind,
                TcAttribute::Stats2(stats) => {
                    have_stats2 = true;
                    for stat in stats {
                        match stat {
                            TcStats2::Basic(basic) => {
                                qdisc.bytes = basic.bytes;
                                qdisc.packets = u64::from(basic.packets);
                            }
                            TcStats2::Queue(queue) => {
                                qdisc.drops = u64::from(queue.drops);
                                qdisc.overlimits = u64::from(queue.overlimits);
                                qdisc.requeues = u64::from(queue.requeues);
                                qdisc.backlog_bytes = u64::from(queue.backlog);
                                qdisc.backlog_packets = u64::from(queue.qlen);
                            }
                            _ => {}
                        }
                    }
                }
                TcAttribute::Stats(stats) if !have_stats2 => {
                    qdisc.bytes = stats.bytes;
                    qdisc.packets = u64::from(stats.packets);
                    qdisc.drops = u64::from(stats.drops);
                    qdisc.overlimits = u64::from(stats.overlimits);
                    qdisc.backlog_bytes = u64::from(stats.backlog);
                    qdisc.backlog_packets = u64::from(stats.qlen);
                }
                _ => {}
            }
        }
        map.insert(tc.header.index as u32, qdisc);
    }
    map
}

/// "addr/prefix" per interface index, IPv4 before IPv6 as `ip -br addr` shows.
fn addresses_by_index(messages: Vec<RouteNetlinkMessage>) -> HashMap<u32, Vec<(bool, String)>> {
    let mut map: HashMap<u32, Vec<(bool, String)>> = HashMap::new();
    for message in messages {
        let RouteNetlinkMessage::NewAddress(address) = message else {
            continue;
        };
        // IFA_LOCAL is the interface's own address on point-to-point links;
        // IFA_ADDRESS is the peer there. Prefer LOCAL, as ip does.
        let mut local = None;
        let mut plain = None;
        for attribute in &address.attributes {
            match attribute {
                AddressAttribute::Local(ip) => local = Some(*ip),
                AddressAttribute::Address(ip) => plain = Some(*ip),
                _ => {}
            }
        }
        if let Some(ip) = local.or(plain) {
            let entry = map.entry(address.header.index).or_default();
            entry.push((ip.is_ipv6(), format!("{ip}/{}", address.header.prefix_len)));
        }
    }
    for list in map.values_mut() {
        list.sort_by_key(|(v6, _)| *v6);
    }
    map
}

fn format_mac(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The name of the interface with this index in the calling thread's
/// network namespace (for SLL2 lines, as tcpdump looks it up).
pub fn interface_name(index: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: if_indextoname writes at most IF_NAMESIZE bytes into buf.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success buf holds a NUL-terminated name.
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}
