//! `--all-netns`: every network namespace of the host, sampled from the one
//! sampler thread.
//!
//! Each tick finds the namespaces (cheap: a readlink of /proc/*/ns/net, no
//! stat, and the bind mounts of `ip netns` and Docker). A namespace seen for
//! the first time is entered once: the sampler thread setns()es into it,
//! opens what the kernel binds to a namespace when it is created (a
//! sock_diag socket, an rtnetlink socket, /proc/thread-self/net/snmp and
//! netstat), and setns()es back. From then on each tick only reads those,
//! from the sampler's own namespace: no thread and no setns per namespace
//! per sample. The open sockets keep a namespace alive only for netlens; it
//! is dropped when no process and no bind mount holds it any more.
//!
//! Kept open, a namespace holds six descriptors, and any user can make
//! thousands of namespaces (`unshare -Urn`): 3,400 of them once took 19,999
//! of 20,000, and the exporter could accept no scrape. So the namespaces
//! kept open hold at most a quarter of RLIMIT_NOFILE (`held_limit`); the
//! rest of the descriptors stay for the exporter's connections, the capture
//! and the DNS probes. Every namespace past that is still read each tick:
//! opened, read and closed again (a setns pair and six descriptors for the
//! moment), so a sample covers every namespace whatever their number.
//! Socket owners need no per-namespace work: socket inodes are global, so
//! the one /proc/*/fd scan of `owners` serves every namespace.

use super::link::LinkCollector;
use super::netns::enter;
use super::snmp::parse_pairs;
use super::sockets::SockDiag;
use crate::model::InterfaceSample;
use crate::model::counters::Counters;
use crate::model::netns::{DROP_COUNTERS, NamespaceInfo};
use crate::model::snmp;
use crate::model::socket_table::SocketTable;
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where bind mounts of named namespaces live: `ip netns`'s (the first two
/// are one directory on most hosts; inodes deduplicate them) and Docker's.
const BIND_DIRS: [(&str, bool); 3] = [
    ("/run/netns", true),
    ("/var/run/netns", true),
    ("/run/docker/netns", false),
];

/// A namespace found this tick.
#[derive(Debug, Clone, Default)]
struct Found {
    /// A file that names it, to open it when it is new.
    path: PathBuf,
    /// Its `ip netns` name (a bind mount in /run/netns).
    name: Option<String>,
    /// The lowest pid in it.
    pid: Option<u32>,
}

/// Every namespace on the host now, by nsfs inode: from /proc/*/ns/net
/// (readlink only: "net:[INODE]") and the bind-mount directories.
fn discover() -> HashMap<u64, Found> {
    let mut found: HashMap<u64, Found> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let path = PathBuf::from(format!("/proc/{pid}/ns/net"));
        let Some(inode) = std::fs::read_link(&path).ok().and_then(|t| parse_link(&t)) else {
            continue; // gone, a kernel thread, or not ours to look at
        };
        let slot = found.entry(inode).or_default();
        if slot.pid.is_none_or(|p| pid < p) {
            slot.pid = Some(pid);
            if slot.name.is_none() {
                slot.path = path;
            }
        }
    }
    for (dir, named) in BIND_DIRS {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            // A bind mount is not a link: its inode takes a stat.
            let Ok(meta) = std::fs::metadata(entry.path()) else {
                continue;
            };
            let slot = found.entry(meta.ino()).or_default();
            if named && slot.name.is_none() {
                slot.name = Some(crate::text::bounded_name_bytes(
                    entry.file_name().as_encoded_bytes(),
                ));
            }
            // A bind mount outlives any pid: open through it.
            slot.path = entry.path();
        }
    }
    found
}

/// "net:[4026532288]" -> 4026532288.
fn parse_link(target: &Path) -> Option<u64> {
    let text = target.to_str()?;
    text.strip_prefix("net:[")?.strip_suffix(']')?.parse().ok()
}

