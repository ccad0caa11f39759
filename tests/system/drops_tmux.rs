//! The Drops tab on real drops, in tmux: datagrams to a closed UDP port in
//! a namespace this test creates (198.18.0.0/15 on its loopback, bounded)
//! show as a NO_SOCKET row with a rate in `netlens --netns NS`'s Drops tab,
//! and as the drop:NO_SOCKET finding in the findings list.

use crate::common;

use common::{ChildGuard, NETLENS, Netns};
use std::process::{Command, Stdio};

const ADDR: &str = "198.18.77.1";
/// Nothing listens here.
const CLOSED_PORT: u16 = 9;

#[test]
fn closed_port_drops_show_in_the_drops_tab_and_the_findings() {
    if crate::common::need_root(&["ip", "python3", "tmux"]) {
        return;
    }
    let Some(tmux) = common::tmux::Tmux::new("dropsui-tab") else {
        return;
    };
    let ns = Netns::new("dropsui-drops");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", &format!("{ADDR}/24"), "dev", "lo"]);
    // 200 datagrams a second for at most 30 s (6000 in all), to a closed
    // port on the namespace's own address.
    let script = format!(
        "import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         for _ in range(300):\n    for _ in range(20): s.sendto(b'x',('{ADDR}',{CLOSED_PORT}))\n    time.sleep(0.1)\n"
    );
    let _sender = ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &ns.name, "python3", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn the sender"),
    );
    let command = format!(
        "env TZ=UTC NO_COLOR=1 TERM=tmux-256color {NETLENS} --config /dev/null --no-capture \
         --netns {} --tab drops",
        ns.name
    );
    tmux.session("drops", 80, 24, &command);
    // A NO_SOCKET row at __udp4_lib_rcv with a rate near 200/s.
    let rate_of = |line: &str| -> Option<f64> {
        let mut words = line.split_whitespace();
        (words.next()? == "NO_SOCKET").then_some(())?;
        words.next()?.parse::<f64>().ok()
    };
    let screen = tmux.wait_for("drops", "a NO_SOCKET row with a rate", |lines| {
        lines
            .iter()
            .any(|l| rate_of(l).is_some_and(|r| r > 50.0) && l.contains("udp"))
    });
    let text = screen.join("\n");
    let row = screen.iter().find(|l| rate_of(l).is_some()).unwrap();
    let rate = rate_of(row).unwrap();
    assert!((100.0..=400.0).contains(&rate), "{rate}/s\n{text}");
    assert!(row.contains("lo") || row.contains("udp:9"), "{text}");
    // The selected row's meaning, whole, under the table.
    assert!(
        text.contains("NO_SOCKET: no socket for the packet"),
        "{text}"
    );
    // The counter that counts the same datagrams moved too.
    assert!(
        screen
            .iter()
            .any(|l| l.starts_with("Udp.NoPorts") && !l.contains(" 0.0 ")),
        "{text}"
    );
    // The finding, in the findings list.
    tmux.keys("drops", &["!"]);
    // The list itself, not the header's findings line, which names the
    // worst finding too (and may show before `!` is handled).
    let findings = tmux.wait_for("drops", "drop:NO_SOCKET in the findings", |lines| {
        lines.iter().any(|l| l.contains(" Findings "))
            && lines
                .iter()
                .any(|l| l.contains("drop:NO_SOCKET") && l.contains(&ns.name))
    });
    let findings = findings.join("\n");
    assert!(
        findings.contains(&format!("in netns {}", ns.name)),
        "{findings}"
    );
    assert!(
        !findings.contains("counter:Udp.NoPorts"),
        "the reason suppresses the counter that counts the same drops\n{findings}"
    );
    tmux.keys("drops", &["q"]);
}
