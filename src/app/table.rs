//! What the table views share: the column descriptors, the window of
//! visible rows, and the keys that move the selection and cycle the sort
//! column.

use super::keymap::Action;

/// One column of a table view, all of it in one row of the tab's const
/// table: `C` is the view's column enum, `S` the type of its sort
/// comparison and `D` of its cell function (plain `fn` pointers; each tab
/// names the row and context they take).
pub struct ColumnSpec<C, S, D> {
    pub column: C,
    pub title: &'static str,
    pub width: u16,
    /// Lower shows first when the terminal is narrow.
    pub priority: u8,
    pub align: Align,
    /// How two rows order by this column, smallest first.
    pub sort: S,
    /// The cell's text and style hint (ui/ draws it).
    pub cell: D,
}

/// One descriptor row: `(column, title, width, priority)`, then how it
/// aligns, sorts and draws (the tabs' const tables are lists of these).
pub const fn spec<C: Copy, S, D>(
    (column, title, width, priority): (C, &'static str, u16, u8),
    align: Align,
    sort: S,
    cell: D,
) -> ColumnSpec<C, S, D> {
    ColumnSpec {
        column,
        title,
        width,
        priority,
        align,
        sort,
        cell,
    }
}

/// Where a column's text sits in its cell (and its title in the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// How a cell is styled: a word ui/ turns into its theme's style, so app/
/// needs no ratatui.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Hint {
    #[default]
    Plain,
    Good,
    Alert,
    Warn,
    Dim,
    /// Received traffic's colour (a NATed conntrack entry).
    Rx,
}

/// What a cell shows: its text in its style, and an optional flag word led
/// in the alert style (the Sockets State cell when Flag is off screen).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CellText {
    pub text: String,
    pub hint: Hint,
    pub flag: Option<&'static str>,
}

impl CellText {
    pub fn styled(text: impl Into<String>, hint: Hint) -> Self {
        Self {
            text: text.into(),
            hint,
            flag: None,
        }
    }
}

impl<T: Into<String>> From<T> for CellText {
    fn from(text: T) -> Self {
        Self::styled(text, Hint::Plain)
    }
}

/// Unknown numbers sort below every known one.
pub fn by_number(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    a.unwrap_or(f64::NEG_INFINITY)
        .total_cmp(&b.unwrap_or(f64::NEG_INFINITY))
}

/// The rows a table shows: where they start and how many fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First visible row.
    pub offset: usize,
    /// Rows visible at the last draw (PgUp/PgDn step).
    pub page: usize,
}

impl Default for Window {
    fn default() -> Self {
        Self {
            offset: 0,
            page: 10,
        }
    }
}

impl Window {
    /// Fits the window to `visible` rows of a table of `count`: keeps
    /// `selected` in view and does not scroll past the last full page.
    pub fn fit(&mut self, selected: Option<usize>, count: usize, visible: usize) {
        self.page = visible.max(1);
        if let Some(selected) = selected {
            self.offset = super::scroll_offset(self.offset, selected, visible);
        }
        self.offset = self.offset.min(count.saturating_sub(visible.max(1)));
    }

    /// Where a move key takes the selection from row `at` of `count`; None
    /// for any other action.
    pub fn move_selection(&self, action: Action, at: usize, count: usize) -> Option<usize> {
        let last = count.saturating_sub(1);
        let page = self.page.max(1);
        match action {
            Action::Up => Some(at.saturating_sub(1)),
            Action::Down => Some((at + 1).min(last)),
            Action::PageUp => Some(at.saturating_sub(page)),
            Action::PageDown => Some((at + page).min(last)),
            Action::Top => Some(0),
            Action::Bottom => Some(last),
            _ => None,
        }
    }
}

/// Esc in a table view with a detail pane: closes the pane if it is open,
/// else clears the filter; false when there was neither.
pub fn close_detail_or_filter(detail: &mut bool, filter: &mut String) -> bool {
    if *detail {
        *detail = false;
    } else if filter.is_empty() {
        return false;
    } else {
        filter.clear();
    }
    true
}

/// The column after `current` in the sort cycle `order` (SortNext), or the
/// one before it (SortPrev), wrapping around. Only the columns `on_screen`
/// take part (every one before the first draw, when it is empty): sorting by
/// a column the terminal is too narrow to show would leave no arrow and no
/// visible reason for the order.
pub fn next_sort<C: Copy + PartialEq>(
    order: impl Iterator<Item = C>,
    on_screen: &[C],
    current: C,
    action: Action,
) -> C {
    let cycle: Vec<C> = order
        .filter(|c| on_screen.is_empty() || on_screen.contains(c))
        .collect();
    let len = cycle.len();
    if len == 0 {
        return current;
    }
    let next = match cycle.iter().position(|&c| c == current) {
        Some(at) if action == Action::SortNext => (at + 1) % len,
        Some(at) => (at + len - 1) % len,
        // The sort column went off screen (a resize): start over.
        None if action == Action::SortNext => 0,
        None => len - 1,
    };
    cycle[next]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_follows_the_selection_and_stops_at_the_last_page() {
        let mut window = Window::default();
        window.fit(Some(25), 30, 10);
        assert_eq!((window.offset, window.page), (16, 10));
        window.fit(None, 12, 10);
        assert_eq!(window.offset, 2);
        assert_eq!(window.move_selection(Action::PageDown, 5, 12), Some(11));
        assert_eq!(window.move_selection(Action::Up, 0, 0), Some(0));
        assert_eq!(window.move_selection(Action::Filter, 3, 12), None);
    }

    #[test]
    fn esc_closes_the_pane_then_clears_the_filter() {
        let (mut detail, mut filter) = (true, String::from("eth"));
        assert!(close_detail_or_filter(&mut detail, &mut filter));
        assert_eq!((detail, filter.as_str()), (false, "eth"));
        assert!(close_detail_or_filter(&mut detail, &mut filter));
        assert!(filter.is_empty());
        assert!(!close_detail_or_filter(&mut detail, &mut filter));
    }

    #[test]
    fn the_sort_cycle_wraps_both_ways() {
        let order = [1, 2, 3];
        assert_eq!(
            next_sort(order.iter().copied(), &[], 3, Action::SortNext),
            1
        );
        assert_eq!(
            next_sort(order.iter().copied(), &[], 1, Action::SortPrev),
            3
        );
        assert_eq!(next_sort([].iter().copied(), &[], 7, Action::SortNext), 7);
    }

    #[test]
    fn the_sort_cycle_skips_columns_off_screen() {
        let order = [1, 2, 3, 4];
        assert_eq!(
            next_sort(order.iter().copied(), &[1, 3], 1, Action::SortNext),
            3
        );
        assert_eq!(
            next_sort(order.iter().copied(), &[1, 3], 3, Action::SortNext),
            1
        );
        assert_eq!(
            next_sort(order.iter().copied(), &[1, 3], 1, Action::SortPrev),
            3
        );
        assert_eq!(
            next_sort(order.iter().copied(), &[1, 3], 4, Action::SortNext),
            1
        );
    }
}
