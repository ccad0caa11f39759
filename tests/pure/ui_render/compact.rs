//! The compact layout for small panes (40x8): each tab's essentials.

use super::flows::flows_app;
use super::*;

fn lines(app: &mut App, width: u16, height: u16) -> Vec<String> {
    let terminal = render(app, width, height);
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect()
}

/// Each tab's essentials in 40x8: the status line names the tab and the
/// worst finding; the body shows the tab's key column and rows. No
/// header, tab bar or footer.
#[test]
fn every_tab_shows_its_essentials_in_40x8() {
    let cases: [(char, &str, &[&str]); 6] = [
        ('1', "1 Ifaces", &["IFACE", "eth0", "rxkB/s"]),
        ('2', "2 Sockets", &["RcvQ/acc", "198.18.0.2:8080"]),
        ('3', "3 TCP", &["ESTABLISHED", "listen-overflow"]),
        ('4', "4 Conntrack", &["Conntrack"]),
        ('5', "5 DNS", &["DNS"]),
        ('7', "7 Load", &["kind", "target"]),
    ];
    for (key, title, wanted) in cases {
        let mut app = stack_app(key);
        let shown = lines(&mut app, 40, 8);
        let text = shown.join("\n");
        assert!(shown[0].starts_with(title), "{text}");
        assert!(shown[0].contains("CRIT iface-saturated"), "{text}");
        for word in wanted {
            assert!(text.contains(word), "{title}: no {word}:\n{text}");
        }
        for chrome in ["netlens testhost", "quit", "2 Sockets│", "findings:"] {
            assert!(!text.contains(chrome), "{title}: {chrome}:\n{text}");
        }
    }
}

#[test]
fn flows_in_40x8() {
    let mut app = flows_app(true);
    let text = lines(&mut app, 40, 8).join("\n");
    assert!(text.starts_with("6 Flows"), "{text}");
    assert!(text.contains("198.18.0.1"), "{text}");
}

/// The rule: compact below 60 columns or 12 rows, or always with
/// --compact; the full chrome otherwise.
#[test]
fn compact_follows_the_size_rule_and_the_flag() {
    for (width, height, compact) in [
        (59, 24, true),
        (60, 24, false),
        (80, 11, true),
        (80, 12, false),
        (40, 8, true),
    ] {
        let mut app = stack_app('2');
        let first = lines(&mut app, width, height).remove(0);
        assert_eq!(
            first.starts_with("2 Sockets"),
            compact,
            "{width}x{height}: {first}"
        );
        assert_eq!(
            first.starts_with("netlens"),
            !compact,
            "{width}x{height}: {first}"
        );
    }
    let mut app = stack_app('2');
    app.compact = true;
    assert!(lines(&mut app, 130, 40)[0].starts_with("2 Sockets"));
}

/// The Load tab stacks the run under the form when narrow: its text is
/// never broken across lines in a squeezed side panel.
#[test]
fn narrow_load_tab_does_not_wrap_into_a_sliver() {
    for width in 40..=80 {
        let mut app = stack_app('7');
        let text = lines(&mut app, width, 24).join("\n");
        assert!(text.contains("Fill in the form"), "{width}:\n{text}");
    }
}

#[test]
fn every_size_and_tab_renders_compact_without_panic() {
    for tab in ['1', '2', '3', '4', '5', '6', '7'] {
        for help in [false, true] {
            let mut app = stack_app(tab);
            app.compact = true;
            if help {
                app.on_key(Key::Char('?'));
            }
            for width in (1..=24).chain([30, 40, 59, 60, 80, 130]) {
                for height in 1..=12 {
                    let shown = lines(&mut app, width, height);
                    assert_eq!(shown.len(), usize::from(height));
                }
            }
        }
    }
}
