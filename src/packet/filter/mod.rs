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

/// A parse error with the character position it refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub position: usize,
    pub message: String,
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "filter error at character {}: {}",
            self.position + 1,
            self.message
        )
    }
}

impl std::error::Error for FilterError {}

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
            return err(
                MAX_FILTER_LEN,
                format!(
                    "the expression is {} bytes long, over the limit of {MAX_FILTER_LEN}",
                    text.len()
                ),
            );
        }
        let tokens = lex(text)?;
        let mut parser = Parser {
            tokens,
            at: 0,
            end: text.len(),
            last: None,
            depth: 0,
        };
        let root = if parser.tokens.is_empty() {
            Node::True
        } else {
            let node = parser.expression()?;
            if let Some(tok) = parser.tokens.get(parser.at) {
                return Err(FilterError {
                    position: tok.pos,
                    message: format!("unexpected '{}'", tok.text),
                });
            }
            node
        };
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
        eval(&self.root, s, data).unwrap_or(false)
    }
}

#[derive(Debug, Clone)]
struct Tok {
    text: String,
    pos: usize,
}

fn lex(text: &str) -> Result<Vec<Tok>, FilterError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let two = text.get(i..i + 2).unwrap_or("");
        if ["&&", "||", "!=", "<=", ">=", "<<", ">>", "=="].contains(&two) {
            out.push(Tok {
                text: two.to_string(),
                pos: start,
            });
            i += 2;
            continue;
        }
        if c == b':' && looks_ipv6(&text[i..]) {
            let len = text[i..]
                .find(|ch: char| !(ch.is_ascii_hexdigit() || ch == ':' || ch == '.' || ch == '/'))
                .unwrap_or(text.len() - i);
            out.push(Tok {
                text: text[i..i + len].to_string(),
                pos: start,
            });
            i += len;
            continue;
        }
        if b"()[]:!=<>+*/%&|^".contains(&c) {
            out.push(Tok {
                text: (c as char).to_string(),
                pos: start,
            });
            i += 1;
            continue;
        }
        if c == b'-' {
            out.push(Tok {
                text: "-".into(),
                pos: start,
            });
            i += 1;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' {
            // Words may contain '-' (tcp-syn, icmp-echo) and ':' (IPv6),
            // '/' (CIDR) and '.'.
            while i < bytes.len() {
                let d = bytes[i];
                let word_char = d.is_ascii_alphanumeric() || b"._/".contains(&d);
                let colon = d == b':' && looks_ipv6(&text[start..]);
                let dash = d == b'-'
                    && i > start
                    && bytes[start].is_ascii_alphabetic()
                    && bytes.get(i + 1).is_some_and(|n| n.is_ascii_alphabetic());
                if word_char || colon || dash {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Tok {
                text: text[start..i].to_string(),
                pos: start,
            });
            continue;
        }
        return Err(FilterError {
            position: start,
            message: format!("unexpected character '{}'", c as char),
        });
    }
    Ok(out)
}

/// An IPv6 literal has two colons among hex digits before any space.
fn looks_ipv6(rest: &str) -> bool {
    let word: &str = rest
        .split(|c: char| c.is_whitespace() || c == ')')
        .next()
        .unwrap_or("");
    word.matches(':').count() >= 2
        && word
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.' || c == '/')
}

