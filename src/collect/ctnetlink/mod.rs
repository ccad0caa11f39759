//! A small synchronous ctnetlink client (NETLINK_NETFILTER): the per-CPU
//! statistics, the global count/max, the entry dump, and whether any
//! nftables table exists. Blocking by design: it runs on the sampler thread,
//! in the watched namespace.
//!
//! Requests are built with netlink-packet-netfilter. Entry replies are parsed
//! with it too; it has no types for IPCTNL_MSG_CT_GET_STATS(_CPU), so those
//! replies' attributes are read here with netlink-packet-core's NLA iterator,
//! as are the entry attributes the crate leaves raw (counters, zone).

use crate::model::conntrack::{ConntrackEntry, ConntrackStats};
use netlink_packet_core::{
    NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload, NlaBuffer,
    NlasIterator,
};
use netlink_packet_netfilter::conntrack::ConntrackMessage;
use netlink_packet_netfilter::{
    NetfilterHeader, NetfilterMessage, NetfilterMessageInner, NetfilterProtoFamily,
    NetfilterSubsystem,
};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_NETFILTER};
use std::io;

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const HEADER_LEN: usize = 16;
const NFGENMSG_LEN: usize = 4;

/// enum cntl_msg_types (nfnetlink_conntrack.h).
const IPCTNL_MSG_CT_GET_STATS_CPU: u8 = 4;
const IPCTNL_MSG_CT_GET_STATS: u8 = 5;
/// NFT_MSG_GETTABLE (nf_tables.h).
const NFT_MSG_GETTABLE: u8 = 1;

/// enum ctattr_stats_cpu.
const CTA_STATS_FOUND: u16 = 2;
const CTA_STATS_INVALID: u16 = 4;
const CTA_STATS_INSERT: u16 = 8;
const CTA_STATS_INSERT_FAILED: u16 = 9;
const CTA_STATS_DROP: u16 = 10;
const CTA_STATS_EARLY_DROP: u16 = 11;
const CTA_STATS_ERROR: u16 = 12;
const CTA_STATS_SEARCH_RESTART: u16 = 13;
const CTA_STATS_CLASH_RESOLVE: u16 = 14;
const CTA_STATS_CHAIN_TOOLONG: u16 = 15;
/// enum ctattr_stats_global.
const CTA_STATS_GLOBAL_ENTRIES: u16 = 1;
const CTA_STATS_GLOBAL_MAX_ENTRIES: u16 = 2;

mod entry;
pub use entry::{encode_entry, parse_dump, parse_entry, parse_entry_with_crate};

pub struct Ctnetlink {
    socket: Socket,
    sequence: u32,
    buffer: Vec<u8>,
}

impl Ctnetlink {
    /// Opens a netfilter netlink socket in the calling thread's namespace.
    pub fn new() -> io::Result<Self> {
        let mut socket = Socket::new(NETLINK_NETFILTER)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        Ok(Self {
            socket,
            sequence: 0,
            buffer: vec![0; 256 * 1024],
        })
    }

    /// Sends one request and hands every reply payload (after the netlink
    /// header) to `on_message` until the dump ends or the ACK arrives. A
    /// netlink error comes back as the io::Error of its errno.
    fn request(
        &mut self,
        inner: NetfilterMessageInner,
        dump: bool,
        on_message: impl FnMut(u16, &[u8]),
    ) -> io::Result<()> {
        self.request_in(0, inner, dump, on_message)
    }

