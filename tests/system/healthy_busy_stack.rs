//! A healthy busy pair of namespaces raises nothing at warn or above:
//! 3000 short TCP connections opened and closed properly, a UDP reader
//! that keeps up with 1500 datagrams/s, a bulk TCP transfer and the
//! server's lookups that a real DNS server on its loopback answers, all at
//! once, watched from both sides
//! with the capture on. The receive work runs on one CPU, then on the
//! other (RPS on both veths: where a single-queue NIC's interrupt puts it).
//! The same counters the findings read are checked to have moved (the
//! traffic was real) while the findings stayed quiet.
//!
//! Network safety: traffic only between the two namespaces of this test
//! (198.18.0.1 -> 198.18.0.2); every loop is bounded (3000 connections,
//! 1500 datagrams/s for 6 s, 200 MiB, 200 queries/s for 6 s); namespaces and
//! helpers are removed by their guards.

use crate::common;
use crate::common::python_in;

use common::dns_server::DnsServer;
use common::{ChildGuard, DEV_A, DEV_B, IP_B, VethPair};
use serde_json::Value;
use std::time::Duration;

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

/// Puts the receive work of both veths on the CPUs of `mask` (RPS).
fn place_receive_work(pair: &VethPair, mask: &str) {
    for (ns, dev) in [(&pair.a.name, DEV_A), (&pair.b.name, DEV_B)] {
        let path = format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus");
        let set = common::ns_exec(
            ns,
            &["sh", "-c", &format!("echo {mask} > {path} && cat {path}")],
        );
        let now = String::from_utf8_lossy(&set.stdout);
        assert_eq!(
            now.trim().trim_start_matches('0'),
            mask,
            "{dev}: rps_cpus {now}"
        );
    }
}

#[test]
fn healthy_busy_traffic_raises_nothing_on_either_cpu() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "python3"]) else {
        return;
    };
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("SKIP healthy_busy_traffic_raises_nothing_on_either_cpu: one CPU");
        return;
    }
    let pair = VethPair::new("countfindok");
    pair.b.ip(&["link", "set", "lo", "up"]);
    let path = pair.b.path();
    // A real DNS server in the server's namespace, on its loopback.
    let dns = std::thread::spawn(move || {
        common::enter_netns(&path).expect("setns");
        DnsServer::start()
    })
    .join()
    .unwrap();
    for mask in ["1", "2"] {
        place_receive_work(&pair, mask);
        busy_and_quiet(&pair, mask, &dns);
    }
}

/// The healthy traffic for about 6 s; no finding at warn or above in
/// either side's samples.
fn busy_and_quiet(pair: &VethPair, mask: &str, dns: &DnsServer) {
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
    // The server host's own lookups, to its resolver on loopback.
    let _lookups = python_in(
        server,
        &format!(
            "import socket,time\n\
             u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); u.settimeout(1); t0=time.time(); n=0\n\
             q=bytes.fromhex('000001000001000000000000'+'0466617374047465737400'+'00010001')\n\
             while time.time()<t0+6:\n\
             \x20   n+=1; u.sendto((n%65536).to_bytes(2,'big')+q[2:],('127.0.0.1',{}))\n\
             \x20   try: u.recv(512)\n\
             \x20   except OSError: pass\n\
             \x20   time.sleep(0.005)\n",
            dns.addr.port()
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
            let raised: Vec<&Value> = sample["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["severity"] != "info")
                .collect();
            assert!(
                raised.is_empty(),
                "{side}, receive work on CPU mask {mask}: {raised:?}"
            );
        }
    }
    // The traffic was real: connections accepted and datagrams received.
    let accepted = total(&server_samples, "Tcp.PassiveOpens");
    let datagrams = total(&server_samples, "Udp.InDatagrams");
    let answered = dns.answered.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "CPU mask {mask}: {accepted} accepted, {datagrams} datagrams in the window, \
         {answered} DNS answers so far"
    );
    assert!(accepted >= 200, "{accepted} connections accepted");
    assert!(answered >= 200, "{answered} DNS queries answered");
    assert!(datagrams >= 1000, "{datagrams} datagrams");
    assert_eq!(total(&server_samples, "Udp.RcvbufErrors"), 0);
}
