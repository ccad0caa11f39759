//! `netlens conns [--json] [--failed] [--duration D]`: each TCP connection as it ends,
//! as bcc's tcplife prints them, from the sampler's connection log (one
//! batch per interval, each line flushed). SIGINT, SIGTERM and SIGHUP stop
//! it.

use crate::cli::{CollectArgs, ConnsArgs};
use crate::collect::{Bpf, Demand, Sampler, SamplerEvent};
use crate::model::closed::ClosedConn;
use crate::model::failed::FailKind;
use crate::report::closed;
use anyhow::{Result, bail};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::error::TryRecvError;

/// How often the loop looks for a sample, a signal or the deadline.
const POLL: Duration = Duration::from_millis(20);

pub fn run(collect: &CollectArgs, args: &ConnsArgs) -> Result<()> {
    let target = collect.one_target("conns")?;
    let (sampler, mut events) = Sampler::spawn_with(
        target.clone(),
        collect.interval,
        Arc::new(Demand::default()),
        if collect.no_bpf {
            Bpf::Off
        } else {
            Bpf::ConnLog
        },
        crate::collect::Start::Whole,
    )?;
    super::capture::catch_signals();
    // Subscribed by now (the sampler's setup opened the log): say so, so a
    // script knows closes from here on are seen.
    eprintln!(
        "netlens: logging TCP connections that end in {} (Ctrl-C stops)",
        target.label()
    );
    let deadline = args.duration.map(|d| Instant::now() + d);
    let mut out = std::io::stdout().lock();
    if !args.json {
        writeln!(out, "{}", closed::header())
            .and_then(|()| out.flush())
            .map_err(super::stdout::error)?;
    }
    let mut lost = 0;
    // Once stopped, one more sample taken after the stop still comes: it
    // holds what closed since the last one (bounded by two intervals).
    let mut stopping: Option<(f64, Instant)> = None;
    loop {
        let stop_now = super::capture::stopped() || deadline.is_some_and(|d| Instant::now() >= d);
        if stop_now && stopping.is_none() {
            let patience = collect.interval * 2 + Duration::from_secs(1);
            stopping = Some((
                crate::collect::boottime_seconds(),
                Instant::now() + patience,
            ));
        }
        if stopping.is_some_and(|(_, give_up)| Instant::now() >= give_up) {
            break;
        }
        let sample = match events.try_recv() {
            Ok(SamplerEvent::Sample(sample)) => sample,
            Ok(SamplerEvent::Error(error)) => {
                eprintln!("netlens: {error}");
                continue;
            }
            Err(TryRecvError::Empty) => {
                std::thread::sleep(POLL);
                continue;
            }
            Err(TryRecvError::Disconnected) => bail!("the sampler stopped"),
        };
        let Some(log) = &sample.closed else {
            continue;
        };
        if let Some(error) = &log.error {
            bail!("{error}");
        }
        let containers = crate::model::processes::ClosedContainers::of(&sample);
        let failed = |c: &&ClosedConn| FailKind::of_ending(c.ending).is_some();
        for conn in log.conns.iter().filter(|c| !args.failed || failed(c)) {
            let text = if args.json {
                crate::text::json::to_string(&closed::json(conn, &containers))?
            } else {
                closed::line(conn)
            };
            writeln!(out, "{text}")
                .and_then(|()| out.flush())
                .map_err(super::stdout::error)?;
        }
        if log.overflow > 0 {
            eprintln!(
                "netlens: {} closed connections of this interval not printed \
                 (more than {} in one interval: use a shorter --interval)",
                log.overflow,
                crate::model::closed::MAX_PER_SAMPLE
            );
        }
        if log.lost > lost {
            eprintln!(
                "netlens: {} close notifications lost so far (the kernel's queue \
                 to netlens was full)",
                log.lost
            );
            lost = log.lost;
        }
        if stopping.is_some_and(|(at, _)| sample.mono >= at) {
            break;
        }
    }
    drop(sampler);
    Ok(())
}
