//! The tabs, in tab-bar order.

/// The plain tab enum lives in config (the config file names tabs too).
pub use crate::config::Tab;

pub const ALL: [Tab; 10] = [
    Tab::Interfaces,
    Tab::Sockets,
    Tab::Tcp,
    Tab::Conntrack,
    Tab::Dns,
    Tab::Flows,
    Tab::Load,
    Tab::Drops,
    Tab::Processes,
    Tab::Namespaces,
];

impl Tab {
    pub fn title(self) -> &'static str {
        match self {
            // "Ifaces": ten tabs' titles fit one 80-column line.
            Tab::Interfaces => "Ifaces",
            Tab::Sockets => "Sockets",
            Tab::Tcp => "TCP",
            Tab::Conntrack => "Conntrack",
            Tab::Dns => "DNS",
            Tab::Flows => "Flows",
            Tab::Load => "Load",
            Tab::Drops => "Drops",
            Tab::Processes => "Procs",
            Tab::Namespaces => "NS",
        }
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
        matches!(
            self,
            Tab::Interfaces | Tab::Sockets | Tab::Flows | Tab::Drops | Tab::Processes
        )
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
