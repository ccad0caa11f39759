//! Choosing and entering the network namespace to watch.

use anyhow::{Context, Result, bail};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The namespace a sampler watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The namespace netlens itself runs in, named as `ip netns identify`
    /// would (see `own_label`).
    Own { label: String },
    /// A namespace file: /run/netns/NAME, /proc/PID/ns/net or any bind mount.
    Path { label: String, path: PathBuf },
}

impl Target {
    /// From `--netns NAME|PATH` and `--pid PID`. A bare name is looked up
    /// where `ip netns` keeps them.
    pub fn from_args(netns: Option<&str>, pid: Option<u32>) -> Self {
        match (netns, pid) {
            (Some(text), _) if text.contains('/') => Target::Path {
                label: text.to_string(),
                path: PathBuf::from(text),
            },
            (Some(name), _) => Target::Path {
                label: name.to_string(),
                path: PathBuf::from("/run/netns").join(name),
            },
            (None, Some(pid)) => Target::Path {
                label: format!("pid {pid}"),
                path: PathBuf::from(format!("/proc/{pid}/ns/net")),
            },
            (None, None) => Target::Own { label: own_label() },
        }
    }

    /// What the header and the JSON call this namespace.
    pub fn label(&self) -> &str {
        match self {
            Target::Own { label } | Target::Path { label, .. } => label,
        }
    }

    /// Opens the namespace file; done before the sampler starts so a wrong
    /// name is a clear error, not a dead thread.
    pub fn open(&self) -> Result<Option<File>> {
        let Target::Path { label, path } = self else {
            return Ok(None);
        };
        let file = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                anyhow::anyhow!(
                    "network namespace '{label}' not found ({} does not exist)",
                    path.display()
                )
            }
            std::io::ErrorKind::PermissionDenied => anyhow::anyhow!(
                "no permission to open network namespace '{label}' ({}): run as root",
                path.display()
            ),
            _ => anyhow::anyhow!(
                "cannot open network namespace '{label}' ({}): {e}",
                path.display()
            ),
        })?;
        Ok(Some(file))
    }
}

/// The name of the namespace this process runs in: "host" when it is the
/// initial one (the one of PID 1), else the name `ip netns identify` gives
/// (a bind mount in /run/netns of the same inode), else "net:[INODE]" as
/// /proc/self/ns/net reads. Under `ip netns exec NAME netlens` that is NAME,
/// not "host". When PID 1's namespace cannot be read and no name matches,
/// it stays "host".
pub fn own_label() -> String {
    label_for(
        Path::new("/proc/self/ns/net"),
        Path::new("/proc/1/ns/net"),
        Path::new(RUN_NETNS),
    )
}

/// How another process (a tmux pane, started by a server that may live
/// elsewhere) names the namespace this one runs in for `--netns`: None in
/// the initial one (PID 1's, or when that cannot be read), else its name in
/// /run/netns, else /proc/PID/ns/net of this process (valid while it runs).
pub fn own_reference() -> Option<String> {
    let label = own_label();
    if label == "host" {
        return None;
    }
    let own = link_inode(Path::new("/proc/self/ns/net"));
    let named = Path::new(RUN_NETNS).join(&label);
    if !label.contains('/') && std::fs::metadata(&named).is_ok_and(|m| Some(m.ino()) == own) {
        return Some(label);
    }
    Some(format!("/proc/{}/ns/net", std::process::id()))
}

/// Where `ip netns add` bind-mounts the namespaces it names.
const RUN_NETNS: &str = "/run/netns";

fn label_for(own: &Path, initial: &Path, named_dir: &Path) -> String {
    let Some(own) = link_inode(own) else {
        return "host".into();
    };
    let initial = link_inode(initial);
    if initial == Some(own) {
        return "host".into();
    }
    let mut names: Vec<String> = std::fs::read_dir(named_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| std::fs::metadata(entry.path()).is_ok_and(|m| m.ino() == own))
        .map(|entry| crate::text::bounded_name_bytes(entry.file_name().as_encoded_bytes()))
        .collect();
    names.sort();
    names.into_iter().next().unwrap_or_else(|| match initial {
        Some(_) => format!("net:[{own}]"),
        // PID 1's namespace is not readable (no CAP_SYS_PTRACE, or not
        // root): nothing says this is not the initial one.
        None => "host".into(),
    })
}

/// The inode of a namespace link such as /proc/1/ns/net: read from the link
/// ("net:[4026531840]"), which is allowed where following it (stat) is not,
/// else from the file itself (a bind mount in /run/netns). Every namespace
/// lives on the one nsfs device, so the inode alone names it.
pub fn link_inode(path: &Path) -> Option<u64> {
    if let Ok(target) = std::fs::read_link(path) {
        let text = target.to_string_lossy();
        if let Some(number) = text.strip_prefix("net:[").and_then(|t| t.strip_suffix(']')) {
            return number.parse().ok();
        }
    }
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// Moves the calling thread into the namespace. Only this thread moves: the
/// sampler does this first, so every socket it opens afterwards lives there.
pub fn enter(file: &File, label: &str) -> Result<()> {
    // SAFETY: setns on a valid, open file descriptor; it changes only the
    // calling thread's namespace.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::EPERM) {
            bail!("cannot enter network namespace '{label}': needs CAP_SYS_ADMIN (run as root)");
        }
        if error.raw_os_error() == Some(libc::EINVAL) {
            bail!("'{label}' is not a network namespace file");
        }
        return Err(error).with_context(|| format!("cannot enter network namespace '{label}'"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_is_host_the_bound_name_or_the_inode() {
        let dir = std::env::temp_dir().join(format!("netlens-netns-label-{}", std::process::id()));
        let named = dir.join("named");
        std::fs::create_dir_all(&named).unwrap();
        let (own, other) = (dir.join("own"), dir.join("other"));
        std::fs::write(&own, "").unwrap();
        std::fs::write(&other, "").unwrap();
        let missing = dir.join("missing");
        assert_eq!(label_for(&own, &own, &named), "host");
        assert_eq!(label_for(&own, &missing, &named), "host");
        let ino = std::fs::metadata(&own).unwrap().ino();
        assert_eq!(label_for(&own, &other, &named), format!("net:[{ino}]"));
        std::fs::hard_link(&own, named.join("blue")).unwrap();
        assert_eq!(label_for(&own, &other, &named), "blue");
        assert_eq!(label_for(&own, &missing, &named), "blue");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
