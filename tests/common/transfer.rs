//! A known TCP transfer between the two namespaces of a VethPair: a Python
//! receiver on IP_B:SERVER_PORT and a paced Python sender from
//! IP_A:CLIENT_PORT. Bounded: PAYLOAD bytes once, in about 3 s.

use super::{ChildGuard, IP_A, IP_B};
use std::process::{Command, Stdio};

/// What the sender sends: 40 writes of 512 KiB, 75 ms apart (~3 s).
pub const PAYLOAD: u64 = 40 * 512 * 1024;
pub const CLIENT_PORT: u16 = 40001;
pub const SERVER_PORT: u16 = 5201;

pub fn receiver(ns: &str) -> ChildGuard {
    let script = format!(
        "import socket\n\
         l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         l.bind(('{IP_B}', {SERVER_PORT})); l.listen(1); l.settimeout(60)\n\
         c, _ = l.accept(); c.settimeout(60); n = 0\n\
         while True:\n    d = c.recv(1 << 20)\n    if not d: break\n    n += len(d)\n\
         c.close(); print(n, flush=True)\n"
    );
    ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", ns, "python3", "-c", &script])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the receiver"),
    )
}

/// Sends PAYLOAD bytes from IP_A:CLIENT_PORT, paced, then closes once the
/// receiver has read everything. Returns the sender's tcpi_bytes_sent: the
/// payload bytes it put on the wire, retransmissions included (the kernel's
/// own count, so a lossy run still has an exact figure to compare with).
pub fn send(ns: &str) -> u64 {
    let script = format!(
        "import socket, time\n\
         for attempt in range(50):\n    \
             try:\n        \
                 s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n        \
                 s.bind(('{IP_A}', {CLIENT_PORT})); s.connect(('{IP_B}', {SERVER_PORT})); break\n    \
             except ConnectionRefusedError:\n        s.close(); time.sleep(0.1)\n\
         chunk = b'x' * (512 * 1024)\n\
         for i in range(40):\n    s.sendall(chunk); time.sleep(0.075)\n\
         s.shutdown(socket.SHUT_WR); s.settimeout(60)\n\
         while s.recv(65536): pass\n\
         import struct\n\
         info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)\n\
         print(struct.unpack_from('Q', info, 200)[0] if len(info) >= 208 else -1)\n\
         s.close()\n"
    );
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "python3", "-c", &script])
        .output()
        .expect("run the sender");
    assert!(
        out.status.success(),
        "sender: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Kernels before 5.5 have no tcpi_bytes_sent: the payload is the floor.
    match String::from_utf8_lossy(&out.stdout).trim().parse::<i64>() {
        Ok(sent) if sent >= PAYLOAD as i64 => sent as u64,
        _ => PAYLOAD,
    }
}

pub fn received(mut receiver: ChildGuard) -> u64 {
    use std::io::Read;
    let mut text = String::new();
    receiver
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text.trim().parse().expect("the receiver's count")
}

/// Waits for a child; what it wrote to its piped stdout (or stderr).
pub fn finish(mut child: ChildGuard, stderr: bool) -> (std::process::ExitStatus, Vec<u8>) {
    use std::io::Read;
    let mut out = Vec::new();
    if stderr {
        child
            .0
            .stderr
            .take()
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
    } else {
        child
            .0
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
    }
    (child.0.wait().unwrap(), out)
}
