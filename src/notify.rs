//! `--on-finding CMD`: runs CMD (through /bin/sh -c) with one finding as
//! JSON on stdin when the finding starts to show and when it clears.
//!
//! The hook steps its own `findings::Engine` over the same samples as the
//! view, recording or exporter it rides with, so its starts and clears are
//! exactly the ones shown there. Commands run on a dispatcher thread, at
//! most `MAX_RUNNING` at once, each killed (its whole process group) after
//! the timeout; events wait in a bounded queue and the ones that do not fit
//! are counted, never blocking the sampler. Failures are reported as one
//! line each (stderr headless, the status line in the live view).

use crate::findings::{Engine, Finding, Thresholds};
use crate::model::Sample;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Commands running at once; more wait in the queue.
pub const MAX_RUNNING: usize = 4;
/// Events waiting for a free slot; more are dropped and counted.
pub const QUEUE: usize = 64;
/// How long a command may run unless `--on-finding-timeout` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Failure lines kept until someone reads them.
const FAILURES_KEPT: usize = 16;

/// What happened to a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// It began to show (after `findings_on_samples`).
    Start,
    /// It stopped showing (after `findings_off_samples` calm samples).
    Clear,
}

impl Change {
    fn word(self) -> &'static str {
        match self {
            Change::Start => "start",
            Change::Clear => "clear",
        }
    }
}

/// The JSON a command reads on stdin.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub event: Change,
    /// Wall-clock seconds of the sample where it changed.
    pub time: f64,
    /// This host's name (a fleet's hook tells hosts apart by it).
    pub host: String,
    /// The watched namespace's label.
    pub netns: String,
    /// As `snapshot --json` prints it; for a clear, as it last showed.
    pub finding: Finding,
}

/// Finds the starts and clears in a run of samples.
#[derive(Default)]
pub struct Changes {
    engine: Engine,
    shown: HashMap<(&'static str, String), Finding>,
}

impl Changes {
    /// The findings that started or cleared at `current`, given every
    /// earlier sample was passed in order.
    pub fn step(
        &mut self,
        previous: Option<&Sample>,
        current: &Sample,
        limits: &Thresholds,
    ) -> Vec<(Change, Finding)> {
        let found = self.engine.step(previous, current, limits);
        let mut now: HashMap<_, _> = found
            .into_iter()
            .map(|f| ((f.id, f.evidence.row.clone()), f))
            .collect();
        let mut changes = Vec::new();
        for (key, finding) in &now {
            if !self.shown.contains_key(key) {
                changes.push((Change::Start, finding.clone()));
            }
        }
        for (key, finding) in self.shown.drain() {
            if !now.contains_key(&key) {
                changes.push((Change::Clear, finding));
            }
        }
        std::mem::swap(&mut self.shown, &mut now);
        // Starts before clears, worst first: the order a reader expects.
        changes.sort_by(|a, b| {
            (a.0 == Change::Clear)
                .cmp(&(b.0 == Change::Clear))
                .then(b.1.severity.cmp(&a.1.severity))
                .then(a.1.id.cmp(b.1.id))
                .then(a.1.evidence.row.cmp(&b.1.evidence.row))
        });
        changes
    }
}

/// The running hook: feed it every sample with `observe`.
pub struct FindingHook {
    changes: Changes,
    limits: Thresholds,
    host: String,
    queue: Option<SyncSender<Event>>,
    dispatcher: Option<JoinHandle<()>>,
    failures: Arc<Mutex<VecDeque<String>>>,
    dropped: u64,
}

/// How the hook runs its command.
#[derive(Debug, Clone)]
pub struct HookOptions {
    pub command: String,
    pub timeout: Duration,
    /// Let the command write to netlens' stderr (headless); the live view
    /// sends it to /dev/null, where it cannot tear the screen.
    pub inherit_stderr: bool,
}

impl FindingHook {
    pub fn start(options: HookOptions, limits: Thresholds) -> Self {
        let (queue, jobs) = sync_channel(QUEUE);
        let failures = Arc::new(Mutex::new(VecDeque::new()));
        let dispatcher = {
            let failures = Arc::clone(&failures);
            std::thread::Builder::new()
                .name("on-finding".into())
                .spawn(move || dispatch(&options, &jobs, &failures))
                .expect("a thread for --on-finding")
        };
        Self {
            changes: Changes::default(),
            limits,
            host: host_name(),
            queue: Some(queue),
            dispatcher: Some(dispatcher),
            failures,
            dropped: 0,
        }
    }

