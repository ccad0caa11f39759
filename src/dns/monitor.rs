//! What the live view, `snapshot`, `record` and `export` hold for DNS: the
//! resolver configuration read at start, the prober (only once a probe is
//! asked for) and the DnsSample each tick gets.

use super::config::{self, ResolverConfig};
use super::prober::Prober;
use super::{DnsResult, DnsSample, ProbeSpec, parse_probe, parse_server};
use crate::capture::live::Capture;
use crate::collect::netns::Target;
use anyhow::{Result, bail};
use std::net::SocketAddr;
use std::time::Duration;

/// What DNS monitoring is asked to do (cli's DnsArgs converts to this).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DnsOptions {
    /// Probes as typed: NAME, A:NAME, AAAA:NAME, PTR:ADDR or an address.
    pub probes: Vec<String>,
    /// Servers to probe as typed, ADDR or ADDR:PORT; empty: resolv.conf's.
    pub servers: Vec<String>,
    /// When a query unanswered counts as a timeout; None: resolv.conf's.
    pub timeout: Option<Duration>,
}

pub struct DnsMonitor {
    config: ResolverConfig,
    servers: Vec<SocketAddr>,
    /// Why there is no server to probe, if there is none.
    no_servers: Option<String>,
    timeout: Duration,
    interval: Duration,
    target: Target,
    prober: Option<Prober>,
    /// The results of the last `window()` seconds, for the findings: one
    /// interval alone makes them flicker (a dead server yields one timeout
    /// per timeout period, so most intervals have no result at all).
    recent: std::sync::Mutex<std::collections::VecDeque<(std::time::Instant, DnsResult)>>,
}

/// Results the window keeps at most (a busy resolver seen passively).
const RECENT_MAX: usize = 256;

impl DnsMonitor {
    /// Reads the resolver configuration and starts the probes asked for.
    /// A bad --dns-probe or --dns-server is an error here (one line).
    pub fn start(target: &Target, options: &DnsOptions, interval: Duration) -> Result<Self> {
        Self::with_config(target, options, interval, config::read_system())
    }

    pub fn with_config(
        target: &Target,
        options: &DnsOptions,
        interval: Duration,
        config: ResolverConfig,
    ) -> Result<Self> {
        let mut specs: Vec<ProbeSpec> = Vec::new();
        for text in &options.probes {
            let spec = parse_probe(text).map_err(|e| anyhow::anyhow!("--dns-probe {e}"))?;
            if !specs.contains(&spec) {
                specs.push(spec);
            }
        }
        let mut servers = Vec::new();
        for text in &options.servers {
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
        let timeout = options
            .timeout
            .unwrap_or(Duration::from_secs(u64::from(config.timeout_s)));
        let mut monitor = Self {
            config,
            servers,
            no_servers,
            timeout,
            interval,
            target: target.clone(),
            prober: None,
            recent: std::sync::Mutex::default(),
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

    /// How far back the findings look: long enough to always hold the
    /// last result of a server that only times out.
    pub fn window(&self) -> Duration {
        ((self.timeout + self.interval) * 2).max(Duration::from_secs(10))
    }

    /// What one sample carries: the results completed since the last call,
    /// and those of the window for the findings.
    pub fn sample(&self, capture: Option<&Capture>) -> DnsSample {
        let (mut passive, passive_dropped) = capture.map(|c| c.take_dns()).unwrap_or_default();
        let probes = self.prober.as_ref().map(Prober::take).unwrap_or_default();
        // Our own probes, seen on the wire too, count once: as probes.
        if let Some(prober) = &self.prober {
            passive.retain(|seen| !prober.sent(seen));
        }
        let recent = self.remember(&probes, &passive);
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
            probes,
            passive,
            passive_dropped,
            passive_on,
            passive_error,
            timeout_s: self.timeout.as_secs_f64(),
            recent,
            recent_s: self.window().as_secs_f64(),
        }
    }

    /// Adds this interval's results to the window, forgets the old ones,
    /// and returns the window's results, oldest first.
    fn remember(&self, probes: &[DnsResult], passive: &[DnsResult]) -> Vec<DnsResult> {
        let now = std::time::Instant::now();
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.extend(probes.iter().chain(passive).map(|r| (now, r.clone())));
        while recent.len() > RECENT_MAX
            || recent
                .front()
                .is_some_and(|(at, _)| now.duration_since(*at) > self.window())
        {
            recent.pop_front();
        }
        recent.iter().map(|(_, r)| r.clone()).collect()
    }
}
