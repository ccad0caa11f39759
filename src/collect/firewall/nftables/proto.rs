//! The protocol headers, meta keys and ct keys nft can name: the
//! templates of nftables' src/proto.c, meta.c and ct.c.

use super::types::Ty;

/// A protocol nft can name a header of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// inet tables: `meta nfproto` selects the network header.
    Inet,
    /// netdev tables: `meta protocol` selects it.
    Netdev,
    Ether,
    Arp,
    Ip,
    Ip6,
    Tcp,
    Udp,
    Udplite,
    Sctp,
    Dccp,
    Icmp,
    Icmp6,
    Igmp,
    Esp,
    Ah,
    Comp,
}

/// One header field: name, bit offset and length, type.
#[derive(Clone, Copy)]
pub struct Template {
    pub name: &'static str,
    pub offset: u32,
    pub len: u32,
    pub ty: Ty,
}

const fn t(name: &'static str, offset: u32, len: u32, ty: Ty) -> Template {
    Template {
        name,
        offset,
        len,
        ty,
    }
}

const PORTS: [Template; 2] = [
    t("sport", 0, 16, Ty::InetService),
    t("dport", 16, 16, Ty::InetService),
];

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Inet => "inet",
            Proto::Netdev => "netdev",
            Proto::Ether => "ether",
            Proto::Arp => "arp",
            Proto::Ip => "ip",
            Proto::Ip6 => "ip6",
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
            Proto::Udplite => "udplite",
            Proto::Sctp => "sctp",
            Proto::Dccp => "dccp",
            Proto::Icmp => "icmp",
            Proto::Icmp6 => "icmpv6",
            Proto::Igmp => "igmp",
            Proto::Esp => "esp",
            Proto::Ah => "ah",
            Proto::Comp => "comp",
        }
    }

    pub fn templates(self) -> &'static [Template] {
        use Ty::*;
        const IP: [Template; 12] = [
            t("version", 0, 4, Integer),
            t("hdrlength", 4, 4, Integer),
            t("dscp", 8, 6, Dscp),
            t("ecn", 14, 2, Ecn),
            t("length", 16, 16, Integer),
            t("id", 32, 16, Integer),
            t("frag-off", 48, 16, Integer),
            t("ttl", 64, 8, Integer),
            t("protocol", 72, 8, InetProto),
            t("checksum", 80, 16, Integer),
            t("saddr", 96, 32, IpAddr),
            t("daddr", 128, 32, IpAddr),
        ];
        const IP6: [Template; 9] = [
            t("version", 0, 4, Integer),
            t("dscp", 4, 6, Dscp),
            t("ecn", 10, 2, Ecn),
            t("flowlabel", 12, 20, Integer),
            t("length", 32, 16, Integer),
            t("nexthdr", 48, 8, InetProto),
            t("hoplimit", 56, 8, Integer),
            t("saddr", 64, 128, Ip6Addr),
            t("daddr", 192, 128, Ip6Addr),
        ];
        const TCP: [Template; 10] = [
            PORTS[0],
            PORTS[1],
            t("sequence", 32, 32, Integer),
            t("ackseq", 64, 32, Integer),
            t("doff", 96, 4, Integer),
            t("reserved", 100, 4, Integer),
            t("flags", 104, 8, TcpFlag),
            t("window", 112, 16, Integer),
            t("checksum", 128, 16, Integer),
            t("urgptr", 144, 16, Integer),
        ];
        const UDP: [Template; 4] = [
            PORTS[0],
            PORTS[1],
            t("length", 32, 16, Integer),
            t("checksum", 48, 16, Integer),
        ];
        const UDPLITE: [Template; 4] = [
            PORTS[0],
            PORTS[1],
            t("csumcov", 32, 16, Integer),
            t("checksum", 48, 16, Integer),
        ];
        const SCTP: [Template; 4] = [
            PORTS[0],
            PORTS[1],
            t("vtag", 32, 32, Integer),
            t("checksum", 64, 32, Integer),
        ];
        const ICMP: [Template; 7] = [
            t("type", 0, 8, IcmpType),
            t("code", 8, 8, IcmpCode),
            t("checksum", 16, 16, Integer),
            t("id", 32, 16, Integer),
            t("sequence", 48, 16, Integer),
            t("gateway", 32, 32, Integer),
            t("mtu", 48, 16, Integer),
        ];
        const ICMP6: [Template; 7] = [
            t("type", 0, 8, Icmp6Type),
            t("code", 8, 8, Icmpv6Code),
            t("checksum", 16, 16, Integer),
            t("mtu", 32, 32, Integer),
            t("id", 32, 16, Integer),
            t("sequence", 48, 16, Integer),
            t("max-delay", 32, 16, Integer),
        ];
        const IGMP: [Template; 4] = [
            t("type", 0, 8, Integer),
            t("mrt", 8, 8, Integer),
            t("checksum", 16, 16, Integer),
            t("group", 32, 32, Integer),
        ];
        const ESP: [Template; 2] = [t("spi", 0, 32, Integer), t("sequence", 32, 32, Integer)];
        const AH: [Template; 5] = [
            t("nexthdr", 0, 8, InetProto),
            t("hdrlength", 8, 8, Integer),
            t("reserved", 16, 16, Integer),
            t("spi", 32, 32, Integer),
            t("sequence", 64, 32, Integer),
        ];
        const COMP: [Template; 3] = [
            t("nexthdr", 0, 8, InetProto),
            t("flags", 8, 8, Integer),
            t("cpi", 16, 16, Integer),
        ];
        const ETHER: [Template; 3] = [
            t("daddr", 0, 48, EtherAddr),
            t("saddr", 48, 48, EtherAddr),
            t("type", 96, 16, EtherType),
        ];
        const ARP: [Template; 9] = [
            t("htype", 0, 16, Integer),
            t("ptype", 16, 16, EtherType),
            t("hlen", 32, 8, Integer),
            t("plen", 40, 8, Integer),
            t("operation", 48, 16, ArpOp),
            t("saddr ether", 64, 48, EtherAddr),
            t("saddr ip", 112, 32, IpAddr),
            t("daddr ether", 144, 48, EtherAddr),
            t("daddr ip", 192, 32, IpAddr),
        ];
        match self {
            Proto::Ip => &IP,
            Proto::Ip6 => &IP6,
            Proto::Tcp => &TCP,
            Proto::Udp => &UDP,
            Proto::Udplite => &UDPLITE,
            Proto::Sctp => &SCTP,
            Proto::Dccp => &PORTS,
            Proto::Icmp => &ICMP,
            Proto::Icmp6 => &ICMP6,
            Proto::Igmp => &IGMP,
            Proto::Esp => &ESP,
            Proto::Ah => &AH,
            Proto::Comp => &COMP,
            Proto::Ether => &ETHER,
            Proto::Arp => &ARP,
            Proto::Inet | Proto::Netdev => &[],
        }
    }

    /// The field that names the next header's protocol.
    pub fn protocol_key(self) -> Option<&'static str> {
        match self {
            Proto::Ip => Some("protocol"),
            Proto::Ip6 | Proto::Ah | Proto::Comp => Some("nexthdr"),
            Proto::Ether => Some("type"),
            Proto::Icmp | Proto::Icmp6 => Some("type"),
            _ => None,
        }
    }

    /// The protocol of the next header, given the key's value.
    pub fn upper(self, value: u32) -> Option<Proto> {
        match self {
            Proto::Inet => match value {
                2 => Some(Proto::Ip),
                10 => Some(Proto::Ip6),
                _ => None,
            },
            Proto::Netdev | Proto::Ether => match value {
                0x0800 => Some(Proto::Ip),
                0x0806 => Some(Proto::Arp),
                0x86dd => Some(Proto::Ip6),
                _ => None,
            },
            Proto::Ip | Proto::Ip6 | Proto::Ah | Proto::Comp => transport(value),
            _ => None,
        }
    }
}

