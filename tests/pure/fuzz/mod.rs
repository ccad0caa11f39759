//! Fuzzing in CI, stable Rust: mutations of real seeds through the
//! recording codec, the pcap and pcapng reader, the filter and --where
//! parsers and the config file, each for a bounded number of cases (all
//! together a few seconds), under a memory cap: the tests' allocator
//! (tests/common/heap.rs) aborts the run, with a message, when a fuzz
//! test's thread holds `CAP_BYTES` more heap than when it started, so an
//! input that amplifies memory fails CI instead of passing slowly.

mod capture;
mod mutate;
mod parsers;
mod readers;

use crate::common::heap;

/// Live heap allowed a test: far above what any
/// seed or honest mutation needs, far below an amplification's gigabytes.
pub const CAP_BYTES: usize = 256 << 20;

/// Called first by each fuzz test (each case of a proptest): the test's
/// thread may hold `CAP_BYTES` more than it holds now.
pub fn cap() {
    heap::cap_this_thread(CAP_BYTES);
}
