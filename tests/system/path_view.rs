//! The Path view in tmux at 80x24: `t` on a Sockets row (a connection from
//! the chain's client to its server) traces that path live; Esc closes it.
//! Probes go only to 198.18.0.0/15 inside the test's namespaces.

use crate::common;

use common::path_chain::{Chain, PORT, R1, R2, SERVER};
use common::tmux::Tmux;
use common::{NETLENS, enter_netns};
use std::net::TcpStream;
use std::time::Duration;

#[test]
fn t_on_a_sockets_row_opens_the_path_view_and_esc_closes_it() {
    if crate::common::need_root(&["ip", "iptables", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("path-view") else {
        return;
    };
    let chain = Chain::new("pv");
    // One established connection from the client: the only socket row.
    let client_ns = chain.client.path();
    let _connection = std::thread::spawn(move || {
        enter_netns(&client_ns).expect("enter the client namespace");
        TcpStream::connect((SERVER, PORT)).expect("connect to the server")
    })
    .join()
    .expect("connect thread");
    tmux.start(
        80,
        24,
        &std::env::temp_dir(),
        &format!(
            "{NETLENS} --no-capture --no-bpf --tab sockets --netns {}",
            chain.client.name
        ),
    );
    let patience = Duration::from_secs(30);
    let peer = format!("{SERVER}:{PORT}");
    tmux.wait("the connection's row", patience, |s| {
        s.contains(&peer).then_some(())
    });
    tmux.send_keys(&["t"]);
    let screen = tmux.wait("the path reached", patience, |s| {
        (s.contains(&format!("Path to {peer}")) && s.contains("destination reached"))
            .then(|| s.to_string())
    });
    // The hops in order, each on its row, and nothing past 80 columns.
    let hops: Vec<(usize, &str)> = [R1, R2, SERVER]
        .iter()
        .map(|addr| {
            let at = screen
                .lines()
                .position(|l| l.contains(&format!(" {addr} ")))
                .unwrap_or_else(|| panic!("no row for {addr}:\n{screen}"));
            (at, screen.lines().nth(at).unwrap())
        })
        .collect();
    assert!(hops.windows(2).all(|w| w[0].0 < w[1].0), "{screen}");
    let first = hops[0].1.trim_start_matches(['│', ' ']);
    assert!(first.starts_with("1 "), "{screen}");
    assert!(
        !screen.contains("???"),
        "nothing past the server:\n{screen}"
    );
    assert!(screen.lines().count() <= 24, "{screen}");
    assert!(screen.lines().all(|l| l.chars().count() <= 80), "{screen}");
    assert!(screen.contains("no path findings"), "{screen}");
    // A narrow pane keeps the hop and its loss, without the extra columns.
    tmux.resize(44, 20);
    let narrow = tmux.wait("the narrow table", patience, |s| {
        (s.contains("LOSS%") && !s.contains("STDEV")).then(|| s.to_string())
    });
    assert!(narrow.contains(&SERVER.to_string()), "{narrow}");
    tmux.resize(80, 24);
    tmux.send_keys(&["Escape"]);
    tmux.wait("the Sockets tab again", patience, |s| {
        (!s.contains("Path to") && s.contains(&peer)).then_some(())
    });
}
