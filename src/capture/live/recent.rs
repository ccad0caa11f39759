//! The last packets captured, whatever their flow, so that a drill-down
//! opened now starts with the flow's recent past. Bounded in packets and
//! bytes; the bytes are held packed in blocks of `BLOCK` bytes, so memory
//! follows what the packets took (a 66-byte ACK costs 66 bytes), not the
//! snap length each of them might have had.

use super::RawPacketRef;
use super::tap::RawPacket;
use crate::packet::format::Timestamp;
use std::collections::VecDeque;

/// Packets kept at most.
pub const RECENT_PACKETS: usize = 4096;
/// Captured bytes kept at most (whole packets with `--payload`).
pub const RECENT_BYTES: usize = 8 << 20;
/// The bytes are packed into blocks of this size (a packet longer than a
/// block gets one of its own).
const BLOCK: usize = 64 << 10;

/// Where one kept packet's bytes are: in block `block` (counted from the
/// first block ever made), at `start`.
struct Kept {
    ts: Timestamp,
    orig_len: u32,
    ifindex: u32,
    block: u64,
    start: u32,
    len: u32,
}

#[derive(Default)]
pub struct Recent {
    packets: VecDeque<Kept>,
    /// Blocks from `first_block` on, oldest first; the last one is filled.
    blocks: VecDeque<Vec<u8>>,
    first_block: u64,
    /// A block emptied at the old end, kept for the next one needed.
    spare: Option<Vec<u8>>,
    bytes: usize,
}

impl Recent {
    /// Keeps a copy of `data`, dropping the oldest packets past the bounds.
    pub fn push(&mut self, p: &RawPacketRef) {
        let len = p.data.len();
        let fits = self
            .blocks
            .back()
            .is_some_and(|b| b.len() + len <= b.capacity());
        if !fits {
            let mut block = self.spare.take().unwrap_or_default();
            block.clear();
            block.reserve_exact(BLOCK.max(len));
            self.blocks.push_back(block);
        }
        let block_index = self.blocks.len() - 1;
        let block = &mut self.blocks[block_index];
        let start = block.len();
        block.extend_from_slice(p.data);
        self.packets.push_back(Kept {
            ts: p.ts,
            orig_len: p.orig_len,
            ifindex: p.ifindex,
            block: self.first_block + block_index as u64,
            start: start as u32,
            len: len as u32,
        });
        self.bytes += len;
        while self.packets.len() > RECENT_PACKETS || self.bytes > RECENT_BYTES {
            self.pop();
        }
    }

    fn pop(&mut self) {
        let Some(old) = self.packets.pop_front() else {
            return;
        };
        self.bytes -= old.len as usize;
        // Blocks no kept packet points into any more go; one is kept.
        let oldest_used = self.packets.front().map_or(u64::MAX, |k| k.block);
        while self.first_block < oldest_used && self.blocks.len() > 1 {
            let block = self.blocks.pop_front().expect("more than one");
            self.first_block += 1;
            if block.capacity() == BLOCK {
                self.spare = Some(block);
            }
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// The kept packets, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = RawPacketRef<'_>> {
        self.packets.iter().map(|k| {
            let block = &self.blocks[(k.block - self.first_block) as usize];
            RawPacketRef {
                ts: k.ts,
                orig_len: k.orig_len,
                data: &block[k.start as usize..(k.start + k.len) as usize],
                ifindex: k.ifindex,
            }
        })
    }

    /// Bytes held, counting the blocks' free room.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.blocks
            .iter()
            .chain(&self.spare)
            .map(Vec::capacity)
            .sum()
    }
}

impl RawPacketRef<'_> {
    pub fn to_packet(self) -> RawPacket {
        RawPacket {
            ts: self.ts,
            orig_len: self.orig_len,
            data: self.data.to_vec(),
            ifindex: self.ifindex,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(i: u32, data: &[u8]) -> RawPacketRef<'_> {
        RawPacketRef {
            ts: Timestamp {
                sec: i64::from(i),
                frac: 0,
                nanos: false,
            },
            orig_len: 1500,
            data,
            ifindex: 1,
        }
    }

    #[test]
    fn keeps_the_newest_packets_exactly_and_bounded() {
        let mut recent = Recent::default();
        // Packets of 60 to 383 bytes, their first byte their number.
        let data: Vec<Vec<u8>> = (0..3 * RECENT_PACKETS as u32)
            .map(|i| vec![i as u8; 60 + (i as usize * 7) % 324])
            .collect();
        for (i, d) in data.iter().enumerate() {
            recent.push(&packet(i as u32, d));
        }
        let kept: Vec<RawPacket> = recent.iter().map(|p| p.to_packet()).collect();
        assert_eq!(kept.len(), RECENT_PACKETS);
        let first = 2 * RECENT_PACKETS;
        for (k, p) in kept.iter().enumerate() {
            assert_eq!(p.data, data[first + k], "packet {}", first + k);
            assert_eq!(p.ts.sec, (first + k) as i64);
        }
        // Held: the packets' bytes and at most two blocks more.
        let bytes: usize = kept.iter().map(|p| p.data.len()).sum();
        assert!(
            recent.held() <= bytes + 2 * BLOCK,
            "{} for {bytes}",
            recent.held()
        );

        // Bounded in bytes too: whole 64 KiB packets (--payload).
        let big = vec![7u8; 65_535];
        for i in 0..200 {
            recent.push(&packet(i, &big));
        }
        assert!(recent.bytes <= RECENT_BYTES);
        assert_eq!(recent.iter().count(), RECENT_BYTES / big.len());
        assert!(recent.iter().all(|p| p.data == big.as_slice()));
        assert!(recent.held() <= RECENT_BYTES + 2 * (BLOCK + big.len()));
        recent.clear();
        assert_eq!(recent.iter().count(), 0);
    }
}
