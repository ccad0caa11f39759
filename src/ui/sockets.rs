//! The Sockets tab: `ss -tuanp` live, largest queues first.
//!
//! ```text
//! State      RcvQ/acc▼ SndQ/max Local             Peer              Process
//! LISTEN             5        4 198.18.0.2:8080   *:*               web/42
//! ESTAB          81920        0 198.18.0.2:8080   198.18.0.1:40312  web/42
//! ── selected: users, uid, rtt, cwnd, retrans ──
//! ```
//! At 80 columns: State, the queues, both endpoints and the process; wider
//! terminals add Net, Flag, rtt, cwnd, retr. An endpoint too long for its
//! column loses the middle of its address, never its port.
//! Only the visible rows are built; the sorted order is cached per sample.

use super::format;
use super::socket_detail;
use super::table;
use super::theme::Theme;
use crate::app::App;
pub use crate::app::format::{fit_endpoint, netns_cell};
use crate::app::names::Names;
pub use crate::app::socket_columns::{
    Containers, SocketCell, container_of, local_name, owner_cell, owner_text, peer_name,
};
use crate::app::sockets::Listing;
use crate::app::sockets::{Branch, COLUMNS, Column, ColumnSpec, branch, flag};
use crate::app::table::{CellText, Hint};
use crate::model::Sample;
use crate::model::processes::{Container, containers_by_pid, short_id};
use crate::model::snmp;
use crate::model::socket_table::Socket;
use crate::model::tcp_rates::TcpRates;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    match app.sockets.listing {
        Listing::Open => {}
        Listing::Closed => return super::closed::render(frame, area, app, theme),
        Listing::Failed => return super::failed::render(frame, area, app, theme),
    }
    let Some(index) = app.shown_index() else {
        frame.render_widget(Paragraph::new("waiting for the first sample…"), area);
        return;
    };
    if app.sockets.detail {
        socket_detail::render(frame, area, app, index, theme);
        return;
    }
    let (previous, current) = app.history.pair(index);
    let Some(current) = current else {
        return;
    };
    let overflows_rising = TcpRates::new(previous, current)
        .and_then(|r| r.rate(snmp::TCP_EXT_LISTEN_OVERFLOWS))
        .is_some_and(|r| r > 0.0);
    let containers = containers_by_pid(current);
    let names = &app.names;
    let view = &mut app.sockets;
    let total = view.order(current).len();
    let order = view.take_order();
    let selected = view.selected_index(&order, current);
    view.put_order(order);

    let info_height = match area.height {
        12.. => 3,
        8..=11 => 2,
        _ => 0,
    };
    let [table_area, info_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(info_height)]).areas(area);
    view.window
        .fit(selected, total, table::visible_rows(table_area));
    // Sorted as far as the window now reaches (only what is shown is).
    view.order(current);
    let order = view.take_order();

    let tree = view.tree;
    let many = current.many_namespaces();
    let columns = if tree {
        tree_columns(table_area.width, &app.columns.sockets, many)
    } else {
        fitting_columns(table_area.width, &app.columns.sockets, many)
    };
    let drawn = table::Drawn {
        widths: column_widths(&columns, table_area.width),
        sorted: Some(view.sort),
        descending: view.descending,
        selected,
        offset: view.window.offset,
        // column_widths gave Local, Peer and Process what is left over.
        ..table::Drawn::new(columns, &[])
    };
    view.on_screen = drawn.on_screen();
    // Without the Flag column the flag word leads the State cell, so a
    // highlighted row says why without colour.
    let flag_in_state = !view.on_screen.contains(&Column::Flag);
    let offset = drawn.offset;
    let view = &app.sockets;
    let row = |i| {
        let &row = order.get(i)?;
        let socket = &current.sockets.at(row as usize);
        let marked = flag(socket, overflows_rising, &view.thresholds);
        let line = SocketLine {
            socket: *socket,
            at: i,
            count: view.row_count(row),
            context: SocketCell {
                sample: current,
                containers: &containers,
                names,
                marked,
                state_flag: marked.filter(|_| flag_in_state),
            },
        };
        Some(line)
    };
    let text = |line: &SocketLine, spec: &ColumnSpec, width| {
        if line.count > 1 && spec.column == Column::Local {
            // A TIME_WAIT group: its count where the local ends vary.
            CellText::from(format!("{} sockets", line.count))
        } else if tree && spec.column == Column::Process {
            let branch = branch(&order, line.at, &current.sockets);
            CellText::from(tree_text(&line.socket, branch, &containers))
        } else {
            (spec.cell)(&line.socket, &line.context, width)
        }
    };
    let hint = |line: &SocketLine| match line.context.marked {
        Some(_) => Hint::Warn,
        None => Hint::Plain,
    };
    let body = table::render(frame, table_area, drawn, row, text, hint, theme);
    let selected_row = selected.and_then(|i| order.get(i)).copied();
    let group = selected_row.map_or(1, |r| app.sockets.row_count(r));
    let selected_socket = selected_row.map(|r| current.sockets.at(r as usize));
    if let Some(body_area) = body {
        app.hits.rows = Some((body_area, offset));
        if total == 0 {
            let note = if app.sockets.sorting() {
                "sorting…"
            } else if app.sockets.filter.is_empty() {
                "no TCP or UDP sockets"
            } else {
                "no socket matches the filter"
            };
            table::render_empty_note(frame, body_area, note);
        }
    }
    // A new order is made off the UI thread: the old one shows meanwhile.
    let mark = if app.sockets.sorting() {
        "sorting… "
    } else {
        ""
    };
    match selected_socket {
        Some(socket) if group > 1 => {
            let text = format!(
                "{mark}TIME-WAIT: {group} sockets to {}, counted as one row; Enter lists them, Esc folds",
                peer_text(&socket)
            );
            frame.render_widget(
                Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
                info_area,
            );
        }
        Some(socket) => {
            let container = container_of(&socket, &containers);
            let netns = namespace_text(current, &socket);
            render_info(
                frame,
                info_area,
                &socket,
                (total, container, netns, mark),
                (theme, &app.names),
            );
        }
        None => frame.render_widget(Paragraph::new(mark.trim_end()), info_area),
    }
    app.sockets.put_order(order);
}

