//! One flow's screen: a title line (the flow, its process, the sub-views
//! with the shown one marked), the sub-view, and a status line.
//!
//! ```text
//! tcp 198.18.0.1:40000 → 198.18.0.2:9001  ESTABLISHED  curl (pid 42)
//! [Summary] Packets  Sequence  Findings(1)  Payload        v/V view  e export
//! ... the sub-view: summary.rs, timeline.rs, sequence.rs, findings.rs,
//!     payload.rs, rules.rs (one render function each); under the summary, when
//!     the pane has room, a throughput chart per direction ...
//! 120 packets kept (analysis of 120)        exported 120 packets to /tmp/x.pcap
//! ```

mod findings;
mod payload;
mod rules;
mod sequence;
mod summary;
mod timeline;

use super::format;
use super::theme::Theme;
use crate::app::App;
use crate::app::flow_detail::{FlowDetail, SUB_VIEWS, SubView};
use crate::model::capture::FlowSample;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    // The flow's namespace, named while several are sampled (--all-netns).
    let netns = app.shown().1.and_then(|s| {
        let d = app.flow_detail.as_ref()?;
        super::sockets::namespace_name(s, d.flow.netns)
    });
    let current = app.shown().1.and_then(|s| {
        let d = app.flow_detail.as_ref()?;
        s.capture
            .as_ref()?
            .flows
            .iter()
            .find(|f| f.proto == d.flow.proto && f.src == d.flow.src && f.dst == d.flow.dst)
            .map(|f| crate::model::capture::FlowSample::clone(f))
    });
    let counted_by = app
        .shown()
        .1
        .and_then(|s| s.capture.as_ref())
        .map(crate::app::flow_detail::CountedBy::of);
    // The flow's socket: looked for once per shown sample, not per frame
    // (a big host's table is a million sockets).
    let shown_mono = app.shown().1.map(|s| s.mono);
    let stale = (app.flow_detail.as_ref()).is_some_and(|d| d.socket_from != shown_mono);
    let socket = app.shown().1.filter(|_| stale).and_then(|s| {
        let d = app.flow_detail.as_ref()?;
        crate::model::capture::socket_of_flow(&s.sockets, &d.flow).map(|s| s.to_sample())
    });
    let nat = app.flow_detail.as_ref().filter(|_| stale).and_then(|d| {
        let (entries, mono) = app.shown_view().recent_conntrack()?;
        let index = app.flows.nat_index(mono, entries);
        let nat = index.of_flow(entries, (&d.flow.proto, &d.flow.src, &d.flow.dst))?;
        let e = nat.entry;
        let kind = e.nat().label().unwrap_or_default();
        Some(format!("{} {kind}: {}", e.state_name(), e.flow_text()))
    });
    let Some(detail) = app.flow_detail.as_mut() else {
        return;
    };
    detail.counted_by = counted_by.unwrap_or_default();
    if stale {
        detail.socket = socket;
        detail.nat = nat;
        detail.socket_from = shown_mono;
    }
    // With names on (N) the endpoints show named; the flow's identity
    // (detail.flow) keeps its addresses.
    let mut flow = current.unwrap_or_else(|| detail.flow.clone());
    flow.src = app.names.endpoint(&flow.proto, &flow.src);
    flow.dst = app.names.endpoint(&flow.proto, &flow.dst);
    render_detail(frame, area, detail, (Some(&flow), netns.as_deref()), theme);
}

