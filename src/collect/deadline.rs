//! A collector part that may block on something outside netlens (a huge
//! conntrack table, /proc of a process stuck in the kernel, a user's
//! container store): it runs on a thread of its own, and the sampler waits
//! for it only until the tick's deadline. A late part's data is the last
//! good one, with its age; its job goes on, and its answer is taken at a
//! later tick. A part stuck for good costs one thread and is never waited
//! for again until it answers.

use crate::model::LatePart;
use anyhow::{Context, Result};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError, channel};
use std::time::{Duration, Instant};

/// One part's worker thread, its job outstanding and its last good answer.
pub struct Deadlined<In, Out> {
    part: &'static str,
    jobs: Sender<In>,
    answers: Receiver<Out>,
    /// When the outstanding job was sent, if one is.
    outstanding: Option<Instant>,
    /// The last good answer and when its job was sent.
    last: Option<(Out, Instant)>,
    /// When the first job was sent: the age of a part never answered.
    first: Option<Instant>,
    /// Whether this tick's `start` sent a job: only such a job is waited
    /// for; one stuck since an earlier tick is only checked.
    sent_now: bool,
}

/// What a part gives a tick: fresh data, or the last good one (or the
/// default, before any answer) and how late it is.
pub struct Answer<Out> {
    pub data: Out,
    pub late: Option<LatePart>,
}

impl<In, Out> Deadlined<In, Out>
where
    In: Send + 'static,
    Out: Clone + Default + Send + 'static,
{
    /// Starts the thread that runs `work` on each job, at the lowest
    /// priority. It is created by the caller's thread, so it lives in the
    /// caller's network namespace.
    pub fn spawn(part: &'static str, work: impl FnMut(In) -> Out + Send + 'static) -> Result<Self> {
        Self::spawn_at(part, true, work)
    }

    /// As `spawn`, at the sampler's own priority unless `lowered`: a part
    /// every tick needs at once (the links) must not wait behind the
    /// load it measures.
    pub fn spawn_at(
        part: &'static str,
        lowered: bool,
        mut work: impl FnMut(In) -> Out + Send + 'static,
    ) -> Result<Self> {
        let (jobs, inbox) = channel::<In>();
        let (outbox, answers) = channel();
        std::thread::Builder::new()
            .name(format!("netlens-{part}"))
            .spawn(move || {
                if lowered {
                    super::priority::lower_this_thread();
                }
                for job in inbox {
                    if outbox.send(work(job)).is_err() {
                        return;
                    }
                }
            })
            .with_context(|| format!("cannot start the {part} thread"))?;
        Ok(Self {
            part,
            jobs,
            answers,
            outstanding: None,
            last: None,
            first: None,
            sent_now: false,
        })
    }

    /// Sends `job` unless one is outstanding (a stuck part is not asked
    /// again: its job would only queue behind the stuck one).
    pub fn start(&mut self, job: In) {
        self.take_answer();
        self.sent_now = false;
        if self.outstanding.is_some() {
            return;
        }
        let now = Instant::now();
        if self.jobs.send(job).is_ok() {
            self.outstanding = Some(now);
            self.first.get_or_insert(now);
            self.sent_now = true;
        }
    }

    /// The answer to the job started, waiting for it until `deadline` at
    /// most; else the last good answer, marked late.
    pub fn finish(&mut self, deadline: Instant) -> Answer<Out> {
        if self.outstanding.is_some() {
            let wait = if self.sent_now {
                deadline.saturating_duration_since(Instant::now())
            } else {
                Duration::ZERO
            };
            match self.answers.recv_timeout(wait) {
                Ok(answer) => return self.fresh(answer),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        }
        let now = Instant::now();
        let (data, since) = match &self.last {
            Some((data, at)) => (data.clone(), *at),
            None => (Out::default(), self.first.unwrap_or(now)),
        };
        let age = now.saturating_duration_since(since);
        Answer {
            data,
            late: Some(LatePart {
                part: self.part.to_string(),
                age_ms: u64::try_from(age.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    /// Takes an answer that came after its tick's deadline.
    fn take_answer(&mut self) {
        match self.answers.try_recv() {
            Ok(answer) => {
                let _ = self.fresh(answer);
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => {}
        }
    }

    fn fresh(&mut self, answer: Out) -> Answer<Out> {
        let sent = self.outstanding.take().unwrap_or_else(Instant::now);
        self.last = Some((answer.clone(), sent));
        Answer {
            data: answer,
            late: None,
        }
    }
}

/// The deadline of the parts waited for in a tick started at `started`:
/// three quarters of the interval, so a late part never holds the sample
/// past it, and a container look-up's wait (`containers::homes::WAIT`)
/// fits within it at a 500 ms interval.
pub fn tick_deadline(started: Instant, interval: Duration) -> Instant {
    started + interval * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    /// A part whose job reads one byte from a socket: it blocks, for real,
    /// until the test writes one.
    fn reader(socket: UnixStream) -> Deadlined<(), u8> {
        let mut socket = socket;
        Deadlined::spawn("reader", move |()| {
            let mut byte = [0u8];
            socket.read_exact(&mut byte).map_or(0, |()| byte[0])
        })
        .unwrap()
    }

    fn tick(part: &mut Deadlined<(), u8>) -> (Answer<u8>, Duration) {
        let started = Instant::now();
        part.start(());
        let answer = part.finish(started + Duration::from_millis(100));
        (answer, started.elapsed())
    }

    #[test]
    fn a_blocked_part_is_late_with_its_last_answer_and_age() {
        let (mut ours, theirs) = UnixStream::pair().unwrap();
        let mut part = reader(theirs);
        ours.write_all(&[7]).unwrap();
        let (answer, _) = tick(&mut part);
        assert_eq!((answer.data, answer.late), (7, None));

        // Nothing to read: the job blocks; each tick waits for it only
        // until its deadline, then gives the last answer, marked late.
        let (answer, took) = tick(&mut part);
        assert_eq!(answer.data, 7);
        let late = answer.late.expect("marked late");
        assert_eq!(late.part, "reader");
        assert!(late.age_ms >= 100, "{late:?}");
        assert!(took < Duration::from_millis(500), "{took:?}");
        std::thread::sleep(Duration::from_millis(50));
        let (answer, took) = tick(&mut part);
        // The stuck job is not waited for again: its deadline was last tick's.
        assert!(took < Duration::from_millis(50), "{took:?}");
        assert!(answer.late.unwrap().age_ms >= 150);

        // Unblocked: its answer is taken, and the next job is answered
        // within its tick.
        ours.write_all(&[8, 9]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let (answer, _) = tick(&mut part);
        assert_eq!((answer.data, answer.late), (9, None));
    }

    #[test]
    fn a_part_never_answered_is_late_with_the_default() {
        let (_ours, theirs) = UnixStream::pair().unwrap();
        let mut part = reader(theirs);
        let (answer, took) = tick(&mut part);
        assert_eq!(answer.data, 0);
        assert_eq!(answer.late.unwrap().part, "reader");
        assert!(took < Duration::from_millis(500), "{took:?}");
    }
}
