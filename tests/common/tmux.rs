//! A private tmux server for tests that drive the real binary's screens:
//! `tmux -L netlens-<tag>-<pid>`, no user config, killed on drop.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
    tmpdir: PathBuf,
}

impl Tmux {
    /// None (and a SKIP line) when tmux is not installed.
    pub fn new(tag: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("SKIP: tmux is not installed (apt install tmux)");
            return None;
        }
        let socket = format!("netlens-{tag}-{}", std::process::id());
        let tmpdir = std::env::temp_dir().join(&socket);
        std::fs::create_dir_all(&tmpdir).unwrap();
        Some(Tmux { socket, tmpdir })
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .env("TMUX_TMPDIR", &self.tmpdir)
            .env_remove("TMUX")
            .args(["-L", &self.socket, "-f", "/dev/null"]);
        command
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A detached `width`x`height` window (no status line) running
    /// `command` in `dir`.
    pub fn start(&self, width: u16, height: u16, dir: &std::path::Path, command: &str) {
        self.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-c",
            &dir.display().to_string(),
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            command,
        ]);
        self.run(&["set-option", "-t", "t", "status", "off"]);
        self.run(&["set-option", "-t", "t", "remain-on-exit", "on"]);
    }

    pub fn resize(&self, width: u16, height: u16) {
        self.run(&[
            "resize-window",
            "-t",
            "t",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    /// Polls the screen until `ready` gives Some (at most `patience`).
    pub fn wait<T>(&self, what: &str, patience: Duration, ready: impl Fn(&str) -> Option<T>) -> T {
        let deadline = Instant::now() + patience;
        loop {
            let screen = self.screen();
            if let Some(found) = ready(&screen) {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
        let _ = std::fs::remove_dir_all(&self.tmpdir);
    }
}
