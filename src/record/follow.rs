//! A recording still being written: telling it from one whose recorder
//! was stopped, and `replay --json --follow`, which prints its samples as
//! they are appended (as `tail -f`) until the recorder closes the file.

use super::reader::{Reader, Refresh};
use crate::findings::{Engine, Thresholds};
use crate::model::Sample;
use crate::report::{Sections, json};
use anyhow::{Context, Result};
use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};
use tokio::signal::unix::{SignalKind, signal};

/// A file modified this recently (or within two sampling intervals) looks
/// like one whose recorder is still running.
const RECENT: Duration = Duration::from_secs(5);

/// Whether a recording without its index is still being written: some
/// process holds it open for writing (seen in /proc, all of it as root), or
/// it changed within the last few seconds (or two of its intervals).
pub fn being_written(reader: &Reader) -> bool {
    if reader.closed_cleanly {
        return false;
    }
    let interval = reader.meta.as_ref().map_or(0.0, |m| m.interval);
    let recent = RECENT.max(Duration::from_secs_f64((2.0 * interval).clamp(0.0, 3600.0)));
    let modified_lately = std::fs::metadata(reader.path())
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age <= recent);
    modified_lately || held_for_writing(reader.path())
}

/// Whether a process other than this one has `path` open for writing: a
/// descriptor in /proc/PID/fd on the same file whose fdinfo flags are not
/// read-only. Processes /proc does not show us are not counted.
pub fn held_for_writing(path: &Path) -> bool {
    let Ok(target) = std::fs::metadata(path) else {
        return false;
    };
    let own = std::process::id().to_string();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    for process in procs.flatten() {
        let pid = process.file_name();
        let pid = pid.to_string_lossy();
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == own {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            // stat follows the fd's link to the open file itself.
            let same = std::fs::metadata(fd.path())
                .is_ok_and(|m| m.dev() == target.dev() && m.ino() == target.ino());
            if same && writable(&process.path(), &fd.file_name().to_string_lossy()) {
                return true;
            }
        }
    }
    false
}

/// Whether /proc/PID/fdinfo/FD's flags (octal) open the file for writing.
fn writable(process: &Path, fd: &str) -> bool {
    let Ok(info) = std::fs::read_to_string(process.join("fdinfo").join(fd)) else {
        return false;
    };
    info.lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
        .is_some_and(|flags| flags & libc::O_ACCMODE as u32 != libc::O_RDONLY as u32)
}

/// How often the file is looked at: its sampling interval, within
/// 0.1 s to 1 s.
fn poll_every(reader: &Reader) -> Duration {
    let interval = reader.meta.as_ref().map_or(1.0, |m| m.interval);
    Duration::from_secs_f64(interval.clamp(0.1, 1.0))
}

/// Opens a recording to follow in the live view once it holds a sample:
/// a recorder just started may not have written one yet. Waits as `tail -f`
/// does (Ctrl-C stops it), saying so once on stderr.
pub fn first_samples(path: &Path) -> Result<Reader> {
    let mut reader = Reader::open_growing(path)?;
    let mut said = false;
    loop {
        if reader.sample_segments().iter().any(|s| s.count > 0) || reader.closed_cleanly {
            return Ok(reader);
        }
        if !said {
            // Never eprintln!: it panics when stderr is a terminal that hung up.
            let _ = writeln!(
                std::io::stderr(),
                "netlens: waiting for the first sample of {} (Ctrl-C stops)",
                path.display()
            );
            said = true;
        }
        std::thread::sleep(poll_every(&reader));
        reader.refresh()?;
    }
}

/// The samples printed so far: where in the samples stream, the one
/// before (rates need it) and the findings' hysteresis.
struct Printer {
    segment: usize,
    taken: usize,
    previous: Option<Sample>,
    engine: Engine,
    warned: HashSet<String>,
}

impl Printer {
    /// Prints every sample appended since the last call, each as the line
    /// `replay --json` prints for it.
    fn print_new(
        &mut self,
        reader: &Reader,
        out: &mut impl Write,
        limits: &Thresholds,
    ) -> Result<()> {
        let segments = reader.sample_segments();
        let sections = Sections::ALL;
        while let Some(entry) = segments.get(self.segment) {
            if entry.count as usize > self.taken {
                // One sample at a time, as `replay --json`: the segment's
                // samples are never all held (each may copy a large one).
                let (taken, engine, held) = (self.taken, &mut self.engine, &self.previous);
                let mut decoded = 0;
                let (last, damage) = reader.each_sample(entry, |before, sample| {
                    decoded += 1;
                    if decoded <= taken {
                        return Ok(());
                    }
                    if let Some(previous) = before.or(held.as_ref()) {
                        let found = engine.step(Some(previous), sample, limits);
                        writeln!(
                            out,
                            "{}",
                            json::sample_line(previous, sample, sections, &found)
                        )?;
                    }
                    Ok(())
                })?;
                if decoded > taken {
                    self.taken = decoded;
                    self.previous = last;
                }
                if let Some(damage) = damage {
                    self.warn(reader, damage);
                    // What did not decode will not later either.
                    self.taken = entry.count as usize;
                }
            }
            if self.segment + 1 == segments.len() {
                break;
            }
            self.segment += 1;
            self.taken = 0;
        }
        for damage in &reader.scan_damage {
            self.warn(reader, damage.clone());
        }
        out.flush()?;
        Ok(())
    }

    fn warn(&mut self, reader: &Reader, damage: String) {
        if self.warned.insert(damage.clone()) {
            let line = format!("{}: {damage}", reader.path().display());
            eprintln!("netlens: warning: {}", crate::text::escape_control(&line));
        }
    }
}

/// `replay --json --follow FILE`: the samples already in the file, then
/// each one appended, until the recorder closes the file (its index
/// appears) or SIGINT / SIGTERM.
pub fn print_json(path: &Path, out: &mut impl Write, limits: &Thresholds) -> Result<()> {
    let mut reader = Reader::open_growing(path)?;
    let mut printer = Printer {
        segment: 0,
        taken: 0,
        previous: None,
        engine: Engine::default(),
        warned: HashSet::new(),
    };
    let every = poll_every(&reader);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let mut sigint = signal(SignalKind::interrupt())?;
        let mut sigterm = signal(SignalKind::terminate())?;
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let state = reader.refresh()?;
            printer.print_new(&reader, out, limits)?;
            if state == Refresh::Closed {
                return Ok(());
            }
            tokio::select! {
                _ = ticks.tick() => {}
                _ = sigint.recv() => return Ok(()),
                _ = sigterm.recv() => return Ok(()),
            }
        }
    })
}
