//! Findings per namespace in the real binary under `--all-netns` (root,
//! tmux at 80x24): a server in one namespace made here that accepts and
//! never closes, its clients (in the same namespace) closing their ends,
//! leaves a pile of CLOSE_WAIT sockets that `ss -tnp state close-wait`
//! inside it counts. The findings list (`!`) must name that namespace on
//! the finding's row (as `ip netns` names it) with the pile's size, the
//! server's pid and port as ss shows them; the Namespaces tab's FIND must
//! be non-zero for that namespace, zero for the other, each equal to the
//! findings `snapshot --all-netns --json` puts in it.
//!
//! Network safety: namespaces `h27-<pid>-0` (198.18.234.0/24) and
//! `h27-<pid>-1` (198.18.235.0/24); the only traffic is 150 connections
//! inside the second one (to its own 198.18.235.2); the helpers end by
//! themselves within 60 s and are killed by PID on drop; the namespaces
//! (with every socket and veth) are deleted on drop, the tmux server and
//! netlens ended by their guard. tests/system/netns_tab_columns.rs uses the same
//! names and /24s: the tests take turns (`netns_traffic::h27_turn`).

use crate::common;

use common::netns_traffic::Ns;
use common::socket_findings::{ss_rows, ss_user, wait_ready};
use common::tmux::Tmux;
use common::*;
use serde_json::Value;
use std::time::{Duration, Instant};

const PORT: u16 = 8443;
const PILE: usize = 150;

/// Two namespaces, the second holding a CLOSE_WAIT pile of `PILE`
/// sockets owned by `pid`.
struct Pile {
    spaces: [Ns; 2],
    _server: ChildGuard,
    pid: u32,
}

fn pile() -> Pile {
    let spaces = [Ns::new("h27", 234, 0), Ns::new("h27", 234, 1)];
    let (ns, ip) = (spaces[1].name().to_string(), spaces[1].ip());
    let mut server = python_in(
        &ns,
        &format!(
            "import socket,os,time\n\
             s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('{ip}',{PORT})); s.listen(1024); s.settimeout(1)\n\
             print(os.getpid()); print('ready',flush=True)\n\
             held=[]; end=time.time()+60\n\
             while time.time()<end:\n\
             \x20   try: held.append(s.accept()[0])\n\
             \x20   except socket.timeout: pass"
        ),
    );
    let pid: u32 = wait_ready(&mut server)[0].trim().parse().unwrap();
    let mut client = python_in(
        &ns,
        &format!(
            "import socket,time\n\
             c=[socket.create_connection(('{ip}',{PORT}),timeout=5) for i in range({PILE})]\n\
             time.sleep(1)\n\
             [x.close() for x in c]\n\
             print('ready',flush=True)"
        ),
    );
    wait_ready(&mut client);
    drop(client);
    let deadline = Instant::now() + Duration::from_secs(10);
    while close_waits(&spaces[1]).len() < PILE {
        assert!(Instant::now() < deadline, "{:?}", close_waits(&spaces[1]));
        std::thread::sleep(Duration::from_millis(100));
    }
    Pile {
        spaces,
        _server: server,
        pid,
    }
}

/// `ss -tnp state close-wait` rows inside `ns`.
fn close_waits(ns: &Ns) -> Vec<Vec<String>> {
    ss_rows(ns.name(), &["-tnp", "state", "close-wait"])
}

/// netlens in tmux, every namespace, sampling each second.
fn start(tmux: &Tmux, width: u16, height: u16, tab: &str) {
    let command = format!(
        "env NO_COLOR=1 {NETLENS} --all-netns --no-capture --no-bpf --config /dev/null \
         --tab {tab} --interval 1s"
    );
    tmux.start(width, height, &std::env::temp_dir(), &command);
}

