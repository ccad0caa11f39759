//! A healthy busy host raises none of close-wait, port-exhaustion or
//! connect-timeout: thousands of short TCP connections closed properly
//! (the client closing first, leaving TIME_WAIT; and the server closing
//! first, each client socket passing through CLOSE_WAIT for an instant),
//! a UDP reader that keeps up, and a bulk TCP transfer, while snapshots of
//! both namespaces watch.
//!
//! Network safety: traffic only between this test's two namespaces
//! (198.18.0.1 <-> 198.18.0.2); 6,000 connections, 20,000 datagrams and
//! 20 MiB at most, paced over about 5 s; helpers end by themselves and are
//! killed by PID on drop; the namespaces go on drop.

use crate::common;
use crate::common::python_in;

use common::socket_findings::{
    closing_server, findings, finish_snapshot, start_snapshot, wait_ready,
};
use common::transfer::{PAYLOAD, received, receiver, send};
use common::{IP_A, IP_B, VethPair};
use std::net::SocketAddrV4;

const MINE: [&str; 3] = ["close-wait", "port-exhaustion", "connect-timeout"];

#[test]
fn a_busy_healthy_host_raises_none_of_them() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "python3", "ss"]) else {
        return;
    };
    let pair = VethPair::new("sockfind-ok");
    // :80 closes when its client has closed; :81 answers and closes first.
    let _closing = closing_server(&pair.b.name, IP_B, &[80]);
    let mut answering = python_in(
        &pair.b.name,
        &format!(
            "import socket,time\n\
             s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('{IP_B}',81)); s.listen(4096); s.settimeout(1)\n\
             print('ready',flush=True)\n\
             end=time.time()+30\n\
             while time.time()<end:\n\
             \x20   try: c=s.accept()[0]\n\
             \x20   except socket.timeout: continue\n\
             \x20   c.sendall(b'HTTP/1.0 200 OK\\r\\n\\r\\nok'); c.close()"
        ),
    );
    wait_ready(&mut answering);
    let bulk = receiver(&pair.b.name);
    let watch_a = start_snapshot(&pair.a.name, 6);
    let watch_b = start_snapshot(&pair.b.name, 6);
    // 3,000 connections each way, in 100s every 0.1 s (about 5 s).
    let mut clients = python_in(
        &pair.a.name,
        &format!(
            "import socket,time\n\
             print('ready',flush=True)\n\
             for i in range(3000):\n\
             \x20   a=socket.create_connection(('{IP_B}',80),timeout=5); a.sendall(b'GET'); a.close()\n\
             \x20   b=socket.create_connection(('{IP_B}',81),timeout=5)\n\
             \x20   while b.recv(4096): pass\n\
             \x20   b.close()\n\
             \x20   if i%100==99: time.sleep(0.1)"
        ),
    );
    wait_ready(&mut clients);
    let udp = {
        let (a, b) = (pair.a.path(), pair.b.path());
        std::thread::spawn(move || {
            common::udp_traffic(
                &a,
                IP_A,
                &b,
                SocketAddrV4::new(IP_B, 5300),
                20_000,
                200,
                5_000.0,
            )
        })
    };
    let sent = send(&pair.a.name);
    let udp = udp.join().unwrap();
    let lines_a = finish_snapshot(watch_a);
    let lines_b = finish_snapshot(watch_b);
    assert!(
        clients.0.wait().unwrap().success(),
        "the short connections failed"
    );
    assert_eq!(received(bulk), PAYLOAD);
    assert!(sent >= PAYLOAD);
    assert_eq!(udp.received, udp.sent, "the UDP reader kept up");
    for (side, lines) in [("client", &lines_a), ("server", &lines_b)] {
        for id in MINE {
            assert!(
                findings(lines, id).is_empty(),
                "{side}: {id}: {:?}",
                findings(lines, id)
            );
        }
    }
}
