//! Which container a process runs in, by name: the runtime and id from
//! /proc/PID/cgroup (docker, containerd/CRI, CRI-O, podman, systemd-nspawn
//! and LXC layouts), then the name from the runtime's own files
//! (`files`), else from conmon's command line, else from Docker's or
//! Podman's API on its unix socket (`api`, on a worker thread). What a
//! user controls (their rootless podman store and API socket) is read on
//! threads of its own, waited for briefly (`homes`).
//!
//! Names are cached by container id; an id still unnamed is asked again at
//! most every `RETRY`, so a host without any readable source costs one
//! failed look-up per container every few seconds, never a wait.

pub mod api;
pub mod cgroups;
pub mod files;
pub mod homes;

pub use crate::model::processes::Container;
use crate::model::processes::short_id;
use crate::text;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// An unnamed container is looked up again at most this often.
pub const RETRY: Duration = Duration::from_secs(5);
/// A cache holding more ids than this is emptied (ids of gone containers
/// pile up in the shared resolver, which is never pruned).
const MAX_CACHED: usize = 4096;
/// /proc/PID/cgroup is a few lines; more than this is not a cgroup file.
const MAX_CGROUP_FILE: u64 = 64 * 1024;
/// Rootful podman's API socket.
const PODMAN_SOCKET: &str = "run/podman/podman.sock";

/// What a runtime says of a container beyond its id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    pub name: Option<String>,
    pub pod: Option<String>,
    pub k8s_namespace: Option<String>,
}

impl Names {
    pub fn any(&self) -> bool {
        self.name.is_some() || self.pod.is_some()
    }
}

/// A container found in a cgroup path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// "docker", "containerd", "crio", "podman", "k8s", "nspawn", "lxc".
    pub runtime: &'static str,
    /// The 64-hex id; the machine's name for nspawn and LXC.
    pub id: String,
    /// The kubepods pod directory ("pod<uid>") of a cgroupfs layout.
    pub pod_dir: Option<String>,
}

impl Found {
    /// The cgroup column's label: "docker:3f2a1b9c8d7e", "nspawn:web",
    /// "k8s:pod<uid>/3f2a1b9c8d7e".
    pub fn label(&self) -> String {
        match (&self.pod_dir, self.runtime) {
            (Some(pod), _) => format!("k8s:{pod}/{}", short_id(&self.id)),
            (None, "nspawn" | "lxc") => format!("{}:{}", self.runtime, self.id),
            (None, runtime) => format!("{runtime}:{}", short_id(&self.id)),
        }
    }

    fn container(&self) -> Container {
        Container {
            runtime: self.runtime.to_string(),
            id: self.id.clone(),
            // nspawn and LXC name their machines in the cgroup path itself.
            name: matches!(self.runtime, "nspawn" | "lxc").then(|| self.id.clone()),
            ..Container::default()
        }
    }
}

/// The cgroup path a process lives in, from /proc/PID/cgroup: the unified
/// (v2, "0::") line, else the v1 line of the pids, memory or cpu
/// controller. None at the root.
pub fn cgroup_path(file: &str) -> Option<&str> {
    // A hybrid host lists "0::/" beside the v1 controllers that hold it.
    let unified = file.lines().find_map(|l| l.strip_prefix("0::"));
    let v1 = file.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| matches!(c, "pids" | "memory" | "cpu"))
            .then_some(path)
    });
    [unified, v1]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|p| *p != "/")
}

/// The container of a cgroup path's components, innermost first.
pub fn find(parts: &[&str]) -> Option<Found> {
    let found = |runtime, id: &str, pod_dir: Option<&str>| Found {
        runtime,
        id: id.to_string(),
        pod_dir: pod_dir.map(str::to_string),
    };
    for (at, part) in parts.iter().enumerate().rev() {
        let unit = part.trim_end_matches(".scope");
        for (prefix, runtime) in [
            ("docker-", "docker"),
            ("cri-containerd-", "containerd"),
            ("crio-", "crio"),
            ("libpod-", "podman"),
        ] {
            if let Some(id) = unit.strip_prefix(prefix).filter(|id| is_id(id)) {
                return Some(found(runtime, id, None));
            }
        }
        if let Some(name) = part
            .strip_prefix("systemd-nspawn@")
            .and_then(|p| p.strip_suffix(".service"))
        {
            // systemd's unit-name escaping: "\x2d" stands for "-".
            let name = text::bounded_name(&name.replace("\\x2d", "-"));
            return Some(found("nspawn", &name, None));
        }
        if let Some(name) = part.strip_prefix("lxc.payload.") {
            return Some(found("lxc", &text::bounded_name(name), None));
        }
        // cgroupfs drivers: /docker/<id>, /lxc/<name>, /kubepods/…/pod<uid>/<id>,
        // podman's /libpod_parent/libpod-<id> (matched above).
        let parent = at.checked_sub(1).map(|p| parts[p]);
        if is_id(part) {
            match parent {
                Some("docker") => return Some(found("docker", part, None)),
                Some(pod) if pod.starts_with("pod") => return Some(found("k8s", part, Some(pod))),
                _ => {}
            }
        }
        if parent == Some("lxc") {
            return Some(found("lxc", &text::bounded_name(part), None));
        }
    }
    None
}

