//! What the screens say, in the real binary in tmux at the sizes users have:
//! the Sockets tab's columns and sort arrow at 80 columns.

use crate::common;

use common::NETLENS;
use common::tmux::Tmux;

fn arrows(line: &str) -> usize {
    line.matches(['▼', '▲']).count()
}

/// At 80 columns the Sockets tab shows State, both queues, both endpoints
/// and the process; `s` and `<` cycle only through those, and exactly one
/// arrow marks the sort column at every step.
#[test]
fn sockets_at_80_columns_keep_the_process_and_sort_only_what_shows() {
    let Some(tmux) = Tmux::new("uitext-sockets") else {
        return;
    };
    // A connection on loopback, so the table has an ESTAB row with a peer.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let _server = listener.accept().unwrap();
    let command = format!("{NETLENS} --tab sockets --no-capture --interval 300ms");
    tmux.session("s", 80, 24, &command);
    let header = |lines: &[String]| {
        lines
            .iter()
            .find(|l| l.contains("Local") && l.contains("Peer"))
            .cloned()
    };
    let shown = tmux.wait_for("s", "the sockets table", |lines| header(lines).is_some());
    let first = header(&shown).unwrap();
    for title in ["State", "RcvQ/acc", "SndQ/max", "Local", "Peer", "Process"] {
        assert!(first.contains(title), "{title} missing: {first}");
    }
    assert_eq!(arrows(&first), 1, "{first}");
    assert!(first.contains("RcvQ/acc▼"), "{first}");
    let mut marked = vec![];
    for _ in 0..6 {
        tmux.keys("s", &["s"]);
        let before = marked.len();
        // The press has taken effect once the marked column moved: to one
        // not marked yet, or (the sixth) off the fifth.
        let shown = tmux.wait_for("s", "the next sort column", |lines| {
            header(lines).is_some_and(|h| {
                let column = h.split_whitespace().find(|w| arrows(w) == 1);
                column.is_some_and(|c| {
                    !marked.contains(&c.to_string())
                        || (before == 5 && marked.last() != Some(&c.to_string()))
                })
            })
        });
        let line = header(&shown).unwrap();
        assert_eq!(arrows(&line), 1, "{line}");
        let column = line.split_whitespace().find(|w| arrows(w) == 1).unwrap();
        marked.push(column.to_string());
    }
    // Six visible columns: the sixth press is back on RcvQ/acc.
    assert_eq!(
        marked.last().map(String::as_str),
        Some("RcvQ/acc▼"),
        "{marked:?}"
    );
    // Back from RcvQ/acc: State, the column before it on screen.
    tmux.keys("s", &["<"]);
    let shown = tmux.wait_for("s", "the previous sort column", |lines| {
        header(lines).is_some_and(|h| h.starts_with("State▲"))
    });
    assert_eq!(arrows(&header(&shown).unwrap()), 1);
    tmux.keys("s", &["q"]);

    // 50 columns: the local endpoint, the queues and State; not Flag.
    tmux.session("narrow", 50, 16, &command);
    let shown = tmux.wait_for("narrow", "the narrow sockets table", |lines| {
        lines.iter().any(|l| l.contains("Local"))
    });
    let line = shown.iter().find(|l| l.contains("Local")).unwrap();
    for title in ["State", "RcvQ/acc", "SndQ/max", "Local"] {
        assert!(line.contains(title), "{title} missing: {line}");
    }
    assert!(!line.contains("Flag"), "{line}");
    tmux.keys("narrow", &["q"]);
}

/// The DNS tab at 80x24 with a capture on lo and probes to a real DNS
/// server on loopback port 53: each probe counts once (one `probe` row, no
/// `wire` twin for the same server), and a probe to a closed port is named
/// "port unreachable", not "error".
#[test]
fn dns_tab_counts_probes_once_and_names_port_unreachable() {
    if crate::common::need_root(&["ip", "tmux"]) {
        return;
    }
    let Some(tmux) = Tmux::new("uitext-dns") else {
        return;
    };
    let server = match common::dns_server::DnsServer::start_on("127.0.24.53:53") {
        Ok(server) => server,
        Err(e) => {
            println!("SKIP dns_tab_counts_probes_once: cannot bind 127.0.24.53:53: {e}");
            return;
        }
    };
    // Nothing listens on 127.0.24.54:53: the kernel answers ICMP port
    // unreachable.
    let command = format!(
        "{NETLENS} --tab dns --iface lo --filter 'udp port 53' --interval 300ms \
         --dns-probe A:fast.test --dns-server {} --dns-server 127.0.24.54:53",
        server.addr
    );
    tmux.session("d", 80, 24, &command);
    let rows = |lines: &[String], server: &str| {
        lines
            .iter()
            .filter(|l| l.starts_with(server))
            .cloned()
            .collect::<Vec<_>>()
    };
    let shown = tmux.wait_for(
        "d",
        "three probes answered and the unreachable one",
        |lines| {
            rows(lines, "127.0.24.53:53").iter().any(|row| {
                row.split_whitespace()
                    .nth(2)
                    .and_then(|n| n.parse::<u32>().ok())
                    >= Some(3)
            }) && lines.iter().any(|l| l.contains("port unreachable"))
        },
    );
    let answered = rows(&shown, "127.0.24.53:53");
    assert_eq!(
        answered.len(),
        1,
        "one row per server:\n{}",
        shown.join("\n")
    );
    assert!(answered[0].contains("probe"), "{}", shown.join("\n"));
    let failing = shown
        .iter()
        .find(|l| l.starts_with("failing:"))
        .unwrap_or_else(|| panic!("no failing line:\n{}", shown.join("\n")));
    assert!(
        failing.contains("port unreachable") && !failing.contains("error"),
        "{failing}"
    );
    tmux.keys("d", &["q"]);
}

/// The TCP tab's knobs at 80x24: every knob's value is on its name's line
/// (tcp_rmem's three numbers do not wrap away from it).
#[test]
fn tcp_knobs_keep_name_and_value_together_at_80x24() {
    let Some(tmux) = Tmux::new("uitext-knobs") else {
        return;
    };
    let command = format!("{NETLENS} --tab tcp --no-capture --interval 300ms");
    tmux.session("k", 80, 24, &command);
    let shown = tmux.wait_for("k", "the knobs", |lines| {
        lines.iter().any(|l| l.contains("somaxconn"))
    });
    let knobs = ["somaxconn", "tcp_rmem", "tcp_wmem", "ip_local_port_range"];
    for knob in knobs {
        let line = shown
            .iter()
            .find(|l| l.split_whitespace().any(|w| w == knob))
            .unwrap_or_else(|| panic!("{knob} not shown:\n{}", shown.join("\n")));
        let after: Vec<&str> = line
            .split_whitespace()
            .skip_while(|w| *w != knob)
            .skip(1)
            .collect();
        assert!(
            after.first().is_some_and(|v| v.parse::<u64>().is_ok()),
            "{knob} without its value on its line:\n{}",
            shown.join("\n")
        );
        if knob != "somaxconn" {
            // Two or three numbers: all on the line.
            assert!(
                after
                    .iter()
                    .take_while(|v| v.parse::<u64>().is_ok())
                    .count()
                    >= 2,
                "{knob}: {line}"
            );
        }
    }
    tmux.keys("k", &["q"]);
}
