//! F3: htop's incremental search. Typing moves the selection to the next
//! row that matches (what `/` would keep), without hiding the others; F3
//! again finds the next one, wrapping at the end; Enter or Esc leaves with
//! the selection where it is. Works in the Interfaces, Sockets, Conntrack
//! and Flows tables.

use super::tabs::Tab;
use super::{App, line_edit};
use crate::app::keymap::Key;

#[derive(Debug, Clone, Default)]
pub struct Search {
    pub text: String,
    /// The prompt is open and takes the keys.
    pub editing: bool,
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
        Tab::Interfaces | Tab::Sockets | Tab::Conntrack | Tab::Flows
    )
}

impl App {
    /// F3 outside the prompt: opens it; with text from before, finds the
    /// next match at once.
    pub fn start_search(&mut self) {
        if !searchable(self.tab) {
            self.status = Some(format!(
                "F3 searches a table; {} has none",
                self.tab.title()
            ));
            return;
        }
        self.search.editing = true;
        if !self.search.text.is_empty() {
            self.find(1);
        }
    }

    /// A key while the prompt is open; None when the key ends the search and
    /// is to be handled as usual (a move key, a tab switch).
    pub fn search_key(&mut self, key: Key) -> Option<bool> {
        match key {
            Key::F(3) => self.find(1),
            Key::Enter | Key::Esc => self.search.editing = false,
            key if line_edit::edit(&mut self.search.text, key) => self.find(0),
            _ => {
                self.search.editing = false;
                return None;
            }
        }
        Some(true)
    }

    /// Selects the first match `skip` rows after the selection (0: the
    /// selected row itself may match).
    fn find(&mut self, skip: usize) {
        let text = self.search.text.clone();
        if text.is_empty() {
            self.search.failed = false;
            return;
        }
        let found = self.find_in_tab(&text, skip);
        self.search.failed = !found;
    }

    /// Moves the current tab's selection to the next row matching `text`;
    /// whether there was one.
    fn find_in_tab(&mut self, text: &str, skip: usize) -> bool {
        let Some(index) = self.shown_index() else {
            return false;
        };
        let (previous, current) = self.history.pair(index);
        let Some(current) = current else {
            return false;
        };
        match self.tab {
            Tab::Sockets => {
                let order = self.sockets.order(current).to_vec();
                let at = self.sockets.selected_index(&order, current).unwrap_or(0);
                let found = next_match(order.len(), at + skip, |i| {
                    super::sockets::matches(&current.sockets[order[i] as usize], text)
                });
                found
                    .inspect(|&i| self.sockets.select_row(current, i))
                    .is_some()
            }
            Tab::Interfaces => {
                self.interfaces.refresh(previous, current);
                let rows = self.interfaces.rows(current);
                let at = self.interfaces.selected_index(&rows).unwrap_or(0);
                let needle = text.to_lowercase();
                let found = next_match(rows.len(), at + skip, |i| {
                    rows.get(i).is_some_and(|row| row.matches(&needle))
                });
                found
                    .inspect(|&i| self.interfaces.select_row(previous, current, i))
                    .is_some()
            }
            Tab::Conntrack => {
                let mut view = std::mem::take(&mut self.conntrack);
                let found = self.conntrack_entries().and_then(|(entries, _)| {
                    let rows = view.rows(entries);
                    let at = view.selected_index(&rows).unwrap_or(0);
                    let found = next_match(rows.len(), at + skip, |i| {
                        super::conntrack::matches(rows[i], text)
                    });
                    found.inspect(|&i| view.select_row(entries, i))
                });
                self.conntrack = view;
                found.is_some()
            }
            Tab::Flows => {
                let rows = self.flow_rows();
                let needle = text.to_lowercase();
                let found = next_match(rows.len(), self.flows.selected + skip, |i| {
                    let row = &rows[i];
                    [&row.key, &row.process, &row.proto, &row.state]
                        .iter()
                        .any(|field| field.to_lowercase().contains(&needle))
                });
                found.inspect(|&i| self.flows.selected = i).is_some()
            }
            _ => false,
        }
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
