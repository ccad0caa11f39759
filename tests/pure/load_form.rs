//! The Load tab's form checks each value as it is entered, with the
//! parsers `netlens load` uses, and says what is wrong beside the form.

use netlens::app::App;
use netlens::app::keymap::Key;
use netlens::app::tabs::Tab;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

fn load_app() -> App {
    let mut app = App::new(Tab::Interfaces, Duration::from_secs(1), false);
    app.on_key(Key::Char('7'));
    app
}

/// Enter, clear the field, type `text`, Enter.
fn type_field(app: &mut App, text: &str) {
    app.on_key(Key::Enter);
    for _ in 0..40 {
        app.on_key(Key::Backspace);
    }
    for c in text.chars() {
        app.on_key(Key::Char(c));
    }
    app.on_key(Key::Enter);
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| netlens::ui::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn bad_values_are_refused_where_they_are_typed() {
    let mut app = load_app();
    assert_eq!(app.tab, Tab::Load);
    // kind, target, duration, rate, conns.
    app.on_key(Key::Down);
    app.on_key(Key::Down);
    type_field(&mut app, "198.18.210.2:5202");
    assert_eq!(app.load.duration, "10s", "the bad value is not kept");
    assert!(
        app.load.editing.is_some(),
        "the editor stays open to fix it"
    );
    let error = app.load.field_error.clone().unwrap();
    assert!(
        error.starts_with("duration: '198.18.210.2:5202' is not a duration"),
        "{error}"
    );
    let shown = screen(&mut app);
    assert!(shown.contains("✗ duration:"), "{shown}");
    assert!(shown.contains("is not a duration (try 1s"), "{shown}");
    app.on_key(Key::Esc);
    assert!(app.load.editing.is_none() && app.load.field_error.is_none());
    // Too long for a load run, and an overflowing one.
    for bad in ["2h", "99999999999999999999s"] {
        type_field(&mut app, bad);
        assert_eq!(app.load.duration, "10s", "{bad}");
        assert!(app.load.field_error.is_some(), "{bad}");
        app.on_key(Key::Esc);
    }
    type_field(&mut app, "30s");
    assert_eq!(app.load.duration, "30s");
    assert!(app.load.editing.is_none());
    // The rate, the connections and the target.
    app.on_key(Key::Down);
    type_field(&mut app, "fast");
    assert_eq!(app.load.rate, "0");
    assert!(
        app.load
            .field_error
            .as_deref()
            .unwrap()
            .starts_with("rate: ")
    );
    app.on_key(Key::Esc);
    app.on_key(Key::Down);
    type_field(&mut app, "0");
    assert_eq!(app.load.connections, "1");
    assert!(
        app.load
            .field_error
            .as_deref()
            .unwrap()
            .starts_with("conns: ")
    );
    app.on_key(Key::Esc);
    for _ in 0..3 {
        app.on_key(Key::Up);
    }
    type_field(&mut app, "10s");
    assert_eq!(app.load.target, "127.0.0.1:5201");
    let error = app.load.field_error.clone().unwrap();
    assert!(error.contains("has no port"), "{error}");
    app.on_key(Key::Esc);
    type_field(&mut app, "198.18.0.9:5202");
    assert_eq!(app.load.target, "198.18.0.9:5202");
}
