//! Drawing. Every function here reads App state and writes a frame; nothing
//! here touches netlink, /proc or the keyboard.
//!
//! ```text
//! ┌ header: host, netns, interval, live/paused, host rx/tx totals ─────────┐
//! │ findings line: worst finding first, "+N more"                         │
//! │ tab bar: 1 Interfaces 2 Sockets … 8 Drops 9 Processes                 │
//! │ body: the active tab (or the help overlay)                            │
//! │ timeline (replay only): play state, speed, position bar, time          │
//! └ footer: key hints from the keymap, or the filter prompt ──────────────┘
//! ```

pub mod chrome;
pub mod closed;
pub mod conntrack;
pub mod cpu;
pub mod dns;
pub mod drops;
mod failed;
pub mod findings_list;
pub mod flow_detail;
pub mod flows;
pub use crate::app::format;
pub mod help;
pub mod interface_detail;
pub mod interfaces;
pub mod load;
pub mod namespaces;
pub mod nic_detail;
mod path;
pub mod processes;
pub mod prompts;
pub mod servers;
pub mod setup;
pub mod socket_detail;
pub mod sockets;
pub mod spark;
pub mod table;
pub mod tcp;
pub mod theme;
pub mod timeline;

use crate::app::App;
use crate::app::overlay::Overlay;
use crate::app::tabs::Tab;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use theme::Theme;

/// Below this many columns or rows the layout is compact even without
/// --compact: a 2x2 tmux layout on an 80x24 terminal gives ~40x11 panes.
/// (12 rows still fit the full chrome: four lines of it and eight of table.)
pub const COMPACT_WIDTH: u16 = 60;
pub const COMPACT_HEIGHT: u16 = 12;

/// Whether a frame of this size uses the compact layout.
pub fn is_compact(app: &App, area: ratatui::layout::Rect) -> bool {
    app.compact || area.width < COMPACT_WIDTH || area.height < COMPACT_HEIGHT
}

pub fn draw(frame: &mut Frame, app: &mut App) {
    let theme = Theme { color: app.color };
    app.refresh_derived();
    if is_compact(app, frame.area()) {
        draw_compact(frame, app, theme);
        return;
    }
    let timeline_rows = u16::from(app.replay.is_some());
    // A filter that does not parse shows its error under the filter line.
    let footer_rows = 1 + u16::from(app.filter_error().is_some());
    let [header, findings, tabs, body, timeline_area, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(timeline_rows),
        Constraint::Length(footer_rows),
    ])
    .areas(frame.area());
    if app.replay.is_some() {
        timeline::render(frame, timeline_area, app, theme);
    }
    chrome::render_header(frame, header, app, theme);
    chrome::render_findings(frame, findings, app, theme);
    chrome::render_tabs(frame, tabs, app, theme);
    chrome::render_footer(frame, footer, app, theme);
    render_body(frame, body, app, theme);
}

/// The compact layout: one status line (tab, worst finding, mode), the tab's
/// body, and the replay timeline when replaying. No header, tab bar or footer.
fn draw_compact(frame: &mut Frame, app: &mut App, theme: Theme) {
    let timeline_rows = u16::from(app.replay.is_some() && frame.area().height >= 4);
    let [status, body, timeline_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(timeline_rows),
    ])
    .areas(frame.area());
    app.hits.tabs.clear();
    chrome::render_compact_status(frame, status, app, theme);
    if timeline_rows > 0 {
        timeline::render(frame, timeline_area, app, theme);
    }
    render_body(frame, body, app, theme);
}

/// What a scope to a namespace other than the primary one means in a tab
/// whose data is the primary namespace's only (capture, TCP counters,
/// conntrack entries, DNS probes, drop sites): said on the tab's first
/// line, with that namespace's own figure where there is one.
pub fn scope_note(app: &App) -> Option<String> {
    let scope = app.scope().filter(|s| !s.is_primary())?;
    let (previous, current) = app.shown();
    let primary = current.map_or("the watched namespace", |s| s.netns.as_str());
    let info = current.and_then(|c| c.namespaces.iter().find(|n| n.id == scope.id));
    let label = &scope.label;
    Some(match app.tab {
        Tab::Flows => {
            format!("ns:{label}: flows with its sockets, as {primary}'s capture sees them")
        }
        Tab::Tcp => {
            let (retrans, drops) = info.zip(current).map_or((None, None), |(info, current)| {
                crate::model::netns::stack_rates(previous, current, info)
            });
            format!(
                "ns:{label}: these are {primary}'s counters; {label}'s own: retr {}/s, drop {}/s",
                format::rate(retrans),
                format::rate(drops),
            )
        }
        Tab::Conntrack => format!(
            "ns:{label}: entries listed are {primary}'s (none shown); {label} tracks {}",
            info.and_then(|i| i.conntrack_count)
                .map_or_else(|| "- (no nf_conntrack)".into(), |c| c.to_string())
        ),
        Tab::Dns | Tab::Drops | Tab::Load => {
            format!("ns:{label}: not per namespace here: this tab is {primary}'s")
        }
        _ => return None,
    })
}

fn render_body(frame: &mut Frame, body: ratatui::layout::Rect, app: &mut App, theme: Theme) {
    app.hits.rows = None;
    match app.screen_overlay() {
        Some(Overlay::Setup(_)) => return setup::render(frame, body, app, theme),
        Some(Overlay::Help { .. }) => {
            if let Some(scroll) = app.help_scroll() {
                *scroll = help::render(frame, body, *scroll, theme);
            }
            return;
        }
        Some(Overlay::Findings(_)) => return findings_list::render(frame, body, app, theme),
        Some(Overlay::Path(_)) => return path::render(frame, body, app, theme),
        _ => {}
    }
    if app.flow_detail_shown() {
        flow_detail::render(frame, body, app, theme);
        return;
    }
    let body = match scope_note(app) {
        Some(note) if body.height > 2 => {
            let [line, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
            let text = format::fit(&note, usize::from(line.width));
            frame.render_widget(
                ratatui::widgets::Paragraph::new(text).style(theme.warn()),
                line,
            );
            rest
        }
        _ => body,
    };
    match app.tab {
        Tab::Interfaces => interfaces::render(frame, body, app, theme),
        Tab::Conntrack => conntrack::render(frame, body, app, theme),
        Tab::Sockets => sockets::render(frame, body, app, theme),
        Tab::Tcp => tcp::render(frame, body, app, theme),
        Tab::Load => load::render(frame, body, app, theme),
        Tab::Flows => flows::render(frame, body, app, theme),
        Tab::Dns => dns::render(frame, body, app, theme),
        Tab::Drops => drops::render(frame, body, app, theme),
        Tab::Processes => processes::render(frame, body, app, theme),
        Tab::Namespaces => namespaces::render(frame, body, app, theme),
    }
}
