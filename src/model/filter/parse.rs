//! Text to `Node`: a tokenizer (words, quotes, parentheses, `!`) and a
//! recursive-descent parser with `or` below `and` below `!`. Positions
//! count characters from 0, for the caret.

use super::{AddrMatch, FilterError, MAX_DEPTH, MAX_TERMS, Node, Range, STATES, Side, Term};
use std::net::{IpAddr, SocketAddr};

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Open,
    Close,
    Not,
    And,
    Or,
    /// A word; `quoted` when it began with a quote (never a field or an
    /// operator then).
    Word {
        text: String,
        quoted: bool,
    },
}

fn err<T>(position: usize, message: impl Into<String>) -> Result<T, FilterError> {
    Err(FilterError {
        position,
        message: message.into(),
    })
}

fn tokens(text: &str) -> Result<Vec<(usize, Token)>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let token = match c {
            '(' => Token::Open,
            ')' => Token::Close,
            '!' => Token::Not,
            _ => {
                let mut word = String::new();
                let quoted = c == '"';
                while i < chars.len() && !chars[i].is_whitespace() && !"()".contains(chars[i]) {
                    if chars[i] == '"' {
                        let open = i;
                        i += 1;
                        while i < chars.len() && chars[i] != '"' {
                            word.push(chars[i]);
                            i += 1;
                        }
                        if i == chars.len() {
                            return err(open, "this quote is not closed");
                        }
                    } else {
                        word.push(chars[i]);
                    }
                    i += 1;
                }
                out.push((start, operator(word, quoted)));
                continue;
            }
        };
        out.push((start, token));
        i += 1;
    }
    Ok(out)
}

fn operator(word: String, quoted: bool) -> Token {
    if !quoted {
        match word.to_ascii_lowercase().as_str() {
            "and" | "&&" => return Token::And,
            "or" | "||" => return Token::Or,
            "not" => return Token::Not,
            _ => {}
        }
    }
    Token::Word { text: word, quoted }
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
    /// Where the text ends, for errors about what is missing.
    end: usize,
    depth: usize,
    terms: usize,
}

pub fn parse(text: &str) -> Result<Option<Node>, FilterError> {
    let mut parser = Parser {
        tokens: tokens(text)?,
        at: 0,
        end: text.chars().count(),
        depth: 0,
        terms: 0,
    };
    if parser.tokens.is_empty() {
        return Ok(None);
    }
    let node = parser.or()?;
    match parser.peek() {
        None => Ok(Some(node)),
        Some((at, Token::Close)) => err(at, "this ')' closes no '('"),
        Some((at, _)) => err(at, "expected 'and', 'or' or the end here"),
    }
}

impl Parser {
    fn peek(&self) -> Option<(usize, Token)> {
        self.tokens.get(self.at).cloned()
    }

    fn or(&mut self) -> Result<Node, FilterError> {
        let mut parts = vec![self.and()?];
        while let Some((_, Token::Or)) = self.peek() {
            self.at += 1;
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Node::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Node, FilterError> {
        let mut parts = vec![self.unary()?];
        loop {
            match self.peek() {
                Some((_, Token::And)) => self.at += 1,
                // Adjacent terms: an implied `and`.
                Some((_, Token::Open | Token::Not | Token::Word { .. })) => {}
                _ => break,
            }
            parts.push(self.unary()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Node::And(parts)
        })
    }

    fn unary(&mut self) -> Result<Node, FilterError> {
        let Some((at, token)) = self.peek() else {
            let before = self.at.checked_sub(1).and_then(|i| self.tokens.get(i));
            return match before {
                Some((_, Token::And)) => err(self.end, "nothing after 'and'"),
                Some((_, Token::Or)) => err(self.end, "nothing after 'or'"),
                Some((_, Token::Not)) => err(self.end, "nothing after '!'"),
                _ => err(self.end, "the expression ends before its ')'"),
            };
        };
        self.at += 1;
        match token {
            Token::Not => {
                let node = self.nested(at, Self::unary)?;
                Ok(Node::Not(Box::new(node)))
            }
            Token::Open => {
                let node = self.nested(at, Self::or)?;
                match self.peek() {
                    Some((_, Token::Close)) => {
                        self.at += 1;
                        Ok(node)
                    }
                    Some((next, _)) => err(next, "expected ')' here"),
                    None => err(at, "this '(' is not closed"),
                }
            }
            Token::Close => err(at, "expected a term before this ')'"),
            Token::And => err(at, "'and' needs a term before it"),
            Token::Or => err(at, "'or' needs a term before it"),
            Token::Word { text, quoted } => {
                self.terms += 1;
                if self.terms > MAX_TERMS {
                    return err(at, format!("more than {MAX_TERMS} terms"));
                }
                Ok(Node::Term(term(at, &text, quoted)?))
            }
        }
    }

    /// Runs `inner` one level deeper, within MAX_DEPTH.
    fn nested(
        &mut self,
        at: usize,
        inner: fn(&mut Self) -> Result<Node, FilterError>,
    ) -> Result<Node, FilterError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(
                at,
                format!("nested more than {MAX_DEPTH} deep ('(' and '!')"),
            );
        }
        let node = inner(self)?;
        self.depth -= 1;
        Ok(node)
    }
}

