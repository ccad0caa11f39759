//! The setup screen (F2): the settings as a list with sections, the
//! selected one explained below, and the value being typed or why it was
//! refused on the last line.
//!
//! ```text
//! Setup: saves to /root/.config/netlens/config.toml (w)
//! General
//!   interval                      1s
//!   theme                         color
//! Sockets columns (Space shows/hides, F7/F8 move)
//!   [x] Net
//! Thresholds                      value       default
//!   retrans_warn_percent          2.0         2.0
//! ```

use super::theme::Theme;
use crate::app::App;
use crate::app::setup::{Item, Table, interval_text, items, threshold_text};
use crate::config::ThemeName;
use crate::findings::thresholds::THRESHOLDS;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, theme: Theme) {
    frame.render_widget(Clear, area);
    let Some(mut setup) = app.setup().cloned() else {
        return;
    };
    let items = items(&app.config.columns);
    setup.selected = setup.selected.min(items.len().saturating_sub(1));
    let [title_area, list_area, about_area, prompt_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(u16::from(area.height >= 8)),
        Constraint::Length(1),
    ])
    .areas(area);

    let path = app
        .config_path
        .as_ref()
        .map_or("(no path: use --config FILE)".to_string(), |p| {
            p.display().to_string()
        });
    let mut title = vec![
        Span::styled("Setup", theme.title()),
        Span::raw(format!(": w saves to {path}")),
    ];
    if setup.unsaved {
        title.push(Span::styled(" [unsaved]", theme.warn()));
    }
    frame.render_widget(Paragraph::new(Line::from(title)), title_area);

    let mut lines: Vec<Line> = Vec::new();
    let mut selected_line = 0;
    let mut section = "";
    for (index, item) in items.iter().enumerate() {
        let heading = match item {
            Item::Interval | Item::Theme => "General",
            Item::Column { table, .. } => table.title(),
            Item::Threshold(_) => "Thresholds",
        };
        if heading != section {
            section = heading;
            let text = match item {
                Item::Column { .. } => format!("{heading} (Space shows/hides, F7/F8 move)"),
                Item::Threshold(_) => format!("{heading:<32}{:<12}default", "value"),
                _ => heading.to_string(),
            };
            lines.push(Line::from(Span::styled(text, theme.header())));
        }
        if index == setup.selected {
            selected_line = lines.len();
        }
        let text = match item {
            Item::Interval => format!(
                "  {:<30}{}",
                "interval",
                interval_text(app.config.interval.unwrap_or(app.interval))
            ),
            Item::Theme => format!(
                "  {:<30}{}",
                "theme",
                match app.config.theme {
                    ThemeName::Color => "color",
                    ThemeName::Mono => "mono",
                }
            ),
            Item::Column { title, shown, .. } => {
                format!("  [{}] {title}", if *shown { "x" } else { " " })
            }
            Item::Threshold(i) => {
                let (key, default, _) = THRESHOLDS[*i];
                let value = threshold_text(&app.config.thresholds, key);
                let changed = if value == default { "" } else { " *" };
                format!("  {key:<30}{:<12}{default}", format!("{value}{changed}"))
            }
        };
        // A marker as well as the style: the selection shows without colour.
        lines.push(if index == setup.selected {
            Line::from(format!(">{}", &text[1..])).style(theme.selected())
        } else {
            Line::from(text)
        });
    }
    let height = usize::from(list_area.height);
    setup.offset = crate::app::scroll_offset(setup.offset, selected_line, height);
    // Moving up onto the top line shows the line above it too (the
    // section's heading, for a section's first row).
    if setup.offset == selected_line && selected_line > 0 {
        setup.offset -= 1;
    }
    frame.render_widget(
        Paragraph::new(lines).scroll((setup.offset as u16, 0)),
        list_area,
    );

    let about = match items.get(setup.selected) {
        Some(Item::Interval) => "how often to sample (at least 100ms); applies now".to_string(),
        Some(Item::Theme) => "color, or mono for no colour; applies now".to_string(),
        Some(Item::Column { table, .. }) => match table {
            Table::Sockets => "the Sockets table's columns, in this order".to_string(),
            Table::Flows => "the Flows table's columns, in this order (FLOW/KEY always)".into(),
        },
        Some(Item::Threshold(i)) => THRESHOLDS[*i].2.to_string(),
        None => String::new(),
    };
    frame.render_widget(Paragraph::new(Span::styled(about, theme.dim())), about_area);
    let prompt = if let Some(text) = &setup.editing {
        let mut spans = vec![
            Span::styled("value: ", theme.key()),
            Span::raw(format!("{text}▏")),
        ];
        match &setup.message {
            Some(why) => spans.push(Span::styled(format!("  {why}"), theme.alert())),
            None => spans.push(Span::styled("  Enter apply  Esc cancel", theme.dim())),
        }
        Line::from(spans)
    } else if let Some(message) = &setup.message {
        Line::from(Span::styled(message.clone(), theme.warn()))
    } else {
        Line::from(Span::styled(
            "changes apply now; w writes them to the config file",
            theme.dim(),
        ))
    };
    frame.render_widget(Paragraph::new(prompt), prompt_area);
    if let Some(shown) = app.setup_mut() {
        *shown = setup;
    }
}
