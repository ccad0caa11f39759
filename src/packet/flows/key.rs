//! A flow's key: its two endpoints and protocol, the same either way, and
//! the endpoints as text.

use crate::packet::decode::{L3, Summary};

/// Direction-independent flow key: the lower endpoint first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub proto: u8,
    pub v6: bool,
    pub a: [u8; 16],
    pub a_port: u16,
    pub b: [u8; 16],
    pub b_port: u16,
}

impl FlowKey {
    /// The key and whether the packet goes from b to a.
    pub fn of(s: &Summary) -> Option<(Self, bool)> {
        if !s.is_ip() {
            return None;
        }
        let (ports_known, sp, dp) = match s.proto {
            6 | 17 | 132 | 33 => (true, s.sport, s.dport),
            _ => (false, 0, 0),
        };
        let _ = ports_known;
        let forward = (s.src, sp) <= (s.dst, dp);
        let (a, a_port, b, b_port) = if forward {
            (s.src, sp, s.dst, dp)
        } else {
            (s.dst, dp, s.src, sp)
        };
        Some((
            Self {
                proto: s.proto,
                v6: s.l3 == L3::V6,
                a,
                a_port,
                b,
                b_port,
            },
            !forward,
        ))
    }
}

impl FlowKey {
    /// The key of a tcp or udp flow from what a sample shows of it
    /// ("tcp", "198.18.0.1:40000", "[2001:db8::1]:80"); None for others.
    pub fn from_endpoints(proto: &str, src: &str, dst: &str) -> Option<Self> {
        let proto = match proto {
            "tcp" => 6,
            "udp" => 17,
            _ => return None,
        };
        let src: std::net::SocketAddr = src.parse().ok()?;
        let dst: std::net::SocketAddr = dst.parse().ok()?;
        let bytes = |a: std::net::IpAddr| match a {
            std::net::IpAddr::V4(v4) => {
                let mut out = [0u8; 16];
                out[..4].copy_from_slice(&v4.octets());
                out
            }
            std::net::IpAddr::V6(v6) => v6.octets(),
        };
        let v6 = src.is_ipv6();
        if dst.is_ipv6() != v6 {
            return None;
        }
        let (x, y) = ((bytes(src.ip()), src.port()), (bytes(dst.ip()), dst.port()));
        let ((a, a_port), (b, b_port)) = if x <= y { (x, y) } else { (y, x) };
        Some(Self {
            proto,
            v6,
            a,
            a_port,
            b,
            b_port,
        })
    }
}

pub fn proto_name(proto: u8, v6: bool) -> String {
    match proto {
        6 => "tcp".into(),
        17 => "udp".into(),
        1 => "icmp".into(),
        58 => "icmp6".into(),
        132 => "sctp".into(),
        p => format!("{}-{p}", if v6 { "ip6" } else { "ip" }),
    }
}

pub(super) fn endpoint(addr: &[u8; 16], port: u16, v6: bool, proto: u8) -> String {
    let ip = if v6 {
        std::net::IpAddr::V6(std::net::Ipv6Addr::from(*addr))
    } else {
        std::net::IpAddr::V4(std::net::Ipv4Addr::new(addr[0], addr[1], addr[2], addr[3]))
    };
    let has_port = matches!(proto, 6 | 17 | 132 | 33);
    match (v6, has_port) {
        (true, true) => format!("[{ip}]:{port}"),
        (false, true) => format!("{ip}:{port}"),
        _ => ip.to_string(),
    }
}
