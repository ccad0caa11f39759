//! A rule's line as iptables-legacy-save (1.8.9) prints it: print_rule4 /
//! print_rule6 of iptables/iptables.c and ip6tables.c, with
//! save_ipv4_addr, save_ipv6_addr, save_iface and save_rule_details of
//! iptables/xshared.c.

use std::collections::HashMap;
use std::fmt::Write;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use crate::model::firewall::Verdict;
use crate::text::escape_control;

use super::blob::{Entry, Family, Table, u16_at};
use super::{matches, targets};

/// The rule's text ("-A CHAIN ...", `chain` already escaped) and verdict.
pub(super) fn rule(family: Family, table: &Table, chain: &str, entry: &Entry) -> (String, Verdict) {
    let mut out = format!("-A {chain}");
    match family {
        Family::V4 => ip4(entry.ip, &mut out),
        Family::V6 => ip6(entry.ip, &mut out),
    }
    for m in &entry.matches {
        matches::save(family, m, &mut out);
    }
    let verdict = target(family, table, entry, &mut out);
    (out, verdict)
}

/// The name iptables gives a standard verdict, and what it does.
pub(super) fn standard_verdict(verdict: Option<i32>) -> (Option<&'static str>, Verdict) {
    match verdict {
        // -NF_DROP-1, -NF_ACCEPT-1, -NF_QUEUE-1, XT_RETURN (-NF_REPEAT-1).
        Some(-1) => (Some("DROP"), Verdict::Drop),
        Some(-2) => (Some("ACCEPT"), Verdict::Accept),
        Some(-4) => (Some("QUEUE"), Verdict::Other),
        Some(-5) => (Some("RETURN"), Verdict::Return),
        _ => (None, Verdict::Other),
    }
}

fn target(family: Family, table: &Table, entry: &Entry, out: &mut String) -> Verdict {
    let t = &entry.target;
    if !t.name.is_empty() {
        out.push_str(" -j ");
        out.push_str(&escape_control(&t.name));
        targets::save(family, t, out);
        return match t.name.as_str() {
            "REJECT" => Verdict::Reject,
            _ => Verdict::Other,
        };
    }
    let goto = family.is_goto(entry.ip);
    let flag = if goto { " -g " } else { " -j " };
    let Some(verdict) = t.verdict() else {
        return Verdict::Other;
    };
    let Ok(offset) = usize::try_from(verdict) else {
        let (label, verdict) = standard_verdict(Some(verdict));
        if let Some(label) = label {
            out.push_str(flag);
            out.push_str(label);
        }
        return verdict;
    };
    if offset == entry.next {
        // A rule without a target: it falls through to the next one.
        return Verdict::Other;
    }
    let Some(chain) = table.jump_target(offset) else {
        return Verdict::Other;
    };
    out.push_str(flag);
    out.push_str(chain);
    if goto {
        Verdict::Goto(chain.to_string())
    } else {
        Verdict::Jump(chain.to_string())
    }
}

/// struct ipt_ip: -s, -d, -i, -o, -p, -f.
fn ip4(ip: &[u8], out: &mut String) {
    let addr = |at: usize| -> [u8; 4] {
        ip.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .unwrap_or_default()
    };
    let inv = ip.get(83).copied().unwrap_or(0);
    ipv4_addr(out, 's', addr(0), addr(8), inv & 0x08 != 0);
    ipv4_addr(out, 'd', addr(4), addr(12), inv & 0x10 != 0);
    details(out, ip, 16, 48, u16_at(ip, 80).unwrap_or(0), inv);
    if ip.get(82).is_some_and(|flags| flags & 0x01 != 0) {
        if inv & 0x20 != 0 {
            out.push_str(" !");
        }
        out.push_str(" -f");
    }
}

/// struct ip6t_ip6: -s, -d, -i, -o, -p (and the TOS no iptables sets).
fn ip6(ip: &[u8], out: &mut String) {
    let addr = |at: usize| -> [u8; 16] {
        ip.get(at..at + 16)
            .and_then(|b| b.try_into().ok())
            .unwrap_or_default()
    };
    let inv = ip.get(132).copied().unwrap_or(0);
    ipv6_addr(out, 's', addr(0), addr(32), inv & 0x08 != 0);
    ipv6_addr(out, 'd', addr(16), addr(48), inv & 0x10 != 0);
    details(out, ip, 64, 96, u16_at(ip, 128).unwrap_or(0), inv);
    if ip.get(131).is_some_and(|flags| flags & 0x02 != 0) {
        let tos = ip.get(130).copied().unwrap_or(0);
        let bang = if inv & 0x04 != 0 { " !" } else { "" };
        let _ = write!(out, "{bang} -? {tos}");
    }
}

fn ipv4_addr(out: &mut String, letter: char, addr: [u8; 4], mask: [u8; 4], invert: bool) {
    if addr == [0; 4] && mask == [0; 4] && !invert {
        return;
    }
    let bang = if invert { " !" } else { "" };
    let _ = write!(out, "{bang} -{letter} {}/", Ipv4Addr::from(addr));
    match v4_prefix(mask) {
        Some(bits) => {
            let _ = write!(out, "{bits}");
        }
        None => {
            let _ = write!(out, "{}", Ipv4Addr::from(mask));
        }
    }
}

