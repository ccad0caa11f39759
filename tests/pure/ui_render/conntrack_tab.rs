//! The Conntrack tab: entries, DNAT, a near-full table, missing capability.

use super::*;
use netlens::model::conntrack::{
    ConntrackEntry, ConntrackSample, ConntrackStats, StatsSource, Tuple,
};

fn tuple(src: &str, sport: Option<u16>, dst: &str, dport: Option<u16>) -> Tuple {
    Tuple {
        src: src.parse().unwrap(),
        dst: dst.parse().unwrap(),
        sport,
        dport,
    }
}

/// A router's table: DNAT 8080 → 198.18.1.2:80, one masqueraded
/// connection, an unanswered UDP query and a ping.
fn entries(acct: bool) -> Vec<ConntrackEntry> {
    let mut list = Vec::new();
    for (i, state) in [(0u16, 3u8), (1, 3), (2, 7), (3, 1)] {
        let port = 40_000 + i;
        list.push(ConntrackEntry {
            proto: 6,
            tcp_state: Some(state),
            orig: tuple("198.18.0.1", Some(port), "198.18.0.2", Some(8080)),
            reply: tuple("198.18.1.2", Some(80), "198.18.0.1", Some(port)),
            status: 0x1be,
            timeout: 431_990 - u32::from(i) * 1000,
            mark: 0,
            zone: 0,
            packets: acct.then_some((6, 4)),
            bytes: acct.then_some((420, 5_000)),
        });
    }
    list.push(ConntrackEntry {
        proto: 6,
        tcp_state: Some(3),
        orig: tuple("198.18.0.7", Some(51000), "198.18.1.2", Some(443)),
        reply: tuple("198.18.1.2", Some(443), "198.18.1.1", Some(61000)),
        status: 0x19e,
        timeout: 300,
        mark: 0x2a,
        zone: 1,
        packets: acct.then_some((10, 9)),
        bytes: acct.then_some((2_000, 90_000)),
    });
    list.push(ConntrackEntry {
        proto: 17,
        tcp_state: None,
        orig: tuple("198.18.0.1", Some(5353), "198.18.1.2", Some(53)),
        reply: tuple("198.18.1.2", Some(53), "198.18.0.1", Some(5353)),
        status: 0x8,
        timeout: 25,
        mark: 0,
        zone: 0,
        packets: acct.then_some((1, 0)),
        bytes: acct.then_some((60, 0)),
    });
    list.push(ConntrackEntry {
        proto: 1,
        tcp_state: None,
        orig: tuple("198.18.0.1", None, "198.18.1.2", None),
        reply: tuple("198.18.1.2", None, "198.18.0.1", None),
        status: 0xa,
        timeout: 29,
        mark: 0,
        zone: 0,
        packets: acct.then_some((1, 1)),
        bytes: acct.then_some((84, 84)),
    });
    list
}

fn conntrack(count: u64, max: u64, stats: ConntrackStats, acct: bool) -> ConntrackSample {
    ConntrackSample {
        available: true,
        reason: None,
        source: StatsSource::Netlink,
        count: Some(count),
        max: Some(max),
        buckets: Some(65_536),
        acct: Some(acct),
        stats: Some(stats),
        entries: Some(entries(acct)),
        entries_error: None,
        read_mono: None,
    }
}

