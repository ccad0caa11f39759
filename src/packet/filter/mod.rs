//! pcap-filter expressions (the subset netlens documents), compiled to a
//! matcher that selects the packets libpcap's BPF would select.
//!
//! Supported: `[src|dst] host ADDR`, `[src|dst] net CIDR`, `[src|dst] port N`,
//! `[src|dst] portrange A-B` (each optionally after `tcp`/`udp`/`ip`/`ip6`),
//! `tcp udp icmp icmp6 arp ip ip6`, `less N`, `greater N`, comparisons of
//! arithmetic over `proto[off[:size]]`, `len` and named constants such as
//! `tcp[tcpflags] & (tcp-syn) != 0`, and `and or not ! && ||` with parentheses.
//! A bare value after `and`/`or` reuses the previous qualifiers, as in
//! `host a or b`.

mod eval;
mod parse;
#[cfg(test)]
mod tests;

use super::decode::Summary;
use std::net::IpAddr;

/// The longest expression netlens parses, in bytes. `and`/`or` chains
/// build a tree as deep as they are long, and matching walks it
/// recursively: the cap keeps that walk far from the end of the stack.
pub const MAX_FILTER_LEN: usize = 4096;
/// How deeply parentheses, `not`/`!` and unary minus may nest. libpcap's
/// parser fails cleanly on very deep input too; real filters nest a few
/// levels.
pub const MAX_FILTER_DEPTH: usize = 100;

/// A parse error with the character position it refers to: the row
/// filter's type, so both languages report errors the same way.
pub use crate::model::filter::FilterError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Any,
    Src,
    Dst,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proto {
    Any,
    Ip,
    Ip6,
    Tcp,
    Udp,
    Arp,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Host(Dir, Proto, IpAddr),
    Net(Dir, Proto, IpAddr, u8),
    Port(Dir, Proto, u16, u16),
    Ether(u16),
    IpProto(Option<bool>, u8),
    Less(u32),
    Greater(u32),
    Cmp(Arith, CmpOp, Arith),
    True,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Ether,
    Ip,
    Ip6,
    Tcp,
    Udp,
    Icmp,
    Icmp6,
    Arp,
}

#[derive(Debug, Clone, PartialEq)]
enum Arith {
    Num(u32),
    Len,
    Load(Layer, Box<Arith>, u8),
    /// An operator by its first character ('<' is <<, '>' is >>).
    Bin(char, Box<Arith>, Box<Arith>),
    Neg(Box<Arith>),
}

/// A compiled filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    root: Node,
    text: String,
}

impl Filter {
    /// Parses an expression; an empty one matches everything.
    pub fn parse(text: &str) -> Result<Self, FilterError> {
        if text.len() > MAX_FILTER_LEN {
            return parse::err(
                MAX_FILTER_LEN,
                format!(
                    "the expression is {} bytes long, over the limit of {MAX_FILTER_LEN}",
                    text.len()
                ),
            );
        }
        let root = parse::root(text)?;
        Ok(Self {
            root,
            text: text.trim().to_string(),
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the packet passes. `data` is the captured bytes (for
    /// `proto[...]` loads); `s` is its summary.
    pub fn matches(&self, s: &Summary, data: &[u8]) -> bool {
        eval::eval(&self.root, s, data).unwrap_or(false)
    }
}
