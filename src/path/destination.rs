//! HOST[:PORT] as `netlens trace` and the Path view take it. An address is
//! used as given; only a name is resolved, once, through the system
//! resolver.

use anyhow::{Result, bail};
use std::net::{IpAddr, ToSocketAddrs};

/// The destination: the text as given, its address and the port (None when
/// the text had none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub host: String,
    pub addr: IpAddr,
    pub port: Option<u16>,
}

/// Parses HOST, HOST:PORT, [V6] or [V6]:PORT.
pub fn parse(text: &str) -> Result<Destination> {
    let text = text.trim();
    let (host, port) = split(text)?;
    if host.is_empty() {
        bail!("'{text}' names no host");
    }
    let port = match port {
        Some(port) => Some(parse_port(port, text)?),
        None => None,
    };
    let addr = match host.parse::<IpAddr>() {
        Ok(addr) => addr,
        Err(_) => resolve(host)?,
    };
    Ok(Destination {
        host: host.to_string(),
        addr,
        port,
    })
}

fn split(text: &str) -> Result<(&str, Option<&str>)> {
    if let Some(rest) = text.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            bail!("'{text}': an IPv6 address in [ ] lacks its ]");
        };
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => bail!("'{text}': expected :PORT after ]"),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => {
            let (host, port) = text.split_once(':').unwrap_or((text, ""));
            Ok((host, Some(port)))
        }
        // A bare IPv6 address: its colons are not a port.
        _ => Ok((text, None)),
    }
}

fn parse_port(port: &str, text: &str) -> Result<u16> {
    match port.parse::<u16>() {
        Ok(port) if port > 0 => Ok(port),
        _ => bail!("'{port}' in '{text}' is not a port (1-65535)"),
    }
}

/// A name through the system resolver (getaddrinfo): its first IPv4
/// address, else its first address.
fn resolve(host: &str) -> Result<IpAddr> {
    let valid = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_');
    if !valid {
        bail!("'{host}' is neither an IP address nor a host name");
    }
    let addrs: Vec<IpAddr> = match (host, 0).to_socket_addrs() {
        Ok(addrs) => addrs.map(|a| a.ip()).collect(),
        Err(error) => bail!("cannot resolve '{host}' (system resolver): {error}"),
    };
    match addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()) {
        Some(addr) => Ok(*addr),
        None => bail!("'{host}' resolves to no address"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_ports_and_bad_input() {
        let d = parse("198.18.3.2:443").unwrap();
        assert_eq!(
            (d.addr.to_string(), d.port),
            ("198.18.3.2".into(), Some(443))
        );
        assert_eq!(parse("198.18.3.2").unwrap().port, None);
        assert_eq!(parse("[2001:db8::1]:80").unwrap().port, Some(80));
        assert_eq!(parse("2001:db8::1").unwrap().port, None);
        for bad in [
            "198.18.3.2:0",
            "198.18.3.2:99999",
            "198.18.3.2:x",
            ":80",
            "a b",
            "[::1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
