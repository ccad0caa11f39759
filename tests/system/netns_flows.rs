//! The Flows table and the flow screen under `--all-netns` (root): a
//! connection from this test into a namespace it made (`nsf-<pid>-0`,
//! 198.18.232.0/24), captured on the host-side veth, shows that
//! namespace's name in the Flows table's NS column at 80x24 and on the
//! flow's screen.
//!
//! Network safety: one TCP connection from this process to a namespace it
//! created (198.18.232.0/24), a few kilobytes; the namespace (and its veth)
//! is deleted on drop, the tmux server and netlens are ended by their
//! guards.

use crate::common;

use common::netns_traffic::Ns;
use common::tmux::Tmux;
use common::*;
use std::io::{Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

/// `name` as a 12-character NS cell shows it: whole, or cut with '…'.
fn cell(name: &str) -> String {
    if name.chars().count() <= 12 {
        return name.to_string();
    }
    let mut cut: String = name.chars().take(11).collect();
    cut.push('…');
    cut
}

#[test]
fn the_flows_table_and_the_flow_screen_name_the_namespace_at_80x24() {
    if crate::common::need_root(&["ip", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("nsflows") else {
        return;
    };
    let ns = Ns::new("nsf", 232, 0);
    let (path, ip) = (ns.ns.path(), ns.ip());
    let listener = thread::spawn(move || {
        enter_netns(&path).unwrap();
        TcpListener::bind(SocketAddrV4::new(ip, 7200)).unwrap()
    })
    .join()
    .unwrap();
    let command = format!(
        "env NO_COLOR=1 {NETLENS} --all-netns --no-bpf --config /dev/null --tab flows \
         --iface {} --interval 1s",
        ns.host_dev()
    );
    tmux.start(80, 24, &std::env::temp_dir(), &command);
    // The capture runs (the tab bar, "Flows", is on the first frame,
    // drawn before the capture starts).
    tmux.wait("the flow table", Duration::from_secs(20), |s| {
        s.contains("kernel drops").then_some(())
    });
    let mut client = TcpStream::connect(SocketAddrV4::new(ip, 7200)).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.write_all(&[7u8; 4000]).unwrap();
    let mut got = [0u8; 4000];
    server.read_exact(&mut got).unwrap();
    let shown = cell(ns.name());
    let to = format!("{ip}:7200");
    let row = tmux.wait(
        "the flow's row with its namespace",
        Duration::from_secs(20),
        |s| {
            s.lines()
                .find(|l| l.contains(&to) && l.contains(&shown))
                .map(str::to_string)
        },
    );
    let screen = tmux.screen();
    let header = screen
        .lines()
        .find(|l| l.contains("FLOW") && l.contains("PKTS"))
        .unwrap_or_else(|| panic!("no header:\n{screen}"));
    // The NS column is the first, and the cell starts the row.
    assert!(header.trim_start().starts_with("NS"), "{header}");
    assert!(row.trim_start().starts_with(&shown), "{row}");
    assert!(screen.lines().all(|l| l.chars().count() <= 80));
    // The flow screen names the namespace whole. The veth carries the
    // host's own IPv6 chatter too (router solicitations, MLD), so the
    // filter leaves only this flow before Enter opens the selected row.
    tmux.send_keys(&["/"]);
    tmux.type_text("t", "port:7200");
    tmux.send_keys(&["Enter"]);
    tmux.wait("only the flow", Duration::from_secs(10), |s| {
        (s.contains(" Flows: 1, ") && s.contains("filter \"port:7200\"")).then_some(())
    });
    tmux.send_keys(&["Enter"]);
    let line = tmux.wait(
        "the flow screen's namespace",
        Duration::from_secs(10),
        |s| {
            s.lines()
                .find(|l| l.starts_with("namespace"))
                .map(str::to_string)
        },
    );
    assert!(line.contains(ns.name()), "{line}");
    tmux.send_keys(&["q"]);
    drop((client, server));
}
