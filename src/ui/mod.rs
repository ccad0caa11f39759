//! Drawing. Every function here reads App state and writes a frame; nothing
//! here touches netlink, /proc or the keyboard.
//!
//! ```text
//! ┌ header: host, netns, interval, live/paused, host rx/tx totals ─────────┐
//! │ findings line: worst finding first, "+N more"                         │
//! │ tab bar: 1 Interfaces 2 Sockets 3 TCP 4 Conntrack 5 DNS 6 Flows 7 Load │
//! │ body: the active tab (or the help overlay)                            │
//! │ timeline (replay only): play state, speed, position bar, time          │
//! └ footer: key hints from the keymap, or the filter prompt ──────────────┘
//! ```

pub mod chrome;
pub mod conntrack;
pub mod flow_detail;
pub mod flows;
pub mod format;
pub mod help;
pub mod interface_detail;
pub mod interfaces;
pub mod load;
pub mod pending;
pub mod socket_detail;
pub mod sockets;
pub mod spark;
pub mod tcp;
pub mod theme;
pub mod timeline;

use crate::app::App;
use crate::app::tabs::Tab;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use theme::Theme;

pub fn draw(frame: &mut Frame, app: &mut App) {
    let theme = Theme { color: app.color };
    app.refresh_derived();
    let timeline_rows = u16::from(app.replay.is_some());
    let [header, findings, tabs, body, timeline_area, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(timeline_rows),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    if app.replay.is_some() {
        timeline::render(frame, timeline_area, app, theme);
    }
    chrome::render_header(frame, header, app, theme);
    chrome::render_findings(frame, findings, app, theme);
    chrome::render_tabs(frame, tabs, app, theme);
    chrome::render_footer(frame, footer, app, theme);
    app.hits.rows = None;
    if app.help {
        app.help_scroll = help::render(frame, body, app.help_scroll, theme);
        return;
    }
    if app.flow_detail_shown() {
        flow_detail::render(frame, body, app, theme);
        return;
    }
    match app.tab {
        Tab::Interfaces => interfaces::render(frame, body, app, theme),
        Tab::Conntrack => conntrack::render(frame, body, app, theme),
        Tab::Sockets => sockets::render(frame, body, app, theme),
        Tab::Tcp => tcp::render(frame, body, app, theme),
        Tab::Load => load::render(frame, body, app, theme),
        Tab::Flows => flows::render(frame, body, app, theme),
        other => pending::render(frame, body, other, theme),
    }
}
