//! A private tmux server for screen tests: `tmux -L netlens-<tag>-<pid>-<n>`
//! with TMUX_TMPDIR in a private directory and no user config, killed (only
//! that server) on drop.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub struct Tmux {
    /// The server's name (`tmux -L`), for commands the tests build.
    pub socket: String,
    /// Its TMUX_TMPDIR.
    pub tmpdir: PathBuf,
}

impl Tmux {
    /// None (and a SKIP line) when tmux is not installed.
    pub fn new(tag: &str) -> Option<Tmux> {
        if super::need(&["tmux"]) {
            return None;
        }
        // The number: one process runs every test, and two modules may
        // choose the same tag.
        static MADE: AtomicU32 = AtomicU32::new(0);
        let socket = format!(
            "netlens-{tag}-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        // Not the tests' own `netlens-<tag>-<pid>` work directories: a
        // test that removes its directory would take the server's socket
        // with it, and kill-server on drop would no longer reach it.
        let tmpdir = std::env::temp_dir().join(format!("{socket}.tmux"));
        std::fs::create_dir_all(&tmpdir).unwrap();
        Some(Tmux { socket, tmpdir })
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .env("TMUX_TMPDIR", &self.tmpdir)
            .env_remove("TMUX")
            .args(["-L", &self.socket, "-f", "/dev/null"]);
        command
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out: Output = self.command().args(args).output().expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A detached session of `width`x`height` (no status line) running
    /// `command` (a shell command line).
    pub fn session(&self, name: &str, width: u16, height: u16, command: &str) {
        self.run(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            command,
        ]);
        self.run(&["set-option", "-t", name, "status", "off"]);
        self.run(&["set-option", "-t", name, "remain-on-exit", "on"]);
    }

    pub fn keys(&self, target: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", target];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Types `text` literally.
    pub fn type_text(&self, target: &str, text: &str) {
        self.run(&["send-keys", "-t", target, "-l", text]);
    }

    pub fn capture(&self, target: &str) -> Vec<String> {
        self.settled(target).lines().map(str::to_string).collect()
    }

    /// The pane's text once two captures in a row agree (at most 10
    /// tries, then the last): a capture taken while netlens is writing a
    /// frame shows the new rows above the old screen's, a screen that was
    /// never drawn.
    fn settled(&self, target: &str) -> String {
        let mut last = self.run(&["capture-pane", "-p", "-t", target]);
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(10));
            let now = self.run(&["capture-pane", "-p", "-t", target]);
            if now == last {
                break;
            }
            last = now;
        }
        last
    }

    /// Polls the pane until `ready` holds for its text (at most 15 s).
    pub fn wait_for(
        &self,
        target: &str,
        what: &str,
        ready: impl Fn(&[String]) -> bool,
    ) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let shown = self.capture(target);
            if ready(&shown) {
                return shown;
            }
            if Instant::now() > deadline {
                panic!("pane {target} never showed {what}:\n{}", shown.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    // One-session use: `start` a session named "t", then drive it.

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

    /// Sends tmux key names to the `start` session.
    pub fn send_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn screen(&self) -> String {
        self.settled("t")
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
