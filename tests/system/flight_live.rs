//! B in the live view (a real pty in tmux): the last minutes the view holds
//! go into an incident bundle in the current directory; the findings line
//! says where; the bundle replays and its pcap holds the packets the Flows
//! tab listed. The view watches
//! a namespace of its own; the only traffic is 20 datagrams on its loopback.

use crate::common;

use common::{NETLENS, Netns};
use std::time::Duration;

#[test]
fn b_freezes_the_live_view_into_a_bundle() {
    if crate::common::need_root(&["ip", "python3", "tcpdump", "tmux"]) {
        return;
    }
    let Some(tmux) = common::tmux::Tmux::new("freeze") else {
        return;
    };
    let ns = Netns::new("livefreeze");
    ns.ip(&["link", "set", "lo", "up"]);
    let dir = std::env::temp_dir().join(format!("netlens-flightlive-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    tmux.start(
        120,
        30,
        &dir,
        &format!(
            "{NETLENS} --netns {} --interval 200ms --iface lo --no-bpf --tab flows",
            ns.name
        ),
    );
    // A few samples and packets to freeze (bounded: 20 datagrams).
    let script = "import socket, time\n\
                  s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
                  for i in range(20):\n\
                  \x20   s.sendto(b'frozen', ('127.0.0.1', 9))\n\
                  \x20   time.sleep(0.1)\n";
    common::ns_exec(&ns.name, &["python3", "-c", script]);
    tmux.send_keys(&["B"]);
    let shown = tmux.wait("the bundle's path", Duration::from_secs(20), |screen| {
        screen
            .lines()
            .find(|line| line.contains("froze ") && line.contains("netlens-incident-"))
            .map(str::to_string)
    });
    let bundles: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(bundles.len(), 1, "{bundles:?}");
    let bundle = &bundles[0];
    let name = bundle.file_name().unwrap().to_string_lossy().to_string();
    assert!(name.ends_with("-manual"), "{name}");
    assert!(shown.contains(&name), "{shown}");
    tmux.send_keys(&["q"]);

    assert!(common::socket_findings::replay_json(bundle).len() >= 3);
    let packets = common::tcpdump_read(&bundle.join("packets.pcapng"));
    assert!(packets.contains("127.0.0.1.9: UDP, length 6"), "{packets}");
    let summary = std::fs::read_to_string(bundle.join("summary.md")).unwrap();
    assert!(summary.contains("# netlens incident: manual"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}
