//! One socket in detail: what `ss -tinp` says about it, and charts of its
//! rtt, cwnd and queues since netlens started following it (when selected,
//! or as soon as it was highlighted).

use super::format;
use super::sockets::{container_of, container_text, owner_text, peer_name};
use super::theme::Theme;
use crate::app::App;
use crate::app::history::WINDOW_SECONDS;
use crate::app::sockets::TrailPoint;
use crate::model::sockets::TcpLimits;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph, Wrap};

pub fn render(frame: &mut Frame, area: Rect, app: &App, index: usize, theme: Theme) {
    let Some(current) = app.history.get(index) else {
        return;
    };
    let Some(socket) = app.sockets.selected_socket(current) else {
        let text = "This socket is gone: it was closed. Esc goes back to the list.";
        frame.render_widget(Paragraph::new(text).style(theme.alert()), area);
        return;
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!("{} {} ", socket.proto.name(), socket.state_name()),
            theme.title(),
        ),
        Span::raw(format!(
            "{} → {}",
            app.names
                .endpoint(socket.proto.name(), &socket.local.to_string()),
            peer_name(&socket, &app.names)
        )),
    ])];
    let queues = if socket.is_listener() {
        format!(
            "LISTEN: Recv-Q {} = connections waiting in the accept queue; Send-Q {} = its limit (backlog){}",
            socket.recv_q,
            socket.send_q,
            if socket.accept_queue_full() {
                " — FULL"
            } else {
                ""
            }
        )
    } else {
        format!(
            "Recv-Q {} B not yet read by the application; Send-Q {} B not yet acknowledged by the peer{}",
            socket.recv_q,
            socket.send_q,
            if crate::findings::stuck(&socket, &app.sockets.thresholds) {
                format!(" — STUCK for {} samples", socket.queue_streak)
            } else {
                String::new()
            }
        )
    };
    lines.push(Line::from(queues));
    let containers = crate::model::processes::containers_by_pid(current);
    if let Some(container) = container_of(&socket, &containers) {
        lines.push(Line::from(container_text(container)));
    }
    let users: Vec<String> = socket
        .users
        .iter()
        .map(|u| format!("(\"{}\",pid={},fd={})", u.process, u.pid, u.fd))
        .collect();
    lines.push(Line::from(format!(
        "owner {}  uid {}  inode {}{}",
        if users.is_empty() {
            owner_text(&socket)
        } else {
            format!("users:({})", users.join(","))
        },
        socket.uid,
        socket.inode,
        socket
            .drops
            .map(|d| format!("  drops {d}"))
            .unwrap_or_default()
    )));
    if let Some(t) = socket.tcp {
        lines.push(Line::from(format!(
            "rtt {:.2}/{:.2} ms  cwnd {}  ssthresh {}  mss {}  rto {} ms  retrans {}/{}",
            f64::from(t.rtt_us) / 1000.0,
            f64::from(t.rttvar_us) / 1000.0,
            t.cwnd,
            t.ssthresh,
            t.mss,
            t.rto_us / 1000,
            t.retrans,
            t.total_retrans
        )));
        lines.push(Line::from(format!(
            "bytes acked {}  received {}  last send {} ms ago  last recv {} ms ago  last ack {} ms ago",
            format::bytes(t.bytes_acked as f64),
            format::bytes(t.bytes_received as f64),
            t.last_send_ms,
            t.last_recv_ms,
            t.last_ack_ms
        )));
    }
    if let Some(limits) = socket.limits {
        lines.push(Line::from(limits_text(limits)));
    }
    let wrapped: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(usize::from(area.width.max(1))).max(1))
        .sum();
    let info_height = (wrapped as u16).min(area.height);
    let [info, charts] =
        Layout::vertical([Constraint::Length(info_height), Constraint::Min(0)]).areas(area);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), info);

    let now = current.mono;
    let trail: Vec<TrailPoint> = app
        .sockets
        .trails
        .get(&socket.key())
        .map(|t| t.iter().filter(|p| p.mono <= now).copied().collect())
        .unwrap_or_default();
    let series = |f: fn(&TrailPoint) -> Option<f64>| -> Vec<(f64, f64)> {
        trail
            .iter()
            .filter_map(|p| f(p).map(|v| (p.mono - now, v)))
            .collect()
    };
    let rtt = series(|p| p.rtt_ms);
    let cwnd = series(|p| p.cwnd.map(f64::from));
    let recv = series(|p| Some(f64::from(p.recv_q)));
    let send = series(|p| Some(f64::from(p.send_q)));
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(charts);
    let [rtt_area, cwnd_area] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);
    chart(frame, rtt_area, "rtt ms", &[("rtt", &rtt)], theme);
    chart(frame, cwnd_area, "cwnd", &[("cwnd", &cwnd)], theme);
    chart(
        frame,
        bottom,
        "queues B",
        &[("⣿ Recv-Q", &recv), ("• Send-Q", &send)],
        theme,
    );
}

