//! Recording from the terminal: --record and `r`, where the file goes
//! (issues 24 and 25), a full disk, and a terminal that hangs up.

use super::*;

#[test]
fn record_flag_shows_rec_and_r_closes_the_file() {
    let dir = std::env::temp_dir().join(format!("netlens-pty-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("live.nlrec");
    let _ = std::fs::remove_file(&path);
    let path_text = path.to_str().unwrap();
    let mut session = Session::start(&["--record", path_text, "--interval", "200ms"], 120, 30);
    session.wait_for("● REC");
    // A little loopback traffic for the capture to record: 20 writes, 20 ms
    // apart.
    {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut buffer = [0u8; 64];
        for _ in 0..20 {
            client.write_all(&[b'x'; 64]).unwrap();
            server.read_exact(&mut buffer).unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // Samples every 200 ms; a fixed wait left one sample when other tests
    // delayed the sampler, so wait until the file holds two.
    wait_until("two samples recorded", || recorded_samples(path_text) >= 2);
    session.send("R");
    let start = Instant::now();
    while session.contents().contains("● REC") && start.elapsed() < PATIENCE {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !session.contents().contains("● REC"),
        "REC still shown after R"
    );
    session.send("q");
    assert!(session.wait_exit().success());
    let info = std::process::Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["replay", "--info", path_text])
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("closed cleanly"), "{info}");
    let samples: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("samples:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(samples >= 2, "{info}");
    if common::is_root() {
        // Capture ran, so the recording holds the packets it saw.
        assert!(info.contains("capture:    on"), "{info}");
        assert!(info.contains("packets ("), "{info}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn replay_info(path: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["replay", "--info"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn r_records_beside_the_record_file_and_says_where() {
    let dir = crate::common::scratch_dir_for("terminal", "beside");
    let first = dir.join("a.nlrec");
    let first_text = first.to_str().unwrap();
    // The process runs elsewhere: R's files must not land in its cwd.
    let mut session = Session::start(&["--record", first_text, "--interval", "200ms"], 200, 30);
    session.wait_for(&format!("recording to {first_text}"));
    session.send("R");
    session.wait_for(&format!(") to {first_text}"));
    session.wait_for("recorded ");
    session.send("R");
    let new_prefix = format!("recording to {}/netlens-", dir.display());
    session.wait_for(&new_prefix);
    session.send("R");
    session.wait_for(&format!(") to {}/netlens-", dir.display()));
    session.send("q");
    assert!(session.wait_exit().success());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0], first);
    let second = &files[1];
    let name = second.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("netlens-") && name.ends_with(".nlrec"),
        "{name}"
    );
    for file in &files {
        let info = replay_info(file);
        assert!(info.contains("closed cleanly"), "{info}");
    }
    // And on exit, where they went (printed after the terminal is back).
    let printed = session.raw_since(0);
    assert!(
        printed.contains("netlens: recorded ") && printed.contains(name),
        "exit message missing"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The samples `replay --info` counts in a recording (still being written
/// or not); 0 when it cannot read one yet.
fn recorded_samples(path: &str) -> u64 {
    let info = std::process::Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["replay", "--info", path])
        .output()
        .unwrap();
    String::from_utf8_lossy(&info.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("samples:"))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn r_without_record_goes_to_the_xdg_state_directory() {
    use std::os::unix::fs::PermissionsExt;
    let dir = crate::common::scratch_dir_for("terminal", "xdg");
    let state = dir.join("state");
    let state_text = state.to_str().unwrap();
    let mut session = Session::start_with_env(
        &["--interval", "200ms"],
        200,
        30,
        &[("XDG_STATE_HOME", state_text)],
    );
    session.wait_for("rxpck/s");
    session.send("R");
    session.wait_for(&format!("recording to {state_text}/netlens/netlens-"));
    session.wait_for("● REC");
    session.send("R");
    session.wait_for(&format!(") to {state_text}/netlens/netlens-"));
    session.send("q");
    assert!(session.wait_exit().success());
    let netlens_dir = state.join("netlens");
    let mode = std::fs::metadata(&netlens_dir)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    let files: Vec<_> = std::fs::read_dir(&netlens_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(replay_info(&files[0]).contains("closed cleanly"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tmpfs of 256 KiB with all but `room` bytes taken, unmounted on drop.
struct FullDisk {
    dir: std::path::PathBuf,
}

impl FullDisk {
    fn new(tag: &str, room: usize) -> FullDisk {
        let dir = crate::common::scratch_dir_for("terminal", tag);
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "mount tmpfs");
        let disk = FullDisk { dir };
        // Fill it, then free `room` bytes.
        let filler = disk.dir.join("filler");
        let _ = std::fs::write(&filler, vec![0u8; 256 * 1024]);
        let size = std::fs::metadata(&filler).unwrap().len() as usize;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&filler)
            .unwrap();
        file.set_len(size.saturating_sub(room) as u64).unwrap();
        disk
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_full_disk_stops_the_live_recording_with_the_reason_until_a_key() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let disk = FullDisk::new("enospc-live", 6 * 1024);
    let path = disk.dir.join("live.nlrec");
    let path_text = path.to_str().unwrap();
    let mut session = Session::start(&["--record", path_text, "--interval", "100ms"], 250, 30);
    session.wait_for("No space left on device");
    session.wait_for("samples (");
    session.wait_for("REC ERROR");
    // It stays: ten samples later it is still there.
    std::thread::sleep(Duration::from_secs(1));
    let screen = session.contents();
    assert!(screen.contains("No space left on device"), "{screen}");
    assert!(
        screen.contains(&format!("saved in {path_text}")),
        "{screen}"
    );
    // A key acknowledges it.
    session.send("j");
    wait_until("the error to go", || {
        !session.contents().contains("REC ERROR")
    });
    session.send("q");
    let status = session.wait_exit();
    assert!(!status.success(), "a lost recording must not exit 0");
    // Printed again once the terminal is back.
    let after = session.contents();
    assert!(after.contains("No space left on device"), "{after}");
    let info = replay_info(&path);
    assert!(info.contains("samples:"), "{info}");
}

#[test]
fn a_full_disk_stops_headless_record_with_the_reason_and_what_was_saved() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let disk = FullDisk::new("enospc-record", 6 * 1024);
    let path = disk.dir.join("headless.nlrec");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["record", "--interval", "100ms", "--duration", "60s", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(
        stderr.contains("samples (") && stderr.contains("saved in"),
        "{stderr}"
    );
}

/// Runs netlens `args` on a pty whose master is closed after `after`: the
/// terminal hangs up (an SSH session that drops), stderr included. Returns
/// the exit status.
fn hang_up_after(
    args: &[&str],
    after: Duration,
    recording: &std::path::Path,
) -> std::process::ExitStatus {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 30,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty(3) into two ints we own, with a winsize we own.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(opened, 0);
    // SAFETY: both descriptors were just opened and are owned here; the
    // master must not leak into the child, or closing it hangs nothing up.
    let (master, slave) = unsafe {
        libc::fcntl(master, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(slave, libc::F_SETFD, libc::FD_CLOEXEC);
        (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
    };
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_netlens"));
    command
        .args(args)
        .env("TERM", "xterm-256color")
        .current_dir(std::env::temp_dir())
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap());
    // SAFETY: setsid and TIOCSCTTY between fork and exec (both
    // async-signal-safe) make the pty the child's controlling terminal.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = common::ChildGuard(command.spawn().unwrap());
    drop(command);
    drop(slave);
    // Read what it draws (a full pty would block it), then hang up: after
    // `after`, once the recording has begun (a loaded host may take longer
    // to start), at most PATIENCE.
    let start = Instant::now();
    let mut buffer = [0u8; 65536];
    let begun = || std::fs::metadata(recording).is_ok_and(|m| m.len() > 0);
    while start.elapsed() < after || (!begun() && start.elapsed() < PATIENCE) {
        let mut poll = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) and read(2) on the master we own, into our buffer.
        unsafe {
            if libc::poll(&mut poll, 1, 50) > 0 {
                libc::read(master.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len());
            }
        }
    }
    drop(master);
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "netlens did not exit on hang-up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_terminal_that_hangs_up_closes_the_live_recording_cleanly() {
    let dir = crate::common::scratch_dir_for("terminal", "hup-live");
    let path = dir.join("live.nlrec");
    let status = hang_up_after(
        &["--record", path.to_str().unwrap(), "--interval", "200ms"],
        Duration::from_secs(2),
        &path,
    );
    let info = replay_info(&path);
    assert!(info.contains("closed cleanly"), "{status:?}\n{info}");
    assert_ne!(status.code(), Some(101), "netlens panicked");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_terminal_that_hangs_up_closes_the_headless_recording_cleanly() {
    let dir = crate::common::scratch_dir_for("terminal", "hup-record");
    let path = dir.join("headless.nlrec");
    let status = hang_up_after(
        &[
            "record",
            "--interval",
            "200ms",
            "-o",
            path.to_str().unwrap(),
        ],
        Duration::from_secs(2),
        &path,
    );
    let info = replay_info(&path);
    assert!(info.contains("closed cleanly"), "{status:?}\n{info}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sighup_closes_the_headless_recording_cleanly() {
    let dir = crate::common::scratch_dir_for("terminal", "sighup-record");
    let path = dir.join("headless.nlrec");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_netlens"))
        .args(["record", "--interval", "200ms", "-o"])
        .arg(&path)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut child = common::ChildGuard(child);
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill(2) on the child we spawned.
    assert_eq!(unsafe { libc::kill(child.pid() as i32, libc::SIGHUP) }, 0);
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let info = replay_info(&path);
    assert!(info.contains("closed cleanly"), "{info}");
    let _ = std::fs::remove_dir_all(&dir);
}
