//! The tabs, in tab-bar order.

use crate::cli::TabName;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Interfaces,
    Sockets,
    Tcp,
    Conntrack,
    Dns,
    Flows,
    Load,
}

pub const ALL: [Tab; 7] = [
    Tab::Interfaces,
    Tab::Sockets,
    Tab::Tcp,
    Tab::Conntrack,
    Tab::Dns,
    Tab::Flows,
    Tab::Load,
];

impl Tab {
    pub fn title(self) -> &'static str {
        match self {
            Tab::Interfaces => "Interfaces",
            Tab::Sockets => "Sockets",
            Tab::Tcp => "TCP",
            Tab::Conntrack => "Conntrack",
            Tab::Dns => "DNS",
            Tab::Flows => "Flows",
            Tab::Load => "Load",
        }
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

    /// What a tab that has not been built yet says, and the tool to use until
    /// then. The only placeholder netlens has; each goes when its tab lands.
    pub fn not_built_yet(self) -> Option<(&'static str, &'static str)> {
        match self {
            Tab::Interfaces | Tab::Sockets | Tab::Tcp => None,
            Tab::Conntrack => Some(("connection tracking and NAT", "conntrack -L; conntrack -S")),
            Tab::Dns => Some(("resolver latency and failures", "dig @SERVER NAME")),
            Tab::Flows => Some(("live packet capture and flows", "tcpdump -n -i any")),
            Tab::Load => Some(("load generation (tcp, udp, http, pktgen)", "iperf3; wrk")),
        }
    }
}

impl From<TabName> for Tab {
    fn from(name: TabName) -> Self {
        match name {
            TabName::Interfaces => Tab::Interfaces,
            TabName::Sockets => Tab::Sockets,
            TabName::Tcp => Tab::Tcp,
            TabName::Conntrack => Tab::Conntrack,
            TabName::Dns => Tab::Dns,
            TabName::Flows => Tab::Flows,
            TabName::Load => Tab::Load,
        }
    }
}
