//! Names for what the tables show as numbers, only when asked: N (or
//! --resolve) turns on reverse names for addresses and service names for
//! ports together. Off, nothing is looked up and no query is sent; on, a
//! name not known yet shows as the address until the resolver thread has
//! it (a frame never waits).

use crate::dns::reverse::{Options, ReverseNames};
use crate::dns::services::Services;
use crate::model::filter::KnownNames;
use std::net::{IpAddr, SocketAddr};

#[derive(Default)]
pub struct Names {
    on: bool,
    /// Where PTR queries go: --dns-server, else /etc/resolv.conf's first
    /// nameserver; Err says why there is none.
    server: Option<Result<SocketAddr, String>>,
    reverse: Option<ReverseNames>,
    /// Why reverse names are unavailable (shown in the status line).
    pub error: Option<String>,
}

impl Names {
    pub fn new(server: Result<SocketAddr, String>, on: bool) -> Self {
        let mut names = Names {
            on: false,
            server: Some(server),
            reverse: None,
            error: None,
        };
        if on {
            names.toggle();
        }
        names
    }

    pub fn on(&self) -> bool {
        self.on
    }

    /// N: names on or off. The resolver thread starts on the first N and
    /// then stays (its cache too): off only stops asking it.
    pub fn toggle(&mut self) {
        self.on = !self.on;
        if !self.on || self.reverse.is_some() {
            return;
        }
        match &self.server {
            Some(Ok(server)) => match ReverseNames::start(Options::new(*server)) {
                Ok(reverse) => {
                    self.reverse = Some(reverse);
                    self.error = None;
                }
                Err(e) => self.error = Some(format!("reverse names: {e}")),
            },
            Some(Err(why)) => self.error = Some(why.clone()),
            None => self.error = Some("reverse names: no DNS server".into()),
        }
    }

    /// The resolver, while names are on.
    pub fn reverse(&self) -> Option<&ReverseNames> {
        self.reverse.as_ref().filter(|_| self.on)
    }

    /// The reverse name of `ip`, when on and known.
    pub fn host(&self, ip: IpAddr) -> Option<String> {
        // Nothing to ask a server about (snapshot --resolve agrees).
        if ip.is_unspecified() || ip.is_loopback() {
            return None;
        }
        self.reverse()?.lookup(ip.to_canonical())
    }

    /// The reverse names the cache holds, while names are on (for the row
    /// filter's `host:NAME`); None while off.
    pub fn known(&self) -> Option<KnownNames> {
        self.reverse().map(ReverseNames::known)
    }

    /// "198.18.0.1:443" as "web.test:https" (each part when known);
    /// anything else ("*:*", "[::]:80" with no name) as it is or in part.
    pub fn endpoint(&self, proto: &str, text: &str) -> String {
        if !self.on {
            return text.to_string();
        }
        let Some((host, port)) = text.rsplit_once(':') else {
            return text.to_string();
        };
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let host = match bare.parse::<IpAddr>().ok().and_then(|ip| self.host(ip)) {
            Some(name) => name,
            None => host.to_string(),
        };
        let port = match port.parse::<u16>() {
            Ok(number) => Services::system()
                .name(proto, number)
                .map_or_else(|| port.to_string(), str::to_string),
            Err(_) => port.to_string(),
        };
        format!("{host}:{port}")
    }

    /// A flow's "src > dst" with each side named.
    pub fn flow_key(&self, proto: &str, key: &str) -> String {
        if !self.on {
            return key.to_string();
        }
        match key.split_once(" > ") {
            Some((src, dst)) => format!(
                "{} > {}",
                self.endpoint(proto, src),
                self.endpoint(proto, dst)
            ),
            None => key.to_string(),
        }
    }

    /// A flow table key: "src > dst", a host, or "proto/port".
    pub fn any_key(&self, proto: &str, key: &str) -> String {
        if !self.on {
            return key.to_string();
        }
        if key.contains(" > ") {
            return self.flow_key(proto, key);
        }
        if let Ok(ip) = key.parse::<IpAddr>() {
            return self.host(ip).unwrap_or_else(|| key.to_string());
        }
        if let Some((proto, port)) = key.split_once('/')
            && let Ok(number) = port.parse::<u16>()
            && let Some(name) = Services::system().name(proto, number)
        {
            return format!("{proto}/{name}");
        }
        key.to_string()
    }

    /// The status line's word while on: queries sent so far, or the error.
    pub fn status(&self) -> Option<String> {
        if !self.on {
            return None;
        }
        if let Some(error) = &self.error {
            return Some(format!("names: {error}"));
        }
        let reverse = self.reverse.as_ref()?;
        let sent = reverse
            .counters
            .sent
            .load(std::sync::atomic::Ordering::Relaxed);
        Some(format!("names on ({sent} PTR sent)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_shows_numbers_and_asks_nothing() {
        let names = Names::default();
        assert_eq!(names.endpoint("tcp", "198.18.0.1:443"), "198.18.0.1:443");
        assert_eq!(names.flow_key("tcp", "a:1 > b:2"), "a:1 > b:2");
        assert!(names.reverse().is_none());
    }

    #[test]
    fn on_without_a_server_names_ports_only() {
        let mut names = Names::new(Err("no server".into()), true);
        assert!(names.on());
        assert!(names.reverse().is_none());
        let expected = Services::system().name("tcp", 443).unwrap_or("443");
        assert_eq!(
            names.endpoint("tcp", "198.18.0.1:443"),
            format!("198.18.0.1:{expected}")
        );
        assert_eq!(names.endpoint("tcp", "*:*"), "*:*");
        assert_eq!(names.endpoint("tcp", "[::]:65000"), "[::]:65000");
        names.toggle();
        assert!(!names.on());
        assert_eq!(names.endpoint("tcp", "198.18.0.1:443"), "198.18.0.1:443");
    }
}
