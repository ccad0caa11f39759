//! The row filter language of the Sockets, Flows, Processes, Interfaces and
//! Conntrack tabs' `/` and of `snapshot --where` (the capture's pcap-filter
//! is `packet::filter`, a different language for packets).
//!
//! An expression is terms joined by `and` (also implied between adjacent
//! terms), `or`, `!`/`not` and parentheses. A term is a field (`port:443`,
//! `proc:nginx`, `net:198.18.0.0/15`...; `FIELDS` lists them) or a bare
//! word, which matches any text the row shows, as the tabs' filters always
//! did (case-insensitive substring). Rows answer through `FilterFields`;
//! `rows` implements it for sockets, flows, processes, interfaces,
//! conntrack entries and closed connections.

mod eval;
pub mod fields;
mod parse;
pub mod rows;
#[cfg(test)]
mod tests;

use crate::model::Sample;
use std::collections::HashMap;
use std::net::IpAddr;

pub use fields::{EXAMPLES, FIELDS, MAX_DEPTH, MAX_LEN, MAX_TERMS, STATES};

/// Reverse names known for addresses (canonical: an IPv4-mapped address
/// as its IPv4 one), while names are on (N, --resolve): `host:NAME`
/// matches a row whose end has NAME.
pub type KnownNames = HashMap<IpAddr, String>;

/// A parse error and the character (from 0) it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub position: usize,
    pub message: String,
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As the capture filter's errors (packet::filter::FilterError).
        write!(
            f,
            "filter error at character {}: {}",
            self.position + 1,
            self.message
        )
    }
}

impl std::error::Error for FilterError {}

impl FilterError {
    /// The expression and, under it, a caret at the bad character: two
    /// lines, each after `indent` spaces.
    pub fn caret(&self, expression: &str, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let under = " ".repeat(self.position.min(expression.chars().count()));
        format!("{pad}{expression}\n{pad}{under}^")
    }
}

/// Which end of a row a term asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The source: a socket's local end, a flow's initiator, conntrack's
    /// original source (and its reply destination, after SNAT).
    Src,
    /// The destination: a socket's peer, a flow's responder.
    Dst,
}

/// One end of a row: an address and, for TCP/UDP, a port (a per-port
/// group of flows has only the port).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    pub ip: Option<IpAddr>,
    pub port: Option<u16>,
}

/// What a row offers the filter. A field a row has no value for matches
/// nothing (so `!pid:1` keeps every row without a process).
pub trait FilterFields {
    /// The row's text as shown (any case): what a bare word searches.
    fn shown_text(&self) -> String;
    /// "tcp", "udp", "icmp"...
    fn proto(&self) -> Option<&str> {
        None
    }
    /// The row's ends on `side`. A row with no direction (an interface)
    /// gives its addresses on both sides.
    fn ends(&self, _side: Side) -> Vec<End> {
        Vec::new()
    }
    /// State names as the row shows them ("ESTAB", "ESTABLISHED",
    /// "TIME_WAIT"); a process gives those of its sockets.
    fn states(&self) -> Vec<&str> {
        Vec::new()
    }
    /// The processes holding the row: (name, pid).
    fn processes(&self) -> Vec<(&str, u32)> {
        Vec::new()
    }
    fn uid(&self) -> Option<u32> {
        None
    }
    /// The uid's user name, where known.
    fn user(&self) -> Option<&str> {
        None
    }
    /// The network namespace's label.
    fn netns(&self) -> Option<&str> {
        None
    }
    /// The container (or cgroup) of the row's process.
    fn container(&self) -> Option<&str> {
        None
    }
    /// Names known for the row's ends (reverse DNS, SNI): `host:NAME`
    /// matches them.
    fn host_names(&self) -> Vec<&str> {
        Vec::new()
    }
    /// The TLS/QUIC server name the row's traffic carried.
    fn sni(&self) -> Option<&str> {
        None
    }
}

/// A number or an inclusive range of them (`443`, `>1024`, `8000-8100`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    lo: u32,
    hi: u32,
}

/// An address, a network, or an endpoint with its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AddrMatch {
    ip: IpAddr,
    prefix: u8,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq)]
enum Term {
    /// Lower-cased; a substring of the shown text.
    Word(String),
    /// None: either end.
    Port(Option<Side>, Range),
    Addr(Option<Side>, AddrMatch),
    HostName(String),
    Proto(String),
    /// Canonical state names (as `rows` normalises a row's).
    State(&'static [&'static str]),
    Proc(String),
    Pid(Range),
    Uid(Range),
    User(String),
    Netns(String),
    /// The namespace's whole label (a scope, not typed: `Expr::netns_is`).
    NetnsIs(String),
    Container(String),
    Sni(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    Term(Term),
}

/// A parsed expression; the empty one matches every row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expr {
    root: Option<Node>,
}

impl Expr {
    pub fn parse(text: &str) -> Result<Self, FilterError> {
        let length = text.chars().count();
        if length > MAX_LEN {
            return Err(FilterError {
                position: MAX_LEN,
                message: format!(
                    "the expression is {length} characters long, over the limit of {MAX_LEN}"
                ),
            });
        }
        Ok(Self {
            root: parse::parse(text)?,
        })
    }

    /// Rows of the namespace labelled `label` only: `ns:`'s field, matched
    /// whole rather than as a substring ("web-1" is not "web-10"). Enter in
    /// the Namespaces tab scopes every tab with it.
    pub fn netns_is(label: &str) -> Self {
        Self {
            root: Some(Node::Term(Term::NetnsIs(label.to_lowercase()))),
        }
    }

    /// Rows matching both.
    pub fn and(self, other: Expr) -> Self {
        let root = match (self.root, other.root) {
            (Some(a), Some(b)) => Some(Node::And(vec![a, b])),
            (a, b) => a.or(b),
        };
        Self { root }
    }

    pub fn matches(&self, row: &impl FilterFields) -> bool {
        self.root
            .as_ref()
            .is_none_or(|node| eval::matches(node, row, &mut None))
    }
}

/// `snapshot --where`'s expression with the reverse names --resolve found
/// for the sample's addresses (so `host:NAME` matches them as in the live
/// view with N on).
#[derive(Debug, Clone, Copy)]
pub struct Where<'a> {
    pub expr: &'a Expr,
    pub names: Option<&'a KnownNames>,
}

impl<'a> Where<'a> {
    pub fn new(expr: &'a Expr) -> Self {
        Self { expr, names: None }
    }

    /// Whether the expression keeps `row` of `sample`.
    pub fn keeps<'b, T>(&self, row: &'b T, sample: &'b Sample) -> bool
    where
        'a: 'b,
        rows::InSample<'b, T>: FilterFields,
    {
        let row = rows::InSample::new(row, sample).with_names(self.names);
        self.expr.matches(&row)
    }
}

/// The field names, for messages.
fn field_names() -> String {
    FIELDS
        .iter()
        .map(|(name, _, _)| *name)
        .collect::<Vec<_>>()
        .join(" ")
}
