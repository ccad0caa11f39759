//! `netlens load ...`: builds a [`Spec`] from the command line, runs it in the
//! foreground and prints intervals and the summary (text or JSON Lines).

use crate::cli::{CollectArgs, LoadArgs, LoadKind};
use crate::collect::netns;
use crate::load::serve::{ServeSpec, Server};
use crate::load::{Interval, Spec, Stop, http, pktgen, probe, resolve, tcp, udp};
use anyhow::{Context, Result};
use std::io::Write;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

pub fn command(args: &LoadArgs, collect: &CollectArgs) -> Result<()> {
    // --netns / --pid: the whole run (server or client) lives in that
    // namespace. Entered before any thread starts, so every thread is there.
    let target = collect.one_target("load")?;
    if let Some(file) = target.open()? {
        netns::enter(&file, target.label())?;
    }
    let interval = collect.interval;
    let (spec, json) = match &args.kind {
        LoadKind::Serve(a) => return serve(a),
        LoadKind::Tcp(a) => (
            Spec::Tcp(tcp::TcpSpec {
                to: resolve(&a.to)?,
                duration: crate::load::check_duration(a.time)?,
                streams: a.parallel,
                bitrate: a.bitrate,
                reverse: a.reverse,
                interval,
            }),
            a.json,
        ),
        LoadKind::Udp(a) => (
            Spec::Udp(udp::UdpSpec {
                to: resolve(&a.to)?,
                duration: crate::load::check_duration(a.time)?,
                bitrate: a.bitrate,
                size: a.size as usize,
                interval,
            }),
            a.json,
        ),
        LoadKind::Http(a) => (
            Spec::Http(http::HttpSpec::new(
                &a.url,
                a.connections,
                a.time,
                a.threads,
                a.timeout,
                a.rate,
                interval,
            )?),
            a.json,
        ),
        LoadKind::Pktgen(a) => (
            Spec::Pktgen(pktgen::PktgenSpec {
                root: a.proc_root.clone(),
                dev: a.dev.clone(),
                dst: a
                    .dst
                    .parse::<IpAddr>()
                    .map_err(|_| anyhow::anyhow!("'{}' is not an IP address", a.dst))?,
                dst_mac: pktgen::parse_mac(&a.dst_mac)?,
                count: a.count,
                size: a.size,
                delay_ns: a.delay,
                threads: a.threads,
                clone_skb: a.clone_skb,
                duration: crate::load::check_duration(a.time)?,
            }),
            a.json,
        ),
        LoadKind::Probe(a) => (
            Spec::Probe(probe::ProbeSpec {
                to: resolve(&a.to)?,
                count: a.count,
                every: a.every,
                timeout: a.timeout,
            }),
            a.json,
        ),
    };
    if !json {
        super::stdout::print(format!("{}\n", preamble(&spec)))?;
    }
    let stop = Stop::new();
    let stdout = Mutex::new(std::io::stdout());
    let report = |interval: Interval| {
        let mut out = stdout.lock().unwrap_or_else(|e| e.into_inner());
        let _ = if json {
            writeln!(out, "{}", json_line(&interval.json))
        } else {
            writeln!(out, "{}", interval.text)
        };
        let _ = out.flush();
    };
    let outcome = spec.run(&stop, &report)?;
    let last = if json {
        json_line(&outcome.json)
    } else {
        outcome.text
    };
    super::stdout::print(last + "\n")
}

/// The first lines of the text output, as the tool it imitates prints them.
pub fn preamble(spec: &Spec) -> String {
    match spec {
        Spec::Tcp(s) => format!(
            "Connecting to host {}, port {}{} ({} stream{}, {:?})\n[ ID] Interval           Transfer     Bitrate            Retr  Cwnd",
            s.to.ip(),
            s.to.port(),
            if s.reverse {
                "; reverse mode, the server sends"
            } else {
                ""
            },
            s.streams,
            if s.streams == 1 { "" } else { "s" },
            s.duration
        ),
        Spec::Udp(s) => format!(
            "Connecting to host {}, port {} (UDP, {}-byte datagrams, {:?})\n[ ID] Interval           Transfer     Bitrate            Datagrams",
            s.to.ip(),
            s.to.port(),
            s.size,
            s.duration
        ),
        Spec::Http(s) => format!(
            "Running {:?} test @ {}\n  {} threads and {} connections",
            s.duration, s.url, s.threads, s.connections
        ),
        Spec::Pktgen(s) => format!(
            "pktgen: {} thread(s) on {}, {} packets of {} bytes each to {} ({})",
            s.threads, s.dev, s.count, s.size, s.dst, s.dst_mac
        ),
        Spec::Probe(s) => format!("HPING {} (TCP connect): S set, {} probes", s.to, s.count),
    }
}

fn serve(args: &crate::cli::ServeArgs) -> Result<()> {
    let bind: IpAddr = args
        .bind
        .parse()
        .map_err(|_| anyhow::anyhow!("'{}' is not an IP address to listen on", args.bind))?;
    if let Some(duration) = args.duration {
        crate::load::check_duration(duration)?;
    }
    let json = args.json;
    let sink = Arc::new(move |value: serde_json::Value, text: String| {
        let mut out = std::io::stdout().lock();
        let _ = if json {
            writeln!(out, "{}", json_line(&value))
        } else {
            writeln!(out, "{text}")
        };
        let _ = out.flush();
    });
    let spec = ServeSpec {
        bind,
        port: args.port,
        delay: args.delay,
        body: args.body as usize,
    };
    let server = Server::start(&spec, sink).context("cannot start the server")?;
    {
        let mut out = std::io::stdout().lock();
        if json {
            writeln!(
                out,
                "{}",
                json_line(
                    &serde_json::json!({"type": "listening", "address": server.addr.to_string(),
                                   "port": server.addr.port()})
                )
            )
        } else {
            writeln!(
                out,
                "Server listening on {} (TCP and UDP: tcp, udp and http tests)",
                server.addr
            )
        }
        .and_then(|()| out.flush())
        .map_err(super::stdout::error)?;
    }
    match args.duration {
        Some(duration) => std::thread::sleep(duration),
        None => loop {
            std::thread::park();
        },
    }
    server.stop();
    Ok(())
}

/// A JSON line as every netlens JSON writer makes it (text::json).
fn json_line(value: &serde_json::Value) -> String {
    crate::text::json::to_string(value).unwrap_or_default()
}
