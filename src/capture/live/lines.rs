//! Printed lines waiting for the Flows tab: the capture thread adds a
//! batch every BATCH_EVERY, the UI takes them all with each sample. A
//! channel would wake the UI for each batch, ten times a second under
//! traffic, to keep lines it draws only once a sample.

use super::{Capture, CaptureEvent, CapturedPacket, Shared, lock};

/// Printed lines kept for the Flows tab between two takes, and by it.
pub const LINES_KEPT: usize = 10_000;

impl Shared {
    /// Adds a batch of printed lines (leaving `batch` empty, its room
    /// kept); past LINES_KEPT the oldest go (the tab keeps no more),
    /// counted as not printed.
    pub(super) fn add_lines(&mut self, batch: &mut Vec<CapturedPacket>, unprinted: u64) {
        self.lines.append(batch);
        self.unprinted += unprinted;
        let excess = self.lines.len().saturating_sub(LINES_KEPT);
        if excess > 0 {
            self.lines.drain(..excess);
            self.unprinted += excess as u64;
        }
    }

    /// Whether the watched flow has packets (or misses) to take.
    pub(super) fn watched_waiting(&self) -> bool {
        self.watch
            .as_ref()
            .is_some_and(|w| !w.packets.is_empty() || w.missed > 0)
    }
}

impl Capture {
    /// The lines printed since the last call, oldest first, and how many
    /// packets were not printed meanwhile.
    pub fn take_lines(&self) -> CaptureEvent {
        let mut shared = lock(&self.shared);
        CaptureEvent::Packets {
            packets: std::mem::take(&mut shared.lines),
            unprinted: std::mem::take(&mut shared.unprinted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::flows::FlowTable;
    use crate::packet::format::Timestamp;

    fn line(n: usize) -> CapturedPacket {
        CapturedPacket {
            line: format!("packet {n}"),
            ts: Timestamp::default(),
            orig_len: 60,
            data: vec![0; 60].into(),
            ifindex: 0,
        }
    }

    #[test]
    fn lines_wait_bounded_and_are_taken_once() {
        let capture = Capture::replayed(1, 384, "lo");
        let mut batch: Vec<_> = (0..3).map(line).collect();
        lock(&capture.shared).add_lines(&mut batch, 2);
        assert!(batch.is_empty() && batch.capacity() >= 3);
        let CaptureEvent::Packets { packets, unprinted } = capture.take_lines() else {
            panic!("not lines");
        };
        assert_eq!(packets.len(), 3);
        assert_eq!(unprinted, 2);
        let CaptureEvent::Packets { packets, unprinted } = capture.take_lines() else {
            panic!("not lines");
        };
        assert!(packets.is_empty() && unprinted == 0);

        // Past the bound the oldest go, counted as not printed.
        let mut shared = Shared::new(FlowTable::new(1, 1.0), String::new(), None);
        let mut batch: Vec<_> = (0..LINES_KEPT + 5).map(line).collect();
        shared.add_lines(&mut batch, 1);
        assert_eq!(shared.lines.len(), LINES_KEPT);
        assert_eq!(shared.lines[0].line, "packet 5");
        assert_eq!(shared.unprinted, 6);
    }
}