/// A word: `field:value`, or a bare word. A word that is an address
/// ("fd00::1", "198.18.0.1:80") is bare even though it holds a colon.
fn term(at: usize, text: &str, quoted: bool) -> Result<Term, FilterError> {
    let bare = Term::Word(text.to_lowercase());
    let Some((name, value)) = text.split_once(':') else {
        return Ok(bare);
    };
    if quoted
        || name.is_empty()
        || !name.chars().all(|c| c.is_ascii_alphabetic())
        || text.parse::<IpAddr>().is_ok()
        || text.parse::<SocketAddr>().is_ok()
    {
        return Ok(bare);
    }
    let name = name.to_ascii_lowercase();
    let value_at = at + name.chars().count() + 1;
    if !super::FIELDS.iter().any(|(field, _, _)| *field == name) {
        return err(
            at,
            format!(
                "unknown field '{name}' (fields: {}; quote a word with a colon)",
                super::field_names()
            ),
        );
    }
    if value.is_empty() {
        return err(value_at, format!("'{name}:' needs a value"));
    }
    let lower = value.to_lowercase();
    Ok(match name.as_str() {
        "port" => Term::Port(None, range(value_at, value, u16::MAX.into())?),
        "sport" => Term::Port(Some(Side::Src), range(value_at, value, u16::MAX.into())?),
        "dport" => Term::Port(Some(Side::Dst), range(value_at, value, u16::MAX.into())?),
        "src" => Term::Addr(Some(Side::Src), address(value_at, value, true)?),
        "dst" => Term::Addr(Some(Side::Dst), address(value_at, value, true)?),
        "net" => Term::Addr(None, address(value_at, value, false)?),
        "host" => match address(value_at, value, true) {
            Ok(addr) => Term::Addr(None, addr),
            Err(_) if is_name(value) => Term::HostName(lower),
            Err(e) => return Err(e),
        },
        "proto" => Term::Proto(proto(value_at, &lower)?),
        "state" => Term::State(state(value_at, &lower)?),
        "proc" => Term::Proc(lower),
        "pid" => Term::Pid(range(value_at, value, u32::MAX)?),
        "uid" if value.starts_with(|c: char| c.is_ascii_digit() || "<>".contains(c)) => {
            Term::Uid(range(value_at, value, u32::MAX)?)
        }
        "uid" => Term::User(value.to_string()),
        "ns" => Term::Netns(lower),
        "container" => Term::Container(lower),
        _ => Term::Sni(lower),
    })
}

/// A host name's characters (a reverse or SNI name to match).
fn is_name(value: &str) -> bool {
    value.chars().any(|c| c.is_ascii_alphabetic())
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
}

