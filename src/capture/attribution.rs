//! Whose a captured packet was, for the notes of a pcapng file: the
//! interface it crossed (a cooked capture on every interface says which,
//! by index) and the process and container of the socket it belongs to,
//! looked up in a sample's socket table by its two endpoints, as the Flows
//! tab joins flows to their owners (`model::capture::join_owners`).

use super::pcap_file::{InterfaceName, PacketNote};
use crate::model::Sample;
use crate::model::processes::{ClosedContainers, Container, container_label};
use crate::packet::decode::{L3, linktype, summarize};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// A socket's two ends, as a packet's source and destination give them:
/// the protocol (6 TCP, 17 UDP), then local and peer.
type Ends = (u8, SocketAddr, SocketAddr);

/// A sample's sockets and interfaces, indexed for packets.
#[derive(Debug, Default)]
pub struct PacketOwners {
    /// Each connected socket's ends -> the comment naming its owner.
    by_ends: HashMap<Ends, usize>,
    comments: Vec<Arc<str>>,
    /// The watched namespace's interfaces by index, shared with the notes
    /// (a packet's note allocates nothing).
    interfaces: HashMap<u32, Arc<InterfaceName>>,
    /// The namespace the capture runs in, as netlens labels it.
    namespace: String,
}

impl PacketOwners {
    pub fn new(sample: &Sample) -> Self {
        Self::from_samples([sample])
    }

    /// From several samples, newest first: a socket the newest no longer
    /// has (the connection closed since) is named by an older one.
    pub fn from_samples<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Self {
        let mut owners = PacketOwners::default();
        let mut samples = samples.into_iter().peekable();
        if let Some(newest) = samples.peek() {
            owners.namespace = newest.netns.clone();
            owners.interfaces = newest
                .interfaces
                .iter()
                .filter(|i| i.netns == crate::model::netns::PRIMARY)
                .map(|i| {
                    let name = InterfaceName {
                        name: i.name.clone(),
                        namespace: newest.netns.clone(),
                    };
                    (i.index, Arc::new(name))
                })
                .collect();
        }
        let mut comment_of_pid = HashMap::new();
        for sample in samples {
            owners.add(sample, &mut comment_of_pid);
        }
        owners
    }

    /// The sample's connected sockets and the connections that ended
    /// before it, where no newer sample named their ends.
    fn add(&mut self, sample: &Sample, comment_of_pid: &mut HashMap<u32, usize>) {
        let containers = ClosedContainers::of(sample);
        let sockets = sample.sockets.iter().filter_map(|socket| {
            let proto = match socket.proto.name() {
                "tcp" => 6,
                "udp" => 17,
                _ => return None,
            };
            let user = socket.users.first()?;
            Some((
                proto,
                socket.local,
                socket.peer,
                user,
                containers.of_pid(user.pid),
            ))
        });
        // Connections that ended since the sample before, with the process
        // that held them: those too short for the socket table.
        let ended = sample
            .closed
            .iter()
            .flat_map(|log| &log.conns)
            .filter_map(|conn| {
                let user = conn.users.first()?;
                Some((6, conn.local, conn.peer, user, containers.of_conn(conn)))
            });
        for (proto, local, peer, user, container) in sockets.chain(ended) {
            if peer.port() == 0 {
                continue;
            }
            let index = *comment_of_pid.entry(user.pid).or_insert_with(|| {
                self.add_comment(user.pid, &user.process.to_string(), container)
            });
            let ends = (proto, canonical(local), canonical(peer));
            self.by_ends.entry(ends).or_insert(index);
        }
    }

    /// "pid 812 (nginx)", with ", container web (podman)" where the
    /// process runs in one; returns its index.
    fn add_comment(&mut self, pid: u32, process: &str, container: Option<&Container>) -> usize {
        let mut comment = format!("pid {pid} ({process})");
        if let Some(container) = container {
            comment.push_str(&format!(", container {}", container_label(container)));
        }
        self.comments.push(comment.into());
        self.comments.len() - 1
    }

    /// The capture's own interface (`name`: "eth0", "any") in the
    /// sample's namespace.
    pub fn interface(&self, name: &str) -> InterfaceName {
        InterfaceName {
            name: name.to_string(),
            namespace: self.namespace.clone(),
        }
    }

    /// The interface a packet of `linktype` crossed, by its index
    /// (`ifindex`, from the capture; 0: the one an SLL2 header names, else
    /// unknown), and whose it was: the owner of the socket that sent it
    /// (local end = its source), else of the one that received it.
    pub fn note(&self, linktype: u32, data: &[u8], orig_len: u32, ifindex: u32) -> PacketNote {
        let from_header = (linktype == linktype::SLL2)
            .then(|| data.get(4..8))
            .flatten()
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let interface = Some(ifindex)
            .filter(|&i| i != 0)
            .or(from_header)
            .map(|index| match self.interfaces.get(&index) {
                Some(known) => Arc::clone(known),
                None => Arc::new(InterfaceName {
                    name: format!("ifindex {index}"),
                    namespace: self.namespace.clone(),
                }),
            });
        PacketNote {
            interface,
            comment: self.comment(linktype, data, orig_len),
        }
    }

    /// Whose the packet was (the comment `note` gives), alone.
    pub fn comment(&self, linktype: u32, data: &[u8], orig_len: u32) -> Option<Arc<str>> {
        let summary = summarize(linktype, data, orig_len);
        let ip = |bytes: &[u8; 16]| -> Option<IpAddr> {
            match summary.l3 {
                L3::V4 => Some(IpAddr::V4(Ipv4Addr::new(
                    bytes[0], bytes[1], bytes[2], bytes[3],
                ))),
                L3::V6 => Some(IpAddr::V6(Ipv6Addr::from(*bytes))),
                _ => None,
            }
        };
        match (ip(&summary.src), ip(&summary.dst), summary.tl) {
            (Some(src), Some(dst), Some(_)) if matches!(summary.proto, 6 | 17) => {
                let src = SocketAddr::new(src, summary.sport);
                let dst = SocketAddr::new(dst, summary.dport);
                self.by_ends
                    .get(&(summary.proto, src, dst))
                    .or_else(|| self.by_ends.get(&(summary.proto, dst, src)))
                    .map(|&i| Arc::clone(&self.comments[i]))
            }
            _ => None,
        }
    }
}

/// IPv4-mapped IPv6 addresses as IPv4: a dual-stack socket's ends match
/// the packets' IPv4 addresses.
fn canonical(address: SocketAddr) -> SocketAddr {
    SocketAddr::new(address.ip().to_canonical(), address.port())
}
