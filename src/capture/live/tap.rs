//! The recorder's tap on a live capture: a bounded copy of the packets that
//! matched the filter, taken by the recorder once per sample. Bounded twice:
//! at most `PACKETS_PER_SECOND` packets of each second of capture time, and
//! at most `HELD_MAX` waiting between two takes (a long interval, a stalled
//! recorder); the rest are only counted, as `skipped`.

use super::{Capture, Shared, lock};
use crate::packet::format::Timestamp;
use std::sync::{Arc, Mutex};

/// Packets of one second of capture kept for a recording at most.
pub const PACKETS_PER_SECOND: u32 = 200;
/// Packets waiting for the recorder at most.
const HELD_MAX: usize = 20_000;

/// One captured packet: its time, length on the wire and the captured
/// bytes (at most the snap length).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawPacket {
    pub ts: Timestamp,
    pub orig_len: u32,
    pub data: Vec<u8>,
    /// The interface it crossed; 0 when unknown (a recording does not keep
    /// it).
    pub ifindex: u32,
}

/// The packets of one interval, as a recording holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PacketBatch {
    /// The pcap link type of `data`.
    pub linktype: u32,
    /// Packets that matched but were left out (over a bound).
    pub skipped: u64,
    pub packets: Vec<RawPacket>,
}

#[derive(Default)]
pub(super) struct Tap {
    batch: PacketBatch,
    second: i64,
    in_second: u32,
}

impl Tap {
    /// A packet that passed the filter.
    pub(super) fn offer(&mut self, ts: Timestamp, orig_len: u32, data: &[u8], ifindex: u32) {
        if ts.sec != self.second {
            self.second = ts.sec;
            self.in_second = 0;
        }
        if self.in_second >= PACKETS_PER_SECOND || self.batch.packets.len() >= HELD_MAX {
            self.batch.skipped += 1;
            return;
        }
        self.in_second += 1;
        self.batch.packets.push(RawPacket {
            ts,
            orig_len,
            data: data.into(),
            ifindex,
        });
    }
}

/// A recorder's handle on a capture's packets. Dropping it stops the copy.
pub struct PacketTap {
    shared: Arc<Mutex<Shared>>,
    linktype: u32,
    /// Whole packets are captured (--payload), not only the first bytes.
    pub payloads: bool,
}

impl PacketTap {
    /// The packets since the last take.
    pub fn take(&self) -> PacketBatch {
        let mut shared = lock(&self.shared);
        let tap = shared.tap.get_or_insert_with(Tap::default);
        PacketBatch {
            linktype: self.linktype,
            ..std::mem::take(&mut tap.batch)
        }
    }
}

impl Drop for PacketTap {
    fn drop(&mut self) {
        lock(&self.shared).tap = None;
    }
}

impl Capture {
    /// Starts copying packets for a recorder; None when nothing is being
    /// captured (no privilege, --no-capture, a replay).
    pub fn tap(&self) -> Option<PacketTap> {
        if self.linktype == 0 || self.thread.is_none() {
            return None;
        }
        let mut shared = lock(&self.shared);
        if !shared.active {
            return None;
        }
        shared.tap = Some(Tap::default());
        Some(PacketTap {
            shared: Arc::clone(&self.shared),
            linktype: self.linktype,
            payloads: self.snaplen > crate::capture::ring::DEFAULT_SNAPLEN,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tap_keeps_a_bounded_share_of_each_second() {
        let mut tap = Tap::default();
        for n in 0..500u32 {
            let ts = Timestamp {
                sec: 10 + i64::from(n / 250),
                frac: n,
                nanos: false,
            };
            tap.offer(ts, 60, &[0u8; 60], 0);
        }
        assert_eq!(tap.batch.packets.len(), 2 * PACKETS_PER_SECOND as usize);
        assert_eq!(tap.batch.skipped, 500 - 2 * u64::from(PACKETS_PER_SECOND));
        assert_eq!(tap.batch.packets[0].ts.frac, 0);
        assert_eq!(tap.batch.packets[200].ts.frac, 250);
    }
}
