//! Conntrack entry messages: the allocation-free parser the dump uses,
//! the same parse through netlink-packet-netfilter's types (the reference
//! the tests compare against), and the encoder for tests and benchmarks.

use super::{HEADER_LEN, NFGENMSG_LEN, be_u32};
use crate::model::conntrack::{ConntrackEntry, Tuple};
use netlink_packet_core::{
    DefaultNla, NetlinkHeader, NetlinkMessage, NetlinkPayload, Nla, NlasIterator,
    ParseableParametrized,
};
use netlink_packet_netfilter::conntrack::{
    ConntrackAttribute, ConntrackMessage, IPTuple, ProtoInfo, ProtoInfoTCP, ProtoTuple, Status,
    Tuple as NlTuple,
};
use netlink_packet_netfilter::{
    NetfilterHeader, NetfilterMessage, NetfilterMessageInner, NetfilterProtoFamily,
};
use std::io;
use std::net::IpAddr;

const NLA_TYPE_MASK: u16 = 0x3fff;
const NLA_F_NESTED: u16 = 0x8000;

/// enum ctattr_type entries the crate leaves raw.
const CTA_COUNTERS_ORIG: u16 = 9;
const CTA_COUNTERS_REPLY: u16 = 10;
const CTA_ZONE: u16 = 18;
/// enum ctattr_counters.
const CTA_COUNTERS_PACKETS: u16 = 1;
const CTA_COUNTERS_BYTES: u16 = 2;
const CTA_COUNTERS32_PACKETS: u16 = 3;
const CTA_COUNTERS32_BYTES: u16 = 4;

/// Parses every entry in a buffer of whole netlink messages, as one
/// ctnetlink dump datagram holds them (used by the benchmark and tests).
pub fn parse_dump(buffer: &[u8], entries: &mut Vec<ConntrackEntry>) -> io::Result<()> {
    let mut offset = 0;
    while offset + HEADER_LEN <= buffer.len() {
        let bytes = &buffer[offset..];
        let length = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        if length < HEADER_LEN || length > bytes.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("malformed netlink message (length {length})"),
            ));
        }
        let message_type = u16::from_ne_bytes([bytes[4], bytes[5]]);
        if let Some(entry) = parse_entry(message_type, &bytes[HEADER_LEN..length]) {
            entries.push(entry);
        }
        offset += (length + 3) & !3;
    }
    Ok(())
}

fn be_u64(value: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(value.get(..8)?.try_into().ok()?))
}

/// The value bytes of an attribute the crate left raw.
fn raw_value(nla: &DefaultNla) -> Vec<u8> {
    let mut value = vec![0; nla.value_len()];
    nla.emit_value(&mut value);
    value
}

/// (packets, bytes) from a CTA_COUNTERS_* nest.
fn counters(value: &[u8]) -> (Option<u64>, Option<u64>) {
    let mut packets = None;
    let mut bytes = None;
    for nla in NlasIterator::new(value).map_while(Result::ok) {
        match nla.kind() {
            CTA_COUNTERS_PACKETS => packets = be_u64(nla.value()),
            CTA_COUNTERS_BYTES => bytes = be_u64(nla.value()),
            CTA_COUNTERS32_PACKETS => packets = be_u32(nla.value()).map(u64::from),
            CTA_COUNTERS32_BYTES => bytes = be_u32(nla.value()).map(u64::from),
            _ => {}
        }
    }
    (packets, bytes)
}