    /// `request` for one protocol family (NFPROTO_*; 0 for all).
    fn request_in(
        &mut self,
        family: u8,
        inner: NetfilterMessageInner,
        dump: bool,
        mut on_message: impl FnMut(u16, &[u8]),
    ) -> io::Result<()> {
        self.sequence = self.sequence.wrapping_add(1);
        let message = NetfilterMessage::new(
            NetfilterHeader::new(NetfilterProtoFamily::from(family), 0, 0),
            inner,
        );
        let mut packet =
            NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(message));
        packet.header.flags = NLM_F_REQUEST | NLM_F_ACK | if dump { NLM_F_DUMP } else { 0 };
        packet.header.sequence_number = self.sequence;
        packet.finalize();
        let mut out = vec![0; packet.buffer_len()];
        packet.serialize(&mut out);
        self.socket.send(&out, 0)?;
        loop {
            let size = self.socket.recv(&mut &mut self.buffer[..], 0)?;
            match walk(&self.buffer[..size], self.sequence, &mut on_message)? {
                Walk::Finished => return Ok(()),
                Walk::More => {}
            }
        }
    }

    /// IPCTNL_MSG_CT_GET_STATS_CPU: one message per CPU, summed.
    pub fn stats(&mut self) -> io::Result<ConntrackStats> {
        let mut total = ConntrackStats::default();
        self.request(
            ConntrackMessage::Other {
                message_type: IPCTNL_MSG_CT_GET_STATS_CPU,
                attributes: Vec::new(),
            }
            .into(),
            true,
            |_, payload| add_cpu_stats(&mut total, payload),
        )?;
        Ok(total)
    }

    /// IPCTNL_MSG_CT_GET_STATS: (this namespace's count, nf_conntrack_max).
    pub fn count_and_max(&mut self) -> io::Result<(Option<u64>, Option<u64>)> {
        let mut count = None;
        let mut max = None;
        self.request(
            ConntrackMessage::Other {
                message_type: IPCTNL_MSG_CT_GET_STATS,
                attributes: Vec::new(),
            }
            .into(),
            false,
            |_, payload| {
                for (kind, value) in attributes(payload) {
                    match kind {
                        CTA_STATS_GLOBAL_ENTRIES => count = be_u32(value).map(u64::from),
                        CTA_STATS_GLOBAL_MAX_ENTRIES => max = be_u32(value).map(u64::from),
                        _ => {}
                    }
                }
            },
        )?;
        Ok((count, max))
    }

    /// The whole entry list of this namespace (IPv4 and IPv6). Entries that
    /// do not parse are skipped, not fatal.
    pub fn entries(&mut self) -> io::Result<Vec<ConntrackEntry>> {
        let mut entries = Vec::new();
        self.request(
            ConntrackMessage::Get(Vec::new()).into(),
            true,
            |message_type, payload| {
                if let Some(entry) = parse_entry(message_type, payload) {
                    entries.push(entry);
                }
            },
        )?;
        Ok(entries)
    }

    /// An nf_tables dump (NFT_MSG_GETTABLE, GETCHAIN, GETRULE, GETSET,
    /// GETSETELEM...) of every family: `on_message` gets each reply's
    /// message type and payload, the nfgenmsg header (family first) and
    /// then the attributes. `attributes` narrow the dump (NFTA_SET_TABLE
    /// and NFTA_SET_ELEM_LIST_SET for a set's elements); they are
    /// (type, value) pairs, nested ones already encoded in `value`.
    pub fn nft_dump(
        &mut self,
        family: u8,
        message_type: u8,
        attributes: &[(u16, Vec<u8>)],
        on_message: impl FnMut(u16, &[u8]),
    ) -> io::Result<()> {
        let attributes = attributes
            .iter()
            .map(|(kind, value)| netlink_packet_core::DefaultNla::new(*kind, value.clone()))
            .collect();
        self.request_in(
            family,
            NetfilterMessageInner::Other {
                subsys: NetfilterSubsystem::NfTables,
                message_type,
                attributes,
            },
            true,
            on_message,
        )
    }

    /// Whether any nftables table exists here (iptables-nft makes them too).
    pub fn has_nft_tables(&mut self) -> io::Result<bool> {
        let mut tables = 0;
        self.request(
            NetfilterMessageInner::Other {
                subsys: NetfilterSubsystem::NfTables,
                message_type: NFT_MSG_GETTABLE,
                attributes: Vec::new(),
            },
            true,
            |_, _| tables += 1,
        )?;
        Ok(tables > 0)
    }
}

enum Walk {
    More,
    Finished,
}

