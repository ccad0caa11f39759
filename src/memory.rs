//! Handing netlens' freed memory back to the system. With a million
//! sockets a sample's tables are hundreds of megabytes, allocated and
//! freed on several threads each second.

/// Blocks at least this large get mappings of their own, unmapped when
/// freed. glibc's default threshold follows the largest block freed (up to
/// 32 MiB), after which blocks below it come from the threads' arenas,
/// whose freed pages the process keeps: at 200,000 sockets the live view's
/// RSS was 275 MB with the moving threshold, 107 MB with this one.
const MMAP_THRESHOLD: libc::c_int = 128 * 1024;

/// Fixes the threshold above; called first thing by `main`.
pub fn map_large_blocks() {
    // SAFETY: mallopt only sets a parameter of the allocator.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Gives the memory of what was freed (a parse of the kernel's BTF, the
/// loaders' copies of it) back to the system: glibc keeps freed pages of
/// its thread arenas otherwise.
pub fn release_freed_memory() {
    // SAFETY: malloc_trim only returns free heap pages to the kernel.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0);
    }
}