/// The selected finding's row and the detail under the list (the
/// selected finding whole), once the row of `label`'s finding is the
/// selected one. Other namespaces on the host may have findings of their
/// own: the list is walked down until it is.
fn select_row_of(tmux: &Tmux, label: &str) -> (String, String) {
    let ours = format!(" in {label}: ");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let screen = tmux.screen();
        let lines: Vec<&str> = screen.lines().collect();
        if let Some(at) = lines
            .iter()
            .position(|l| l.starts_with("│> ") && l.contains(&ours))
        {
            // The detail: from the rule under the list to the box's end.
            let below: Vec<&str> = lines[at..]
                .iter()
                .skip_while(|l| !l.starts_with("│──"))
                .skip(1)
                .copied()
                .collect();
            let inside = below.iter().take_while(|l| l.starts_with('│')).count();
            // A capture taken while the frame is being written shows the
            // old screen under the new rows: only a detail that ends on
            // the box's bottom border is the whole frame.
            if below.get(inside).is_some_and(|l| l.starts_with('└')) {
                let detail: Vec<&str> = below[..inside]
                    .iter()
                    .map(|l| l.trim_matches('│').trim())
                    .collect();
                return (lines[at].to_string(), detail.join(" "));
            }
            assert!(Instant::now() < deadline, "no whole frame:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        assert!(
            Instant::now() < deadline,
            "no selected row in {label}:\n{screen}"
        );
        // Down only once the finding is listed: before, the list may be
        // the first sample's (the pile is raised on the second).
        if lines.iter().any(|l| l.contains(&ours)) {
            tmux.send_keys(&["Down"]);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn the_findings_list_row_names_the_namespace_and_the_pile_as_ss_counts_it() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let _h27 = common::netns_traffic::h27_turn();
    let Some(tmux) = Tmux::new("h27find") else {
        return;
    };
    let pile = pile();
    let label = pile.spaces[1].name().to_string();
    start(&tmux, 80, 24, "namespaces");
    tmux.wait("the table", Duration::from_secs(20), |s| {
        s.contains("NAMESPACE").then_some(())
    });
    tmux.send_keys(&["!"]);
    // The owners of another namespace's sockets can come a sample or two
    // after the sockets on a loaded box: until then the finding says "no
    // process (owner unknown)", which is true of that sample.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (row, detail) = loop {
        let (row, detail) = select_row_of(&tmux, &label);
        if row.contains("pid=") || Instant::now() > deadline {
            break (row, detail);
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    // What ss says inside the namespace, read after the screen (the pile
    // holds still: nobody closes it).
    let rows = close_waits(&pile.spaces[1]);
    eprintln!(
        "row: {row}\ndetail: {detail}\nss: {} close-wait",
        rows.len()
    );
    assert_eq!(rows.len(), PILE, "{rows:?}");
    for r in &rows {
        assert_eq!(ss_user(r).map(|(_, pid)| pid), Some(pile.pid), "{r:?}");
        assert!(r[2].ends_with(&format!(":{PORT}")), "{r:?}");
    }
    // The row names, in words, the finding, its namespace and the sockets
    // it is about (the owner's pid and the port ss gives them), whole
    // within the 80 columns: it ends with the port, then the box's border.
    assert!(row.ends_with(&format!(":{PORT}│")), "{row}");
    assert!(row.contains("close-wait"), "{row}");
    assert!(
        row.contains(&format!(
            "→ sockets in {label}: close-wait pid={} :{PORT}",
            pile.pid
        )),
        "{row}"
    );
    // The pile's size: the row cuts the summary at 80 columns; the
    // selected finding whole under the list carries it, and the namespace.
    let size = common::socket_findings::number_after(&detail, "holds");
    assert_eq!(size as usize, rows.len(), "{detail}");
    assert!(
        detail.contains(&format!("PID {} (python3) holds", pile.pid)),
        "{detail}"
    );
    assert!(
        detail.contains(&format!("CLOSE_WAIT on :{PORT}")),
        "{detail}"
    );
    assert!(
        detail.contains(&format!("evidence: sockets tab in {label}, close-wait")),
        "{detail}"
    );
    // Nothing in the list is about the other namespace.
    let other = format!(" in {}: ", pile.spaces[0].name());
    assert!(!tmux.screen().contains(&other), "{}", tmux.screen());
    tmux.send_keys(&["q"]);
}

/// The FIND cell (the row's last) of `label` in the Namespaces tab.
fn find_cell(screen: &str, label: &str) -> Option<u64> {
    let line = screen
        .lines()
        .find(|l| l.trim_start_matches("» ").starts_with(&format!("{label} ")))?;
    line.split_whitespace().last()?.parse().ok()
}

/// Each namespace's findings in `snapshot --all-netns --json`'s last
/// sample: (label, findings carrying its id, its `findings` field).
fn json_counts(labels: &[String]) -> Vec<(u64, u64)> {
    let samples = snapshot(&[
        "--all-netns",
        "--no-capture",
        "--no-bpf",
        "--count",
        "3",
        "--interval",
        "1s",
    ]);
    let last = samples.last().unwrap();
    let findings = last["findings"].as_array().expect("findings");
    labels
        .iter()
        .map(|label| {
            let ns = common::netns_traffic::namespace(last, label)
                .unwrap_or_else(|| panic!("no {label} in {last}"));
            let id = ns["id"].as_u64().unwrap();
            let carrying = findings
                .iter()
                .filter(|f: &&Value| f["evidence"]["netns"].as_u64() == Some(id))
                .count() as u64;
            (carrying, ns["findings"].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn the_namespaces_tab_counts_the_findings_of_each_namespace() {
    if crate::common::need_root(&["ip", "python3", "ss", "tmux"]) {
        return;
    }
    let _h27 = common::netns_traffic::h27_turn();
    let Some(tmux) = Tmux::new("h27nsfind") else {
        return;
    };
    let pile = pile();
    let labels: Vec<String> = pile.spaces.iter().map(|n| n.name().to_string()).collect();
    start(&tmux, 80, 24, "namespaces");
    tmux.wait("the table", Duration::from_secs(20), |s| {
        s.contains("NAMESPACE").then_some(())
    });
    // The host may hold other namespaces: the tab's own filter keeps ours.
    tmux.send_keys(&["/"]);
    tmux.type_text("t", &format!("ns:h27-{}-", std::process::id()));
    tmux.send_keys(&["Enter"]);
    let json = json_counts(&labels);
    eprintln!("snapshot --json: {labels:?} {json:?}");
    for (carrying, field) in &json {
        assert_eq!(carrying, field, "{json:?}");
    }
    assert!(json[1].0 >= 1, "the pile's namespace: {json:?}");
    assert_eq!(json[0].0, 0, "the other: {json:?}");
    // The screen's FIND, once it shows the pile (it is raised on the
    // second sample), against the snapshot's counts.
    let shown = tmux.wait("FIND of both", Duration::from_secs(20), |s| {
        let cells: Option<Vec<u64>> = labels.iter().map(|l| find_cell(s, l)).collect();
        cells.filter(|c| c[1] >= 1)
    });
    eprintln!("FIND on screen: {shown:?}\n{}", tmux.screen());
    assert_eq!(shown, json.iter().map(|c| c.0).collect::<Vec<_>>());
    tmux.send_keys(&["q"]);
}
