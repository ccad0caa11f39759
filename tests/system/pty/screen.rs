//! The screen: Interfaces drawn, tabs switched, help, resizes down to
//! 20x5, signals, the tab asked for, colour, replay stepping.

use super::*;

#[test]
fn shows_interfaces_switches_tabs_opens_help_and_quits_cleanly() {
    let mut session = Session::start(&[], 100, 30);
    session.wait_for("rxpck/s");
    session.wait_for("lo ");
    session.wait_for("1 Ifaces");

    session.send("2");
    session.wait_for("RcvQ/acc");
    session.send("\t");
    session.wait_for("ESTABLISHED");
    session.wait_for("tcp_max_syn_backlog");
    session.send("1");
    session.wait_for("rxpck/s");

    session.send("?");
    session.wait_for("Keys (? or Esc closes");
    session.wait_for("go to tab 1-9");
    session.send("?");
    session.wait_for("rxpck/s");

    // Enter opens the detail of the selected interface, Esc closes it.
    session.send("\r");
    session.wait_for("bits/s 5m");
    session.send("\x1b");
    session.wait_for("rxpck/s");

    session.send("q");
    let status = session.wait_exit();
    assert!(status.success(), "{status:?}");
    session.assert_restored();
}

#[test]
fn survives_resizes_down_to_20x5() {
    let mut session = Session::start(&["--no-color"], 80, 24);
    session.wait_for("rxpck/s");
    for (cols, rows) in [(40, 10), (20, 5), (12, 3), (120, 40), (80, 24)] {
        session.resize(cols, rows);
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            session.child.try_wait().unwrap().is_none(),
            "exited at {cols}x{rows}"
        );
    }
    session.wait_for("rxpck/s");
    session.send("q");
    assert!(session.wait_exit().success());
    session.assert_restored();
}

#[test]
fn sigterm_and_sighup_restore_the_terminal() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let mut session = Session::start(&[], 80, 24);
        session.wait_for("rxpck/s");
        session.signal(signal);
        session.wait_exit();
        session.assert_restored();
    }
}

#[test]
fn starts_on_the_tab_asked_for() {
    let mut session = Session::start(&["--tab", "dns"], 80, 24);
    session.wait_for("n adds a probe");
    session.send("q");
    assert!(session.wait_exit().success());
}

#[test]
fn conntrack_tab_asks_the_sampler_for_entries() {
    let mut session = Session::start(&["--tab", "conntrack"], 100, 30);
    session.wait_for("buckets");
    // The table header appears only once a dump arrived: the tab's demand
    // reached the sampler thread.
    if common::is_root() {
        session.wait_for("ORIG SRC");
    }
    session.send("1");
    session.wait_for("rxpck/s");
    session.send("q");
    assert!(session.wait_exit().success());
    session.assert_restored();
}

fn colour_escapes(env: &[(&str, &str)], args: &[&str]) -> (bool, bool) {
    let mut session = Session::start_with_env(args, 80, 24, env);
    session.wait_for("rxpck/s");
    session.send("q");
    session.wait_exit();
    let raw = String::from_utf8_lossy(&session.raw.lock().unwrap()).to_string();
    // crossterm writes a foreground colour as SGR 38;5;N.
    (raw.contains("\x1b[38;5;"), raw.contains("\x1b[7m"))
}

#[test]
fn no_color_env_and_flag_mean_no_colour_but_reverse_selection() {
    assert_eq!(
        colour_escapes(&[], &[]),
        (true, true),
        "colour is on by default"
    );
    assert_eq!(colour_escapes(&[("NO_COLOR", "1")], &[]), (false, true));
    assert_eq!(colour_escapes(&[], &["--no-color"]), (false, true));
}

#[test]
fn replay_opens_steps_and_quits_cleanly() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v1.0-quiet.nlrec");
    let mut session = Session::start(&["replay", fixture], 120, 30);
    session.wait_for("REPLAY ‖ 1x");
    session.wait_for("#1/6");
    session.send("\x1b[C");
    session.wait_for("#2/6");
    session.send("G");
    session.wait_for("#6/6");
    session.send("\x1b[D");
    session.wait_for("#5/6");
    session.send("q");
    assert!(session.wait_exit().success());
    session.assert_restored();
}
