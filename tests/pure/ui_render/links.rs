//! Links between tabs: a finding to its evidence, an interface to its
//! flows, a socket to its flow, a flow to its process's sockets.

use super::flows::{flows_app, with_capture};
use super::*;
use netlens::model::sockets::Proto;

fn text(app: &mut App, width: u16, height: u16) -> String {
    format!("{}", render(app, width, height).backend())
}

/// `!` lists the findings; Enter on one opens its evidence's tab with
/// the row selected.
#[test]
fn enter_on_a_finding_goes_to_its_evidence() {
    let mut app = stack_app('3');
    render(&mut app, 100, 30);
    app.on_key(Key::Char('!'));
    let screen = text(&mut app, 100, 30);
    assert!(screen.contains("Findings (Enter: evidence"), "{screen}");
    assert!(screen.contains("> CRIT iface-saturated"), "{screen}");
    assert!(screen.contains("→ sockets: 198.18.0.2:8080"), "{screen}");
    let ids: Vec<&str> = app.derived.findings.iter().map(|f| f.id).collect();
    // The listener with the full accept queue.
    let at = ids.iter().position(|id| *id == "listen-overflow").unwrap();
    for _ in 0..at {
        app.on_key(Key::Down);
    }
    app.on_key(Key::Enter);
    assert!(app.findings_list().is_none());
    assert_eq!(app.tab, Tab::Sockets);
    let selected = app.sockets.selected.expect("a socket is selected");
    assert_eq!(selected.local.to_string(), "198.18.0.2:8080");
    assert_eq!(selected.peer.to_string(), "0.0.0.0:0");
    let screen = text(&mut app, 100, 30);
    assert!(screen.contains("FULL"), "{screen}");
    // The worst (first) finding: iface-saturated on eth0.
    app.on_key(Key::Char('!'));
    app.on_key(Key::Enter);
    assert_eq!(app.tab, Tab::Interfaces);
    assert_eq!(
        app.interfaces.selected.as_ref().map(|s| s.name.as_str()),
        Some("eth0")
    );
    // Esc closes the list without moving.
    app.on_key(Key::Char('3'));
    app.on_key(Key::Char('!'));
    app.on_key(Key::Esc);
    assert!(app.findings_list().is_none());
    assert_eq!(app.tab, Tab::Tcp);
}

#[test]
fn findings_list_fits_small_panes() {
    let mut app = stack_app('1');
    app.on_key(Key::Char('!'));
    for width in (1..=24).chain([40, 80]) {
        for height in 1..=12 {
            render(&mut app, width, height);
        }
    }
    let screen = text(&mut app, 40, 8);
    assert!(screen.contains("> CRIT iface-sat"), "{screen}");
}

/// `x` on an interface: the Flows tab, only flows to or from its
/// addresses (lo is 198.18.0.1 here).
#[test]
fn interface_to_its_flows() {
    let mut app = flows_app(true);
    app.on_key(Key::Char('1'));
    render(&mut app, 100, 24);
    app.on_key(Key::Home);
    app.interfaces.selected = Some(netlens::model::InterfaceRef::primary("lo"));
    app.on_key(Key::Char('x'));
    assert_eq!(app.tab, Tab::Flows);
    let keys: Vec<String> = app.flow_rows().into_iter().map(|r| r.key).collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys.iter().all(|k| k.contains("198.18.0.1:")), "{keys:?}");
    let screen = text(&mut app, 100, 24);
    assert!(screen.contains("flows on lo"), "{screen}");
}

/// A third sample with a socket for the first flow, owned by pid 4242.
fn flows_and_sockets() -> App {
    let mut app = flows_app(true);
    let mut third = with_capture(sample(102.0, 3), 3, true);
    third.sockets = vec![
        sock(Proto::Tcp, 1, "198.18.0.1:40000", "198.18.0.2:443", (0, 0)),
        sock(Proto::Tcp, 1, "198.18.0.1:40002", "198.18.0.9:22", (0, 0)),
    ]
    .into();
    third.sockets.modify(1, |s| s.users[0].pid = 77);
    app.on_sampler(SamplerEvent::Sample(Box::new(third)));
    app
}

/// `x` on a socket: its flow, selected, whichever side spoke first.
#[test]
fn socket_to_its_flow() {
    let mut app = flows_and_sockets();
    app.on_key(Key::Char('2'));
    render(&mut app, 100, 24);
    let current = app.shown().1.unwrap().clone();
    app.sockets.select_row(&current, 0);
    let socket = app.sockets.selected.unwrap();
    app.on_key(Key::Char('x'));
    assert_eq!(app.tab, Tab::Flows);
    let rows = app.flow_rows();
    assert_eq!(
        rows.len(),
        1,
        "{:?}",
        rows.iter().map(|r| &r.key).collect::<Vec<_>>()
    );
    let key = &rows[app.flows.selected].key;
    assert!(
        key.contains(&socket.local.to_string()) && key.contains(&socket.peer.to_string()),
        "{key} vs {socket:?}"
    );
}

/// `x` on a flow: the Sockets tab filtered to its process (pid 4242's
/// socket only), with the flow's own socket selected.
#[test]
fn flow_to_its_process_sockets() {
    let mut app = flows_and_sockets();
    render(&mut app, 100, 24);
    let rows = app.flow_rows();
    let at = rows
        .iter()
        .position(|r| r.key == "198.18.0.1:40000 > 198.18.0.2:443")
        .unwrap();
    app.flows.selected = at;
    app.on_key(Key::Char('x'));
    assert_eq!(app.tab, Tab::Sockets);
    assert_eq!(app.sockets.filter, "pid:4242");
    let selected = app.sockets.selected.unwrap();
    assert_eq!(selected.local.to_string(), "198.18.0.1:40000");
    let screen = text(&mut app, 100, 24);
    assert!(screen.contains("198.18.0.1:40000"), "{screen}");
    assert!(!screen.contains("198.18.0.1:40002"), "{screen}");
    // A flow without a socket: the 5-tuple filter, nothing selected.
    app.on_key(Key::Char('6'));
    let rows = app.flow_rows();
    app.flows.selected = rows.iter().position(|r| r.key.contains(":5353")).unwrap();
    app.on_key(Key::Char('x'));
    assert_eq!(
        app.sockets.filter,
        "proto:udp host:198.18.0.3:5353 host:198.18.0.2:53"
    );
    assert!(app.sockets.selected.is_none());
}
