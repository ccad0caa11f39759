//! Probe packets out and replies in, as bytes (IPv4). Pure: no sockets, so
//! matching is unit-tested on packets laid out per RFC 791 (IP), RFC 792
//! (ICMP: an error quotes the original IP header and the first 8 bytes of
//! its payload), RFC 793 (TCP) and RFC 768 (UDP). Parsing never indexes
//! past what it checked: short or malformed input is `None`, not a panic.

use crate::model::path::ProbeKind;
use std::net::Ipv4Addr;

pub const IPPROTO_ICMP: u8 = 1;
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;

const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_DEST_UNREACH: u8 = 3;
const ICMP_ECHO_REQUEST: u8 = 8;
const ICMP_TIME_EXCEEDED: u8 = 11;

const TCP_SYN: u8 = 0x02;
const TCP_RST: u8 = 0x04;
const TCP_ACK: u8 = 0x10;

/// Bytes after the transport header of UDP and ICMP probes (as traceroute's
/// default 60-byte packets, roughly).
const PAYLOAD: usize = 32;

/// What identifies one prober's probes: each probe has a sequence number
/// `seq` (below `SEQ_SPAN`), carried as the source port `port_base + seq`
/// (TCP, UDP), the TCP sequence number `id << 16 | seq`, and the ICMP echo
/// identifier `id` and sequence `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSpec {
    pub kind: ProbeKind,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// Destination port (TCP, UDP; ignored for ICMP).
    pub dport: u16,
    pub id: u16,
    pub port_base: u16,
}

/// Sequence numbers cycle below this, so source ports stay in
/// `port_base..port_base + SEQ_SPAN`.
pub const SEQ_SPAN: u16 = 4096;

/// A reply matched to the probe `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub seq: u16,
    pub from: Ipv4Addr,
    pub kind: ReplyKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// ICMP time exceeded: a router on the way.
    TimeExceeded,
    /// The destination's own answer: SYN-ACK or RST, port unreachable,
    /// echo reply (or any destination unreachable it sends itself).
    Destination,
    /// A router said destination unreachable (traceroute's !N, !H, ...).
    Unreachable(&'static str),
}

/// The whole probe, IP header included (sent with IP_HDRINCL; the kernel
/// fills in the IP checksum).
pub fn build_probe(spec: &ProbeSpec, ttl: u8, seq: u16) -> Vec<u8> {
    let transport = match spec.kind {
        ProbeKind::Tcp => tcp_syn(spec, seq),
        ProbeKind::Udp => udp_datagram(spec, seq),
        ProbeKind::Icmp => echo_request(spec.id, seq),
    };
    let total = 20 + transport.len();
    let mut packet = Vec::with_capacity(total);
    packet.extend_from_slice(&[0x45, 0]);
    packet.extend_from_slice(&(total as u16).to_be_bytes());
    packet.extend_from_slice(&seq.to_be_bytes());
    packet.extend_from_slice(&[0, 0, ttl, protocol(spec.kind), 0, 0]);
    packet.extend_from_slice(&spec.src.octets());
    packet.extend_from_slice(&spec.dst.octets());
    let sum = checksum(&[&packet]);
    packet[10..12].copy_from_slice(&sum.to_be_bytes());
    packet.extend_from_slice(&transport);
    packet
}

fn protocol(kind: ProbeKind) -> u8 {
    match kind {
        ProbeKind::Tcp => IPPROTO_TCP,
        ProbeKind::Udp => IPPROTO_UDP,
        ProbeKind::Icmp => IPPROTO_ICMP,
    }
}

fn tcp_seq_number(spec: &ProbeSpec, seq: u16) -> u32 {
    (u32::from(spec.id) << 16) | u32::from(seq)
}

fn tcp_syn(spec: &ProbeSpec, seq: u16) -> Vec<u8> {
    let mut tcp = Vec::with_capacity(24);
    tcp.extend_from_slice(&(spec.port_base.wrapping_add(seq)).to_be_bytes());
    tcp.extend_from_slice(&spec.dport.to_be_bytes());
    tcp.extend_from_slice(&tcp_seq_number(spec, seq).to_be_bytes());
    tcp.extend_from_slice(&0u32.to_be_bytes());
    // Data offset 6 words (an MSS option), SYN, window 5840 as traceroute.
    tcp.extend_from_slice(&[0x60, TCP_SYN]);
    tcp.extend_from_slice(&5840u16.to_be_bytes());
    tcp.extend_from_slice(&[0, 0, 0, 0]);
    tcp.extend_from_slice(&[2, 4, 0x05, 0xb4]);
    let sum = transport_checksum(spec, IPPROTO_TCP, &tcp);
    tcp[16..18].copy_from_slice(&sum.to_be_bytes());
    tcp
}

