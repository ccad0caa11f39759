//! The replay Source: a cursor over a recording's samples, played at a
//! speed. It hands samples to the App exactly as the live sampler does, so
//! every view, rate and finding is computed by the same code.

use super::format::{DataHead, SegmentEntry, Stream};
use super::lazy::LazySegment;
use super::reader::{Reader, Refresh};
use crate::capture::live::PacketBatch;
use crate::model::Sample;
use anyhow::Result;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

mod window;

pub const MIN_SPEED: f64 = 0.25;
/// 4096x: a day of recording in 21 s; speeds this high skip the samples
/// a frame has no time for (`skip_to_due`).
pub const MAX_SPEED: f64 = 4096.0;
/// Segments kept (a minute each, decompressed, their samples decoded as
/// they are asked for): enough for a five-minute chart window and stepping
/// back and forth across its edges.
const CACHE_SEGMENTS: usize = 8;
/// Bytes the cached segments may hold in all (records inflated and
/// samples kept, `LazySegment::held_bytes`): a segment's records at their
/// bound (1 GiB) and its decoded samples at theirs. Past it the oldest
/// segments are dropped, never the one in use.
const MAX_CACHED_BYTES: usize = (1 << 30) + super::lazy::MAX_DECODED_KEPT;

/// A position: segment (in the samples stream) and sample within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub segment: usize,
    pub ordinal: usize,
}

/// A segment of the packets stream, decoded: each batch under the time of
/// the sample it was recorded with.
type Batches = Rc<Vec<(f64, PacketBatch)>>;

/// A segment of the heads stream, decoded: samples without their sockets.
type Heads = Rc<Vec<Sample>>;

/// The reader's sample segments, and how many samples come before each.
fn sample_index(reader: &Reader) -> (Vec<SegmentEntry>, Vec<usize>) {
    let segments = reader.sample_segments();
    let before = segments
        .iter()
        .scan(0, |total, entry| {
            let here = *total;
            *total += entry.count as usize;
            Some(here)
        })
        .collect();
    (segments, before)
}

pub struct Player {
    reader: Reader,
    segments: Vec<SegmentEntry>,
    packet_segments: Vec<SegmentEntry>,
    packet_cache: VecDeque<(usize, Batches)>,
    /// The heads stream (format 2.2; empty before): the history a jump
    /// refills reads its older samples from there.
    head_segments: Vec<SegmentEntry>,
    head_cache: VecDeque<(usize, Heads)>,
    /// Samples before each segment, by the index (damage may make a
    /// segment shorter; positions shown are then approximate).
    before: Vec<usize>,
    cache: VecDeque<(usize, LazySegment)>,
    /// Samples decoded by segments no longer cached (`decodes`).
    evicted_decodes: u64,
    pub cursor: Cursor,
    pub speed: f64,
    pub playing: bool,
    /// When the next sample is due while playing.
    due: Option<Instant>,
    /// Offset of the clock shown from UTC (the local zone at the start).
    pub utc_offset: i64,
    /// Damage met while decoding, for the error line.
    pub damage: Option<String>,
    /// `replay --follow` of a file still being written: at the end, play
    /// waits for the recorder's next sample instead of stopping. Cleared
    /// once the recorder closes the file.
    pub following: bool,
    /// When the file is looked at next, while following at the end.
    next_look: Option<Instant>,
}

