//! What the eBPF loaders share: the kernel's type information
//! (/sys/kernel/btf/vmlinux), parsed once for the loads of a start (each
//! parse reads and indexes ~6 MB) and freed after them, and their errors
//! written on one line.
//!
//! aya 0.14's `EbpfLoader::new()` still parses it once more per loader
//! before `.btf()` replaces it; sharing saves the loaders' own parses.

use aya::Btf;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// The parse the loaders of one start share, dropped when the last of
/// them is done: parsed, it takes tens of MB that an idle netlens would
/// otherwise hold for good.
static KERNEL: Mutex<Weak<Btf>> = Mutex::new(Weak::new());

/// The running kernel's BTF, or in one line why it cannot be read. Hold it
/// across loads that follow each other, so that they parse it once.
pub fn kernel() -> Result<Arc<Btf>, String> {
    let mut cached = KERNEL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(btf) = cached.upgrade() {
        return Ok(btf);
    }
    let btf = Arc::new(Btf::from_sys_fs().map_err(|e| chain(&e))?);
    *cached = Arc::downgrade(&btf);
    Ok(btf)
}

/// An error and its causes on one line: a verifier log's lines are joined
/// with "; " and the whole is cut at `MAX_WHY` characters.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    match joined.char_indices().nth(MAX_WHY) {
        Some((cut, _)) => format!("{}...", &joined[..cut]),
        None => joined,
    }
}

const MAX_WHY: usize = 400;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verifier_log_becomes_one_bounded_line() {
        let one_line = |text: &str| chain(&std::io::Error::other(text.to_string()));
        let log = "the BPF_PROG_LOAD syscall failed. Verifier output: 0: R1=ctx()\n\n1: invalid mem access\n";
        assert_eq!(
            one_line(log),
            "the BPF_PROG_LOAD syscall failed. Verifier output: 0: R1=ctx(); 1: invalid mem access"
        );
        let long = "x\n".repeat(1000);
        let line = one_line(&long);
        assert!(!line.contains('\n'));
        assert!(line.chars().count() <= MAX_WHY + 3);
    }

    /// Loads that follow each other share one parse; the last one done
    /// frees it.
    #[test]
    fn the_parse_is_shared_then_freed() {
        let Ok(first) = kernel() else {
            return; // no BTF on this kernel
        };
        let second = kernel().unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        drop(first);
        drop(second);
        let cached = KERNEL.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(cached.upgrade().is_none());
    }
}
