//! The Path view: the hop table of a live trace (mtr's columns) and the
//! path findings under it. At 80 columns every column fits; narrower, the
//! BEST, WORST, STDEV and sparkline columns go first, then AVG.

use super::spark::spark;
use super::theme::Theme;
use crate::app::App;
use crate::app::path::PathView;
use crate::findings::Severity;
use crate::model::path::Hop;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

/// Below this inner width the extra columns are dropped.
const WIDE: usize = 70;

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    frame.render_widget(Clear, area);
    let Some(view) = app.path_view() else { return };
    let title = if area.width >= 50 {
        format!(" Path to {} (Esc closes) ", view.dest)
    } else {
        format!(" Path {} ", view.dest)
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines = body(view, app, usize::from(inner.width), theme);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

fn body<'a>(view: &PathView, app: &App, width: usize, theme: Theme) -> Vec<Line<'a>> {
    if let Some(error) = &view.error {
        return vec![Line::from(Span::styled(error.clone(), theme.alert()))];
    }
    let Some((report, findings)) = view.report(app) else {
        return Vec::new();
    };
    let wide = width >= WIDE;
    let status = format!(
        "TCP SYN to port {}, from {}: {} rounds, {}",
        view.dest.port(),
        report.netns,
        report.rounds,
        if report.reached {
            "destination reached"
        } else {
            "probing"
        }
    );
    let mut lines = vec![Line::from(Span::styled(status, theme.dim()))];
    let header = if wide {
        format!(
            "{:>3} {:<16} {:>6} {:>4} {:>6} {:>6} {:>6} {:>6} {:>5} RECENT",
            "HOP", "HOST", "LOSS%", "SENT", "LAST", "AVG", "BEST", "WORST", "STDEV"
        )
    } else {
        format!("{:>3} {:<16} {:>6} {:>6}", "HOP", "HOST", "LOSS%", "LAST")
    };
    lines.push(Line::from(Span::styled(header, theme.header())));
    for hop in &report.hops {
        let style = if hop.sent > 0 && hop.loss_percent() > 0.0 {
            theme.warn()
        } else {
            ratatui::style::Style::default()
        };
        lines.push(Line::from(Span::styled(row(hop, wide, width), style)));
    }
    if findings.is_empty() {
        lines.push(Line::from(Span::styled("no path findings", theme.dim())));
    }
    for finding in &findings {
        let style = match finding.severity {
            Severity::Crit => theme.alert(),
            _ => theme.warn(),
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{} {}: ", finding.severity.label(), finding.id),
                style,
            ),
            Span::raw(finding.summary.clone()),
        ]));
    }
    lines
}

fn row(hop: &Hop, wide: bool, width: usize) -> String {
    let [host, loss, sent, last, avg, best, worst, stddev] = hop.columns();
    let mut text = if wide {
        let recent: Vec<f64> = hop.recent_ms.iter().copied().collect();
        let used = 3 + 1 + 16 + 7 + 5 + 7 * 4 + 6 + 1;
        format!(
            "{:>3} {host:<16} {loss:>6} {sent:>4} {last:>6} {avg:>6} {best:>6} {worst:>6} {stddev:>5} {}",
            hop.ttl,
            spark(&recent, width.saturating_sub(used).min(16))
        )
    } else {
        format!("{:>3} {host:<16} {loss:>6} {last:>6}", hop.ttl)
    };
    if let Some(why) = hop.unreachable {
        text.push_str(&format!(" ({why})"));
    }
    text
}
