//! The flow's summary: endpoints, duration, packets and bytes per
//! direction, the handshake, RTT samples and throughput as charts, the
//! event counts, and how the connection closed.

use super::{fit, ms};
use crate::app::flow_detail::FlowDetail;
use crate::model::capture::FlowSample;
use crate::ui::format;
use crate::ui::spark::spark;
use crate::ui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType};

pub fn lines(
    detail: &FlowDetail,
    (flow, netns): (&FlowSample, Option<&str>),
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let a = &detail.analysis;
    let c = detail.client_dir();
    let (client, server) = (&a.dirs[c], &a.dirs[1 - c]);
    let duration = a.last_t - a.first_t;
    let label = |text: &str| Span::styled(format!("{text:<11}"), theme.header());
    let mut out = vec![Line::from(vec![
        label("endpoints"),
        Span::raw(fit(
            &format!("client {}  server {}", flow.src, flow.dst),
            width.saturating_sub(11),
        )),
    ])];
    if let Some(netns) = netns {
        out.push(Line::from(vec![
            label("namespace"),
            Span::raw(fit(netns, width.saturating_sub(11))),
        ]));
    }
    // Where the flow really went (or came from), from conntrack.
    if let Some(nat) = &detail.nat {
        out.push(Line::from(vec![
            label("conntrack"),
            Span::raw(fit(nat, width.saturating_sub(11))),
        ]));
    }
    // What the client asked the server for, from its first packets.
    let asked = [("tls/quic sni", &flow.sni), ("http host", &flow.http_host)];
    for (what, name) in asked {
        if let Some(name) = name {
            out.push(Line::from(vec![
                label("name"),
                Span::raw(fit(&format!("{name} ({what})"), width.saturating_sub(11))),
            ]));
        }
    }
    out.extend([
        // Two counts that need not agree, each named: the packets this
        // screen took (the capture's recent ones when it opened, then every
        // new one), and the whole flow's count of every packet (and its
        // bytes on the wire) as of the last sample: the kernel's, else the
        // capture's flow table, marked when the capture dropped packets.
        Line::from(vec![
            label("duration"),
            Span::raw(fit(
                &format!(
                    "{:.3} s  {} packets on screen, {} {} ({})",
                    duration.max(0.0),
                    a.n,
                    detail.counted_by.label(),
                    flow.packets,
                    format::bytes(flow.bytes as f64)
                ),
                width.saturating_sub(11),
            )),
        ]),
        Line::from(vec![
            label("→ client"),
            Span::raw(format!(
                "{} packets  {} on the wire  {} payload",
                client.packets,
                format::bytes(client.wire_bytes as f64),
                format::bytes(client.payload_bytes as f64)
            )),
        ]),
        Line::from(vec![
            label("← server"),
            Span::raw(format!(
                "{} packets  {} on the wire  {} payload",
                server.packets,
                format::bytes(server.wire_bytes as f64),
                format::bytes(server.payload_bytes as f64)
            )),
        ]),
    ]);
    let h = &a.handshake;
    let handshake = match (h.syn_to_syn_ack_ms(), h.syn_ack_to_ack_ms()) {
        (Some(x), Some(y)) => format!(
            "SYN → SYN/ACK {}, SYN/ACK → ACK {}  (total {})",
            ms(x),
            ms(y),
            ms(x + y)
        ),
        (Some(x), None) => format!("SYN → SYN/ACK {}, no final ACK seen", ms(x)),
        _ if h.syn_t.is_some() => "SYN sent, no SYN/ACK seen".into(),
        _ => "not seen (the flow began before the capture)".into(),
    };
    out.push(Line::from(vec![label("handshake"), Span::raw(handshake)]));
    let chart_width = width.saturating_sub(11 + 22).clamp(8, 48);
    let rtt_series: Vec<f64> = a
        .detail
        .as_ref()
        .map(|d| d.rtt.iter().map(|r| r.1).collect())
        .unwrap_or_default();
    let rtt = match a.rtt.mean_ms() {
        Some(mean) => Line::from(vec![
            label("RTT"),
            Span::raw(format!(
                "{} samples min {} mean {} max {} ",
                a.rtt.count,
                ms(a.rtt.min_ms),
                ms(mean),
                ms(a.rtt.max_ms)
            )),
            Span::styled(
                spark(&rtt_series, chart_width.saturating_sub(30).max(8)),
                theme.rx(),
            ),
        ]),
        None => Line::from(vec![
            label("RTT"),
            Span::styled("no sample yet (data answered by an ACK)", theme.dim()),
        ]),
    };
    out.push(rtt);
    out.extend(server_time(detail, width, theme));
    out.extend(kernel_account(detail, width, theme));
    let (up, down, bucket) = throughput(detail, chart_width);
    let peak = |v: &[f64]| v.iter().copied().fold(0.0, f64::max) / bucket.max(1e-9);
    out.push(Line::from(vec![
        label("→ B/s"),
        Span::styled(spark(&up, chart_width), theme.tx()),
        Span::raw(format!(" peak {}/s", format::bytes(peak(&up)))),
    ]));
    out.push(Line::from(vec![
        label("← B/s"),
        Span::styled(spark(&down, chart_width), theme.rx()),
        Span::raw(format!(" peak {}/s", format::bytes(peak(&down)))),
    ]));
    let count = |n: u32| {
        if n > 0 {
            theme.warn()
        } else {
            ratatui::style::Style::new()
        }
    };
    out.push(Line::from(vec![
        label("events"),
        Span::styled(
            format!(
                "retransmits {} ({} fast{})",
                a.retransmits,
                a.fast_retransmits,
                // The table counts every packet; the screen what it kept.
                if flow.retransmits > u64::from(a.retransmits) {
                    format!(", {} in the whole flow", flow.retransmits)
                } else {
                    String::new()
                }
            ),
            count(
                a.retransmits
                    .max(u32::try_from(flow.retransmits).unwrap_or(u32::MAX)),
            ),
        ),
        Span::styled(format!("  dup ACKs {}", a.dup_acks), count(a.dup_acks)),
        Span::styled(
            format!("  out-of-order {}", a.out_of_order),
            count(a.out_of_order),
        ),
    ]));
    out.push(Line::from(vec![
        label(""),
        Span::styled(
            format!("zero-window {}", a.zero_windows),
            count(a.zero_windows),
        ),
        Span::styled(
            format!("  window-full {}", a.window_full),
            count(a.window_full),
        ),
        Span::styled(format!("  resets {}", a.resets), count(a.resets)),
    ]));
    out.push(Line::from(vec![label("close"), Span::raw(a.close.label())]));
    if detail.key.is_some_and(|k| k.proto != 6) {
        out.push(Line::from(Span::styled(
            "not TCP: counters and charts only",
            theme.dim(),
        )));
    }
    out
}

