//! Background threads yield to the one that answers keys.
//!
//! At a million sockets the sampler, the preparation worker and the sort
//! threads keep a core busy for most of each second. On a 2-core box a key
//! then waited behind them; lowered by a few nice levels (per thread, as
//! Linux allows), they still get the CPU the UI thread does not use, and a
//! key preempts them at once. The capture thread is not lowered: late, it
//! would drop packets.

/// How much lower than the process a background thread runs.
const BACKGROUND_NICE: libc::c_int = 5;

/// Lowers the calling thread's priority (`setpriority` on its thread id);
/// a failure (no permission to change it) leaves it as it was.
pub fn lower_this_thread() {
    // SAFETY: gettid and getpriority/setpriority take plain integers and
    // touch no memory of ours.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        libc::setpriority(libc::PRIO_PROCESS, tid, (now + BACKGROUND_NICE).min(19));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_lowered_thread_runs_five_nice_levels_lower_and_others_do_not() {
        let before = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let lowered = std::thread::spawn(|| {
            super::lower_this_thread();
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            }
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before + 5).min(19));
        let main_thread = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        assert_eq!(main_thread, before, "only the calling thread");
    }
}
