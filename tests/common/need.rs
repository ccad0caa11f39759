//! Skipping a test that cannot run here: not root, or a tool it runs is not
//! installed. One SKIP line names the test (libtest names each test's
//! thread after it) and what is missing, with the Debian package to
//! install, so `cargo test --profile fast-build` passes on a box with only the Rust
//! toolchain; .ci/run installs every package, so CI runs every test.

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The Debian package that installs each tool the tests run.
const PACKAGES: &[(&str, &str)] = &[
    ("busybox", "busybox-static"),
    ("conntrack", "conntrack"),
    ("curl", "curl"),
    ("dpkg-deb", "dpkg"),
    ("fuse-overlayfs", "fuse-overlayfs"),
    ("getent", "libc-bin"),
    ("ip", "iproute2"),
    ("iperf3", "iperf3"),
    ("ip6tables-legacy", "iptables"),
    ("ip6tables-legacy-save", "iptables"),
    ("iptables", "iptables"),
    ("iptables-legacy", "iptables"),
    ("iptables-legacy-save", "iptables"),
    ("iptables-nft", "iptables"),
    ("kill", "procps"),
    ("modprobe", "kmod"),
    ("mount", "mount"),
    ("nft", "nftables"),
    ("nginx", "nginx"),
    ("nsenter", "util-linux"),
    ("nstat", "iproute2"),
    ("objdump", "binutils"),
    ("openssl", "openssl"),
    ("podman", "podman"),
    ("prometheus", "prometheus"),
    ("promtool", "prometheus"),
    ("python3", "python3"),
    ("setcap", "libcap2-bin"),
    ("setpriv", "util-linux"),
    ("ss", "iproute2"),
    ("sysctl", "procps"),
    ("tc", "iproute2"),
    ("tcpdump", "tcpdump"),
    ("tmux", "tmux"),
    ("tshark", "tshark"),
    ("umount", "mount"),
    ("unshare", "util-linux"),
    ("useradd", "passwd"),
    ("userdel", "passwd"),
    ("wrk", "wrk"),
];

/// The running test's name ("module::test"), from its thread's name.
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test helper")
        .to_string()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// True when `tool` is an executable file in a directory of $PATH (where
/// Command looks for it).
pub fn installed(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(Path::new(&dir).join(tool))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// The package to install for `tool`.
pub fn package_of(tool: &str) -> &str {
    PACKAGES
        .iter()
        .find(|(name, _)| *name == tool)
        .map_or(tool, |(_, package)| package)
}

/// True (after printing `SKIP <test>: needs <tool> (apt-get install
/// <package>)`) when one of `tools` is not installed: the test returns.
pub fn need(tools: &[&str]) -> bool {
    let skip = lacks_one(tools);
    if !skip {
        take_place();
    }
    skip
}

/// True (after the SKIP line) when one of `tools` is not installed.
fn lacks_one(tools: &[&str]) -> bool {
    tools
        .iter()
        .find(|tool| !installed(tool))
        .is_some_and(|tool| missing(tool))
}

/// Prints the SKIP line for a `tool` found missing (where the test looks
/// for it itself); returns true.
pub fn missing(tool: &str) -> bool {
    eprintln!(
        "SKIP {}: needs {tool} (apt-get install {})",
        test_name(),
        package_of(tool)
    );
    true
}

/// True (after one SKIP line) when this test cannot run here: not root,
/// or one of `tools` is not installed. Else the test shares the host
/// with the other root tests until it ends (see [`need_root_alone`]).
pub fn need_root(tools: &[&str]) -> bool {
    if !is_root() {
        eprintln!("SKIP {}: needs root", test_name());
        return true;
    }
    if need(tools) {
        return true;
    }
    share_host();
    false
}

/// Root tests share the host, except the few that change it for every
/// namespace (net.ipv4.tcp_mem, nf_conntrack_max): those hold it alone.
static HOST: RwLock<()> = RwLock::new(());

thread_local! {
    /// This test's share of the host. libtest runs each test on a thread of
    /// its own, so the share ends with the test, whichever way it returns.
    static SHARE: RefCell<Option<RwLockReadGuard<'static, ()>>> = const { RefCell::new(None) };
}

fn share_host() {
    SHARE.with(|share| {
        let mut share = share.borrow_mut();
        // Taken once: a second read lock behind a waiting writer would wait
        // for this test itself.
        if share.is_none() {
            let _waiting = Waiting::start();
            *share = Some(HOST.read().unwrap_or_else(|poisoned| poisoned.into_inner()));
        }
    });
}

/// For a root test that changes what every namespace sees: None (after
/// one SKIP line) when it cannot run here, as [`need_root`]; else it waits
/// until no other root test runs and keeps them out, from its setup on,
/// until the guard drops. Taken first thing, so that such tests, which
/// come first in name order, queue before the others take the host.
pub fn need_root_alone(tools: &[&str]) -> Option<RwLockWriteGuard<'static, ()>> {
    if !is_root() {
        eprintln!("SKIP {}: needs root", test_name());
        return None;
    }
    if need(tools) {
        return None;
    }
    Some(host_alone())
}

