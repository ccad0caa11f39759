//! The Flows tab's "servers" grouping (`a`): each server the capture saw
//! answer requests, by its median response time over the interval, with
//! its percentiles, the network round trip beside them and its HTTP
//! statuses: whether the time is the network's or the application's.
//!
//! ```text
//! ┌ Servers: 2, by median response ▼ ──────────────────────────────────────┐
//! SERVER                PROCESS          REQ/S    P50    P90    P99    RTT  HTTP
//! 198.18.150.2:8650     python3/4242       4.0  301ms  302ms  305ms 0.05ms
//! 198.18.150.2:8060     python3/4240      24.0 40.6ms 41.0ms 41.2ms 0.04ms  200:99
//! ```
//!
//! A "~" after the server: it is elsewhere, and each time holds one
//! network round trip (the capture is at the client).
//! ```text
//! ```

use super::theme::Theme;
use crate::model::Sample;
use crate::model::responses::windows;
use crate::text::escape_control;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// One server's line.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRow {
    pub server: String,
    /// "python3/4242", "" when no listener here owns it.
    pub process: String,
    pub per_s: Option<f64>,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub rtt_ms: Option<f64>,
    /// The server is elsewhere: its times hold a round trip.
    pub remote: bool,
    /// "200:40 503:2", since the capture began.
    pub statuses: String,
}

/// The servers of the shown sample, slowest median first.
pub fn rows(previous: Option<&Sample>, current: Option<&Sample>) -> Vec<ServerRow> {
    let Some((current, capture)) = current.and_then(|c| Some((c, c.capture.as_ref()?))) else {
        return Vec::new();
    };
    let before = previous.and_then(|p| p.capture.as_ref());
    let interval = previous.map_or(0.0, |p| current.mono - p.mono);
    let mut rows: Vec<ServerRow> = windows(
        &capture.responses,
        before.map(|b| b.responses.as_slice()),
        &current.sockets,
    )
    .into_iter()
    .map(|(s, w, owner)| ServerRow {
        server: s.server.clone(),
        process: owner.map_or_else(String::new, |u| {
            format!("{}/{}", escape_control(&u.process.to_string()), u.pid)
        }),
        per_s: (interval > 0.0 && before.is_some()).then(|| w.answered as f64 / interval),
        p50_ms: w.p50_ms,
        p90_ms: w.p90_ms,
        p99_ms: w.p99_ms,
        rtt_ms: w.rtt_ms,
        remote: !w.local,
        statuses: s
            .statuses
            .iter()
            .map(|(code, n)| format!("{code}:{n}"))
            .collect::<Vec<_>>()
            .join(" "),
    })
    .collect();
    rows.sort_by(|a, b| b.p50_ms.total_cmp(&a.p50_ms));
    rows
}

/// "0.05ms", "4.2ms", "251ms", "1.2s".
pub fn ms(value: f64) -> String {
    match value {
        v if v < 1.0 => format!("{v:.2}ms"),
        v if v < 10.0 => format!("{v:.1}ms"),
        v if v < 1000.0 => format!("{v:.0}ms"),
        v => format!("{:.1}s", v / 1000.0),
    }
}

/// The columns of one line, header or row, at their widths.
fn line(cells: [&str; 8]) -> String {
    let [server, process, rate, p50, p90, p99, rtt, http] = cells;
    format!(
        "{server:<21.21} {process:<15.15} {rate:>6} {p50:>6} {p90:>6} {p99:>6} {rtt:>6}  {http}"
    )
}

pub fn render(frame: &mut Frame, area: Rect, rows: &[ServerRow], sampled: bool, theme: Theme) {
    let title = format!(" Servers: {}, by median response ▼ ", rows.len());
    let Some(inner) = super::flows::section(frame, area, title, theme) else {
        return;
    };
    let width = usize::from(inner.width);
    if rows.is_empty() {
        let note = if sampled {
            "the capture samples this busy host's packets: requests are not timed"
        } else {
            "no request answered yet: a TCP server shows once it answers one (TLS too)"
        };
        frame.render_widget(Paragraph::new(Span::styled(note, theme.dim())), inner);
        return;
    }
    let header = line([
        "SERVER", "PROCESS", "REQ/S", "P50", "P90", "P99", "RTT", "HTTP",
    ]);
    let mut lines = vec![Line::from(Span::styled(
        header.chars().take(width).collect::<String>(),
        theme.header(),
    ))];
    for row in rows.iter().take(usize::from(inner.height) - 1) {
        let rate = row.per_s.map_or("-".to_string(), |r| format!("{r:.1}"));
        let rtt = row.rtt_ms.map_or("-".to_string(), ms);
        // At the client a round trip is in each time: "~", not a colour.
        let server = format!("{}{}", row.server, if row.remote { "~" } else { "" });
        let text = line([
            &server,
            &row.process,
            &rate,
            &ms(row.p50_ms),
            &ms(row.p90_ms),
            &ms(row.p99_ms),
            &rtt,
            &row.statuses,
        ]);
        lines.push(Line::from(text.chars().take(width).collect::<String>()));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_keep_three_significant_figures_in_six_columns() {
        assert_eq!(ms(0.047), "0.05ms");
        assert_eq!(ms(4.24), "4.2ms");
        assert_eq!(ms(250.8), "251ms");
        assert_eq!(ms(1234.0), "1.2s");
        assert!(
            ["0.05ms", "4.2ms", "251ms", "1.2s"]
                .iter()
                .all(|s| s.len() <= 6)
        );
    }
}
