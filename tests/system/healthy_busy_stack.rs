//! A healthy busy pair of namespaces raises none of udp-drops,
//! connect-refused or tcp-memory: 3000 short TCP connections opened and
//! closed properly, a UDP reader that keeps up with 1500 datagrams/s, and a
//! bulk TCP transfer, all at once, watched from both sides. The same
//! counters the findings read are checked to have moved (the traffic was
//! real) while the findings stayed quiet.
//!
//! Network safety: traffic only between the two namespaces of this test
//! (198.18.0.1 -> 198.18.0.2); every loop is bounded (3000 connections,
//! 1500 datagrams/s for 6 s, 200 MiB); namespaces and helpers are removed by
//! their guards.

use crate::common;
use crate::common::python_in;

use common::{ChildGuard, IP_B, VethPair};
use serde_json::Value;
use std::time::Duration;

const MINE: [&str; 3] = ["udp-drops", "connect-refused", "tcp-memory"];

fn wait_ready(child: &mut ChildGuard) {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
}

fn snapshot_of(ns: &str) -> std::process::Child {
    common::spawn_snapshot(&[
        "--no-capture",
        "--section",
        "findings,tcp",
        "--count",
        "4",
        "--interval",
        "1s",
        "--netns",
        ns,
    ])
}

fn total(samples: &[Value], name: &str) -> u64 {
    let value = |s: &Value| s["tcp"]["counters"][name].as_u64().unwrap_or(0);
    value(samples.last().unwrap()) - value(&samples[0])
}

#[test]
fn healthy_busy_traffic_raises_none_of_them() {
    if crate::common::need_root(&["ip", "python3"]) {
        return;
    }
    let _heavy = crate::common::heavy();
    let pair = VethPair::new("countfindok");
    let (client, server) = (&pair.a.name, &pair.b.name);
    // A request/response server (one thread per connection), a bulk sink
    // that reads everything, and a UDP reader that keeps up.
    let mut servers = python_in(
        server,
        &format!(
            "import socket,threading,time\n\
             def serve(c):\n\
             \x20   c.recv(100); c.sendall(b'ok'); c.close()\n\
             def rr():\n\
             \x20   s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             \x20   s.bind(('{IP_B}',8090)); s.listen(512)\n\
             \x20   while True: threading.Thread(target=serve,args=(s.accept()[0],)).start()\n\
             def sink():\n\
             \x20   s=socket.socket(); s.bind(('{IP_B}',8091)); s.listen(4); c=s.accept()[0]\n\
             \x20   while c.recv(1<<20): pass\n\
             def udp():\n\
             \x20   u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); u.bind(('{IP_B}',5400))\n\
             \x20   while True: u.recv(2048)\n\
             for f in (rr,sink,udp): threading.Thread(target=f,daemon=True).start()\n\
             print('ready',flush=True); time.sleep(40)"
        ),
    );
    wait_ready(&mut servers);
    let _clients = python_in(
        client,
        &format!(
            "import socket,threading,time\n\
             def short():\n\
             \x20   for i in range(3000):\n\
             \x20       c=socket.create_connection(('{IP_B}',8090)); c.sendall(b'hi')\n\
             \x20       c.recv(10); c.close()\n\
             \x20       time.sleep(0.001)\n\
             def bulk():\n\
             \x20   c=socket.create_connection(('{IP_B}',8091)); b=b'x'*65536\n\
             \x20   for i in range(3200): c.sendall(b)\n\
             \x20   c.close()\n\
             def udp():\n\
             \x20   u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); t0=time.time(); n=0\n\
             \x20   while time.time()<t0+6:\n\
             \x20       while n<int((time.time()-t0)*1500): u.sendto(b'x'*200,('{IP_B}',5400)); n+=1\n\
             \x20       time.sleep(0.005)\n\
             for f in (short,bulk,udp): threading.Thread(target=f).start()\n\
             time.sleep(40)"
        ),
    );
    std::thread::sleep(Duration::from_millis(500));
    let (server_view, client_view) = (snapshot_of(server), snapshot_of(client));
    let (server_samples, client_samples) = (
        common::snapshot_samples(server_view),
        common::snapshot_samples(client_view),
    );
    for (side, samples) in [("server", &server_samples), ("client", &client_samples)] {
        for sample in samples.iter() {
            let raised: Vec<&str> = sample["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|f| f["id"].as_str())
                .filter(|id| MINE.contains(id))
                .collect();
            assert!(raised.is_empty(), "{side}: {raised:?} in {sample}");
        }
    }
    // The traffic was real: connections accepted and datagrams received.
    let accepted = total(&server_samples, "Tcp.PassiveOpens");
    let datagrams = total(&server_samples, "Udp.InDatagrams");
    eprintln!("server: {accepted} accepted, {datagrams} datagrams in the window");
    assert!(accepted >= 200, "{accepted} connections accepted");
    assert!(datagrams >= 1000, "{datagrams} datagrams");
    assert_eq!(total(&server_samples, "Udp.RcvbufErrors"), 0);
}
