//! End to end: the real binary in a real pseudo-terminal, read back through a
//! terminal emulator (vt100). It must draw the Interfaces table, switch tabs,
//! open help, survive resizes, and leave the terminal as it found it on quit
//! and on SIGTERM / SIGHUP.

use crate::common;

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod flows;
mod load_tab;
mod recording;
mod screen;
mod terminal;

/// Generous: a hang guard, not a speed check.
const PATIENCE: Duration = Duration::from_secs(20);

fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).expect("terminal sizes are not zero")
}

struct Session {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    screen: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    /// Told when the reader saw the terminal's end (every byte read).
    drained: std::sync::mpsc::Receiver<()>,
}

impl Session {
    fn start(args: &[&str], cols: u16, rows: u16) -> Session {
        Self::start_with_env(args, cols, rows, &[])
    }

    fn start_with_env(args: &[&str], cols: u16, rows: u16, env: &[(&str, &str)]) -> Session {
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_netlens"));
        command.args(args);
        // portable-pty starts in $HOME by default, which may not exist.
        command.cwd(std::env::temp_dir());
        command.env("TERM", "xterm-256color");
        for (key, value) in env {
            command.env(key, value);
        }
        Self::start_command(command, cols, rows)
    }

    fn start_command(command: CommandBuilder, cols: u16, rows: u16) -> Session {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let child = pair.slave.spawn_command(command).expect("spawn netlens");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            nonzero(rows),
            nonzero(cols),
            0,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (screen_in, raw_in) = (screen.clone(), raw.clone());
        let (drained_tx, drained) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                screen_in.lock().unwrap().process(&buffer[..n]);
                raw_in.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
            let _ = drained_tx.send(());
        });
        Session {
            master: pair.master,
            writer,
            child,
            screen,
            raw,
            drained,
        }
    }

    fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    fn wait_for(&self, text: &str) {
        let start = Instant::now();
        while start.elapsed() < PATIENCE {
            if self.contents().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "screen never showed {text:?}; it shows:\n{}",
            self.contents()
        );
    }

    fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    fn resize(&self, cols: u16, rows: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        self.screen
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(nonzero(rows), nonzero(cols));
    }

    fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let start = Instant::now();
        while start.elapsed() < PATIENCE {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The last bytes are read once the reader sees the end of
                // the terminal (every holder of it gone), however late a
                // loaded host runs the reader.
                let _ = self.drained.recv_timeout(PATIENCE);
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill().ok();
        panic!("netlens did not exit");
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = self.child.process_id().expect("child pid") as libc::pid_t;
        // SAFETY: kill(2) on the child we spawned.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    /// The terminal is back to normal: main screen, cursor shown, cooked
    /// mode (canonical input and echo) as before netlens started.
    fn assert_restored(&self) {
        let raw = self.raw.lock().unwrap();
        let text = String::from_utf8_lossy(&raw);
        assert!(
            text.contains("\x1b[?1049h"),
            "never entered the alternate screen"
        );
        assert!(
            text.contains("\x1b[?1049l"),
            "did not leave the alternate screen"
        );
        assert!(
            text.rfind("\x1b[?25h") > text.rfind("\x1b[?25l"),
            "cursor left hidden"
        );
        assert!(!self.screen.lock().unwrap().screen().alternate_screen());
        let fd = self.master.as_raw_fd().expect("pty fd");
        // SAFETY: tcgetattr into a zeroed termios we own, on the pty's fd.
        let mut termios: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::tcgetattr(fd, &mut termios) }, 0);
        assert!(
            termios.c_lflag & libc::ICANON != 0,
            "raw mode left on (ICANON off)"
        );
        assert!(
            termios.c_lflag & libc::ECHO != 0,
            "raw mode left on (ECHO off)"
        );
    }

    /// Bytes in one write: the way Esc and a key arrive together over SSH.
    fn send_bytes(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    fn pid(&self) -> libc::pid_t {
        self.child.process_id().expect("child pid") as libc::pid_t
    }

    /// Everything written to the terminal since `from` (a length of `raw`).
    fn raw_since(&self, from: usize) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()[from..]).into_owned()
    }

    fn raw_len(&self) -> usize {
        self.raw.lock().unwrap().len()
    }
}

/// Polls `done` until it holds; panics after PATIENCE.
fn wait_until(what: &str, done: impl FnMut() -> bool) {
    crate::common::wait_until(what, PATIENCE, done);
}
