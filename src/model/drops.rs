//! Kernel drop reasons: what the eBPF program on `skb:kfree_skb` counted,
//! raw and cumulative. Rates come from two samples at display time, like
//! every other counter, so live, replay, snapshot and export agree.

use super::sockets::{Proto, SocketUser, TCP_LISTEN};
use crate::model::socket_table::{Socket, SocketTable};
use serde::{Deserialize, Serialize};

/// The reason a firewall rule's (or conntrack's) drop is counted under.
pub const NETFILTER_DROP: &str = "NETFILTER_DROP";

/// The drops counted in the kernel since netlens loaded its program.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DropsSample {
    /// Why reasons are not counted ("needs CAP_BPF and CAP_PERFMON (run as
    /// root)", "kernel has no skb:kfree_skb drop reasons", "disabled by
    /// --no-bpf"...); None while the program counts.
    #[serde(default)]
    pub unavailable: Option<String>,
    /// The inode of the watched network namespace: rows of other
    /// namespaces are left out unless it is the initial one.
    #[serde(default)]
    pub netns_inode: u64,
    /// One row per (namespace, reason, location, interface, socket port),
    /// with its cumulative count.
    #[serde(default)]
    pub rows: Vec<DropRow>,
    /// The watched namespace's drops (every namespace's when it is the
    /// initial one) the kernel saw but could not count because the map
    /// was full. Other namespaces' drops never reach the map.
    #[serde(default)]
    pub lost: u64,
}

/// One kernel drop site: why, where and how many so far.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct DropRow {
    /// The network namespace's inode; 0 when the packet carried neither a
    /// device nor a socket.
    pub netns_inode: u64,
    /// "host", the `ip netns` name, or "netns:INODE".
    pub netns: String,
    /// The reason as the kernel names it, without SKB_DROP_REASON_:
    /// "NO_SOCKET", "NETFILTER_DROP"; "reason N" when the running kernel's
    /// enum has no name for N.
    pub reason: String,
    /// The kernel function that dropped it, from /proc/kallsyms:
    /// "tcp_v4_rcv", "nf_hook_slow"; the address in hex when unknown.
    pub location: String,
    /// The packet's device, by name when it is in the watched namespace,
    /// else "ifN"; None when the packet had no device.
    #[serde(default)]
    pub interface: Option<String>,
    /// The socket the drop concerned (the receiving or owning socket):
    /// its protocol ("tcp", "udp", ...) and local port.
    #[serde(default)]
    pub socket: Option<DropSocket>,
    /// NETFILTER_DROP only: where the packet was going when a firewall
    /// rule dropped it, "198.18.3.2:8080", "[2001:db8::1]:443", the address
    /// alone for a protocol without ports (or a port in the ephemeral
    /// range, a client's). Only the first 256 destinations netlens sees
    /// have rows: later ones count in their site's row without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    /// Where it was going before conntrack translated it (DNAT), when
    /// that differs from `destination`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translated_from: Option<String>,
    /// Packets dropped at this site since netlens started counting.
    pub packets: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct DropSocket {
    /// "tcp", "udp", "raw", "unix", or the IP protocol number.
    pub proto: String,
    /// The local port; 0 for a port in the ephemeral range
    /// (ip_local_port_range: a client's), so connections share one row.
    pub port: u16,
}

impl DropRow {
    /// Identifies a row across samples: everything but the count.
    pub fn same_site(&self, other: &DropRow) -> bool {
        self.netns_inode == other.netns_inode
            && self.reason == other.reason
            && self.location == other.location
            && self.interface == other.interface
            && self.socket == other.socket
            && self.destination == other.destination
            && self.translated_from == other.translated_from
    }
}

impl DropsSample {
    /// The row of `previous` that counts the same site as `row`.
    pub fn matching<'a>(&'a self, row: &DropRow) -> Option<&'a DropRow> {
        self.rows.iter().find(|r| r.same_site(row))
    }
}

/// The socket behind a drop's: one of the same protocol bound to the same
/// local port, listeners and unconnected (bound) sockets first, since they
/// own the port, and among those one with a known owner.
pub fn owning_socket<'a>(sockets: &'a SocketTable, socket: &DropSocket) -> Option<Socket<'a>> {
    sockets
        .iter()
        .filter(|s| s.proto.name() == socket.proto && s.local.port() == socket.port)
        .max_by_key(|s| {
            let bound = match s.proto {
                Proto::Tcp => s.state == TCP_LISTEN,
                Proto::Udp => s.state == UDP_UNCONNECTED,
            };
            (bound, !s.users.is_empty())
        })
}