/// A socket's row as the table builds it: the `at`th row, standing for
/// `count` sockets (a TIME_WAIT group), its cells drawn in `context`.
struct SocketLine<'a> {
    socket: Socket<'a>,
    at: usize,
    count: u32,
    context: SocketCell<'a>,
}

/// The columns that fit in `width`, by priority, in the config's order
/// (the setup screen's F7/F8) or else the table's; the namespace column
/// only when the sample holds `many` namespaces.
pub fn fitting_columns(width: u16, shown: &[String], many: bool) -> Vec<&'static ColumnSpec> {
    let mut columns = table::fitting(COLUMNS, width, |spec| {
        (many || spec.column != Column::Netns) && crate::config::Columns::shows(shown, spec.title)
    });
    columns.sort_by_key(|spec| shown.iter().position(|title| title == spec.title));
    columns
}

/// The tree's columns (F5): the process first, always, then what fits.
fn tree_columns(width: u16, shown: &[String], many: bool) -> Vec<&'static ColumnSpec> {
    let Some(process) = COLUMNS.iter().find(|c| c.column == Column::Process) else {
        return fitting_columns(width, shown, many);
    };
    let rest = width.saturating_sub(process.width + 1);
    let mut columns = vec![process];
    columns.extend(
        fitting_columns(rest, shown, many)
            .into_iter()
            .filter(|c| c.column != Column::Process),
    );
    columns
}

/// The tree's process cell: the owner on a process's first socket, then
/// branches, as htop draws threads under their process.
fn tree_text(socket: &Socket, branch: Branch, containers: &Containers) -> String {
    match branch {
        Branch::First if socket.users.is_empty() => "(no owner)".into(),
        Branch::First => owner_cell(socket, containers),
        Branch::Middle => " ├─".into(),
        Branch::Last => " └─".into(),
    }
}

/// Each column's width in `total`: its own, and what is left over shared
/// by Local, Peer and Process (so an endpoint knows its room and can keep
/// its port).
fn column_widths(columns: &[&ColumnSpec], total: u16) -> Vec<u16> {
    let flexible = |column| matches!(column, Column::Local | Column::Peer | Column::Process);
    let used: u16 = columns.iter().map(|spec| spec.width).sum::<u16>()
        + (columns.len() as u16).saturating_sub(1);
    let mut spare = total.saturating_sub(used);
    let mut shares = columns.iter().filter(|spec| flexible(spec.column)).count() as u16;
    columns
        .iter()
        .map(|spec| {
            if !flexible(spec.column) || shares == 0 {
                return spec.width;
            }
            let extra = spare / shares;
            spare -= extra;
            shares -= 1;
            spec.width + extra
        })
        .collect()
}

/// "container web (podman 3f2a1b9c8d7e)": the name and what it is.
pub fn container_text(container: &Container) -> String {
    let what = format!("{} {}", container.runtime, short_id(&container.id));
    if container.named() {
        format!("container {} ({what})", container.label())
    } else {
        format!("container {what} (unnamed: its runtime's files and API are unreadable)")
    }
}

/// The peer as ss prints it ("0.0.0.0:*", "[::]:*", "*:*" dual-stack).
pub fn peer_text(socket: &Socket) -> String {
    socket.peer_text()
}

/// Two lines about the selected socket.
/// "netns NAME (container)" for a socket of a sample that holds several
/// namespaces (--all-netns); None when it holds one.
fn namespace_text(sample: &Sample, socket: &Socket) -> Option<String> {
    namespace_name(sample, socket.netns).map(|name| format!("netns {name}"))
}

/// "NAME (container)" of namespace `id` while the sample holds several
/// namespaces (--all-netns); None when it holds one. The flow screen
/// shows it too.
pub fn namespace_name(sample: &Sample, id: u16) -> Option<String> {
    if !sample.many_namespaces() {
        return None;
    }
    let info = sample.namespaces.iter().find(|n| n.id == id);
    Some(info.map_or_else(|| sample.netns_label(id).to_string(), |i| i.display()))
}

