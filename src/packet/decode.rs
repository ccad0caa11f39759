//! Fast structured decode of a packet for flow accounting and filtering:
//! no strings, no allocation, never panics on short or malformed input.
//! (The tcpdump lines are printed by `format`, which walks the bytes itself.)

use pnet_packet::ethernet::EtherTypes;

/// The network layer of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum L3 {
    #[default]
    Other,
    V4,
    V6,
    Arp,
}

/// What flows and filters need from one packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// The link type's protocol field as libpcap sees it (an ethertype; a
    /// VLAN tag is its own ethertype, as for `ip` without `vlan`).
    pub ethertype: u16,
    /// Offset of the network header in the captured bytes.
    pub nl: usize,
    pub l3: L3,
    /// Addresses (IPv4 in the first 4 bytes; ARP sender/target protocol
    /// addresses when the ARP carries IPv4).
    pub src: [u8; 16],
    pub dst: [u8; 16],
    /// The transport protocol (after an IPv6 fragment or options header).
    pub proto: u8,
    /// The protocol field of the IP header itself (IPv6 next header).
    pub ip_proto_field: u8,
    /// Offset of the transport header, when this is the first fragment.
    pub tl: Option<usize>,
    pub sport: u16,
    pub dport: u16,
    pub tcp_flags: u8,
    pub tcp_seq: u32,
    pub tcp_ack: u32,
    /// The TCP window field as sent (not scaled).
    pub tcp_win: u16,
    /// TCP options of a SYN the flow analysis needs: the window scale shift
    /// (None when absent) and the MSS (0 when absent or not a SYN).
    pub tcp_wscale: Option<u8>,
    pub tcp_mss: u16,
    /// Offset of the transport payload in the captured bytes (TCP and UDP).
    pub payload_at: usize,
    /// Transport payload bytes (from the IP lengths, not the capture).
    pub payload_len: u32,
    /// Packet length on the wire.
    pub wire_len: u32,
    /// IP total length (0 when not IP).
    pub ip_len: u32,
}

impl Summary {
    pub fn is_ip(&self) -> bool {
        matches!(self.l3, L3::V4 | L3::V6)
    }

    pub fn addr_len(&self) -> usize {
        if self.l3 == L3::V6 { 16 } else { 4 }
    }

    pub fn src_ip(&self) -> std::net::IpAddr {
        ip_of(&self.src, self.l3)
    }

    pub fn dst_ip(&self) -> std::net::IpAddr {
        ip_of(&self.dst, self.l3)
    }

    /// The captured part of the transport payload in `data`, the packet
    /// this summarizes (shorter than `payload_len` when the snap length
    /// cut it).
    pub fn payload<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        let end = self
            .payload_at
            .saturating_add(self.payload_len as usize)
            .min(data.len());
        data.get(self.payload_at..end).unwrap_or(&[])
    }
}

fn ip_of(a: &[u8; 16], l3: L3) -> std::net::IpAddr {
    if l3 == L3::V6 {
        std::net::IpAddr::V6(std::net::Ipv6Addr::from(*a))
    } else {
        std::net::IpAddr::V4(std::net::Ipv4Addr::new(a[0], a[1], a[2], a[3]))
    }
}

#[inline]
fn be16(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]))
}

