//! `netlens capture [-i IF] [-f EXPR] [-w FILE.pcap] [-c N] [--duration D]`:
//! capture without the terminal UI. Lines go to stdout as `tcpdump -n`
//! prints them; with -w packets go to a pcap file instead and progress to
//! stderr. SIGINT, SIGTERM and SIGHUP stop it cleanly (the file is
//! complete).

use crate::capture::pcap_file::PcapFileWriter;
use crate::capture::ring::{Ring, RingOptions, ifindex};
use crate::cli::{CaptureCmdArgs, CollectArgs};
use crate::collect::netns;
use crate::packet::decode::summarize;
use crate::packet::filter::Filter;
use crate::packet::format::Formatter;
use anyhow::Result;
use std::io::{BufWriter, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Makes SIGINT, SIGTERM and SIGHUP (an SSH session that drops) set a
/// flag (`stopped`) instead of killing.
pub(crate) fn catch_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs an async-signal-safe handler (one atomic store).
        // No SA_RESTART: poll returns EINTR and the loop sees STOP at once.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Whether SIGINT, SIGTERM or SIGHUP arrived since `catch_signals`.
pub(crate) fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

pub fn run(collect: &CollectArgs, args: &CaptureCmdArgs) -> Result<()> {
    // Before the file exists: a signal then closes it whole.
    catch_signals();
    let filter = match &args.filter {
        Some(text) => Some(Filter::parse(text)?),
        None => None,
    };
    let target = collect.one_target("capture")?;
    if let Some(file) = target.open()? {
        // This command is single-threaded: the whole process moves.
        netns::enter(&file, target.label())?;
    }
    let options = RingOptions::new(args.iface.as_deref(), args.payload);
    if let Some(name) = &options.iface {
        ifindex(name, target.label())?;
    }
    let mut ring = Ring::open(&options, target.label())?;
    let linktype = ring.linktype();
    let mut writer = match &args.write {
        Some(path) => Some(PcapFileWriter::create_output(
            path,
            linktype,
            ring.longest_packet(),
        )?),
        None => None,
    };
    let mut out = BufWriter::with_capacity(1 << 16, super::stdout::Stdout::lock());
    let to_terminal = std::io::stdout().is_terminal();
    let progress = writer.is_some() && std::io::stderr().is_terminal();
    eprintln!(
        "netlens: capturing on {} ({} bytes per packet){}",
        options.label(),
        ring.snaplen(),
        match &args.write {
            Some(path) => format!(", writing {}", path.display()),
            None => String::new(),
        }
    );
    let started = Instant::now();
    let deadline = args.duration.map(|d| started + d);
    let mut formatter = Formatter::new(crate::capture::HOST);
    let mut line = String::with_capacity(256);
    let mut matched = 0u64;
    let mut failure: Option<anyhow::Error> = None;
    let mut last_progress = Instant::now();
    'capture: while !STOP.load(Ordering::Relaxed) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if args.count.is_some_and(|c| matched >= c) {
            break;
        }
        let wait = deadline.map_or(100, |d| {
            d.saturating_duration_since(Instant::now())
                .as_millis()
                .clamp(1, 100) as i32
        });
        if let Err(e) = ring.wait(wait) {
            failure = Some(e);
            break;
        }
        let count = args.count;
        ring.drain(|p| {
            if failure.is_some() || count.is_some_and(|c| matched >= c) {
                return;
            }
            if let Some(f) = &filter {
                let s = summarize(linktype, p.data, p.orig_len);
                if !f.matches(&s, p.data) {
                    return;
                }
            }
            matched += 1;
            let result = match &mut writer {
                Some(w) => w.write(p.ts, p.orig_len, p.data),
                None => {
                    line.clear();
                    formatter.line(linktype, p.ts, p.data, p.orig_len, &mut line);
                    line.push('\n');
                    out.write_all(line.as_bytes()).map_err(Into::into)
                }
            };
            if let Err(e) = result {
                failure = Some(e);
            }
        });
        if failure.is_some() {
            break 'capture;
        }
        if to_terminal && out.flush().is_err() {
            break;
        }
        if progress && last_progress.elapsed() >= Duration::from_secs(2) {
            last_progress = Instant::now();
            let stats = ring.stats();
            let saved = writer.as_ref().map_or(0, PcapFileWriter::saved);
            eprint!(
                "\rnetlens: {saved} packets in the file, {} dropped by the kernel, {:.0}s ",
                stats.dropped,
                started.elapsed().as_secs_f64()
            );
        }
    }
    if progress {
        eprintln!();
    }
    let flushed = out.flush();
    // A write that failed (a full disk) keeps the packets that reached the
    // file whole, as tcpdump's file keeps what it wrote, and says how many.
    let finished = match writer {
        Some(w) if failure.is_some() => {
            let path = w.path().display().to_string();
            match w.keep_saved() {
                Ok(saved) => {
                    let e = failure.take().expect("checked");
                    failure = Some(anyhow::anyhow!(
                        "{e:#}; {path} keeps the first {saved} packets (a valid pcap)"
                    ));
                }
                Err(cut) => eprintln!("netlens: {cut:#}"),
            }
            Ok(())
        }
        Some(w) => w.finish(),
        None => Ok(()),
    };
    let stats = ring.stats();
    eprintln!(
        "{matched} packets captured\n{} packets received by the socket\n{} packets dropped by kernel",
        stats.received, stats.dropped
    );
    if let Some(e) = failure {
        if out.get_ref().closed_pipe() {
            return finished;
        }
        return Err(e);
    }
    if let Err(e) = flushed
        && !out.get_ref().closed_pipe()
    {
        return Err(e.into());
    }
    finished
}
