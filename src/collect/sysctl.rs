//! Kernel knobs read live from /proc/sys. The net.* entries there belong to
//! the network namespace of the reading thread, so the sampler thread sees
//! the watched namespace's values.

use crate::model::sockets::{FINDING_KNOBS, KNOBS};
use std::collections::BTreeMap;

/// "net.core.somaxconn" -> "/proc/sys/net/core/somaxconn".
pub fn path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// Knobs that are host-wide (no /proc/sys entry in a namespace other than
/// the host's) yet govern every namespace: tcp_mem and tcp_max_orphans
/// limit the TCP memory and orphans that sockstat counts for the whole host.
pub const HOST_WIDE: &[&str] = &["net.ipv4.tcp_mem", "net.ipv4.tcp_max_orphans"];

/// The `HOST_WIDE` knobs' files, opened before the sampler thread enters
/// the watched namespace (a sysctl file keeps the namespace it was opened
/// in) and read again each sample.
#[derive(Default)]
pub struct HostKnobs {
    files: Vec<(&'static str, std::fs::File)>,
    /// The per-CPU and neighbour files, host-wide too (the Collectors take
    /// them).
    pub host_files: super::softnet::HostFiles,
}

impl HostKnobs {
    /// Opens what the calling thread's namespace has of them.
    pub fn open() -> Self {
        let files = HOST_WIDE
            .iter()
            .filter_map(|name| Some((*name, std::fs::File::open(path(name)).ok()?)))
            .collect();
        Self {
            files,
            host_files: super::softnet::HostFiles::open(),
        }
    }

    fn read(&self, name: &str) -> Option<String> {
        use std::os::unix::fs::FileExt;
        let (_, file) = self.files.iter().find(|(n, _)| *n == name)?;
        let mut buffer = [0u8; 256];
        let size = file.read_at(&mut buffer, 0).ok()?;
        Some(collapse(&String::from_utf8_lossy(&buffer[..size])))
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every knob in `KNOBS` and `FINDING_KNOBS` that could be read, whitespace collapsed ("4096
/// 87380 6291456" for tcp_rmem); a host-wide one this namespace lacks comes
/// from `host`. An unreadable knob is left out.
pub fn read_knobs(host: &HostKnobs) -> BTreeMap<String, String> {
    KNOBS
        .iter()
        .chain(FINDING_KNOBS)
        .filter_map(|name| {
            let value = match std::fs::read_to_string(path(name)) {
                Ok(text) => collapse(&text),
                Err(_) => host.read(name)?,
            };
            Some((name.to_string(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_and_read() {
        assert_eq!(path("net.core.somaxconn"), "/proc/sys/net/core/somaxconn");
        let knobs = read_knobs(&HostKnobs::open());
        let somaxconn = knobs.get("net.core.somaxconn").expect("somaxconn");
        assert!(somaxconn.parse::<u32>().is_ok(), "{somaxconn}");
        let range = knobs.get("net.ipv4.ip_local_port_range").expect("range");
        assert_eq!(range.split(' ').count(), 2, "{range}");
    }

    /// A host-wide knob read through the file opened before entering a
    /// namespace gives the same text as reading it directly.
    #[test]
    fn host_knobs_reread_their_files() {
        let host = HostKnobs::open();
        let direct = std::fs::read_to_string(path("net.ipv4.tcp_mem")).unwrap();
        assert_eq!(host.read("net.ipv4.tcp_mem"), Some(collapse(&direct)));
        assert_eq!(host.read("net.ipv4.tcp_mem"), Some(collapse(&direct)));
        assert_eq!(host.read("net.core.somaxconn"), None);
    }
}