/// The container named in a /proc/PID/cgroup file, unresolved.
pub fn cgroup_container(file: &str) -> Option<Found> {
    path_container(cgroup_path(file)?)
}

/// The container a cgroup path ("/system.slice/docker-<id>.scope") names,
/// unresolved.
pub fn path_container(path: &str) -> Option<Found> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    find(&parts)
}

/// A container id: 64 hex digits.
fn is_id(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[derive(Default)]
struct Entry {
    names: Option<Names>,
    asked: Option<Instant>,
    /// Waiting for the API worker's or a home look-up's answer.
    in_flight: bool,
}

/// Container names by id, from the files under `root` ("/" on a host) and
/// the runtimes' API sockets.
pub struct Resolver {
    root: PathBuf,
    cache: HashMap<String, Entry>,
    worker: Option<api::Worker>,
    /// Look-ups in what users control, off the sampler thread.
    lookups: homes::Homes,
    /// uid -> home directory, from /etc/passwd (rootless podman's store).
    homes: Option<HashMap<u32, PathBuf>>,
}

impl Default for Resolver {
    fn default() -> Resolver {
        Resolver::new("/")
    }
}

impl Resolver {
    pub fn new(root: impl Into<PathBuf>) -> Resolver {
        Resolver {
            root: root.into(),
            cache: HashMap::new(),
            worker: None,
            lookups: homes::Homes::default(),
            homes: None,
        }
    }

    /// The container process `pid` runs in, named where a source says;
    /// None outside containers or when /proc/PID/cgroup is unreadable.
    pub fn container_of_pid(&mut self, pid: u32) -> Option<Container> {
        let proc = self.root.join(format!("proc/{pid}"));
        let cgroup = files::read_capped(&proc.join("cgroup"), MAX_CGROUP_FILE)?;
        let found = cgroup_container(&String::from_utf8_lossy(&cgroup))?;
        let status = files::read_capped(&proc.join("status"), MAX_CGROUP_FILE).unwrap_or_default();
        let uid = real_uid(&String::from_utf8_lossy(&status));
        Some(self.resolve(&found, pid, uid))
    }

    /// `found` named from the cache, the system's files, conmon, the
    /// owner's rootless store (waited for at most `homes::WAIT`), or
    /// (later) the API.
    pub fn resolve(&mut self, found: &Found, pid: u32, uid: Option<u32>) -> Container {
        let mut container = found.container();
        if container.name.is_some() {
            return container;
        }
        self.take_answers();
        if self.cache.len() > MAX_CACHED {
            self.cache.clear();
        }
        let entry = self.cache.entry(found.id.clone()).or_default();
        if let Some(names) = &entry.names {
            apply(&mut container, names);
            return container;
        }
        if entry.in_flight || entry.asked.is_some_and(|t| t.elapsed() < RETRY) {
            return container;
        }
        entry.asked = Some(Instant::now());
        if let Some(names) = self.read_files(found, pid) {
            apply(&mut container, &names);
            self.cache.entry(found.id.clone()).or_default().names = Some(names);
            return container;
        }
        match (found.runtime, uid) {
            ("podman", Some(uid)) => self.ask_home(found, uid),
            _ => self.ask_api(found),
        }
        let entry = self.cache.get(&found.id);
        if let Some(names) = entry.and_then(|e| e.names.as_ref()) {
            apply(&mut container, names);
        }
        container
    }

    /// Since when a look-up has outlasted its wait and is still
    /// outstanding (the oldest), if one has.
    pub fn late_since(&self) -> Option<Instant> {
        self.lookups.late_since()
    }

    /// Forgets the ids not in `alive` (containers gone).
    pub fn retain(&mut self, alive: &HashSet<String>) {
        self.cache.retain(|id, _| alive.contains(id));
    }

    /// The names in the files of root's runtimes and in /proc.
    fn read_files(&self, found: &Found, pid: u32) -> Option<Names> {
        let (root, id) = (self.root.as_path(), found.id.as_str());
        let names = match found.runtime {
            "podman" => files::podman(root, id).or_else(|| files::conmon(root, pid, id)),
            "docker" => files::docker(root, id),
            "containerd" | "crio" => files::bundle(root, id),
            // A kubepods cgroup of an unknown runtime: any of them.
            _ => files::bundle(root, id).or_else(|| files::docker(root, id)),
        };
        names.filter(Names::any)
    }

    /// A podman container of `uid`, named by neither the system's store nor
    /// conmon: its owner's rootless store, else podman's API (the system's
    /// socket, then the user's), looked up on a thread of its own as the
    /// user controls both; waited for at most `homes::WAIT`.
    fn ask_home(&mut self, found: &Found, uid: u32) {
        let (root, id, home) = (self.root.clone(), found.id.clone(), self.home(uid));
        let mut sockets = vec![root.join(PODMAN_SOCKET)];
        if uid != 0 {
            sockets.push(root.join(format!("run/user/{uid}/podman/podman.sock")));
        }
        let lookup = move || {
            home.and_then(|home| files::rootless_podman(&root, uid, &home, &id))
                .filter(Names::any)
                .or_else(|| api::ask_sockets(&sockets, &id))
        };
        if !self.lookups.ask(uid, &found.id, lookup) {
            return;
        }
        if let Some(entry) = self.cache.get_mut(&found.id) {
            entry.in_flight = true;
        }
        let answers = self.lookups.wait_for(uid, &found.id);
        self.store_answers(answers);
    }

    /// Queues an API look-up when the runtime's socket exists (all of them
    /// root's).
    fn ask_api(&mut self, found: &Found) {
        let docker = ["var/run/docker.sock", "run/docker.sock"];
        let mut sockets: Vec<PathBuf> = match found.runtime {
            "docker" | "k8s" => docker.iter().map(|s| self.root.join(s)).collect(),
            "podman" => vec![self.root.join(PODMAN_SOCKET)],
            _ => Vec::new(),
        };
        sockets.retain(|s| s.exists());
        if sockets.is_empty() {
            return;
        }
        if self.worker.is_none() {
            self.worker = api::Worker::start().ok();
        }
        let asked = self
            .worker
            .as_ref()
            .is_some_and(|w| w.ask(&found.id, sockets));
        if let Some(entry) = self.cache.get_mut(&found.id) {
            entry.in_flight = asked;
        }
    }

    /// The API worker's and the home look-ups' answers so far.
    fn take_answers(&mut self) {
        let mut answers = self.lookups.answers();
        if let Some(worker) = &self.worker {
            answers.extend(worker.answers());
        }
        self.store_answers(answers);
    }

    fn store_answers(&mut self, answers: Vec<homes::Answer>) {
        for (id, names) in answers {
            let entry = self.cache.entry(id).or_default();
            entry.in_flight = false;
            entry.names = names.filter(Names::any);
        }
    }

    fn home(&mut self, uid: u32) -> Option<PathBuf> {
        let root = &self.root;
        self.homes
            .get_or_insert_with(|| {
                let text = files::read_capped(&root.join("etc/passwd"), files::MAX_CONFIG);
                parse_homes(&String::from_utf8_lossy(&text.unwrap_or_default()))
            })
            .get(&uid)
            .cloned()
    }
}

fn apply(container: &mut Container, names: &Names) {
    container.name.clone_from(&names.name);
    container.pod.clone_from(&names.pod);
    container.k8s_namespace.clone_from(&names.k8s_namespace);
}

/// The real uid: the first number of status's "Uid:" line.
pub fn real_uid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// uid -> home from /etc/passwd ("name:x:uid:gid:gecos:home:shell").
fn parse_homes(text: &str) -> HashMap<u32, PathBuf> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            Some((fields.get(2)?.parse().ok()?, PathBuf::from(fields.get(5)?)))
        })
        .collect()
}

/// The container that process `pid` runs in, named where its runtime
/// says (see `Resolver`); for callers without a resolver of their own,
/// such as labelling a network namespace by the container owning it.
/// Never waits on a daemon: an API answer shows up on a later call.
pub fn container_of_pid(pid: u32) -> Option<Container> {
    static SHARED: OnceLock<Mutex<Resolver>> = OnceLock::new();
    SHARED
        .get_or_init(|| Mutex::new(Resolver::default()))
        .lock()
        .ok()?
        .container_of_pid(pid)
}

#[cfg(test)]
mod tests;