/// The container a process belongs to, from its cgroup (see
/// `processes::cgroup_name`), or None for a host process: a systemd unit
/// or slice is not a container. One small function so a richer resolver
/// (a runtime's own name for it) plugs in here.
pub fn container_of(pid: u32) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    File::open(format!("/proc/{pid}/cgroup"))
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    super::processes::cgroup_name(&text).filter(|n| {
        ![".service", ".scope", ".slice"]
            .iter()
            .any(|s| n.ends_with(s))
    })
}

/// A process's command name (any 15 bytes its owner chose), bounded and
/// without control characters.
fn comm(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/comm"))
        .map(|b| crate::text::bounded_name_bytes(b.strip_suffix(b"\n").unwrap_or(&b)))
        .unwrap_or_else(|_| "?".into())
}

/// What the primary namespace is called in the list and what it holds.
pub struct Primary<'a> {
    pub label: &'a str,
    pub counters: &'a Counters,
}

/// The other namespaces' interfaces and list from one tick (their sockets
/// go straight after the primary's: see `AllNamespaces::collect`).
#[derive(Default)]
pub struct Collected {
    pub interfaces: Vec<InterfaceSample>,
    /// Every namespace, the primary (id 0) first.
    pub namespaces: Vec<NamespaceInfo>,
}

/// Everything bound to one namespace, opened inside it.
struct Watched {
    inode: u64,
    diag: SockDiag,
    links: LinkCollector,
    snmp: File,
    netstat: Option<File>,
    /// Its nf_conntrack_count, absent without nf_conntrack.
    conntrack_count: Option<File>,
    /// (pid, container) as last resolved: the cgroup is read again only
    /// when the namespace's lowest pid changes.
    container: (Option<u32>, Option<String>),
}

/// Descriptors one namespace kept open holds (see `open_inside`).
const FDS_PER_NAMESPACE: usize = 6;

/// How many namespaces may be kept open: their descriptors at most a
/// quarter of the soft RLIMIT_NOFILE, raised to the hard limit first.
fn held_limit() -> usize {
    super::raise_descriptor_limit() / 4 / FDS_PER_NAMESPACE
}

/// The namespaces other than the primary one, and their ids.
pub struct AllNamespaces {
    /// The sampler thread's own namespace, to come back to.
    home: File,
    home_inode: u64,
    /// Namespace inode -> id, for the whole session.
    ids: HashMap<u64, u16>,
    next_id: u16,
    watched: BTreeMap<u16, Watched>,
    /// At most this many are kept in `watched`; the others are opened and
    /// closed each tick.
    held_limit: usize,
    primary_container: (Option<u32>, Option<String>),
    /// Sockets of the other namespaces in the last tick, to size the next.
    last_sockets: usize,
}

impl AllNamespaces {
    /// Must run on the sampler thread, in the namespace it samples first.
    pub fn new() -> Result<Self> {
        let home = File::open("/proc/thread-self/ns/net")
            .context("cannot open the sampler's own network namespace")?;
        let home_inode = home.metadata()?.ino();
        Ok(Self {
            home,
            home_inode,
            ids: HashMap::from([(home_inode, 0)]),
            next_id: 1,
            watched: BTreeMap::new(),
            // After `export` raised the soft limit: the session starts later.
            held_limit: held_limit(),
            primary_container: (None, None),
            last_sockets: 0,
        })
    }