fn ipv6_addr(out: &mut String, letter: char, addr: [u8; 16], mask: [u8; 16], invert: bool) {
    let bits = v6_prefix(mask);
    if !invert && bits == Some(0) {
        return;
    }
    let bang = if invert { " !" } else { "" };
    let _ = write!(out, "{bang} -{letter} {}/", ipv6_text(addr));
    match bits {
        Some(bits) => {
            let _ = write!(out, "{bits}");
        }
        None => out.push_str(&ipv6_text(mask)),
    }
}

/// The prefix length of a contiguous mask (network order).
pub(super) fn v4_prefix(mask: [u8; 4]) -> Option<u32> {
    let mask = u32::from_be_bytes(mask);
    (mask.leading_ones() + mask.trailing_zeros() == 32).then_some(mask.leading_ones())
}

pub(super) fn v6_prefix(mask: [u8; 16]) -> Option<u32> {
    let mask = u128::from_be_bytes(mask);
    (mask.leading_ones() + mask.trailing_zeros() == 128).then_some(mask.leading_ones())
}

/// An IPv6 address as glibc's inet_ntop writes it, which differs from
/// Rust's Display for the IPv4-compatible ::a.b.c.d.
pub(super) fn ipv6_text(addr: [u8; 16]) -> String {
    let ip = Ipv6Addr::from(addr);
    let s = ip.segments();
    if s[..6] == [0; 6] && s[6] != 0 {
        let [.., a, b, c, d] = addr;
        return format!("::{a}.{b}.{c}.{d}");
    }
    ip.to_string()
}

/// -i, -o (save_iface: the name up to its mask, `+` when the mask ends
/// before the name does), then -p.
fn details(out: &mut String, ip: &[u8], ifaces_at: usize, masks_at: usize, proto: u16, inv: u8) {
    for (i, (letter, invert)) in [('i', inv & 0x01 != 0), ('o', inv & 0x02 != 0)]
        .into_iter()
        .enumerate()
    {
        let name = ip.get(ifaces_at + 16 * i..ifaces_at + 16 * (i + 1));
        let mask = ip.get(masks_at + 16 * i..masks_at + 16 * (i + 1));
        let (Some(name), Some(mask)) = (name, mask) else {
            continue;
        };
        if mask.first() == Some(&0) {
            continue;
        }
        let mut text = Vec::new();
        for (at, (&c, &m)) in name.iter().zip(mask).enumerate() {
            if m != 0 {
                if c != 0 {
                    text.push(c);
                }
            } else {
                if at > 0 && name.get(at - 1) != Some(&0) {
                    text.push(b'+');
                }
                break;
            }
        }
        let bang = if invert { " !" } else { "" };
        let text = String::from_utf8_lossy(&text);
        let _ = write!(out, "{bang} -{letter} {}", escape_control(&text));
    }
    if proto > 0 {
        if inv & 0x40 != 0 {
            out.push_str(" !");
        }
        match proto_name(proto) {
            Some(name) => {
                let _ = write!(out, " -p {name}");
            }
            None => {
                let _ = write!(out, " -p {proto}");
            }
        }
    }
}

/// xtables_chain_protos first, then /etc/protocols (getprotobynumber).
fn proto_name(proto: u16) -> Option<&'static str> {
    const CHAIN_PROTOS: [(&str, u16); 9] = [
        ("tcp", 6),
        ("sctp", 132),
        ("udp", 17),
        ("udplite", 136),
        ("icmp", 1),
        ("ipv6-icmp", 58),
        ("esp", 50),
        ("ah", 51),
        ("mobility-header", 135),
    ];
    static PROTOCOLS: OnceLock<HashMap<u16, String>> = OnceLock::new();
    if let Some((name, _)) = CHAIN_PROTOS.iter().find(|(_, n)| *n == proto) {
        return Some(name);
    }
    PROTOCOLS
        .get_or_init(|| {
            etc_protocols(&std::fs::read_to_string("/etc/protocols").unwrap_or_default())
        })
        .get(&proto)
        .map(String::as_str)
}

/// Number to name of /etc/protocols; the first line of a number wins, as
/// in getprotobynumber.
pub(super) fn etc_protocols(text: &str) -> HashMap<u16, String> {
    let mut names = HashMap::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        let mut words = line.split_whitespace();
        if let (Some(name), Some(Ok(number))) = (words.next(), words.next().map(str::parse)) {
            names
                .entry(number)
                .or_insert_with(|| escape_control(name).into_owned());
        }
    }
    names
}

/// xtables_save_string: a word as is, anything else in double quotes
/// with `"`, `\` and `'` backslashed; control characters escaped.
pub(super) fn push_quoted(out: &mut String, value: &str) {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let text = if !value.is_empty() && value.chars().all(plain) {
        value.to_string()
    } else {
        let mut quoted = String::from("\"");
        for c in value.chars() {
            if matches!(c, '"' | '\\' | '\'') {
                quoted.push('\\');
            }
            quoted.push(c);
        }
        quoted.push('"');
        quoted
    };
    out.push(' ');
    out.push_str(&escape_control(&text));
}