/// Walks the netlink messages in one datagram.
fn walk(buffer: &[u8], sequence: u32, on_message: &mut impl FnMut(u16, &[u8])) -> io::Result<Walk> {
    let mut offset = 0;
    while offset + HEADER_LEN <= buffer.len() {
        let bytes = &buffer[offset..];
        let length = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        if length < HEADER_LEN || length > bytes.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("malformed netlink reply (length {length})"),
            ));
        }
        let message_type = u16::from_ne_bytes([bytes[4], bytes[5]]);
        let message_sequence = u32::from_ne_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        offset += (length + 3) & !3;
        if message_sequence != sequence {
            continue; // a late reply to an earlier request
        }
        let payload = &bytes[HEADER_LEN..length];
        match message_type {
            NLMSG_ERROR | NLMSG_DONE => {
                let code = payload
                    .get(..4)
                    .map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
                if code < 0 {
                    return Err(io::Error::from_raw_os_error(-code));
                }
                return Ok(Walk::Finished);
            }
            _ => on_message(message_type, payload),
        }
    }
    Ok(Walk::More)
}

/// The attributes after the nfgenmsg header, as (type, value).
fn attributes(payload: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    NlasIterator::new(payload.get(NFGENMSG_LEN..).unwrap_or_default())
        .map_while(Result::ok)
        .map(|nla: NlaBuffer<&[u8]>| {
            let kind = nla.kind();
            let length = usize::from(nla.length());
            let bytes = nla.into_inner();
            (kind, bytes.get(4..length).unwrap_or_default())
        })
}

fn be_u32(value: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(value.get(..4)?.try_into().ok()?))
}

/// Adds one CPU's GET_STATS_CPU reply to the total.
fn add_cpu_stats(total: &mut ConntrackStats, payload: &[u8]) {
    for (kind, value) in attributes(payload) {
        let Some(value) = be_u32(value).map(u64::from) else {
            continue;
        };
        let field = match kind {
            CTA_STATS_FOUND => &mut total.found,
            CTA_STATS_INVALID => &mut total.invalid,
            CTA_STATS_INSERT => &mut total.insert,
            CTA_STATS_INSERT_FAILED => &mut total.insert_failed,
            CTA_STATS_DROP => &mut total.drop,
            CTA_STATS_EARLY_DROP => &mut total.early_drop,
            CTA_STATS_ERROR => &mut total.error,
            CTA_STATS_SEARCH_RESTART => &mut total.search_restart,
            CTA_STATS_CLASH_RESOLVE => &mut total.clash_resolve,
            CTA_STATS_CHAIN_TOOLONG => &mut total.chaintoolong,
            _ => continue,
        };
        *field += value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_stats_add_up() {
        let mut payload = vec![2, 0, 0, 0];
        for (kind, value) in [(CTA_STATS_FOUND, 7u32), (CTA_STATS_DROP, 3), (99, 5)] {
            payload.extend_from_slice(&8u16.to_ne_bytes());
            payload.extend_from_slice(&kind.to_ne_bytes());
            payload.extend_from_slice(&value.to_be_bytes());
        }
        let mut total = ConntrackStats::default();
        add_cpu_stats(&mut total, &payload);
        add_cpu_stats(&mut total, &payload);
        assert_eq!(total.found, 14);
        assert_eq!(total.drop, 6);
        assert_eq!(total.insert, 0);
    }

    #[test]
    fn netlink_errors_carry_the_errno() {
        let mut message = vec![0u8; 36];
        message[..4].copy_from_slice(&36u32.to_ne_bytes());
        message[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        message[8..12].copy_from_slice(&5u32.to_ne_bytes());
        message[16..20].copy_from_slice(&(-libc::EPERM).to_ne_bytes());
        let error = match walk(&message, 5, &mut |_, _| {}) {
            Err(error) => error,
            Ok(_) => panic!("an error message must be an error"),
        };
        assert_eq!(error.raw_os_error(), Some(libc::EPERM));
        // Another request's reply is skipped.
        assert!(matches!(walk(&message, 6, &mut |_, _| {}), Ok(Walk::More)));
    }
}
