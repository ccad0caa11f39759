//! Who the socket owners are: user and cgroup of each process holding a
//! socket, from /proc/PID/status and /proc/PID/cgroup, named as `ps -o
//! user` and a container runtime would name them. Read once per process
//! while it keeps holding sockets (a pid that drops out is read again when
//! it comes back, so a reused pid is not mistaken for the old process).

use super::containers::cgroups::CgroupPaths;
use super::containers::{self, Found, Resolver, real_uid};
use crate::model::closed::ClosedSample;
use crate::model::processes::{Container, ProcessInfo};
use crate::model::socket_table::SocketTable;
use crate::text;
use std::collections::{HashMap, HashSet};

/// /proc/PID/cgroup is a few lines; more than this is not a cgroup file.
const MAX_CGROUP_FILE: usize = 64 * 1024;

#[derive(Default)]
pub struct ProcessTable {
    known: HashMap<u32, Known>,
    /// uid -> name, from /etc/passwd (read once).
    users: Option<HashMap<u32, String>>,
    /// Container names by id.
    containers: Resolver,
    /// Cgroup v2 ids to paths, for the containers of connections whose
    /// process is gone.
    cgroups: CgroupPaths,
    /// The ids of the containers `cgroup_containers` found last: their
    /// names stay cached with the processes' own.
    cgroup_found: HashSet<String>,
}

struct Known {
    info: ProcessInfo,
    /// The container its cgroup names, to name it once the runtime says.
    found: Option<Found>,
}

impl ProcessTable {
    /// The processes holding `sockets`, by pid.
    pub fn collect(&mut self, sockets: &SocketTable) -> Vec<ProcessInfo> {
        self.collect_owners(owners(sockets, &ClosedSample::default()))
    }

    /// The processes `owners` lists (pid and command), by pid.
    pub fn collect_owners(&mut self, owners: Vec<(u32, String)>) -> Vec<ProcessInfo> {
        let pids: HashSet<u32> = owners.iter().map(|(pid, _)| *pid).collect();
        self.known.retain(|pid, _| pids.contains(pid));
        let users = self.users.get_or_insert_with(read_passwd);
        for (pid, name) in owners {
            self.known
                .entry(pid)
                .or_insert_with(|| read_process(pid, &name, users));
        }
        // Named on first sight when a state file says; else asked again
        // each sample (an API answer on its way, a file not written yet),
        // the resolver limiting how often.
        for known in self.known.values_mut() {
            let unnamed = known.info.container.as_ref().is_none_or(|c| !c.named());
            if let (Some(found), true) = (&known.found, unnamed) {
                let uid = Some(known.info.uid);
                known.info.container = Some(self.containers.resolve(found, known.info.pid, uid));
            }
        }
        let mut ids: HashSet<String> = self
            .known
            .values()
            .filter_map(|k| Some(k.found.as_ref()?.id.clone()))
            .collect();
        ids.extend(self.cgroup_found.iter().cloned());
        self.containers.retain(&ids);
        let mut list: Vec<ProcessInfo> = self.known.values().map(|k| k.info.clone()).collect();
        list.sort_by_key(|p| p.pid);
        list
    }

    /// The containers of the cgroups `ids` (v2 ids) that are in one,
    /// named as the processes' are; the cgroup tree is walked for ids not
    /// known yet (`CgroupPaths`).
    pub fn cgroup_containers(&mut self, ids: &[u64]) -> HashMap<u64, Container> {
        self.cgroup_found.clear();
        let mut containers = HashMap::new();
        for &id in ids {
            let Some(found) = self.cgroups.path(id).and_then(containers::path_container) else {
                continue;
            };
            // No process to read a uid or conmon from: the files and the
            // API name it.
            containers.insert(id, self.containers.resolve(&found, 0, None));
            self.cgroup_found.insert(found.id);
        }
        containers
    }

    /// Since when a container look-up has been outstanding past its wait
    /// (a user's store that never answers), if one has.
    pub fn containers_late_since(&self) -> Option<std::time::Instant> {
        self.containers.late_since()
    }
}

/// Each (pid, command) holding one of `sockets`, once, and those still
/// running that owned the `closed` connections (a short connection's
/// owner may hold no socket at the dump).
pub fn owners(sockets: &SocketTable, closed: &ClosedSample) -> Vec<(u32, String)> {
    let mut owners: HashSet<(u32, &str)> = sockets
        .iter()
        .flat_map(|s| s.users.iter().map(|u| (u.pid, u.process.as_str())))
        .collect();
    let holding: HashSet<u32> = owners.iter().map(|(pid, _)| *pid).collect();
    let mut checked = HashSet::new();
    let running = |pid: u32| std::path::Path::new(&format!("/proc/{pid}")).exists();
    let folded = (closed.overflow_bytes.iter())
        .chain(&closed.unowned_bytes)
        .map(|o| &o.user);
    for user in closed
        .conns
        .iter()
        .filter_map(|c| c.users.first())
        .chain(folded)
    {
        if !holding.contains(&user.pid) && checked.insert(user.pid) && running(user.pid) {
            owners.insert((user.pid, user.process.as_str()));
        }
    }
    owners
        .into_iter()
        .map(|(pid, name)| (pid, name.to_string()))
        .collect()
}

