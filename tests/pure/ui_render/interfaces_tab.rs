//! The Interfaces tab: its table at 80x24 and wide, sort, filter, detail pane.

use super::*;

#[test]
fn interfaces_tab_80x24() {
    let mut app = app_with_samples();
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn interfaces_tab_wide_shows_every_column() {
    let mut app = app_with_samples();
    insta::assert_snapshot!(render(&mut app, 130, 12).backend());
}

#[test]
fn sort_by_next_column_descending() {
    let mut app = app_with_samples();
    // IFACE -> STATE -> rxpck/s; numbers sort biggest first.
    app.on_key(Key::Char('s'));
    app.on_key(Key::Char('s'));
    let text = format!("{}", render(&mut app, 80, 12).backend());
    let order: Vec<&str> = text
        .lines()
        .skip(4)
        .filter_map(|line| line.trim_matches('"').split_whitespace().next())
        .take(4)
        .collect();
    assert_eq!(order, ["eth0", "wlan0", "lo", "veth0"], "{text}");
    assert!(text.contains("rxpck/s▼"), "{text}");
}

#[test]
fn filter_keeps_matching_rows() {
    let mut app = app_with_samples();
    for key in [Key::Char('/'), Key::Char('w'), Key::Char('l'), Key::Enter] {
        app.on_key(key);
    }
    let text = format!("{}", render(&mut app, 80, 12).backend());
    assert!(text.contains("wlan0") && !text.contains("eth0 "), "{text}");
    assert!(text.contains("[filter: wl]"), "{text}");
    app.on_key(Key::Esc);
    let text = format!("{}", render(&mut app, 80, 12).backend());
    assert!(text.contains("eth0"), "{text}");
}

#[test]
fn detail_pane_of_selected_interface() {
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), true);
    app.hostname = "testhost".into();
    // Two minutes of traffic that ramps up: the charts have a shape.
    let mut total = 0;
    for second in 0..=120u64 {
        total += 1 + second / 10;
        app.on_sampler(SamplerEvent::Sample(Box::new(sample(second as f64, total))));
    }
    app.on_key(Key::Char('G')); // wlan0, last by name: traffic and errors
    app.on_key(Key::Enter);
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
    app.on_key(Key::Esc);
    assert!(!app.interfaces.detail);
}
