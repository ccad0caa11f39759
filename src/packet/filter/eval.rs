//! Matching a packet against the tree, as libpcap's BPF program would.

use super::*;

pub(super) fn prefix_match(a: &[u8], net: &[u8], bits: u8) -> bool {
    let full = usize::from(bits / 8);
    if a[..full] != net[..full] {
        return false;
    }
    let rest = bits % 8;
    rest == 0 || (a[full] ^ net[full]) & (0xffu8 << (8 - rest)) == 0
}

/// A load past the captured bytes: BPF ends the program there and rejects
/// the packet, whatever `or` or `not` would have made of the rest.
pub(super) struct Abort;

pub(super) type Eval<T> = Result<T, Abort>;

pub(super) fn byte(data: &[u8], at: usize) -> Eval<u8> {
    data.get(at).copied().ok_or(Abort)
}

pub(super) fn slice(data: &[u8], at: usize, len: usize) -> Eval<&[u8]> {
    data.get(at..at.checked_add(len).ok_or(Abort)?).ok_or(Abort)
}

pub(super) fn be16_at(data: &[u8], at: usize) -> Eval<u16> {
    let b = slice(data, at, 2)?;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

/// Evaluates left to right with short circuits, loading packet bytes in
/// the order libpcap's (unoptimized) program does.
pub(super) fn eval(node: &Node, s: &Summary, data: &[u8]) -> Eval<bool> {
    Ok(match node {
        Node::True => true,
        Node::And(a, b) => eval(a, s, data)? && eval(b, s, data)?,
        Node::Or(a, b) => eval(a, s, data)? || eval(b, s, data)?,
        Node::Not(a) => !eval(a, s, data)?,
        Node::Ether(t) => s.ethertype == *t,
        Node::IpProto(v6, p) => ip_proto(s, data, *v6, *p)?,
        Node::Less(n) => s.wire_len <= *n,
        Node::Greater(n) => s.wire_len >= *n,
        Node::Host(dir, proto, addr) => {
            addr_match(s, data, *dir, *proto, addr.is_ipv6(), |a| match addr {
                IpAddr::V4(v) => a.len() == 4 && a == v.octets(),
                IpAddr::V6(v) => a.len() == 16 && a == v.octets(),
            })?
        }
        Node::Net(dir, proto, addr, bits) => {
            addr_match(s, data, *dir, *proto, addr.is_ipv6(), |a| match addr {
                IpAddr::V4(v) => a.len() == 4 && prefix_match(a, &v.octets(), *bits),
                IpAddr::V6(v) => a.len() == 16 && prefix_match(a, &v.octets(), *bits),
            })?
        }
        Node::Port(dir, proto, lo, hi) => port_match(s, data, *dir, *proto, *lo, *hi)?,
        Node::Cmp(l, op, r) => {
            let (Some(a), Some(b)) = (arith(l, s, data)?, arith(r, s, data)?) else {
                return Ok(false);
            };
            match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                CmpOp::Ge => a >= b,
            }
        }
    })
}

/// `ip proto P` / `ip6 proto P` as libpcap compiles them: IPv6 also
/// matches P after one fragment header.
pub(super) fn ip_proto(s: &Summary, data: &[u8], v6: Option<bool>, p: u8) -> Eval<bool> {
    let v4 = || Ok(s.ethertype == 0x0800 && byte(data, s.nl + 9)? == p);
    let v6m = || {
        if s.ethertype != 0x86dd {
            return Ok(false);
        }
        let next = byte(data, s.nl + 6)?;
        Ok(next == p || (next == 44 && byte(data, s.nl + 40)? == p))
    };
    match v6 {
        None => Ok(v4()? || v6m()?),
        Some(false) => v4(),
        Some(true) => v6m(),
    }
}

pub(super) fn addr_match(
    s: &Summary,
    data: &[u8],
    dir: Dir,
    proto: Proto,
    v6: bool,
    hit: impl Fn(&[u8]) -> bool,
) -> Eval<bool> {
    // Where the source and destination addresses are, and how long; an
    // address of one family looks only at packets of that family.
    let (src, dst, len) = match s.ethertype {
        0x0800 if !v6 && matches!(proto, Proto::Any | Proto::Ip | Proto::Tcp | Proto::Udp) => {
            (s.nl + 12, s.nl + 16, 4)
        }
        0x86dd if v6 && matches!(proto, Proto::Any | Proto::Ip6 | Proto::Tcp | Proto::Udp) => {
            (s.nl + 8, s.nl + 24, 16)
        }
        0x0806 | 0x8035 if !v6 && matches!(proto, Proto::Any | Proto::Arp) => {
            (s.nl + 14, s.nl + 24, 4)
        }
        _ => return Ok(false),
    };
    if matches!(proto, Proto::Tcp | Proto::Udp) {
        return Ok(false);
    }
    let at = |start: usize| Ok::<_, Abort>(hit(slice(data, start, len)?));
    Ok(match dir {
        Dir::Any => at(src)? || at(dst)?,
        Dir::Src => at(src)?,
        Dir::Dst => at(dst)?,
    })
}

