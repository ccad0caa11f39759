//! What every tab's state answers to (gitui's components): its keys, its
//! row filter, F3's search and a click on a row. App holds one struct per
//! tab and hands keys to the open one through this trait; drawing stays in
//! ui, one render function per tab.

use super::history::History;
use super::keymap::{Action, Key, Scope};
use super::line_edit;
use super::links::Link;
use super::search::next_match;
use crate::model::Sample;
use crate::model::capture::FlowSample;
use crate::model::conntrack::ConntrackEntry;
use crate::model::filter::Expr;
use crate::model::sockets::SocketSample;

/// The samples a tab shows: the one on screen (the newest, or the frozen
/// one), the one before it for rates, and the history they come from.
#[derive(Clone, Copy)]
pub struct Shown<'a> {
    pub history: &'a History,
    pub index: Option<usize>,
}

/// The namespace every tab is scoped to: a row filter (`ns:` matched
/// whole) applied before each tab's own.
#[derive(Debug, Clone, PartialEq)]
pub struct NsScope {
    pub id: u16,
    pub label: String,
    expr: Expr,
}

impl NsScope {
    pub fn new(id: u16, label: &str) -> Self {
        Self {
            id,
            label: label.to_string(),
            expr: Expr::netns_is(label),
        }
    }

    /// Whether this is the namespace netlens watches first (the one its
    /// flows, TCP counters and conntrack entries come from).
    pub fn is_primary(&self) -> bool {
        self.id == crate::model::netns::PRIMARY
    }
}

/// The expression a tab's rows are shown by: the namespace scope's (each
/// table view holds a copy, set by `App::set_scope`), then the tab's own
/// `/` filter `text` (see `row_filter`).
pub fn scoped_filter(scope: Option<&NsScope>, text: &str) -> Expr {
    match scope {
        Some(scope) => scope.expr.clone().and(row_filter(text)),
        None => row_filter(text),
    }
}

/// The scope's namespace id, for the tabs' row caches.
pub fn scope_id(scope: Option<&NsScope>) -> Option<u16> {
    scope.map(|s| s.id)
}

impl<'a> Shown<'a> {
    /// The shown sample and up to `n - 1` before it, newest first.
    pub fn recent(&self, n: usize) -> impl Iterator<Item = &'a Sample> {
        let (history, index) = (self.history, self.index);
        (0..n).filter_map(move |back| history.get(index?.checked_sub(back)?))
    }

    /// The sample before the shown one and the shown one.
    pub fn pair(&self) -> (Option<&'a Sample>, Option<&'a Sample>) {
        match self.index {
            Some(index) => self.history.pair(index),
            None => (None, None),
        }
    }

    pub fn current(&self) -> Option<&'a Sample> {
        self.pair().1
    }

    /// The newest conntrack entry list at or before the shown sample (entries
    /// are dumped at most once a second, so not every sample has them), how
    /// many samples older than the shown one it is, and the dump's time.
    pub fn conntrack_entries_at(&self) -> Option<(&'a [ConntrackEntry], usize, f64)> {
        let shown = self.index?;
        let history = self.history;
        (0..=shown).rev().find_map(|index| {
            let sample = history.get(index)?;
            if sample.netns != history.get(shown)?.netns {
                return None;
            }
            sample
                .conntrack
                .entries
                .as_deref()
                .map(|entries| (entries, shown - index, sample.mono))
        })
    }

    /// The sample holding the entries `conntrack_entries_at` gives, shared
    /// (the Conntrack tab sorts them on a thread of their own).
    pub fn conntrack_sample(&self) -> Option<std::sync::Arc<Sample>> {
        let (_, age, _) = self.conntrack_entries_at()?;
        self.history.get_shared(self.index? - age)
    }

    /// The newest conntrack dump at or before the shown sample and its
    /// monotonic time, if it is at most `NAT_DUMP_MAX_AGE_S` older (the
    /// Flows tab and the flow screen name each flow's NAT from it).
    pub fn recent_conntrack(&self) -> Option<(&'a [ConntrackEntry], f64)> {
        let (entries, _, mono) = self.conntrack_entries_at()?;
        let age = self.current()?.mono - mono;
        (age <= crate::model::conntrack::NAT_DUMP_MAX_AGE_S).then_some((entries, mono))
    }

    /// The conntrack entries shown, or none.
    pub fn conntrack_entries(&self) -> &'a [ConntrackEntry] {
        self.conntrack_entries_at().map_or(&[][..], |(e, _, _)| e)
    }

    /// The samples up to the shown one, of the shown one's namespace.
    pub fn same_netns(&self) -> Vec<&'a Sample> {
        let Some(shown) = self.index else {
            return Vec::new();
        };
        let history = self.history;
        let netns = history.get(shown).map(|s| s.netns.clone());
        (0..=shown)
            .filter_map(|i| history.get(i))
            .filter(|s| Some(&s.netns) == netns.as_ref())
            .collect()
    }
}

