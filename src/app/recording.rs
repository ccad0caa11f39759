//! The live view's recording (--record FILE, R): where the files go, and
//! what the screen says about them.
//!
//! The first file is --record's; R after it starts a new file beside it.
//! Without --record, R's files go to $XDG_STATE_HOME/netlens
//! (~/.local/state/netlens), created mode 0700. The findings line says where
//! a recording goes when it starts and what was saved when it stops; a
//! write error (a full disk) stays there until a key is pressed, and is
//! printed again on exit.

use super::App;
use crate::model::Sample;
use crate::record::{self, Recorder};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a message about a recording that went well stays up (a key
/// also clears it); an error stays until a key is pressed.
const NOTICE_SECONDS: Duration = Duration::from_secs(10);

/// A message about the recording on the findings line.
#[derive(Debug, Clone)]
pub struct Notice {
    pub text: String,
    /// A recording stopped by an error: kept until a key acknowledges it.
    pub error: bool,
    since: Instant,
}

impl Notice {
    pub(super) fn info(text: String) -> Notice {
        Notice {
            text,
            error: false,
            since: Instant::now(),
        }
    }

    pub(super) fn error(text: String) -> Notice {
        Notice {
            error: true,
            ..Notice::info(text)
        }
    }
}

impl App {
    /// Starts recording to `path` (a new file), of namespace `netns`.
    pub fn start_recording_at(&mut self, path: &Path, netns: &str) -> anyhow::Result<()> {
        let meta = record::meta(netns, self.interval);
        let recorder = Recorder::create_with_capture(path, &meta, self.flows.capture.as_ref())?;
        self.start_recording(recorder, path);
        Ok(())
    }

    /// As `start_recording_at`, to `--record`'s path: the user named it, so
    /// it may also be an existing character device or FIFO (/dev/null).
    pub fn start_recording_to_output(&mut self, path: &Path, netns: &str) -> anyhow::Result<()> {
        let meta = record::meta(netns, self.interval);
        let recorder = Recorder::create_output(path, &meta, self.flows.capture.as_ref())?;
        self.start_recording(recorder, path);
        Ok(())
    }

    fn start_recording(&mut self, mut recorder: Recorder, path: &Path) {
        recorder.thresholds = self.thresholds;
        self.notice = Some(Notice::info(format!(
            "recording to {} (R stops)",
            shown_path(path)
        )));
        self.recording = Some(recorder);
    }

    /// R: starts recording to a new file, or stops and closes the file.
    pub(super) fn toggle_recording(&mut self) -> bool {
        if self.replay.is_some() {
            return false;
        }
        if self.recording.is_some() {
            self.finish_recording();
            return true;
        }
        let netns = self
            .history
            .get(self.history.len().wrapping_sub(1))
            .map_or("host", |s| s.netns.as_str())
            .to_string();
        let started = self
            .next_record_path()
            .and_then(|path| self.start_recording_at(&path, &netns));
        if let Err(error) = started {
            self.notice = Some(Notice::error(format!("cannot record: {error:#}")));
        }
        true
    }

    /// Where R records next: --record FILE if it is not there yet, else a
    /// new timestamped file beside it (in the state directory when FILE is
    /// a device or FIFO), else one in the state directory.
    fn next_record_path(&self) -> anyhow::Result<PathBuf> {
        let dir = match &self.record_path {
            Some(path) if path.symlink_metadata().is_err() => return Ok(path.clone()),
            // --record /dev/null or a FIFO: nothing goes beside it in /dev.
            Some(path) if !path.symlink_metadata().is_ok_and(|m| m.is_file()) => state_dir()?,
            Some(path) => match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            },
            None => state_dir()?,
        };
        let newest = self.history.get(self.history.len().wrapping_sub(1));
        let name = record::default_path(newest.map_or_else(now, |s| s.t));
        Ok(free_name(&dir.join(name)))
    }

    /// Closes the running recording and says what it saved.
    fn finish_recording(&mut self) {
        let Some(recorder) = self.recording.take() else {
            return;
        };
        let path = shown_path(recorder.path());
        self.notice = Some(match recorder.finish() {
            Ok(stats) => {
                let text = format!(
                    "recorded {} samples ({}) to {path}",
                    stats.records[0],
                    record::inspect::size(stats.bytes)
                );
                self.recorded.push(text.clone());
                Notice::info(text)
            }
            Err(error) => {
                let text = format!("recording {path}: {error:#}");
                self.record_failures.push(text.clone());
                Notice::error(text)
            }
        });
    }

    /// Writes a live sample to the recording, if one is running. A failed
    /// write stops the recording with its reason and what was saved. Returns
    /// whether the findings line changed.
    pub(super) fn record_sample(&mut self, sample: &mut Sample) -> bool {
        let expired = self
            .notice
            .take_if(|n| !n.error && n.since.elapsed() >= NOTICE_SECONDS)
            .is_some();
        let Some(recorder) = self.recording.as_mut() else {
            return expired;
        };
        let previous = self.submitted.as_deref();
        let Err(error) = recorder.record(previous, sample) else {
            return expired;
        };
        let Some(recorder) = self.recording.take() else {
            return expired;
        };
        let saved = recorder.stats();
        let path = recorder.path().to_path_buf();
        let closed = recorder.finish().is_ok();
        // The cause alone ("No space left on device"): the path follows.
        let text = format!(
            "recording stopped: {}; {}",
            error.root_cause(),
            record::inspect::saved_text(&saved, Path::new(&shown_path(&path)), closed)
        );
        self.record_failures.push(text.clone());
        self.notice = Some(Notice::error(text));
        true
    }

    /// A key clears the message about the recording (an error is thereby
    /// acknowledged). Returns whether there was one.
    pub fn acknowledge_notice(&mut self) -> bool {
        self.notice.take().is_some()
    }

    /// Closes the recording, if one is running (on quit), and returns what
    /// to print once the terminal is back: where recordings went, and the
    /// errors that stopped any.
    pub fn stop_recording(&mut self) -> (Vec<String>, Vec<String>) {
        self.finish_recording();
        (
            std::mem::take(&mut self.recorded),
            std::mem::take(&mut self.record_failures),
        )
    }
}

/// $XDG_STATE_HOME/netlens, else ~/.local/state/netlens, created mode 0700
/// (recordings hold the host's connections).
pub fn state_dir() -> anyhow::Result<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base = match absolute("XDG_STATE_HOME") {
        Some(base) => base,
        None => match absolute("HOME") {
            Some(home) => home.join(".local/state"),
            None => anyhow::bail!(
                "neither $XDG_STATE_HOME nor $HOME is set to say where recordings go: \
                 start netlens with --record FILE"
            ),
        },
    };
    let dir = base.join("netlens");
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// `path`, or `path` with -2, -3... before its suffix when it exists (two
/// recordings started within one second).
fn free_name(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let mut candidate = path.to_path_buf();
    for n in 2..1000 {
        if candidate.symlink_metadata().is_err() {
            break;
        }
        candidate = path.with_file_name(format!("{stem}-{n}.{}", record::SUFFIX));
    }
    candidate
}

/// The path as the user can find it again: absolute.
pub(super) fn shown_path(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_a_number() {
        let dir = std::env::temp_dir().join(format!("netlens-free-name-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("netlens-20240101-100000.nlrec");
        assert_eq!(free_name(&path), path);
        std::fs::write(&path, b"").unwrap();
        assert_eq!(
            free_name(&path),
            dir.join("netlens-20240101-100000-2.nlrec")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
