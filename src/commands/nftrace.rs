//! `netlens nftrace PROTO A B`: one flow's packets through the nftables
//! rules, as `nft monitor trace` prints them after a `meta nftrace set 1`,
//! without touching the user's ruleset (`collect::firewall::trace`). Each
//! line is flushed; SIGINT, SIGTERM and SIGHUP stop it, and the table it
//! added goes with it.

use crate::cli::{CollectArgs, NftraceArgs};
use crate::collect::firewall::trace::{TraceEvent, TraceFlow, Tracer};
use crate::collect::firewall::{RuleTexts, trace_lines};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::collections::HashSet;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

/// How often the events are read.
const POLL: Duration = Duration::from_millis(50);

pub fn run(collect: &CollectArgs, args: &NftraceArgs) -> Result<()> {
    let flow = flow(args)?;
    let target = collect.one_target("nftrace")?;
    // This command has one thread: it enters the namespace itself.
    if let Some(file) = target.open()? {
        crate::collect::netns::enter(&file, target.label())?;
    }
    let mut tracer = Tracer::start(&flow).map_err(|error| match error.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => {
            anyhow::anyhow!("tracing needs CAP_NET_ADMIN (run as root)")
        }
        Some(libc::EEXIST) => anyhow::anyhow!("this netlens already traces in {}", target.label()),
        _ => anyhow::anyhow!("cannot start the trace in {}: {error}", target.label()),
    })?;
    let mut rules = RuleTexts::new();
    super::capture::catch_signals();
    eprintln!(
        "netlens: tracing {} {} <> {} in {} (table inet {}; Ctrl-C stops)",
        args.proto,
        flow.a,
        flow.b,
        target.label(),
        tracer.table()
    );
    let deadline = args.duration.map(|d| Instant::now() + d);
    let mut packets = HashSet::new();
    let mut out = std::io::stdout().lock();
    while !super::capture::stopped() && deadline.is_none_or(|d| Instant::now() < d) {
        let events = tracer.poll().context("reading the trace events")?;
        if events.is_empty() {
            std::thread::sleep(POLL);
            continue;
        }
        for event in &events {
            let text = rules.text(event).map(str::to_string);
            if args.json {
                crate::text::json::to_writer(&mut out, &Json::new(event, text.as_deref()))?;
                writeln!(out).map_err(super::stdout::error)?;
            } else {
                for line in trace_lines(event, text.as_deref()) {
                    writeln!(out, "{line}").map_err(super::stdout::error)?;
                }
            }
            packets.insert(event.id);
        }
        out.flush().map_err(super::stdout::error)?;
        if args.count.is_some_and(|n| packets.len() >= n as usize) {
            break;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct Json<'a> {
    t: f64,
    #[serde(flatten)]
    event: &'a TraceEvent,
    /// The rule's text as `nft list ruleset` prints it, when known.
    rule: Option<&'a str>,
}

impl<'a> Json<'a> {
    fn new(event: &'a TraceEvent, rule: Option<&'a str>) -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Json { t, event, rule }
    }
}

/// The flow the arguments name.
fn flow(args: &NftraceArgs) -> Result<TraceFlow> {
    let proto = match args.proto.to_ascii_lowercase().as_str() {
        "tcp" => libc::IPPROTO_TCP as u8,
        "udp" => libc::IPPROTO_UDP as u8,
        "sctp" => libc::IPPROTO_SCTP as u8,
        "icmp" => libc::IPPROTO_ICMP as u8,
        "icmpv6" | "icmp6" => libc::IPPROTO_ICMPV6 as u8,
        other => other.parse::<u8>().map_err(|_| {
            anyhow::anyhow!("unknown protocol '{other}': tcp, udp, sctp, icmp, icmpv6 or a number")
        })?,
    };
    let a = end(&args.a)?;
    let b = end(&args.b)?;
    if a.is_ipv4() != b.is_ipv4() {
        bail!("{a} and {b}: both ends must be IPv4 or both IPv6");
    }
    Ok(TraceFlow { proto, a, b })
}

/// ADDR, ADDR:PORT, [ADDR]:PORT; no port is port 0 (any).
fn end(text: &str) -> Result<SocketAddr> {
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    if let Ok(ip) = text.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 0));
    }
    bail!(
        "'{}' is not ADDR, ADDR:PORT or [ADDR]:PORT",
        crate::text::escape_control(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn ends_with_and_without_ports() {
        assert_eq!(
            end("198.18.0.1").unwrap(),
            SocketAddr::new(Ipv4Addr::new(198, 18, 0, 1).into(), 0)
        );
        assert_eq!(end("198.18.0.1:80").unwrap().port(), 80);
        assert_eq!(end("[2001:db8::1]:443").unwrap().port(), 443);
        assert_eq!(
            end("2001:db8::1").unwrap().ip(),
            IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1))
        );
        assert!(end("host:80").is_err());
    }
}
