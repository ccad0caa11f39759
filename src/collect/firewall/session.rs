//! A trace of one flow kept running beside the live view: a thread in the
//! watched namespace holds the `Tracer`, reads its events every 100 ms
//! and keeps their lines (`trace_lines`) for the flow screen, the newest
//! `MAX_LINES`. Dropping the session stops the thread at once, which
//! removes the trace's table.

use super::trace::{TraceFlow, Tracer};
use super::{RuleTexts, trace_lines};
use crate::collect::netns::Target;
use std::collections::VecDeque;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Lines kept: a busy flow traces every packet.
pub const MAX_LINES: usize = 500;
const POLL: Duration = Duration::from_millis(100);

pub struct TraceSession {
    lines: Arc<Mutex<Lines>>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// What the thread hands over: the newest lines, how many fell off the
/// front, and why the trace stopped (or could not start).
#[derive(Debug, Default, Clone)]
pub struct Lines {
    pub lines: VecDeque<String>,
    pub dropped: u64,
    pub table: Option<String>,
    pub error: Option<String>,
}

impl TraceSession {
    /// Starts tracing `flow` in `target`'s namespace; a failure (no
    /// CAP_NET_ADMIN, no nf_tables) shows as the session's error.
    pub fn start(target: &Target, flow: TraceFlow) -> Self {
        let lines = Arc::new(Mutex::new(Lines::default()));
        let (stop, stopped) = mpsc::channel::<()>();
        let shared = Arc::clone(&lines);
        let target = target.clone();
        let thread = std::thread::Builder::new()
            .name("nftrace".into())
            .spawn(move || run(&target, flow, &shared, &stopped))
            .ok();
        if thread.is_none() {
            lines.lock().unwrap_or_else(|e| e.into_inner()).error =
                Some("cannot start the trace thread".into());
        }
        Self {
            lines,
            stop: Some(stop),
            thread,
        }
    }

    /// A copy of what the trace has shown so far.
    pub fn lines(&self) -> Lines {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(target: &Target, flow: TraceFlow, shared: &Mutex<Lines>, stopped: &mpsc::Receiver<()>) {
    let fail = |error: String| shared.lock().unwrap_or_else(|e| e.into_inner()).error = Some(error);
    let entered = target.open().and_then(|file| match file {
        Some(file) => crate::collect::netns::enter(&file, target.label()),
        None => Ok(()),
    });
    if let Err(error) = entered {
        return fail(format!("{error:#}"));
    }
    let mut tracer = match Tracer::start(&flow) {
        Ok(tracer) => tracer,
        Err(error) => {
            return fail(match error.raw_os_error() {
                Some(libc::EPERM | libc::EACCES) => {
                    "tracing needs CAP_NET_ADMIN (run as root)".into()
                }
                _ => format!("cannot start the trace: {error}"),
            });
        }
    };
    shared.lock().unwrap_or_else(|e| e.into_inner()).table = Some(tracer.table().to_string());
    let mut rules = RuleTexts::new();
    loop {
        match tracer.poll() {
            Ok(events) => {
                let new: Vec<String> = events
                    .iter()
                    .flat_map(|event| {
                        let text = rules.text(event).map(str::to_string);
                        trace_lines(event, text.as_deref())
                    })
                    .collect();
                let mut lines = shared.lock().unwrap_or_else(|e| e.into_inner());
                for line in new {
                    if lines.lines.len() == MAX_LINES {
                        lines.lines.pop_front();
                        lines.dropped += 1;
                    }
                    lines.lines.push_back(line);
                }
            }
            Err(error) => return fail(format!("reading the trace failed: {error}")),
        }
        match stopped.recv_timeout(POLL) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
