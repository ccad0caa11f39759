//! The App's side of recording and replay. Replay is another Source: the
//! Player hands samples to the same History the sampler fills, so every view,
//! rate and finding is computed as it was live.

use super::App;
use super::history::{History, WINDOW_SECONDS};
use super::keymap::{Action, Key};
use super::overlay::{Keyed, Overlay};
use crate::capture::live::Capture;
use crate::model::Sample;
use crate::record::format::Stream;
use crate::record::player::Player;
use crate::record::time;
use std::collections::HashSet;
use std::time::Instant;

/// At most this many samples are applied in one wake-up when playback fell
/// behind (then it draws and catches up on the next turn).
const CATCH_UP: usize = 64;

/// A jump refills the history with this many whole samples (the shown
/// pair's rates, and the findings' streaks to show and calm down); older
/// ones come without their sockets, as the live view keeps them, so a jump
/// decodes and evaluates a bounded number of socket tables.
const FULL_SAMPLES: usize = 12;

/// What the header says about where samples come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Live,
    Paused,
    /// `following`: `replay --follow` at the end of a file still being
    /// written, waiting for its recorder's next sample.
    Replay {
        playing: bool,
        speed: f64,
        following: bool,
    },
}

impl App {
    pub fn mode(&self) -> Mode {
        match &self.replay {
            Some(player) => Mode::Replay {
                playing: player.playing,
                speed: player.speed,
                following: player.following,
            },
            None if self.paused_at.is_some() => Mode::Paused,
            None => Mode::Live,
        }
    }

    /// How old the live view's newest sample is, when that is more than
    /// two intervals (the sampler has not delivered): the header then says
    /// "stale" and this age instead of "live".
    pub fn stale_for(&self) -> Option<std::time::Duration> {
        if self.mode() != Mode::Live {
            return None;
        }
        let age = self.sampled_at?.elapsed();
        (age > self.interval * 2).then_some(age)
    }

    /// When what `stale_for` shows next changes (it turns stale, or its
    /// whole seconds count up), so the loop wakes then and not before;
    /// None while it cannot change (not live, no sample yet).
    pub fn stale_changes_at(&self) -> Option<Instant> {
        if self.mode() != Mode::Live {
            return None;
        }
        let sampled = self.sampled_at?;
        let turns_stale = self.interval * 2;
        let age = sampled.elapsed();
        Some(if age <= turns_stale {
            sampled + turns_stale + std::time::Duration::from_millis(1)
        } else {
            sampled + std::time::Duration::from_secs(age.as_secs() + 1)
        })
    }

