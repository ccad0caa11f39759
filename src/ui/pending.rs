//! The body of a tab that has not been built yet: it says so plainly and
//! names the tool to use meanwhile.

use super::theme::Theme;
use crate::app::tabs::Tab;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn render(frame: &mut Frame, area: Rect, tab: Tab, theme: Theme) {
    let Some((what, meanwhile)) = tab.not_built_yet() else {
        return;
    };
    let lines = vec![
        Line::from(Span::styled(
            format!("{}: not built yet", tab.title()),
            theme.header(),
        )),
        Line::from(""),
        Line::from(format!(
            "This tab will show {what}. It has not landed in this version of netlens."
        )),
        Line::from(""),
        Line::from(vec![
            Span::styled("Meanwhile: ", theme.dim()),
            Span::raw(meanwhile),
        ]),
    ];
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}
