//! Cgroup v2 ids to cgroup paths. The eBPF owner program records the
//! cgroup id of each connection's process (bpf_get_current_cgroup_id), and
//! that process may be gone by the time its container is looked up (a
//! `curl` that failed and exited). A cgroup v2 id is the inode number of
//! the cgroup's directory in the unified hierarchy, so a walk of that tree
//! finds it while the cgroup exists.
//!
//! Walks are bounded (`MAX_DEPTH`, `MAX_DIRS`) and at most one per
//! `WALK_EVERY`, so ids no walk finds (cgroups removed since, or beyond the
//! bounds) cost nothing more. They read only cgroupfs, yet run on the
//! processes thread as every container look-up does, never the sampler's.

use std::collections::HashMap;
use std::os::unix::fs::DirEntryExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Directories deeper than this under the mount are not read.
pub const MAX_DEPTH: usize = 12;
/// Directories one walk reads at most.
pub const MAX_DIRS: usize = 20_000;
/// An unknown id walks the tree at most this often.
pub const WALK_EVERY: Duration = Duration::from_secs(5);

/// Cgroup paths by id, filled by walks of the unified hierarchy.
#[derive(Default)]
pub struct CgroupPaths {
    /// The unified hierarchy's mount point once looked for; None inside
    /// when there is none (a cgroup v1 host).
    mount: Option<Option<PathBuf>>,
    paths: HashMap<u64, Box<str>>,
    walked: Option<Instant>,
}

impl CgroupPaths {
    /// The cgroups of the hierarchy mounted at `mount` (tests use a
    /// directory).
    pub fn at(mount: impl Into<PathBuf>) -> CgroupPaths {
        CgroupPaths {
            mount: Some(Some(mount.into())),
            ..CgroupPaths::default()
        }
    }

    /// The path of cgroup `id` ("/system.slice/docker-<id>.scope"), the
    /// tree walked first when the id is unknown and no walk is recent.
    pub fn path(&mut self, id: u64) -> Option<&str> {
        if !self.paths.contains_key(&id) && self.walked.is_none_or(|t| t.elapsed() >= WALK_EVERY) {
            self.walked = Some(Instant::now());
            if let Some(mount) = self.mount.get_or_insert_with(unified_mount) {
                let found = walk(mount);
                // Ids are not reused while the host runs: a removed
                // cgroup's entry still names its last connections, up to
                // a bound.
                if self.paths.len() + found.len() > 2 * MAX_DIRS {
                    self.paths.clear();
                }
                self.paths.extend(found);
            }
        }
        self.paths.get(&id).map(|p| &**p)
    }
}

/// The unified (cgroup2) hierarchy's mount point: /sys/fs/cgroup, or
/// /sys/fs/cgroup/unified on a hybrid host.
fn unified_mount() -> Option<PathBuf> {
    parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").ok()?)
}

/// The first cgroup2 mount point of a mountinfo file ("ID PARENT MAJ:MIN
/// ROOT MOUNT_POINT OPTIONS... - FSTYPE SOURCE SUPER_OPTIONS"). One with
/// an escaped character (\040 for a space) is passed over: no runtime
/// mounts it so.
fn parse_mountinfo(text: &str) -> Option<PathBuf> {
    text.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        let point = mount.split(' ').nth(4)?;
        (fs.split(' ').next() == Some("cgroup2") && !point.contains('\\'))
            .then(|| PathBuf::from(point))
    })
}

/// id -> path of the cgroups under `mount`. A directory entry's type is
/// its own, so a symlink is never followed; names that are not UTF-8 name
/// no container and are passed over.
fn walk(mount: &Path) -> HashMap<u64, Box<str>> {
    let mut found = HashMap::new();
    let mut dirs = vec![(mount.to_path_buf(), String::new(), 0)];
    while let Some((dir, path, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if found.len() >= MAX_DIRS {
                return found;
            }
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let child = format!("{path}/{name}");
            if depth + 1 < MAX_DEPTH {
                dirs.push((entry.path(), child.clone(), depth + 1));
            }
            found.insert(entry.ino(), child.into());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn the_unified_mount_comes_from_mountinfo() {
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
            35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
            41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            parse_mountinfo(hybrid),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let v1 = "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(parse_mountinfo(v1), None);
    }

    #[test]
    fn ids_are_the_directories_inodes_and_symlinks_are_not_followed() {
        let root = std::env::temp_dir().join(format!("netlens-cgroups-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let scope = root.join("system.slice/docker-1.scope");
        std::fs::create_dir_all(&scope).unwrap();
        std::fs::write(root.join("cgroup.procs"), "").unwrap();
        let outside = root.with_extension("outside");
        std::fs::create_dir_all(outside.join("hidden")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let mut deep = root.clone();
        for i in 0..MAX_DEPTH + 2 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();

        let mut paths = CgroupPaths::at(&root);
        let id = std::fs::metadata(&scope).unwrap().ino();
        assert_eq!(paths.path(id), Some("/system.slice/docker-1.scope"));
        let hidden = std::fs::metadata(outside.join("hidden")).unwrap().ino();
        assert_eq!(paths.path(hidden), None, "through a symlink");
        let depth = |n: usize| {
            let dir = (0..n).fold(root.clone(), |d, i| d.join(format!("d{i}")));
            std::fs::metadata(dir).unwrap().ino()
        };
        assert!(paths.path(depth(MAX_DEPTH)).is_some());
        assert_eq!(paths.path(depth(MAX_DEPTH + 1)), None, "too deep");
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&outside);
    }
}
