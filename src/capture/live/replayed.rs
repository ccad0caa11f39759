//! A capture fed by a recording instead of a ring: replay hands it the
//! recorded packets, and it accounts them into its flow table and prints
//! them into lines exactly as the live engine does, then gives the App the
//! same `CaptureEvent` the live capture sends. So the Flows tab's packet
//! list and anything built on the flow table's per-flow packets work the
//! same in replay.

use super::tap::PacketBatch;
use super::{Capture, CaptureEvent, CapturedPacket, IDLE_TIMEOUT_S, MAX_FLOWS, Shared, lock};
use crate::packet::decode::summarize;
use crate::packet::filter::Filter;
use crate::packet::flows::FlowTable;
use crate::packet::format::Formatter;
use std::sync::{Arc, Mutex};

/// What a replayed capture keeps between batches.
pub(super) struct Replayed {
    formatter: Formatter,
    filter: Option<Filter>,
    ifnames: Vec<(u32, String)>,
}

impl Default for Replayed {
    fn default() -> Self {
        Self {
            formatter: Formatter::new(crate::capture::HOST),
            filter: None,
            ifnames: Vec::new(),
        }
    }
}

impl Capture {
    /// A capture for replay: active, no thread; packets come from `feed`.
    pub fn replayed(linktype: u32, snaplen: u32, iface: &str) -> Self {
        let mut shared = Shared::new(
            FlowTable::new(MAX_FLOWS, IDLE_TIMEOUT_S),
            String::new(),
            None,
        );
        shared.active = true;
        let shared = Arc::new(Mutex::new(shared));
        Self {
            shared,
            iface: iface.to_string(),
            linktype,
            snaplen,
            lines: Arc::default(),
            control: None,
            stop: Arc::default(),
            wake: None,
            thread: None,
            replayed: Some(Mutex::new(Replayed::default())),
        }
    }

    /// Names interfaces in SLL2 lines as the recorded host named them.
    pub fn set_ifnames(&self, names: impl Iterator<Item = (u32, String)>) {
        if let Some(replayed) = &self.replayed {
            let mut replayed = replayed.lock().unwrap_or_else(|p| p.into_inner());
            replayed.ifnames = names.collect();
            let Replayed {
                formatter, ifnames, ..
            } = &mut *replayed;
            for (index, name) in ifnames.iter() {
                formatter.set_ifname(*index, name);
            }
        }
    }

    /// Forgets every packet fed so far (a seek rebuilds from a keyframe).
    pub fn reset_replay(&self) {
        let Some(replayed) = &self.replayed else {
            return;
        };
        let mut replayed = replayed.lock().unwrap_or_else(|p| p.into_inner());
        replayed.formatter = Formatter::new(crate::capture::HOST);
        let Replayed {
            formatter, ifnames, ..
        } = &mut *replayed;
        for (index, name) in ifnames.iter() {
            formatter.set_ifname(*index, name);
        }
        let mut shared = lock(&self.shared);
        shared.table = FlowTable::new(MAX_FLOWS, IDLE_TIMEOUT_S);
        shared.packets = 0;
        shared.bytes = 0;
        // A flow screen re-watches after the seek; stale packets would
        // arrive out of time order.
        shared.recent.clear();
        shared.watch = None;
    }

    /// Accounts and prints a recorded batch as the live engine would have
    /// (`now`: the sample's time, for idle expiry). Not a replayed capture:
    /// an empty event.
    pub fn feed(&self, batch: &PacketBatch, now: f64) -> CaptureEvent {
        let mut packets = Vec::with_capacity(batch.packets.len());
        if let Some(replayed) = &self.replayed {
            let mut replayed = replayed.lock().unwrap_or_else(|p| p.into_inner());
            let replayed = &mut *replayed;
            let mut shared = lock(&self.shared);
            let mut line = String::with_capacity(256);
            for p in &batch.packets {
                let s = summarize(batch.linktype, &p.data, p.orig_len);
                if let Some(f) = &replayed.filter
                    && !f.matches(&s, &p.data)
                {
                    continue;
                }
                let raw = super::RawPacketRef {
                    ts: p.ts,
                    orig_len: p.orig_len,
                    data: &p.data,
                    ifindex: p.ifindex,
                };
                super::account(&mut shared, &s, &raw);
                line.clear();
                replayed
                    .formatter
                    .line(batch.linktype, p.ts, &p.data, p.orig_len, &mut line);
                packets.push(CapturedPacket {
                    line: line.clone(),
                    ts: p.ts,
                    orig_len: p.orig_len,
                    data: p.data.as_slice().into(),
                    ifindex: p.ifindex,
                });
            }
            shared.table.expire(now);
        }
        CaptureEvent::Packets {
            packets,
            unprinted: batch.skipped,
        }
    }

    /// The filter applied to replayed packets from now on.
    pub(super) fn set_replay_filter(&self, filter: Option<Filter>) -> bool {
        let Some(replayed) = &self.replayed else {
            return false;
        };
        replayed.lock().unwrap_or_else(|p| p.into_inner()).filter = filter;
        true
    }
}
