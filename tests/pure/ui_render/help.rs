//! The help overlay: the keymap, every key's text whole, scrolling.

use super::*;

#[test]
fn help_overlay_lists_the_keymap() {
    let mut app = app_with_samples();
    app.on_key(Key::F(1));
    insta::assert_snapshot!(render(&mut app, 80, 24).backend());
}

/// Issue 24: the help screen was clipped at 80 columns; every key's text is
/// whole on some page of it (wrapped under itself where the column is
/// narrow), at 80x24 and in a 50-column pane.
#[test]
fn help_shows_every_key_text_whole_at_80_and_50_columns() {
    // Tall enough not to scroll: the width alone decides the wrapping.
    for width in [80u16, 50] {
        let mut app = app_with_samples();
        app.on_key(Key::Char('?'));
        let text = format!("{}", render(&mut app, width, 200).backend());
        let rows: Vec<Vec<char>> = text
            .lines()
            .map(|line| line.trim_matches('"').chars().collect())
            .collect();
        // Two columns from 78 columns on: read the left one, then the right.
        let inner = usize::from(width) - 2;
        let split = if width >= 78 {
            1 + inner / 2
        } else {
            width as usize
        };
        let mut seen = String::new();
        for range in [1..split, split..usize::from(width) - 1] {
            for row in &rows {
                let part: String = row.get(range.clone()).unwrap_or(&[]).iter().collect();
                seen.push_str(part.trim_matches(|c| c == '│' || c == ' '));
                seen.push(' ');
            }
        }
        let joined = seen.split_whitespace().collect::<Vec<_>>().join(" ");
        for binding in netlens::app::keymap::BINDINGS {
            let help = binding
                .help
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                joined.contains(&help),
                "{width} columns: {help:?} is not whole in the help:\n{text}"
            );
        }
    }
}

#[test]
fn help_scrolls_when_taller_than_the_pane() {
    let mut app = app_with_samples();
    app.on_key(Key::Char('?'));
    let top = format!("{}", render(&mut app, 80, 14).backend());
    assert!(top.contains("j/k scroll"), "{top}");
    assert!(top.contains("Anywhere"), "{top}");
    for _ in 0..50 {
        app.on_key(Key::Char('j'));
    }
    let bottom = format!("{}", render(&mut app, 80, 14).backend());
    assert!(bottom.contains("--mouse"), "{bottom}");
    assert!(!bottom.contains("Anywhere"), "{bottom}");
    // The scroll is clamped, so one step up moves at once.
    app.on_key(Key::Char('k'));
    let up = format!("{}", render(&mut app, 80, 14).backend());
    assert_ne!(up, bottom);
}
