//! tcp-memory against the kernel. net.ipv4.tcp_mem is host-wide on Linux
//! (a namespace other than the host's has no /proc/sys entry for it; this
//! test checks that). Real sockets fill receive queues: a python3 server
//! in one namespace accepts connections and never reads while a client in
//! the other sends a bounded amount on each, at two sizes. The test then
//! lowers the pressure value on the host to half of what those queues
//! hold, keeps its limit (nothing is refused memory), and restores the
//! exact old value on drop, panic included. The finding must show the pages
//! /proc/net/sockstat shows, the lowered tcp_mem read from the host even
//! though netlens watches a namespace, and the socket with the largest
//! Recv-Q, its PID and command, as `ss -tn` shows it.
//!
//! Network safety: traffic only between the two namespaces of this test
//! (198.18.0.1 -> 198.18.0.2); at most 32 connections of 2 MiB; helpers,
//! namespaces and the sysctl are restored by their guards.

use crate::common;
use crate::common::python_in;

use common::{ChildGuard, IP_B, VethPair};
use std::process::Command;
use std::time::Duration;

const TCP_MEM: &str = "/proc/sys/net/ipv4/tcp_mem";

fn read_line(child: &mut ChildGuard) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim().to_string()
}

/// sockstat's TCP mem, in pages (host-wide).
fn sockstat_pages() -> u64 {
    let text = std::fs::read_to_string("/proc/net/sockstat").unwrap();
    let tcp = text.lines().find(|l| l.starts_with("TCP:")).unwrap();
    let words: Vec<&str> = tcp.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "mem").unwrap();
    words[at + 1].parse().unwrap()
}

/// (Recv-Q, peer) of each established socket on `port` in `ns`, by `ss -tn`.
fn ss_recv_queues(ns: &str, port: u16) -> Vec<(u64, String)> {
    let out = common::ns_exec(
        ns,
        &[
            "ss",
            "-tnH",
            "state",
            "established",
            "sport",
            "=",
            &format!(":{port}"),
        ],
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((w.first()?.parse().ok()?, w.get(3)?.to_string()))
        })
        .collect()
}

fn fill(pair: &VethPair, port: u16, connections: u32, bytes: u32, max: u64) {
    let (server_ns, client_ns) = (&pair.b.name, &pair.a.name);
    let mut server = python_in(
        server_ns,
        &format!(
            "import socket,time\n\
             s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('{IP_B}',{port})); s.listen(64); print('ready',flush=True)\n\
             held=[s.accept()[0] for i in range({connections})]\n\
             time.sleep(40)"
        ),
    );
    assert_eq!(read_line(&mut server), "ready");
    // Each connection sends `bytes` without blocking for long: what the
    // receiver's window takes, then it stops (50 ms without progress on a
    // veth whose ACKs take microseconds: the window is shut). Short, as
    // every other root test waits meanwhile.
    let mut client = python_in(
        client_ns,
        &format!(
            "import socket,time\n\
             c=[]\n\
             for i in range({connections}):\n\
             \x20   s=socket.create_connection(('{IP_B}',{port})); s.settimeout(0.05); c.append(s)\n\
             for s in c:\n\
             \x20   left={bytes}\n\
             \x20   try:\n\
             \x20       while left>0: left-=s.send(b'x'*min(left,65536))\n\
             \x20   except (socket.timeout, BlockingIOError): pass\n\
             print('sent',flush=True); time.sleep(40)"
        ),
    );
    assert_eq!(read_line(&mut client), "sent");
    // The queues are full and still (the server never reads).
    let mut last = Vec::new();
    for _ in 0..50 {
        let now = ss_recv_queues(server_ns, port);
        if now == last && now.len() == connections as usize {
            break;
        }
        last = now;
        std::thread::sleep(Duration::from_millis(200));
    }
    let queued: u64 = last.iter().map(|(q, _)| q).sum();
    assert!(queued > 0, "nothing queued on :{port}");
    // Pressure at half of what this test's own queues hold, the limit
    // unchanged (nothing is refused memory): past it whatever other sockets
    // (non-root tests run meanwhile) take or free.
    let pressure = (queued / 4096 / 2).max(1);
    std::fs::write(TCP_MEM, format!("{pressure} {pressure} {max}")).unwrap();

    let samples = common::snapshot(&[
        "--no-capture",
        "--section",
        "findings,tcp",
        "--count",
        "2",
        "--interval",
        "1s",
        "--netns",
        server_ns,
    ]);
    let pages_after = sockstat_pages();
    let after = ss_recv_queues(server_ns, port);
    let last_sample = samples.last().unwrap();
    let finding = last_sample["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "tcp-memory")
        .unwrap_or_else(|| panic!("no tcp-memory with {queued} B queued: {last_sample}"));
    let summary = finding["summary"].as_str().unwrap();
    eprintln!("{connections} x {bytes} B ({queued} B queued): {summary}");
    assert_eq!(finding["severity"], "warn", "{summary}");
    let pages = last_sample["tcp"]["sockstat"]["tcp_mem_pages"]
        .as_u64()
        .unwrap();
    assert!(
        summary.starts_with(&format!(
            "TCP memory {pages} pages, past the pressure threshold"
        )),
        "{summary}"
    );
    // sockstat is host-wide and others' sockets move it: the same order.
    assert!(
        pages * 2 + 256 > pages_after && pages_after * 2 + 256 > pages,
        "netlens {pages} pages, sockstat {pages_after}"
    );
    let tcp_mem = std::fs::read_to_string(TCP_MEM).unwrap();
    let tcp_mem = tcp_mem.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        finding["hint"]
            .as_str()
            .unwrap()
            .contains(&format!("now \"{tcp_mem}\" pages")),
        "{}",
        finding["hint"]
    );
    assert_eq!(
        last_sample["tcp"]["knobs"]["net.ipv4.tcp_mem"],
        tcp_mem.as_str()
    );
    // The largest queue, as ss shows it, with the server's PID.
    // (Equal queues are listed by address: the lowest peer first.)
    let largest = after.iter().map(|(q, _)| *q).max().unwrap();
    let peer = after
        .iter()
        .filter(|(q, _)| *q == largest)
        .map(|(_, p)| p.parse::<std::net::SocketAddr>().unwrap())
        .min()
        .unwrap();
    let named = format!(
        "largest queues here: {IP_B}:{port} -> {peer} PID {} (python3) Recv-Q {largest} B",
        server.pid()
    );
    assert!(summary.contains(&named), "{summary}\nwanted {named}");
    drop(client);
}

#[test]
fn full_receive_queues_under_a_lowered_tcp_mem() {
    let Some(_alone) = crate::common::need_root_alone(&["ip", "python3", "ss"]) else {
        return;
    };
    let pair = VethPair::new("countfindmem");
    // Host-wide: the test namespace has no entry for it.
    let in_ns = Command::new("ip")
        .args(["netns", "exec", &pair.b.name, "test", "-e", TCP_MEM])
        .status()
        .unwrap();
    assert!(
        !in_ns.success(),
        "tcp_mem is per-namespace here: lower it there instead"
    );
    let original = std::fs::read_to_string(TCP_MEM).unwrap();
    let max: u64 = original.split_whitespace().nth(2).unwrap().parse().unwrap();
    let _restore = crate::common::host_sysctl::HostSysctl::keep(TCP_MEM);
    for (port, connections, bytes) in [(7001, 12, 1 << 20), (7002, 32, 2 << 20)] {
        std::fs::write(TCP_MEM, &original).unwrap();
        fill(&pair, port, connections, bytes, max);
    }
}
