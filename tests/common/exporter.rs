//! `netlens export` started for a test: the real binary on 127.0.0.1
//! (port 0), its bound address read from its first line.

use super::{ChildGuard, NETLENS};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Exporter {
    _child: ChildGuard,
    pub addr: SocketAddr,
}

impl Exporter {
    pub fn pid(&self) -> u32 {
        self._child.pid()
    }

    /// Starts `netlens export --listen 127.0.0.1:0 ARGS` and reads the bound
    /// address from its first line.
    pub fn start(args: &[&str]) -> Exporter {
        let mut child = Command::new(NETLENS)
            .args(["export", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn netlens export");
        let stdout = child.stdout.take().unwrap();
        let guard = ChildGuard(child);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("netlens export did not announce its address");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        Exporter {
            _child: guard,
            addr,
        }
    }
}
