//! What `netlens replay --json` and `--info` print about a recording, and
//! the sizes and counts the recorders report.

use super::format::Stream;
use super::reader::Reader;
use super::time;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::report::{Sections, json};
use crate::text::escape_control;
use anyhow::{Result, bail};
use std::io::Write;

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

/// On stderr: a file still being written holds only what was written so
/// far, and --follow prints the rest as it comes.
pub fn note_if_being_written(reader: &Reader) {
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
    let sections = Sections::ALL;
    let mut previous: Option<Sample> = None;
    // As snapshot: findings with hysteresis from the first printed sample.
    let mut engine = crate::findings::Engine::default();
    let mut printed = 0u64;
    for entry in reader.sample_segments() {
        // One sample at a time: a segment's samples are never all held.
        let (last, damage) = reader.each_sample(&entry, |before, sample| {
            if let Some(previous) = before.or(previous.as_ref()) {
                let found = engine.step(Some(previous), sample, limits);
                writeln!(
                    out,
                    "{}",
                    json::sample_line(previous, sample, sections, &found)
                )?;
                printed += 1;
            }
            Ok(())
        })?;
        if last.is_some() {
            previous = last;
        }
        if let Some(damage) = damage {
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
    let line = format!("{}: {damage}", reader.path().display());
    eprintln!("netlens: warning: {}", crate::text::escape_control(&line));
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
/// The description's texts are whatever the file says (a recording handed
/// over by someone else), so they are written through escape_control.
pub fn print_info(reader: &Reader, out: &mut impl Write) -> Result<()> {
    let path = reader.path().display().to_string();
    let path = escape_control(&path);
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
            escape_control(&meta.netlens),
            escape_control(&meta.hostname),
            escape_control(&meta.netns),
            meta.interval
        )?;
        if !meta.command.is_empty() {
            let command = meta.command.join(" ");
            writeln!(out, "command:    {}", escape_control(&command))?;
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
            // Counted as they inflate, one record held at a time.
            let mut read = reader.records_of(entry)?;
            for record in read.by_ref() {
                records += 1;
                raw += record.len() as u64;
            }
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
        writeln!(out, "damage:     {}", escape_control(&d))?;
    }
    Ok(())
}
