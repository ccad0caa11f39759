//! The Processes tab: which process uses the network.
//!
//! ```text
//! PID     Command         User     TCP send/s TCP recv/s    UDP/s Socks Estab Lstn
//! 4242    iperf3          root     11.9 MiB/s      0 B/s        –     2     1    0
//! 812     nginx           www-data  1.20 KiB/s  310 B/s        –    14    12    2
//! pid 4242 iperf3 (root) system.slice/…: ESTAB 1, LISTEN 1; 0 retr/s
//! TCP bytes from tcp_info; not counted: a socket's bytes after its last…
//! ```
//!
//! Enter lists the selected process's sockets with their own rates.

use super::format::{self, fit};
use super::table;
use super::theme::Theme;
use crate::app::App;
use crate::app::format::per_s;
use crate::app::processes::{COLUMNS, Column, ColumnSpec};
use crate::app::view::Shown;
use crate::model::Sample;
use crate::model::closed::lost_note;
use crate::model::processes::{ProcessRow, owner, short_connections_unowned, socket_rates};
use crate::model::socket_table::Socket;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};

/// `model::processes::NOT_COUNTED` in one 80-column line.
pub const NOT_COUNTED_SHORT: &str =
    "not counted: unowned sockets; closing sockets' last bytes without the conn log";
/// `model::processes::NOT_COUNTED_WITHOUT_BPF` in one 80-column line.
pub const NOT_COUNTED_SHORT_WITHOUT_BPF: &str =
    "not counted: unowned sockets; conns opened+closed between samples (no eBPF)";

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    let Some(index) = app.shown_index() else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    };
    // Not app.shown_view(): that borrows all of App, the view is mutated.
    let shown = Shown {
        history: &app.history,
        index: Some(index),
    };
    let rows = app.processes.rows(&shown).to_vec();
    let selected = app.processes.selected_index();
    if app.processes.detail
        && let Some(row) = selected.and_then(|i| rows.get(i))
    {
        render_detail(frame, area, &shown, row, theme);
        return;
    }
    let info_height = match area.height {
        12.. => 2,
        8..=11 => 1,
        _ => 0,
    };
    let [table_area, info_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(info_height)]).areas(area);
    let view = &mut app.processes;
    view.window
        .fit(selected, rows.len(), table::visible_rows(table_area));
    let columns = table::fitting(COLUMNS, table_area.width, |_| true);
    let drawn = table::Drawn {
        sorted: view.sort,
        descending: view.descending,
        selected,
        offset: view.window.offset,
        ..table::Drawn::new(columns, &[Column::Cgroup])
    };
    view.on_screen = drawn.on_screen();
    let offset = drawn.offset;
    let row = |i| rows.get(i);
    let text = |row: &&ProcessRow, spec: &ColumnSpec, width| (spec.cell)(row, width);
    if let Some(body_area) = table::render(frame, table_area, drawn, row, text, table::plain, theme)
    {
        app.hits.rows = Some((body_area, offset));
        if rows.is_empty() {
            let note = if app.processes.filter.is_empty() {
                "no process holds a socket that netlens can see (root sees every owner)"
            } else {
                "no process matches the filter"
            };
            table::render_empty_note(frame, body_area, note);
        }
    }
    let width = usize::from(info_area.width);
    let summary = selected.and_then(|i| rows.get(i)).map(summary);
    let mut lines: Vec<Line> = summary
        .into_iter()
        .map(|text| Line::raw(fit(&text, width)))
        .collect();
    lines.push(match lost_ends(&shown) {
        0 => Line::raw(fit(not_counted_short(shown.current()), width)),
        lost => Line::styled(fit(&lost_note(lost), width), theme.alert()),
    });
    frame.render_widget(Paragraph::new(lines), info_area);
}

/// Connection ends the kernel dropped over the shown interval: the rates
/// miss those connections' last bytes.
fn lost_ends(shown: &Shown) -> u64 {
    let (previous, current) = shown.pair();
    let previous = previous.and_then(|s| s.closed.as_ref());
    let current = current.and_then(|s| s.closed.as_ref());
    current.map_or(0, |c| c.lost_since(previous))
}

/// What the rates leave out, in one 80-column line.
fn not_counted_short(current: Option<&Sample>) -> &'static str {
    if current.is_some_and(short_connections_unowned) {
        NOT_COUNTED_SHORT_WITHOUT_BPF
    } else {
        NOT_COUNTED_SHORT
    }
}

/// "pid 4242 iperf3 (root) in nginx.service: ESTAB 1, LISTEN 1; 0.0
/// retr/s, max rtt 0.1 ms".
pub fn summary(row: &ProcessRow) -> String {
    let states: Vec<String> = row.states.iter().map(|(s, n)| format!("{s} {n}")).collect();
    let cgroup = row.place().map(|c| format!(" in {c}")).unwrap_or_default();
    let rtt = row
        .worst_rtt_us
        .map(|us| format!(", max rtt {:.1} ms", f64::from(us) / 1000.0))
        .unwrap_or_default();
    format!(
        "pid {} {} ({}){cgroup}: {}; {} retr/s{rtt}",
        row.pid,
        row.command,
        row.user,
        states.join(", "),
        format::rate(row.retrans_per_s)
    )
}

/// Enter: the process and each of its sockets with its own rates.
fn render_detail(frame: &mut Frame, area: Rect, shown: &Shown, row: &ProcessRow, theme: Theme) {
    let (previous, current) = shown.pair();
    let Some(current) = current else { return };
    let [head, list] = Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(area);
    let head_text = format!(
        "{}\nTCP sent {}  received {}  UDP {}   (x: these sockets in Sockets; Esc: back)",
        summary(row),
        per_s(row.tcp_send_per_s),
        per_s(row.tcp_recv_per_s),
        per_s(row.udp_per_s),
    );
    frame.render_widget(Paragraph::new(head_text).wrap(Wrap { trim: false }), head);
    let rates = socket_rates(previous, current, row.pid);
    let mut sockets: Vec<_> = current
        .sockets
        .iter()
        .filter(|s| owner(s) == Some(row.pid))
        .collect();
    sockets.sort_by(|a, b| {
        let total = |s: &Socket| rates.get(&s.key()).map_or(0.0, |(tx, rx)| tx + rx);
        total(b).total_cmp(&total(a)).then(a.local.cmp(&b.local))
    });
    let header =
        Row::new(["Net", "State", "Local", "Peer", "send/s", "recv/s"]).style(theme.header());
    let body = sockets
        .iter()
        .take(usize::from(list.height.saturating_sub(1)))
        .map(|s| {
            let (tx, rx) = rates.get(&s.key()).copied().unzip();
            Row::new(vec![
                Cell::from(s.proto.name()),
                Cell::from(s.state_name()),
                Cell::from(table::fit_endpoints(&s.local_text(), 21)),
                Cell::from(table::fit_endpoints(&s.peer_text(), 21)),
                Cell::from(Line::raw(per_s(tx)).right_aligned()),
                Cell::from(Line::raw(per_s(rx)).right_aligned()),
            ])
        });
    let widths = [
        Constraint::Length(3),
        Constraint::Length(10),
        Constraint::Length(21),
        Constraint::Length(21),
        Constraint::Length(10),
        Constraint::Length(10),
    ];
    frame.render_widget(
        Table::new(body, widths).header(header).column_spacing(1),
        list,
    );
}
