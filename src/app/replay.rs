//! The App's side of recording and replay. Replay is another Source: the
//! Player hands samples to the same History the sampler fills, so every view,
//! rate and finding is computed as it was live.

use super::App;
use super::history::{History, WINDOW_SECONDS};
use super::keymap::{Action, Key};
use crate::capture::live::Capture;
use crate::model::Sample;
use crate::record::player::Player;
use crate::record::{self, Recorder, time};
use std::time::Instant;

/// At most this many samples are applied in one wake-up when playback fell
/// behind (then it draws and catches up on the next turn).
const CATCH_UP: usize = 64;

/// What the header says about where samples come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Live,
    Paused,
    Replay { playing: bool, speed: f64 },
}

impl App {
    pub fn mode(&self) -> Mode {
        match &self.replay {
            Some(player) => Mode::Replay {
                playing: player.playing,
                speed: player.speed,
            },
            None if self.paused_at.is_some() => Mode::Paused,
            None => Mode::Live,
        }
    }

    /// Makes `player` the source of samples, at its cursor.
    pub fn start_replay(&mut self, mut player: Player) {
        if let Some(meta) = &player.reader().meta
            && meta.interval > 0.0
        {
            self.interval = std::time::Duration::from_secs_f64(meta.interval);
        }
        // The header names the host that recorded, not the one replaying.
        if let Some(meta) = &player.reader().meta
            && !meta.hostname.is_empty()
        {
            self.hostname = meta.hostname.clone();
        }
        // Recorded packets go through a capture of their own, into the
        // Flows tab's state by the path live packets take.
        self.flows.capture = None;
        if player.has_packets() {
            let payloads = player.reader().meta.as_ref().is_some_and(|m| m.payloads);
            let linktype = player.packet_linktype();
            let snaplen = if payloads {
                crate::capture::ring::PAYLOAD_SNAPLEN
            } else {
                crate::capture::ring::DEFAULT_SNAPLEN
            };
            let iface = player
                .current()
                .and_then(|s| s.capture.map(|c| c.iface))
                .unwrap_or_else(|| "any".into());
            self.flows.capture = Some(Capture::replayed(linktype, snaplen, &iface));
        }
        self.replay = Some(player);
        self.paused_at = None;
        self.sync_replay();
    }

    /// Refills the history with what a live view would have held at the
    /// player's cursor.
    fn sync_replay(&mut self) {
        let Some(player) = self.replay.as_mut() else {
            return;
        };
        let mut history = History::default();
        for sample in player.window(WINDOW_SECONDS) {
            history.push(sample);
        }
        self.history = history;
        // The packet list and the flow table start again from the packets
        // segment's keyframe.
        self.flows.clear_packets();
        let mut events = Vec::new();
        if let Some(capture) = &self.flows.capture {
            capture.reset_replay();
            if let Some(current) = self.history.get(self.history.len().wrapping_sub(1)) {
                let names = current.interfaces.iter().map(|i| (i.index, i.name.clone()));
                capture.set_ifnames(names);
                let t = current.t;
                for batch in player.packets_up_to(t) {
                    events.push(capture.feed(&batch, t));
                }
            }
        }
        for event in events {
            self.flows.on_capture(event);
        }
        self.error = player.damage.take();
        self.rebuild_flow_detail();
    }

    /// A replay key; `key` picks the direction of the paired bindings.
    pub fn replay_action(&mut self, action: Action, key: Key) -> bool {
        let Some(player) = self.replay.as_mut() else {
            return false;
        };
        let back = matches!(key, Key::Left | Key::Char('[' | '-' | 'g'));
        match action {
            Action::Pause => {
                player.toggle_play();
                return true;
            }
            Action::ReplaySpeed => {
                player.change_speed(!back);
                return true;
            }
            Action::ReplayJumpTo => {
                self.time_prompt = Some(String::new());
                return true;
            }
            Action::ReplayStep if !back => {
                if let Some(sample) = player.step_forward() {
                    self.push_replayed(sample);
                }
                return true;
            }
            Action::ReplayStep => {
                player.step_back();
            }
            Action::ReplayMinute => player.jump(if back { -60.0 } else { 60.0 }),
            Action::ReplayEnds if back => player.goto_start(),
            Action::ReplayEnds => player.goto_end(),
            _ => return false,
        }
        self.sync_replay();
        true
    }

