//! `netlens record` (headless) and `netlens replay` (UI, --json, --info).

use super::format::Stream;
use super::reader::Reader;
use super::{Recorder, time};
use crate::cli::{Cli, CollectArgs, RecordArgs, ReplayArgs};
use crate::collect::netns::Target;
use crate::collect::{Demand, Sampler, SamplerEvent};
use crate::config::Config;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::report::{Sections, json};
use anyhow::{Context, Result, bail};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use tokio::signal::unix::{SignalKind, signal};

/// `netlens record -o FILE`: samples (and, unless --no-capture, the flows
/// and packets captured) to a file until the duration is up or SIGINT /
/// SIGTERM / SIGHUP; either way the file is closed with its index. A write
/// error stops it with the reason and what was saved.
pub fn record(collect: &CollectArgs, args: &RecordArgs, limits: &Thresholds) -> Result<()> {
    let target = Target::from_args(collect.netns.as_deref(), collect.pid);
    let label = target.label().to_string();
    // Replay should show the Conntrack tab's entries too (dumped at most
    // once a second).
    let demand = Arc::new(Demand::default());
    demand.set_conntrack_entries(true);
    let dns = crate::dns::DnsMonitor::start(&target, &args.dns.options(), collect.interval)?;
    let (sampler, mut events) = Sampler::spawn_with(target.clone(), collect.interval, demand)?;
    // As the live view: capture where permitted, unless --no-capture.
    let (capture, _lines) = crate::capture::live::start(&target, &args.capture.options())?;
    if let Some(error) = capture.as_ref().and_then(|c| c.summary().error) {
        eprintln!("netlens: warning: no packets recorded: {error}");
    }
    dns.attach(capture.as_ref());
    let mut recorder = Recorder::create_with_capture(
        &args.output,
        &super::meta(&label, collect.interval),
        capture.as_ref(),
    )?;
    recorder.thresholds = *limits;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let progress = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let outcome: Result<()> = runtime.block_on(async {
        let mut sigint = signal(SignalKind::interrupt())?;
        let mut sigterm = signal(SignalKind::terminate())?;
        // An SSH session that drops: close the file as on SIGTERM.
        let mut sighup = signal(SignalKind::hangup())?;
        let deadline = args.duration.map(|d| tokio::time::Instant::now() + d);
        let mut previous: Option<Sample> = None;
        loop {
            let until = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                event = events.recv() => match event {
                    Some(SamplerEvent::Sample(mut sample)) => {
                        sample.capture = capture.as_ref().map(|c| c.summary());
                        sample.dns = Some(dns.sample(capture.as_ref()));
                        recorder.record(previous.as_ref(), &mut sample)?;
                        previous = Some(*sample);
                        if progress {
                            let stats = recorder.stats();
                            // Never eprint!: it panics once stderr is a
                            // terminal that hung up, before the file closes.
                            let _ = write!(
                                std::io::stderr(),
                                "\rrecording to {}: {} samples, {}, {}   ",
                                recorder.path().display(),
                                stats.records[0],
                                size(stats.bytes),
                                time::span(started.elapsed().as_secs_f64()),
                            );
                        }
                    }
                    Some(SamplerEvent::Error(error)) => {
                        let _ = writeln!(std::io::stderr(), "\rnetlens: warning: {error}");
                    }
                    None => bail!("the sampler stopped unexpectedly"),
                },
                _ = sigint.recv() => return Ok(()),
                _ = sigterm.recv() => return Ok(()),
                _ = sighup.recv() => return Ok(()),
                _ = until => return Ok(()),
            }
        }
    });
    drop(sampler);
    drop(capture);
    let path = recorder.path().to_path_buf();
    let mut stderr = std::io::stderr();
    if progress {
        let _ = writeln!(stderr);
    }
    if let Err(error) = outcome {
        // A failed write (a full disk) names its cause; the file holds
        // what was written before it.
        let saved = recorder.stats();
        let closed = recorder.finish().is_ok();
        bail!("{error:#}; {}", saved_text(&saved, &path, closed));
    }
    // Close the file properly even when sampling failed.
    let stats = recorder.finish()?;
    let _ = writeln!(
        stderr,
        "recorded {} samples ({}) to {}",
        stats.records[0],
        size(stats.bytes),
        path.display()
    );
    Ok(())
}

