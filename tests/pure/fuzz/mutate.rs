//! A small deterministic mutator over seed files (the same cases every
//! run, so a failure reproduces): flips, overwrites with edge values,
//! insertions, deletions, splices of the seed into itself.

use crate::common::random::XorShift;

pub fn mutate(seed: &[u8], rng: &mut XorShift) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        if out.is_empty() {
            out.push(rng.next() as u8);
            continue;
        }
        let at = rng.below(out.len());
        match rng.below(6) {
            0 => out[at] ^= 1 << rng.below(8),
            1 => {
                let edge = [0u8, 1, 0x7f, 0x80, 0xff][rng.below(5)];
                let n = 1 + rng.below(8);
                for b in out.iter_mut().skip(at).take(n) {
                    *b = edge;
                }
            }
            2 => {
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                out.splice(at..at, bytes);
            }
            3 => {
                let end = (at + 1 + rng.below(64)).min(out.len());
                out.drain(at..end);
            }
            4 => {
                let from = rng.below(out.len());
                let len = (1 + rng.below(256)).min(out.len() - from);
                let piece = out[from..from + len].to_vec();
                out.splice(at..at, piece);
            }
            _ => out.truncate(at),
        }
    }
    out
}