/// A transport protocol by IP protocol number (`meta l4proto`).
pub fn transport(number: u32) -> Option<Proto> {
    Some(match number {
        1 => Proto::Icmp,
        2 => Proto::Igmp,
        6 => Proto::Tcp,
        17 => Proto::Udp,
        33 => Proto::Dccp,
        50 => Proto::Esp,
        51 => Proto::Ah,
        58 => Proto::Icmp6,
        108 => Proto::Comp,
        132 => Proto::Sctp,
        136 => Proto::Udplite,
        _ => return None,
    })
}

/// A meta key: its name, type, register length in bytes, and whether nft
/// prints it without `meta ` (`iifname`).
pub fn meta_key(key: u32) -> Option<(&'static str, Ty, u32, bool)> {
    use Ty::*;
    Some(match key {
        0 => ("length", HostInteger, 4, false),
        1 => ("protocol", EtherType, 2, false),
        2 => ("priority", ClassId, 4, false),
        3 => ("mark", Mark, 4, false),
        4 => ("iif", IfIndex, 4, true),
        5 => ("oif", IfIndex, 4, true),
        6 => ("iifname", IfName, 16, true),
        7 => ("oifname", IfName, 16, true),
        8 => ("iiftype", IfType, 2, false),
        9 => ("oiftype", IfType, 2, false),
        10 => ("skuid", HostInteger, 4, false),
        11 => ("skgid", HostInteger, 4, false),
        12 => ("nftrace", HostInteger, 1, false),
        13 => ("rtclassid", HostInteger, 4, false),
        14 => ("secmark", HostInteger, 4, false),
        15 => ("nfproto", NfProto, 1, false),
        16 => ("l4proto", InetProto, 1, false),
        17 => ("ibrname", IfName, 16, false),
        18 => ("obrname", IfName, 16, false),
        19 => ("pkttype", PktType, 1, false),
        20 => ("cpu", HostInteger, 4, false),
        21 => ("iifgroup", DevGroup, 4, true),
        22 => ("oifgroup", DevGroup, 4, true),
        23 => ("cgroup", HostInteger, 4, false),
        24 => ("random", Integer, 4, false),
        25 => ("ipsec", Boolean, 1, false),
        26 => ("iifkind", IfName, 16, false),
        27 => ("oifkind", IfName, 16, false),
        28 => ("ibrpvid", HostInteger, 2, false),
        29 => ("ibrvproto", EtherType, 2, false),
        33 => ("sdif", IfIndex, 4, false),
        34 => ("sdifname", IfName, 16, false),
        _ => return None,
    })
}

/// A ct key: name, type, register length in bytes.
pub fn ct_key(key: u32) -> Option<(&'static str, Ty, u32)> {
    use Ty::*;
    Some(match key {
        0 => ("state", CtState, 4),
        1 => ("direction", CtDir, 1),
        2 => ("status", CtStatus, 4),
        3 => ("mark", Mark, 4),
        4 => ("secmark", HostInteger, 4),
        5 => ("expiration", HostInteger, 4),
        7 => ("l3proto", NfProto, 1),
        8 => ("saddr", IpAddr, 4),
        9 => ("daddr", IpAddr, 4),
        10 => ("protocol", InetProto, 1),
        11 => ("proto-src", InetService, 2),
        12 => ("proto-dst", InetService, 2),
        14 => ("packets", HostInteger, 8),
        15 => ("bytes", HostInteger, 8),
        16 => ("avgpkt", HostInteger, 8),
        17 => ("zone", HostInteger, 2),
        19 => ("ip saddr", IpAddr, 4),
        20 => ("ip daddr", IpAddr, 4),
        21 => ("ip6 saddr", Ip6Addr, 16),
        22 => ("ip6 daddr", Ip6Addr, 16),
        23 => ("id", Integer, 4),
        _ => return None,
    })
}
