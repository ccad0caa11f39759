//! The live view's tabs, as the config file and `--tab` name them. A plain
//! enum: the app gives it titles and order, cli maps its clap enum into it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Interfaces,
    Sockets,
    Tcp,
    Conntrack,
    Dns,
    Flows,
    Load,
    Drops,
    Processes,
    Namespaces,
}

/// Every tab with its name, in tab-bar order.
const NAMES: [(Tab, &str); 10] = [
    (Tab::Interfaces, "interfaces"),
    (Tab::Sockets, "sockets"),
    (Tab::Tcp, "tcp"),
    (Tab::Conntrack, "conntrack"),
    (Tab::Dns, "dns"),
    (Tab::Flows, "flows"),
    (Tab::Load, "load"),
    (Tab::Drops, "drops"),
    (Tab::Processes, "processes"),
    (Tab::Namespaces, "namespaces"),
];

impl Tab {
    /// The name `--tab` and the config file take: "interfaces", "tcp", ...
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(tab, _)| *tab == self)
            .map_or("interfaces", |(_, name)| name)
    }

    /// The tab named `text` (any case).
    pub fn from_name(text: &str) -> Option<Tab> {
        NAMES
            .iter()
            .find(|(_, name)| name.eq_ignore_ascii_case(text))
            .map(|(tab, _)| *tab)
    }

    /// Every name, in tab-bar order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(_, name)| *name)
    }
}
