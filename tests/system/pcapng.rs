//! pcapng with attribution: `capture -w FILE.pcapng` names each packet's
//! interface and namespace (interface blocks) and the process of its
//! socket (a packet comment). Checked with Wireshark's own reader
//! (tshark), tcpdump, and `netlens read`.

use crate::common::{self, ChildGuard, NETLENS, VethPair};
use std::process::{Command, Stdio};
use std::time::Duration;

const PORT: u16 = 7411;
/// The client's command name (prctl PR_SET_NAME), so its packets are told
/// from anything else python3 runs.
const CLIENT: &str = "nlpngclient";

/// A client in `ns` that names itself, connects to the server, sends 64
/// KiB in 4 KiB writes over about 3 s, then closes; prints its pid first.
fn client(ns: &str) -> ChildGuard {
    let script = format!(
        "import ctypes, os, socket, sys, time\n\
         ctypes.CDLL(None).prctl(15, b'{CLIENT}', 0, 0, 0)\n\
         print(os.getpid(), flush=True)\n\
         s = socket.create_connection(('{ip}', {PORT}))\n\
         for _ in range(16):\n\
         \x20   s.sendall(b'x' * 4096)\n\
         \x20   time.sleep(0.2)\n\
         s.close()\n",
        ip = common::IP_B,
    );
    common::python_in(ns, &script)
}

/// A server in `ns` that reads whatever comes and prints "ready".
fn server(ns: &str) -> ChildGuard {
    let script = format!(
        "import socket\n\
         l = socket.socket()\n\
         l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         l.bind(('0.0.0.0', {PORT}))\n\
         l.listen(4)\n\
         print('ready', flush=True)\n\
         while True:\n\
         \x20   c, _ = l.accept()\n\
         \x20   while c.recv(65536):\n\
         \x20       pass\n\
         \x20   c.close()\n"
    );
    common::python_in(ns, &script)
}

fn first_line(child: &mut ChildGuard) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim().to_string()
}

/// `netlens capture -w file` in `ns` for `seconds`, once it writes the
/// file (after its first sample, for a pcapng).
fn capture(ns: &str, file: &std::path::Path, seconds: u32) -> ChildGuard {
    let capture = ChildGuard(
        Command::new(NETLENS)
            .args([
                "capture",
                "--netns",
                ns,
                "--duration",
                &format!("{seconds}s"),
            ])
            .args(["-f", &format!("tcp port {PORT}"), "-w"])
            .arg(file)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    common::wait_until("the capture file", Duration::from_secs(10), || {
        file.exists()
    });
    capture
}

/// tshark's fields, one packet a line, tab-separated.
fn tshark_fields(file: &std::path::Path, fields: &[&str]) -> Vec<Vec<String>> {
    let mut command = Command::new("tshark");
    command.arg("-r").arg(file).args(["-T", "fields"]);
    for field in fields {
        command.args(["-e", field]);
    }
    let out = command.output().expect("tshark");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn capture_w_pcapng_names_interface_namespace_and_process_per_packet() {
    if common::need_root(&["ip", "python3", "tcpdump", "tshark"]) {
        return;
    }
    let pair = VethPair::new("png");
    let dir = common::scratch_dir("pcapng");
    let file = dir.join(format!("client-{}.pcapng", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut server = server(&pair.b.name);
    assert_eq!(first_line(&mut server), "ready");
    let mut capture = capture(&pair.a.name, &file, 7);
    std::thread::sleep(Duration::from_millis(300));
    let mut client = client(&pair.a.name);
    let pid = first_line(&mut client);
    assert!(client.0.wait().unwrap().success());
    let stderr = common::stop_for_stderr(&mut capture);
    let captured: usize = stderr
        .lines()
        .find_map(|l| l.strip_suffix(" packets captured")?.parse().ok())
        .unwrap_or_else(|| panic!("the count: {stderr}"));
    assert!(captured >= 20, "{stderr}");

    // tcpdump reads the file whole.
    let lines = common::tcpdump_read(&file);
    assert_eq!(lines.lines().count(), captured, "{lines}");

    // Wireshark: every packet on the veth, in the client's namespace; the
    // connection's packets, SYN to FIN, are the client's.
    let owner = format!("pid {pid} ({CLIENT})");
    let rows = tshark_fields(
        &file,
        &[
            "frame.interface_name",
            "frame.interface_description",
            "frame.comment",
        ],
    );
    assert_eq!(rows.len(), captured);
    let namespace = format!("namespace {}", pair.a.name);
    for row in &rows {
        assert_eq!(row[0], common::DEV_A, "{row:?}");
        assert_eq!(row[1], namespace, "{row:?}");
        assert_eq!(row.get(2), Some(&owner), "{row:?}");
    }

    // netlens read: tcpdump's line, then the interface and the owner.
    let out = Command::new(NETLENS)
        .arg("read")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let read = String::from_utf8_lossy(&out.stdout);
    let suffix = format!("  # {} ({namespace}): {owner}", common::DEV_A);
    assert_eq!(read.lines().count(), captured);
    for (ours, theirs) in read.lines().zip(lines.lines()) {
        let line = ours
            .strip_suffix(&suffix)
            .unwrap_or_else(|| panic!("{ours}"));
        // tcpdump names the interface of a cooked capture as netlens does.
        assert_eq!(line, theirs);
    }
    let _ = std::fs::remove_file(&file);
}

/// A pcap stays a pcap: `-w FILE.pcap` writes what tcpdump -w writes,
/// with no notes.
#[test]
fn capture_w_pcap_stays_classic() {
    if common::need_root(&["ip", "python3"]) {
        return;
    }
    let pair = VethPair::new("pcl");
    let dir = common::scratch_dir("pcapng");
    let file = dir.join(format!("classic-{}.pcap", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut server = server(&pair.b.name);
    assert_eq!(first_line(&mut server), "ready");
    let mut capture = capture(&pair.a.name, &file, 3);
    let mut client = client(&pair.a.name);
    let _ = first_line(&mut client);
    drop(client);
    common::stop_for_stderr(&mut capture);
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes[..4], 0xa1b2_c3d4u32.to_le_bytes());
    let _ = std::fs::remove_file(&file);
}