/// What a tab's key asks of the App, beyond redrawing.
pub enum Reply {
    /// Handled here; whether the screen must be redrawn.
    Redraw(bool),
    /// Enter on a flow (or a socket with traffic): open its screen.
    OpenFlow(FlowSample),
    /// F9: ask whether to kill this socket (None: none is selected).
    Kill(Option<SocketSample>),
    /// `x`: go to the related rows in another tab.
    Link(Link),
    /// `t`: open the Path view to this remote address and port.
    Trace(std::net::SocketAddr),
    /// Enter in Namespaces: scope every tab to this namespace.
    Scope(NsScope),
}

pub trait TabView {
    /// The key table's scope for this tab's own keys (besides View's).
    fn scope(&self) -> Scope {
        Scope::View
    }

    /// A bound key of the View scope or of the tab's own.
    fn on_action(&mut self, action: Action, key: Key, shown: &Shown) -> Reply;

    /// A prompt of the tab's own that is open (the `/` filter line, the
    /// capture filter, a DNS probe, the load form's field or y/N) takes
    /// every key: Some(whether to redraw). None: no prompt is open.
    fn prompt_key(&mut self, key: Key) -> Option<bool> {
        let (text, editing) = self.row_filter_mut()?;
        filter_key(text, editing, key)
    }

    /// The `/` row filter's text and whether it is being typed, in a tab
    /// that has one (the table tabs).
    fn row_filter(&self) -> Option<(&str, bool)> {
        None
    }

    /// The same, to change.
    fn row_filter_mut(&mut self) -> Option<(&mut String, &mut bool)> {
        None
    }

    /// The row filter being typed, if it is.
    fn editing_filter(&self) -> Option<&str> {
        let (text, editing) = self.row_filter()?;
        editing.then_some(text)
    }

    /// The row filter applied, if any.
    fn filter(&self) -> Option<&str> {
        applied(self.row_filter()?.0)
    }

    /// The tab's table of selectable rows, for F3 and clicks.
    fn table(&mut self) -> Option<&mut dyn TableRows> {
        None
    }

    /// F3: selects the first row matching `text`, `skip` rows after the
    /// selection (0: the selected row itself may match); whether one did.
    /// None: the tab has no table to search.
    fn find(&mut self, text: &str, skip: usize, shown: &Shown) -> Option<bool> {
        Some(find_in_table(self.table()?, text, skip, shown))
    }

    /// A click on the `index`th row of the table; whether to redraw.
    fn click_row(&mut self, index: usize, shown: &Shown) -> bool {
        self.table()
            .is_some_and(|table| click_in_table(table, index, shown))
    }
}

/// What a table tab answers so that F3's search and a click on a row work
/// alike in each of the six (and Sockets' Closed view).
pub trait TableRows {
    /// Readies every row for F3's walk over them all (Sockets sorts its
    /// order only as far as it is shown; F3 is rare, so it sorts all of it).
    fn sort_every_row(&mut self, _shown: &Shown) {}

    /// Brings the rows up to date with the shown sample: how many there
    /// are and which is selected. None: there is no sample.
    fn refresh_rows(&mut self, shown: &Shown) -> Option<(usize, Option<usize>)>;

    /// Whether row `index` (as last refreshed) matches F3's `search`.
    fn row_matches(&self, index: usize, search: &Expr, shown: &Shown) -> bool;

    /// Selects row `index` (as last refreshed).
    fn select_at(&mut self, index: usize, shown: &Shown);

    /// A detail pane covers the table: clicks do not reach its rows.
    fn covered(&self) -> bool {
        false
    }
}

/// F3 in a table: the first row from the selection (`skip` rows on)
/// matching `text`, selected; whether there was one.
pub fn find_in_table(table: &mut dyn TableRows, text: &str, skip: usize, shown: &Shown) -> bool {
    table.sort_every_row(shown);
    let (Some((count, selected)), Some(search)) = (table.refresh_rows(shown), search_filter(text))
    else {
        return false;
    };
    let from = selected.unwrap_or(0) + skip;
    let found = next_match(count, from, |i| table.row_matches(i, &search, shown));
    found.inspect(|&i| table.select_at(i, shown)).is_some()
}

/// A click on row `index` of a table selects it; whether it did.
pub fn click_in_table(table: &mut dyn TableRows, index: usize, shown: &Shown) -> bool {
    if table.covered() {
        return false;
    }
    match table.refresh_rows(shown) {
        Some((count, _)) if index < count => {
            table.select_at(index, shown);
            true
        }
        _ => false,
    }
}

