//! Header, findings line, tab bar and footer.

use super::format;
use super::theme::Theme;
use crate::app::App;
use crate::app::keymap::{Action, BINDINGS, Scope, hint_label};
use crate::app::replay::Mode;
use crate::app::tabs::{ALL, Tab};
use crate::findings::{Finding, Severity};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The header: identity and mode, then what is running (LOAD, REC, capture
/// drops), then the host's RX and TX. A narrow terminal first loses detail
/// (the unix count, packet rates, the load's kind, the interval, the host
/// name's length), never RX, TX or a running LOAD or REC.
pub fn render_header(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let line = (0..=HEADER_DETAIL_LEVELS)
        .map(|level| header_line(app, theme, level))
        .find(|line| line.width() <= usize::from(area.width))
        .unwrap_or_else(|| header_line(app, theme, HEADER_DETAIL_LEVELS));
    frame.render_widget(Paragraph::new(line), area);
}

/// How many steps of detail the header can give up (see `header_line`).
const HEADER_DETAIL_LEVELS: u8 = 5;

/// The header with `shed` steps of detail given up: 1 drops the unix
/// count, 2 the packet rates, 3 the load's kind and the interval, 4 cuts the
/// host name to 8 characters, 5 leaves it out.
fn header_line(app: &App, theme: Theme, shed: u8) -> Line<'static> {
    let (_, current) = app.shown();
    let mode = match app.mode() {
        Mode::Live => match app.stale_for() {
            Some(age) => Span::styled(format!(" stale {} ", age_text(age)), theme.alert()),
            None => Span::styled("live", theme.good()),
        },
        Mode::Paused => Span::styled(" PAUSED ", theme.active_tab()),
        Mode::Replay {
            playing,
            speed,
            following,
        } => Span::styled(
            format!(
                " {} {} {} ",
                if following { "FOLLOW" } else { "REPLAY" },
                if playing { "▶" } else { "‖" },
                super::timeline::speed(speed)
            ),
            theme.active_tab(),
        ),
    };
    let host = match shed {
        0..=3 => format!(" {} ", format::fit(&app.hostname, 16)),
        4 => format!(" {} ", format::fit(&app.hostname, 8)),
        _ => " ".to_string(),
    };
    let interval = if shed >= 3 {
        " ".to_string()
    } else {
        format!(" {:?} ", app.interval)
    };
    let mut spans = vec![
        Span::styled("netlens", theme.title()),
        Span::raw(host),
        Span::styled("ns:", theme.dim()),
        Span::raw(format::fit(current.map_or("…", |s| s.netns.as_str()), 20)),
        scope_span(app, theme),
        Span::raw(interval),
        mode,
    ];
    spans.extend(late_span(current, theme));
    if let Some(running) = &app.load.running {
        // A load runs while the user watches the other tabs: say so everywhere.
        let text = if shed >= 3 {
            format!(" LOAD {:.0}% ", running.progress() * 100.0)
        } else {
            format!(
                " LOAD {} {:.0}% ",
                running.kind.name(),
                running.progress() * 100.0
            )
        };
        spans.push(Span::styled(text, theme.warn()));
    }
    if app.recording.is_some() {
        // The word says it; red only adds to it.
        spans.push(Span::styled(" ● REC ", theme.alert()));
    }
    // Packets the capture ring lost, so the Flows numbers are not silently
    // short.
    if let Some(capture) = current.and_then(|s| s.capture.as_ref())
        && capture.active
        && capture.kernel_dropped > 0
    {
        spans.push(Span::styled(
            format!(" cap drops {}", capture.kernel_dropped),
            theme.alert(),
        ));
    }
    if let Some(totals) = app.derived.totals {
        let rate = |bits: f64, packets: f64| {
            if shed >= 2 {
                format::bits_short(bits)
            } else {
                format!(
                    "{} {}",
                    format::bits_short(bits),
                    format::packets_short(packets)
                )
            }
        };
        spans.push(Span::styled("  RX ", theme.rx()));
        spans.push(Span::raw(rate(totals.rx_bits, totals.rx_packets)));
        spans.push(Span::styled("  TX ", theme.tx()));
        spans.push(Span::raw(rate(totals.tx_bits, totals.tx_packets)));
    }
    if shed == 0
        && let Some(tcp) = current.and_then(|c| c.tcp.as_ref())
    {
        spans.push(Span::styled("  unix ", theme.dim()));
        spans.push(Span::raw(tcp.unix_sockets.to_string()));
    }
    Line::from(spans)
}