fn render_info(
    frame: &mut Frame,
    area: Rect,
    socket: &Socket,
    (total, container, netns, mark): (usize, Option<&Container>, Option<String>, &str),
    (theme, names): (Theme, &Names),
) {
    if area.height == 0 {
        return;
    }
    let queues = if socket.is_listener() {
        format!(
            "accept queue {} of backlog {}",
            socket.recv_q, socket.send_q
        )
    } else {
        format!(
            "Recv-Q {} B unread, Send-Q {} B unacked",
            socket.recv_q, socket.send_q
        )
    };
    let first = Line::from(vec![
        Span::styled(mark.to_string(), theme.title()),
        Span::styled(
            format!("{} {} ", socket.proto.name(), socket.state_name()),
            theme.title(),
        ),
        Span::raw(format!(
            "{} → {}  {queues}  {} sockets",
            names.endpoint(socket.proto.name(), &socket.local.to_string()),
            peer_name(socket, names),
            total
        )),
    ]);
    // The namespace and container first: the line is cut at the pane's edge.
    let mut details: Vec<String> = netns.into_iter().collect();
    details.extend(container.map(container_text));
    details.extend([format!("uid {}", socket.uid), owner_text(socket)]);
    if let Some(t) = socket.tcp {
        details.push(format!(
            "rtt {:.1}/{:.1} ms cwnd {} retrans {} acked {} rcvd {}",
            f64::from(t.rtt_us) / 1000.0,
            f64::from(t.rttvar_us) / 1000.0,
            t.cwnd,
            t.total_retrans,
            format::bytes(t.bytes_acked as f64),
            format::bytes(t.bytes_received as f64),
        ));
    }
    if let Some(drops) = socket.drops.filter(|d| *d > 0) {
        details.push(format!("{drops} drops"));
    }
    let second = Line::from(vec![
        Span::styled("Enter detail  ", theme.dim()),
        Span::raw(details.join("  ")),
    ]);
    let legend = Line::from(Span::styled(
        "RcvQ/acc: bytes unread, for LISTEN the accept queue; SndQ/max: bytes unacked, for LISTEN the backlog",
        theme.dim(),
    ));
    frame.render_widget(Paragraph::new(vec![first, second, legend]), area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::SocketUser;

    /// A listener on 198.18.0.1:80 held by httpd (pid 42).
    fn httpd_listener() -> SocketSample {
        SocketSample {
            netns: 0,
            proto: crate::model::sockets::Proto::Tcp,
            state: crate::model::sockets::TCP_LISTEN,
            local: "198.18.0.1:80".parse().unwrap(),
            peer: "0.0.0.0:0".parse().unwrap(),
            recv_q: 0,
            send_q: 9,
            uid: 0,
            inode: 1,
            users: vec![SocketUser {
                process: "httpd".into(),
                pid: 42,
                fd: 3,
            }]
            .into(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            limits: None,
        }
    }

    #[test]
    fn the_owner_is_led_by_its_container() {
        let socket = httpd_listener();
        let mut web = Container {
            runtime: "podman".into(),
            id: "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a".into(),
            ..Container::default()
        };
        assert_eq!(
            owner_cell(&socket.as_socket(), &Containers::new()),
            "httpd/42"
        );
        assert_eq!(
            container_text(&web),
            "container podman 3f2a1b9c8d7e (unnamed: its runtime's files and API are unreadable)"
        );
        web.name = Some("web".into());
        let containers = Containers::from([(42, &web)]);
        assert_eq!(
            owner_cell(&socket.as_socket(), &containers),
            "[web] httpd/42"
        );
        assert_eq!(container_text(&web), "container web (podman 3f2a1b9c8d7e)");
    }

    #[test]
    fn the_info_line_names_the_namespace_only_when_there_are_several() {
        use crate::model::netns::NamespaceInfo;
        let socket = SocketSample {
            netns: 2,
            ..httpd_listener()
        };
        let ns = |id: u16, label: &str, container: Option<&str>| NamespaceInfo {
            id,
            label: label.into(),
            container: container.map(Into::into),
            ..NamespaceInfo::default()
        };
        let mut sample = Sample {
            netns: "host".into(),
            namespaces: vec![ns(0, "host", None)],
            ..Sample::default()
        };
        assert_eq!(namespace_text(&sample, &socket.as_socket()), None);
        sample.namespaces.push(ns(2, "pid 77 httpd", Some("web")));
        assert_eq!(
            namespace_text(&sample, &socket.as_socket()).as_deref(),
            Some("netns pid 77 httpd (web)")
        );
    }

    #[test]
    fn a_cut_endpoint_keeps_its_port() {
        assert_eq!(fit_endpoint("198.18.0.1:40312", 17), "198.18.0.1:40312");
        assert_eq!(
            fit_endpoint("192.168.100.200:54321", 17),
            "192.168.10…:54321"
        );
        assert_eq!(
            fit_endpoint("[2001:db8::1234]:50000", 17),
            "[2001:db8…]:50000"
        );
    }
}
