//! The history a jump refills: the samples leading up to the cursor, the
//! newest whole (charged against a budget), older ones as heads.

use super::{Cursor, Heads, Player, cached, noting_damage};
use crate::model::Sample;

impl Player {
    /// The samples that lead up to the cursor, oldest first: what a live
    /// view would hold in its history at that moment (`window` seconds, and
    /// the one sample before them). The newest `full` come whole; older
    /// ones without their sockets, as the live view keeps them
    /// (`History::drop_old_sockets`), read from the heads stream where the
    /// file has one (else each one's samples record is decompressed for its
    /// head), so a jump decodes `full` socket tables at most.
    pub fn window(&mut self, window: f64, full: usize) -> Vec<Sample> {
        let Some(current) = self.current() else {
            return Vec::new();
        };
        let newest = current.mono;
        let within = |sample: &Sample| newest - sample.mono <= window;
        let from_heads = !self.head_segments.is_empty();
        // Whole samples are charged as a segment's are: past the budget
        // the older ones come as heads (the current one and the one before
        // it always whole, for rates).
        let mut whole = crate::record::lazy::decoded_bytes(&current, &[]);
        let mut out = vec![current];
        let Cursor {
            mut segment,
            mut ordinal,
        } = self.cursor;
        while within(out.last().expect("holds the current one")) {
            let whole_wanted = out.len() < full
                && (out.len() < 2 || whole <= crate::record::lazy::MAX_DECODED_KEPT);
            if !whole_wanted && from_heads {
                let oldest = out.last().expect("holds the current one").mono;
                out.extend(self.heads_before(oldest, within));
                break;
            }
            if ordinal == 0 {
                let Some(before) = segment.checked_sub(1) else {
                    break;
                };
                segment = before;
                ordinal = self.segment(segment).len();
                continue;
            }
            ordinal -= 1;
            let sample = if whole_wanted {
                let sample = self.sample_at(Cursor { segment, ordinal });
                whole += sample
                    .as_ref()
                    .map_or(0, |s| crate::record::lazy::decoded_bytes(s, &[]));
                sample
            } else {
                self.segment(segment).head(ordinal)
            };
            // A sample lost to damage is left out, as stepping skips it.
            out.extend(sample);
        }
        out.reverse();
        out
    }

    /// The heads of the samples before boot time `mono`, newest first, up
    /// to and including the first one `within` rejects.
    fn heads_before(&mut self, mono: f64, within: impl Fn(&Sample) -> bool) -> Vec<Sample> {
        let mut out = Vec::new();
        let mut segment = self.head_segments.partition_point(|s| s.first_mono < mono);
        while let Some(before) = segment.checked_sub(1) {
            segment = before;
            for head in self.heads(segment).iter().rev() {
                if head.mono >= mono {
                    continue;
                }
                out.push(head.clone());
                if !within(head) {
                    return out;
                }
            }
        }
        out
    }

    /// The decoded heads of a heads segment (cached, as packets are).
    /// Damage cuts it where it was met, and is kept in `damage`.
    fn heads(&mut self, segment: usize) -> Heads {
        let (reader, damage) = (&self.reader, &mut self.damage);
        cached(&mut self.head_cache, segment, || {
            let entry = self.head_segments.get(segment)?;
            let read = noting_damage(reader.read_raw(entry), damage)?;
            let heads = read.records.iter();
            Some(
                heads
                    .map_while(|r| crate::record::codec::decode_head(r).ok())
                    .collect(),
            )
        })
    }
}
