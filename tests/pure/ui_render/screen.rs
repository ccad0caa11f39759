//! The whole screen, whatever the tab: keys, pause, mouse, colour, the
//! header and findings line, configured columns, every size.

use super::*;

#[test]
fn ctrl_l_asks_for_a_full_repaint_and_not_for_the_letter() {
    let mut app = app_with_samples();
    assert!(app.on_key(Key::Ctrl('l')));
    assert!(app.repaint);
    // Ctrl-Q is not q: netlens keeps running.
    assert!(!app.on_key(Key::Ctrl('q')));
    assert!(!app.quit);
}

#[test]
fn dns_tab_without_dns_data_says_so() {
    let mut app = app_with_samples();
    app.on_key(Key::Char('5'));
    let text = format!("{}", render(&mut app, 80, 24).backend());
    assert!(text.contains("waiting for the first DNS sample"), "{text}");
}

#[test]
fn paused_view_stays_on_its_sample() {
    let mut app = app_with_samples();
    app.on_key(Key::Char('p'));
    let before = format!("{}", render(&mut app, 80, 24).backend());
    assert!(before.contains("PAUSED"));
    app.on_sampler(SamplerEvent::Sample(Box::new(sample(102.0, 50))));
    let after = format!("{}", render(&mut app, 80, 24).backend());
    assert_eq!(before, after);
    app.on_key(Key::Char(' '));
    let live = format!("{}", render(&mut app, 80, 24).backend());
    assert_ne!(before, live);
}

#[test]
fn click_selects_tab_and_row() {
    let mut app = app_with_samples();
    render(&mut app, 80, 24);
    // Row 4 is the second data row (header, findings, tabs, table header).
    assert!(app.on_click(2, 5));
    assert_eq!(
        app.interfaces.selected.as_ref().map(|s| s.name.as_str()),
        Some("lo")
    );
    // "2 Sockets" sits after "1 Ifaces " (ten tabs: no bars at 80).
    assert!(app.on_click(18, 2));
    assert_eq!(app.tab, Tab::Sockets);
}

#[test]
fn no_color_keeps_selection_visible() {
    let mut app = app_with_samples();
    app.color = false;
    let terminal = render(&mut app, 80, 24);
    let buffer = terminal.backend().buffer();
    let mut reversed_row = None;
    let mut any_color = false;
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            let cell = &buffer[(x, y)];
            if cell.fg != ratatui::style::Color::Reset || cell.bg != ratatui::style::Color::Reset {
                any_color = true;
            }
            if y > 3 && cell.modifier.contains(ratatui::style::Modifier::REVERSED) {
                reversed_row.get_or_insert(y);
            }
        }
    }
    assert!(!any_color, "no colour may be used with NO_COLOR");
    assert_eq!(
        reversed_row,
        Some(4),
        "the selected row is shown in reverse video"
    );
}

#[test]
fn every_size_down_to_tiny_renders_without_panic() {
    for tab_key in ['1', '2', '4', '6', '7'] {
        for detail in [false, true] {
            for help in [false, true] {
                let mut app = app_with_samples();
                app.on_key(Key::Char(tab_key));
                if detail {
                    app.on_key(Key::Enter);
                }
                if help {
                    app.on_key(Key::Char('?'));
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
}

#[test]
fn findings_line_names_the_worst() {
    let mut app = app_with_samples();
    let text = format!("{}", render(&mut app, 100, 24).backend());
    assert!(text.contains("WARN iface-errors: wlan0"), "{text}");
    assert!(text.contains("2 findings │ WARN iface-errors"), "{text}");
}

/// Issue 24: the 80-column header lost TX while REC showed; it gives up
/// detail (unix count, packet rates, interval) first and keeps RX, TX and
/// REC whole down to 60 columns.
#[test]
fn header_keeps_rx_tx_and_rec_at_80_and_60_columns() {
    let mut app = stack_app('2');
    let dir = std::env::temp_dir().join(format!("netlens-header-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = netlens::record::meta("host", std::time::Duration::from_secs(1));
    app.recording = Some(netlens::record::Recorder::create(&dir.join("a.nlrec"), &meta).unwrap());
    for width in [80u16, 60] {
        let text = format!("{}", render(&mut app, width, 24).backend());
        let header = text.lines().next().unwrap();
        assert!(header.contains("● REC"), "{width}: {header}");
        assert!(header.contains("RX 5.3Gb/s"), "{width}: {header}");
        assert!(header.contains("TX 126.3Mb/s"), "{width}: {header}");
        // The footer shows whole hints only, the table's filter among them
        // at 80 columns (F2/F3 pushed it off and were cut: "F3 se").
        let footer = text.lines().last().unwrap().trim_matches('"').trim_end();
        let last_hint = footer.rsplit("  ").next().unwrap_or(footer);
        assert!(
            !footer.ends_with(" F3 se"),
            "{width}: {footer} ({last_hint})"
        );
        if width == 80 {
            assert!(footer.contains("/ filter"), "{footer}");
        }
    }
    drop(app);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The config's [columns] chooses a table's columns; the rest still fit.
#[test]
fn configured_columns_are_the_only_ones_shown() {
    let mut app = stack_app('2');
    app.columns.sockets = vec!["State".into(), "Local".into(), "Peer".into()];
    let text = format!("{}", render(&mut app, 130, 20).backend());
    let header = text.lines().nth(3).unwrap_or_default();
    assert!(
        header.contains("State") && header.contains("Local"),
        "{text}"
    );
    assert!(
        !header.contains("RcvQ/acc") && !header.contains("Process"),
        "{text}"
    );
    app.on_key(Key::Char('1'));
    app.columns.interfaces = vec!["IFACE".into(), "%util".into()];
    let text = format!("{}", render(&mut app, 130, 20).backend());
    let header = text.lines().nth(3).unwrap_or_default();
    assert!(
        header.contains("IFACE") && header.contains("%util"),
        "{text}"
    );
    assert!(!header.contains("rxpck/s"), "{text}");
}
