//! pcap-filter text to a tree: the lexer and a recursive-descent parser
//! with libpcap's precedence and its reuse of qualifiers.

use super::*;

/// The expression's tree (an empty one matches everything).
pub(super) fn root(text: &str) -> Result<Node, FilterError> {
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
    Ok(root)
}

#[derive(Debug, Clone)]
pub(super) struct Tok {
    text: String,
    pos: usize,
}

pub(super) fn lex(text: &str) -> Result<Vec<Tok>, FilterError> {
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
pub(super) fn looks_ipv6(rest: &str) -> bool {
    let word: &str = rest
        .split(|c: char| c.is_whitespace() || c == ')')
        .next()
        .unwrap_or("");
    word.matches(':').count() >= 2
        && word
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.' || c == '/')
}

pub(super) struct Parser {
    tokens: Vec<Tok>,
    at: usize,
    end: usize,
    /// The qualifiers of the last primitive, for `host a or b`.
    last: Option<(Dir, Proto, &'static str)>,
    /// How many nesting levels the parser is inside now.
    depth: usize,
}

pub(super) fn err<T>(position: usize, message: impl Into<String>) -> Result<T, FilterError> {
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

pub(super) fn check_proto_addr(proto: Proto, addr: &IpAddr, pos: usize) -> Result<(), FilterError> {
    match (proto, addr) {
        (Proto::Ip | Proto::Arp, IpAddr::V6(_)) => err(pos, "an IPv6 address with 'ip' or 'arp'"),
        (Proto::Ip6, IpAddr::V4(_)) => err(pos, "an IPv4 address with 'ip6'"),
        _ => Ok(()),
    }
}

pub(super) fn is_cmp(t: &str) -> bool {
    matches!(t, "=" | "==" | "!=" | "<" | "<=" | ">" | ">=")
}

pub(super) fn is_arith_op(t: &str) -> bool {
    matches!(
        t,
        "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" | "<<" | ">>"
    )
}

pub(super) fn is_arith_start(word: &str, next: Option<&str>) -> bool {
    (layer_word(word).is_some() && next == Some("["))
        || word == "len"
        || (parse_number(word).is_some() && next.is_some_and(|n| is_cmp(n) || is_arith_op(n)))
}

pub(super) fn proto_word(w: &str) -> Option<Proto> {
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

pub(super) fn layer_word(w: &str) -> Option<Layer> {
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

pub(super) fn parse_number(w: &str) -> Option<u32> {
    if let Some(hex) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok();
    }
    if w.len() > 1 && w.starts_with('0') && w.bytes().all(|b| b.is_ascii_digit()) {
        return u32::from_str_radix(&w[1..], 8).ok();
    }
    w.parse().ok()
}

pub(super) fn constant(w: &str) -> Option<u32> {
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

pub(super) fn parse_net(v: &str) -> Option<(IpAddr, u8)> {
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
