//! The live view's tabs: the one table that names them. `--tab` (cli/),
//! the config file, the tab bar and the number keys all read [`TABS`].
//! Free of the crate's other modules: build.rs includes it with cli/.

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

/// What a tab is called where.
pub struct TabInfo {
    pub tab: Tab,
    /// The name `--tab` and the config file take (any case for the file).
    pub name: &'static str,
    /// The tab bar's title; "Ifaces": ten titles fit one 80-column line.
    pub title: &'static str,
    /// Enter opens the selected row's own screen (the footer offers
    /// "Enter detail" only where it does).
    pub opens_rows: bool,
}

/// Every tab, in tab-bar order; the number keys go by it (1..9, then 0).
pub const TABS: [TabInfo; 10] = [
    info(Tab::Interfaces, "interfaces", "Ifaces", true),
    info(Tab::Sockets, "sockets", "Sockets", true),
    info(Tab::Tcp, "tcp", "TCP", false),
    info(Tab::Conntrack, "conntrack", "Conntrack", false),
    info(Tab::Dns, "dns", "DNS", false),
    info(Tab::Flows, "flows", "Flows", true),
    info(Tab::Load, "load", "Load", false),
    info(Tab::Drops, "drops", "Drops", true),
    info(Tab::Processes, "processes", "Procs", true),
    info(Tab::Namespaces, "namespaces", "NS", false),
];

const fn info(tab: Tab, name: &'static str, title: &'static str, opens_rows: bool) -> TabInfo {
    TabInfo {
        tab,
        name,
        title,
        opens_rows,
    }
}

/// The tabs of [`TABS`] alone, in its order (clap wants a slice of them).
pub const ALL: [Tab; TABS.len()] = {
    let mut all = [Tab::Interfaces; TABS.len()];
    let mut at = 0;
    while at < all.len() {
        all[at] = TABS[at].tab;
        at += 1;
    }
    all
};

impl Tab {
    /// This tab's row of [`TABS`].
    pub fn info(self) -> &'static TabInfo {
        TABS.iter()
            .find(|info| info.tab == self)
            .unwrap_or(&TABS[0])
    }

    /// The name `--tab` and the config file take: "interfaces", "tcp", ...
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The tab named `text` (any case).
    pub fn from_name(text: &str) -> Option<Tab> {
        TABS.iter()
            .find(|info| info.name.eq_ignore_ascii_case(text))
            .map(|info| info.tab)
    }

    /// Every name, in tab-bar order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        TABS.iter().map(|info| info.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tab_has_one_row_and_its_name_leads_back_to_it() {
        for (at, tab) in ALL.iter().enumerate() {
            assert_eq!(TABS.iter().filter(|i| i.tab == *tab).count(), 1);
            assert_eq!(tab.info().tab, *tab);
            assert_eq!(Tab::from_name(&tab.name().to_uppercase()), Some(*tab));
            // The enum declares the tabs in the table's order.
            assert_eq!(*tab as usize, at);
        }
        let mut names: Vec<&str> = Tab::names().collect();
        names.dedup();
        assert_eq!(names.len(), TABS.len());
        assert_eq!(Tab::from_name("nope"), None);
    }
}
