//! SIGINT, SIGTERM and SIGHUP (an SSH session that drops) stop a command
//! that writes a file the same way: it stops sampling and closes the file
//! whole. Registered before the file is created, so none of them kills the
//! process with the file half written.

use super::Session;
use crate::collect::SamplerEvent;
use crate::model::Sample;
use anyhow::{Context, Result, bail};
use tokio::signal::unix::{Signal, SignalKind, signal};

/// The three stop signals, caught from creation on.
pub struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl StopSignals {
    /// Must be called inside a Tokio runtime.
    pub fn new() -> Result<StopSignals> {
        let catch = |kind: SignalKind| signal(kind).context("cannot catch the stop signals");
        Ok(StopSignals {
            interrupt: catch(SignalKind::interrupt())?,
            terminate: catch(SignalKind::terminate())?,
            hangup: catch(SignalKind::hangup())?,
        })
    }

    /// Returns when one of them arrives (or arrived since `new`).
    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
            _ = self.hangup.recv() => {}
        }
    }
}

/// The stop signals for a command without an async runtime of its own
/// (`snapshot`): waits for samples and for them at once.
pub struct Stop {
    pub runtime: tokio::runtime::Runtime,
    pub signals: StopSignals,
}

impl Stop {
    pub fn new() -> Result<Stop> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let signals = runtime.block_on(async { StopSignals::new() })?;
        Ok(Stop { runtime, signals })
    }

    /// The session's next sample, or None once a stop signal came; an
    /// error when the sampler failed or stopped.
    pub fn next_sample(&mut self, session: &mut Session) -> Result<Option<Sample>> {
        let signals = &mut self.signals;
        let event = self.runtime.block_on(async {
            tokio::select! {
                event = session.next() => Some(event),
                () = signals.recv() => None,
            }
        });
        match event {
            None => Ok(None),
            Some(Some(SamplerEvent::Sample(sample))) => Ok(Some(*sample)),
            Some(Some(SamplerEvent::Error(error))) => bail!("{error}"),
            Some(None) => bail!("the sampler stopped unexpectedly"),
        }
    }
}