/// The server's time per request: the gap from a request's last segment
/// to its answer's first, over the packets this screen took.
fn server_time(detail: &FlowDetail, width: usize, theme: Theme) -> Option<Line<'static>> {
    let a = &detail.answered;
    let median = a.median_ms()?;
    let last = a.last.as_ref()?;
    let request = match &last.http {
        Some(http) => format!(
            "{} {}{}",
            crate::text::escape_control(&http.method),
            crate::text::escape_control(&http.path),
            http.status.map_or(String::new(), |s| format!(" ({s})"))
        ),
        None => "request".into(),
    };
    let mut text = format!(
        "{} answered  median {}  max {}  last {request} {}",
        a.count,
        ms(median),
        ms(a.max_ms),
        ms(last.ms)
    );
    let handshake = &detail.analysis.handshake;
    if !handshake.at_server()
        && let Some(rtt) = handshake.total_ms()
    {
        text.push_str(&format!(
            "  (at the client: each holds the {} round trip)",
            ms(rtt)
        ));
    }
    Some(Line::from(vec![
        Span::styled(format!("{:<11}", "server"), theme.header()),
        Span::raw(fit(&text, width.saturating_sub(11))),
    ]))
}

/// The kernel's own account of the flow's socket (tcp_info, as `ss -ti`
/// prints it), when this host holds the socket: what limited it while it
/// had data to send, its RTT against the lowest seen (the queueing), and
/// while it receives, what its own window lets the sender deliver.
fn kernel_account(detail: &FlowDetail, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let Some(socket) = detail.socket.as_ref() else {
        return Vec::new();
    };
    let label = |text: &str| Span::styled(format!("{text:<11}"), theme.header());
    let mut out = Vec::new();
    if let Some(l) = socket.limits.as_deref()
        && l.busy_us > 0
    {
        let share = |us: u64| 100.0 * us as f64 / l.busy_us as f64;
        out.push(Line::from(vec![
            label("limited"),
            Span::raw(fit(
                &format!(
                    "busy {:.1} s: receiver window {:.0}%  send buffer {:.0}%{}",
                    l.busy_us as f64 / 1e6,
                    share(l.rwnd_limited_us),
                    share(l.sndbuf_limited_us),
                    if l.app_limited { "  app-limited" } else { "" }
                ),
                width.saturating_sub(11),
            )),
        ]));
    }
    if let Some(info) = socket.tcp.as_ref() {
        let rtt = f64::from(info.rtt_us) / 1000.0;
        let mut text = format!("rtt {}", ms(rtt));
        if let Some(l) = socket.limits.as_deref() {
            let min = f64::from(l.min_rtt_us) / 1000.0;
            text.push_str(&format!(
                "  min {}: {} queued  reordering {}  spurious retransmits {}  unsent {}",
                ms(min),
                ms((rtt - min).max(0.0)),
                l.reord_seen,
                l.dsack_dups,
                format::bytes(f64::from(l.notsent_bytes))
            ));
            if let Some(cap) = l.pacing_cap() {
                text.push_str(&format!(
                    "  paced at most {}",
                    format::bits(cap as f64 * 8.0)
                ));
            }
        }
        out.push(Line::from(vec![
            label("kernel"),
            Span::raw(fit(&text, width.saturating_sub(11))),
        ]));
    }
    // The receiving side: the largest window this host advertises at the
    // RTT it measured is the most the sender may deliver.
    if let Some(l) = socket.limits.as_deref()
        && l.rcv_rtt_us > 0
        && l.rcv_ssthresh > 0
    {
        let rtt = f64::from(l.rcv_rtt_us) / 1000.0;
        let cap = f64::from(l.rcv_ssthresh) * 8.0 / (rtt / 1000.0);
        out.push(Line::from(vec![
            label("receiving"),
            Span::raw(fit(
                &format!(
                    "window {} at {} RTT caps the sender near {}",
                    format::bytes(f64::from(l.rcv_ssthresh)),
                    ms(rtt),
                    format::bits(cap)
                ),
                width.saturating_sub(11),
            )),
        ]));
    }
    out
}

