//! A container's name from the files its runtime keeps, without a daemon:
//! Podman's containers.json, Docker's config.v2.json, the OCI bundle's
//! config.json that containerd and CRI-O write (with the Kubernetes
//! annotations), and conmon's command line. Every file is read whole up to
//! a size limit; a larger one is not a state file and names nothing.
//!
//! Some of these files sit where other users write (a rootless podman
//! store in the owner's home), so none is opened in a way that could wait:
//! no final symlink followed, O_NONBLOCK, regular files only. A FUSE mount
//! there can still make any open or read wait for good: those are read on
//! a thread of their own (`homes`). Every name read is bounded to
//! `text::MAX_NAME` bytes without control characters.

use super::Names;
use crate::text;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Podman's list of every container: about 1 kB each.
pub const MAX_STORE: u64 = 16 * 1024 * 1024;
/// One container's config.v2.json or OCI config.json: tens of kB.
pub const MAX_CONFIG: u64 = 4 * 1024 * 1024;
/// Where a podman store lists its containers.
const PODMAN_STORE: &str = "overlay-containers/containers.json";
/// conmon's command line: a few hundred bytes.
const MAX_CMDLINE: u64 = 64 * 1024;
/// How many parents to climb looking for conmon.
const MAX_DEPTH: usize = 32;
/// containerd's task namespaces ("k8s.io", "moby", "default") looked into.
const MAX_NAMESPACES: usize = 64;

/// The file's bytes, None when unreadable, not a regular file or over
/// `limit`.
pub fn read_capped(path: &Path, limit: u64) -> Option<Vec<u8>> {
    read_regular(path, limit, None)
}

/// [`read_capped`] of a file that must also belong to `owner`: a store in
/// a user's home is that user's, never a file of root's or of another
/// user's that a symlinked directory leads to.
pub fn read_owned(path: &Path, limit: u64, owner: u32) -> Option<Vec<u8>> {
    read_regular(path, limit, Some(owner))
}

fn read_regular(path: &Path, limit: u64, owner: Option<u32>) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer
    // forever; O_NOFOLLOW: a symlink in the last place is not followed.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    // Only a regular file's read cannot wait (a FIFO, socket or device
    // could); /proc's files are regular, with a size of 0.
    let meta = file.metadata().ok()?;
    if !meta.file_type().is_file() || meta.len() > limit || owner.is_some_and(|o| meta.uid() != o) {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

/// Kubernetes' names in a label or annotation map: CRI-O's and dockershim's
/// io.kubernetes.* keys, containerd's io.kubernetes.cri.* keys.
fn kubernetes(map: Option<&Value>, names: &mut Names) {
    let Some(map) = map.and_then(Value::as_object) else {
        return;
    };
    let first = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| map.get(*k)?.as_str())
            .filter(|v| !v.is_empty())
            .map(text::bounded_name)
    };
    names.pod = first(&["io.kubernetes.pod.name", "io.kubernetes.cri.sandbox-name"]);
    names.k8s_namespace = first(&[
        "io.kubernetes.pod.namespace",
        "io.kubernetes.cri.sandbox-namespace",
    ]);
    // A pod's sandbox ("pause") container has no container name.
    if let Some(name) = first(&[
        "io.kubernetes.container.name",
        "io.kubernetes.cri.container-name",
    ]) {
        names.name = Some(name);
    }
}

/// Docker's inspect answer and its config.v2.json share these keys:
/// `Name` ("/web") and `Config.Labels`.
pub fn parse_inspect(bytes: &[u8]) -> Result<Names, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let mut names = Names {
        name: value
            .get("Name")
            .and_then(Value::as_str)
            .map(|n| text::bounded_name(n.trim_start_matches('/')))
            .filter(|n| !n.is_empty()),
        ..Names::default()
    };
    kubernetes(value.pointer("/Config/Labels"), &mut names);
    Ok(names)
}

/// An OCI runtime bundle's config.json: only its annotations name anything.
pub fn parse_oci(bytes: &[u8]) -> Result<Names, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let mut names = Names::default();
    kubernetes(value.get("annotations"), &mut names);
    Ok(names)
}

