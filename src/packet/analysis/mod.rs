//! Per-flow TCP analysis, fed packet by packet, with no terminal code: the
//! live flow table, `netlens read` and the flow drill-down all run this.
//!
//! It measures the handshake (SYN → SYN/ACK → ACK), RTT samples (one timed
//! segment at a time, Karn's rule), bytes and packets per direction,
//! retransmissions with their timeout and backoff (the gaps between
//! successive retransmits of the same sequence number), duplicate ACKs,
//! out-of-order segments, zero-window and window-full events, resets and
//! the FIN sequence. The state is small and fixed in size; `detail` (the
//! drill-down only) also keeps every event and RTT sample, bounded.
//!
//! Directions are the flow key's: 0 is a → b (the lower endpoint first), 1
//! is b → a. Packet numbers (`n`) count the packets fed, from 0.

mod findings;

pub use findings::{FlowFinding, finding_ids};

/// The finding ids, for `findings::IDS`.
pub mod findings_ids {
    pub use super::findings::{
        NAGLE_DELAYED_ACK, RETRANSMITS, RST_AFTER_DATA, SYN_UNANSWERED, ZERO_WINDOW,
    };
}

use super::decode::Summary;

const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const ACK: u8 = 0x10;

/// A delayed ACK that releases a Nagle-held segment comes this long after
/// the segment it acknowledges (Linux: 40 ms minimum, 200 ms maximum).
pub const NAGLE_MIN_GAP_S: f64 = 0.030;
pub const NAGLE_MAX_GAP_S: f64 = 0.250;
/// ...and the held segment leaves at most this long after that ACK.
pub const NAGLE_RELEASE_S: f64 = 0.005;
/// A retransmit sooner than this after its timer was armed is not a
/// timeout (Linux's TCP_RTO_MIN is 200 ms; a little slack for jitter).
pub const MIN_RTO_S: f64 = 0.180;
/// Events and RTT samples the drill-down keeps at most.
pub const DETAIL_MAX: usize = 20_000;
/// Gaps remembered per finding (the first ones, for the summary).
const GAPS_KEPT: usize = 8;

/// What the analysis needs of one TCP packet.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Seg {
    pub t: f64,
    pub dir: usize,
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
    pub win: u16,
    pub wscale: Option<u8>,
    pub mss: u16,
    pub payload: u32,
    pub wire_len: u32,
}

impl Seg {
    /// From a decoded packet; `reverse` is the flow key's b → a.
    pub fn of(s: &Summary, reverse: bool, t: f64) -> Self {
        Self {
            t,
            dir: usize::from(reverse),
            flags: s.tcp_flags,
            seq: s.tcp_seq,
            ack: s.tcp_ack,
            win: s.tcp_win,
            wscale: s.tcp_wscale,
            mss: s.tcp_mss,
            payload: s.payload_len,
            wire_len: s.wire_len,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventKind {
    /// A retransmission: `gap_ms` since the timer was armed (first) or since
    /// the previous retransmit of the same sequence number (backoff); `fast`
    /// when it followed duplicate ACKs rather than a timeout.
    Retransmit {
        gap_ms: f32,
        nth: u8,
        fast: bool,
    },
    DupAck,
    OutOfOrder,
    ZeroWindow,
    WindowFull,
    Reset,
    Fin,
    /// A small segment held until the peer's delayed ACK, `gap_ms` after
    /// the segment before it.
    NagleStall {
        gap_ms: f32,
    },
}

/// One thing the analysis noticed, at packet `n`; `related` are the other
/// evidence packets (for a Nagle stall: the segment before and the ACK).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    pub n: u32,
    pub t: f64,
    pub dir: u8,
    pub kind: EventKind,
    pub related: [Option<u32>; 2],
}

/// The drill-down's extra record: every event and RTT sample, bounded.
#[derive(Debug, Clone, Default)]
pub struct Detail {
    pub events: Vec<Event>,
    /// (time, RTT ms, direction of the timed data).
    pub rtt: Vec<(f64, f64, u8)>,
}

/// How the connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Close {
    #[default]
    Open,
    /// One side sent FIN, the other has not (yet).
    HalfClosed,
    /// FIN, FIN/ACK, ACK.
    ThreeWay,
    /// FIN, ACK, FIN, ACK.
    FourWay,
    /// Both FINs before either was acknowledged.
    Simultaneous,
    Reset,
}

impl Close {
    pub fn label(self) -> &'static str {
        match self {
            Close::Open => "open",
            Close::HalfClosed => "half-closed (one FIN)",
            Close::ThreeWay => "three-way close (FIN, FIN/ACK, ACK)",
            Close::FourWay => "four-way close (FIN, ACK, FIN, ACK)",
            Close::Simultaneous => "simultaneous close",
            Close::Reset => "reset",
        }
    }
}

