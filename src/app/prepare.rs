//! A new sample's passes over every socket, done before the UI takes it.
//!
//! At a million sockets each pass over the socket table takes tens to
//! hundreds of milliseconds: the findings (`findings::evaluate`, whose
//! connection findings group every socket), the sockets worth a history
//! (`sockets::trail_candidates`) and the Sockets tab's row order (filter,
//! TIME_WAIT groups, the partial selection of the rows that can be shown).
//! `prepare` does them all, as a pure function of the sample, the one
//! before it and what the UI asked for (`Ask`); the UI then only applies
//! the results (`App::take_prepared`): the findings' hysteresis, a few
//! hundred history points, the row order swapped in. Each is cheap
//! whatever the socket count.
//!
//! The live view runs `prepare` on a worker thread (`Worker`): the UI keeps
//! drawing the previous sample and answering keys until the prepared one
//! arrives through the event loop. Samples are shared with it (`Arc`), not
//! copied. Without the worker (`App::on_sampler` in tests and benches) the
//! same function runs inline. Replay pushes its samples through
//! `History::push`, which evaluates the findings with the same
//! `findings::evaluate`, and its Sockets rows are built by the same
//! `SocketRows::get` at the first frame (replay keeps no socket histories).
//!
//! What the UI asked for may change while the worker runs (a new sort, a
//! new selection): the row order is then built again for the new sort (a
//! copy of the prepared unsorted rows and a partial selection; off the UI
//! thread when the rows are many, `socket_order`), and a socket selected
//! meanwhile gets its first history point one sample later.

use super::socket_rows::{SocketRows, WantOwned};
use super::socket_trails::trail_candidates;
use crate::findings::{Finding, Thresholds, evaluate};
use crate::model::Sample;
use crate::model::sockets::SocketKey;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// What the UI wants prepared with a sample.
#[derive(Debug, Clone)]
pub struct Ask {
    pub limits: Thresholds,
    /// The selected socket and those with a history (see `trail_candidates`).
    pub trail_keys: HashSet<SocketKey>,
    /// The Sockets tab's row order, when it is shown live.
    pub rows: Option<WantOwned>,
}

/// A sample with what `prepare` computed over it.
#[derive(Debug)]
pub struct Prepared {
    pub sample: Arc<Sample>,
    /// `findings::evaluate(previous, sample)`: before the hysteresis.
    pub raised: Vec<Finding>,
    /// `trail_candidates` of the sample.
    pub trail_rows: Vec<u32>,
    /// The row order for `Ask::rows`.
    pub rows: Option<SocketRows>,
}

/// Every pass over the sample's sockets the UI would otherwise make.
pub fn prepare(previous: Option<&Sample>, sample: Arc<Sample>, ask: &Ask) -> Prepared {
    let raised = evaluate(previous, &sample, &ask.limits);
    let trail_rows = trail_candidates(&sample, &ask.trail_keys, &ask.limits);
    let rows = ask.rows.as_ref().map(|want| {
        let mut rows = SocketRows::default();
        rows.get(&sample, &want.want());
        // Shared, so a new sort of it can run off the UI thread.
        rows.sample = Some(sample.clone());
        rows
    });
    Prepared {
        sample,
        raised,
        trail_rows,
        rows,
    }
}

struct Job {
    previous: Option<Arc<Sample>>,
    sample: Arc<Sample>,
    ask: Ask,
}

/// The thread that runs `prepare` for the live view, in sample order. It
/// ends when the Worker is dropped.
pub struct Worker {
    jobs: Sender<Job>,
}

impl Worker {
    /// Starts the thread; the prepared samples come out of the receiver, in
    /// the order they were sent.
    pub fn start() -> std::io::Result<(Self, UnboundedReceiver<Prepared>)> {
        let (jobs, queue) = std::sync::mpsc::channel();
        let (done, prepared) = tokio::sync::mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("netlens-prepare".into())
            .spawn(move || {
                crate::collect::priority::lower_this_thread();
                run(&queue, &done)
            })?;
        Ok((Self { jobs }, prepared))
    }

    /// Queues `sample` (`previous` is the sample sent before it); false when
    /// the thread is gone.
    pub fn send(&self, previous: Option<Arc<Sample>>, sample: Arc<Sample>, ask: Ask) -> bool {
        self.jobs
            .send(Job {
                previous,
                sample,
                ask,
            })
            .is_ok()
    }
}

