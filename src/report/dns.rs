//! The `dns` object of `snapshot --json`: the man page's probes[] and passive[]
//! (server, name, qtype, latency_ms, outcome; plus t and answers), per-server
//! figures of the interval, and the resolver configuration.

use crate::dns::config::{ResolverConfig, stub_label};
use crate::dns::stats::{self, Stats};
use crate::dns::{DnsResult, DnsSample};
use serde::Serialize;

#[derive(Serialize)]
pub struct DnsJson<'a> {
    probes: &'a [DnsResult],
    passive: &'a [DnsResult],
    /// Per server and source ("probe" / "passive"), over this interval.
    servers: Vec<ServerJson>,
    config: ConfigJson<'a>,
    probe_servers: &'a [String],
    probe_specs: &'a [String],
    passive_on: bool,
    passive_error: Option<&'a str>,
    passive_dropped: u64,
    timeout_s: f64,
}

#[derive(Serialize)]
struct ServerJson {
    server: String,
    source: &'static str,
    count: u64,
    p50_ms: Option<f64>,
    p90_ms: Option<f64>,
    p99_ms: Option<f64>,
    max_ms: Option<f64>,
    timeouts: u64,
    servfail_percent: f64,
    nxdomain_percent: f64,
    refused_percent: f64,
}

#[derive(Serialize)]
struct ConfigJson<'a> {
    nameservers: Vec<NameserverJson<'a>>,
    search: &'a [String],
    timeout_s: u32,
    attempts: u32,
    rotate: bool,
    ndots: u32,
    hosts_entries: Option<usize>,
    nsswitch_hosts: Option<&'a str>,
    error: Option<&'a str>,
}

#[derive(Serialize)]
struct NameserverJson<'a> {
    address: &'a str,
    stub: Option<&'static str>,
}

fn server_json(stats: &Stats, source: &'static str) -> ServerJson {
    ServerJson {
        server: stats.key.clone(),
        source,
        count: stats.count,
        p50_ms: stats.percentile(50.0),
        p90_ms: stats.percentile(90.0),
        p99_ms: stats.percentile(99.0),
        max_ms: stats.max(),
        timeouts: stats.timeouts,
        servfail_percent: stats.rate(stats.servfail),
        nxdomain_percent: stats.rate(stats.nxdomain),
        refused_percent: stats.rate(stats.refused),
    }
}

fn config_json(c: &ResolverConfig) -> ConfigJson<'_> {
    ConfigJson {
        nameservers: c
            .nameservers
            .iter()
            .map(|address| NameserverJson {
                address,
                stub: stub_label(address),
            })
            .collect(),
        search: &c.search,
        timeout_s: c.timeout_s,
        attempts: c.attempts,
        rotate: c.rotate,
        ndots: c.ndots,
        hosts_entries: c.hosts_entries,
        nsswitch_hosts: c.nsswitch_hosts.as_deref(),
        error: c.error.as_deref(),
    }
}

pub fn json(dns: &DnsSample) -> DnsJson<'_> {
    let mut servers: Vec<ServerJson> = stats::by_server(&dns.probes)
        .iter()
        .map(|s| server_json(s, "probe"))
        .collect();
    servers.extend(
        stats::by_server(&dns.passive)
            .iter()
            .map(|s| server_json(s, "passive")),
    );
    DnsJson {
        probes: &dns.probes,
        passive: &dns.passive,
        servers,
        config: config_json(&dns.config),
        probe_servers: &dns.servers,
        probe_specs: &dns.probe_specs,
        passive_on: dns.passive_on,
        passive_error: dns.passive_error.as_deref(),
        passive_dropped: dns.passive_dropped,
        timeout_s: dns.timeout_s,
    }
}