    /// One tick: finds the namespaces, opens the new ones (keeping at most
    /// `held_limit` open; the others are opened for this read only),
    /// forgets the gone ones and reads every one but the primary, whose
    /// sockets are in `sockets`: theirs go after them, each copied once
    /// (with 50 namespaces of 2,000 sockets, growing a vector and appending
    /// it again copied 100,000 rows three times). A namespace that
    /// cannot be opened or read this tick is left out of this sample, not
    /// an error; failing to come back home is one.
    pub fn collect(&mut self, primary: Primary, sockets: &mut SocketTable) -> Result<Collected> {
        let found = discover();
        self.watched.retain(|_, w| found.contains_key(&w.inode));
        let mut inodes: Vec<&u64> = found.keys().collect();
        inodes.sort();
        // Every namespace but the primary this tick, by id.
        let mut now: Vec<(u16, u64)> = Vec::with_capacity(inodes.len());
        for inode in inodes {
            if *inode == self.home_inode {
                continue;
            }
            let id = match self.ids.get(inode) {
                Some(id) => *id,
                // Ids are never reused in a session; past u16 the rest wait.
                None if self.next_id == u16::MAX => continue,
                None => {
                    let id = self.next_id;
                    self.next_id += 1;
                    self.ids.insert(*inode, id);
                    id
                }
            };
            now.push((id, *inode));
            if !self.watched.contains_key(&id)
                && self.watched.len() < self.held_limit
                && let Ok(Some(watched)) = self.open(*inode, &found[inode].path)
            {
                self.watched.insert(id, watched);
            }
        }
        now.sort_unstable();
        let mut out = Collected::default();
        sockets.reserve(self.last_sockets + self.last_sockets / 8);
        let before = sockets.len();
        let home = found.get(&self.home_inode).cloned().unwrap_or_default();
        let container = cached_container(&mut self.primary_container, home.pid);
        out.namespaces.push(NamespaceInfo {
            id: 0,
            label: primary.label.to_string(),
            inode: self.home_inode,
            container,
            pid: home.pid,
            retrans_segs: retrans(primary.counters),
            drops: drops(primary.counters),
            // The caller has the primary's own (the conntrack collector).
            conntrack_count: None,
            // Read at the sample's mono (the caller reads its links first).
            read_mono: None,
        });
        for (id, inode) in now {
            let at = &found[&inode];
            // Past the limit: open it for this read, close it after.
            let mut passing = None;
            if !self.watched.contains_key(&id) {
                match self.open(inode, &at.path) {
                    Ok(Some(opened)) => passing = Some(opened),
                    _ => continue, // it went, or cannot be entered
                }
            }
            let watched = match passing.as_mut() {
                Some(watched) => watched,
                None => self.watched.get_mut(&id).expect("checked above"),
            };
            let Ok((mut own, mut interfaces, counters, read_mono)) = watched.read() else {
                continue; // it went between finding and reading
            };
            (0..own.len()).for_each(|i| own.set_netns(i, id));
            interfaces.iter_mut().for_each(|i| i.netns = id);
            sockets.append(&own);
            out.interfaces.append(&mut interfaces);
            let label = match (&at.name, at.pid) {
                (Some(name), _) => name.clone(),
                (None, Some(pid)) => format!("pid {pid} {}", comm(pid)),
                (None, None) => format!("net:[{}]", watched.inode),
            };
            out.namespaces.push(NamespaceInfo {
                id,
                label,
                inode: watched.inode,
                container: cached_container(&mut watched.container, at.pid),
                pid: at.pid,
                retrans_segs: retrans(&counters),
                drops: drops(&counters),
                conntrack_count: watched.conntrack_count(),
                read_mono: Some(read_mono),
            });
        }
        self.last_sockets = sockets.len() - before;
        Ok(out)
    }

    /// Enters the namespace at `path`, opens its sockets and files, comes
    /// back. None when the file names another namespace by now (a pid
    /// reused between finding and opening).
    fn open(&self, inode: u64, path: &Path) -> Result<Option<Watched>> {
        let file = File::open(path)?;
        if file.metadata()?.ino() != inode {
            return Ok(None);
        }
        enter(&file, &path.display().to_string())?;
        let opened = open_inside(inode);
        // Whatever happened inside, the thread must come home: every later
        // socket it opens and every primary read depends on it.
        if let Err(error) = enter(&self.home, "the sampler's own") {
            bail!("cannot return to the sampler's namespace: {error:#}");
        }
        opened.map(Some)
    }

    /// Namespaces kept open now besides the primary one.
    pub fn count(&self) -> usize {
        self.watched.len()
    }
}

