//! Choosing and entering the network namespace to watch.

use anyhow::{Context, Result, bail};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The namespace a sampler watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The namespace netlens itself runs in.
    Own,
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
            (None, None) => Target::Own,
        }
    }

    /// What the header and the JSON call this namespace.
    pub fn label(&self) -> &str {
        match self {
            Target::Own => "host",
            Target::Path { label, .. } => label,
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
