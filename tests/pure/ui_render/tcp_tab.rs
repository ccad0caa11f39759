//! The TCP tab: counters, findings and knobs at 80x24 and wide.

use super::*;

#[test]
fn tcp_tab_80x24() {
    let mut app = stack_app('3');
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(text.contains("ListenOverflows"), "{text}");
    assert!(text.contains("listen-overflow"), "{text}");
    assert!(!text.contains("not built yet"), "{text}");
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

#[test]
fn tcp_tab_wide() {
    let mut app = stack_app('3');
    insta::assert_snapshot!(render(&mut app, 140, 30).backend());
}