#[derive(Deserialize)]
struct StoreEntry {
    id: String,
    #[serde(default)]
    names: Vec<String>,
}

/// The names of `id` in containers/storage's containers.json.
pub fn parse_store(bytes: &[u8], id: &str) -> Result<Option<Names>, String> {
    let entries: Vec<StoreEntry> = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    Ok(entries.into_iter().find(|e| e.id == id).map(|e| Names {
        name: e.names.first().map(|n| text::bounded_name(n)),
        ..Names::default()
    }))
}

/// The system's podman store, containers/storage's containers.json.
pub fn podman(root: &Path, id: &str) -> Option<Names> {
    let path = root.join("var/lib/containers/storage").join(PODMAN_STORE);
    parse_store(&read_capped(&path, MAX_STORE)?, id).ok()?
}

/// The rootless podman store in `home`, which must be `uid`'s file. Read
/// where that user writes: only off the sampler thread (see `homes`).
pub fn rootless_podman(root: &Path, uid: u32, home: &Path, id: &str) -> Option<Names> {
    let path = under(root, home)
        .join(".local/share/containers/storage")
        .join(PODMAN_STORE);
    parse_store(&read_owned(&path, MAX_STORE, uid)?, id).ok()?
}

/// Docker's /var/lib/docker/containers/ID/config.v2.json.
pub fn docker(root: &Path, id: &str) -> Option<Names> {
    let path = root.join(format!("var/lib/docker/containers/{id}/config.v2.json"));
    parse_inspect(&read_capped(&path, MAX_CONFIG)?).ok()
}

/// The OCI bundle of a container of containerd (every namespace's task
/// directory) or CRI-O (containers/storage's userdata).
pub fn bundle(root: &Path, id: &str) -> Option<Names> {
    let tasks = root.join("run/containerd/io.containerd.runtime.v2.task");
    let containerd = std::fs::read_dir(tasks)
        .into_iter()
        .flatten()
        .flatten()
        .take(MAX_NAMESPACES)
        .map(|ns| ns.path().join(id).join("config.json"));
    let crio = ["run/containers/storage", "var/lib/containers/storage"]
        .into_iter()
        .map(|store| {
            root.join(store)
                .join(format!("overlay-containers/{id}/userdata/config.json"))
        });
    containerd
        .chain(crio)
        .find_map(|path| parse_oci(&read_capped(&path, MAX_CONFIG)?).ok())
        .filter(Names::any)
}

/// conmon's `-c ID -n NAME` (or --cid/--name), when its id is `id`.
pub fn parse_conmon(cmdline: &[u8], id: &str) -> Option<Names> {
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    let value = |flags: [&[u8]; 2]| {
        args.windows(2)
            .find(|w| flags.contains(&w[0]))
            .map(|w| w[1])
    };
    (value([b"-c", b"--cid"])? == id.as_bytes()).then(|| Names {
        name: value([b"-n", b"--name"]).map(text::bounded_name_bytes),
        ..Names::default()
    })
}