/// Prepares the jobs in order. A job with newer ones already waiting is
/// prepared `behind`: its findings only (the hysteresis needs every
/// sample), no row order and no history points, which only the newest
/// sample shown needs. So a worker slower than the sampler (seconds a
/// sample at a million sockets under load) catches up instead of queueing
/// samples of hundreds of megabytes without bound.
fn run(queue: &Receiver<Job>, done: &UnboundedSender<Prepared>) {
    let mut waiting = std::collections::VecDeque::new();
    loop {
        if waiting.is_empty() {
            match queue.recv() {
                Ok(job) => waiting.push_back(job),
                Err(_) => return,
            }
        }
        waiting.extend(queue.try_iter());
        let Some(job) = waiting.pop_front() else {
            continue;
        };
        let prepared = if waiting.is_empty() {
            prepare(job.previous.as_deref(), job.sample, &job.ask)
        } else {
            behind(job.previous.as_deref(), job.sample, &job.ask)
        };
        // The previous sample is let go here, so the UI's history may free
        // its socket list.
        drop(job.previous);
        if done.send(prepared).is_err() {
            return;
        }
    }
}

/// `prepare` for a sample that newer ones follow: the findings only.
fn behind(previous: Option<&Sample>, sample: Arc<Sample>, ask: &Ask) -> Prepared {
    Prepared {
        raised: evaluate(previous, &sample, &ask.limits),
        sample,
        trail_rows: Vec::new(),
        rows: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::App;
    use crate::app::keymap::Key;
    use crate::app::sockets::{Column, compare};
    use crate::app::tabs::Tab;
    use crate::collect::SamplerEvent;
    use crate::findings::Engine;
    use crate::model::sockets::{
        Proto, SocketSample, SocketUser, TCP_CLOSE_WAIT, TCP_ESTABLISHED, TCP_LISTEN,
        TCP_TIME_WAIT, TcpSample,
    };
    use std::time::Duration;

    /// Sample `second` of a fixed table: established sockets with queues,
    /// TIME_WAIT sockets to five peers, a growing pile of CLOSE_WAIT held
    /// by one process (the close-wait finding) and full listeners (flagged,
    /// so they get a history).
    fn sample(second: u32) -> Sample {
        let socket = |i: u32, state: u8, local: String, peer: String| SocketSample {
            netns: 0,
            proto: Proto::Tcp,
            state,
            local: local.parse().unwrap(),
            peer: peer.parse().unwrap(),
            recv_q: (i * 104_729 + second * 31) % 97,
            send_q: (i * 7919) % 13,
            uid: 0,
            inode: i,
            users: vec![SocketUser {
                process: ["api", "db", "api,db"][(i % 3) as usize].into(),
                pid: 100 + i % 3,
                fd: i,
            }]
            .into(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            limits: None,
        };
        let mut sockets: Vec<SocketSample> = (0..3000)
            .map(|i| {
                let state = if i % 7 == 0 {
                    TCP_TIME_WAIT
                } else {
                    TCP_ESTABLISHED
                };
                let local = format!("198.18.0.1:{}", 1000 + (i * 7919) % 50_000);
                socket(i, state, local, format!("198.18.1.{}:80", i % 5))
            })
            .collect();
        for i in 0..(80 + second * 10) {
            let local = "198.18.0.1:8443".to_string();
            let peer = format!("198.18.2.1:{}", 2000 + i);
            let mut held = socket(10_000 + i, TCP_CLOSE_WAIT, local, peer);
            held.users[0].pid = 4242;
            sockets.push(held);
        }
        for port in 0..3 {
            let local = format!("198.18.0.1:{}", 9000 + port);
            let mut listener = socket(20_000 + port, TCP_LISTEN, local, "0.0.0.0:0".into());
            listener.recv_q = 129;
            listener.send_q = 128;
            sockets.push(listener);
        }
        Sample {
            t: 1000.0 + f64::from(second),
            mono: f64::from(second),
            sockets: sockets.into(),
            tcp: Some(TcpSample::default()),
            ..Default::default()
        }
    }

    fn event(second: u32) -> SamplerEvent {
        SamplerEvent::Sample(Box::new(sample(second)))
    }

    /// Every row of the Sockets tab in the order a full sort gives: what
    /// the partial selection's shown prefix must equal.
    fn full_sort(current: &Sample, column: Column, descending: bool) -> Vec<u32> {
        let mut first_of_peer = std::collections::HashMap::new();
        let mut rows = Vec::new();
        for (i, socket) in current.sockets.iter().enumerate() {
            if socket.state == TCP_TIME_WAIT {
                first_of_peer.entry(socket.peer).or_insert(i as u32);
            } else {
                rows.push(i as u32);
            }
        }
        rows.extend(first_of_peer.into_values());
        let limits = Thresholds::DEFAULT;
        rows.sort_by(|&a, &b| {
            let (x, y) = (
                &current.sockets.at(a as usize),
                &current.sockets.at(b as usize),
            );
            let by = compare(x, y, column, &limits);
            let by = if descending { by.reverse() } else { by };
            by.then_with(|| x.local.cmp(&y.local))
                .then_with(|| x.peer.cmp(&y.peer))
                .then_with(|| a.cmp(&b))
        });
        rows
    }

    #[test]
    fn the_worker_gives_what_the_passes_on_the_ui_thread_gave() {
        let mut inline = App::new(Tab::Sockets, Duration::from_secs(1), false);
        let mut live = App::new(Tab::Sockets, Duration::from_secs(1), false);
        let mut prepared = live.start_preparing().unwrap();
        let mut engine = Engine::default();
        let mut previous: Option<Sample> = None;
        for second in 0..6 {
            if second == 3 {
                // A sort the worker is asked for, and a selection.
                for app in [&mut inline, &mut live] {
                    app.on_key(Key::Char('s'));
                    app.on_key(Key::Down);
                    app.on_key(Key::Down);
                }
            }
            inline.on_sampler(event(second));
            assert!(
                !live.on_sampler(event(second)),
                "shown before it is prepared"
            );
            let ready = prepared.blocking_recv().unwrap();
            assert!(ready.rows.is_some(), "the Sockets tab's order is prepared");
            assert!(live.take_prepared(ready));

            // The findings: as the engine stepped on the UI thread found them.
            let current = sample(second);
            let expected = engine.step(previous.as_ref(), &current, &Thresholds::DEFAULT);
            let index = inline.history.len() - 1;
            assert_eq!(inline.history.findings(index), expected.as_slice());
            assert_eq!(live.history.findings(index), expected.as_slice());
            let close_wait = expected.iter().any(|f| f.id == "close-wait");
            assert_eq!(close_wait, second >= 1, "close-wait from the 2nd sample");

            // The histories: the three full listeners and the selection.
            assert_eq!(inline.sockets.trails, live.sockets.trails);
            assert!(live.sockets.trails.len() >= 3);
            assert!(
                live.sockets
                    .trails
                    .values()
                    .all(|t| t.len() <= second as usize + 1)
            );

            // The row order: the full sort's, as far as it is sorted.
            let (sort, descending) = (live.sockets.sort, live.sockets.descending);
            let full = full_sort(&current, sort, descending);
            let (a, b) = (inline.sockets.order(&current), live.sockets.order(&current));
            let sorted = 1000;
            assert_eq!(a[..sorted], b[..sorted]);
            assert_eq!(a.len(), full.len());
            assert_eq!(a[..sorted], full[..sorted]);
            previous = Some(current);
        }
        assert_eq!(inline.sockets.selected, live.sockets.selected);
        assert!(live.sockets.selected.is_some());
    }

    /// Samples sent faster than the worker prepares them all come back, in
    /// order, with the findings the engine gives for each; the newest is
    /// prepared whole (its row order), whichever were prepared behind.
    #[test]
    fn a_worker_behind_the_sampler_catches_up_with_every_sample() {
        let mut live = App::new(Tab::Sockets, Duration::from_secs(1), false);
        let mut prepared = live.start_preparing().unwrap();
        for second in 0..8 {
            live.on_sampler(event(second));
        }
        let mut engine = Engine::default();
        let mut previous: Option<Sample> = None;
        for second in 0..8 {
            let ready = prepared.blocking_recv().unwrap();
            assert_eq!(ready.sample.mono, sample(second).mono, "in order");
            if second == 7 {
                assert!(ready.rows.is_some(), "the newest is prepared whole");
            }
            assert!(live.take_prepared(ready));
            let current = sample(second);
            let expected = engine.step(previous.as_ref(), &current, &Thresholds::DEFAULT);
            let index = live.history.len() - 1;
            assert_eq!(live.history.findings(index), expected.as_slice());
            previous = Some(current);
        }
    }

    #[test]
    fn a_new_sort_selects_again_from_the_prepared_rows() {
        let current = Arc::new(sample(2));
        let mut app = App::new(Tab::Sockets, Duration::from_secs(1), false);
        app.on_sampler(event(1));
        app.on_sampler(event(2));
        for _ in 0..9 {
            app.on_key(Key::Char('s'));
            let (sort, descending) = (app.sockets.sort, app.sockets.descending);
            let full = full_sort(&current, sort, descending);
            let order = app.sockets.order(&current);
            assert_eq!(order[..1000], full[..1000], "{sort:?}");
        }
    }
}