pub(super) fn port_match(
    s: &Summary,
    data: &[u8],
    dir: Dir,
    proto: Proto,
    lo: u16,
    hi: u16,
) -> Eval<bool> {
    let allowed: &[u8] = match proto {
        Proto::Tcp => &[6],
        Proto::Udp => &[17],
        Proto::Any | Proto::Ip | Proto::Ip6 => &[6, 17, 132],
        Proto::Arp => return Ok(false),
    };
    let transport = match s.ethertype {
        0x0800 if proto != Proto::Ip6 => {
            if !allowed.contains(&byte(data, s.nl + 9)?) || be16_at(data, s.nl + 6)? & 0x1fff != 0 {
                return Ok(false);
            }
            s.nl + usize::from(byte(data, s.nl)? & 0x0f) * 4
        }
        0x86dd if proto != Proto::Ip => {
            if !allowed.contains(&byte(data, s.nl + 6)?) {
                return Ok(false);
            }
            s.nl + 40
        }
        _ => return Ok(false),
    };
    let in_range = |at: usize| Ok::<_, Abort>((lo..=hi).contains(&be16_at(data, at)?));
    Ok(match dir {
        Dir::Any => in_range(transport)? || in_range(transport + 2)?,
        Dir::Src => in_range(transport)?,
        Dir::Dst => in_range(transport + 2)?,
    })
}

/// A value, or None when the packet is not of the protocol a load names
/// (the comparison is then false, as in BPF).
pub(super) fn arith(a: &Arith, s: &Summary, data: &[u8]) -> Eval<Option<u32>> {
    let value = |x: &Arith| arith(x, s, data);
    Ok(Some(match a {
        Arith::Num(n) => *n,
        Arith::Len => s.wire_len,
        Arith::Neg(x) => match value(x)? {
            Some(x) => x.wrapping_neg(),
            None => return Ok(None),
        },
        Arith::Bin(op, x, y) => {
            let (Some(x), Some(y)) = (value(x)?, value(y)?) else {
                return Ok(None);
            };
            match op {
                '+' => x.wrapping_add(y),
                '-' => x.wrapping_sub(y),
                '*' => x.wrapping_mul(y),
                // BPF rejects the packet on a division by zero.
                '/' => x.checked_div(y).ok_or(Abort)?,
                '%' => x.checked_rem(y).ok_or(Abort)?,
                '&' => x & y,
                '|' => x | y,
                '^' => x ^ y,
                '<' => x.checked_shl(y).unwrap_or(0),
                '>' => x.checked_shr(y).unwrap_or(0),
                _ => return Ok(None),
            }
        }
        Arith::Load(layer, off, size) => {
            let Some(base) = layer_base(*layer, s, data)? else {
                return Ok(None);
            };
            let Some(off) = value(off)? else {
                return Ok(None);
            };
            let at = base.checked_add(off as usize).ok_or(Abort)?;
            let b = slice(data, at, usize::from(*size))?;
            match size {
                1 => u32::from(b[0]),
                2 => u32::from(u16::from_be_bytes([b[0], b[1]])),
                _ => u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            }
        }
    }))
}

/// Where a `proto[...]` load counts from, or None when the packet is not
/// of that protocol (the comparison is then false, as in BPF).
pub(super) fn layer_base(layer: Layer, s: &Summary, data: &[u8]) -> Eval<Option<usize>> {
    let nl = s.nl;
    Ok(match layer {
        Layer::Ether => Some(0),
        Layer::Ip => (s.ethertype == 0x0800).then_some(nl),
        Layer::Ip6 => (s.ethertype == 0x86dd).then_some(nl),
        Layer::Arp => matches!(s.ethertype, 0x0806 | 0x8035).then_some(nl),
        // libpcap: IPv6 with ICMPv6 as the first next header only.
        Layer::Icmp6 => (s.ethertype == 0x86dd && byte(data, nl + 6)? == 58).then_some(nl + 40),
        Layer::Tcp | Layer::Udp | Layer::Icmp => {
            // libpcap's tcp[], udp[] and icmp[] are IPv4 only: it checks
            // the ethertype first, then the protocol and the fragment
            // offset, and counts from the IPv4 header length.
            if s.ethertype != 0x0800 {
                return Ok(None);
            }
            let p = match layer {
                Layer::Tcp => 6,
                Layer::Udp => 17,
                _ => 1,
            };
            if byte(data, nl + 9)? != p || be16_at(data, nl + 6)? & 0x1fff != 0 {
                return Ok(None);
            }
            Some(nl + usize::from(byte(data, nl)? & 0x0f) * 4)
        }
    })
}