/// Payload bytes per time bucket, client → server and back, over the kept
/// packets; and the bucket length in seconds.
fn throughput(detail: &FlowDetail, buckets: usize) -> (Vec<f64>, Vec<f64>, f64) {
    let (Some(first), Some(last)) = (detail.packets.front(), detail.packets.back()) else {
        return (Vec::new(), Vec::new(), 1.0);
    };
    let buckets = buckets.max(1);
    let span = (last.t - first.t).max(1e-3);
    let bucket = span / buckets as f64;
    let mut up = vec![0.0; buckets];
    let mut down = vec![0.0; buckets];
    for p in &detail.packets {
        let i = (((p.t - first.t) / bucket) as usize).min(buckets - 1);
        let series = if p.from_client { &mut up } else { &mut down };
        series[i] += f64::from(p.payload_len);
    }
    (up, down, bucket)
}

/// Rows the throughput chart needs to be worth drawing.
pub const CHART_MIN_HEIGHT: usize = 6;

/// Payload bytes/s per direction over the kept packets, against seconds
/// since the first: client → server a braille line, server → client dots,
/// so the two differ without colour (as the interface charts do).
pub fn chart(frame: &mut Frame, area: Rect, detail: &FlowDetail, theme: Theme) {
    let (up, down, bucket) = throughput(detail, usize::from(area.width).max(8));
    let points = |series: &[f64]| -> Vec<(f64, f64)> {
        series
            .iter()
            .enumerate()
            .map(|(i, bytes)| ((i as f64 + 0.5) * bucket, bytes / bucket))
            .collect()
    };
    let up = points(&up);
    // Dots at zero would only draw the axis again.
    let down: Vec<(f64, f64)> = points(&down).into_iter().filter(|p| p.1 > 0.0).collect();
    let span = bucket * up.len().max(1) as f64;
    let max = up
        .iter()
        .chain(&down)
        .map(|p| p.1)
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let title = Line::from(vec![
        Span::raw(" throughput (payload) "),
        Span::styled("⣿ → client to server ", theme.tx()),
        Span::styled(" • ← server to client ", theme.rx()),
    ]);
    let datasets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.tx())
            .data(&up),
        Dataset::default()
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(theme.rx())
            .data(&down),
    ];
    let seconds = |t: f64| {
        if span < 1.0 {
            format!("{:.0}ms", t * 1000.0)
        } else {
            format!("{t:.1}s")
        }
    };
    let chart = Chart::new(datasets)
        .block(Block::default().borders(Borders::TOP).title(title))
        .legend_position(None)
        .x_axis(Axis::default().bounds([0.0, span]).labels([
            seconds(0.0),
            seconds(span / 2.0),
            seconds(span),
        ]))
        .y_axis(
            Axis::default()
                .bounds([0.0, max])
                .labels(["0".to_string(), format!("{}/s", format::bytes(max))]),
        );
    frame.render_widget(chart, area);
}