    fn push_replayed(&mut self, sample: Sample) {
        let before = self.history.get(self.history.len().wrapping_sub(1));
        let after = before.map_or(f64::NEG_INFINITY, |s| s.t);
        let t = sample.t;
        self.history.push(sample);
        let Some(player) = self.replay.as_mut() else {
            return;
        };
        let mut events = Vec::new();
        if let Some(capture) = &self.flows.capture {
            for batch in player.packets_between(after, t) {
                events.push(capture.feed(&batch, t));
            }
        }
        self.error = player.damage.take().or(self.error.take());
        for event in events {
            self.on_capture(event);
        }
    }

    /// When the player wants the next sample (None: paused or at the end).
    pub fn replay_deadline(&mut self, now: Instant) -> Option<Instant> {
        self.replay.as_mut()?.deadline(now)
    }

    /// The deadline passed: applies every sample now due.
    pub fn replay_tick(&mut self, now: Instant) -> bool {
        let mut changed = false;
        for _ in 0..CATCH_UP {
            let Some(player) = self.replay.as_mut() else {
                break;
            };
            match player.deadline(now) {
                Some(due) if due <= now => {}
                _ => break,
            }
            match player.advance() {
                Some(sample) => {
                    self.push_replayed(sample);
                    changed = true;
                }
                None => {
                    changed = true;
                    break;
                }
            }
        }
        changed
    }

    pub(super) fn edit_time_prompt(&mut self, key: Key) -> bool {
        let Some(text) = self.time_prompt.as_mut() else {
            return false;
        };
        match key {
            key if super::line_edit::edit(text, key) => {}
            Key::Esc => self.time_prompt = None,
            Key::Enter => {
                let text = self.time_prompt.take().unwrap_or_default();
                self.jump_to_text(&text);
            }
            _ => return false,
        }
        true
    }

    /// Jumps to a time typed at the prompt or given with --at.
    pub fn jump_to_text(&mut self, text: &str) {
        let Some(player) = self.replay.as_mut() else {
            return;
        };
        let current = player.current().map_or(player.start_t(), |s| s.t);
        match time::parse_at(text, player.start_t(), current, player.utc_offset) {
            Ok(t) => {
                player.seek(t);
                self.sync_replay();
            }
            Err(error) => self.error = Some(error),
        }
    }

    /// R: starts recording (to --record FILE or a new timestamped file), or
    /// stops and closes the file.
    pub(super) fn toggle_recording(&mut self) -> bool {
        if self.replay.is_some() {
            return false;
        }
        if let Some(recorder) = self.recording.take() {
            let path = recorder.path().display().to_string();
            if let Err(error) = recorder.finish() {
                self.error = Some(format!("recording {path}: {error:#}"));
            }
            return true;
        }
        let newest_t = self.history.get(self.history.len().wrapping_sub(1));
        let path = match self.record_path.clone() {
            Some(path) if !path.exists() => path,
            _ => record::default_path(newest_t.map_or_else(now, |s| s.t)),
        };
        let netns = newest_t.map_or("host", |s| s.netns.as_str()).to_string();
        let meta = record::meta(&netns, self.interval);
        match Recorder::create_with_capture(&path, &meta, self.flows.capture.as_ref()) {
            Ok(mut recorder) => {
                recorder.thresholds = self.thresholds;
                self.recording = Some(recorder);
            }
            Err(error) => self.error = Some(format!("{error:#}")),
        }
        true
    }

    /// Writes a live sample to the recording, if one is running. A failed
    /// write stops the recording; the error is returned for the screen.
    pub(super) fn record_sample(&mut self, sample: &mut Sample) -> Option<String> {
        let recorder = self.recording.as_mut()?;
        let previous = self.history.get(self.history.len().wrapping_sub(1));
        let error = recorder.record(previous, sample).err()?;
        let path = recorder.path().display().to_string();
        self.recording = None;
        Some(format!("recording to {path} stopped: {error:#}"))
    }

    /// Closes the recording, if one is running (on quit).
    pub fn stop_recording(&mut self) -> anyhow::Result<()> {
        match self.recording.take() {
            Some(recorder) => recorder.finish().map(|_| ()),
            None => Ok(()),
        }
    }
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