/// `N`, `>N`, `>=N`, `<N`, `<=N` or `A-B`, each at most `max`.
fn range(at: usize, value: &str, max: u32) -> Result<Range, FilterError> {
    let number = |text: &str, offset: usize| -> Result<u32, FilterError> {
        match text.parse::<u64>() {
            Ok(n) if n <= u64::from(max) => Ok(n as u32),
            Ok(_) => err(
                at + offset,
                format!("{text} is over the largest value, {max}"),
            ),
            Err(_) => err(
                at + offset,
                format!("expected a number (N, >N, >=N, <N, <=N or A-B), not '{text}'"),
            ),
        }
    };
    if let Some(rest) = value.strip_prefix(">=") {
        return Ok(Range {
            lo: number(rest, 2)?,
            hi: max,
        });
    }
    if let Some(rest) = value.strip_prefix("<=") {
        return Ok(Range {
            lo: 0,
            hi: number(rest, 2)?,
        });
    }
    if let Some(rest) = value.strip_prefix('>') {
        let n = number(rest, 1)?;
        if n == max {
            return err(at, format!("nothing is above {max}"));
        }
        return Ok(Range { lo: n + 1, hi: max });
    }
    if let Some(rest) = value.strip_prefix('<') {
        let n = number(rest, 1)?;
        if n == 0 {
            return err(at, "nothing is below 0");
        }
        return Ok(Range { lo: 0, hi: n - 1 });
    }
    if let Some((a, b)) = value.split_once('-') {
        let lo = number(a, 0)?;
        let hi = number(b, a.chars().count() + 1)?;
        if lo > hi {
            return err(at, format!("the range {lo}-{hi} runs backwards"));
        }
        return Ok(Range { lo, hi });
    }
    let n = number(value, 0)?;
    Ok(Range { lo: n, hi: n })
}

/// ADDR, ADDR/LEN, and with `ports` ADDR:PORT or [V6]:PORT.
fn address(at: usize, value: &str, ports: bool) -> Result<AddrMatch, FilterError> {
    let full = |ip: IpAddr| if ip.is_ipv4() { 32 } else { 128 };
    // A dual-stack socket's IPv4-mapped address is its IPv4 address (the
    // rows' ends are compared the same way).
    let value_ip = |ip: IpAddr| ip.to_canonical();
    if let Ok(ip) = value.parse::<IpAddr>().map(value_ip) {
        return Ok(AddrMatch {
            ip,
            prefix: full(ip),
            port: None,
        });
    }
    if ports && let Ok(addr) = value.parse::<SocketAddr>() {
        let ip = value_ip(addr.ip());
        return Ok(AddrMatch {
            ip,
            prefix: full(ip),
            port: Some(addr.port()),
        });
    }
    if let Some((ip, len)) = value.split_once('/') {
        let Ok(ip) = ip.parse::<IpAddr>() else {
            return err(at, format!("'{ip}' is not an IPv4 or IPv6 address"));
        };
        let len_at = at + value.find('/').unwrap_or(0) + 1;
        return match len.parse::<u8>() {
            Ok(prefix) if prefix <= full(ip) => Ok(AddrMatch {
                ip,
                prefix,
                port: None,
            }),
            _ => err(
                len_at,
                format!("the prefix length must be 0 to {}", full(ip)),
            ),
        };
    }
    let shapes = if ports {
        "ADDR, ADDR/LEN, ADDR:PORT or [V6ADDR]:PORT"
    } else {
        "ADDR or ADDR/LEN"
    };
    err(at, format!("expected {shapes}, not '{value}'"))
}

const PROTOS: &[&str] = &[
    "tcp", "udp", "icmp", "icmp6", "sctp", "igmp", "gre", "dccp", "udplite",
];

fn proto(at: usize, value: &str) -> Result<String, FilterError> {
    let value = if value == "icmpv6" { "icmp6" } else { value };
    if PROTOS.contains(&value) {
        return Ok(value.to_string());
    }
    err(
        at,
        format!("unknown protocol '{value}' ({})", PROTOS.join(" ")),
    )
}

fn state(at: usize, value: &str) -> Result<&'static [&'static str], FilterError> {
    let value = value.replace('_', "-");
    match STATES.iter().find(|(name, _)| *name == value) {
        Some((_, states)) => Ok(states),
        None => err(
            at,
            format!(
                "unknown state '{value}' ({})",
                STATES
                    .iter()
                    .map(|(name, _)| *name)
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ),
    }
}
