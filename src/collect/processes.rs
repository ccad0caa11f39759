//! Who the socket owners are: user and cgroup of each process holding a
//! socket, from /proc/PID/status and /proc/PID/cgroup, named as `ps -o
//! user` and a container runtime would name them. Read once per process
//! while it keeps holding sockets (a pid that drops out is read again when
//! it comes back, so a reused pid is not mistaken for the old process).

use crate::model::processes::ProcessInfo;
use crate::model::sockets::SocketSample;
use std::collections::{HashMap, HashSet};

/// /proc/PID/cgroup is a few lines; more than this is not a cgroup file.
const MAX_CGROUP_FILE: usize = 64 * 1024;

#[derive(Default)]
pub struct ProcessTable {
    known: HashMap<u32, ProcessInfo>,
    /// uid -> name, from /etc/passwd (read once).
    users: Option<HashMap<u32, String>>,
}

impl ProcessTable {
    /// The processes holding `sockets`, by pid.
    pub fn collect(&mut self, sockets: &[SocketSample]) -> Vec<ProcessInfo> {
        let owners: HashSet<(u32, &str)> = sockets
            .iter()
            .flat_map(|s| s.users.iter().map(|u| (u.pid, u.process.as_str())))
            .collect();
        let pids: HashSet<u32> = owners.iter().map(|(pid, _)| *pid).collect();
        self.known.retain(|pid, _| pids.contains(pid));
        let users = self.users.get_or_insert_with(read_passwd);
        for (pid, name) in owners {
            self.known
                .entry(pid)
                .or_insert_with(|| read_process(pid, name, users));
        }
        let mut list: Vec<ProcessInfo> = self.known.values().cloned().collect();
        list.sort_by_key(|p| p.pid);
        list
    }
}

fn read_process(pid: u32, name: &str, users: &HashMap<u32, String>) -> ProcessInfo {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let uid = real_uid(&status).unwrap_or(0);
    let cgroup = read_capped(&format!("/proc/{pid}/cgroup"))
        .as_deref()
        .and_then(cgroup_name);
    ProcessInfo {
        pid,
        command: name.to_string(),
        uid,
        user: users.get(&uid).cloned().unwrap_or_else(|| uid.to_string()),
        cgroup,
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

/// The real uid: the first number of status's "Uid:" line.
fn real_uid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
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

/// The container or cgroup a process runs in, from /proc/PID/cgroup: the
/// unified (v2, "0::") line, else the v1 line of the pids, memory or cpu
/// controller. A container runtime's id is shortened to 12 hex digits as
/// `docker ps` prints it: "docker:3f2a1b9c8d7e", "containerd:…",
/// "crio:…", "podman:…", "k8s:pod<uid>/…"; systemd-nspawn and LXC give the
/// machine's name ("nspawn:web", "lxc:web"); otherwise the innermost
/// systemd unit ("nginx.service", "session-3.scope"). None at the root.
pub fn cgroup_name(file: &str) -> Option<String> {
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
    let path = [unified, v1]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|p| *p != "/")?;
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if let Some(name) = container(&parts) {
        return Some(name);
    }
    parts
        .iter()
        .rev()
        .find(|p| p.ends_with(".service") || p.ends_with(".scope"))
        .map(|p| p.to_string())
}

/// A container runtime's name for the path's components, innermost first.
fn container(parts: &[&str]) -> Option<String> {
    for (at, part) in parts.iter().enumerate().rev() {
        let unit = part.trim_end_matches(".scope");
        for (prefix, runtime) in [
            ("docker-", "docker"),
            ("cri-containerd-", "containerd"),
            ("crio-", "crio"),
            ("libpod-", "podman"),
        ] {
            if let Some(id) = unit.strip_prefix(prefix).filter(|id| is_id(id)) {
                return Some(format!("{runtime}:{}", &id[..12]));
            }
        }
        if let Some(name) = part
            .strip_prefix("systemd-nspawn@")
            .and_then(|p| p.strip_suffix(".service"))
        {
            return Some(format!("nspawn:{}", unescape_unit(name)));
        }
        if let Some(name) = part.strip_prefix("lxc.payload.") {
            return Some(format!("lxc:{name}"));
        }
        // cgroupfs drivers: /docker/<id>, /lxc/<name>, /kubepods/…/pod<uid>/<id>.
        let parent = at.checked_sub(1).map(|p| parts[p]);
        if is_id(part) {
            match parent {
                Some("docker") => return Some(format!("docker:{}", &part[..12])),
                Some(pod) if pod.starts_with("pod") => {
                    return Some(format!("k8s:{pod}/{}", &part[..12]));
                }
                _ => {}
            }
        }
        if parent == Some("lxc") {
            return Some(format!("lxc:{part}"));
        }
    }
    None
}

/// A container id: 64 lowercase hex digits.
fn is_id(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// systemd's unit-name escaping: "\x2d" stands for "-".
fn unescape_unit(name: &str) -> String {
    name.replace("\\x2d", "-")
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
        let info = read_process(me, "test", &read_passwd());
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        assert_eq!(info.uid, uid);
        assert_eq!(info.pid, me);
    }
}
