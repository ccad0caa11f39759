//! DNS: the resolver configuration, an opt-in active prober and a passive
//! matcher fed by captured packets. Both produce `DnsResult`s; a Sample
//! carries those completed during its interval (raw events, so replay and
//! `snapshot --json` see exactly what live saw), and `stats` folds them into
//! per-server and per-name figures.

pub mod config;
pub mod monitor;
pub mod prober;
pub mod reverse;
pub mod services;
pub mod stats;

use std::net::{IpAddr, SocketAddr};

pub use crate::model::dns::{DnsResult, DnsSample, MAX_ANSWERS, Outcome};
pub use monitor::{DnsMonitor, DnsOptions};

/// One probe: a query type and a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProbeSpec {
    pub qtype: QType,
    /// For PTR: the in-addr.arpa / ip6.arpa name; otherwise as given.
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QType {
    A,
    Aaaa,
    Ptr,
}

impl QType {
    pub fn label(self) -> &'static str {
        match self {
            QType::A => "A",
            QType::Aaaa => "AAAA",
            QType::Ptr => "PTR",
        }
    }

    pub fn code(self) -> u16 {
        match self {
            QType::A => 1,
            QType::Aaaa => 28,
            QType::Ptr => 12,
        }
    }
}

impl std::fmt::Display for ProbeSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.qtype.label(), self.name)
    }
}

/// Parses a probe: `NAME` (A), `A:NAME`, `AAAA:NAME`, `PTR:ADDRESS` or a
/// bare IP address (PTR of that address).
pub fn parse_probe(text: &str) -> Result<ProbeSpec, String> {
    let text = text.trim();
    let (qtype, rest) = match text.split_once(':') {
        Some((kind, rest)) if text.parse::<IpAddr>().is_err() => {
            let qtype = match kind.to_ascii_uppercase().as_str() {
                "A" => QType::A,
                "AAAA" => QType::Aaaa,
                "PTR" => QType::Ptr,
                _ => {
                    return Err(format!(
                        "'{text}': unknown query type '{kind}' (use A, AAAA or PTR)"
                    ));
                }
            };
            (Some(qtype), rest.trim())
        }
        _ => (None, text),
    };
    if rest.is_empty() {
        return Err(format!("'{text}': no name to probe"));
    }
    if let Ok(ip) = rest.parse::<IpAddr>() {
        return match qtype {
            None | Some(QType::Ptr) => Ok(ProbeSpec {
                qtype: QType::Ptr,
                name: reverse_name(ip),
            }),
            Some(other) => Err(format!(
                "'{text}': {} of an address makes no sense (use PTR:{rest} or just {rest})",
                other.label()
            )),
        };
    }
    let qtype = qtype.unwrap_or(QType::A);
    let name = rest.trim_end_matches('.');
    if qtype == QType::Ptr && !is_reverse_name(name) {
        return Err(format!(
            "'{text}': PTR wants an IP address (or an in-addr.arpa / ip6.arpa name)"
        ));
    }
    if !valid_name(name) {
        return Err(format!("'{text}': '{name}' is not a valid domain name"));
    }
    Ok(ProbeSpec {
        qtype,
        name: name.to_ascii_lowercase(),
    })
}

fn is_reverse_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".in-addr.arpa") || lower.ends_with(".ip6.arpa")
}

/// Letters, digits, hyphen and underscore in labels of 1-63 bytes, at most
/// 253 bytes in all.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// 1.2.3.4 -> 4.3.2.1.in-addr.arpa; IPv6 nibble by nibble under ip6.arpa.
pub fn reverse_name(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            format!("{}.{}.{}.{}.in-addr.arpa", o[3], o[2], o[1], o[0])
        }
        IpAddr::V6(v6) => {
            let mut out = String::with_capacity(72);
            for byte in v6.octets().iter().rev() {
                out.push_str(&format!("{:x}.{:x}.", byte & 0xf, byte >> 4));
            }
            out.push_str("ip6.arpa");
            out
        }
    }
}

/// Parses a server: `ADDR` (port 53), `ADDR:PORT`, `[V6]:PORT` or a bare v6.
pub fn parse_server(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(ip) = text.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 53));
    }
    Err(format!(
        "'{text}' is not a DNS server address (use ADDR or ADDR:PORT, e.g. 127.0.0.1:5353)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_syntax() {
        let p = |t| parse_probe(t).unwrap();
        assert_eq!(p("Example.TEST.").to_string(), "A example.test");
        assert_eq!(p("aaaa:host.test").to_string(), "AAAA host.test");
        assert_eq!(p("198.18.0.7").to_string(), "PTR 7.0.18.198.in-addr.arpa");
        assert_eq!(
            p("PTR:198.18.0.7").to_string(),
            "PTR 7.0.18.198.in-addr.arpa"
        );
        assert!(p("::1").name.ends_with(".0.ip6.arpa"));
        assert!(p("::1").name.starts_with("1.0.0.0."));
        assert!(parse_probe("MX:example.test").is_err());
        assert!(parse_probe("A:198.18.0.1").is_err());
        assert!(parse_probe("bad name.test").is_err());
        assert!(parse_probe("PTR:example.test").is_err());
        assert!(parse_probe("").is_err());
    }

    #[test]
    fn server_syntax() {
        assert_eq!(parse_server("127.0.0.1").unwrap().port(), 53);
        assert_eq!(parse_server("127.0.0.1:5353").unwrap().port(), 5353);
        assert_eq!(parse_server("::1").unwrap().port(), 53);
        assert_eq!(parse_server("[::1]:54").unwrap().port(), 54);
        assert!(parse_server("dns.example").is_err());
    }
}
