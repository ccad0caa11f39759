//! The kernel's type information (/sys/kernel/btf/vmlinux), parsed once
//! per process and shared by the eBPF loaders: each parse reads and
//! indexes ~6 MB.
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

fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
