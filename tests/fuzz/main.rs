//! Fuzzing in CI, stable Rust: mutations of real seeds through the
//! recording codec, the pcap and pcapng reader, the filter and --where
//! parsers and the config file, each for a bounded number of cases (all
//! together a few seconds), under a memory cap: this binary's allocator
//! aborts the run, with a message, when live heap passes `CAP_BYTES`, so
//! an input that amplifies memory fails CI instead of passing slowly.

#[path = "../common/mod.rs"]
mod common;

mod capture;
mod mutate;
mod parsers;
mod readers;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Live heap allowed (all test threads together): far above what any
/// seed or honest mutation needs, far below an amplification's gigabytes.
pub const CAP_BYTES: usize = 256 << 20;

struct Capped;

static LIVE: AtomicUsize = AtomicUsize::new(0);

impl Capped {
    fn charge(&self, bytes: usize) {
        let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if live > CAP_BYTES {
            // No allocation here: write and abort.
            let message = b"fuzz: live heap passed the 256 MiB cap: an input amplifies memory\n";
            // SAFETY: writing a static buffer to fd 2.
            unsafe {
                libc::write(2, message.as_ptr().cast(), message.len());
            }
            std::process::abort();
        }
    }
}

// SAFETY: every call is forwarded to the system allocator; only counted.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            self.charge(new_size - layout.size());
        }
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if moved.is_null() {
            if new_size > layout.size() {
                LIVE.fetch_sub(new_size - layout.size(), Ordering::Relaxed);
            }
        } else if new_size < layout.size() {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;
