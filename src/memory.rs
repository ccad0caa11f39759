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

/// The most of /proc/self/smaps read: a few hundred mappings take ~300 KB.
const SMAPS_LIMIT: u64 = 4 << 20;

/// Drops this process's mappings of its own executable's read-only pages
/// (code, constants), so that RSS counts only those run again. The start
/// runs code the steady state never does (argument parsing, the BTF
/// parse, the eBPF loaders: about 6 MB of the 9 MB mapped); the pages stay
/// in the page cache, and a page touched again comes back with a minor
/// fault. Only mappings with no private (copied-on-write) pages are
/// dropped: MADV_DONTNEED would throw such a page's contents away. Called
/// once, when the sampler's start is done (`collect::Collectors`).
pub fn release_code_pages() {
    let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
        return;
    };
    let Ok(file) = std::fs::File::open("/proc/self/smaps") else {
        return;
    };
    let mut text = String::new();
    if std::io::Read::read_to_string(&mut std::io::Read::take(file, SMAPS_LIMIT), &mut text)
        .is_err()
    {
        return;
    }
    for (start, end) in code_mappings(&text, &exe.to_string_lossy()) {
        // SAFETY: the range is one of our read-only file mappings with no
        // private pages; dropping it loses nothing, the pages fault back in
        // from the file.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
        }
    }
}

/// The address ranges in `smaps` of `path`'s mappings that are not
/// writable and hold no anonymous (copied-on-write) pages.
fn code_mappings(smaps: &str, path: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut fields = line.split_ascii_whitespace();
        let (Some(first), Some(second)) = (fields.next(), fields.next()) else {
            continue;
        };
        if let Some((start, end)) = first.split_once('-')
            && let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            )
        {
            // "START-END PERMS OFFSET DEV INODE PATH", the path may hold spaces.
            let name = fields.skip(3).collect::<Vec<_>>().join(" ");
            current = (!second.contains('w') && name == path).then_some((start, end));
        } else if first == "Anonymous:"
            && let Some(range) = current.take()
            && second == "0"
        {
            found.push(range);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_only_mappings_of_the_file_without_private_pages() {
        let smaps = "\
55ef76697000-55ef769e5000 r--p 00000000 fd:01 123 /usr/bin/netlens
Rss:                1380 kB
Anonymous:             0 kB
55ef769e5000-55ef77422000 r-xp 0034e000 fd:01 123 /usr/bin/netlens
Anonymous:             0 kB
55ef77422000-55ef77477000 r--p 00d8b000 fd:01 123 /usr/bin/netlens
Anonymous:           336 kB
55ef77477000-55ef77479000 rw-p 00de0000 fd:01 123 /usr/bin/netlens
Anonymous:             0 kB
7fbaaaeb2000-7fbaab008000 r-xp 00028000 fd:01 77 /usr/lib/libc.so.6
Anonymous:             0 kB
";
        assert_eq!(
            code_mappings(smaps, "/usr/bin/netlens"),
            vec![
                (0x55ef_7669_7000, 0x55ef_769e_5000),
                (0x55ef_769e_5000, 0x55ef_7742_2000)
            ]
        );
    }

    #[test]
    fn released_code_and_constants_come_back() {
        release_code_pages();
        // Code and constants on the dropped pages fault back in; relocated
        // pointers (copied-on-write pages) were kept.
        let mut words: Vec<String> = "c b a".split(' ').map(str::to_string).collect();
        words.sort();
        assert_eq!(format!("{words:?}"), r#"["a", "b", "c"]"#);
        assert_eq!(code_mappings("", "x"), Vec::new());
    }
}
