//! Never stale unseen. A part that blocks for real (a
//! container look-up on a user's podman API socket whose backlog is full)
//! delays nothing but itself, and the samples say that part is late; the live view's
//! header turns "stale" only when the whole sample is: the sampler thread
//! itself stopped (ptrace, that one thread only), and "live" again once it
//! goes on.

use super::names::setup::{Contained, FullBacklog, MadeDir, TestUser, container_id};
use super::names::snapshot;
use crate::common::tmux::Tmux;
use serde_json::Value;
use std::sync::mpsc::Sender;
use std::time::Duration;

/// The late parts a sample names.
fn late_parts(sample: &Value) -> Vec<String> {
    sample["late"]
        .as_array()
        .map(|late| {
            late.iter()
                .map(|l| l["part"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_blocked_lookup_is_late_alone_and_a_stopped_sampler_is_stale() {
    let test = "a_blocked_lookup_is_late_alone_and_a_stopped_sampler_is_stale";
    // Heavy: it asserts that no other part is ever late, and beside a
    // flood on two cores the owners' pass over /proc is (a true finding,
    // not this one).
    let Some(_heavy) = crate::common::need_root_heavy(&["useradd", "userdel", "setpriv", "tmux"])
    else {
        return;
    };
    // A rootless podman user without a store: netlens asks their API
    // socket, whose backlog is full, so the look-up waits (for its own
    // 500 ms deadline), longer than the 200 ms the sampler gives it.
    let user = TestUser::new("s");
    let dir = MadeDir::new(format!("/run/user/{}/podman", user.uid).into(), user.uid);
    let _stuck = FullBacklog::new(&dir.path.join("podman.sock"));
    let id = container_id("57a1e");
    let Some(process) = Contained::start(test, &user, &format!("libpod-{id}.scope")) else {
        return;
    };

    // Every sample comes on time and fresh; the ones taken while the
    // look-up waits name the containers part late, with its age; nothing
    // else is late by the look-up's wait. The first look-up (late in its own sample) may
    // fall in the unprinted baseline; its retry, RETRY (5 s) later, is
    // not waited for and ends with its 500 ms connect deadline, so the
    // sample 300 ms after it is the one that shows it late: 20 samples
    // 300 ms apart hold a retry.
    let extra = ["--interval", "300ms", "--count", "20"];
    let (samples, _) = snapshot(&extra, Duration::from_secs(30));
    assert_eq!(samples.len(), 20);
    let mut late_ages = Vec::new();
    for sample in &samples {
        for late in sample["late"].as_array().into_iter().flatten() {
            let age = late["age_ms"].as_u64().unwrap();
            if late["part"] == "containers" {
                late_ages.push(age);
            } else {
                // Another part may run late on a loaded host (the suite's
                // floods on two cores), never by the look-up's wait: that
                // would be its 500 ms deadline or more.
                assert!(
                    age < 500,
                    "{late_parts:?} late: {}",
                    sample["late"],
                    late_parts = late_parts(sample)
                );
            }
        }
        let age = sample["age"].as_f64().unwrap();
        assert!(age < 0.5, "the sample was {age} s old when written");
        let container = super::names::container_of(sample, process.pid());
        assert_eq!(container["id"], id.as_str(), "{container}");
    }
    assert!(!late_ages.is_empty(), "no sample marked containers late");
    assert!(late_ages.iter().all(|age| *age >= 200), "{late_ages:?}");
    let gaps: Vec<f64> = samples
        .windows(2)
        .map(|s| s[1]["t"].as_f64().unwrap() - s[0]["t"].as_f64().unwrap())
        .collect();
    eprintln!("full API backlog: containers late at {late_ages:?} ms; gaps {gaps:?}");
    assert!(gaps.iter().all(|gap| *gap < 0.9), "{gaps:?}");

    live_view_turns_stale_only_with_its_sampler(test);
}

/// The live view in tmux: "live" with the late part and its age in the
/// header; "stale" once its sampler thread is stopped; "live" again after.
fn live_view_turns_stale_only_with_its_sampler(test: &str) {
    let Some(tmux) = Tmux::new("stale") else {
        return;
    };
    let home = std::env::temp_dir().join(format!("netlens-stale-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let command = format!(
        "env TERM=tmux-256color HOME={} {} --no-capture --no-bpf --interval 500ms",
        home.display(),
        crate::common::NETLENS
    );
    tmux.start(220, 30, &home, &command);
    let header = |screen: &str| screen.lines().next().unwrap_or("").to_string();
    // The look-up is retried every 5 s, late each time.
    let late = tmux.wait("live with containers late", Duration::from_secs(20), |s| {
        let line = header(s);
        (line.contains("live") && line.contains("late containers")).then_some(line)
    });
    assert!(!late.contains("stale"), "{late}");

    let pane_pid = tmux.run(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
    let Some(netlens) = netlens_in(pane_pid.trim()) else {
        panic!("no netlens process under pane pid {pane_pid}");
    };
    let Some(sampler) = thread_named(netlens, "sampler") else {
        panic!("netlens {netlens} has no thread named sampler");
    };
    let Some(stopped) = StoppedThread::stop(sampler) else {
        eprintln!("SKIP {test} (stale half): cannot ptrace thread {sampler}");
        let _ = std::fs::remove_dir_all(&home);
        return;
    };
    // Two intervals (1 s) without a sample: stale, its age counting.
    let stale = tmux.wait("stale", Duration::from_secs(10), |s| {
        let line = header(s);
        line.contains(" stale ").then_some(line)
    });
    assert!(!stale.contains("live"), "{stale}");
    let seconds = tmux.wait("stale for 3 s", Duration::from_secs(10), |s| {
        let line = header(s);
        let after = line.split(" stale ").nth(1)?;
        let seconds: u64 = after.split('s').next()?.trim().parse().ok()?;
        (seconds >= 3).then_some(seconds)
    });
    eprintln!("header with the sampler stopped: {stale:?}, then stale {seconds}s");
    drop(stopped);
    tmux.wait("live again", Duration::from_secs(10), |s| {
        let line = header(s);
        (line.contains("live") && !line.contains("stale")).then_some(())
    });
    let _ = std::fs::remove_dir_all(&home);
}

/// The netlens process a tmux pane runs: the pane's own, or its child
/// (the pane's shell, when it did not exec).
pub fn netlens_in(pane_pid: &str) -> Option<u32> {
    let pid: u32 = pane_pid.parse().ok()?;
    let comm = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm(pid).trim() == "netlens" {
        return Some(pid);
    }
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    children
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .find(|c| comm(*c).trim() == "netlens")
}

/// The id of the thread of `pid` named `name`.
pub fn thread_named(pid: u32, name: &str) -> Option<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
        .find(|task| {
            std::fs::read_to_string(task.path().join("comm")).is_ok_and(|c| c.trim() == name)
        })
        .and_then(|task| task.file_name().to_str()?.parse().ok())
}

/// One thread of another process held in a ptrace stop (PTRACE_SEIZE and
/// PTRACE_INTERRUPT stop only that thread; its process's other threads run
/// on). Let go on drop, pass or fail.
struct StoppedThread {
    tid: libc::pid_t,
}

impl StoppedThread {
    fn stop(tid: i32) -> Option<StoppedThread> {
        let null = std::ptr::null_mut::<libc::c_void>();
        // SAFETY: ptrace(2) and waitpid(2) on a thread id, with no memory
        // passed but the status we own.
        unsafe {
            if libc::ptrace(libc::PTRACE_SEIZE, tid, null, null) != 0 {
                return None;
            }
            let stopped = StoppedThread { tid };
            if libc::ptrace(libc::PTRACE_INTERRUPT, tid, null, null) != 0 {
                return None;
            }
            let mut status = 0;
            if libc::waitpid(tid, &mut status, libc::__WALL) != tid {
                return None;
            }
            Some(stopped)
        }
    }
}

impl Drop for StoppedThread {
    fn drop(&mut self) {
        let null = std::ptr::null_mut::<libc::c_void>();
        // SAFETY: detaching the thread this test seized.
        unsafe { libc::ptrace(libc::PTRACE_DETACH, self.tid, null, null) };
    }
}

/// A link dump that blocks (its thread held in a ptrace stop, where an
/// RTNL lock held by a hung driver would hold it) delays nothing else: the
/// samples keep coming and name the interfaces part late with its age and
/// the last read's counters, give no interface rate over that read (not a
/// false 0), and the first read after gives the rate over the whole time
/// since the last one, not over one interval.
#[test]
fn a_blocked_link_dump_is_late_alone_and_its_rates_span_the_gap() {
    let test = "a_blocked_link_dump_is_late_alone_and_its_rates_span_the_gap";
    if crate::common::need_root(&["ip", "python3"]) {
        return;
    }
    let ns = crate::common::Netns::new("links");
    ns.ip(&["link", "set", "lo", "up"]);
    let args = [
        "--netns",
        &ns.name,
        "--section",
        "interfaces",
        "--no-bpf",
        "--interval",
        "500ms",
        "--count",
        "16",
    ];
    let mut child = crate::common::spawn_snapshot(&args);
    let stdout = child.stdout.take().unwrap();
    let (lines, samples) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(serde_json::from_str::<Value>(&line).unwrap());
        }
    });
    let mut seen = Vec::new();
    while seen.len() < 3 {
        seen.push(
            samples
                .recv_timeout(Duration::from_secs(20))
                .expect("a sample"),
        );
    }
    // "netlens-interfaces", cut to the 15 bytes a thread's name keeps.
    let thread = thread_named(child.id(), "netlens-interfa").expect("the links' thread");
    let stopped = StoppedThread::stop(thread);
    if stopped.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        eprintln!("SKIP {test}: cannot ptrace thread {thread}");
        return;
    }
    // 2,000 datagrams of 1,000 B to the namespace's own loopback while the
    // dump is held (bounded: about 2.5 s).
    let send = "import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
                for _ in range(2000):\n    s.sendto(b'x' * 1000, ('127.0.0.1', 9))\n    \
                time.sleep(0.001)\n";
    let sent = crate::common::ns_exec(&ns.name, &["python3", "-c", send]);
    assert!(sent.status.success(), "{sent:?}");
    drop(stopped);
    let out = child.wait_with_output().expect("snapshot");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    seen.extend(samples.try_iter());
    assert_eq!(seen.len(), 16);

    let lo = |s: &Value| crate::common::must_iface(s, "lo").clone();
    let is_late = |s: &Value| late_parts(s).iter().any(|p| p == "interfaces");
    let first_late = seen
        .iter()
        .position(is_late)
        .expect("no sample marked interfaces late");
    let after = first_late + seen[first_late..].iter().position(|s| !is_late(s)).unwrap();
    let before = &seen[first_late - 1];
    let late = &seen[first_late..after];
    assert!(late.len() >= 2, "{} late samples", late.len());
    // Nothing waits for the held dump: every other part is fresh in some
    // sample while the interfaces are late. (On a loaded host another
    // part may miss its own deadline now and then; one held by the links
    // would be late in all of them.)
    let others: std::collections::BTreeSet<String> = late
        .iter()
        .flat_map(late_parts)
        .filter(|p| p != "interfaces")
        .collect();
    for part in &others {
        assert!(
            late.iter().any(|s| !late_parts(s).contains(part)),
            "{part} was late with the interfaces throughout: {late:?}"
        );
    }
    for sample in late {
        let interfaces = sample["late"]
            .as_array()
            .and_then(|l| l.iter().find(|p| p["part"] == "interfaces"))
            .expect("the interfaces' entry");
        assert!(interfaces["age_ms"].as_u64().unwrap() >= 200, "{sample}");
        assert_eq!(lo(sample)["rx_bytes"], lo(before)["rx_bytes"]);
        assert!(lo(sample)["rx_bytes_per_s"].is_null(), "{}", lo(sample));
    }
    let moved =
        lo(&seen[after])["rx_bytes"].as_u64().unwrap() - lo(before)["rx_bytes"].as_u64().unwrap();
    assert!(moved >= 2_000_000, "{moved} B moved");
    let span = seen[after]["t"].as_f64().unwrap() - before["t"].as_f64().unwrap();
    let rate = lo(&seen[after])["rx_bytes_per_s"].as_f64().unwrap();
    // The read after the stop may have run up to one interval before its
    // sample's `t`: the span is known to 0.5 s of at least 2.5 s. Over one
    // interval the rate would be 5 times this or more.
    let expected = moved as f64 / span;
    eprintln!("lo: {moved} B over {span:.2} s: {rate:.0} B/s, expected about {expected:.0}");
    assert!((rate / expected - 1.0).abs() < 0.25, "{rate} vs {expected}");
}

/// The Flows table of a TCP conversation moves with each sample; a flow
/// screen's packets show with no sample at all: the sampler thread is
/// held in a ptrace stop, and the header still says "live" (stale, which
/// redraws every second, comes only two intervals after the last sample),
/// so only the capture can have drawn them. The interval is long (10 s)
/// to leave the capture that much time: a hang guard, not a speed check.
#[test]
fn a_flow_screen_shows_new_packets_between_samples() {
    let test = "a_flow_screen_shows_new_packets_between_samples";
    if crate::common::need_root(&["ip", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("drill") else {
        return;
    };
    let ns = crate::common::Netns::new("drill");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.47.1/32", "dev", "lo"]);
    let home = std::env::temp_dir().join(format!("netlens-drill-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let command = format!(
        "env TERM=tmux-256color HOME={} {} --netns {} --iface lo --filter 'tcp port 9101' \
         --tab flows --interval 10s",
        home.display(),
        crate::common::NETLENS,
        ns.name
    );
    tmux.start(120, 30, &home, &command);
    let patience = Duration::from_secs(30);
    // Capturing before the conversation starts: its handshake names the
    // client.
    tmux.wait("the capture", patience, |s| {
        s.contains("drops 0").then_some(())
    });
    let (requests, conversation) = ping_conversation(&ns.path());
    let pings = |n: usize| (0..n).for_each(|_| requests.send(()).unwrap());
    pings(3);
    let first = tmux.wait("the flow in the table", patience, flow_packets);
    pings(3);
    let counted = tmux.wait("the next sample's count", patience, |s| {
        flow_packets(s).filter(|n| *n >= first + 3)
    });
    eprintln!("the Flows table counted {first}, then {counted} packets");

    tmux.send_keys(&["Enter"]);
    tmux.wait("the flow screen", patience, |s| {
        s.contains("[Summary]").then_some(())
    });
    tmux.send_keys(&["v"]);
    let header = |screen: &str| screen.lines().next().unwrap_or("").to_string();
    let pane_pid = tmux.run(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
    let netlens = netlens_in(pane_pid.trim()).expect("netlens in the pane");
    let sampler = thread_named(netlens, "sampler").expect("the sampler thread");
    let Some(stopped) = StoppedThread::stop(sampler) else {
        eprintln!("SKIP {test} (flow screen half): cannot ptrace thread {sampler}");
        let _ = std::fs::remove_dir_all(&home);
        return;
    };
    let kept = tmux.wait("[Packets]", patience, |s| {
        s.contains("[Packets]").then(|| packets_kept(s)).flatten()
    });
    pings(5);
    let shown = tmux.wait("five more packets", patience, |s| {
        packets_kept(s)
            .filter(|n| *n >= kept + 5)
            .map(|_| s.to_string())
    });
    assert!(header(&shown).contains(" live "), "{}", header(&shown));
    assert!(shown.contains("Flags [P.]"), "{shown}");
    drop(stopped);
    drop(requests);
    conversation.join().expect("conversation");
    tmux.send_keys(&["q"]);
    let _ = std::fs::remove_dir_all(&home);
}

/// A TCP conversation on 198.18.47.1:9101 in the namespace at `path`: one
/// 4-byte message per request on the channel, at most 20; it ends when
/// the channel closes.
fn ping_conversation(path: &str) -> (Sender<()>, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    let (requests, pending) = std::sync::mpsc::channel::<()>();
    let path = path.to_string();
    let conversation = std::thread::spawn(move || {
        crate::common::enter_netns(&path).expect("setns");
        let listener = TcpListener::bind("198.18.47.1:9101").expect("bind");
        let mut client = TcpStream::connect("198.18.47.1:9101").expect("connect");
        let (mut server, _) = listener.accept().expect("accept");
        let mut message = [0u8; 4];
        for _ in 0..20 {
            if pending.recv_timeout(Duration::from_secs(120)).is_err() {
                return;
            }
            client.write_all(b"ping").expect("send");
            server.read_exact(&mut message).expect("receive");
        }
    });
    (requests, conversation)
}

/// The packets the Flows table counts for the conversation's flow (the
/// number after its key).
fn flow_packets(screen: &str) -> Option<u64> {
    let row = screen.lines().find(|l| l.contains("> 198.18.47.1:9101"))?;
    let after = row.split("198.18.47.1:9101").nth(1)?;
    after.split_whitespace().next()?.parse().ok()
}

/// The packets the flow screen's status line says it keeps.
fn packets_kept(screen: &str) -> Option<u64> {
    let at = screen.find(" packets kept")?;
    let digits = screen[..at].rsplit(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}
