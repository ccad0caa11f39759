//! The live view's first screen has data: the namespace's interfaces and
//! sockets from the first sample, taken before the eBPF programs load, and
//! rates from a second sample a quarter second later, long before the first
//! interval (30 s here) has passed.
//!
//! Network safety: one listener on 198.18.0.1 in a namespace the test
//! makes; no packet is sent.

use crate::common::{self, NETLENS, VethPair, tmux::Tmux};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const INTERVAL_S: u64 = 30;
const PORT: u16 = 7391;
const BACKLOG: i32 = 37;

#[test]
fn the_first_screen_shows_interfaces_and_sockets_before_the_first_interval() {
    if common::need_root(&["ip", "tmux", "ss"]) {
        return;
    }
    let Some(tmux) = Tmux::new("first") else {
        return;
    };
    let pair = VethPair::new("fscr");
    // A listener with a backlog of its own: ss shows it as Send-Q.
    let (ready_tx, ready) = mpsc::channel();
    let (stop_tx, stop) = mpsc::channel::<()>();
    let path = pair.a.path();
    let holder = std::thread::spawn(move || {
        common::enter_netns(&path).unwrap();
        let listener = TcpListener::bind((common::IP_A, PORT)).unwrap();
        // SAFETY: listen() again on a valid listening socket sets its backlog.
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), BACKLOG) }, 0);
        ready_tx.send(()).unwrap();
        let _ = stop.recv_timeout(Duration::from_secs(60));
    });
    ready.recv().unwrap();
    let ss = common::ns_exec(
        &pair.a.name,
        &["ss", "-tlnH", "sport", "=", &PORT.to_string()],
    );
    let ss = String::from_utf8_lossy(&ss.stdout).into_owned();
    let send_q = ss.split_whitespace().nth(2).expect("ss lists the listener");
    assert_eq!(send_q, BACKLOG.to_string(), "{ss}");

    let dir = common::scratch_dir("first-screen");
    let started = Instant::now();
    tmux.start(
        80,
        24,
        &dir,
        &format!(
            "{NETLENS} --netns {} --interval {INTERVAL_S}s --no-capture",
            pair.a.name
        ),
    );
    // The first sample: every interface of the namespace, with its state,
    // its rates not known yet.
    let first = tmux.wait("the interfaces", Duration::from_secs(10), |s| {
        let row = |name: &str| s.lines().find(|l| l.starts_with(name)).map(str::to_string);
        Some((row(common::DEV_A)?, row("lo")?, s.to_string()))
    });
    assert!(first.0.contains(" up "), "{}", first.2);
    // The second sample, shortly after: rates in the rows and the header.
    let rates = tmux.wait("the rates", Duration::from_secs(10), |s| {
        let row = s.lines().find(|l| l.starts_with(common::DEV_A))?;
        (row.contains("0.0") && s.contains(" RX ")).then(|| s.to_string())
    });
    // The Sockets tab: the listener, its backlog as ss shows it.
    tmux.send_keys(&["2"]);
    let local = format!("{}:{PORT}", common::IP_A);
    let sockets = tmux.wait("the listener", Duration::from_secs(10), |s| {
        s.lines()
            .find(|l| l.contains(&local) && l.contains("LISTEN"))
            .map(str::to_string)
    });
    assert!(
        sockets.split_whitespace().any(|w| w == send_q),
        "the backlog {send_q} not in: {sockets}"
    );
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(INTERVAL_S),
        "took {took:?}, the first interval is {INTERVAL_S} s:\n{rates}"
    );
    eprintln!("interfaces, rates and the listener shown {took:?} after start");
    stop_tx.send(()).unwrap();
    holder.join().unwrap();
}