fn open_inside(inode: u64) -> Result<Watched> {
    Ok(Watched {
        inode,
        diag: SockDiag::new()?,
        links: LinkCollector::new()?,
        snmp: File::open("/proc/thread-self/net/snmp")?,
        netstat: File::open("/proc/thread-self/net/netstat").ok(),
        // /proc/sys/net answers for the namespace of whoever opened it.
        conntrack_count: File::open("/proc/sys/net/netfilter/nf_conntrack_count").ok(),
        container: (None, None),
    })
}

/// One namespace's sockets, interfaces, snmp/netstat counters and when
/// the interfaces and counters were read.
type Rows = (SocketTable, Vec<InterfaceSample>, Counters, f64);

impl Watched {
    /// The links and counters first, then the sockets: the counters' rates
    /// are over the time between two reads, which the dump (long with many
    /// sockets) would stretch by a varying amount.
    fn read(&mut self) -> Result<Rows> {
        // Timed as the watched namespace's own read (`LinkCollector::read`):
        // at the link dump's midpoint, so that a namespace's rates and its
        // host-side peers' are over the same span however long the dumps
        // take under load.
        let interfaces = self.links.collect()?;
        let read_mono = self.links.counters_mono;
        let mut counters = parse_pairs(&read_all(&self.snmp)?);
        if let Some(netstat) = &self.netstat {
            counters.extend(parse_pairs(&read_all(netstat)?));
        }
        let sockets = self.diag.dump()?.sockets;
        Ok((sockets, interfaces, counters.into(), read_mono))
    }
}

impl Watched {
    fn conntrack_count(&self) -> Option<u64> {
        let file = self.conntrack_count.as_ref()?;
        read_all(file).ok()?.trim().parse().ok()
    }
}

/// A whole /proc file from offset 0: pread, so the file opened once inside
/// the namespace is read again each tick.
fn read_all(file: &File) -> Result<String> {
    let mut out = Vec::with_capacity(8192);
    let mut buffer = [0u8; 8192];
    loop {
        let n = file.read_at(&mut buffer, out.len() as u64)?;
        if n == 0 || out.len() > 1 << 20 {
            break;
        }
        out.extend_from_slice(&buffer[..n]);
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn cached_container(cache: &mut (Option<u32>, Option<String>), pid: Option<u32>) -> Option<String> {
    if cache.0 != pid {
        *cache = (pid, pid.and_then(container_of));
    }
    cache.1.clone()
}

fn retrans(counters: &Counters) -> u64 {
    counters.get(snmp::TCP_RETRANS_SEGS).copied().unwrap_or(0)
}

fn drops(counters: &Counters) -> u64 {
    DROP_COUNTERS
        .iter()
        .filter_map(|name| counters.get(name))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_links_parse() {
        assert_eq!(parse_link(Path::new("net:[4026531840]")), Some(4026531840));
        assert_eq!(parse_link(Path::new("mnt:[4026531840]")), None);
        assert_eq!(parse_link(Path::new("net:[x]")), None);
    }

    #[test]
    fn discovery_finds_our_own_namespace_with_our_pid_or_a_lower_one() {
        let own = parse_link(&std::fs::read_link("/proc/self/ns/net").unwrap()).unwrap();
        let found = discover();
        let slot = &found[&own];
        assert!(
            slot.pid.is_some_and(|p| p <= std::process::id()),
            "{slot:?}"
        );
    }

    #[test]
    fn drops_sum_the_listed_counters() {
        let counters: Counters = [
            (snmp::IP_IN_DISCARDS.to_string(), 2),
            (snmp::TCP_EXT_LISTEN_DROPS.to_string(), 3),
            (snmp::TCP_RETRANS_SEGS.to_string(), 7),
        ]
        .into_iter()
        .collect();
        assert_eq!(drops(&counters), 5);
        assert_eq!(retrans(&counters), 7);
    }
}