struct Parser {
    tokens: Vec<Tok>,
    at: usize,
    end: usize,
    /// The qualifiers of the last primitive, for `host a or b`.
    last: Option<(Dir, Proto, &'static str)>,
    /// How many nesting levels the parser is inside now.
    depth: usize,
}

fn err<T>(position: usize, message: impl Into<String>) -> Result<T, FilterError> {
    Err(FilterError {
        position,
        message: message.into(),
    })
}

impl Parser {
    /// Runs `parse` one nesting level deeper; fails cleanly past
    /// [`MAX_FILTER_DEPTH`] instead of overflowing the stack.
    fn nested<T>(
        &mut self,
        parse: impl FnOnce(&mut Self) -> Result<T, FilterError>,
    ) -> Result<T, FilterError> {
        if self.depth >= MAX_FILTER_DEPTH {
            return err(
                self.pos(),
                format!("nested more than {MAX_FILTER_DEPTH} levels deep"),
            );
        }
        self.depth += 1;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(|t| t.text.as_str())
    }
    fn peek_at(&self, n: usize) -> Option<&str> {
        self.tokens.get(self.at + n).map(|t| t.text.as_str())
    }
    fn pos(&self) -> usize {
        self.tokens.get(self.at).map_or(self.end, |t| t.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.at).cloned();
        self.at += usize::from(t.is_some());
        t
    }
    fn expect(&mut self, what: &str) -> Result<(), FilterError> {
        match self.next() {
            Some(t) if t.text == what => Ok(()),
            Some(t) => err(t.pos, format!("expected '{what}', found '{}'", t.text)),
            None => err(self.end, format!("expected '{what}' at the end")),
        }
    }

    /// `and` and `or` bind equally and associate left to right, as in
    /// libpcap's grammar (`tcp or udp and port 53` is `(tcp or udp) and
    /// port 53`); only `not` binds tighter.
    fn expression(&mut self) -> Result<Node, FilterError> {
        let mut node = self.not()?;
        loop {
            let and = match self.peek() {
                Some("and" | "&&") => true,
                Some("or" | "||") => false,
                _ => return Ok(node),
            };
            self.next();
            let right = Box::new(self.not()?);
            node = if and {
                Node::And(Box::new(node), right)
            } else {
                Node::Or(Box::new(node), right)
            };
        }
    }