/// Waits until no other root test runs and keeps them out until the guard
/// drops.
fn host_alone() -> RwLockWriteGuard<'static, ()> {
    // Its own share first, or it would wait for itself.
    SHARE.with(|share| share.borrow_mut().take());
    let _waiting = Waiting::start();
    HOST.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How many tests that run tools (`need`, `need_root`) or load the CPU
/// (`heavy`) run at once. libtest runs more threads (the README's command
/// gives 16) so that a test waiting for its turn at `heavy()` or the host
/// does not keep a thread from the others (the heavy tests come in
/// bunches in name order, the order libtest starts them in); those
/// waiting hold no place, so the CPU is shared by at most this many.
const RUNNING_AT_ONCE: usize = 5;
static RUNNING: Mutex<Running> = Mutex::new(Running {
    places: 0,
    heavy_waiting: 0,
});
static PLACE_FREED: Condvar = Condvar::new();

struct Running {
    /// Places taken.
    places: usize,
    /// Tests holding `heavy()` that wait for a place: they take the next
    /// one, as the heavy tests' turns are what bound the suite's time.
    heavy_waiting: usize,
}

/// One of the `RUNNING_AT_ONCE` places, given back on drop.
struct Place;

impl Place {
    /// Waits for a place; `heavy`: ahead of the tests that are not.
    fn take(heavy: bool) -> Place {
        let mut running = RUNNING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        running.heavy_waiting += usize::from(heavy);
        while running.places >= RUNNING_AT_ONCE || (!heavy && running.heavy_waiting > 0) {
            running = PLACE_FREED
                .wait(running)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        running.heavy_waiting -= usize::from(heavy);
        running.places += 1;
        Place
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        RUNNING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .places -= 1;
        // Waiters differ in what they wait for: all look.
        PLACE_FREED.notify_all();
    }
}

thread_local! {
    /// This test's place, held until the test's thread ends.
    static PLACE: RefCell<Option<Place>> = const { RefCell::new(None) };
}

/// This test runs as one of the `RUNNING_AT_ONCE` (once it has a place,
/// it keeps it); while it holds `heavy()`, it goes first.
fn take_place() {
    if PLACE.with(|place| place.borrow().is_none()) {
        let place = Place::take(HOLDS_HEAVY.with(Cell::get));
        PLACE.with(|held| *held.borrow_mut() = Some(place));
    }
}

/// A test waiting for a lock: it gives up its place meanwhile (a test
/// never waits holding one, so the places always go round), and takes one
/// back when the wait ends (on drop).
struct Waiting;

impl Waiting {
    fn start() -> Waiting {
        PLACE.with(|place| place.borrow_mut().take());
        Waiting
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        take_place();
    }
}

/// Root and iproute2, which every namespace test needs.
pub fn skip_unless_root() -> bool {
    need_root(&["ip"])
}

/// Tests that load the CPUs (floods, iperf3, wrk, thousands of
/// connections, fuzzing) take turns: side by side they would slow each
/// other and the waiting tests past their deadlines. Tests that only wait
/// (tmux, timers, namespaces) run beside them and beside each other.
static HEAVY: Mutex<()> = Mutex::new(());

thread_local! {
    /// This test holds `heavy()`: it takes the next free place.
    static HOLDS_HEAVY: Cell<bool> = const { Cell::new(false) };
}

/// A CPU-heavy test's turn, held until it drops.
pub struct Heavy {
    _turn: MutexGuard<'static, ()>,
}

impl Drop for Heavy {
    fn drop(&mut self) {
        HOLDS_HEAVY.with(|holds| holds.set(false));
    }
}

/// Held for the whole of a CPU-heavy test that needs no root:
/// `let _heavy = common::heavy();`, first thing.
pub fn heavy() -> Heavy {
    let waiting = Waiting::start();
    // A heavy test that failed (and poisoned the lock) must not fail the
    // next one too.
    let turn = HEAVY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    HOLDS_HEAVY.with(|holds| holds.set(true));
    drop(waiting);
    Heavy { _turn: turn }
}

/// [`need_root`] for a CPU-heavy test: None (after one SKIP line) when it
/// cannot run here; else its turn at [`heavy`]. The turn comes first:
/// a heavy test that took a place at `need_root` and then waited for its
/// turn would give it up, and the one whose turn it is would wait behind
/// the tests that only wait (22 s at the start of a run).
pub fn need_root_heavy(tools: &[&str]) -> Option<Heavy> {
    if !is_root() {
        eprintln!("SKIP {}: needs root", test_name());
        return None;
    }
    if lacks_one(tools) {
        return None;
    }
    let heavy = heavy();
    share_host();
    Some(heavy)
}