/// Per-direction state: what this side sent and acknowledged.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dir {
    pub packets: u64,
    pub wire_bytes: u64,
    pub payload_bytes: u64,
    pub syns: u32,
    /// Highest sequence end sent.
    high: Option<u32>,
    /// Highest ACK sent (acknowledging the other side's data).
    acked: Option<u32>,
    last_ack_win: (u32, u16),
    dup_run: u32,
    wscale: Option<u8>,
    pub mss: u16,
    /// Last window advertised, scaled when both sides scale.
    pub window: Option<u32>,
    zero_since: Option<f64>,
    pub zero_window_s: f64,
    /// When the retransmission timer was (re)armed for this side's data.
    timer_base: f64,
    /// (seq, time, nth) of the last retransmit.
    last_retx: Option<(u32, f64, u8)>,
    chain: Chain,
    /// One timed segment: (end, time sent).
    timed: Option<(u32, f64)>,
    /// A sequence range skipped (not captured yet): (start, end).
    hole: Option<(u32, u32)>,
    /// The last data segment: (time, payload, n).
    last_data: Option<(f64, u32, u32)>,
    /// A delayed pure ACK from the peer acked all of this side's data:
    /// (time, gap since the data, n of the ACK, n of the data).
    pending_stall: Option<(f64, f64, u32, u32)>,
    fin: Option<(u32, f64)>,
    /// This side acknowledged the peer's FIN in a packet without its own FIN.
    acked_peer_fin_alone: bool,
    last_t: f64,
}

/// Successive retransmits of one sequence number: the timeout and backoff.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Chain {
    pub dir: u8,
    pub len: u8,
    pub gaps_ms: [f32; GAPS_KEPT],
}

/// Gaps of one kind (Nagle stalls): count, range, the first few.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gaps {
    pub count: u32,
    pub sum_ms: f64,
    pub min_ms: f32,
    pub max_ms: f32,
    pub first_ms: [f32; GAPS_KEPT],
    /// The side that held its segments.
    pub dir: u8,
}

impl Gaps {
    fn push(&mut self, ms: f64, dir: u8) {
        let v = ms as f32;
        if self.count == 0 {
            self.min_ms = v;
            self.max_ms = v;
            self.dir = dir;
        }
        if let Some(slot) = self.first_ms.get_mut(self.count as usize) {
            *slot = v;
        }
        self.count += 1;
        self.sum_ms += ms;
        self.min_ms = self.min_ms.min(v);
        self.max_ms = self.max_ms.max(v);
    }

    pub fn mean_ms(&self) -> f64 {
        self.sum_ms / f64::from(self.count.max(1))
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rtt {
    pub count: u32,
    pub min_ms: f64,
    pub max_ms: f64,
    pub sum_ms: f64,
    pub last_ms: f64,
}

impl Rtt {
    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ms / f64::from(self.count))
    }
}

/// The handshake's timings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Handshake {
    pub syn_t: Option<f64>,
    pub syn_ack_t: Option<f64>,
    pub ack_t: Option<f64>,
}