/// The process behind a drop's socket (see `owning_socket`).
pub fn socket_owner<'a>(sockets: &'a SocketTable, socket: &DropSocket) -> Option<&'a SocketUser> {
    owning_socket(sockets, socket).and_then(|s| s.users.first())
}

/// An unconnected UDP socket's state (TCP_CLOSE in tcp_states.h).
const UDP_UNCONNECTED: u8 = 7;

/// A row's drops per second between two samples `seconds` apart: its
/// growth, or its whole count when `previous` had no such row (it appeared
/// in between). None without a `previous` that counted (none, or its
/// program not attached yet: the counts since cover part of the interval
/// only), or when the count went down (the program was reloaded).
pub fn row_rate(previous: Option<&DropsSample>, row: &DropRow, seconds: f64) -> Option<f64> {
    let previous = previous.filter(|p| p.unavailable.is_none())?;
    if seconds <= 0.0 {
        return None;
    }
    let before = previous.matching(row).map_or(0, |r| r.packets);
    row.packets
        .checked_sub(before)
        .map(|grown| grown as f64 / seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;

    fn socket(proto: Proto, state: u8, local: &str, pid: u32) -> SocketSample {
        SocketSample {
            proto,
            state,
            local: local.parse().unwrap(),
            peer: "0.0.0.0:0".parse().unwrap(),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: 1,
            users: vec![SocketUser {
                process: format!("p{pid}").into(),
                pid,
                fd: 3,
            }]
            .into(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        }
    }

    #[test]
    fn a_drops_socket_is_owned_by_the_listener_of_its_port() {
        let sockets = [
            // An accepted connection of another process on the same port.
            socket(Proto::Tcp, 1, "198.18.0.2:80", 7),
            socket(Proto::Tcp, TCP_LISTEN, "0.0.0.0:80", 8),
            socket(Proto::Udp, UDP_UNCONNECTED, "0.0.0.0:53", 9),
        ];
        let owner = |proto: &str, port| {
            let s = DropSocket {
                proto: proto.into(),
                port,
            };
            socket_owner(&SocketTable::from(sockets.to_vec()), &s).map(|u| u.pid)
        };
        assert_eq!(owner("tcp", 80), Some(8));
        assert_eq!(owner("udp", 53), Some(9));
        assert_eq!(owner("udp", 80), None, "the protocol must match");
        assert_eq!(owner("tcp", 443), None);
        assert_eq!(owner("unix", 0), None);
    }

    fn row(reason: &str, packets: u64) -> DropRow {
        DropRow {
            netns_inode: 4026531840,
            netns: "host".into(),
            reason: reason.into(),
            location: "udp_queue_rcv_one_skb".into(),
            packets,
            ..DropRow::default()
        }
    }

    #[test]
    fn a_destination_is_part_of_the_site_and_older_rows_still_read() {
        let to = |destination: &str, from: Option<&str>| DropRow {
            destination: Some(destination.into()),
            translated_from: from.map(Into::into),
            ..row("NETFILTER_DROP", 1)
        };
        let dnat = to("198.18.3.2:8080", Some("198.18.1.1:80"));
        assert!(dnat.same_site(&dnat.clone()));
        assert!(!dnat.same_site(&to("198.18.3.2:8080", None)));
        assert!(!dnat.same_site(&to("198.18.3.3:8080", Some("198.18.1.1:80"))));
        // A recording of an older version has no such keys; a row without
        // them writes none.
        let plain = row("NETFILTER_DROP", 1);
        let text = serde_json::to_string(&plain).unwrap();
        assert!(!text.contains("destination"), "{text}");
        let back: DropRow = serde_json::from_str(&text).unwrap();
        assert_eq!(back, plain);
        let back: DropRow = serde_json::from_str(&serde_json::to_string(&dnat).unwrap()).unwrap();
        assert_eq!(back, dnat);
    }

    #[test]
    fn a_rate_is_the_growth_of_the_same_site() {
        let before = DropsSample {
            rows: vec![row("SOCKET_RCVBUFF", 100), row("NO_SOCKET", 7)],
            ..DropsSample::default()
        };
        assert_eq!(
            row_rate(Some(&before), &row("SOCKET_RCVBUFF", 300), 2.0),
            Some(100.0)
        );
        // A site that appeared in between: all of its count is new.
        assert_eq!(
            row_rate(Some(&before), &row("NETFILTER_DROP", 50), 2.0),
            Some(25.0)
        );
        // A count that went down is a reload, not a negative rate.
        assert_eq!(row_rate(Some(&before), &row("NO_SOCKET", 3), 1.0), None);
        assert_eq!(row_rate(None, &row("NO_SOCKET", 3), 0.0), None);
    }
}
