//! What the screens say, in the real binary in tmux at the sizes users have:
//! the Sockets tab's columns and sort arrow at 80 columns.

mod common;

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
        let shown = tmux.wait_for("s", "the next sort column", |lines| {
            header(lines).is_some_and(|h| {
                let column = h.split_whitespace().find(|w| arrows(w) == 1);
                column.is_some_and(|c| !marked.contains(&c.to_string()) || before == 5)
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
