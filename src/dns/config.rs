//! The resolver configuration as the C library uses it: /etc/resolv.conf,
//! /etc/hosts and the hosts line of /etc/nsswitch.conf. The parsers take
//! text (unit-tested against real-world variants); `read_system` reads the
//! real files at run time.

use std::net::IpAddr;

pub use crate::model::dns::{
    DEFAULT_ATTEMPTS, DEFAULT_NDOTS, DEFAULT_TIMEOUT_S, MAXNS, ResolverConfig,
};

/// Parses resolv.conf text. Unknown lines and options are ignored, as glibc
/// ignores them; values are clamped to glibc's limits.
pub fn parse_resolv_conf(text: &str) -> ResolverConfig {
    let mut config = ResolverConfig::default();
    for line in text.lines() {
        // Comments start with # or ; anywhere on a line.
        let line = line.split(['#', ';']).next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        match words.next() {
            Some("nameserver") => {
                if let Some(addr) = words.next() {
                    // glibc accepts a v6 scope ("fe80::1%eth0"); keep it as text.
                    let bare = addr.split('%').next().unwrap_or(addr);
                    if bare.parse::<IpAddr>().is_ok() {
                        config.nameservers.push(addr.to_string());
                    }
                }
            }
            Some("search") => config.search = words.map(str::to_string).collect(),
            Some("domain") => config.search = words.take(1).map(str::to_string).collect(),
            Some("options") => {
                for option in words {
                    apply_option(&mut config, option);
                }
            }
            _ => {}
        }
    }
    config
}

fn apply_option(config: &mut ResolverConfig, option: &str) {
    let (key, value) = match option.split_once(':') {
        Some((key, value)) => (key, value.parse::<u32>().ok()),
        None => (option, None),
    };
    match (key, value) {
        ("timeout", Some(v)) => config.timeout_s = v.clamp(1, 30),
        ("attempts", Some(v)) => config.attempts = v.clamp(1, 5),
        ("ndots", Some(v)) => config.ndots = v.min(15),
        ("rotate", _) => config.rotate = true,
        _ => {}
    }
}

/// Counts host entries in /etc/hosts text: lines with an address and at
/// least one name, comments and blank lines not counted.
pub fn count_hosts(text: &str) -> usize {
    text.lines()
        .filter(|line| {
            let line = line.split('#').next().unwrap_or("");
            let mut words = line.split_whitespace();
            matches!((words.next(), words.next()), (Some(addr), Some(_))
                if addr.split('%').next().unwrap_or(addr).parse::<IpAddr>().is_ok())
        })
        .count()
}

/// The sources of the `hosts:` line in nsswitch.conf text ("files dns").
pub fn nsswitch_hosts(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let line = line.split('#').next().unwrap_or("").trim();
        let rest = line.strip_prefix("hosts")?.trim_start();
        let rest = rest.strip_prefix(':')?;
        Some(rest.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

/// A nameserver on loopback is a local stub or cache (systemd-resolved's
/// 127.0.0.53, dnsmasq, unbound): it answers from cache or forwards.
pub fn is_stub(server: &str) -> bool {
    let bare = server.split('%').next().unwrap_or(server);
    let ip = bare
        .parse::<IpAddr>()
        .ok()
        .or_else(|| bare.parse::<std::net::SocketAddr>().ok().map(|s| s.ip()));
    ip.is_some_and(|ip| ip.is_loopback())
}

/// What kind of stub, for the label: 127.0.0.53 is systemd-resolved's.
pub fn stub_label(server: &str) -> Option<&'static str> {
    if !is_stub(server) {
        return None;
    }
    let ip = server.split(':').next().unwrap_or(server);
    Some(if ip == "127.0.0.53" || ip == "127.0.0.54" {
        "systemd-resolved stub"
    } else {
        "local stub/cache"
    })
}

/// Reads the real files. Missing files are normal (a container may have no
/// nsswitch.conf); a missing resolv.conf means glibc's default, the local
/// server, which is reported as such.
pub fn read_system() -> ResolverConfig {
    read_from("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf")
}

pub fn read_from(resolv: &str, hosts: &str, nsswitch: &str) -> ResolverConfig {
    let mut config = match std::fs::read_to_string(resolv) {
        Ok(text) => parse_resolv_conf(&text),
        Err(error) => ResolverConfig {
            error: Some(format!("{resolv}: {error}")),
            ..Default::default()
        },
    };
    config.hosts_entries = std::fs::read_to_string(hosts)
        .ok()
        .map(|text| count_hosts(&text));
    config.nsswitch_hosts = std::fs::read_to_string(nsswitch)
        .ok()
        .and_then(|text| nsswitch_hosts(&text));
    config
}