/// How much of a recording stopped early was saved, and whether it was
/// closed (else replay rebuilds its index by a scan).
pub fn saved_text(
    stats: &super::writer::WriteStats,
    path: &std::path::Path,
    closed: bool,
) -> String {
    let state = if closed {
        ""
    } else {
        ", not closed: replay rebuilds its index"
    };
    format!(
        "{} samples ({}) saved in {}{state}",
        stats.records[0],
        size(stats.bytes),
        path.display()
    )
}

pub fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

/// `netlens replay FILE`.
pub fn replay(cli: &Cli, args: &ReplayArgs, config: &Config) -> Result<()> {
    if args.info {
        let reader = Reader::open(&args.file)?;
        return print_info(&reader, &mut std::io::stdout().lock());
    }
    if args.json {
        let printed = if args.follow {
            super::follow::print_json(
                &args.file,
                &mut std::io::stdout().lock(),
                &config.thresholds,
            )
        } else {
            let reader = Reader::open(&args.file)?;
            note_if_being_written(&reader);
            print_json(&reader, &mut std::io::stdout().lock(), &config.thresholds)
        };
        return match printed {
            Err(error)
                if error
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
            {
                Ok(())
            }
            other => other,
        };
    }
    crate::app::run::replay(cli, args, config)
}

/// On stderr: a file still being written holds only what was written so
/// far, and --follow prints the rest as it comes.
fn note_if_being_written(reader: &Reader) {
    if super::follow::being_written(reader) {
        eprintln!(
            "netlens: note: {} is still being written; replay --json --follow {} \
             prints new samples as they are appended",
            reader.path().display(),
            reader.path().display()
        );
    }
}

/// Every sample but the first as a `snapshot --json` line (the first is the
/// baseline its rates need, as in `snapshot`). Damage is reported on stderr
/// and skipped; the samples around it still print.
pub fn print_json(reader: &Reader, out: &mut impl Write, limits: &Thresholds) -> Result<()> {
    let sections = Sections::from_list(&[]);
    let mut previous: Option<Sample> = None;
    // As snapshot: findings with hysteresis from the first printed sample.
    let mut engine = crate::findings::Engine::default();
    let mut printed = 0u64;
    for entry in reader.sample_segments() {
        let read = reader.read_samples(&entry)?;
        for sample in read.records {
            if let Some(previous) = &previous {
                let found = engine.step(Some(previous), &sample, limits);
                writeln!(
                    out,
                    "{}",
                    json::sample_line(previous, &sample, sections, &found)
                )?;
                printed += 1;
            }
            previous = Some(sample);
        }
        if let Some(damage) = read.damage {
            warn(reader, &damage);
        }
    }
    for damage in &reader.scan_damage {
        warn(reader, damage);
    }
    out.flush()?;
    if previous.is_none() {
        bail!("{}: no sample in it can be read", reader.path().display());
    }
    if printed == 0 {
        eprintln!(
            "netlens: {}: only one sample, and rates need two",
            reader.path().display()
        );
    }
    Ok(())
}

fn warn(reader: &Reader, damage: &str) {
    eprintln!("netlens: warning: {}: {damage}", reader.path().display());
}

struct StreamInfo {
    stream: Stream,
    records: usize,
    segments: usize,
    raw: u64,
    disk: u64,
}

/// Packets recorded, and left out by the bounds.
fn packet_count(reader: &Reader, damage: &mut Vec<String>) -> Result<(u64, u64)> {
    let (mut kept, mut skipped) = (0u64, 0u64);
    for entry in reader.stream_segments(Stream::Packets) {
        let read = reader.read_packets(&entry)?;
        for batch in &read.records {
            kept += batch.packets.len() as u64;
            skipped += batch.skipped;
        }
        if let Some(d) = read.damage {
            damage.push(format!("packets: {d}"));
        }
    }
    Ok((kept, skipped))
}

