//! Network namespace labels for drop rows: "host" for the initial one, the
//! `ip netns` name (a bind mount in /run/netns of the same inode), else
//! "netns:INODE".

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;

const RUN_NETNS: &str = "/run/netns";
/// /run/netns entries read at most.
const MAX_NAMES: usize = 4096;

#[derive(Debug, Default)]
pub struct NetnsLabels {
    initial: Option<u64>,
    names: HashMap<u64, String>,
    /// Inodes /run/netns was read for, named or not: a container's
    /// namespace has no name there, and must not cost a read every tick.
    looked_up: HashSet<u64>,
}

impl NetnsLabels {
    /// `own` is the sampler's namespace and `own_is_host` whether netns
    /// calls it "host": when PID 1's namespace cannot be read (no
    /// CAP_SYS_PTRACE, a container), that is the best word for the initial.
    pub fn new(own: u64, own_is_host: bool) -> Self {
        let initial = super::super::netns::link_inode(std::path::Path::new("/proc/1/ns/net"))
            .or((own_is_host && own != 0).then_some(own));
        Self {
            initial,
            ..Self::default()
        }
    }

    /// The initial namespace's inode, when /proc/1/ns/net could be read.
    pub fn initial(&self) -> Option<u64> {
        self.initial
    }

    /// Reads /run/netns again when a namespace not looked up before shows:
    /// a namespace named after netlens started gets its name.
    pub fn refresh_for(&mut self, inodes: impl Iterator<Item = u64>) {
        let new: Vec<u64> = inodes
            .filter(|&i| i != 0 && Some(i) != self.initial && !self.looked_up.contains(&i))
            .collect();
        if new.is_empty() {
            return;
        }
        self.looked_up.extend(new);
        self.names.clear();
        let entries = std::fs::read_dir(RUN_NETNS).into_iter().flatten().flatten();
        for entry in entries.take(MAX_NAMES) {
            let (Ok(meta), Ok(name)) = (
                std::fs::metadata(entry.path()),
                entry.file_name().into_string(),
            ) else {
                continue;
            };
            // The first name in sorted order, as own_label picks.
            let slot = self.names.entry(meta.ino()).or_insert_with(|| name.clone());
            if name < *slot {
                *slot = name;
            }
        }
    }

    pub fn label(&self, inode: u64) -> String {
        if inode == 0 {
            return "-".into();
        }
        if Some(inode) == self.initial {
            return "host".into();
        }
        self.names
            .get(&inode)
            .cloned()
            .unwrap_or_else(|| format!("netns:{inode}"))
    }
}
