//! The test binary's allocator: the system's, counting the live heap as
//! glibc's chunks, with its high-water mark, and on a thread that asks for
//! it a cap on that thread's live heap (the fuzzers': an input that
//! amplifies memory aborts the run instead of passing slowly). The
//! process-wide counts include every test running beside; a test that
//! reads them runs alone: [`alone`] runs it again in a child process of
//! the same binary where no other test runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::process::Command;
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
thread_local! {
    // Const-initialised and without destructors: no allocation on access,
    // so the allocator may use them.
    /// This thread's allocations less its frees.
    static THREAD_LIVE: Cell<isize> = const { Cell::new(0) };
    /// This thread's cap on THREAD_LIVE; 0: no cap.
    static THREAD_CAP: Cell<isize> = const { Cell::new(0) };
}

/// glibc malloc's chunk for a request of `n` bytes (64-bit): 8 bytes of
/// header, rounded up to 16, at least 32.
pub fn chunk(n: usize) -> usize {
    (n + 8).div_ceil(16).max(2) * 16
}

/// Adds `bytes` to the live count; `held` more bytes are live for a moment
/// (a realloc's old chunk, until it is copied) and count in the peak.
fn grow(bytes: isize, held: isize) {
    let before = LIVE.fetch_add(bytes, Ordering::Relaxed);
    PEAK.fetch_max(before + bytes.max(0) + held, Ordering::Relaxed);
    // try_with: a thread's locals are gone while it exits.
    let over = THREAD_LIVE
        .try_with(|live| {
            live.set(live.get() + bytes);
            let cap = THREAD_CAP.try_with(Cell::get).unwrap_or(0);
            cap != 0 && live.get() > cap
        })
        .unwrap_or(false);
    if over {
        // No allocation here: write and abort.
        let message = b"heap: this test's live heap passed its cap: an input amplifies memory\n";
        // SAFETY: writing a static buffer to fd 2.
        unsafe {
            libc::write(2, message.as_ptr().cast(), message.len());
        }
        std::process::abort();
    }
}

// SAFETY: every call is passed to System unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(chunk(layout.size()) as isize, 0);
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(chunk(layout.size()) as isize, 0);
        // SAFETY: as for alloc.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let bytes = chunk(layout.size()) as isize;
        LIVE.fetch_sub(bytes, Ordering::Relaxed);
        let _ = THREAD_LIVE.try_with(|live| live.set(live.get() - bytes));
        // SAFETY: ptr came from alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = chunk(layout.size()) as isize;
        grow(chunk(new_size) as isize - old, old);
        // SAFETY: as for dealloc and alloc.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Live heap bytes (as glibc chunks) of the whole process.
pub fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// The highest `live()` since the last `reset_peak`.
pub fn peak() -> isize {
    PEAK.load(Ordering::Relaxed)
}

pub fn reset_peak() {
    PEAK.store(live(), Ordering::Relaxed);
}

/// Aborts the process when this thread's live heap (its allocations less
/// its frees) grows by more than `bytes` from now. A fuzz test calls it
/// first: the code under test runs on the test's thread.
pub fn cap_this_thread(bytes: usize) {
    let now = THREAD_LIVE.with(Cell::get);
    THREAD_CAP.with(|cap| cap.set(now + bytes as isize));
}

/// Set in the child [`alone`] starts, to the test it runs.
const ALONE: &str = "NETLENS_TEST_ALONE";

/// For a test that reads the process-wide heap counts: in the test binary
/// run by cargo, runs this test again in a child process of the binary
/// (`--exact NAME --test-threads=1`) where it is the only test, requires
/// that it ran and passed, and returns true (the caller returns). In that
/// child it returns false: the caller runs the test's body.
pub fn alone() -> bool {
    // In the child (whatever its test): never a grandchild.
    if std::env::var_os(ALONE).is_some() {
        return false;
    }
    let name = super::need::test_name();
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        .args(["--exact", &name, "--test-threads=1", "--nocapture"])
        .env(ALONE, &name)
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Its measurements, for --nocapture.
    eprint!("{stderr}");
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name}, run alone, failed ({}):\n{stdout}",
        out.status
    );
    true
}
