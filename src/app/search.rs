//! F3: htop's incremental search. Typing moves the selection to the next
//! row that matches (what `/` would keep), without hiding the others; F3
//! again finds the next one, wrapping at the end; Enter or Esc leaves with
//! the selection where it is. Works in every table tab (view.rs's
//! `TableRows`) and in Sockets' Closed view.

use super::tabs::Tab;
use super::{App, line_edit};
use crate::app::keymap::Key;

#[derive(Debug, Clone, Default)]
pub struct Search {
    pub text: String,
    /// The last search found no row.
    pub failed: bool,
}

/// The first row at or after `from` (wrapping) that `matches`.
pub fn next_match(count: usize, from: usize, matches: impl Fn(usize) -> bool) -> Option<usize> {
    (0..count)
        .map(|step| (from + step) % count)
        .find(|&i| matches(i))
}

/// Whether `tab` has a table F3 searches.
pub fn searchable(tab: Tab) -> bool {
    matches!(
        tab,
        Tab::Interfaces
            | Tab::Sockets
            | Tab::Conntrack
            | Tab::Flows
            | Tab::Processes
            | Tab::Namespaces
    )
}

impl App {
    /// A key while the search line is open (Enter and Esc close it);
    /// false when the key ends the search and is to be handled as usual
    /// (a move key, a tab switch).
    pub(super) fn search_key(&mut self, key: Key) -> bool {
        match key {
            Key::F(3) => self.find(1),
            key if line_edit::edit(&mut self.search.text, key) => self.find(0),
            _ => return false,
        }
        true
    }

    /// Selects the first match `skip` rows after the selection (0: the
    /// selected row itself may match), in the open tab's table.
    pub(super) fn find(&mut self, skip: usize) {
        let text = self.search.text.clone();
        if text.is_empty() {
            self.search.failed = false;
            return;
        }
        let (view, shown) = self.view_and_shown();
        let found = view.find(&text, skip, &shown).unwrap_or(false);
        self.search.failed = !found;
    }

    /// The search text and whether the last search found no row.
    pub fn search_text(&self) -> (&str, bool) {
        (&self.search.text, self.search.failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_match_wraps_and_starts_where_asked() {
        let rows = ["a", "b", "a", "c"];
        let is_a = |i: usize| rows[i] == "a";
        assert_eq!(next_match(4, 0, is_a), Some(0));
        assert_eq!(next_match(4, 1, is_a), Some(2));
        assert_eq!(next_match(4, 3, is_a), Some(0));
        assert_eq!(next_match(4, 5, is_a), Some(2));
        assert_eq!(next_match(4, 0, |i| rows[i] == "z"), None);
        assert_eq!(next_match(0, 0, is_a), None);
    }
}