impl Player {
    /// A player on the first sample, paused. Fails when no sample reads.
    pub fn new(reader: Reader) -> Result<Player> {
        let (segments, before) = sample_index(&reader);
        let utc_offset = super::time::local_offset(segments.first().map_or(0.0, |s| s.first_t));
        let packet_segments = reader.stream_segments(Stream::Packets);
        let head_segments = reader.stream_segments(Stream::Heads);
        let mut player = Player {
            reader,
            segments,
            packet_segments,
            packet_cache: VecDeque::new(),
            head_segments,
            head_cache: VecDeque::new(),
            before,
            cache: VecDeque::new(),
            evicted_decodes: 0,
            cursor: Cursor {
                segment: 0,
                ordinal: 0,
            },
            speed: 1.0,
            playing: false,
            due: None,
            utc_offset,
            damage: None,
            following: false,
            next_look: None,
        };
        match player.first_readable(0) {
            Some(cursor) => player.cursor = cursor,
            None => anyhow::bail!(
                "{}: no sample in it can be read{}",
                player.reader.path().display(),
                player
                    .damage
                    .as_deref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
        }
        Ok(player)
    }

    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// Follows the file as the recorder appends to it (a file already
    /// closed has nothing more to come). Starts playing from the end.
    pub fn follow(&mut self) {
        self.following = !self.reader.closed_cleanly;
        self.goto_end();
        self.playing = true;
        self.due = None;
    }

    /// Reads what the recorder appended: the segments (the last one may
    /// have grown; its cached decode is dropped) and, once it closed the
    /// file, its index. Errors end following, with the reason in `damage`.
    fn refresh(&mut self) {
        match self.reader.refresh() {
            Ok(Refresh::Growing) => {}
            Ok(Refresh::Closed) => self.following = false,
            Err(error) => {
                self.damage = Some(format!("{error:#}"));
                self.following = false;
            }
        }
        let (segments, before) = sample_index(&self.reader);
        let packet_segments = self.reader.stream_segments(Stream::Packets);
        let head_segments = self.reader.stream_segments(Stream::Heads);
        self.head_cache
            .retain(|(i, _)| self.head_segments.get(*i) == head_segments.get(*i));
        self.head_segments = head_segments;
        // Keep the decodes of segments that did not change (usually all but
        // the last, which grew): a look that found nothing new costs nothing.
        self.cache
            .retain(|(i, _)| self.segments.get(*i) == segments.get(*i));
        self.packet_cache
            .retain(|(i, _)| self.packet_segments.get(*i) == packet_segments.get(*i));
        (self.segments, self.before, self.packet_segments) = (segments, before, packet_segments);
    }

    /// A segment, decompressed (cached); its samples decode on demand
    /// (`LazySegment`). A segment that cannot be read at all is empty, and
    /// the reason is kept in `damage`.
    fn segment(&mut self, segment: usize) -> &mut LazySegment {
        let at = match self.cache.iter().position(|(s, _)| *s == segment) {
            Some(at) => at,
            None => {
                let (lazy, damage) = match self.segments.get(segment) {
                    Some(entry) => LazySegment::read(&self.reader, entry),
                    None => (LazySegment::read_nothing(), None),
                };
                if damage.is_some() {
                    self.damage = damage;
                }
                if self.cache.len() >= CACHE_SEGMENTS
                    && let Some((_, old)) = self.cache.pop_front()
                {
                    self.evicted_decodes += old.decodes;
                }
                self.cache.push_back((segment, lazy));
                self.cache.len() - 1
            }
        };
        let at = self.evict_past_budget(at);
        &mut self.cache[at].1
    }

    /// Drops the oldest cached segments other than the one at `keep` while
    /// they hold more than `MAX_CACHED_BYTES`; returns where `keep` is now.
    fn evict_past_budget(&mut self, mut keep: usize) -> usize {
        let mut held: usize = self.cache.iter().map(|(_, s)| s.held_bytes()).sum();
        let mut oldest = 0;
        while held > MAX_CACHED_BYTES && oldest < self.cache.len() {
            if oldest == keep {
                oldest += 1;
                continue;
            }
            let (_, old) = self.cache.remove(oldest).expect("in the cache");
            held -= old.held_bytes();
            self.evicted_decodes += old.decodes;
            if keep > oldest {
                keep -= 1;
            }
        }
        keep
    }

    /// Samples decoded whole so far (with their sockets): a seek's or a
    /// skip's cost, for the benches.
    pub fn decodes(&self) -> u64 {
        self.evicted_decodes + self.cache.iter().map(|(_, s)| s.decodes).sum::<u64>()
    }

    /// Records inflated in the segments cached now (tests, benches).
    pub fn inflated(&self) -> usize {
        self.cache.iter().map(|(_, s)| s.inflated()).sum()
    }

    /// Whether sample `ordinal` of `segment` decodes (damage met is kept).
    fn readable(&mut self, segment: usize, ordinal: usize) -> bool {
        if ordinal >= self.segment(segment).len() {
            return false;
        }
        match self.segment(segment).get(ordinal) {
            Ok(_) => true,
            Err(why) => {
                self.damage = Some(why);
                false
            }
        }
    }

    /// Whether the recording holds captured packets.
    pub fn has_packets(&self) -> bool {
        !self.packet_segments.is_empty()
    }

    /// The link type of the recorded packets (from the first segment that
    /// reads); 0 when none does.
    pub fn packet_linktype(&mut self) -> u32 {
        (0..self.packet_segments.len())
            .find_map(|segment| self.batches(segment).first().map(|(_, b)| b.linktype))
            .unwrap_or(0)
    }

    /// The decoded batches of a packets segment (cached, as samples are).
    fn batches(&mut self, segment: usize) -> Batches {
        let (reader, damage) = (&self.reader, &mut self.damage);
        cached(&mut self.packet_cache, segment, || {
            let entry = self.packet_segments.get(segment)?;
            let read = noting_damage(reader.read_packets(entry), damage)?;
            Some(read.heads.iter().map(|h| h.t).zip(read.records).collect())
        })
    }

    /// The packets recorded with the samples after `after` up to `upto`
    /// (wall-clock times), oldest first.
    pub fn packets_between(&mut self, after: f64, upto: f64) -> Vec<PacketBatch> {
        let mut out = Vec::new();
        for segment in 0..self.packet_segments.len() {
            let entry = self.packet_segments[segment];
            if entry.last_t <= after || entry.first_t > upto {
                continue;
            }
            let batches = self.batches(segment);
            out.extend(
                batches
                    .iter()
                    .filter(|(t, _)| *t > after && *t <= upto)
                    .map(|(_, b)| b.clone()),
            );
        }
        out
    }

    /// The packets a view rebuilt at `t` starts from: those of the packets
    /// segment holding `t`, from its keyframe up to `t`.
    pub fn packets_up_to(&mut self, t: f64) -> Vec<PacketBatch> {
        let after = self.packet_segments.partition_point(|s| s.first_t <= t);
        let Some(segment) = after.checked_sub(1) else {
            return Vec::new();
        };
        let batches = self.batches(segment);
        batches
            .iter()
            .filter(|(at, _)| *at <= t)
            .map(|(_, b)| b.clone())
            .collect()
    }

    fn first_readable(&mut self, from: usize) -> Option<Cursor> {
        (from..self.segments.len()).find_map(|segment| {
            (!self.segment(segment).is_empty() && self.readable(segment, 0)).then_some(Cursor {
                segment,
                ordinal: 0,
            })
        })
    }

    fn last_readable(&mut self, until: usize) -> Option<Cursor> {
        (0..=until.min(self.segments.len().saturating_sub(1)))
            .rev()
            .find_map(|segment| {
                let (last, damage) = self.segment(segment).last_readable();
                if damage.is_some() {
                    self.damage = damage;
                }
                last.map(|ordinal| Cursor { segment, ordinal })
            })
    }

    pub fn sample_at(&mut self, cursor: Cursor) -> Option<Sample> {
        self.sample_ref(cursor).cloned()
    }

    /// The sample at `cursor`, borrowed: a field read without copying
    /// its socket table.
    fn sample_ref(&mut self, cursor: Cursor) -> Option<&Sample> {
        if !self.readable(cursor.segment, cursor.ordinal) {
            return None;
        }
        self.segment(cursor.segment).get(cursor.ordinal).ok()
    }

    pub fn current(&mut self) -> Option<Sample> {
        self.sample_at(self.cursor)
    }

    /// The wall-clock time of the current sample, without copying it (the
    /// timeline reads it every frame).
    pub fn current_t(&mut self) -> Option<f64> {
        self.sample_ref(self.cursor).map(|s| s.t)
    }

    /// The cursor after `cursor`, if any.
    pub fn next(&mut self, cursor: Cursor) -> Option<Cursor> {
        if cursor.ordinal + 1 < self.segment(cursor.segment).len()
            && self.readable(cursor.segment, cursor.ordinal + 1)
        {
            return Some(Cursor {
                ordinal: cursor.ordinal + 1,
                ..cursor
            });
        }
        self.first_readable(cursor.segment + 1)
    }

    /// The cursor before `cursor`, if any.
    pub fn previous(&mut self, cursor: Cursor) -> Option<Cursor> {
        if cursor.ordinal > 0 {
            return Some(Cursor {
                ordinal: cursor.ordinal - 1,
                ..cursor
            });
        }
        self.last_readable(cursor.segment.checked_sub(1)?)
    }

    /// Moves one sample on; returns the new sample, None at the end.
    pub fn step_forward(&mut self) -> Option<Sample> {
        let next = self.next(self.cursor)?;
        self.cursor = next;
        self.current()
    }

    /// Moves one sample back; false at the start.
    pub fn step_back(&mut self) -> bool {
        match self.previous(self.cursor) {
            Some(previous) => {
                self.cursor = previous;
                true
            }
            None => false,
        }
    }

    pub fn goto_start(&mut self) {
        if let Some(cursor) = self.first_readable(0) {
            self.cursor = cursor;
        }
    }

    pub fn goto_end(&mut self) {
        if let Some(cursor) = self.last_readable(self.segments.len().saturating_sub(1)) {
            self.cursor = cursor;
        }
    }

    /// Moves to the sample nearest wall-clock `t`, the later one on a tie:
    /// samples come a few milliseconds after each whole interval, so "+30s"
    /// means the one 30 s on, not the one just before it.
    pub fn seek(&mut self, t: f64) {
        // Chosen by the records' heads, only the sample landed on decodes
        // (a minute's seek no longer decodes the previous segment's end).
        if let Some(cursor) = self.nearest_by_heads(t)
            && self.readable(cursor.segment, cursor.ordinal)
        {
            self.cursor = cursor;
            return;
        }
        // Damage near `t`: the newest readable sample at or before it.
        self.seek_at_or_before(t);
    }

    /// The sample nearest wall-clock `t` (the later one on a tie) by the
    /// records' heads alone; None before the recording's first segment.
    fn nearest_by_heads(&mut self, t: f64) -> Option<Cursor> {
        let segment = self
            .segments
            .partition_point(|s| s.first_t <= t)
            .checked_sub(1)?;
        let len = self.segment(segment).len();
        let ordinal = self
            .segment(segment)
            .heads
            .partition_point(|h| h.t <= t)
            .checked_sub(1)?;
        let before = Cursor { segment, ordinal };
        let before_t = self.head_at(before)?.t;
        let after = if ordinal + 1 < len {
            Cursor {
                segment,
                ordinal: ordinal + 1,
            }
        } else {
            Cursor {
                segment: segment + 1,
                ordinal: 0,
            }
        };
        match self.head_at(after).map(|h| h.t) {
            Some(after_t) if before_t < t && after_t - t <= t - before_t => Some(after),
            _ => Some(before),
        }
    }

    /// The times sample `cursor` was recorded at, from its record's head:
    /// nothing is decoded (the cursors asked about were found readable).
    fn head_at(&mut self, cursor: Cursor) -> Option<DataHead> {
        let segment = self.segment(cursor.segment);
        segment.heads.get(cursor.ordinal).copied()
    }

    /// Moves to the newest sample at or before wall-clock `t` (the first
    /// sample when `t` is before the recording).
    fn seek_at_or_before(&mut self, t: f64) {
        let after = self.segments.partition_point(|s| s.first_t <= t);
        let segment = after.saturating_sub(1);
        let found = self
            .segment(segment)
            .heads
            .partition_point(|h| h.t <= t)
            .checked_sub(1)
            .filter(|ordinal| self.readable(segment, *ordinal))
            .map(|ordinal| Cursor { segment, ordinal });
        let cursor = found
            .or_else(|| {
                if t < self.start_t() {
                    self.first_readable(0)
                } else {
                    self.last_readable(segment)
                }
            })
            .or_else(|| self.first_readable(segment));
        if let Some(cursor) = cursor {
            self.cursor = cursor;
        }
    }

    /// Moves by `seconds` of recording time.
    pub fn jump(&mut self, seconds: f64) {
        if let Some(t) = self.current_t() {
            self.seek(t + seconds);
        }
    }

    /// Position of the cursor among all samples, and their count.
    pub fn position(&self) -> (usize, usize) {
        let total = self.segments.iter().map(|s| s.count as usize).sum();
        let here = self.before.get(self.cursor.segment).copied().unwrap_or(0) + self.cursor.ordinal;
        (here, total)
    }

    pub fn start_t(&self) -> f64 {
        self.segments.first().map_or(0.0, |s| s.first_t)
    }

    pub fn end_t(&self) -> f64 {
        self.segments.last().map_or(0.0, |s| s.last_t)
    }

    pub fn toggle_play(&mut self) {
        self.playing = !self.playing;
        self.due = None;
    }

    /// Doubles or halves the speed within 0.25x-4096x.
    pub fn change_speed(&mut self, faster: bool) {
        let speed = if faster {
            self.speed * 2.0
        } else {
            self.speed / 2.0
        };
        self.speed = speed.clamp(MIN_SPEED, MAX_SPEED);
        self.due = None;
    }

    /// When the next sample is due, while playing; None when paused or at
    /// the end. The delay is the recorded interval divided by the speed.
    pub fn deadline(&mut self, now: Instant) -> Option<Instant> {
        if !self.playing {
            return None;
        }
        if let Some(due) = self.due {
            return Some(due);
        }
        let Some(next) = self.next(self.cursor) else {
            // At the end of a file still being written: look again in a
            // sampling interval (0.1 s to 1 s).
            if !self.following {
                return None;
            }
            let interval = self.reader.meta.as_ref().map_or(1.0, |m| m.interval);
            let look = *self
                .next_look
                .get_or_insert(now + Duration::from_secs_f64(interval.clamp(0.1, 1.0)));
            return Some(look);
        };
        let (Some(current), Some(following)) = (self.head_at(self.cursor), self.head_at(next))
        else {
            return None;
        };
        let gap = (following.mono - current.mono).clamp(0.0, 3600.0) / self.speed;
        let due = now + Duration::from_secs_f64(gap);
        self.due = Some(due);
        Some(due)
    }

    /// When playing has fallen more than `limit` samples behind the
    /// schedule (a high speed such as 3600x, or frames slower than the
    /// samples' spacing), moves straight to the newest sample due at `now`
    /// and returns it; the ones in between are skipped, not decoded one by
    /// one into the view. None when fewer are due (`advance` them).
    pub fn skip_to_due(&mut self, now: Instant, limit: usize) -> Option<Sample> {
        if !self.playing || self.following {
            return None;
        }
        let due = self.deadline(now).filter(|due| *due <= now)?;
        let next = self.next(self.cursor)?;
        let next_mono = self.head_at(next)?.mono;
        let target_mono = next_mono + (now - due).as_secs_f64() * self.speed;
        let target = self.at_or_before_mono(target_mono)?;
        let (here, _) = self.position();
        let ahead = self.before.get(target.segment).copied().unwrap_or(0) + target.ordinal;
        if ahead <= here + limit {
            return None;
        }
        let sample = self.sample_at(target)?;
        self.cursor = target;
        // Stay on the recorded schedule: the target was due at this time,
        // and the one after it is due a recorded gap later.
        let target_due =
            due + Duration::from_secs_f64((sample.mono - next_mono).max(0.0) / self.speed);
        self.due = match self.next(target).and_then(|c| self.head_at(c)) {
            Some(following) => {
                let gap = (following.mono - sample.mono).clamp(0.0, 3600.0) / self.speed;
                Some(target_due + Duration::from_secs_f64(gap))
            }
            // Skipped to the last sample: playing stops there, as `advance`
            // stops at the end (nothing would be due to call it).
            None => {
                self.playing = false;
                None
            }
        };
        Some(sample)
    }

    /// The newest readable sample at or before boot time `mono`.
    fn at_or_before_mono(&mut self, mono: f64) -> Option<Cursor> {
        let after = self.segments.partition_point(|s| s.first_mono <= mono);
        let segment = after.checked_sub(1)?;
        let ordinal = self
            .segment(segment)
            .heads
            .partition_point(|h| h.mono <= mono)
            .checked_sub(1)
            .filter(|ordinal| self.readable(segment, *ordinal));
        match ordinal {
            Some(ordinal) => Some(Cursor { segment, ordinal }),
            None => self.last_readable(segment),
        }
    }

    /// The wall-clock time of the sample before the cursor's (None at the
    /// start): the packets shown with a sample are those after it.
    pub fn previous_t(&mut self) -> Option<f64> {
        let previous = self.previous(self.cursor)?;
        self.sample_ref(previous).map(|s| s.t)
    }

    /// Called when the deadline passed: the next sample to show, or None at
    /// the end (playing stops there).
    pub fn advance(&mut self) -> Option<Sample> {
        if self.following && self.next_look.take().is_some() {
            self.refresh();
            // The first new sample shows now, as live: no recorded gap.
            self.due = None;
            let sample = self.step_forward();
            if sample.is_none() && !self.following {
                self.playing = false;
            }
            return sample;
        }
        let previous_due = self.due.take();
        let sample = self.step_forward();
        let Some(current) = &sample else {
            self.playing = self.following;
            return None;
        };
        // Stay on the recorded schedule even when a frame was late: the
        // next deadline counts from this one, not from now.
        match self.next(self.cursor) {
            Some(next) => {
                if let Some(due) = previous_due
                    && let Some(following) = self.head_at(next)
                {
                    let gap = (following.mono - current.mono).clamp(0.0, 3600.0) / self.speed;
                    self.due = Some(due + Duration::from_secs_f64(gap));
                }
            }
            // The last sample: playing stops on it (no deadline would come
            // to call this again), unless the file is still being written.
            None => self.playing = self.following,
        }
        sample
    }
}

/// `segment`'s entry in `cache`, made by `make` (None: empty) when it is
/// not there; the cache keeps the newest `CACHE_SEGMENTS`.
fn cached<T: Default>(
    cache: &mut VecDeque<(usize, Rc<T>)>,
    segment: usize,
    make: impl FnOnce() -> Option<T>,
) -> Rc<T> {
    if let Some((_, made)) = cache.iter().find(|(s, _)| *s == segment) {
        return Rc::clone(made);
    }
    let made = Rc::new(make().unwrap_or_default());
    if cache.len() >= CACHE_SEGMENTS {
        cache.pop_front();
    }
    cache.push_back((segment, Rc::clone(&made)));
    made
}

/// A segment read, its damage (or the error that stopped it) kept in
/// `damage` for the error line.
fn noting_damage<T>(
    read: Result<super::reader::SegmentRead<T>>,
    damage: &mut Option<String>,
) -> Option<super::reader::SegmentRead<T>> {
    match read {
        Ok(read) => {
            if read.damage.is_some() {
                damage.clone_from(&read.damage);
            }
            Some(read)
        }
        Err(error) => {
            *damage = Some(format!("{error:#}"));
            None
        }
    }
}