/// The `/` filter line of a table view: typing edits the filter (the table
/// follows at once), Enter keeps it, Esc clears it.
pub fn filter_key(filter: &mut String, editing: &mut bool, key: Key) -> Option<bool> {
    if !*editing {
        return None;
    }
    Some(match key {
        key if line_edit::edit(filter, key) => true,
        // An expression that does not parse is not kept: the filter line
        // stays open with its error (as the capture filter's editor).
        Key::Enter if Expr::parse(filter).is_err() => false,
        Key::Enter => {
            *editing = false;
            true
        }
        Key::Esc => {
            filter.clear();
            *editing = false;
            true
        }
        _ => false,
    })
}

/// The expression a tab's `/` filter applies (model::filter). While the
/// text being typed does not parse, the table is not filtered and the
/// filter line shows the error.
pub fn row_filter(text: &str) -> Expr {
    Expr::parse(text).unwrap_or_default()
}

/// F3's search in the same language; text that does not parse finds no
/// row.
pub fn search_filter(text: &str) -> Option<Expr> {
    Expr::parse(text).ok()
}

/// A filter as `TabView::filter` gives it: None when empty.
fn applied(filter: &str) -> Option<&str> {
    (!filter.is_empty()).then_some(filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table whose rows are filter texts: a row matches the search that
    /// parses to the same expression.
    #[derive(Default)]
    struct Texts {
        rows: Vec<&'static str>,
        selected: Option<usize>,
        covered: bool,
        filter: String,
        editing: bool,
    }

    impl TableRows for Texts {
        fn refresh_rows(&mut self, _shown: &Shown) -> Option<(usize, Option<usize>)> {
            Some((self.rows.len(), self.selected))
        }

        fn row_matches(&self, index: usize, search: &Expr, _shown: &Shown) -> bool {
            Expr::parse(self.rows[index]).is_ok_and(|row| row == *search)
        }

        fn select_at(&mut self, index: usize, _shown: &Shown) {
            self.selected = Some(index);
        }

        fn covered(&self) -> bool {
            self.covered
        }
    }

    impl TabView for Texts {
        fn on_action(&mut self, _action: Action, _key: Key, _shown: &Shown) -> Reply {
            Reply::Redraw(false)
        }

        fn row_filter(&self) -> Option<(&str, bool)> {
            Some((&self.filter, self.editing))
        }

        fn row_filter_mut(&mut self) -> Option<(&mut String, &mut bool)> {
            Some((&mut self.filter, &mut self.editing))
        }

        fn table(&mut self) -> Option<&mut dyn TableRows> {
            Some(self)
        }
    }

    fn texts(rows: &[&'static str]) -> Texts {
        Texts {
            rows: rows.to_vec(),
            ..Texts::default()
        }
    }

    #[test]
    fn f3_searches_on_from_the_selection_and_wraps() {
        let history = History::default();
        let shown = Shown {
            history: &history,
            index: None,
        };
        let mut table = texts(&["port:22", "port:443", "port:22"]);
        assert_eq!(table.find("port:22", 0, &shown), Some(true));
        assert_eq!(table.selected, Some(0));
        assert_eq!(table.find("port:22", 1, &shown), Some(true));
        assert_eq!(table.selected, Some(2));
        assert_eq!(table.find("port:22", 1, &shown), Some(true));
        assert_eq!(table.selected, Some(0));
        assert_eq!(table.find("port:80", 0, &shown), Some(false));
        assert_eq!(table.find("port:", 0, &shown), Some(false));
        assert_eq!(table.selected, Some(0));
    }

    #[test]
    fn a_click_selects_a_row_in_range_and_not_under_a_pane() {
        let history = History::default();
        let shown = Shown {
            history: &history,
            index: None,
        };
        let mut table = texts(&["port:22", "port:443"]);
        assert!(table.click_row(1, &shown));
        assert_eq!(table.selected, Some(1));
        assert!(!table.click_row(2, &shown));
        table.covered = true;
        assert!(!table.click_row(0, &shown));
        assert_eq!(table.selected, Some(1));
    }

    #[test]
    fn the_filter_line_is_typed_kept_and_cleared() {
        let mut table = texts(&[]);
        assert_eq!(table.prompt_key(Key::Char('p')), None, "not being typed");
        table.editing = true;
        for c in "port:".chars() {
            assert_eq!(table.prompt_key(Key::Char(c)), Some(true));
        }
        assert_eq!(table.editing_filter(), Some("port:"));
        // Does not parse: Enter keeps the line open.
        assert_eq!(table.prompt_key(Key::Enter), Some(false));
        table.prompt_key(Key::Char('1'));
        assert_eq!(table.prompt_key(Key::Enter), Some(true));
        assert_eq!(
            (table.editing_filter(), table.filter()),
            (None, Some("port:1"))
        );
        table.editing = true;
        table.prompt_key(Key::Esc);
        assert_eq!((table.editing_filter(), table.filter()), (None, None));
    }
}
