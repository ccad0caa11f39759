//! Look-ups that read where a user writes: the rootless podman store in the
//! container owner's home and their API socket under /run/user/UID. A user
//! can mount FUSE over either (fusermount is setuid wherever rootless
//! podman runs) and stop its daemon; then open(), stat() and read() there
//! wait for the daemon forever, O_NONBLOCK or not. So each such look-up
//! runs on a thread of its own, and:
//! - a uid has at most one look-up outstanding, and all uids together at
//!   most `MAX_THREADS`: a stuck user holds up their own containers only,
//!   at the cost of one thread;
//! - the sampler waits for an answer at most `WAIT`, and never again for a
//!   uid whose look-up once outlasted it: that uid's containers show
//!   unnamed until their answer comes;
//! - nothing joins these threads: one stuck in FUSE ends with the process.

use super::Names;
use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// How long the sampler waits for a look-up it just started: an ordinary
/// store (a few kB, or MBs on a busy host) is read and parsed well within
/// it, so `snapshot --count 1` names rootless containers; a stuck one
/// delays one sample by this much, once per uid.
pub const WAIT: Duration = Duration::from_millis(200);
/// Look-ups outstanding at once, over all uids: each may be a thread stuck
/// for good.
pub const MAX_THREADS: usize = 16;

/// A container id and what its look-up found.
pub type Answer = (String, Option<Names>);

/// The look-ups under users' control, by uid.
pub struct Homes {
    outbox: Sender<(u32, Answer)>,
    inbox: Receiver<(u32, Answer)>,
    /// uids with a look-up outstanding, and since when.
    busy: HashMap<u32, Instant>,
    /// uids whose look-up once outlasted `WAIT`: not waited for again.
    slow: HashSet<u32>,
}

impl Default for Homes {
    fn default() -> Homes {
        let (outbox, inbox) = channel();
        Homes {
            outbox,
            inbox,
            busy: HashMap::new(),
            slow: HashSet::new(),
        }
    }
}

impl Homes {
    /// Starts `lookup` of container `id` for `uid` on a thread of its own;
    /// false when `uid` has one outstanding, `MAX_THREADS` are, or no
    /// thread could be started (the caller asks again later).
    pub fn ask(
        &mut self,
        uid: u32,
        id: &str,
        lookup: impl FnOnce() -> Option<Names> + Send + 'static,
    ) -> bool {
        if self.busy.contains_key(&uid) || self.busy.len() >= MAX_THREADS {
            return false;
        }
        let (outbox, id) = (self.outbox.clone(), id.to_string());
        let started = std::thread::Builder::new()
            .name(format!("netlens-home-{uid}"))
            .spawn(move || {
                let names = lookup();
                let _ = outbox.send((uid, (id, names)));
            });
        // Dropping the handle detaches the thread: nothing ever joins it.
        started.is_ok() && self.busy.insert(uid, Instant::now()).is_none()
    }

    /// The answers in so far, waiting up to `WAIT` for the one of `id`
    /// (asked for `uid` just now) unless `uid` is known to be slow.
    pub fn wait_for(&mut self, uid: u32, id: &str) -> Vec<Answer> {
        if self.slow.contains(&uid) {
            return self.answers();
        }
        let mut answers = Vec::new();
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.inbox.recv_timeout(left) {
                Ok((from, answer)) => {
                    self.busy.remove(&from);
                    let done = answer.0 == id;
                    answers.push(answer);
                    if done {
                        return answers;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    self.slow.insert(uid);
                    return answers;
                }
            }
        }
    }

    /// Since when the oldest look-up that outlasted `WAIT` has been
    /// outstanding, if one is.
    pub fn late_since(&self) -> Option<Instant> {
        self.busy
            .iter()
            .filter(|(uid, since)| self.slow.contains(uid) && since.elapsed() >= WAIT)
            .map(|(_, since)| *since)
            .min()
    }

    /// The answers in so far, without waiting.
    pub fn answers(&mut self) -> Vec<Answer> {
        let mut answers = Vec::new();
        while let Ok((from, answer)) = self.inbox.try_recv() {
            self.busy.remove(&from);
            answers.push(answer);
        }
        answers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    fn named(name: &str) -> Option<Names> {
        Some(Names {
            name: Some(name.to_string()),
            ..Names::default()
        })
    }

    #[test]
    fn a_prompt_answer_comes_within_the_wait() {
        let mut homes = Homes::default();
        assert!(homes.ask(1000, "a", || named("web")));
        let started = Instant::now();
        assert_eq!(homes.wait_for(1000, "a"), vec![("a".into(), named("web"))]);
        assert!(started.elapsed() < WAIT, "{:?}", started.elapsed());
        // Answered: the uid may ask again, and is still waited for.
        assert!(homes.ask(1000, "b", || None));
        assert_eq!(homes.wait_for(1000, "b"), vec![("b".into(), None)]);
    }

    #[test]
    fn a_stuck_uid_is_waited_for_once_and_holds_up_no_other() {
        let mut homes = Homes::default();
        // Stands for a read stuck in FUSE until the test lets it go.
        let release = Arc::new(Barrier::new(2));
        let stuck = release.clone();
        assert!(homes.ask(1000, "a", move || {
            stuck.wait();
            None
        }));
        let started = Instant::now();
        assert!(homes.wait_for(1000, "a").is_empty());
        let waited = started.elapsed();
        assert!(waited >= WAIT && waited < WAIT * 3, "{waited:?}");
        // Outstanding: no second look-up for that uid, and no wait.
        assert!(!homes.ask(1000, "b", || named("x")));
        let started = Instant::now();
        assert!(homes.wait_for(1000, "b").is_empty());
        assert!(started.elapsed() < WAIT / 4, "{:?}", started.elapsed());
        // Another uid is asked and answered meanwhile.
        assert!(homes.ask(1001, "c", || named("other")));
        assert_eq!(
            homes.wait_for(1001, "c"),
            vec![("c".into(), named("other"))]
        );
        // Once the stuck one answers, it is taken without waiting.
        release.wait();
        let answer = loop {
            if let Some(answer) = homes.answers().pop() {
                break answer;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(answer, ("a".into(), None));
        assert!(homes.ask(1000, "b", || named("x")));
    }

    #[test]
    fn outstanding_look_ups_are_capped() {
        let mut homes = Homes::default();
        let release = Arc::new(Barrier::new(MAX_THREADS + 1));
        for uid in 0..MAX_THREADS as u32 {
            let stuck = release.clone();
            assert!(homes.ask(uid, "a", move || {
                stuck.wait();
                None
            }));
        }
        assert!(!homes.ask(99, "b", || None), "past the cap");
        release.wait();
        let started = Instant::now();
        while homes.busy.len() == MAX_THREADS {
            homes.answers();
            assert!(started.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(homes.ask(99, "b", || None));
    }
}
