//! The tabs, in tab-bar order: their names and titles are one table,
//! `config::TABS` (the config file and `--tab` name tabs too).

pub use crate::config::{ALL, Tab};

impl Tab {
    pub fn title(self) -> &'static str {
        self.info().title
    }

    /// The key that goes to this tab: its number, 0 for the tenth.
    pub fn key(self) -> char {
        match self.position() + 1 {
            n @ 1..=9 => char::from(b'0' + n as u8),
            _ => '0',
        }
    }

    /// Whether Enter opens the selected row's own screen here (the
    /// footer offers "Enter detail" only where it does).
    pub fn opens_rows(self) -> bool {
        self.info().opens_rows
    }

    pub fn position(self) -> usize {
        ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    pub fn next(self) -> Tab {
        ALL[(self.position() + 1) % ALL.len()]
    }

    pub fn previous(self) -> Tab {
        ALL[(self.position() + ALL.len() - 1) % ALL.len()]
    }
}
