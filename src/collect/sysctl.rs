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
        let (_, file) = self.files.iter().find(|(n, _)| *n == name)?;
        read_value(file)
    }
}

/// A knob's value, whitespace collapsed ("4096 87380 6291456" for
/// tcp_rmem), read again from the start of its open file.
fn read_value(file: &std::fs::File) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let mut buffer = [0u8; 256];
    let size = file.read_at(&mut buffer, 0).ok()?;
    Some(collapse(&String::from_utf8_lossy(&buffer[..size])))
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The knobs' values, read each sample in the watched namespace (on the
/// sampler thread): a /proc/sys read gives the value of the moment. The
/// TCP tab's `KNOBS` stay open (the path lookups of an open per knob a
/// sample were most of what reading them cost); the findings' longer
/// `FINDING_KNOBS` are opened for each read, so a sampler of many
/// namespaces holds no descriptor for them.
pub struct Knobs {
    files: Vec<(&'static str, std::fs::File)>,
    host: HostKnobs,
}

impl Knobs {
    /// Opens what the calling thread's namespace has of `KNOBS`; `host`:
    /// the host-wide ones, for those this namespace lacks.
    pub fn open(host: HostKnobs) -> Self {
        let files = KNOBS
            .iter()
            .filter_map(|name| Some((*name, std::fs::File::open(path(name)).ok()?)))
            .collect();
        Self { files, host }
    }

    /// Every knob that could be read; a host-wide one this namespace
    /// lacks comes from the host's file. An unreadable knob is left out.
    pub fn read(&self) -> BTreeMap<String, String> {
        KNOBS
            .iter()
            .chain(FINDING_KNOBS)
            .filter_map(|name| {
                let own = self.files.iter().find(|(n, _)| n == name);
                let value = match own {
                    Some((_, file)) => read_value(file),
                    None => std::fs::File::open(path(name))
                        .ok()
                        .and_then(|file| read_value(&file)),
                };
                Some((name.to_string(), value.or_else(|| self.host.read(name))?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_and_read() {
        assert_eq!(path("net.core.somaxconn"), "/proc/sys/net/core/somaxconn");
        let knobs = Knobs::open(HostKnobs::open()).read();
        let somaxconn = knobs.get("net.core.somaxconn").expect("somaxconn");
        assert!(somaxconn.parse::<u32>().is_ok(), "{somaxconn}");
        let range = knobs.get("net.ipv4.ip_local_port_range").expect("range");
        assert_eq!(range.split(' ').count(), 2, "{range}");
    }

    /// A knob's file, opened once, gives the value of each read: set
    /// twice in a namespace of this test's own (a thread's, gone with it).
    #[test]
    fn kept_files_read_the_value_of_the_moment() {
        // SAFETY: geteuid(2) takes nothing and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIP kept_files_read_the_value_of_the_moment: needs root (a namespace)");
            return;
        }
        std::thread::spawn(|| {
            // SAFETY: unshare(2) moves only this thread into a new namespace.
            assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0);
            let knobs = Knobs::open(HostKnobs::default());
            let file = path("net.core.somaxconn");
            for value in ["1234", "4321"] {
                std::fs::write(&file, value).unwrap();
                assert_eq!(knobs.read()["net.core.somaxconn"], value);
            }
        })
        .join()
        .unwrap();
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
