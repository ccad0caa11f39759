//! What the eBPF loaders share: the kernel's type information
//! (/sys/kernel/btf/vmlinux), parsed once per process (each parse reads
//! and indexes ~6 MB), and their errors written on one line.
//!
//! aya 0.14's `EbpfLoader::new()` still parses it once more per loader
//! before `.btf()` replaces it; sharing saves the loaders' own parses.

use aya::Btf;
use std::sync::OnceLock;

static KERNEL: OnceLock<Result<Btf, String>> = OnceLock::new();

/// The running kernel's BTF, or in one line why it cannot be read.
pub fn kernel() -> Result<&'static Btf, String> {
    KERNEL
        .get_or_init(|| Btf::from_sys_fs().map_err(|e| chain(&e)))
        .as_ref()
        .map_err(Clone::clone)
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
}
