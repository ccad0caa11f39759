//! Runs the real binary bounded in time and address space, and reports
//! its peak RSS (from wait4's rusage, as /usr/bin/time -v does).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A file removed on drop, even when the test fails.
pub struct TempPath(pub PathBuf);

impl TempPath {
    pub fn new(tag: &str) -> TempPath {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "netlens-hardening-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        TempPath(path)
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub struct Measured {
    /// The exit code; None when a signal ended it.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub max_rss_mb: u64,
    pub seconds: f64,
}

/// netlens with `args`, its address space limited to `max_as` bytes (so a
/// binary that amplifies fails fast instead of taking the host's memory);
/// stdout and stderr are the caller's to set.
pub fn capped_netlens(args: &[&str], max_as: u64) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_netlens"));
    command.args(args).env("TZ", "UTC").stdin(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs here.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: max_as,
                rlim_max: max_as,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

/// Waits for `child`, started at `started`, killing it by its PID after
/// `timeout`; its exit, peak RSS (wait4's rusage) and time, with stdout
/// and stderr left empty for the caller.
pub fn wait_measured(
    child: &Child,
    args: &[&str],
    started: Instant,
    timeout: Duration,
) -> Measured {
    let pid = child.id() as libc::pid_t;
    // wait4's peak includes the RSS the child had when forked, before its
    // exec: this test process's, which other tests running beside it can
    // make larger than the bound. So the peak counts only above what this
    // process held at the spawn; below that, netlens' own high-water mark
    // read while it ran stands for it.
    let inherited_kb = vm_kb("self", "VmRSS:").unwrap_or(0) + 2048;
    let mut own_peak_kb = 0;
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own child, reaped only here.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            break;
        }
        assert!(got == 0, "wait4: {}", std::io::Error::last_os_error());
        if started.elapsed() > timeout {
            // SAFETY: kill and reap our own child by its PID.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::wait4(pid, &mut status, 0, &mut usage);
            }
            panic!("netlens {args:?} still ran after {timeout:?}: killed");
        }
        if std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe.ends_with("netlens"))
        {
            own_peak_kb = own_peak_kb.max(vm_kb(&pid.to_string(), "VmHWM:").unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let waited_kb = usage.ru_maxrss as u64;
    let peak_kb = if waited_kb > inherited_kb {
        waited_kb
    } else {
        own_peak_kb
    };
    Measured {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        stdout: String::new(),
        stderr: String::new(),
        max_rss_mb: peak_kb / 1024,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Runs netlens with `args` under [`capped_netlens`] and [`wait_measured`].
pub fn run_netlens(args: &[&str], max_as: u64, timeout: Duration) -> Measured {
    let stdout = TempPath::new("stdout");
    let stderr = TempPath::new("stderr");
    let mut command = capped_netlens(args, max_as);
    command
        .stdout(std::fs::File::create(&stdout.0).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr.0).expect("stderr file"));
    let started = Instant::now();
    // Reaped by wait4 in wait_measured, which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let child = command.spawn().expect("netlens starts");
    let measured = wait_measured(&child, args, started, timeout);
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    Measured {
        stdout: read(&stdout.0),
        stderr: read(&stderr.0),
        ..measured
    }
}

/// A `Vm*:` line of /proc/`pid`/status, in kB.
fn vm_kb(pid: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
