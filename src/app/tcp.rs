//! The TCP tab's state: the scroll position of its counter list.

use super::keymap::Action;

#[derive(Debug, Clone, Default)]
pub struct TcpView {
    /// First counter shown.
    pub offset: usize,
    /// Counter rows visible at the last draw.
    pub page: usize,
    /// Counter rows in total at the last draw.
    pub rows: usize,
}

impl TcpView {
    pub fn handle(&mut self, action: Action) -> bool {
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