#[inline]
fn be32(b: &[u8], i: usize) -> Option<u32> {
    let s = b.get(i..i + 4)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// The pcap link types netlens reads (LINKTYPE_* numbers); the summary
/// and the line printer both go by them.
pub mod linktype {
    pub const ETHERNET: u32 = 1;
    pub const NULL: u32 = 0;
    pub const LOOP: u32 = 108;
    pub const RAW: u32 = 101;
    /// LINKTYPE_IPV4 and LINKTYPE_IPV6: raw IP too (tcpdump's raw_if_print).
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const SLL: u32 = 113;
    pub const SLL2: u32 = 276;
    pub const NFLOG: u32 = 239;
    pub const ARCNET_LINUX: u32 = 129;
    pub const IPOIB: u32 = 242;
    pub const IPNET: u32 = 226;
    pub const BRCM_PREPEND: u32 = 282;
}

/// Where the network layer starts and its protocol, for a link type.
pub fn link(linktype: u32, data: &[u8]) -> Option<(u16, usize)> {
    use linktype::*;
    match linktype {
        ETHERNET => Some((be16(data, 12)?, 14)),
        SLL => Some((be16(data, 14)?, 16)),
        SLL2 => Some((be16(data, 0)?, 20)),
        NULL | LOOP => {
            let raw = be32(data, 0)?;
            let family = if linktype == NULL && raw & 0xffff_0000 != 0 {
                raw.swap_bytes()
            } else {
                raw
            };
            match family {
                2 => Some((0x0800, 4)),
                24 | 28 | 30 => Some((0x86dd, 4)),
                _ => Some((0, 4)),
            }
        }
        // Solaris ipnet: a 24-byte header with the address family at byte 1.
        IPNET => match data.get(1)? {
            2 => Some((0x0800, 24)),
            26 => Some((0x86dd, 24)),
            _ => Some((0, 24)),
        },
        // DLT_RAW is 12 or 14 on some systems.
        RAW | 12 | 14 | IPV4 | IPV6 => match data.first()? >> 4 {
            4 => Some((0x0800, 0)),
            6 => Some((0x86dd, 0)),
            _ => Some((0, 0)),
        },
        _ => None,
    }
}

/// Decodes what it can; fields it cannot reach stay zero.
pub fn summarize(linktype: u32, data: &[u8], wire_len: u32) -> Summary {
    let mut s = Summary {
        wire_len: wire_len.max(data.len() as u32),
        ..Default::default()
    };
    let Some((ethertype, nl)) = link(linktype, data) else {
        return s;
    };
    s.ethertype = ethertype;
    s.nl = nl;
    if ethertype == EtherTypes::Ipv4.0 {
        ipv4(&mut s, data, nl);
    } else if ethertype == EtherTypes::Ipv6.0 {
        ipv6(&mut s, data, nl);
    } else if ethertype == EtherTypes::Arp.0 {
        s.l3 = L3::Arp;
        if data.get(nl + 4) == Some(&6)
            && data.get(nl + 5) == Some(&4)
            && let (Some(spa), Some(tpa)) = (data.get(nl + 14..nl + 18), data.get(nl + 24..nl + 28))
        {
            s.src[..4].copy_from_slice(spa);
            s.dst[..4].copy_from_slice(tpa);
        }
    }
    s
}

fn ipv4(s: &mut Summary, data: &[u8], nl: usize) {
    let Some(&vhl) = data.get(nl) else { return };
    if vhl >> 4 != 4 {
        return;
    }
    let hlen = usize::from(vhl & 0x0f) * 4;
    let (Some(total), Some(off), Some(&proto)) =
        (be16(data, nl + 2), be16(data, nl + 6), data.get(nl + 9))
    else {
        return;
    };
    let (Some(src), Some(dst)) = (data.get(nl + 12..nl + 16), data.get(nl + 16..nl + 20)) else {
        return;
    };
    s.l3 = L3::V4;
    s.src[..4].copy_from_slice(src);
    s.dst[..4].copy_from_slice(dst);
    s.proto = proto;
    s.ip_proto_field = proto;
    s.ip_len = u32::from(total);
    if hlen < 20 {
        return;
    }
    let payload = u32::from(total).saturating_sub(hlen as u32);
    if off & 0x1fff == 0 {
        transport(s, data, nl + hlen, payload);
    }
}

fn ipv6(s: &mut Summary, data: &[u8], nl: usize) {
    let Some(&v) = data.get(nl) else { return };
    if v >> 4 != 6 {
        return;
    }
    let (Some(plen), Some(&nxt)) = (be16(data, nl + 4), data.get(nl + 6)) else {
        return;
    };
    let (Some(src), Some(dst)) = (data.get(nl + 8..nl + 24), data.get(nl + 24..nl + 40)) else {
        return;
    };
    s.l3 = L3::V6;
    s.src.copy_from_slice(src);
    s.dst.copy_from_slice(dst);
    s.ip_proto_field = nxt;
    s.ip_len = u32::from(plen) + 40;
    let mut proto = nxt;
    let mut at = nl + 40;
    let mut left = u32::from(plen);
    // Walk extension headers (bounded: at most 8).
    for _ in 0..8 {
        match proto {
            0 | 43 | 60 => {
                let (Some(&next), Some(&len)) = (data.get(at), data.get(at + 1)) else {
                    s.proto = proto;
                    return;
                };
                let size = (usize::from(len) + 1) * 8;
                proto = next;
                at += size;
                left = left.saturating_sub(size as u32);
            }
            44 => {
                let (Some(&next), Some(off)) = (data.get(at), be16(data, at + 2)) else {
                    s.proto = proto;
                    return;
                };
                proto = next;
                at += 8;
                left = left.saturating_sub(8);
                if off & 0xfff8 != 0 {
                    s.proto = proto;
                    return;
                }
            }
            _ => break,
        }
    }
    s.proto = proto;
    transport(s, data, at, left);
}

fn transport(s: &mut Summary, data: &[u8], tl: usize, payload: u32) {
    s.tl = Some(tl);
    match s.proto {
        6 => {
            if let (Some(sp), Some(dp)) = (be16(data, tl), be16(data, tl + 2)) {
                s.sport = sp;
                s.dport = dp;
            }
            if let (Some(seq), Some(ack), Some(&off), Some(&flags)) = (
                be32(data, tl + 4),
                be32(data, tl + 8),
                data.get(tl + 12),
                data.get(tl + 13),
            ) {
                s.tcp_seq = seq;
                s.tcp_ack = ack;
                s.tcp_flags = flags;
                let hlen = usize::from(off >> 4) * 4;
                s.payload_len = payload.saturating_sub(hlen as u32);
                s.payload_at = tl + hlen;
                s.tcp_win = be16(data, tl + 14).unwrap_or(0);
                if flags & 0x02 != 0 {
                    syn_options(s, data, tl + 20, tl + hlen);
                }
            }
        }
        17 | 132 | 33 => {
            if let (Some(sp), Some(dp)) = (be16(data, tl), be16(data, tl + 2)) {
                s.sport = sp;
                s.dport = dp;
                s.payload_len = payload.saturating_sub(8);
                s.payload_at = tl + 8;
            }
        }
        1 | 58 => {
            // ICMP: type and code stand in for ports in the flow key.
            if let (Some(&t), Some(&c)) = (data.get(tl), data.get(tl + 1)) {
                s.sport = u16::from(t);
                s.dport = u16::from(c);
            }
            s.payload_len = payload;
        }
        _ => s.payload_len = payload,
    }
}

/// MSS and window scale from a SYN's options (bounded walk; stops at the
/// end of the header, the capture or a malformed length).
fn syn_options(s: &mut Summary, data: &[u8], mut at: usize, end: usize) {
    while at < end {
        let Some(&kind) = data.get(at) else { return };
        match kind {
            0 => return,
            1 => at += 1,
            _ => {
                let Some(&len) = data.get(at + 1) else { return };
                if len < 2 {
                    return;
                }
                match (kind, len) {
                    (2, 4) => s.tcp_mss = be16(data, at + 2).unwrap_or(0),
                    (3, 3) => s.tcp_wscale = data.get(at + 2).map(|w| (*w).min(14)),
                    _ => {}
                }
                at += usize::from(len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pnet_packet::MutablePacket;
    use pnet_packet::ethernet::MutableEthernetPacket;
    use pnet_packet::ip::IpNextHeaderProtocols;
    use pnet_packet::ipv4::MutableIpv4Packet;
    use pnet_packet::tcp::MutableTcpPacket;

    /// An Ethernet/IPv4/TCP frame built with pnet.
    pub fn tcp_frame(flags: u8, payload: usize) -> Vec<u8> {
        let mut buf = vec![0u8; 14 + 20 + 20 + payload];
        let mut eth = MutableEthernetPacket::new(&mut buf).unwrap();
        eth.set_ethertype(EtherTypes::Ipv4);
        let mut ip = MutableIpv4Packet::new(eth.payload_mut()).unwrap();
        ip.set_version(4);
        ip.set_header_length(5);
        ip.set_total_length((40 + payload) as u16);
        ip.set_ttl(64);
        ip.set_next_level_protocol(IpNextHeaderProtocols::Tcp);
        ip.set_source([198, 18, 0, 1].into());
        ip.set_destination([198, 18, 0, 2].into());
        let mut tcp = MutableTcpPacket::new(ip.payload_mut()).unwrap();
        tcp.set_source(40000);
        tcp.set_destination(9000);
        tcp.set_sequence(1000);
        tcp.set_data_offset(5);
        tcp.set_flags(flags);
        tcp.set_window(512);
        buf
    }

    #[test]
    fn tcp_frame_summarizes() {
        let frame = tcp_frame(0x02, 10);
        let s = summarize(1, &frame, frame.len() as u32);
        assert_eq!(s.l3, L3::V4);
        assert_eq!(
            (s.sport, s.dport, s.proto, s.tcp_flags),
            (40000, 9000, 6, 2)
        );
        assert_eq!(s.payload_len, 10);
        assert_eq!(s.src_ip().to_string(), "198.18.0.1");
    }

    /// Raw IP link types (101, and LINKTYPE_IPV4/IPV6 228/229) start at
    /// the IP header, ipnet's after 24 bytes: filters and flows see them.
    #[test]
    fn raw_ip_link_types_summarize() {
        let frame = tcp_frame(0x02, 0);
        for linktype in [101, 228] {
            let s = summarize(linktype, &frame[14..], 40);
            assert_eq!((s.l3, s.dport), (L3::V4, 9000), "{linktype}");
        }
        let mut v6 = vec![0u8; 40 + 8];
        v6[0] = 0x60;
        v6[5] = 8; // payload length
        v6[6] = 17; // UDP
        v6[23] = 1; // ::1
        v6[39] = 1;
        v6[42..44].copy_from_slice(&53u16.to_be_bytes());
        for linktype in [101, 229] {
            let s = summarize(linktype, &v6, 48);
            assert_eq!((s.l3, s.proto, s.dport), (L3::V6, 17, 53), "{linktype}");
        }
        // Solaris ipnet (226): 24 bytes before the IP header, family 2.
        let mut ipnet = vec![0u8; 24];
        ipnet[1] = 2;
        ipnet.extend_from_slice(&frame[14..]);
        let s = summarize(226, &ipnet, 64);
        assert_eq!((s.l3, s.dport), (L3::V4, 9000));
    }

    #[test]
    fn every_truncation_is_safe() {
        let frame = tcp_frame(0x12, 4);
        for cut in 0..frame.len() {
            let s = summarize(1, &frame[..cut], frame.len() as u32);
            assert_eq!(s.wire_len, frame.len() as u32);
        }
    }
}