/// An age as the header gives it: whole seconds, or milliseconds below one.
pub fn age_text(age: std::time::Duration) -> String {
    if age.as_secs() >= 1 {
        format!("{}s", age.as_secs())
    } else {
        format!("{}ms", age.as_millis())
    }
}

/// The parts of the shown sample that came late, each with the age of the
/// data shown for it ("late conntrack 3s"); None when none did.
fn late_span(current: Option<&crate::model::Sample>, theme: Theme) -> Option<Span<'static>> {
    let late = &current?.late;
    if late.is_empty() {
        return None;
    }
    let parts: Vec<String> = late
        .iter()
        .map(|p| {
            let age = std::time::Duration::from_millis(p.age_ms);
            format!("{} {}", format::fit(&p.part, 12), age_text(age))
        })
        .collect();
    Some(Span::styled(
        format!(" late {} ", parts.join(", ")),
        theme.warn(),
    ))
}

pub fn render_findings(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let line = if let Some(error) = &app.error {
        Line::from(vec![
            Span::styled("ERROR ", theme.alert()),
            Span::raw(error.clone()),
        ])
    } else if let Some(notice) = app.notice() {
        notice_line(notice, theme)
    } else {
        // Firing findings come first, worst then newest (findings::order):
        // one that calmed down never hides a live one.
        let found = &app.derived.findings;
        match found.first() {
            None => Line::from(Span::styled("findings: none", theme.dim())),
            Some(first) => Line::from(vec![
                Span::styled(format!("{} │ ", count(found.len())), theme.dim()),
                Span::styled(label(first), severity_style(first, theme)),
                Span::raw(format!(": {}", first.summary)),
            ]),
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// "1 finding", "3 findings".
pub fn count(findings: usize) -> String {
    if findings == 1 {
        "1 finding".into()
    } else {
        format!("{findings} findings")
    }
}

/// "CRIT syn-flood" while it fires; "calm 2 syn-flood (was CRIT)" while the
/// hysteresis still shows it after its condition stopped.
pub fn label(finding: &Finding) -> String {
    if finding.hold.firing() {
        format!("{} {}", finding.severity.label(), finding.id)
    } else {
        format!(
            "calm {} {} (was {})",
            finding.hold.calm,
            finding.id,
            finding.severity.label()
        )
    }
}

/// Red for a firing CRIT, yellow for a firing WARN, dim otherwise (the
/// label says the severity in words).
pub fn severity_style(finding: &Finding, theme: Theme) -> ratatui::style::Style {
    match finding.severity {
        _ if !finding.hold.firing() => theme.dim(),
        Severity::Crit => theme.alert(),
        Severity::Warn => theme.warn(),
        Severity::Info => theme.dim(),
    }
}

/// Where a recording went, or the error that stopped it (with how to
/// dismiss it: it stays until then).
fn notice_line(notice: &crate::app::recording::Notice, theme: Theme) -> Line<'static> {
    if notice.error {
        Line::from(vec![
            Span::styled("REC ERROR ", theme.alert()),
            Span::raw(notice.text.clone()),
            Span::styled(" (any key hides this)", theme.dim()),
        ])
    } else {
        Line::from(vec![
            Span::styled("REC ", theme.warn()),
            Span::raw(notice.text.clone()),
        ])
    }
}

/// " scope ns:web-1 " while Enter in Namespaces scopes every tab (in
/// words and reverse video, not colour alone); nothing otherwise.
fn scope_span(app: &App, theme: Theme) -> Span<'static> {
    match app.scope() {
        Some(scope) => Span::styled(
            format!(" [scope ns:{}] ", format::fit(&scope.label, 16)),
            theme.active_tab(),
        ),
        None => Span::raw(""),
    }
}

/// Tab titles, shortened when the terminal is narrow.
pub fn render_tabs(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    // " N Title " per tab and a "│" between them; without the bars when
    // they do not fit; then "N Title" one space apart (nine tabs at 80
    // columns); short names when even that does not fit.
    let titles: u16 = ALL.iter().map(|t| t.title().len() as u16 + 4).sum();
    let bars = titles + ALL.len() as u16 - 1 <= area.width;
    let tight = titles > area.width;
    // Tight: each "N Title" (the padded width less 2) and one space between.
    let short = tight && titles - ALL.len() as u16 - 1 > area.width;
    let pad = if tight { "" } else { " " };
    let mut spans = Vec::new();
    let mut x = area.x;
    app.hits.tabs.clear();
    for (number, tab) in ALL.iter().enumerate() {
        let label = if short {
            format!("{}{}", tab.key(), &tab.title()[..tab.title().len().min(3)])
        } else {
            format!("{} {}", tab.key(), tab.title())
        };
        let width = label.len() as u16 + if tight { 1 } else { 2 };
        let style = if *tab == app.tab {
            theme.active_tab()
        } else {
            ratatui::style::Style::new()
        };
        spans.push(Span::styled(format!("{pad}{label}{pad}"), style));
        if tight && number + 1 < ALL.len() {
            spans.push(Span::raw(" "));
        }
        let visible = width.min(area.right().saturating_sub(x));
        if visible > 0 {
            app.hits.tabs.push((Rect::new(x, area.y, visible, 1), *tab));
        }
        x = x.saturating_add(width);
        if bars && number + 1 < ALL.len() {
            spans.push(Span::raw("│"));
            x = x.saturating_add(1);
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn render_footer(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    if let Some(line) = super::prompts::line(app, theme) {
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    if let Some(filter) = app.editing_filter() {
        let prompt = "filter: ";
        let mut lines = vec![Line::from(vec![
            Span::styled(prompt, theme.key()),
            Span::raw(crate::app::line_edit::shown(filter)),
            Span::styled("  Enter apply  Esc clear", theme.dim()),
        ])];
        // The capture filter's style (ui::flows): a caret under the
        // character the error points at (the layout gave the footer a
        // second line for it).
        if let Some(error) = app.filter_error() {
            let pad = prompt.len() + error.position;
            lines.push(Line::from(vec![
                Span::raw(" ".repeat(pad)),
                Span::styled(
                    format!(
                        "^ error at character {}: {}",
                        error.position + 1,
                        error.message
                    ),
                    theme.alert(),
                ),
            ]));
        }
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    let mut spans = Vec::new();
    // The applied filter first: it is state, the hints are reminders, and a
    // narrow footer is cut from the right.
    if let Some(filter) = app.filter() {
        spans.push(Span::styled(format!("[filter: {filter}] "), theme.warn()));
    }
    let in_load = app.tab == Tab::Load;
    let in_flow = app.flow_detail_shown();
    // Whole hints only, as many as fit: a cut hint ("F3 se") reads as
    // noise. The setup key is offered last: in a narrow footer the keys of
    // the table on screen matter more (help lists them all).
    let mut width: usize = spans.iter().map(|span| span.width()).sum();
    let mut bindings: Vec<_> = BINDINGS.iter().collect();
    bindings.sort_by_key(|binding| binding.action == Action::Setup);
    for binding in bindings {
        // The Load tab has its own keys; the table keys belong elsewhere.
        let shown = match binding.scope {
            Scope::Global => true,
            Scope::View => !in_load && !in_flow,
            Scope::Load => in_load,
            // The replay timeline shows its own keys.
            Scope::Replay => false,
            Scope::Flows => app.tab == Tab::Flows && !in_flow,
            Scope::FlowDetail => in_flow,
            Scope::Dns => app.tab == Tab::Dns,
            Scope::Sockets => app.tab == Tab::Sockets && !in_flow && !app.sockets.detail,
            Scope::Drops => app.tab == Tab::Drops,
            Scope::Namespaces => app.tab == Tab::Namespaces,
            // The setup screen's footer is its own (ui::prompts).
            Scope::Setup => false,
        };
        if !shown {
            continue;
        }
        if binding.action == Action::Open && !app.tab.opens_rows() {
            continue;
        }
        // The Drops tab is sorted by rate and has no filter or search.
        if app.tab == Tab::Drops
            && matches!(
                binding.action,
                Action::SortNext
                    | Action::SortPrev
                    | Action::SortInvert
                    | Action::Filter
                    | Action::Search
            )
        {
            continue;
        }
        if let Some(hint) = binding.hint {
            let label = hint_label(binding.keys);
            let text = format!(" {hint} ");
            let needed = label.chars().count() + text.chars().count();
            if width + needed > usize::from(area.width) + 1 {
                continue;
            }
            width += needed;
            spans.push(Span::styled(label, theme.key()));
            spans.push(Span::raw(text));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The compact layout's only chrome line: the tab, what is wrong (the worst
/// finding, or the error), the mode when it is not live, and "? help". A
/// filter being typed takes the line over. Cut from the right when narrow.
pub fn render_compact_status(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    if let Some(line) = super::prompts::line(app, theme) {
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    if let Some(filter) = app.editing_filter() {
        // One line here: the error's position in words, not a caret.
        let after = match app.filter_error() {
            Some(error) => Span::styled(
                format!(
                    " error at character {}: {}",
                    error.position + 1,
                    error.message
                ),
                theme.alert(),
            ),
            None => Span::styled(" Enter Esc", theme.dim()),
        };
        let line = Line::from(vec![
            Span::styled("/", theme.key()),
            Span::raw(crate::app::line_edit::shown(filter)),
            after,
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let mut spans = vec![Span::styled(
        format!("{} {}", app.tab.key(), app.tab.title()),
        theme.active_tab(),
    )];
    let current = app.shown().1;
    // The namespace watched, unless the host's: panes of `netlens tmux`
    // started in another one say which.
    if let Some(sample) = current.filter(|s| s.netns != "host") {
        spans.push(Span::styled(
            format!(" ns:{}", format::fit(&sample.netns, 16)),
            theme.dim(),
        ));
    }
    match app.mode() {
        Mode::Live => {
            if let Some(age) = app.stale_for() {
                spans.push(Span::styled(
                    format!(" stale {}", age_text(age)),
                    theme.alert(),
                ));
            }
        }
        Mode::Paused => spans.push(Span::styled(" PAUSED", theme.warn())),
        Mode::Replay { playing, speed, .. } => spans.push(Span::styled(
            format!(
                " {} {}",
                if playing { "▶" } else { "‖" },
                super::timeline::speed(speed)
            ),
            theme.warn(),
        )),
    }
    if let Some(late) = late_span(current, theme) {
        spans.push(Span::styled(
            late.content.trim_end().to_string(),
            late.style,
        ));
    }
    if app.recording.is_some() {
        spans.push(Span::styled(" REC", theme.alert()));
    }
    if let Some(error) = &app.error {
        spans.push(Span::styled(" ERROR ", theme.alert()));
        spans.push(Span::raw(error.clone()));
    } else if let Some(notice) = app.notice() {
        spans.push(Span::raw(" "));
        spans.extend(notice_line(notice, theme).spans);
    } else {
        match app.derived.findings.first() {
            None => spans.push(Span::styled(" ok", theme.good())),
            Some(first) => {
                spans.push(Span::styled(
                    format!(" {}", label(first)),
                    severity_style(first, theme),
                ));
                if app.derived.findings.len() > 1 {
                    spans.push(Span::styled(
                        format!(" ({})", count(app.derived.findings.len())),
                        theme.dim(),
                    ));
                }
            }
        }
    }
    if let Some(scope) = app.scope() {
        spans.push(Span::styled(
            format!(" [ns:{}]", format::fit(&scope.label, 12)),
            theme.warn(),
        ));
    }
    if let Some(filter) = app.filter() {
        spans.push(Span::styled(format!(" [{filter}]"), theme.warn()));
    }
    // "? help" at the right edge when it fits after everything else.
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let help = " ? help";
    let room = usize::from(area.width);
    if used + help.len() < room {
        spans.push(Span::raw(" ".repeat(room - used - help.len())));
        spans.push(Span::styled(help, theme.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
