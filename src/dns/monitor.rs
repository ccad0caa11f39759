//! What the live view, `snapshot`, `record` and `export` hold for DNS: the
//! resolver configuration read at start, the prober (only once a probe is
//! asked for) and the DnsSample each tick gets.

use super::config::{self, ResolverConfig};
use super::prober::Prober;
use super::{DnsSample, ProbeSpec, parse_probe, parse_server};
use crate::capture::live::Capture;
use crate::cli::DnsArgs;
use crate::collect::netns::Target;
use anyhow::{Result, bail};
use std::net::SocketAddr;
use std::time::Duration;

pub struct DnsMonitor {
    config: ResolverConfig,
    servers: Vec<SocketAddr>,
    /// Why there is no server to probe, if there is none.
    no_servers: Option<String>,
    timeout: Duration,
    interval: Duration,
    target: Target,
    prober: Option<Prober>,
}

impl DnsMonitor {
    /// Reads the resolver configuration and starts the probes asked for.
    /// A bad --dns-probe or --dns-server is an error here (one line).
    pub fn start(target: &Target, args: &DnsArgs, interval: Duration) -> Result<Self> {
        Self::with_config(target, args, interval, config::read_system())
    }

    pub fn with_config(
        target: &Target,
        args: &DnsArgs,
        interval: Duration,
        config: ResolverConfig,
    ) -> Result<Self> {
        let mut specs: Vec<ProbeSpec> = Vec::new();
        for text in &args.dns_probe {
            let spec = parse_probe(text).map_err(|e| anyhow::anyhow!("--dns-probe {e}"))?;
            if !specs.contains(&spec) {
                specs.push(spec);
            }
        }
        let mut servers = Vec::new();
        for text in &args.dns_server {
            let server = parse_server(text).map_err(|e| anyhow::anyhow!("--dns-server {e}"))?;
            if !servers.contains(&server) {
                servers.push(server);
            }
        }
        let mut no_servers = None;
        if servers.is_empty() {
            // The documented default: every nameserver glibc would use.
            servers = config
                .nameservers
                .iter()
                .take(config::MAXNS)
                .filter_map(|s| parse_server(s).ok())
                .collect();
            if servers.is_empty() {
                no_servers = Some(
                    "no DNS server to probe: /etc/resolv.conf lists none; give --dns-server ADDR"
                        .to_string(),
                );
            }
        }
        if !specs.is_empty()
            && let Some(why) = &no_servers
        {
            bail!("{why}");
        }
        let timeout = args
            .dns_timeout
            .unwrap_or(Duration::from_secs(u64::from(config.timeout_s)));
        let mut monitor = Self {
            config,
            servers,
            no_servers,
            timeout,
            interval,
            target: target.clone(),
            prober: None,
        };
        for spec in specs {
            monitor.add(spec)?;
        }
        Ok(monitor)
    }

    /// Adds a probe typed in the DNS tab; the error is one line to show.
    pub fn add_probe(&mut self, text: &str) -> Result<String, String> {
        let spec = parse_probe(text)?;
        if let Some(why) = &self.no_servers {
            return Err(why.clone());
        }
        let label = spec.to_string();
        self.add(spec).map_err(|e| format!("{e:#}"))?;
        Ok(label)
    }

    fn add(&mut self, spec: ProbeSpec) -> Result<()> {
        match &self.prober {
            Some(prober) => prober.add(spec),
            None => {
                self.prober = Some(Prober::spawn(
                    &self.target,
                    self.servers.clone(),
                    vec![spec],
                    self.interval,
                    self.timeout,
                )?);
            }
        }
        Ok(())
    }

    /// Tells the capture the client's timeout for passive matching.
    pub fn attach(&self, capture: Option<&Capture>) {
        if let Some(capture) = capture {
            capture.set_dns_timeout(self.timeout.as_secs_f64());
        }
    }

    /// What one sample carries: the results completed since the last call.
    pub fn sample(&self, capture: Option<&Capture>) -> DnsSample {
        let (passive, passive_dropped) = capture.map(|c| c.take_dns()).unwrap_or_default();
        let (passive_on, passive_error) = match capture {
            Some(c) if c.is_active() => (true, None),
            Some(c) => (false, c.error()),
            None => (
                false,
                Some("no packet capture (--no-capture, record or export)".to_string()),
            ),
        };
        DnsSample {
            config: self.config.clone(),
            servers: self.servers.iter().map(ToString::to_string).collect(),
            probe_specs: self.prober.as_ref().map(Prober::specs).unwrap_or_default(),
            probes: self.prober.as_ref().map(Prober::take).unwrap_or_default(),
            passive,
            passive_dropped,
            passive_on,
            passive_error,
            timeout_s: self.timeout.as_secs_f64(),
        }
    }
}