fn chart(
    frame: &mut Frame,
    area: Rect,
    what: &str,
    series: &[(&str, &[(f64, f64)])],
    theme: Theme,
) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let max = series
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let mut title = vec![Span::raw(format!(" {what} "))];
    for (i, (name, points)) in series.iter().enumerate() {
        let style = if i == 0 { theme.rx() } else { theme.tx() };
        let last = points.last().map_or("–".into(), |p| format!("{:.1}", p.1));
        title.push(Span::styled(format!("{name} "), style));
        title.push(Span::raw(format!("{last} ")));
    }
    let datasets = series
        .iter()
        .enumerate()
        .map(|(i, (_, points))| {
            let (marker, style) = if i == 0 {
                (Marker::Braille, theme.rx())
            } else {
                (Marker::Dot, theme.tx())
            };
            Dataset::default()
                .marker(marker)
                .graph_type(if i == 0 {
                    GraphType::Line
                } else {
                    GraphType::Scatter
                })
                .style(style)
                .data(points)
        })
        .collect();
    let chart = Chart::new(datasets)
        .block(
            Block::default()
                .borders(Borders::TOP)
                .title(Line::from(title)),
        )
        .legend_position(None)
        .x_axis(
            Axis::default()
                .bounds([-WINDOW_SECONDS, 0.0])
                .labels(["-5m", "now"]),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, max])
                .labels(["0".to_string(), format!("{max:.0}")]),
        );
    frame.render_widget(chart, area);
}

/// Where a sending socket's time went, in ss -ti's words: "busy 1234 ms:
/// rwnd-limited 78.0%  sndbuf-limited 0.0%  delivered 12.3 Mbit/s
/// (app-limited)  minrtt 0.04 ms  notsent 0 B  snd_wnd 64.0 KB  reord 0
/// (degree 3)  dsack 0  pacing 1.2 Gbit/s", and the pacing cap the
/// application set ("/10.0 Mbit/s"), as ss prints pacing_rate; then the
/// receiver's side as ss prints it: "rcv_rtt 20.2 ms  rcv_space 89.1 KB
/// rcv_ssthresh 46.7 KB".
fn limits_text(limits: &TcpLimits) -> String {
    let (rwnd, sndbuf) = limits.shares().unwrap_or((0.0, 0.0));
    format!(
        "busy {} ms: rwnd-limited {:.1}%  sndbuf-limited {:.1}%  delivered {}{}  minrtt {:.2} ms  \
         notsent {}  snd_wnd {}  reord {} (degree {})  dsack {}  pacing {}{}  rcv_rtt {:.1} ms  \
         rcv_space {}  rcv_ssthresh {}",
        limits.busy_us / 1000,
        rwnd * 100.0,
        sndbuf * 100.0,
        format::bits(limits.delivery_rate as f64 * 8.0),
        if limits.app_limited {
            " (app-limited)"
        } else {
            ""
        },
        f64::from(limits.min_rtt_us) / 1000.0,
        format::bytes(f64::from(limits.notsent_bytes)),
        format::bytes(f64::from(limits.snd_wnd)),
        limits.reord_seen,
        limits.reordering,
        limits.dsack_dups,
        format::bits(limits.pacing_rate as f64 * 8.0),
        limits.pacing_cap().map_or(String::new(), |cap| format!(
            "/{}",
            format::bits(cap as f64 * 8.0)
        )),
        f64::from(limits.rcv_rtt_us) / 1000.0,
        format::bytes(f64::from(limits.rcv_space)),
        format::bytes(f64::from(limits.rcv_ssthresh)),
    )
}