    fn not(&mut self) -> Result<Node, FilterError> {
        if matches!(self.peek(), Some("not" | "!")) {
            self.next();
            return Ok(Node::Not(Box::new(self.nested(Self::not)?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Node, FilterError> {
        let pos = self.pos();
        let Some(word) = self.peek().map(str::to_string) else {
            return err(self.end, "expression ends where a primitive was expected");
        };
        if word == "(" {
            // A parenthesised boolean expression, or the start of arithmetic.
            let save = self.at;
            let saved_last = self.last;
            self.next();
            let boolean = self.nested(Self::expression);
            if let Err(error) = &boolean
                && error.message.starts_with("nested more than")
            {
                return boolean;
            }
            match &boolean {
                Ok(node) if self.peek() == Some(")") => {
                    let node = node.clone();
                    self.next();
                    if !self.peek().is_some_and(is_arith_op) && !self.peek().is_some_and(is_cmp) {
                        return Ok(node);
                    }
                }
                _ => {}
            }
            let boolean_error = match boolean {
                Err(e) => e,
                Ok(_) => FilterError {
                    position: self.pos(),
                    message: "missing ')'".into(),
                },
            };
            self.at = save;
            self.last = saved_last;
            return self.relation().map_err(|_| boolean_error);
        }
        if is_arith_start(&word, self.peek_at(1)) {
            return self.relation();
        }
        match word.as_str() {
            "less" | "greater" => {
                self.next();
                let n = self.number()?;
                Ok(if word == "less" {
                    Node::Less(n)
                } else {
                    Node::Greater(n)
                })
            }
            _ => self.qualified(pos),
        }
    }

    fn number(&mut self) -> Result<u32, FilterError> {
        let pos = self.pos();
        match self.next() {
            Some(t) => parse_number(&t.text).ok_or(FilterError {
                position: pos,
                message: format!("'{}' is not a number", t.text),
            }),
            None => err(self.end, "a number was expected at the end"),
        }
    }

    /// [proto] [dir] [host|net|port|portrange] value, or a protocol alone.
    fn qualified(&mut self, pos: usize) -> Result<Node, FilterError> {
        let mut proto = None;
        let mut dir = None;
        let mut kind = None;
        if let Some(p) = self.peek().and_then(proto_word) {
            proto = Some(p);
            self.next();
        }
        if let Some(d) = self.peek().and_then(|w| match w {
            "src" => Some(Dir::Src),
            "dst" => Some(Dir::Dst),
            _ => None,
        }) {
            dir = Some(d);
            self.next();
            if matches!(self.peek(), Some("or" | "and"))
                && self.peek_at(1).is_some_and(|w| w == "dst" || w == "src")
            {
                // "src or dst host x": treat as Any.
                self.next();
                self.next();
                dir = Some(Dir::Any);
            }
        }
        if let Some(k) = self.peek().and_then(|w| match w {
            "host" => Some("host"),
            "net" => Some("net"),
            "port" => Some("port"),
            "portrange" => Some("portrange"),
            _ => None,
        }) {
            kind = Some(k);
            self.next();
        }
        if proto.is_some() && dir.is_none() && kind.is_none() {
            if self.peek() == Some("proto") {
                self.next();
                let n = self.number()?;
                let v6 = match proto {
                    Some(Proto::Ip) => Some(false),
                    Some(Proto::Ip6) => Some(true),
                    _ => return err(pos, "'proto' needs ip or ip6 before it"),
                };
                return Ok(Node::IpProto(v6, n as u8));
            }
            let word = self.tokens[self.at - 1].text.clone();
            return Ok(match word.as_str() {
                "tcp" => Node::IpProto(None, 6),
                "udp" => Node::IpProto(None, 17),
                "icmp" => Node::IpProto(Some(false), 1),
                "icmp6" => Node::IpProto(Some(true), 58),
                "ip" => Node::Ether(0x0800),
                "ip6" => Node::Ether(0x86dd),
                "arp" => Node::Ether(0x0806),
                "rarp" => Node::Ether(0x8035),
                "sctp" => Node::IpProto(None, 132),
                _ => return err(pos, format!("unknown protocol '{word}'")),
            });
        }
        let (dir, proto, kind) = match (dir, proto, kind) {
            (None, None, None) => match self.last {
                Some(last) => last,
                None => {
                    return err(
                        pos,
                        format!(
                            "unknown word '{}' (expected host, net, port, a protocol or an expression)",
                            self.peek().unwrap_or("")
                        ),
                    );
                }
            },
            (d, p, k) => (
                d.unwrap_or(Dir::Any),
                p.unwrap_or(Proto::Any),
                k.unwrap_or("host"),
            ),
        };
        self.last = Some((dir, proto, kind));
        let vpos = self.pos();
        let Some(value) = self.next() else {
            return err(self.end, format!("'{kind}' needs a value"));
        };
        let v = value.text;
        match kind {
            "host" => {
                let addr: IpAddr = v.parse().map_err(|_| FilterError {
                    position: vpos,
                    message: format!("'{v}' is not an IP address (netlens does not resolve names)"),
                })?;
                check_proto_addr(proto, &addr, vpos)?;
                Ok(Node::Host(dir, proto, addr))
            }
            "net" => {
                let (addr, bits) = parse_net(&v).ok_or(FilterError {
                    position: vpos,
                    message: format!("'{v}' is not a network (use ADDR/BITS)"),
                })?;
                if self.peek() == Some("mask") {
                    return err(self.pos(), "'mask' is not supported; use ADDR/BITS");
                }
                check_proto_addr(proto, &addr, vpos)?;
                Ok(Node::Net(dir, proto, addr, bits))
            }
            "port" => {
                let port = parse_number(&v)
                    .filter(|p| *p <= 65535)
                    .ok_or(FilterError {
                        position: vpos,
                        message: format!("'{v}' is not a port number"),
                    })? as u16;
                Ok(Node::Port(dir, proto, port, port))
            }
            _ => {
                let (a, b) = v
                    .split_once('-')
                    .and_then(|(a, b)| Some((parse_number(a)?, parse_number(b)?)))
                    .or_else(|| {
                        // "1-2" lexes as 1, -, 2
                        let a = parse_number(&v)?;
                        if self.peek() == Some("-") {
                            self.next();
                            let b = self.next().and_then(|t| parse_number(&t.text))?;
                            Some((a, b))
                        } else {
                            None
                        }
                    })
                    .filter(|(a, b)| *a <= 65535 && *b <= 65535)
                    .ok_or(FilterError {
                        position: vpos,
                        message: format!("'{v}' is not a port range (use A-B)"),
                    })?;
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                Ok(Node::Port(dir, proto, lo as u16, hi as u16))
            }
        }
    }

    fn relation(&mut self) -> Result<Node, FilterError> {
        let left = self.arith(0)?;
        let pos = self.pos();
        let op = match self.next().map(|t| t.text) {
            Some(t) if t == "=" || t == "==" => CmpOp::Eq,
            Some(t) if t == "!=" => CmpOp::Ne,
            Some(t) if t == "<" => CmpOp::Lt,
            Some(t) if t == "<=" => CmpOp::Le,
            Some(t) if t == ">" => CmpOp::Gt,
            Some(t) if t == ">=" => CmpOp::Ge,
            Some(t) => {
                return err(
                    pos,
                    format!("expected a comparison (= != < > <= >=), found '{t}'"),
                );
            }
            None => {
                return err(
                    self.end,
                    "expected a comparison (= != < > <= >=) at the end",
                );
            }
        };
        let right = self.arith(0)?;
        Ok(Node::Cmp(left, op, right))
    }

    /// Precedence climbing: | < & < << >> < + - < * / %.
    fn arith(&mut self, min: u8) -> Result<Arith, FilterError> {
        let mut left = self.arith_atom()?;
        while let Some(op) = self.peek().map(str::to_string) {
            let prec = match op.as_str() {
                "|" => 1,
                "^" => 2,
                "&" => 3,
                "<<" | ">>" => 4,
                "+" | "-" => 5,
                "*" | "/" | "%" => 6,
                _ => break,
            };
            if prec < min {
                break;
            }
            self.next();
            let right = self.arith(prec + 1)?;
            left = Arith::Bin(
                op.chars().next().unwrap_or('+'),
                Box::new(left),
                Box::new(right),
            );
        }
        Ok(left)
    }

    fn arith_atom(&mut self) -> Result<Arith, FilterError> {
        let pos = self.pos();
        let Some(tok) = self.next() else {
            return err(self.end, "expression ends where a value was expected");
        };
        match tok.text.as_str() {
            "(" => {
                let inner = self.nested(|p| p.arith(0))?;
                self.expect(")")?;
                Ok(inner)
            }
            "-" => Ok(Arith::Neg(Box::new(self.nested(Self::arith_atom)?))),
            "len" => Ok(Arith::Len),
            word => {
                if let Some(layer) = layer_word(word)
                    && self.peek() == Some("[")
                {
                    self.next();
                    let off = self.nested(|p| p.arith(0))?;
                    let mut size = 1u8;
                    if self.peek() == Some(":") {
                        self.next();
                        let spos = self.pos();
                        size = match self.number()? {
                            1 => 1,
                            2 => 2,
                            4 => 4,
                            _ => return err(spos, "a load size must be 1, 2 or 4"),
                        };
                    }
                    self.expect("]")?;
                    return Ok(Arith::Load(layer, Box::new(off), size));
                }
                if let Some(n) = parse_number(word).or_else(|| constant(word)) {
                    return Ok(Arith::Num(n));
                }
                err(pos, format!("'{word}' is not a value"))
            }
        }
    }
}

fn check_proto_addr(proto: Proto, addr: &IpAddr, pos: usize) -> Result<(), FilterError> {
    match (proto, addr) {
        (Proto::Ip | Proto::Arp, IpAddr::V6(_)) => err(pos, "an IPv6 address with 'ip' or 'arp'"),
        (Proto::Ip6, IpAddr::V4(_)) => err(pos, "an IPv4 address with 'ip6'"),
        _ => Ok(()),
    }
}

fn is_cmp(t: &str) -> bool {
    matches!(t, "=" | "==" | "!=" | "<" | "<=" | ">" | ">=")
}

fn is_arith_op(t: &str) -> bool {
    matches!(
        t,
        "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" | "<<" | ">>"
    )
}

fn is_arith_start(word: &str, next: Option<&str>) -> bool {
    (layer_word(word).is_some() && next == Some("["))
        || word == "len"
        || (parse_number(word).is_some() && next.is_some_and(|n| is_cmp(n) || is_arith_op(n)))
}

fn proto_word(w: &str) -> Option<Proto> {
    Some(match w {
        "ip" => Proto::Ip,
        "ip6" => Proto::Ip6,
        "tcp" => Proto::Tcp,
        "udp" => Proto::Udp,
        "arp" | "rarp" => Proto::Arp,
        "icmp" | "icmp6" | "sctp" => Proto::Any,
        _ => return None,
    })
}

fn layer_word(w: &str) -> Option<Layer> {
    Some(match w {
        "ether" => Layer::Ether,
        "ip" => Layer::Ip,
        "ip6" => Layer::Ip6,
        "tcp" => Layer::Tcp,
        "udp" => Layer::Udp,
        "icmp" => Layer::Icmp,
        "icmp6" => Layer::Icmp6,
        "arp" => Layer::Arp,
        _ => return None,
    })
}

fn parse_number(w: &str) -> Option<u32> {
    if let Some(hex) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok();
    }
    if w.len() > 1 && w.starts_with('0') && w.bytes().all(|b| b.is_ascii_digit()) {
        return u32::from_str_radix(&w[1..], 8).ok();
    }
    w.parse().ok()
}

fn constant(w: &str) -> Option<u32> {
    Some(match w {
        "tcpflags" => 13,
        "tcp-fin" => 0x01,
        "tcp-syn" => 0x02,
        "tcp-rst" => 0x04,
        "tcp-push" => 0x08,
        "tcp-ack" => 0x10,
        "tcp-urg" => 0x20,
        "tcp-ece" => 0x40,
        "tcp-cwr" => 0x80,
        "icmptype" => 0,
        "icmpcode" => 1,
        "icmp-echoreply" => 0,
        "icmp-unreach" => 3,
        "icmp-sourcequench" => 4,
        "icmp-redirect" => 5,
        "icmp-echo" => 8,
        "icmp-routeradvert" => 9,
        "icmp-routersolicit" => 10,
        "icmp-timxceed" => 11,
        "icmp-paramprob" => 12,
        "icmp-tstamp" => 13,
        "icmp-tstampreply" => 14,
        "icmp-ireq" => 15,
        "icmp-ireqreply" => 16,
        "icmp-maskreq" => 17,
        "icmp-maskreply" => 18,
        "icmp6type" => 0,
        "icmp6code" => 1,
        "icmp6-echo" => 128,
        "icmp6-echoreply" => 129,
        _ => return None,
    })
}

fn parse_net(v: &str) -> Option<(IpAddr, u8)> {
    let (addr, bits) = match v.split_once('/') {
        Some((a, b)) => (a, Some(b.parse::<u8>().ok()?)),
        None => (v, None),
    };
    if let Ok(ip) = addr.parse::<IpAddr>() {
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let bits = bits.unwrap_or(max);
        return (bits <= max).then_some((ip, bits));
    }
    // libpcap's short IPv4 forms: "10", "10.1", "10.1.2" (implied prefix).
    let parts: Vec<&str> = addr.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        octets[i] = p.parse().ok()?;
    }
    let bits = bits.unwrap_or(8 * parts.len() as u8);
    (bits <= 32).then_some((IpAddr::from(octets), bits))
}

fn prefix_match(a: &[u8], net: &[u8], bits: u8) -> bool {
    let full = usize::from(bits / 8);
    if a[..full] != net[..full] {
        return false;
    }
    let rest = bits % 8;
    rest == 0 || (a[full] ^ net[full]) & (0xffu8 << (8 - rest)) == 0
}

/// A load past the captured bytes: BPF ends the program there and rejects
/// the packet, whatever `or` or `not` would have made of the rest.
struct Abort;

type Eval<T> = Result<T, Abort>;

fn byte(data: &[u8], at: usize) -> Eval<u8> {
    data.get(at).copied().ok_or(Abort)
}

fn slice(data: &[u8], at: usize, len: usize) -> Eval<&[u8]> {
    data.get(at..at.checked_add(len).ok_or(Abort)?).ok_or(Abort)
}

fn be16_at(data: &[u8], at: usize) -> Eval<u16> {
    let b = slice(data, at, 2)?;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

/// Evaluates left to right with short circuits, loading packet bytes in
/// the order libpcap's (unoptimized) program does.
fn eval(node: &Node, s: &Summary, data: &[u8]) -> Eval<bool> {
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
fn ip_proto(s: &Summary, data: &[u8], v6: Option<bool>, p: u8) -> Eval<bool> {
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

fn addr_match(
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

fn port_match(s: &Summary, data: &[u8], dir: Dir, proto: Proto, lo: u16, hi: u16) -> Eval<bool> {
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
fn arith(a: &Arith, s: &Summary, data: &[u8]) -> Eval<Option<u32>> {
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
fn layer_base(layer: Layer, s: &Summary, data: &[u8]) -> Eval<Option<usize>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Deep nesting is an error, not a stack overflow, wherever it nests;
    /// the limit itself still parses (and matches, walking the tree).
    #[test]
    fn nesting_and_length_are_limited() {
        let deep = MAX_FILTER_DEPTH + 1;
        for text in [
            format!("{}tcp{}", "(".repeat(deep), ")".repeat(deep)),
            format!("{}tcp", "not ".repeat(deep)),
            format!("{}tcp", "!".repeat(deep)),
            format!("len = {}1", "- ".repeat(deep)),
            format!("len = {}1{}", "(".repeat(deep), ")".repeat(deep)),
            format!("{}0{} = 0", "tcp[".repeat(deep), "]".repeat(deep)),
            // As in the issue: far deeper than any stack would take.
            format!("{}tcp{}", "(".repeat(15_000), ")".repeat(15_000)),
            "not ".repeat(20_000) + "tcp",
        ] {
            let error = Filter::parse(&text).map(|_| ()).unwrap_err().to_string();
            assert!(
                error.contains("nested more than 100 levels") || error.contains("over the limit"),
                "{error}"
            );
        }
        let ok = MAX_FILTER_DEPTH - 1;
        let text = format!("{}tcp{}", "(".repeat(ok), ")".repeat(ok));
        assert!(Filter::parse(&text).is_ok());
        let text = format!("{}tcp", "not ".repeat(ok));
        assert!(Filter::parse(&text).is_ok());
        let long = "ip or ".repeat(MAX_FILTER_LEN / 6 + 1) + "tcp";
        let error = Filter::parse(&long).map(|_| ()).unwrap_err().to_string();
        assert!(error.contains("over the limit of 4096"), "{error}");
        // The longest chain that fits walks fine on a small thread stack
        // (the capture threads').
        let chain = "ip||".repeat((MAX_FILTER_LEN - 2) / 4) + "ip";
        let filter = Filter::parse(&chain).unwrap();
        let frame = [0u8; 64];
        let s = Summary::default();
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                filter.matches(&s, &frame);
                drop(filter);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn errors_name_the_position() {
        let e = Filter::parse("tcp and port 99999").unwrap_err();
        assert_eq!(e.position, 13);
        assert!(e.to_string().contains("character 14"), "{e}");
        let e = Filter::parse("host").unwrap_err();
        assert!(e.message.contains("needs a value"), "{e}");
        let e = Filter::parse("tcp and (port 80").unwrap_err();
        assert!(e.to_string().contains("filter error"), "{e}");
        assert!(Filter::parse("frobnicate").is_err());
        assert!(Filter::parse("tcp[13] & 2 !=").is_err());
        assert!(Filter::parse("port 80 $").is_err());
    }

    /// BPF semantics: a load past the captured bytes rejects the packet
    /// whatever comes after it, but not a branch decided before it.
    #[test]
    fn a_load_past_the_capture_rejects_the_packet() {
        // Ethernet + IPv4 (TCP) cut after 24 bytes: the protocol byte is
        // there, the IPv4 header's end and the ports are not.
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6]);
        let cut = &frame[..24];
        let s = crate::packet::decode::summarize(1, cut, 54);
        let pass = |text: &str| Filter::parse(text).unwrap().matches(&s, cut);
        assert!(pass("tcp"));
        assert!(pass("ip[0] >> 4 = 4 and 1 << 2 = 4"));
        assert!(pass("less 60"));
        assert!(pass("less 60 or tcp[13] & 2 != 0"));
        assert!(!pass("tcp[13] & 2 != 0 or less 60"));
        assert!(!pass("not port 53"));
        assert!(!pass("not host 198.18.0.1"));
        // An IPv6 address never looks into an IPv4 packet.
        assert!(pass("not host 2001:db8::1"));
    }

    /// tcp[], udp[] and icmp[] are IPv4 only in libpcap; icmp6[] needs
    /// ICMPv6 as the first next header.
    #[test]
    fn transport_loads_follow_libpcap() {
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0, 0, 20, 6, 64]);
        frame.extend_from_slice(&[0; 32]);
        frame.extend_from_slice(&[0; 20]);
        frame[14 + 40 + 13] = 0x02; // SYN
        let s = crate::packet::decode::summarize(1, &frame, frame.len() as u32);
        let pass = |text: &str| Filter::parse(text).unwrap().matches(&s, &frame);
        assert!(pass("tcp"));
        assert!(pass("ip6 and tcp"));
        assert!(!pass("tcp[13] & 2 != 0"));
        assert!(!pass("tcp[tcpflags] & tcp-syn != 0"));
    }

    #[test]
    fn and_and_or_bind_equally_left_to_right_as_in_libpcap() {
        let root = |text: &str| Filter::parse(text).unwrap().root;
        assert_eq!(
            root("tcp or udp and port 53"),
            root("(tcp or udp) and port 53")
        );
        assert_eq!(
            root("tcp and udp or port 53"),
            root("(tcp and udp) or port 53")
        );
        assert_ne!(
            root("tcp or udp and port 53"),
            root("tcp or (udp and port 53)")
        );
        // not binds tighter than either.
        assert_eq!(root("not tcp or udp"), root("(not tcp) or udp"));
    }

    #[test]
    fn grammar_accepts_the_documented_forms() {
        for text in [
            "",
            "tcp",
            "host 198.18.0.1",
            "src host 198.18.0.1 and dst host 198.18.0.2",
            "net 198.18.0.0/15",
            "tcp port 9000",
            "udp and src port 53",
            "portrange 1-1024",
            "tcp[tcpflags] & (tcp-syn) != 0",
            "tcp[13] & 2 != 0",
            "less 100 or greater 1000",
            "not (arp or icmp) and ip6",
            "host 198.18.0.1 or 198.18.0.2",
            "ip6 host ::1",
            "icmp[icmptype] = icmp-echo",
            "ip[2:2] > 576",
        ] {
            Filter::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        }
    }
}