    /// Makes `player` the source of samples, at its cursor.
    pub fn start_replay(&mut self, mut player: Player) {
        // The file's interval is data, not trusted: a damaged one must not
        // panic, nor stretch the view beyond what --interval allows.
        if let Some(meta) = &player.reader().meta
            && let Ok(interval) = std::time::Duration::try_from_secs_f64(meta.interval)
            && !interval.is_zero()
        {
            self.interval = interval.min(crate::units::MAX_INTERVAL);
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
        self.finding_marks = finding_marks(&player, &self.thresholds);
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
        let mut history = History::new(self.thresholds);
        for sample in player.window(WINDOW_SECONDS, FULL_SAMPLES) {
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
        let back = matches!(key, Key::Left | Key::Char('[' | '-' | 'g' | '{'));
        if action == Action::ReplayFinding && self.replay.is_some() {
            self.jump_to_finding(back);
            return true;
        }
        let Some(player) = self.replay.as_mut() else {
            return false;
        };
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
                self.overlays.push(Overlay::Time(String::new()));
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

    /// { and }: to the previous or next sample where a finding starts.
    fn jump_to_finding(&mut self, back: bool) {
        let Some(player) = self.replay.as_mut() else {
            return;
        };
        let now = player.current_t().unwrap_or(player.start_t());
        let mark = if back {
            self.finding_marks.iter().rev().find(|t| **t < now)
        } else {
            self.finding_marks.iter().find(|t| **t > now)
        };
        match mark {
            Some(t) => {
                player.seek(*t);
                self.sync_replay();
            }
            None => {
                let which = if back { "before" } else { "after" };
                self.error = Some(format!("no finding starts {which} this sample"));
            }
        }
    }

    fn push_replayed(&mut self, sample: Sample) {
        let before = self.history.get(self.history.len().wrapping_sub(1));
        let after = before.map_or(f64::NEG_INFINITY, |s| s.t);
        self.push_replayed_after(sample, after);
    }

    /// Shows `sample` with the packets recorded after wall-clock `after`.
    fn push_replayed_after(&mut self, sample: Sample, after: f64) {
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
        // Far behind (3600x, or frames slower than the samples come): show
        // the sample due now, with the packets of its own interval.
        if let Some(player) = self.replay.as_mut()
            && let Some(sample) = player.skip_to_due(now, CATCH_UP)
        {
            let after = player.previous_t().unwrap_or(f64::NEG_INFINITY);
            self.push_replayed_after(sample, after);
            return true;
        }
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

    /// A key at the `t` prompt: Enter jumps, Esc cancels.
    pub(super) fn time_prompt_key(
        &mut self,
        mut text: String,
        key: Key,
    ) -> (Option<Overlay>, Keyed) {
        match key {
            key if super::line_edit::edit(&mut text, key) => {}
            Key::Esc => return (None, Keyed::Done(true)),
            Key::Enter => {
                self.jump_to_text(&text);
                return (None, Keyed::Done(true));
            }
            _ => return (Some(Overlay::Time(text)), Keyed::Done(false)),
        }
        (Some(Overlay::Time(text)), Keyed::Done(true))
    }

    /// Jumps to a time typed at the prompt or given with --at.
    pub fn jump_to_text(&mut self, text: &str) {
        let Some(player) = self.replay.as_mut() else {
            return;
        };
        let current = player.current_t().unwrap_or(player.start_t());
        match time::parse_at(text, player.start_t(), current, player.utc_offset) {
            Ok(t) => {
                player.seek(t);
                self.sync_replay();
            }
            Err(error) => self.error = Some(error),
        }
    }
}

/// The times of the samples where a finding (by id and evidence row) starts
/// to show. A recording carries the findings its recorder showed each time
/// they changed (a few records, however long the file), so the marks come
/// from those; a file without them (format 1) is stepped through one
/// `findings::Engine` as replay --json does, which decodes every sample
/// (minutes for hours of 10k sockets). Damaged segments are skipped.
fn finding_marks(player: &Player, limits: &crate::findings::Thresholds) -> Vec<f64> {
    let reader = player.reader();
    let recorded = reader.stream_segments(Stream::Findings);
    if recorded.is_empty() {
        return evaluated_marks(player, limits);
    }
    let mut marks = MarkTracker::default();
    for entry in recorded {
        let Ok(read) = reader.read_raw(&entry) else {
            continue;
        };
        for (head, bytes) in read.heads.iter().zip(&read.records) {
            if let Ok(found) = serde_json::from_slice::<Vec<RecordedFinding>>(bytes) {
                marks.step(head.t, found.into_iter().map(|f| (f.id, f.evidence.row)));
            }
        }
    }
    marks.times
}

/// The findings stream's records, read for their keys only.
#[derive(serde::Deserialize)]
struct RecordedFinding {
    id: String,
    evidence: RecordedEvidence,
}

#[derive(serde::Deserialize)]
struct RecordedEvidence {
    row: String,
}

/// Where a finding key (id, evidence row) not shown before shows.
#[derive(Default)]
struct MarkTracker {
    shown: HashSet<(String, String)>,
    times: Vec<f64>,
}

impl MarkTracker {
    fn step(&mut self, t: f64, found: impl Iterator<Item = (String, String)>) {
        let now: HashSet<(String, String)> = found.collect();
        if now.iter().any(|key| !self.shown.contains(key)) {
            self.times.push(t);
        }
        self.shown = now;
    }
}

/// The marks of a file without a findings stream: every sample evaluated.
fn evaluated_marks(player: &Player, limits: &crate::findings::Thresholds) -> Vec<f64> {
    let reader = player.reader();
    let mut engine = crate::findings::Engine::default();
    let mut previous: Option<Sample> = None;
    let mut marks = MarkTracker::default();
    for entry in reader.sample_segments() {
        // One sample at a time: a segment's samples are never all held.
        let read = reader.each_sample(&entry, |before, sample| {
            let found = engine.step(before.or(previous.as_ref()), sample, limits);
            let keys = found
                .into_iter()
                .map(|f| (f.id.to_string(), f.evidence.row));
            marks.step(sample.t, keys);
            Ok(())
        });
        if let Ok((Some(last), _)) = read {
            previous = Some(last);
        }
    }
    marks.times
}
