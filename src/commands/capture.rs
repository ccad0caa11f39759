//! `netlens capture [-i IF] [-f EXPR] [-w FILE.pcap] [-c N] [--duration D]`:
//! capture without the terminal UI. Lines go to stdout as `tcpdump -n`
//! prints them; with -w packets go to a pcap file instead and progress to
//! stderr, or to a pcapng file (FILE.pcapng) that names each packet's
//! interface, process and container, from a sampler running beside the
//! capture. SIGINT, SIGTERM and SIGHUP stop it cleanly (the file is
//! complete).

use crate::capture::attribution::PacketOwners;
use crate::capture::pcap_file::{FileFormat, FileLayout, PcapFileWriter};
use crate::capture::ring::{Ring, RingOptions, ifindex};
use crate::cli::{CaptureCmdArgs, CollectArgs};
use crate::collect::netns;
use crate::packet::decode::summarize;
use crate::packet::filter::Filter;
use crate::packet::format::{Formatter, Timestamp};
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
    let format = args
        .write
        .as_deref()
        .map_or(FileFormat::Pcap, FileFormat::of_path);
    // pcapng names each packet's owner: a sampler beside the capture (in
    // its own thread and namespace, started before this thread moves)
    // reads the sockets and their processes each interval.
    let bpf = if collect.no_bpf {
        crate::collect::Bpf::Off
    } else {
        crate::collect::Bpf::ConnLog
    };
    let mut owners = Owners::start(format, &target, collect.interval, bpf)?;
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
            FileLayout {
                format,
                linktype,
                snaplen: ring.longest_packet(),
                interface: owners.interface(options.label()),
            },
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
        let held = &mut owners.held;
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
                Some(_) if format == FileFormat::Pcapng => {
                    held.hold(p);
                    Ok(())
                }
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
        if let Some(w) = &mut writer
            && let Err(e) = owners.write_held(w, false)
        {
            failure = Some(e);
            break;
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
    // The last packets' sockets may be newer than the newest sample: one
    // more, then they are written.
    if let Some(w) = &mut writer
        && failure.is_none()
        && let Err(e) = owners.write_held(w, true)
    {
        failure = Some(e);
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

/// The packets' owners for a pcapng file: the sockets of the two newest
/// samples, from a sampler that runs only while a pcapng file is written.
/// Packets wait for the sample after them (at most `MAX_HELD_BYTES`): a
/// connection that began since the last sample has its socket, or its
/// end in the connection log, in the next.
struct Owners {
    sampler: Option<(
        crate::collect::Sampler,
        tokio::sync::mpsc::UnboundedReceiver<crate::collect::SamplerEvent>,
    )>,
    interval: Duration,
    newest: PacketOwners,
    previous: PacketOwners,
    held: Held,
}

/// Packets not yet written: those captured before the newest sample (the
/// first `before_newest`), then those since.
#[derive(Default)]
struct Held {
    packets: Vec<(Timestamp, u32, Box<[u8]>, u32)>,
    bytes: usize,
    before_newest: usize,
}

impl Held {
    fn hold(&mut self, p: &crate::capture::ring::Packet) {
        self.bytes += p.data.len() + 32;
        self.packets
            .push((p.ts, p.orig_len, p.data.into(), p.ifindex));
    }
}

/// Held packets are written without waiting past this (a flood between
/// two samples): 64 MiB.
const MAX_HELD_BYTES: usize = 64 << 20;

impl Owners {
    /// Starts the sampler for a pcapng file and waits (at most two
    /// intervals) for its first sample; for anything else, nothing. `bpf`
    /// names the owners of connections no sample saw.
    fn start(
        format: FileFormat,
        target: &crate::collect::netns::Target,
        interval: Duration,
        bpf: crate::collect::Bpf,
    ) -> Result<Owners> {
        let mut owners = Owners {
            sampler: None,
            interval,
            newest: PacketOwners::default(),
            previous: PacketOwners::default(),
            held: Held::default(),
        };
        if format != FileFormat::Pcapng {
            return Ok(owners);
        }
        let (sampler, events) = crate::collect::Sampler::spawn_with(
            target.clone(),
            interval,
            std::sync::Arc::default(),
            bpf,
            crate::collect::Start::Whole,
        )?;
        owners.sampler = Some((sampler, events));
        owners.await_sample(interval * 2);
        Ok(owners)
    }

    /// The capture's interface in the sampled namespace.
    fn interface(&self, name: &str) -> crate::capture::pcap_file::InterfaceName {
        self.newest.interface(name)
    }

    /// Takes the newest sample, if one came; true if one did.
    fn refresh(&mut self) -> bool {
        let Some((_, events)) = &mut self.sampler else {
            return false;
        };
        let mut newest = None;
        while let Ok(event) = events.try_recv() {
            if let crate::collect::SamplerEvent::Sample(sample) = event {
                newest = Some(sample);
            }
        }
        let Some(sample) = newest else {
            return false;
        };
        self.previous = std::mem::replace(&mut self.newest, PacketOwners::new(&sample));
        true
    }

    /// Waits up to `patience` for a new sample.
    fn await_sample(&mut self, patience: Duration) {
        let deadline = Instant::now() + patience;
        while !self.refresh() && Instant::now() < deadline && self.sampler.is_some() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Writes held packets once two samples came after them (`last`: the
    /// capture ended, wait for them), or all when too many wait. Two: a
    /// connection that closes as a sample is taken is in the log of the
    /// sample after.
    fn write_held(&mut self, writer: &mut PcapFileWriter, last: bool) -> Result<()> {
        if self.held.packets.is_empty() {
            return Ok(());
        }
        if last {
            for _ in 0..2 {
                self.await_sample(self.interval + Duration::from_millis(500));
                let count =
                    std::mem::replace(&mut self.held.before_newest, self.held.packets.len());
                self.write_first(writer, count)?;
            }
            return self.write_first(writer, self.held.packets.len());
        }
        if self.held.bytes >= MAX_HELD_BYTES {
            self.held.before_newest = 0;
            return self.write_first(writer, self.held.packets.len());
        }
        if self.refresh() {
            let count = std::mem::replace(&mut self.held.before_newest, self.held.packets.len());
            self.write_first(writer, count)?;
        }
        Ok(())
    }

    /// Writes the first `count` held packets with their owners.
    fn write_first(&mut self, writer: &mut PcapFileWriter, count: usize) -> Result<()> {
        let count = count.min(self.held.packets.len());
        self.held.before_newest = self.held.before_newest.saturating_sub(count);
        for (ts, orig_len, data, ifindex) in self.held.packets.drain(..count) {
            self.held.bytes = self.held.bytes.saturating_sub(data.len() + 32);
            let linktype = writer.linktype();
            let mut note = self.newest.note(linktype, &data, orig_len, ifindex);
            if note.comment.is_none() {
                note.comment = self.previous.comment(linktype, &data, orig_len);
            }
            writer.write_noted(ts, orig_len, &data, Some(&note))?;
        }
        Ok(())
    }
}