fn udp_datagram(spec: &ProbeSpec, seq: u16) -> Vec<u8> {
    let len = 8 + PAYLOAD;
    let mut udp = Vec::with_capacity(len);
    udp.extend_from_slice(&(spec.port_base.wrapping_add(seq)).to_be_bytes());
    udp.extend_from_slice(&spec.dport.to_be_bytes());
    udp.extend_from_slice(&(len as u16).to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.resize(len, 0);
    let sum = match transport_checksum(spec, IPPROTO_UDP, &udp) {
        0 => 0xffff,
        sum => sum,
    };
    udp[6..8].copy_from_slice(&sum.to_be_bytes());
    udp
}

fn echo_request(id: u16, seq: u16) -> Vec<u8> {
    let mut icmp = vec![ICMP_ECHO_REQUEST, 0, 0, 0];
    icmp.extend_from_slice(&id.to_be_bytes());
    icmp.extend_from_slice(&seq.to_be_bytes());
    icmp.resize(8 + PAYLOAD, 0);
    let sum = checksum(&[&icmp]);
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    icmp
}

fn transport_checksum(spec: &ProbeSpec, proto: u8, segment: &[u8]) -> u16 {
    let mut pseudo = Vec::with_capacity(12);
    pseudo.extend_from_slice(&spec.src.octets());
    pseudo.extend_from_slice(&spec.dst.octets());
    pseudo.extend_from_slice(&[0, proto]);
    pseudo.extend_from_slice(&(segment.len() as u16).to_be_bytes());
    checksum(&[&pseudo, segment])
}

/// The Internet checksum (RFC 1071) over the chunks in turn; each chunk but
/// the last has an even length here.
pub fn checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    for chunk in chunks {
        for pair in chunk.chunks(2) {
            let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
            sum += u32::from(word);
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 header at the start of `bytes`: (header length, protocol, source,
/// destination).
fn ipv4(bytes: &[u8]) -> Option<(usize, u8, Ipv4Addr, Ipv4Addr)> {
    let first = *bytes.first()?;
    let ihl = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || ihl < 20 || bytes.len() < ihl {
        return None;
    }
    let addr = |at: usize| Ipv4Addr::new(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
    Some((ihl, bytes[9], addr(12), addr(16)))
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some((u32::from(be16(bytes, at)?) << 16) | u32::from(be16(bytes, at + 2)?))
}

/// The probe's sequence number from a source port, if it is one of ours.
fn seq_of_port(spec: &ProbeSpec, port: u16) -> Option<u16> {
    let seq = port.wrapping_sub(spec.port_base);
    (seq < SEQ_SPAN).then_some(seq)
}

/// A packet read from the raw ICMP socket (IP header first), matched to one
/// of this prober's probes.
pub fn match_icmp(spec: &ProbeSpec, packet: &[u8]) -> Option<Reply> {
    let (ihl, proto, from, _) = ipv4(packet)?;
    if proto != IPPROTO_ICMP {
        return None;
    }
    let icmp = packet.get(ihl..)?;
    let (kind, code) = (*icmp.first()?, *icmp.get(1)?);
    if kind == ICMP_ECHO_REPLY {
        let ours = spec.kind == ProbeKind::Icmp && from == spec.dst && be16(icmp, 4)? == spec.id;
        let seq = be16(icmp, 6)?;
        return (ours && seq < SEQ_SPAN).then_some(Reply {
            seq,
            from,
            kind: ReplyKind::Destination,
        });
    }
    let reply_kind = match kind {
        ICMP_TIME_EXCEEDED if code == 0 => ReplyKind::TimeExceeded,
        ICMP_DEST_UNREACH if from == spec.dst => ReplyKind::Destination,
        ICMP_DEST_UNREACH => ReplyKind::Unreachable(unreachable_name(code)),
        _ => return None,
    };
    let seq = quoted_seq(spec, icmp.get(8..)?)?;
    Some(Reply {
        seq,
        from,
        kind: reply_kind,
    })
}

/// traceroute's !N, !H, !P, !X as words.
fn unreachable_name(code: u8) -> &'static str {
    match code {
        0 => "network unreachable",
        1 => "host unreachable",
        2 => "protocol unreachable",
        3 => "port unreachable",
        4 => "fragmentation needed",
        9 | 10 | 13 => "administratively prohibited",
        _ => "unreachable",
    }
}

/// The probe an ICMP error quotes: its IP header and at least the first 8
/// bytes of its transport header, which hold the ports and the TCP sequence
/// number or the echo identifier and sequence.
fn quoted_seq(spec: &ProbeSpec, quoted: &[u8]) -> Option<u16> {
    let (ihl, proto, src, dst) = ipv4(quoted)?;
    let transport = quoted.get(ihl..ihl + 8)?;
    if proto != protocol(spec.kind) || dst != spec.dst || src != spec.src {
        return None;
    }
    match spec.kind {
        ProbeKind::Tcp => {
            let seq = seq_of_port(spec, be16(transport, 0)?)?;
            let ours = be16(transport, 2)? == spec.dport
                && be32(transport, 4)? == tcp_seq_number(spec, seq);
            ours.then_some(seq)
        }
        ProbeKind::Udp => {
            let seq = seq_of_port(spec, be16(transport, 0)?)?;
            (be16(transport, 2)? == spec.dport).then_some(seq)
        }
        ProbeKind::Icmp => {
            let ours = transport[0] == ICMP_ECHO_REQUEST && be16(transport, 4)? == spec.id;
            let seq = be16(transport, 6)?;
            (ours && seq < SEQ_SPAN).then_some(seq)
        }
    }
}

/// A packet read from the raw TCP socket (IP header first): the
/// destination's SYN-ACK or RST to one of this prober's SYNs, which
/// acknowledges the SYN's sequence number plus one.
pub fn match_tcp(spec: &ProbeSpec, packet: &[u8]) -> Option<Reply> {
    let (ihl, proto, from, to) = ipv4(packet)?;
    if proto != IPPROTO_TCP || spec.kind != ProbeKind::Tcp || from != spec.dst || to != spec.src {
        return None;
    }
    let tcp = packet.get(ihl..ihl + 20)?;
    let flags = tcp[13];
    let answer = flags & (TCP_SYN | TCP_ACK) == TCP_SYN | TCP_ACK || flags & TCP_RST != 0;
    if !answer || be16(tcp, 0)? != spec.dport {
        return None;
    }
    let seq = seq_of_port(spec, be16(tcp, 2)?)?;
    let acked = be32(tcp, 8)?.wrapping_sub(1);
    (flags & TCP_ACK != 0 && acked == tcp_seq_number(spec, seq)).then_some(Reply {
        seq,
        from,
        kind: ReplyKind::Destination,
    })
}

#[cfg(test)]
mod tests;