impl Handshake {
    pub fn syn_to_syn_ack_ms(&self) -> Option<f64> {
        Some((self.syn_ack_t? - self.syn_t?) * 1000.0)
    }
    pub fn syn_ack_to_ack_ms(&self) -> Option<f64> {
        Some((self.ack_t? - self.syn_ack_t?) * 1000.0)
    }
    pub fn total_ms(&self) -> Option<f64> {
        Some((self.ack_t? - self.syn_t?) * 1000.0)
    }
    /// The capture sits at the server: it answered the SYN no later than
    /// the client acknowledged the answer (at the client it is the other
    /// way round). True when the handshake was not seen.
    pub fn at_server(&self) -> bool {
        match (self.syn_to_syn_ack_ms(), self.syn_ack_to_ack_ms()) {
            (Some(answer), Some(ack)) => answer <= ack,
            _ => true,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub dirs: [Dir; 2],
    /// Packets fed.
    pub n: u32,
    pub first_t: f64,
    pub last_t: f64,
    /// The side that sent the first SYN (the client), if seen.
    pub client: Option<u8>,
    pub handshake: Handshake,
    pub rtt: Rtt,
    pub retransmits: u32,
    pub fast_retransmits: u32,
    pub dup_acks: u32,
    pub out_of_order: u32,
    pub zero_windows: u32,
    pub window_full: u32,
    pub resets: u32,
    /// The first reset after data: (n, side that sent it, payload bytes
    /// before it).
    pub rst_after_data: Option<(u32, u8, u64)>,
    pub close: Close,
    pub nagle: Gaps,
    /// The longest chain of retransmits of one sequence number.
    pub worst_chain: Chain,
    pub detail: Option<Box<Detail>>,
}

fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

fn seq_le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

impl Analysis {
    /// An analysis that also keeps events and RTT samples (the drill-down).
    pub fn detailed() -> Self {
        Self {
            detail: Some(Box::default()),
            ..Self::default()
        }
    }

    fn event(&mut self, seg: &Seg, kind: EventKind, related: [Option<u32>; 2]) {
        if let Some(detail) = self.detail.as_mut()
            && detail.events.len() < DETAIL_MAX
        {
            detail.events.push(Event {
                n: self.n,
                t: seg.t,
                dir: seg.dir as u8,
                kind,
                related,
            });
        }
    }

    /// Feeds one TCP packet.
    pub fn add(&mut self, seg: &Seg) {
        let d = seg.dir & 1;
        let o = 1 - d;
        if self.n == 0 {
            self.first_t = seg.t;
        }
        self.last_t = seg.t;
        {
            let me = &mut self.dirs[d];
            me.packets += 1;
            me.wire_bytes += u64::from(seg.wire_len);
            me.payload_bytes += u64::from(seg.payload);
        }
        let f = seg.flags;
        if f & SYN != 0 {
            self.syn(seg, d);
        }
        if f & RST != 0 {
            self.resets += 1;
            self.close = Close::Reset;
            let data = self.dirs[0].payload_bytes + self.dirs[1].payload_bytes;
            if data > 0 && self.rst_after_data.is_none() {
                self.rst_after_data = Some((self.n, d as u8, data));
            }
            self.event(seg, EventKind::Reset, [None, None]);
        }
        if f & ACK != 0 && f & RST == 0 {
            self.ack(seg, d, o);
        }
        if f & RST == 0 {
            self.window(seg, d);
        }
        let len = seg.payload + u32::from(f & (SYN | FIN) != 0);
        if len > 0 && f & RST == 0 {
            self.data(seg, d, o, len);
        }
        if f & FIN != 0 && f & RST == 0 {
            self.fin(seg, d, o);
        }
        self.dirs[d].last_t = seg.t;
        self.n = self.n.saturating_add(1);
    }

    fn syn(&mut self, seg: &Seg, d: usize) {
        let me = &mut self.dirs[d];
        me.syns += 1;
        me.wscale = seg.wscale;
        if seg.mss > 0 {
            me.mss = seg.mss;
        }
        if seg.flags & ACK == 0 {
            if self.client.is_none() {
                self.client = Some(d as u8);
                self.handshake.syn_t = Some(seg.t);
            }
        } else if self.handshake.syn_ack_t.is_none() {
            self.handshake.syn_ack_t = Some(seg.t);
        }
    }

    fn ack(&mut self, seg: &Seg, d: usize, o: usize) {
        let ack = seg.ack;
        // The handshake's final ACK: the client's first ACK after SYN/ACK.
        if self.handshake.syn_ack_t.is_some()
            && self.handshake.ack_t.is_none()
            && self.client == Some(d as u8)
            && seg.flags & SYN == 0
        {
            self.handshake.ack_t = Some(seg.t);
        }
        let pure = seg.payload == 0 && seg.flags & (SYN | FIN | RST) == 0;
        let advanced = match self.dirs[d].acked {
            None => true,
            Some(prev) => seq_lt(prev, ack),
        };
        if advanced {
            self.dirs[d].acked = Some(ack);
            self.dirs[d].dup_run = 0;
            self.dirs[d].last_ack_win = (ack, seg.win);
            let other = &mut self.dirs[o];
            other.timer_base = seg.t;
            if let Some((end, sent)) = other.timed
                && seq_le(end, ack)
            {
                other.timed = None;
                self.sample_rtt(seg.t, (seg.t - sent) * 1000.0, o as u8);
            }
            if let Some((fin_end, _)) = self.dirs[o].fin
                && seq_le(fin_end, ack)
                && seg.flags & FIN == 0
                && self.dirs[d].fin.is_none()
            {
                self.dirs[d].acked_peer_fin_alone = true;
            }
            // Nagle + delayed ACK: a pure ACK of everything the peer sent,
            // long after the peer's last (small) segment.
            let other = &self.dirs[o];
            if pure
                && other.high == Some(ack)
                && let Some((t_data, payload, n_data)) = other.last_data
            {
                let gap = seg.t - t_data;
                let small = payload < u32::from(other.mss.max(536));
                if small
                    && (NAGLE_MIN_GAP_S..=NAGLE_MAX_GAP_S).contains(&gap)
                    && other.last_t <= t_data
                {
                    self.dirs[o].pending_stall = Some((seg.t, gap, self.n, n_data));
                }
            }
        } else if pure
            && ack == self.dirs[d].last_ack_win.0
            && seg.win == self.dirs[d].last_ack_win.1
            && self.dirs[o].high.is_some_and(|h| seq_lt(ack, h))
        {
            self.dup_acks += 1;
            self.dirs[d].dup_run += 1;
            self.event(seg, EventKind::DupAck, [None, None]);
        }
    }

    fn sample_rtt(&mut self, t: f64, ms: f64, dir: u8) {
        let r = &mut self.rtt;
        if r.count == 0 {
            r.min_ms = ms;
            r.max_ms = ms;
        }
        r.count += 1;
        r.sum_ms += ms;
        r.min_ms = r.min_ms.min(ms);
        r.max_ms = r.max_ms.max(ms);
        r.last_ms = ms;
        if let Some(detail) = self.detail.as_mut()
            && detail.rtt.len() < DETAIL_MAX
        {
            detail.rtt.push((t, ms, dir));
        }
    }

    fn window(&mut self, seg: &Seg, d: usize) {
        let scaled = match (self.dirs[0].wscale, self.dirs[1].wscale) {
            (Some(_), Some(_)) if seg.flags & SYN == 0 => {
                u32::from(seg.win) << self.dirs[d].wscale.unwrap_or(0)
            }
            _ => u32::from(seg.win),
        };
        let me = &mut self.dirs[d];
        me.window = Some(scaled);
        if scaled == 0 {
            if me.zero_since.is_none() {
                me.zero_since = Some(seg.t);
                self.zero_windows += 1;
                self.event(seg, EventKind::ZeroWindow, [None, None]);
            }
        } else if let Some(since) = me.zero_since.take() {
            me.zero_window_s += seg.t - since;
        }
    }

    fn data(&mut self, seg: &Seg, d: usize, o: usize, len: u32) {
        let end = seg.seq.wrapping_add(len);
        let n = self.n;
        let peer_acked = self.dirs[o].acked;
        let dup_run = self.dirs[o].dup_run;
        let rtt_floor = if self.rtt.count > 0 {
            self.rtt.min_ms / 1000.0
        } else {
            0.003
        };
        let me = &mut self.dirs[d];
        let mut retransmit = false;
        let mut out_of_order = false;
        match me.high {
            None => me.high = Some(end),
            Some(high) if seq_le(end, high) => {
                let filled_hole = me
                    .hole
                    .filter(|(hs, he)| seq_le(*hs, seg.seq) && seq_le(end, *he));
                if filled_hole.is_some() && seg.t - me.last_t < rtt_floor {
                    out_of_order = true;
                } else {
                    retransmit = true;
                }
                if let Some((hs, he)) = filled_hole {
                    me.hole = (hs == seg.seq && seq_lt(end, he)).then_some((end, he));
                }
            }
            Some(high) => {
                if seq_lt(high, seg.seq) {
                    me.hole = Some((high, seg.seq));
                }
                // New data: arm the timer when nothing was outstanding.
                if peer_acked.is_none_or(|a| seq_le(high, a)) {
                    me.timer_base = seg.t;
                }
                me.high = Some(end);
                if me.timed.is_none() && seg.payload > 0 {
                    me.timed = Some((end, seg.t));
                }
            }
        }
        // Window-full: this segment fills what the peer last offered.
        if !retransmit
            && seg.payload > 0
            && let (Some(acked), Some(win)) = (peer_acked, self.dirs[o].window)
            && self.dirs[0].wscale.is_some()
            && self.dirs[1].wscale.is_some()
            && win > 0
            && end == acked.wrapping_add(win)
        {
            self.window_full += 1;
            self.event(seg, EventKind::WindowFull, [None, None]);
        }
        let me = &mut self.dirs[d];
        if retransmit {
            // Karn: a retransmitted segment gives no RTT sample.
            if me.timed.is_some_and(|(t_end, _)| seq_le(end, t_end)) {
                me.timed = None;
            }
            let (gap, nth) = match me.last_retx {
                Some((seq, t, nth)) if seq == seg.seq => (seg.t - t, nth.saturating_add(1)),
                _ => (seg.t - me.timer_base, 1),
            };
            // Not a timeout: after duplicate ACKs, or sooner than Linux's
            // minimum RTO (fast retransmit, RACK, tail loss probe).
            let fast = nth == 1 && (dup_run >= 2 || gap < MIN_RTO_S);
            me.last_retx = Some((seg.seq, seg.t, nth));
            let gap_ms = (gap.max(0.0) * 1000.0) as f32;
            if nth == 1 {
                me.chain = Chain {
                    dir: d as u8,
                    ..Chain::default()
                };
            }
            // The chain holds the timeouts only: the RTO, then its backoff.
            if !fast {
                if let Some(slot) = me.chain.gaps_ms.get_mut(me.chain.len as usize) {
                    *slot = gap_ms;
                }
                me.chain.len = me.chain.len.saturating_add(1);
                if me.chain.len > self.worst_chain.len {
                    self.worst_chain = me.chain;
                }
            }
            self.retransmits += 1;
            if fast {
                self.fast_retransmits += 1;
            }
            self.event(
                seg,
                EventKind::Retransmit { gap_ms, nth, fast },
                [None, None],
            );
        } else if out_of_order {
            self.out_of_order += 1;
            self.event(seg, EventKind::OutOfOrder, [None, None]);
        }
        // The held segment of a Nagle stall leaves right after the ACK.
        let me = &mut self.dirs[d];
        if let Some((t_ack, gap, n_ack, n_data)) = me.pending_stall.take()
            && !retransmit
            && seg.payload > 0
            && seg.t - t_ack <= NAGLE_RELEASE_S
            && seg.payload < u32::from(me.mss.max(536))
        {
            self.nagle.push(gap * 1000.0, d as u8);
            self.event(
                seg,
                EventKind::NagleStall {
                    gap_ms: (gap * 1000.0) as f32,
                },
                [Some(n_data), Some(n_ack)],
            );
        }
        let me = &mut self.dirs[d];
        if seg.payload > 0 {
            me.last_data = Some((seg.t, seg.payload, n));
        }
    }

    fn fin(&mut self, seg: &Seg, d: usize, o: usize) {
        let end = seg.seq.wrapping_add(seg.payload + 1);
        if self.dirs[d].fin.is_none() {
            self.dirs[d].fin = Some((end, seg.t));
            self.event(seg, EventKind::Fin, [None, None]);
        }
        if self.close == Close::Reset {
            return;
        }
        self.close = match self.dirs[o].fin {
            None => Close::HalfClosed,
            Some((peer_end, _)) => {
                let acks_peer = seg.flags & ACK != 0 && seq_le(peer_end, seg.ack);
                if self.dirs[d].acked_peer_fin_alone {
                    Close::FourWay
                } else if acks_peer {
                    Close::ThreeWay
                } else {
                    Close::Simultaneous
                }
            }
        };
    }

    /// Segments sent with data (or SYN/FIN) but no answer: SYNs to a side
    /// that never sent anything.
    pub fn syn_unanswered(&self) -> Option<(u8, u32, f64)> {
        let c = self.client? as usize;
        let server = &self.dirs[1 - c];
        (server.packets == 0 && self.dirs[c].syns >= 2).then(|| {
            (
                c as u8,
                self.dirs[c].syns,
                self.last_t - self.handshake.syn_t.unwrap_or(self.first_t),
            )
        })
    }

    /// Zero-window time per side, including a window still closed at `now`.
    pub fn zero_window_s(&self, dir: usize, now: f64) -> f64 {
        let me = &self.dirs[dir & 1];
        me.zero_window_s + me.zero_since.map_or(0.0, |since| (now - since).max(0.0))
    }
}

#[cfg(test)]
mod tests;
