//! Terminal handling: Esc and a key in one read, suspend and resume,
//! a huge terminal's memory, a burst of input (issues 24 and 25).

use super::*;

#[test]
fn esc_then_an_f_key_in_one_read_is_esc_then_that_key() {
    let dir = crate::common::scratch_dir_for("terminal", "esc");
    let state = dir.join("state");
    let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_netlens"));
    command.args(["--interval", "200ms"]);
    command.cwd(&dir);
    command.env("XDG_STATE_HOME", &state);
    let mut session = Session::start_command(command, 100, 30);
    session.wait_for("rxpck/s");

    // Esc F1: help (crossterm read Esc, O, P).
    session.send_bytes(b"\x1b\x1bOP");
    session.wait_for("Keys (? or Esc closes");
    session.send_bytes(b"\x1b");
    session.wait_for("rxpck/s");

    // Esc F3 must not be Esc, O, R: R would start a recording. Esc F5 must
    // not be Esc, [, 1, 5, ~: 5 would switch to the DNS tab.
    session.send_bytes(b"\x1b\x1bOR");
    session.send_bytes(b"\x1b");
    session.send_bytes(b"\x1b\x1b[15~");
    session.send_bytes(b"\x1b");
    // Esc Down, Esc PageUp, then Esc F1 as a marker that all were read.
    session.send_bytes(b"\x1b\x1b[B\x1b\x1b[5~\x1b\x1bOP");
    session.wait_for("Keys (? or Esc closes");
    session.send_bytes(b"\x1b");
    session.wait_for("rxpck/s");
    let screen = session.contents();
    assert!(!screen.contains("● REC"), "a recording started:\n{screen}");
    assert!(
        !state.exists() && std::fs::read_dir(&dir).unwrap().count() == 0,
        "a recording file was created"
    );

    // Esc F10 quits.
    session.send_bytes(b"\x1b\x1b[21~");
    assert!(session.wait_exit().success());
    session.assert_restored();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The process state letter of `pid` (R, S, T for stopped...), if alive.
fn process_state(pid: libc::pid_t) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(") ").next()?.chars().next()
}

/// netlens started from an interactive bash (job control) in the pty.
fn netlens_under_bash(session: &mut Session) -> libc::pid_t {
    let bash = session.pid();
    session.send(&format!(
        "{} --interval 200ms\r",
        env!("CARGO_BIN_EXE_netlens")
    ));
    session.wait_for("rxpck/s");
    let children = std::fs::read_to_string(format!("/proc/{bash}/task/{bash}/children")).unwrap();
    children
        .split_whitespace()
        .next()
        .expect("bash has a child")
        .parse()
        .unwrap()
}

#[test]
fn ctrl_z_and_sigtstp_suspend_like_htop_and_fg_resumes() {
    let mut command = CommandBuilder::new("bash");
    command.args(["--norc", "--noprofile", "-i"]);
    command.env("PS1", "prompt$ ");
    command.cwd(std::env::temp_dir());
    let mut session = Session::start_command(command, 100, 30);
    session.wait_for("prompt$");
    for stop in ["ctrl-z", "sigtstp"] {
        let pid = netlens_under_bash(&mut session);
        let before = session.raw_len();
        if stop == "ctrl-z" {
            // Raw mode: the terminal sends the byte, netlens stops itself.
            session.send_bytes(b"\x1a");
        } else {
            // SAFETY: kill(2) on the netlens this test started.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGTSTP) }, 0);
        }
        wait_until(&format!("{stop}: netlens stopped"), || {
            process_state(pid) == Some('T')
        });
        wait_until(&format!("{stop}: the shell's prompt"), || {
            session.raw_since(before).contains("prompt$")
        });
        let output = session.raw_since(before);
        assert!(
            output.contains("\x1b[?1049l"),
            "{stop}: alternate screen kept"
        );
        assert!(output.contains("\x1b[?25h"), "{stop}: cursor left hidden");
        assert!(!session.screen.lock().unwrap().screen().alternate_screen());

        session.send("fg\r");
        wait_until(&format!("{stop}: the screen back"), || {
            session.screen.lock().unwrap().screen().alternate_screen()
                && session.contents().contains("rxpck/s")
        });
        // Raw mode again: q alone quits, no Enter.
        session.send("q");
        wait_until(&format!("{stop}: netlens quit on q"), || {
            process_state(pid).is_none()
        });
        session.wait_for("prompt$");
    }
    session.send("exit\r");
    session.wait_exit();
}

fn rss_kib(pid: libc::pid_t) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_huge_terminal_costs_bounded_memory_and_shrinking_gives_it_back() {
    let session = Session::start(&["--interval", "200ms"], 100, 30);
    session.wait_for("rxpck/s");
    std::thread::sleep(Duration::from_secs(1));
    let before = rss_kib(session.pid());
    // Only the pty: the test's own screen stays small.
    let huge = PtySize {
        rows: 2000,
        cols: 4000,
        pixel_width: 0,
        pixel_height: 0,
    };
    session.master.resize(huge).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let at_huge = rss_kib(session.pid());
    session
        .master
        .resize(PtySize {
            rows: 30,
            cols: 100,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let after = rss_kib(session.pid());
    eprintln!("RSS: {before} KiB, {at_huge} KiB at 4000x2000, {after} KiB after");
    // 4000x2000 cells were two 380 MB buffers; the frame is capped.
    assert!(at_huge < before + 200 * 1024, "{at_huge} KiB at 4000x2000");
    assert!(
        after < 2 * before + 32 * 1024,
        "{after} KiB after shrinking"
    );
    session.signal(libc::SIGTERM);
}

#[test]
fn a_120000_character_burst_leaves_esc_and_q_working() {
    let mut session = Session::start(&["--interval", "200ms"], 100, 30);
    session.wait_for("rxpck/s");
    session.send("/");
    session.wait_for("filter:");
    let burst = "a".repeat(2000);
    for _ in 0..60 {
        session.send(&burst);
    }
    session.wait_for("[full: 300 characters at most]");
    session.send("\x1b");
    session.send("q");
    // A liveness check (the old code took over 40 s here), not a benchmark.
    assert!(session.wait_exit().success());
    session.assert_restored();
}
