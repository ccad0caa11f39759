//! The Sockets tab's short histories (rtt, cwnd, queues) of the selected
//! socket and the highlighted ones, extended at each sample. Finding the
//! sockets to extend is a pass over every socket (`trail_candidates`): the
//! preparation worker (`prepare`) makes it; `record_candidates` then
//! touches only those.

use super::sockets::{MAX_TRAILS, SocketsView, TRAIL_POINTS, TrailPoint, flag};
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::model::socket_table::Socket;
use crate::model::sockets::SocketKey;
use std::collections::HashSet;

impl SocketsView {
    /// Extends the histories with a new sample: the selected socket and every
    /// highlighted one (up to MAX_TRAILS); histories of sockets that are
    /// gone are dropped.
    pub fn record(&mut self, sample: &Sample) {
        let candidates = trail_candidates(sample, &self.trail_keys(), &self.thresholds);
        self.record_candidates(sample, &candidates);
    }

    /// The sockets that have a history or are selected (what
    /// `trail_candidates` looks for besides the highlighted ones).
    pub fn trail_keys(&self) -> HashSet<SocketKey> {
        self.selected
            .into_iter()
            .chain(self.trails.keys().copied())
            .collect()
    }

    /// `record`, given `trail_candidates` of the sample (computed by the
    /// preparation worker): touches only those sockets.
    pub fn record_candidates(&mut self, sample: &Sample, candidates: &[u32]) {
        let mut alive: HashSet<SocketKey> = HashSet::new();
        for socket in candidates
            .iter()
            .filter_map(|&i| sample.sockets.get(i as usize))
        {
            let flagged = flag(&socket, false, &self.thresholds).is_some();
            let key = socket.key();
            let wanted = flagged || Some(key) == self.selected || self.trails.contains_key(&key);
            if !wanted {
                continue;
            }
            if !self.trails.contains_key(&key) && self.trails.len() >= MAX_TRAILS {
                continue;
            }
            alive.insert(key);
            let trail = self.trails.entry(key).or_default();
            if trail.len() >= TRAIL_POINTS {
                trail.pop_front();
            }
            trail.push_back(TrailPoint {
                mono: sample.mono,
                rtt_ms: socket.tcp.map(|t| f64::from(t.rtt_us) / 1000.0),
                cwnd: socket.tcp.map(|t| t.cwnd),
                recv_q: socket.recv_q,
                send_q: socket.send_q,
            });
        }
        self.trails.retain(|key, _| alive.contains(key));
    }
}

/// The sockets of `sample` a history may be extended for, in table order:
/// the highlighted ones and those whose key is in `keys`. A pass over every
/// socket, so the preparation worker runs it, not the UI.
pub fn trail_candidates(
    sample: &Sample,
    keys: &HashSet<SocketKey>,
    limits: &Thresholds,
) -> Vec<u32> {
    let wanted = |socket: &Socket| {
        flag(socket, false, limits).is_some()
            // Most sockets at scale: nothing to look up (no hashing).
            || (!keys.is_empty() && keys.contains(&socket.key()))
    };
    (0..sample.sockets.len() as u32)
        .filter(|&i| wanted(&sample.sockets.at(i as usize)))
        .collect()
}
