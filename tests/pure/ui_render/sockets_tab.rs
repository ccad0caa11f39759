//! The Sockets tab (and the TCP tab beside it at every size): queues,
//! owners, filter, sort, the detail pane, history trimming.

use super::*;

#[test]
fn sockets_tab_80x24() {
    let mut app = stack_app('2');
    let text = format!("{}", render(&mut app, 80, 24).backend());
    // Largest queues first; highlighted rows say why in words.
    assert!(text.contains("STUCK") && text.contains("FULL"), "{text}");
    // The header gives up the unix count before it cuts TX.
    assert!(text.contains("TX 126.3Mb/s 240.3kp/s"), "{text}");
    let wide = format!("{}", render(&mut app, 160, 24).backend());
    assert!(wide.contains("unix 17"), "{wide}");
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn sockets_tab_wide_shows_owner_and_tcp_info() {
    let mut app = stack_app('2');
    let text = format!("{}", render(&mut app, 160, 14).backend());
    assert!(text.contains("web/4242"), "{text}");
    assert!(text.contains("unknown (no permission)"), "{text}");
    assert!(text.contains("rtt ms"), "{text}");
}

#[test]
fn sockets_filter_by_port_and_state() {
    let mut app = stack_app('2');
    for key in [Key::Char('/'), Key::Char('5'), Key::Char('3'), Key::Enter] {
        app.on_key(key);
    }
    let text = format!("{}", render(&mut app, 100, 14).backend());
    assert!(
        text.contains("0.0.0.0:53") && !text.contains(":8080"),
        "{text}"
    );
    app.on_key(Key::Esc);
    for key in "/listen".chars().map(Key::Char).chain([Key::Enter]) {
        app.on_key(key);
    }
    let text = format!("{}", render(&mut app, 100, 14).backend());
    assert!(text.contains("LISTEN") && !text.contains("ESTAB"), "{text}");
}

#[test]
fn sockets_sort_cycles_and_defaults_to_the_receive_queue() {
    let mut app = stack_app('2');
    let text = format!("{}", render(&mut app, 100, 14).backend());
    let first_row = text.lines().nth(4).unwrap_or_default();
    assert!(first_row.contains("81920"), "{text}");
    // Exactly one arrow, on the sort column.
    assert!(text.contains("RcvQ/acc▼"), "{text}");
    assert_eq!(text.matches(['▼', '▲']).count(), 1, "{text}");
    // SndQ, Local, Peer, Flag, Process, rtt, then Net: cwnd and retr are
    // off screen at 100 columns, so the cycle skips them.
    for _ in 0..7 {
        app.on_key(Key::Char('s'));
    }
    let text = format!("{}", render(&mut app, 100, 14).backend());
    assert!(text.contains("Net▲"), "{text}");
    assert!(
        text.lines().nth(4).unwrap_or_default().contains("tcp"),
        "{text}"
    );
    app.on_key(Key::Char('I'));
    let text = format!("{}", render(&mut app, 100, 14).backend());
    assert!(
        text.lines().nth(4).unwrap_or_default().contains("udp"),
        "{text}"
    );
}

#[test]
fn socket_detail_explains_the_listen_queues() {
    let mut app = stack_app('2');
    // Second row by receive queue: the full listener (5 of 4).
    app.on_key(Key::Down);
    app.on_key(Key::Enter);
    assert!(app.sockets.detail);
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(
        text.contains("accept queue") || text.contains("not yet read"),
        "{text}"
    );
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
    app.on_key(Key::Esc);
    assert!(!app.sockets.detail);
}

#[test]
fn stack_tabs_render_at_every_size() {
    for tab_key in ['2', '3'] {
        for detail in [false, true] {
            let mut app = stack_app(tab_key);
            if detail {
                app.on_key(Key::Enter);
            }
            let widths = (1..=24).chain([30, 40, 60, 79, 80, 81, 130]);
            for width in widths {
                for height in (1..=12).chain([20, 24, 26]) {
                    render(&mut app, width, height);
                }
            }
        }
    }
}

#[test]
fn old_samples_drop_their_socket_lists() {
    let app = stack_app('2');
    let len = app.history.len();
    for i in 0..len - 2 {
        assert!(app.history.get(i).unwrap().sockets.is_empty(), "sample {i}");
    }
    assert!(!app.history.get(len - 1).unwrap().sockets.is_empty());
    assert!(!app.history.get(len - 2).unwrap().sockets.is_empty());
}
