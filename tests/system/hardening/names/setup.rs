//! The real things the names tests run against: a user made with useradd
//! (home under a temporary directory), a process of that user holding a
//! loopback socket in a cgroup v2 directory named as podman names its
//! containers' (`libpod-<64 hex>.scope`), a unix socket whose backlog is
//! full, and netlens run with a deadline. Each undoes itself on drop,
//! pass or fail.

use crate::common::NETLENS;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A 64-hex container id unique to this test process and `tag` (hex).
pub fn container_id(tag: &str) -> String {
    format!("{tag:0<56}{:08x}", std::process::id())
}

/// A user made for one test: `useradd`, `userdel` and its files removed
/// on drop.
pub struct TestUser {
    pub name: String,
    pub uid: u32,
    pub home: PathBuf,
    dir: PathBuf,
}

impl TestUser {
    pub fn new(tag: &str) -> TestUser {
        let name = format!("nlh{}{tag}", std::process::id());
        let dir = std::env::temp_dir().join(format!("netlens-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let home = dir.join("home");
        // Tests run in parallel: useradd may find /etc/passwd locked.
        let mut tries = 0;
        loop {
            let out = Command::new("useradd")
                .args(["-M", "-U", "-s", "/usr/sbin/nologin", "-d"])
                .arg(&home)
                .arg(&name)
                .output()
                .expect("run useradd");
            if out.status.success() {
                break;
            }
            tries += 1;
            assert!(
                tries < 50,
                "useradd {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let id = Command::new("id").args(["-u", &name]).output().unwrap();
        let uid = String::from_utf8_lossy(&id.stdout).trim().parse().unwrap();
        let user = TestUser {
            name,
            uid,
            home,
            dir,
        };
        user.mkdir(&user.home);
        user
    }

    /// Makes `path` (and its parents up to the home) the user's directories.
    pub fn mkdir(&self, path: &Path) {
        std::fs::create_dir_all(path).unwrap();
        let mut at = Some(path);
        while let Some(dir) = at.filter(|d| d.starts_with(&self.home)) {
            std::os::unix::fs::chown(dir, Some(self.uid), Some(self.uid)).unwrap();
            at = dir.parent();
        }
    }

    /// Where rootless podman keeps its container store, its parents made.
    pub fn podman_store(&self) -> PathBuf {
        let dir = self
            .home
            .join(".local/share/containers/storage/overlay-containers");
        self.mkdir(&dir);
        dir.join("containers.json")
    }

    /// A file the user owns.
    pub fn chown(&self, path: &Path) {
        std::os::unix::fs::lchown(path, Some(self.uid), Some(self.uid)).unwrap();
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        for _ in 0..50 {
            let done = Command::new("userdel").arg(&self.name).status();
            if done.is_ok_and(|s| s.success()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The cgroup v2 hierarchy's mount point (/sys/fs/cgroup, or
/// /sys/fs/cgroup/unified on a hybrid host).
pub fn cgroup2_root() -> Option<PathBuf> {
    std::fs::read_to_string("/proc/self/mounts")
        .ok()?
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            (fields.get(2) == Some(&"cgroup2")).then(|| PathBuf::from(fields[1]))
        })
}

/// A process of `user` holding a listening TCP socket on 127.0.0.1, in
/// the cgroup `<cgroup2>/netlens-t<pid>-<id>/<unit>`: what a rootless
/// podman container's process looks like to netlens. Killed (by pid),
/// reaped and its cgroup removed on drop.
pub struct Contained {
    child: Child,
    cgroup: PathBuf,
}

impl Contained {
    /// None (with a SKIP line naming `test`) when this host has no cgroup
    /// v2 hierarchy to make one in.
    pub fn start(test: &str, user: &TestUser, unit: &str) -> Option<Contained> {
        let Some(root) = cgroup2_root() else {
            eprintln!("SKIP {test}: needs a cgroup v2 hierarchy");
            return None;
        };
        let parent = root.join(format!("netlens-t{}-{}", std::process::id(), &unit[..16]));
        let cgroup = parent.join(unit);
        std::fs::create_dir_all(&cgroup).unwrap();
        let child = Command::new("setpriv")
            .arg(format!("--reuid={}", user.uid))
            .arg(format!("--regid={}", user.uid))
            .args(["--clear-groups", "/usr/bin/python3", "-c"])
            .arg(
                "import socket, time\n\
                 s = socket.socket()\n\
                 s.bind(('127.0.0.1', 0))\n\
                 s.listen()\n\
                 time.sleep(120)\n",
            )
            .stdin(Stdio::null())
            .spawn()
            .expect("run setpriv python3");
        let contained = Contained { child, cgroup };
        std::fs::write(
            contained.cgroup.join("cgroup.procs"),
            contained.pid().to_string(),
        )
        .unwrap();
        // Ready once it holds its socket.
        let started = Instant::now();
        while !holds_socket(contained.pid()) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "python3 of {} holds no socket after 10 s",
                user.name
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(contained)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

fn holds_socket(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
}

impl Drop for Contained {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The cgroup empties a moment after its last process is reaped.
        for dir in [self.cgroup.as_path(), self.cgroup.parent().unwrap()] {
            for _ in 0..100 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// A directory made for the test (with its missing parents), owned by
/// `uid`, removed on drop from the first directory it had to make.
pub struct MadeDir {
    pub path: PathBuf,
    made: Option<PathBuf>,
}

impl MadeDir {
    pub fn new(path: PathBuf, uid: u32) -> MadeDir {
        let made = path
            .ancestors()
            .take_while(|p| !p.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(&path).unwrap();
        if let Some(first) = &made {
            for dir in path.ancestors().take_while(|p| p.starts_with(first)) {
                std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
            }
        }
        MadeDir { path, made }
    }
}

impl Drop for MadeDir {
    fn drop(&mut self) {
        if let Some(first) = &self.made {
            let _ = std::fs::remove_dir_all(first);
        }
    }
}

/// A unix socket at `path` whose backlog is full: listen(0), then
/// connections nobody accepts until one more would have to wait. The
/// queued connections are held as long as the listener.
pub struct FullBacklog {
    _listener: UnixListener,
    _queued: Vec<OwnedFd>,
}

impl FullBacklog {
    pub fn new(path: &Path) -> FullBacklog {
        let listener = UnixListener::bind(path).unwrap();
        // SAFETY: plain system calls on descriptors this test owns.
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
        let mut queued = Vec::new();
        for _ in 0..64 {
            match connect_nonblocking(path) {
                Ok(fd) => queued.push(fd),
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    return FullBacklog {
                        _listener: listener,
                        _queued: queued,
                    };
                }
                Err(e) => panic!("connect {}: {e}", path.display()),
            }
        }
        panic!("the backlog of {} never filled", path.display());
    }
}

fn connect_nonblocking(path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let flags = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: a plain system call; the descriptor is owned right after.
    let fd = unsafe { libc::socket(libc::AF_UNIX, flags, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is new and owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_un is plain data; all zeroes is valid.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    assert!(bytes.len() < address.sun_path.len());
    for (to, from) in address.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    let length = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    // SAFETY: address is a valid sockaddr_un of at least `length` bytes.
    let done = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&raw const address).cast(),
            length as libc::socklen_t,
        )
    };
    if done == 0 {
        Ok(fd)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Runs `netlens ARGS` to its end, killed (by pid) and failed with what
/// it printed if it is still running after `limit`.
pub fn netlens_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(NETLENS)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netlens");
    let readers = [
        drain(child.stdout.take().unwrap()),
        drain(child.stderr.take().unwrap()),
    ];
    let status = wait_within(&mut child, limit);
    let [stdout, stderr] = readers.map(|r| r.join().unwrap());
    let Some(status) = status else {
        panic!(
            "netlens {args:?} still running after {limit:?}: killed; it printed {} bytes: {}",
            stdout.len(),
            String::from_utf8_lossy(&stderr).trim()
        );
    };
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Everything `pipe` gives until it closes, on a thread.
pub fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The child's exit status, or None after killing it (by pid) when it
/// has not exited within `limit`.
pub fn wait_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGTERM to a child by its pid.
pub fn terminate(child: &Child) {
    // SAFETY: kill(2) on the pid of a child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
}