fn tuple(parts: &[NlTuple]) -> Option<(u8, Tuple)> {
    let mut src = None;
    let mut dst = None;
    let mut proto = None;
    let mut sport = None;
    let mut dport = None;
    for part in parts {
        match part {
            NlTuple::Ip(ips) => {
                for ip in ips {
                    match ip {
                        IPTuple::SourceAddress(a) => src = Some(*a),
                        IPTuple::DestinationAddress(a) => dst = Some(*a),
                        _ => {}
                    }
                }
            }
            NlTuple::Proto(protos) => {
                for p in protos {
                    match p {
                        ProtoTuple::Protocol(p) => proto = Some(u8::from(*p)),
                        ProtoTuple::SourcePort(port) => sport = Some(*port),
                        ProtoTuple::DestinationPort(port) => dport = Some(*port),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let (src, dst): (IpAddr, IpAddr) = (src?, dst?);
    Some((
        proto?,
        Tuple {
            src,
            dst,
            sport,
            dport,
        },
    ))
}

/// enum ctattr_type / ctattr_tuple / ctattr_ip / ctattr_l4proto /
/// ctattr_protoinfo(_tcp) values the direct parser reads.
const CTA_TUPLE_ORIG: u16 = 1;
const CTA_TUPLE_REPLY: u16 = 2;
const CTA_STATUS: u16 = 3;
const CTA_PROTOINFO: u16 = 4;
const CTA_TIMEOUT: u16 = 7;
const CTA_MARK: u16 = 8;
const CTA_TUPLE_IP: u16 = 1;
const CTA_TUPLE_PROTO: u16 = 2;
const CTA_IP_V4_SRC: u16 = 1;
const CTA_IP_V4_DST: u16 = 2;
const CTA_IP_V6_SRC: u16 = 3;
const CTA_IP_V6_DST: u16 = 4;
const CTA_PROTO_NUM: u16 = 1;
const CTA_PROTO_SRC_PORT: u16 = 2;
const CTA_PROTO_DST_PORT: u16 = 3;
const CTA_PROTOINFO_TCP: u16 = 1;
const CTA_PROTOINFO_TCP_STATE: u16 = 1;
const IPCTNL_MSG_CT_NEW: u16 = 0;
const IPCTNL_MSG_CT_GET: u16 = 1;
const NFNL_SUBSYS_CTNETLINK: u16 = 1;

/// (type, value) of every attribute in `bytes`, stopping at the first
/// malformed one.
fn nlas(bytes: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.len() < 4 {
            return None;
        }
        let length = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
        let kind = u16::from_ne_bytes([rest[2], rest[3]]) & NLA_TYPE_MASK;
        if length < 4 || length > rest.len() {
            return None;
        }
        let value = &rest[4..length];
        rest = rest.get((length + 3) & !3..).unwrap_or_default();
        Some((kind, value))
    })
}

fn ip(value: &[u8]) -> Option<IpAddr> {
    match value.len() {
        4 => Some(IpAddr::from(<[u8; 4]>::try_from(value).ok()?)),
        16 => Some(IpAddr::from(<[u8; 16]>::try_from(value).ok()?)),
        _ => None,
    }
}

fn be_u16(value: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes(value.get(..2)?.try_into().ok()?))
}

fn direct_tuple(bytes: &[u8]) -> Option<(u8, Tuple)> {
    let (mut src, mut dst, mut proto, mut sport, mut dport) = (None, None, None, None, None);
    for (kind, value) in nlas(bytes) {
        match kind {
            CTA_TUPLE_IP => {
                for (kind, value) in nlas(value) {
                    match kind {
                        CTA_IP_V4_SRC | CTA_IP_V6_SRC => src = ip(value),
                        CTA_IP_V4_DST | CTA_IP_V6_DST => dst = ip(value),
                        _ => {}
                    }
                }
            }
            CTA_TUPLE_PROTO => {
                for (kind, value) in nlas(value) {
                    match kind {
                        CTA_PROTO_NUM => proto = value.first().copied(),
                        CTA_PROTO_SRC_PORT => sport = be_u16(value),
                        CTA_PROTO_DST_PORT => dport = be_u16(value),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Some((
        proto?,
        Tuple {
            src: src?,
            dst: dst?,
            sport,
            dport,
        },
    ))
}

/// One entry from a ctnetlink message (type and payload after the netlink
/// header). None for anything that is not a complete entry.
///
/// This walks the attributes in place with no allocation. Parsing through
/// netlink-packet-netfilter's types (`parse_entry_with_crate`, kept as the
/// reference the tests compare against) allocates a Vec per nest and cost
/// ~76 ms for 17k entries on the bench machine, as much as the kernel's whole
/// table walk; this path is what the dump uses.
pub fn parse_entry(message_type: u16, payload: &[u8]) -> Option<ConntrackEntry> {
    if message_type >> 8 != NFNL_SUBSYS_CTNETLINK
        || !matches!(message_type & 0xff, IPCTNL_MSG_CT_NEW | IPCTNL_MSG_CT_GET)
    {
        return None;
    }
    let mut orig = None;
    let mut reply = None;
    let mut tcp_state = None;
    let (mut status, mut timeout, mut mark, mut zone) = (0, 0, 0, 0);
    let (mut packets, mut bytes) = ((None, None), (None, None));
    for (kind, value) in nlas(payload.get(NFGENMSG_LEN..)?) {
        match kind {
            CTA_TUPLE_ORIG => orig = direct_tuple(value),
            CTA_TUPLE_REPLY => reply = direct_tuple(value),
            CTA_STATUS => status = be_u32(value).unwrap_or(0),
            CTA_TIMEOUT => timeout = be_u32(value).unwrap_or(0),
            CTA_MARK => mark = be_u32(value).unwrap_or(0),
            CTA_ZONE => zone = be_u16(value).unwrap_or(0),
            CTA_COUNTERS_ORIG => (packets.0, bytes.0) = counters(value),
            CTA_COUNTERS_REPLY => (packets.1, bytes.1) = counters(value),
            CTA_PROTOINFO => {
                for (kind, value) in nlas(value) {
                    if kind == CTA_PROTOINFO_TCP {
                        for (kind, value) in nlas(value) {
                            if kind == CTA_PROTOINFO_TCP_STATE {
                                tcp_state = value.first().copied();
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let (proto, orig) = orig?;
    let (_, reply) = reply?;
    let pair = |(o, r): (Option<u64>, Option<u64>)| Some((o?, r?));
    Some(ConntrackEntry {
        proto,
        tcp_state: if proto == 6 { tcp_state } else { None },
        orig,
        reply,
        status,
        timeout,
        mark,
        zone,
        packets: pair(packets),
        bytes: pair(bytes),
    })
}

/// The same as `parse_entry`, through netlink-packet-netfilter's types.
pub fn parse_entry_with_crate(message_type: u16, payload: &[u8]) -> Option<ConntrackEntry> {
    let message = NetfilterMessage::parse_with_param(payload, message_type).ok()?;
    let attributes = match message.inner {
        NetfilterMessageInner::Conntrack(ConntrackMessage::New(a))
        | NetfilterMessageInner::Conntrack(ConntrackMessage::Get(a)) => a,
        _ => return None,
    };
    let mut orig = None;
    let mut reply = None;
    let mut tcp_state = None;
    let mut status = 0;
    let mut timeout = 0;
    let mut mark = 0;
    let mut zone = 0;
    let (mut packets, mut bytes) = ((None, None), (None, None));
    for attribute in &attributes {
        match attribute {
            ConntrackAttribute::CtaTupleOrig(parts) => orig = tuple(parts),
            ConntrackAttribute::CtaTupleReply(parts) => reply = tuple(parts),
            ConntrackAttribute::CtaStatus(s) => status = s.bits(),
            ConntrackAttribute::CtaTimeout(t) => timeout = *t,
            ConntrackAttribute::CtaMark(m) => mark = *m,
            ConntrackAttribute::CtaProtoInfo(infos) => {
                for info in infos {
                    if let ProtoInfo::TCP(tcp) = info {
                        for item in tcp {
                            if let ProtoInfoTCP::State(state) = item {
                                tcp_state = Some(*state);
                            }
                        }
                    }
                }
            }
            ConntrackAttribute::Other(nla) => match nla.kind() & NLA_TYPE_MASK {
                CTA_COUNTERS_ORIG => (packets.0, bytes.0) = counters(&raw_value(nla)),
                CTA_COUNTERS_REPLY => (packets.1, bytes.1) = counters(&raw_value(nla)),
                CTA_ZONE => {
                    let value = raw_value(nla);
                    zone = value
                        .get(..2)
                        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
                }
                _ => {}
            },
            _ => {}
        }
    }
    let (proto, orig) = orig?;
    let (_, reply) = reply?;
    let pair = |(o, r): (Option<u64>, Option<u64>)| Some((o?, r?));
    Some(ConntrackEntry {
        proto,
        tcp_state: if proto == 6 { tcp_state } else { None },
        orig,
        reply,
        status,
        timeout,
        mark,
        zone,
        packets: pair(packets),
        bytes: pair(bytes),
    })
}

/// One entry as the kernel sends it in a dump: a whole netlink message
/// (IPCTNL_MSG_CT_NEW). The inverse of `parse_entry`, for tests and the
/// benchmark's synthetic 17k-entry dumps.
pub fn encode_entry(entry: &ConntrackEntry, sequence: u32) -> Vec<u8> {
    let tuple = |t: &Tuple| {
        let mut proto = vec![ProtoTuple::Protocol(entry.proto.into())];
        if let (Some(s), Some(d)) = (t.sport, t.dport) {
            proto.push(ProtoTuple::SourcePort(s));
            proto.push(ProtoTuple::DestinationPort(d));
        }
        vec![
            NlTuple::Ip(vec![
                IPTuple::SourceAddress(t.src),
                IPTuple::DestinationAddress(t.dst),
            ]),
            NlTuple::Proto(proto),
        ]
    };
    let mut attributes = vec![
        ConntrackAttribute::CtaTupleOrig(tuple(&entry.orig)),
        ConntrackAttribute::CtaTupleReply(tuple(&entry.reply)),
        ConntrackAttribute::CtaStatus(Status::from_bits_retain(entry.status)),
    ];
    if let (Some(packets), Some(bytes)) = (entry.packets, entry.bytes) {
        for (kind, p, b) in [
            (CTA_COUNTERS_ORIG, packets.0, bytes.0),
            (CTA_COUNTERS_REPLY, packets.1, bytes.1),
        ] {
            let mut nest = Vec::new();
            for (k, v) in [(CTA_COUNTERS_PACKETS, p), (CTA_COUNTERS_BYTES, b)] {
                nest.extend_from_slice(&12u16.to_ne_bytes());
                nest.extend_from_slice(&k.to_ne_bytes());
                nest.extend_from_slice(&v.to_be_bytes());
            }
            attributes.push(ConntrackAttribute::Other(DefaultNla::new(
                kind | NLA_F_NESTED,
                nest,
            )));
        }
    }
    attributes.push(ConntrackAttribute::CtaTimeout(entry.timeout));
    attributes.push(ConntrackAttribute::CtaMark(entry.mark));
    if entry.zone != 0 {
        attributes.push(ConntrackAttribute::Other(DefaultNla::new(
            CTA_ZONE,
            entry.zone.to_be_bytes().to_vec(),
        )));
    }
    if let Some(state) = entry.tcp_state {
        attributes.push(ConntrackAttribute::CtaProtoInfo(vec![ProtoInfo::TCP(
            vec![ProtoInfoTCP::State(state)],
        )]));
    }
    let family = match entry.orig.src {
        IpAddr::V4(_) => NetfilterProtoFamily::IPv4,
        IpAddr::V6(_) => NetfilterProtoFamily::IPv6,
    };
    let message = NetfilterMessage::new(
        NetfilterHeader::new(family, 0, 0),
        ConntrackMessage::New(attributes),
    );
    let mut packet = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(message));
    packet.header.flags = 2; // NLM_F_MULTI
    packet.header.sequence_number = sequence;
    packet.finalize();
    let mut out = vec![0; packet.buffer_len()];
    packet.serialize(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ConntrackEntry {
        ConntrackEntry {
            proto: 6,
            tcp_state: Some(3),
            orig: Tuple {
                src: "198.18.0.1".parse().unwrap(),
                dst: "198.18.0.2".parse().unwrap(),
                sport: Some(40000),
                dport: Some(8080),
            },
            reply: Tuple {
                src: "198.18.0.3".parse().unwrap(),
                dst: "198.18.0.1".parse().unwrap(),
                sport: Some(80),
                dport: Some(40000),
            },
            status: 0x1be,
            timeout: 431_999,
            mark: 7,
            zone: 3,
            packets: Some((5, 4)),
            bytes: Some((320, 1_000_000_000_000)),
        }
    }

    #[test]
    fn an_encoded_entry_parses_back() {
        let mut dump = encode_entry(&entry(), 1);
        let mut icmp = entry();
        icmp.proto = 1;
        icmp.tcp_state = None;
        icmp.orig.sport = None;
        icmp.orig.dport = None;
        icmp.reply.sport = None;
        icmp.reply.dport = None;
        icmp.packets = None;
        icmp.bytes = None;
        icmp.zone = 0;
        dump.extend(encode_entry(&icmp, 1));
        let mut parsed = Vec::new();
        parse_dump(&dump, &mut parsed).unwrap();
        assert_eq!(parsed, vec![entry(), icmp]);
    }

    #[test]
    fn direct_parser_agrees_with_the_crate() {
        let mut e = entry();
        for i in 0..40u16 {
            e.orig.sport = Some(i);
            e.tcp_state = (i % 3 != 0).then_some((i % 9) as u8);
            e.proto = if i % 3 == 0 { 17 } else { 6 };
            e.packets = (i % 2 == 0).then_some((u64::from(i), 1));
            e.bytes = e.packets.map(|(p, r)| (p * 60, r * 60));
            e.zone = i % 4;
            let message = encode_entry(&e, 1);
            let payload = &message[HEADER_LEN..];
            let direct = parse_entry(0x100, payload);
            assert_eq!(direct, parse_entry_with_crate(0x100, payload));
            assert!(direct.is_some());
        }
        // Not a conntrack entry message.
        let message = encode_entry(&e, 1);
        assert_eq!(parse_entry(0x104, &message[HEADER_LEN..]), None);
    }

    #[test]
    fn v6_entries_parse() {
        let mut e = entry();
        e.orig.src = "2001:db8::1".parse().unwrap();
        e.orig.dst = "2001:db8::2".parse().unwrap();
        e.reply.src = "2001:db8::2".parse().unwrap();
        e.reply.dst = "2001:db8::1".parse().unwrap();
        let mut parsed = Vec::new();
        parse_dump(&encode_entry(&e, 9), &mut parsed).unwrap();
        assert_eq!(parsed, vec![e]);
    }

    #[test]
    fn garbage_is_an_error_or_skipped_never_a_panic() {
        let mut parsed = Vec::new();
        assert!(parse_dump(&[0xff; 40], &mut parsed).is_err());
        let mut message = encode_entry(&entry(), 1);
        // Cut the attributes short but keep the header length consistent.
        message.truncate(40);
        message[..4].copy_from_slice(&40u32.to_ne_bytes());
        parse_dump(&message, &mut parsed).unwrap();
        assert!(parsed.is_empty());
        let whole = encode_entry(&entry(), 1);
        for cut in HEADER_LEN..whole.len() {
            let _ = parse_entry(0x100, &whole[HEADER_LEN..cut]);
            let _ = parse_entry_with_crate(0x100, &whole[HEADER_LEN..cut]);
        }
    }
}
