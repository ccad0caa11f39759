//! The Load tab in the real event loop: a run watched from another tab,
//! a run in the watched namespace, tcp mode against a real iperf3.

use super::*;

/// The Load tab in the real event loop: a run started from the form reports
/// over its channel while the user is on another tab, then its result stays.
#[test]
fn load_tab_runs_a_load_watched_from_another_tab() {
    use netlens::load::serve::{ServeSpec, Server};
    let server = Server::start(
        &ServeSpec {
            bind: "127.0.0.1".parse().unwrap(),
            port: 0,
            delay: Duration::ZERO,
            body: 100,
        },
        Arc::new(|_, _| {}),
    )
    .expect("an in-process load server on 127.0.0.1");
    let mut session = Session::start(&["--tab", "load"], 100, 30);
    session.wait_for("Fill in the form");
    let clear = "\x7f".repeat(30);
    // target
    session.send("j\r");
    session.send(&format!("{clear}{}\r", server.addr));
    // duration
    session.send("j\r");
    session.send(&format!("{clear}3s\r"));
    session.wait_for("3s");
    session.send("r");
    session.wait_for("LOAD tcp");
    // The Interfaces tab shows the run in the header while it goes.
    session.send("1");
    session.wait_for("rxpck/s");
    session.wait_for("LOAD tcp");
    session.send("7");
    session.wait_for("receiver");
    session.wait_for("#1");
    session.send("q");
    let status = session.wait_exit();
    assert!(status.success(), "{status:?}");
    session.assert_restored();
    server.stop();
}

/// With --netns, a run from the Load tab happens in the watched namespace
/// (as `netlens load --netns` does): its server listens there only.
#[test]
fn load_tab_runs_in_the_watched_namespace() {
    use netlens::load::serve::{ServeSpec, Server};
    if crate::common::need_root(&["ip"]) {
        return;
    }
    let ns = common::Netns::new("ptyload");
    ns.ip(&["link", "set", "lo", "up"]);
    let path = ns.path();
    let server = std::thread::spawn(move || {
        common::enter_netns(&path).expect("setns");
        let spec = ServeSpec {
            bind: "127.0.0.1".parse().unwrap(),
            port: 0,
            delay: Duration::ZERO,
            body: 100,
        };
        Server::start(&spec, Arc::new(|_, _| {})).expect("a load server in the namespace")
    })
    .join()
    .expect("server thread");
    let mut session = Session::start(
        &["--netns", &ns.name, "--no-capture", "--tab", "load"],
        100,
        30,
    );
    session.wait_for("Fill in the form");
    let clear = "\x7f".repeat(30);
    session.send("j\r");
    session.send(&format!("{clear}{}\r", server.addr));
    session.send("j\r");
    session.send(&format!("{clear}1s\r"));
    session.wait_for("1s");
    session.send("r");
    session.wait_for("receiver");
    assert!(
        !session.contents().contains("cannot connect"),
        "{}",
        session.contents()
    );
    session.send("q");
    let status = session.wait_exit();
    assert!(status.success(), "{status:?}");
    server.stop();
}

/// Issue 24: the Load tab's tcp mode against a real `iperf3 -s` (on
/// 127.0.0.1) speaks iperf3's protocol and shows the iperf3 server's counts
/// (before, the run failed or had no receiver report).
#[test]
fn load_tab_tcp_runs_against_a_real_iperf3_server() {
    // Its turn first: the tools it then runs go beside the others.
    let _heavy = crate::common::heavy();
    if common::need(&["iperf3"]) {
        return;
    }
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let iperf3 = std::process::Command::new("iperf3")
        .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port.to_string()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn iperf3 -s");
    let _iperf3 = common::ChildGuard(iperf3);
    let deadline = Instant::now() + Duration::from_secs(5);
    // Not by connecting: iperf3 -s -1 would take that for its one test.
    let listening = || {
        std::process::Command::new("ss")
            .args(["-Hltn", &format!("sport = :{port}")])
            .output()
            .is_ok_and(|o| !o.stdout.is_empty())
    };
    while !listening() {
        assert!(Instant::now() < deadline, "iperf3 -s did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut session = Session::start(&["--no-capture", "--tab", "load"], 100, 30);
    session.wait_for("Fill in the form");
    let clear = "\x7f".repeat(30);
    session.send("j\r");
    session.send(&format!("{clear}127.0.0.1:{port}\r"));
    session.send("j\r");
    session.send(&format!("{clear}1s\r"));
    session.wait_for("1s");
    session.send("r");
    session.wait_for("iperf3 server at");
    session.wait_for("receiver");
    let screen = session.contents();
    assert!(!screen.contains("no report"), "{screen}");
    session.send("q");
    let status = session.wait_exit();
    assert!(status.success(), "{status:?}");
}