    /// Takes the next sample (every sample, in order); queues one event per
    /// finding that started or cleared. Never waits for a command.
    pub fn observe(&mut self, previous: Option<&Sample>, current: &Sample) {
        for (change, finding) in self.changes.step(previous, current, &self.limits) {
            let event = Event {
                event: change,
                time: current.t,
                host: self.host.clone(),
                netns: current.netns.clone(),
                finding,
            };
            let Some(queue) = &self.queue else { return };
            if let Err(TrySendError::Full(event) | TrySendError::Disconnected(event)) =
                queue.try_send(event)
            {
                self.dropped += 1;
                push_failure(
                    &self.failures,
                    format!(
                        "on-finding: the command is too slow; {} event(s) dropped, the last \
                         {} {}",
                        self.dropped,
                        event.event.word(),
                        event.finding.id
                    ),
                );
            }
        }
    }

    /// The oldest failure not yet taken, as one line.
    pub fn take_failure(&mut self) -> Option<String> {
        self.failures.lock().ok()?.pop_front()
    }

    /// Stops taking events and waits for the commands queued and running
    /// (each bounded by the timeout); returns the failures not yet taken.
    pub fn finish(mut self) -> Vec<String> {
        self.stop();
        self.failures
            .lock()
            .map(|mut f| f.drain(..).collect())
            .unwrap_or_default()
    }

    fn stop(&mut self) {
        self.queue = None;
        if let Some(dispatcher) = self.dispatcher.take() {
            let _ = dispatcher.join();
        }
    }
}

impl Drop for FindingHook {
    fn drop(&mut self) {
        self.stop();
    }
}

fn push_failure(failures: &Mutex<VecDeque<String>>, line: String) {
    if let Ok(mut failures) = failures.lock() {
        if failures.len() == FAILURES_KEPT {
            failures.pop_front();
        }
        failures.push_back(line);
    }
}

struct Running {
    child: Child,
    started: Instant,
    what: String,
}

/// Runs queued events' commands until the queue closes and all have ended.
fn dispatch(options: &HookOptions, jobs: &Receiver<Event>, failures: &Mutex<VecDeque<String>>) {
    let mut running: Vec<Running> = Vec::new();
    let mut open = true;
    while open || !running.is_empty() {
        if open && running.len() < MAX_RUNNING {
            // Poll while commands run (to reap them), else sleep on the queue.
            let next = if running.is_empty() {
                jobs.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                jobs.recv_timeout(Duration::from_millis(20))
            };
            match next {
                Ok(event) => match run(options, &event) {
                    Ok(child) => running.push(Running {
                        child,
                        started: Instant::now(),
                        what: format!("{} {}", event.event.word(), event.finding.id),
                    }),
                    Err(error) => push_failure(failures, error),
                },
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
        } else {
            std::thread::sleep(Duration::from_millis(20));
        }
        running.retain_mut(|r| match r.child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    push_failure(
                        failures,
                        format!("on-finding: the command failed ({status}) for {}", r.what),
                    );
                }
                false
            }
            Ok(None) if r.started.elapsed() >= options.timeout => {
                // The whole group: sh and whatever it started (curl...).
                // SAFETY: kill(2) on the group this hook created for it.
                unsafe { libc::kill(-(r.child.id() as i32), libc::SIGKILL) };
                let _ = r.child.wait();
                push_failure(
                    failures,
                    format!(
                        "on-finding: the command was killed after {} s for {}",
                        options.timeout.as_secs_f64(),
                        r.what
                    ),
                );
                false
            }
            Ok(None) => true,
            Err(_) => false,
        });
    }
}