/// The whole flow screen for `detail`; `now` is the flow as the shown
/// sample carries it (whole-flow counters, process), when it does;
/// `netns` its namespace's name while several are sampled.
pub fn render_detail(
    frame: &mut Frame,
    area: Rect,
    detail: &mut FlowDetail,
    (now, netns): (Option<&FlowSample>, Option<&str>),
    theme: Theme,
) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let [title, views, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    let flow = now.unwrap_or(&detail.flow);
    frame.render_widget(Paragraph::new(title_line(flow, theme)), title);
    frame.render_widget(Paragraph::new(views_line(detail, flow, theme)), views);
    let height = usize::from(body.height);
    let lines: Vec<Line> = match detail.view {
        SubView::Summary => summary::lines(detail, (flow, netns), usize::from(body.width), theme),
        SubView::Timeline => timeline::lines(detail, usize::from(body.width), theme),
        SubView::Sequence => sequence::lines(detail, usize::from(body.width), theme),
        SubView::Findings => findings::lines(detail, flow, usize::from(body.width), theme),
        SubView::Payload => payload::lines(detail, theme),
        SubView::Rules => rules::lines(detail, usize::from(body.width), theme),
    };
    // The summary's throughput chart takes the room its lines leave.
    let body =
        if detail.view == SubView::Summary && height >= lines.len() + summary::CHART_MIN_HEIGHT {
            let [text, chart] =
                Layout::vertical([Constraint::Length(lines.len() as u16), Constraint::Min(0)])
                    .areas(body);
            summary::chart(frame, chart, detail, theme);
            text
        } else {
            body
        };
    // Clamp the scroll so the last page stays full; a running trace shows
    // its newest lines unless scrolled up.
    let max_scroll = lines.len().saturating_sub(height);
    if detail.view == SubView::Rules && detail.follow {
        detail.scroll = max_scroll;
    }
    detail.scroll = detail.scroll.min(max_scroll);
    let shown: Vec<Line> = lines.into_iter().skip(detail.scroll).take(height).collect();
    frame.render_widget(Paragraph::new(shown), body);
    frame.render_widget(
        Paragraph::new(status_line(detail, max_scroll, theme)),
        status,
    );
}

fn title_line(flow: &FlowSample, theme: Theme) -> Line<'static> {
    let mut spans = vec![
        Span::styled(format!("{} ", flow.proto), theme.title()),
        Span::raw(format!("{} → {}  ", flow.src, flow.dst)),
        Span::styled(flow.state.clone(), theme.header()),
    ];
    match (&flow.process, flow.pid) {
        (Some(process), Some(pid)) => {
            spans.push(Span::raw(format!("  {process} (pid {pid})")));
        }
        _ => spans.push(Span::styled("  process unknown", theme.dim())),
    }
    if let Some(sni) = &flow.sni {
        spans.push(Span::raw(format!("  sni {sni}")));
    }
    if let Some(host) = &flow.http_host {
        spans.push(Span::raw(format!("  host {host}")));
    }
    Line::from(spans)
}

fn views_line(detail: &FlowDetail, flow: &FlowSample, theme: Theme) -> Line<'static> {
    let found = detail.findings().len() + detail.earlier_findings(flow).len();
    let mut spans = Vec::new();
    for view in SUB_VIEWS {
        let label = match view {
            SubView::Findings if found > 0 => format!("{}({found})", view.title()),
            _ => view.title().to_string(),
        };
        // Brackets mark the shown view, so it shows without colour too.
        if view == detail.view {
            spans.push(Span::styled(format!("[{label}]"), theme.active_tab()));
        } else {
            spans.push(Span::raw(format!(" {label} ")));
        }
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(" Esc back", theme.dim()));
    Line::from(spans)
}

fn status_line(detail: &FlowDetail, max_scroll: usize, theme: Theme) -> Line<'static> {
    if let Some(message) = &detail.message {
        let style = if message.starts_with("exported") {
            theme.good()
        } else {
            theme.warn()
        };
        return Line::from(Span::styled(message.clone(), style));
    }
    let mut text = format!("{} packets kept", detail.packets.len());
    if detail.dropped > 0 {
        text.push_str(&format!(" (oldest {} dropped)", detail.dropped));
    }
    if detail.missed > 0 {
        text.push_str(&format!(", {} missed", detail.missed));
    }
    if max_scroll > 0 {
        text.push_str(&format!(
            "  line {}/{} (↑↓ PgUp PgDn)",
            detail.scroll + 1,
            max_scroll + 1
        ));
    }
    Line::from(Span::styled(text, theme.dim()))
}

/// "0.000123" seconds since the flow's first kept packet.
fn rel(detail: &FlowDetail, t: f64) -> String {
    let start = detail.packets.front().map_or(t, |p| p.t);
    format!("{:.6}", (t - start).max(0.0))
}

/// A duration in ms or s, short.
fn ms(value: f64) -> String {
    if value >= 1000.0 {
        format!("{:.2}s", value / 1000.0)
    } else if value >= 10.0 {
        format!("{value:.0}ms")
    } else {
        format!("{value:.2}ms")
    }
}

/// What the timeline and the sequence diagram show before any packet.
fn no_packets(theme: Theme) -> Vec<Line<'static>> {
    vec![Line::from(Span::styled(
        "no packets of this flow captured since netlens started watching it",
        theme.dim(),
    ))]
}

fn fit(text: &str, width: usize) -> String {
    format::fit(text, width)
}
