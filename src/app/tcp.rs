//! The TCP tab's state: the scroll position of its counter list.

use super::keymap::{Action, Key};
use super::view::{Reply, Shown, TabView};

#[derive(Debug, Clone, Default)]
pub struct TcpView {
    /// First counter shown.
    pub offset: usize,
    /// Counter rows visible at the last draw.
    pub page: usize,
    /// Counter rows in total at the last draw.
    pub rows: usize,
    /// A state ("SYN_RECV") or counter ("Tcp.RetransSegs", or its short
    /// name) shown selected: a finding's evidence.
    pub marked: Option<String>,
    /// Scroll the marked counter into view at the next draw.
    pub scroll_to_mark: bool,
}

impl TcpView {
    /// Marks a state or counter row and scrolls to it.
    pub fn mark(&mut self, row: &str) {
        self.marked = Some(row.to_string());
        self.scroll_to_mark = true;
    }

    /// Whether the state or counter `name` is the marked row.
    pub fn is_marked(&self, name: &str) -> bool {
        self.marked.as_deref().is_some_and(|mark| {
            name == mark
                || name
                    .rsplit_once('.')
                    .is_some_and(|(_, short)| short == mark)
        })
    }

    pub fn handle(&mut self, action: Action) -> bool {
        if action == Action::Close && self.marked.is_some() {
            self.marked = None;
            return true;
        }
        let last = self.rows.saturating_sub(self.page.max(1));
        let page = self.page.max(1);
        self.offset = match action {
            Action::Up => self.offset.saturating_sub(1),
            Action::Down => (self.offset + 1).min(last),
            Action::PageUp => self.offset.saturating_sub(page),
            Action::PageDown => (self.offset + page).min(last),
            Action::Top => 0,
            Action::Bottom => last,
            _ => return false,
        };
        true
    }
}

impl TabView for TcpView {
    fn on_action(&mut self, action: Action, _key: Key, _shown: &Shown) -> Reply {
        Reply::Redraw(self.handle(action))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snmp;

    #[test]
    fn a_mark_matches_the_full_or_short_counter_name() {
        let mut view = TcpView::default();
        view.mark("ListenOverflows");
        assert!(view.scroll_to_mark);
        assert!(view.is_marked(snmp::TCP_EXT_LISTEN_OVERFLOWS));
        assert!(!view.is_marked(snmp::TCP_EXT_LISTEN_DROPS));
        view.mark("SYN_RECV");
        assert!(view.is_marked("SYN_RECV") && !view.is_marked("SYN_SENT"));
        assert!(view.handle(Action::Close));
        assert!(!view.is_marked("SYN_RECV"));
    }
}