/// Podman's container monitor is the parent of the container's first
/// process: climb from `pid` to a process named conmon and read its
/// command line.
pub fn conmon(root: &Path, pid: u32, id: &str) -> Option<Names> {
    let proc = root.join("proc");
    let mut pid = pid;
    for _ in 0..MAX_DEPTH {
        let stat = read_capped(&proc.join(format!("{pid}/stat")), MAX_CMDLINE)?;
        let stat = String::from_utf8_lossy(&stat);
        // "PID (comm) S PPID ...": comm may hold spaces and parentheses.
        let (comm, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
        if comm == "conmon" {
            let cmdline = read_capped(&proc.join(format!("{pid}/cmdline")), MAX_CMDLINE)?;
            return parse_conmon(&cmdline, id);
        }
        pid = rest.split_whitespace().nth(1)?.parse().ok()?;
        if pid <= 1 {
            return None;
        }
    }
    None
}

/// An absolute path of the host seen under `root` (tests use a directory).
fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";

    fn name(n: &str) -> Option<String> {
        Some(n.to_string())
    }

    #[test]
    fn podman_names_come_from_its_container_store() {
        // As podman 4.3 writes it (fields trimmed to those it always has).
        let store = format!(
            r#"[{{"id":"{}","names":["other"],"image":"a","layer":"b","metadata":"{{}}","created":"2026-11-26T07:10:00Z"}},
{{"id":"{ID}","names":["web"],"image":"c4ab05ab","layer":"d1e2","metadata":"{{\"image-name\":\"localhost/busybox:1\",\"name\":\"web\"}}","created":"2026-11-26T07:10:01Z","flags":{{"MountLabel":""}}}}]"#,
            "9".repeat(64)
        );
        let names = parse_store(store.as_bytes(), ID).unwrap().unwrap();
        assert_eq!(names.name, name("web"));
        assert_eq!(
            parse_store(store.as_bytes(), &"0".repeat(64)).unwrap(),
            None
        );
        assert!(parse_store(b"{\"not\":\"a list\"}", ID).is_err());
    }

    #[test]
    fn docker_names_come_from_config_v2() {
        let config = format!(
            r#"{{"StreamConfig":{{}},"State":{{"Running":true,"Pid":4242}},"ID":"{ID}","Created":"2026-11-26T07:10:00Z","Path":"nginx","Config":{{"Hostname":"3f2a1b9c8d7e","Labels":{{"maintainer":"x"}}}},"Name":"/web","Driver":"overlay2"}}"#
        );
        let names = parse_inspect(config.as_bytes()).unwrap();
        assert_eq!(names.name, name("web"));
        assert_eq!((names.pod, names.k8s_namespace), (None, None));
    }

    #[test]
    fn kubernetes_names_come_from_the_bundle_annotations() {
        // CRI-O's keys.
        let crio = r#"{"ociVersion":"1.0.2","process":{"args":["nginx"]},"annotations":{"io.kubernetes.container.name":"web","io.kubernetes.pod.name":"shop-7d9f","io.kubernetes.pod.namespace":"prod","io.kubernetes.cri-o.ContainerType":"container"}}"#;
        let names = parse_oci(crio.as_bytes()).unwrap();
        assert_eq!(
            (names.name, names.pod, names.k8s_namespace),
            (name("web"), name("shop-7d9f"), name("prod"))
        );
        // containerd's keys, on the pod's sandbox: a pod but no container name.
        let sandbox = r#"{"ociVersion":"1.1.0","annotations":{"io.kubernetes.cri.container-type":"sandbox","io.kubernetes.cri.sandbox-id":"ab","io.kubernetes.cri.sandbox-name":"shop-7d9f","io.kubernetes.cri.sandbox-namespace":"prod"}}"#;
        let names = parse_oci(sandbox.as_bytes()).unwrap();
        assert_eq!(
            (names.name, names.pod, names.k8s_namespace),
            (None, name("shop-7d9f"), name("prod"))
        );
        // A plain bundle (docker's moby namespace) names nothing.
        assert!(!parse_oci(br#"{"ociVersion":"1.0.2"}"#).unwrap().any());
        assert!(parse_oci(b"[[[").is_err());
    }

    #[test]
    fn conmon_names_its_container_by_flags() {
        let cmdline = format!(
            "/usr/bin/conmon\0--api-version\0001\0-c\0{ID}\0-u\0{ID}\0-r\0/usr/bin/runc\0-b\0/var/lib/containers/storage/overlay-containers/{ID}/userdata\0-p\0/run/pid\0-n\0web\0--exit-dir\0/run/libpod/exits\0"
        );
        assert_eq!(
            parse_conmon(cmdline.as_bytes(), ID).unwrap().name,
            name("web")
        );
        // Another container's monitor names nothing.
        assert_eq!(parse_conmon(cmdline.as_bytes(), &"0".repeat(64)), None);
    }

    #[test]
    fn an_oversized_file_is_not_read() {
        let dir = std::env::temp_dir().join(format!("netlens-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.json");
        std::fs::write(&path, vec![b' '; 2048]).unwrap();
        assert_eq!(read_capped(&path, 2048).map(|b| b.len()), Some(2048));
        assert_eq!(read_capped(&path, 2047), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