fn read_process(pid: u32, name: &str, users: &HashMap<u32, String>) -> Known {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let uid = real_uid(&status).unwrap_or(0);
    let file = read_capped(&format!("/proc/{pid}/cgroup"));
    let info = ProcessInfo {
        pid,
        command: name.to_string(),
        uid,
        user: users.get(&uid).cloned().unwrap_or_else(|| uid.to_string()),
        cgroup: file.as_deref().and_then(cgroup_name),
        container: None,
    };
    Known {
        info,
        found: file.as_deref().and_then(containers::cgroup_container),
    }
}

fn read_capped(path: &str) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_CGROUP_FILE as u64)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// uid -> user name from /etc/passwd ("name:x:uid:...").
fn read_passwd() -> HashMap<u32, String> {
    parse_passwd(&std::fs::read_to_string("/etc/passwd").unwrap_or_default())
}

fn parse_passwd(text: &str) -> HashMap<u32, String> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let uid = fields.nth(1)?.parse().ok()?;
            Some((uid, name.to_string()))
        })
        .collect()
}

/// The cgroup v2 ids the eBPF program recorded for the `closed`
/// connections' processes, once each.
pub fn owner_cgroups(closed: &ClosedSample) -> Vec<u64> {
    let mut ids: Vec<u64> = closed.conns.iter().filter_map(|c| c.cgroup).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The container or cgroup a process runs in, from /proc/PID/cgroup
/// (containers::cgroup_path). A container runtime's id is shortened to 12
/// hex digits as `docker ps` prints it: "docker:3f2a1b9c8d7e",
/// "containerd:…", "crio:…", "podman:…", "k8s:pod<uid>/…"; systemd-nspawn
/// and LXC give the machine's name ("nspawn:web", "lxc:web"); otherwise
/// the innermost systemd unit ("nginx.service", "session-3.scope"). None
/// at the root.
pub fn cgroup_name(file: &str) -> Option<String> {
    let parts: Vec<&str> = containers::cgroup_path(file)?
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    // Cgroup names are chosen by whoever may create one (a delegated user's
    // manager too): bounded, without control characters.
    if let Some(found) = containers::find(&parts) {
        return Some(text::bounded_name(&found.label()));
    }
    parts
        .iter()
        .rev()
        .find(|p| p.ends_with(".service") || p.ends_with(".scope"))
        .map(|p| text::bounded_name(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";

    #[test]
    fn names_the_container_of_each_runtime_layout() {
        let cases = [
            // Docker, systemd cgroup driver (cgroup v2).
            (
                format!("0::/system.slice/docker-{ID}.scope\n"),
                "docker:3f2a1b9c8d7e",
            ),
            // Docker, cgroupfs driver (cgroup v1).
            (
                format!("12:pids:/docker/{ID}\n11:memory:/docker/{ID}\n0::/\n"),
                "docker:3f2a1b9c8d7e",
            ),
            // Kubernetes with containerd, systemd driver.
            (
                format!(
                    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0d5c1a2b_7e3f.slice/cri-containerd-{ID}.scope\n"
                ),
                "containerd:3f2a1b9c8d7e",
            ),
            // Kubernetes, cgroupfs driver.
            (
                format!("0::/kubepods/burstable/pod0d5c1a2b-7e3f/{ID}\n"),
                "k8s:pod0d5c1a2b-7e3f/3f2a1b9c8d7e",
            ),
            // CRI-O.
            (
                format!("0::/kubepods.slice/kubepods-pod1.slice/crio-{ID}.scope\n"),
                "crio:3f2a1b9c8d7e",
            ),
            // Podman (rootful, and rootless under the user's manager).
            (
                format!("0::/machine.slice/libpod-{ID}.scope/container\n"),
                "podman:3f2a1b9c8d7e",
            ),
            (
                format!(
                    "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{ID}.scope\n"
                ),
                "podman:3f2a1b9c8d7e",
            ),
            // systemd-nspawn and LXC.
            (
                "0::/machine.slice/systemd-nspawn@web\\x2d1.service/payload\n".to_string(),
                "nspawn:web-1",
            ),
            ("0::/lxc.payload.web/init.scope\n".to_string(), "lxc:web"),
            ("4:pids:/lxc/web\n".to_string(), "lxc:web"),
            // A systemd host's services and sessions.
            (
                "0::/system.slice/nginx.service\n".to_string(),
                "nginx.service",
            ),
            (
                "0::/user.slice/user-1000.slice/session-3.scope\n".to_string(),
                "session-3.scope",
            ),
        ];
        for (file, want) in cases {
            assert_eq!(cgroup_name(&file).as_deref(), Some(want), "{file}");
        }
    }

    #[test]
    fn the_root_and_junk_name_nothing() {
        assert_eq!(cgroup_name("0::/\n"), None);
        assert_eq!(cgroup_name(""), None);
        assert_eq!(cgroup_name("garbage"), None);
        // An id that is not 64 hex digits is a plain directory.
        assert_eq!(cgroup_name("0::/docker/abc\n"), None);
    }

    #[test]
    fn users_come_from_passwd_and_the_real_uid_from_status() {
        let users = parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\nbad line\nwww-data:x:33:33::/var/www:/usr/sbin/nologin\n",
        );
        assert_eq!(users.get(&33).map(String::as_str), Some("www-data"));
        assert_eq!(users.len(), 2);
        assert_eq!(real_uid("Name:\tx\nUid:\t1000\t0\t0\t0\n"), Some(1000));
        assert_eq!(real_uid("Name:\tx\n"), None);
    }

    #[test]
    fn our_own_process_is_read_from_proc() {
        let me = std::process::id();
        let info = read_process(me, "test", &read_passwd()).info;
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        assert_eq!(info.uid, uid);
        assert_eq!(info.pid, me);
    }
}
