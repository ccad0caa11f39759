//! Host-wide sysctls a test changes (net.ipv4.tcp_mem,
//! nf_conntrack_max): put back on drop, and put back by the next run when
//! a run was killed before its drops ran. Each change leaves a note (the
//! path and the original value) in the run's scratch root until it is
//! undone; the next run's sweep of dead runs' roots restores what their
//! notes name.

use std::path::{Path, PathBuf};

/// Where a run's notes are, under its scratch root.
const NOTES: &str = "host-sysctls";

/// A host-wide sysctl restored on drop.
pub struct HostSysctl {
    path: &'static str,
    original: String,
    note: PathBuf,
}

impl HostSysctl {
    /// Keeps `path`'s value (a file under /proc/sys) to restore it on drop.
    pub fn keep(path: &'static str) -> HostSysctl {
        assert!(path.starts_with("/proc/sys/"), "{path}");
        let original = std::fs::read_to_string(path).unwrap().trim().to_string();
        let notes = super::scratch_root().join(NOTES);
        std::fs::create_dir_all(&notes).unwrap();
        let note = notes.join(path.trim_start_matches('/').replace('/', "."));
        std::fs::write(&note, format!("{path}\n{original}\n")).unwrap();
        HostSysctl {
            path,
            original,
            note,
        }
    }

    /// Sets `path` to `value` until the guard drops.
    pub fn set(path: &'static str, value: &str) -> HostSysctl {
        let guard = HostSysctl::keep(path);
        std::fs::write(path, value).unwrap();
        guard
    }
}

impl Drop for HostSysctl {
    fn drop(&mut self) {
        restore(self.path, &self.original);
        let now = std::fs::read_to_string(self.path).unwrap_or_default();
        // Whitespace differs (tcp_mem reads back with tabs).
        let same = now.split_whitespace().eq(self.original.split_whitespace());
        assert!(same, "{} not restored: {now:?}", self.path);
        let _ = std::fs::remove_file(&self.note);
    }
}

fn restore(path: &str, value: &str) {
    if let Err(e) = std::fs::write(path, value) {
        eprintln!("warning: cannot restore {path}: {e}");
    }
}

/// Restores what a dead run's notes under `root` name (called before its
/// root is removed).
pub(super) fn restore_noted(root: &Path) {
    for entry in std::fs::read_dir(root.join(NOTES))
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let mut lines = text.lines();
        if let (Some(path), Some(value)) = (lines.next(), lines.next())
            && path.starts_with("/proc/sys/")
            && !path.contains("..")
        {
            eprintln!("restoring {path} to {value} (a killed run changed it)");
            restore(path, value);
        }
    }
}
