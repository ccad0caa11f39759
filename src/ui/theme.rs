//! Styles. With colour off (NO_COLOR, --no-color) every style keeps its
//! modifiers, so the selection (reverse video) and alerts (bold) still show.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    fn paint(self, style: Style, color: Color) -> Style {
        if self.color { style.fg(color) } else { style }
    }

    pub fn title(self) -> Style {
        self.paint(Style::new().add_modifier(Modifier::BOLD), Color::Cyan)
    }

    pub fn header(self) -> Style {
        self.paint(Style::new().add_modifier(Modifier::BOLD), Color::Yellow)
    }

    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    pub fn active_tab(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    pub fn alert(self) -> Style {
        self.paint(Style::new().add_modifier(Modifier::BOLD), Color::Red)
    }

    pub fn warn(self) -> Style {
        self.paint(Style::new().add_modifier(Modifier::BOLD), Color::Yellow)
    }

    pub fn good(self) -> Style {
        self.paint(Style::new(), Color::Green)
    }

    pub fn dim(self) -> Style {
        self.paint(Style::new(), Color::DarkGray)
    }

    pub fn key(self) -> Style {
        self.paint(Style::new().add_modifier(Modifier::BOLD), Color::Cyan)
    }

    pub fn rx(self) -> Style {
        self.paint(Style::new(), Color::Cyan)
    }

    pub fn tx(self) -> Style {
        self.paint(Style::new(), Color::Magenta)
    }
}
