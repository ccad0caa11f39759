//! Drawing. Every function here reads App state and writes a frame; nothing
//! here touches netlink, /proc or the keyboard.
//!
//! ```text
//! ┌ header: host, netns, interval, live/paused, host rx/tx totals ─────────┐
//! │ findings line: worst finding first, "+N more"                         │
//! │ tab bar: 1 Interfaces 2 Sockets 3 TCP 4 Conntrack 5 DNS 6 Flows 7 Load │
//! │ body: the active tab (or the help overlay)                            │
//! └ footer: key hints from the keymap, or the filter prompt ──────────────┘
//! ```

pub mod chrome;
pub mod conntrack;
pub mod flows;
pub mod format;
pub mod help;
pub mod interface_detail;
pub mod interfaces;
pub mod pending;
pub mod theme;

use crate::app::App;
use crate::app::tabs::Tab;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use theme::Theme;

pub fn draw(frame: &mut Frame, app: &mut App) {
    let theme = Theme { color: app.color };
    app.refresh_derived();
    let [header, findings, tabs, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    chrome::render_header(frame, header, app, theme);
    chrome::render_findings(frame, findings, app, theme);
    chrome::render_tabs(frame, tabs, app, theme);
    chrome::render_footer(frame, footer, app, theme);
    app.hits.rows = None;
    if app.help {
        help::render(frame, body, theme);
        return;
    }
    match app.tab {
        Tab::Interfaces => interfaces::render(frame, body, app, theme),
        Tab::Conntrack => conntrack::render(frame, body, app, theme),
        Tab::Flows => flows::render(frame, body, app, theme),
        other => pending::render(frame, body, other, theme),
    }
}
