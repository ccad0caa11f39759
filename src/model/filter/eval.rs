//! Whether a row matches a parsed expression.

use super::rows::normal_state;
use super::{AddrMatch, End, FilterFields, Node, Range, Side, Term};
use std::net::IpAddr;

/// `text` is the row's lower-cased shown text, made on the first bare word
/// (most expressions of fields never need it).
pub fn matches(node: &Node, row: &impl FilterFields, text: &mut Option<String>) -> bool {
    match node {
        Node::And(parts) => parts.iter().all(|p| matches(p, row, text)),
        Node::Or(parts) => parts.iter().any(|p| matches(p, row, text)),
        Node::Not(inner) => !matches(inner, row, text),
        Node::Term(term) => term_matches(term, row, text),
    }
}

fn term_matches(term: &Term, row: &impl FilterFields, text: &mut Option<String>) -> bool {
    let contains = |value: Option<&str>, needle: &str| {
        value.is_some_and(|v| v.to_lowercase().contains(needle))
    };
    match term {
        Term::Word(word) => text
            .get_or_insert_with(|| row.shown_text().to_lowercase())
            .contains(word.as_str()),
        Term::Port(side, range) => ends(row, *side).iter().any(|end| {
            end.port
                .is_some_and(|port| in_range(*range, u32::from(port)))
        }),
        Term::Addr(side, addr) => ends(row, *side).iter().any(|end| addr_matches(addr, end)),
        Term::HostName(name) => row
            .host_names()
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name)),
        Term::Proto(proto) => row.proto().is_some_and(|p| {
            let p = p.to_ascii_lowercase();
            p == *proto || (p == "icmpv6" && proto == "icmp6")
        }),
        Term::State(wanted) => row
            .states()
            .iter()
            .any(|state| wanted.contains(&normal_state(state).as_str())),
        Term::Proc(name) => row
            .processes()
            .iter()
            .any(|(process, _)| process.to_lowercase().contains(name.as_str())),
        Term::Pid(range) => row
            .processes()
            .iter()
            .any(|(_, pid)| in_range(*range, *pid)),
        Term::Uid(range) => row.uid().is_some_and(|uid| in_range(*range, uid)),
        Term::User(name) => row.user().is_some_and(|user| user == name),
        Term::Netns(needle) => contains(row.netns(), needle),
        Term::NetnsIs(label) => row.netns().is_some_and(|v| v.to_lowercase() == *label),
        Term::Container(needle) => contains(row.container(), needle),
        Term::Sni(needle) => contains(row.sni(), needle),
    }
}

fn ends(row: &impl FilterFields, side: Option<Side>) -> Vec<End> {
    match side {
        Some(side) => row.ends(side),
        None => {
            let mut all = row.ends(Side::Src);
            all.extend(row.ends(Side::Dst));
            all
        }
    }
}

fn in_range(range: Range, value: u32) -> bool {
    (range.lo..=range.hi).contains(&value)
}

fn addr_matches(addr: &AddrMatch, end: &End) -> bool {
    addr.port.is_none_or(|port| end.port == Some(port))
        && end.ip.is_some_and(|ip| in_net(ip, addr.ip, addr.prefix))
}

/// Whether `ip` is in `net`/`prefix`; an IPv4-mapped IPv6 address (a
/// dual-stack socket's peer) counts as its IPv4 address.
fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip.to_canonical(), net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}