/// `replay --info`: reads every segment to count what is really readable.
pub fn print_info(reader: &Reader, out: &mut impl Write) -> Result<()> {
    let path = reader.path().display();
    let state = if reader.closed_cleanly {
        "closed cleanly"
    } else if super::follow::being_written(reader) {
        "not closed: still being written (replay --json --follow follows it as it grows)"
    } else {
        "not closed (the recorder was stopped): index rebuilt by a scan"
    };
    writeln!(
        out,
        "file:       {path} ({}, format {}.{}, {state})",
        size(reader.len),
        reader.header.major,
        reader.header.minor
    )?;
    if let Some(meta) = &reader.meta {
        writeln!(
            out,
            "written by: netlens {} on {}, namespace {}, interval {}s",
            meta.netlens, meta.hostname, meta.netns, meta.interval
        )?;
        if !meta.command.is_empty() {
            writeln!(out, "command:    {}", meta.command.join(" "))?;
        }
    } else {
        writeln!(
            out,
            "written by: unknown (the description chunk is damaged)"
        )?;
    }
    let mut damage: Vec<String> = reader.scan_damage.clone();
    let mut streams = Vec::new();
    for stream in Stream::ALL {
        let segments = reader.stream_segments(stream);
        if segments.is_empty() {
            continue;
        }
        let (mut records, mut raw, mut disk) = (0usize, 0u64, 0u64);
        for entry in &segments {
            let read = reader.read_raw(entry)?;
            records += read.records.len();
            raw += read.records.iter().map(|r| r.len() as u64).sum::<u64>();
            disk += read.disk_bytes;
            if let Some(d) = read.damage {
                damage.push(format!("{}: {d}", stream.name()));
            }
        }
        streams.push(StreamInfo {
            stream,
            records,
            segments: segments.len(),
            raw,
            disk,
        });
    }
    let packets = packet_count(reader, &mut damage)?;
    let samples = reader.sample_segments();
    let samples_info = streams.iter().find(|s| s.stream == Stream::Samples);
    let count = samples_info.map_or(0, |s| s.records);
    if let (Some(first), Some(last)) = (samples.first(), samples.last()) {
        let offset = time::local_offset(first.first_t);
        writeln!(
            out,
            "start:      {}\nend:        {}\nduration:   {}",
            super::date_time(first.first_t, offset),
            super::date_time(last.last_t, offset),
            time::span(last.last_t - first.first_t)
        )?;
    }
    writeln!(out, "samples:    {count}")?;
    if let Some(info) = samples_info.filter(|_| count > 0) {
        writeln!(
            out,
            "size:       {} per sample on disk ({} uncompressed)",
            size(info.disk / count as u64),
            size(info.raw / count as u64)
        )?;
    }
    let list: Vec<String> = streams
        .iter()
        .map(|s| {
            format!(
                "{} ({} records, {} segments)",
                s.stream.name(),
                s.records,
                s.segments
            )
        })
        .collect();
    writeln!(out, "streams:    {}", list.join(", "))?;
    for s in &streams {
        let what = match s.stream {
            Stream::Packets => format!(", {} packets, {} left out", packets.0, packets.1),
            _ => String::new(),
        };
        writeln!(
            out,
            "  {:<9} {} on disk, {} uncompressed{what}",
            s.stream.name(),
            size(s.disk),
            size(s.raw)
        )?;
    }
    if let Some(meta) = &reader.meta {
        let capture = match (meta.capture, meta.payloads) {
            (false, _) => "off (no packets recorded)",
            (true, false) => "on, packet headers (first 384 bytes of each)",
            (true, true) => "on, whole packets (--payload)",
        };
        writeln!(out, "capture:    {capture}")?;
    }
    let mut seen = std::collections::HashSet::new();
    damage.retain(|d| seen.insert(d.clone()));
    if damage.is_empty() {
        writeln!(out, "damage:     none")?;
    }
    for d in damage {
        writeln!(out, "damage:     {d}")?;
    }
    Ok(())
}