/// Starts the command with the event on stdin and in its environment.
fn run(options: &HookOptions, event: &Event) -> Result<Child, String> {
    // As every JSON netlens writes: a hook that echoes it reaches a terminal.
    let json = crate::text::json::to_string(event).expect("events are plain data");
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(&options.command)
        .env("NETLENS_EVENT", event.event.word())
        .env("NETLENS_FINDING", event.finding.id)
        .env("NETLENS_SEVERITY", event.finding.severity.label())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(if options.inherit_stderr {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .process_group(0)
        .spawn()
        .map_err(|e| format!("on-finding: cannot run /bin/sh: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A finding's JSON is far below a pipe's 64 KiB, so this does not
        // wait on the command; one that ignores stdin closes it (EPIPE).
        let _ = stdin.write_all(json.as_bytes());
    }
    Ok(child)
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snmp;
    use crate::model::sockets::TcpSample;

    /// Retransmitting (50% of 1000 segments) in the seconds `storm` says.
    fn samples_where(seconds: u32, storm: impl Fn(u32) -> bool) -> Vec<Sample> {
        let (mut out, mut retrans) = (0, 0);
        (0..seconds)
            .map(|s| {
                out += 1000;
                if storm(s) {
                    retrans += 500;
                }
                let mut tcp = TcpSample::default();
                tcp.counters.insert(snmp::TCP_OUT_SEGS.into(), out);
                tcp.counters.insert(snmp::TCP_RETRANS_SEGS.into(), retrans);
                Sample {
                    t: 1000.0 + f64::from(s),
                    mono: f64::from(s),
                    tcp: Some(tcp),
                    ..Default::default()
                }
            })
            .collect()
    }

    fn samples(seconds: u32, storm: std::ops::Range<u32>) -> Vec<Sample> {
        samples_where(seconds, |s| storm.contains(&s))
    }

    fn feed(hook: &mut FindingHook, run: &[Sample]) {
        for (i, s) in run.iter().enumerate() {
            hook.observe(i.checked_sub(1).map(|p| &run[p]), s);
        }
    }

    fn changes(limits: &Thresholds, samples: &[Sample]) -> Vec<(u32, Change, &'static str)> {
        let mut changes = Changes::default();
        let mut out = Vec::new();
        for (i, s) in samples.iter().enumerate() {
            let previous = i.checked_sub(1).map(|p| &samples[p]);
            for (change, finding) in changes.step(previous, s, limits) {
                out.push((i as u32, change, finding.id));
            }
        }
        out
    }

    #[test]
    fn one_start_and_one_clear_per_episode_after_the_hysteresis() {
        for (on, off) in [(1, 1), (1, 3), (2, 2)] {
            let limits = Thresholds {
                findings_on_samples: on,
                findings_off_samples: off,
                ..Thresholds::DEFAULT
            };
            // Retransmits counted in samples 2..=5 (the storm's deltas).
            let got = changes(&limits, &samples(14, 2..6));
            let start = 1 + on;
            let clear = 5 + off;
            assert_eq!(
                got,
                [
                    (start, Change::Start, "retransmits"),
                    (clear, Change::Clear, "retransmits")
                ],
                "on {on} off {off}"
            );
        }
    }

    #[test]
    fn a_calm_run_says_nothing() {
        assert!(changes(&Thresholds::DEFAULT, &samples(10, 0..0)).is_empty());
    }

    fn hook(command: &str, timeout: Duration) -> FindingHook {
        FindingHook::start(
            HookOptions {
                command: command.into(),
                timeout,
                inherit_stderr: false,
            },
            Thresholds::DEFAULT,
        )
    }

    #[test]
    fn the_command_reads_each_event_on_stdin() {
        let dir = tempfile_dir();
        let command = format!(
            "cat > {}/$NETLENS_EVENT-$NETLENS_FINDING.json",
            dir.display()
        );
        let mut hook = hook(&command, Duration::from_secs(5));
        feed(&mut hook, &samples(10, 2..4));
        let failures = hook.finish();
        assert!(failures.is_empty(), "{failures:?}");
        for (change, time) in [("start", 1002.0), ("clear", 1006.0)] {
            let text = std::fs::read_to_string(dir.join(format!("{change}-retransmits.json")))
                .unwrap_or_else(|e| panic!("{change}: {e}"));
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(json["event"], change);
            assert_eq!(json["time"], time);
            assert_eq!(json["finding"]["id"], "retransmits");
            assert_eq!(json["finding"]["evidence"]["tab"], "tcp", "{json}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn failures_and_timeouts_are_reported_and_do_not_block() {
        let run = samples(4, 2..4);
        let mut failing = hook("exit 3", Duration::from_secs(5));
        feed(&mut failing, &run);
        let lines = failing.finish();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("exit status: 3"), "{lines:?}");
        assert!(lines[0].contains("start retransmits"), "{lines:?}");

        let started = Instant::now();
        let mut slow = hook("sleep 30", Duration::from_millis(300));
        feed(&mut slow, &run);
        // observe returned at once; finish waits for the kill.
        let lines = slow.finish();
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("killed after 0.3 s"), "{lines:?}");
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let dir = tempfile_dir();
        let gate = dir.join("open");
        // Every command waits for the gate, so none ends while events pour in.
        let command = format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display());
        let mut hook = hook(&command, Duration::from_secs(30));
        // A storm every other 4 s for 2,000 s: far more events than
        // MAX_RUNNING + QUEUE.
        let run = samples_where(2000, |s| s % 8 < 4);
        let events = changes(&Thresholds::DEFAULT, &run).len() as u64;
        assert!(events > 200, "{events}");
        feed(&mut hook, &run);
        // The queue holds QUEUE; the dispatcher took up to MAX_RUNNING.
        let (most, least) = (events - QUEUE as u64, events - (QUEUE + MAX_RUNNING) as u64);
        assert!(
            (least..=most).contains(&hook.dropped),
            "{events} events, dropped {}",
            hook.dropped
        );
        let first = hook.take_failure().expect("a line about the drops");
        assert!(first.contains("too slow"), "{first}");
        std::fs::write(&gate, b"").unwrap();
        hook.finish();
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("netlens-hook-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