fn ct_app(max: u64, drops: u64, acct: bool) -> App {
    let mut app = App::new(Tab::Conntrack, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    for (mono, scale) in [(100.0, 1u64), (101.0, 2)] {
        let mut s = sample(mono, 0);
        let stats = ConntrackStats {
            found: 10 * scale,
            insert: 50 * scale,
            invalid: scale - 1,
            drop: drops * (scale - 1),
            ..Default::default()
        };
        s.conntrack = conntrack(7, max, stats, acct);
        app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    }
    app
}

fn text(app: &mut App, width: u16, height: u16) -> String {
    format!("{}", render(app, width, height).backend())
}

#[test]
fn conntrack_tab_80x24() {
    let mut app = ct_app(65_536, 0, true);
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn conntrack_tab_wide_with_acct_off_says_how_to_turn_it_on() {
    let mut app = ct_app(65_536, 0, false);
    let screen = text(&mut app, 130, 24);
    assert!(screen.contains("nf_conntrack_acct=1"), "{screen}");
    assert!(!screen.contains("PKTS"), "{screen}");
    insta::assert_snapshot!(render(&mut app, 130, 24).backend());
    // At 80 columns the note wraps rather than losing its end.
    let narrow = text(&mut app, 80, 24);
    assert!(narrow.contains("nf_conntrack_acct=1"), "{narrow}");
    assert!(narrow.contains("made after it)"), "{narrow}");
}

#[test]
fn dnat_is_decoded_in_the_row() {
    let mut app = ct_app(65_536, 0, true);
    let screen = text(&mut app, 130, 24);
    assert!(
        screen.contains("198.18.0.1:40000 → 198.18.0.2:8080 ⇒ 198.18.1.2:80"),
        "{screen}"
    );
    assert!(
        screen.contains("198.18.0.7:51000 (⇒ 198.18.1.1:61000) → 198.18.1.2:443"),
        "{screen}"
    );
    assert!(screen.contains("ESTABLISHED 3"), "{screen}");
    assert!(screen.contains("top dport 8080 4"), "{screen}");
    // found went 10 → 20 in one second.
    assert!(screen.contains("found 10.0/s"), "{screen}");
}

#[test]
fn near_full_table_raises_conntrack_full_and_shows_percent() {
    let mut app = ct_app(8, 5, true);
    let screen = text(&mut app, 100, 24);
    assert!(
        screen.contains("CRIT conntrack-full: 7 of 8 entries (88%), 5.0 drop/s")
            || screen.contains("WARN conntrack-full: 7 of 8 entries (88%), 5.0 drop/s"),
        "{screen}"
    );
    assert!(screen.contains(" 87.5%"), "{screen}");
    assert!(screen.contains("drop 5.0/s"), "{screen}");
}

#[test]
fn sort_filter_and_select() {
    let mut app = ct_app(65_536, 0, true);
    for key in [
        Key::Char('/'),
        Key::Char('u'),
        Key::Char('d'),
        Key::Char('p'),
        Key::Enter,
    ] {
        app.on_key(key);
    }
    let screen = text(&mut app, 100, 24);
    assert!(screen.contains("[filter: udp]"), "{screen}");
    assert!(
        screen.contains("198.18.1.2:53") && !screen.contains(":8080"),
        "{screen}"
    );
    app.on_key(Key::Esc);
    // Sort by the flow (original source), A-Z: 198.18.0.1 first, .7 last.
    app.conntrack.sort = netlens::app::conntrack::Column::Flow;
    app.conntrack.descending = false;
    app.on_key(Key::Char('G'));
    let screen = text(&mut app, 100, 24);
    assert!(
        screen.contains("[snat]"),
        "the last row is selected: {screen}"
    );
}

#[test]
fn tab_asks_for_entries_only_while_open() {
    let mut app = ct_app(65_536, 0, true);
    app.publish_demand();
    assert!(app.demand.conntrack_entries());
    app.on_key(Key::Char('1'));
    app.publish_demand();
    assert!(!app.demand.conntrack_entries());
}

#[test]
fn unavailable_conntrack_explains_why() {
    let mut app = ct_app(65_536, 0, true);
    let mut s = sample(102.0, 0);
    s.conntrack = ConntrackSample {
        reason: Some("the nf_conntrack module is not loaded".into()),
        ..Default::default()
    };
    app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    let screen = text(&mut app, 80, 24);
    assert!(screen.contains("Conntrack: not available"), "{screen}");
    assert!(
        screen.contains("nf_conntrack module is not loaded"),
        "{screen}"
    );
}

#[test]
fn missing_capability_shows_stats_and_says_why_no_entries() {
    let mut app = App::new(Tab::Conntrack, Duration::from_secs(1), true);
    let mut s = sample(1.0, 0);
    s.conntrack = ConntrackSample {
        available: true,
        source: StatsSource::Proc,
        count: Some(3),
        max: Some(100),
        stats: Some(ConntrackStats::default()),
        entries_error: Some("listing entries needs CAP_NET_ADMIN".into()),
        ..Default::default()
    };
    app.on_sampler(SamplerEvent::Sample(Box::new(s)));
    let screen = text(&mut app, 80, 24);
    assert!(screen.contains("count 3 / max 100"), "{screen}");
    assert!(screen.contains("needs CAP_NET_ADMIN"), "{screen}");
    assert!(screen.contains("via /proc"), "{screen}");
}

#[test]
fn every_size_renders_without_panic() {
    for acct in [false, true] {
        let mut app = ct_app(8, 5, acct);
        app.on_key(Key::Down);
        for width in (1..=24).chain([30, 40, 60, 79, 80, 81, 130]) {
            for height in (1..=12).chain([20, 24, 26]) {
                render(&mut app, width, height);
            }
        }
    }
}
