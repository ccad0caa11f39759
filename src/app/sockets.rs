//! The Sockets tab's state: columns, sort, filter, selection, and the short
//! histories (rtt, cwnd, queues) of the sockets worth charting. Rendering
//! lives in ui/sockets.rs and ui/socket_detail.rs.
//!
//! Filtering, TIME_WAIT grouping and sorting happen once per sample (or when
//! the sort or the filter changes), not once per frame, and only the rows
//! that can be shown are sorted (`socket_rows`): frames only look at the
//! visible slice.

use super::closed::{self, ClosedView};
use super::failed::FailedView;
use super::keymap::{Action, Key, Scope};
use super::links::Link;
use super::socket_order::SocketOrder;
use super::socket_rows::{SocketRows, Want, WantOwned};
use super::table::{self, Window};
use super::view::{Reply, Shown, TabView, TableRows};
use crate::findings::{Thresholds, stuck};
use crate::model::Sample;
use crate::model::filter::Expr;
use crate::model::filter::rows::InSample;
use crate::model::socket_table::{Socket, SocketTable};
use crate::model::sockets::SocketKey;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Proto,
    State,
    RecvQ,
    SendQ,
    Local,
    Peer,
    Process,
    Rtt,
    Cwnd,
    Retrans,
    Flag,
    /// The socket's namespace (or container): only while a sample holds
    /// more than one (--all-netns).
    Netns,
}

pub(super) use super::socket_columns::compare;
pub use super::socket_columns::{COLUMNS, ColumnSpec};

/// The sort cycle (s / <), of the columns on screen.
const SORT_ORDER: &[Column] = &[
    Column::Netns,
    Column::Proto,
    Column::State,
    Column::RecvQ,
    Column::SendQ,
    Column::Local,
    Column::Peer,
    Column::Flag,
    Column::Process,
    Column::Rtt,
    Column::Cwnd,
    Column::Retrans,
];

/// Why a row is highlighted: words, so it shows without colour.
pub fn flag(socket: &Socket, overflows_rising: bool, limits: &Thresholds) -> Option<&'static str> {
    if socket.accept_queue_full() {
        Some("FULL")
    } else if socket.is_listener() && overflows_rising && socket.recv_q > 0 {
        Some("OVFL")
    } else if stuck(socket, limits) {
        Some("STUCK")
    } else {
        None
    }
}

/// The process a socket is grouped under in the tree (F5): its first
/// owner's pid; None when no owner is known.
pub fn owner_pid(socket: &Socket) -> Option<u32> {
    socket.users.first().map(|user| user.pid)
}

/// The tree's order: each process's sockets together, in the sorted order
/// of the process's first socket (so the sort still picks the top
/// process); sockets without a known owner last.
pub(super) fn group_by_owner(order: Vec<u32>, sockets: &SocketTable) -> Vec<u32> {
    let mut groups: Vec<(Option<u32>, Vec<u32>)> = Vec::new();
    let mut group_of: HashMap<Option<u32>, usize> = HashMap::new();
    for row in order {
        let owner = owner_pid(&sockets.at(row as usize));
        let group = *group_of.entry(owner).or_insert_with(|| {
            groups.push((owner, Vec::new()));
            groups.len() - 1
        });
        groups[group].1.push(row);
    }
    groups.sort_by_key(|(owner, _)| owner.is_none());
    groups.into_iter().flat_map(|(_, rows)| rows).collect()
}

/// Where a row sits in the tree: the first of its process's sockets (the
/// process is named there), a middle one, or the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    First,
    Middle,
    Last,
}

/// The branch of row `index` of a tree `order`.
pub fn branch(order: &[u32], index: usize, sockets: &SocketTable) -> Branch {
    let owner = |i: usize| owner_pid(&sockets.at(order[i] as usize));
    if index == 0 || owner(index - 1) != owner(index) {
        Branch::First
    } else if index + 1 < order.len() && owner(index + 1) == owner(index) {
        Branch::Middle
    } else {
        Branch::Last
    }
}

/// One point of a socket's history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrailPoint {
    pub mono: f64,
    pub rtt_ms: Option<f64>,
    pub cwnd: Option<u32>,
    pub recv_q: u32,
    pub send_q: u32,
}

/// Most sockets kept with a history at once.
pub const MAX_TRAILS: usize = 256;
/// Points per socket history (5 minutes at 1 s).
pub const TRAIL_POINTS: usize = 300;

/// What the Sockets tab lists; `c` steps through them in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Open,
    /// The connection log, one row per connection that ended.
    Closed,
    /// The connections that failed and the DNS queries that got no good
    /// answer, grouped.
    Failed,
}

impl Listing {
    pub fn next(self) -> Listing {
        match self {
            Listing::Open => Listing::Closed,
            Listing::Closed => Listing::Failed,
            Listing::Failed => Listing::Open,
        }
    }
}

#[derive(Debug, Clone)]
pub struct SocketsView {
    pub sort: Column,
    pub descending: bool,
    pub selected: Option<SocketKey>,
    pub selected_position: usize,
    pub window: Window,
    pub filter: String,
    pub editing_filter: bool,
    pub detail: bool,
    /// Sorted, filtered rows of the shown sample (TIME_WAIT grouped),
    /// re-sorted off the UI thread at scale (`socket_order`).
    pub rows: SocketOrder,
    /// The peer whose TIME_WAIT sockets are listed one by one (Enter on
    /// its group row; Esc folds it again).
    pub expanded: Option<SocketAddr>,
    /// Histories of the selected socket and of the highlighted ones.
    pub trails: HashMap<SocketKey, VecDeque<TrailPoint>>,
    /// The finding thresholds (STUCK follows stuck_queue_samples).
    pub thresholds: Thresholds,
    /// F5: the sockets grouped under their owning process.
    pub tree: bool,
    /// The columns drawn last time: the sort cycles through these.
    pub on_screen: Vec<Column>,
    /// `c`: the open sockets, the closed connections, the failed ones.
    pub listing: Listing,
    pub closed: ClosedView,
    pub failed: FailedView,
    /// The namespace scope (Enter in Namespaces), before the filter.
    pub scope: Option<super::view::NsScope>,
    /// The reverse names known while names are on (N), for `host:NAME`
    /// (`App::share_names` sets them with each sample and on N).
    pub names: Option<std::sync::Arc<crate::model::filter::KnownNames>>,
    /// Bumped whenever `names` changes, so the row order (filtered by
    /// `host:NAME`) is rebuilt at once (`App::share_names`).
    pub names_generation: u64,
}

impl Default for SocketsView {
    fn default() -> Self {
        Self {
            sort: Column::RecvQ,
            descending: true,
            selected: None,
            selected_position: 0,
            window: Window::default(),
            filter: String::new(),
            editing_filter: false,
            detail: false,
            rows: SocketOrder::default(),
            expanded: None,
            trails: HashMap::new(),
            thresholds: Thresholds::DEFAULT,
            tree: false,
            on_screen: Vec::new(),
            listing: Listing::Open,
            closed: ClosedView::default(),
            failed: FailedView::default(),
            scope: None,
            names: None,
            names_generation: 0,
        }
    }
}

impl SocketsView {
    /// The sorted, filtered row order for `current`, recomputed only when
    /// the sample, the sort or the filter changed, sorted as far as the
    /// window and the selection reach.
    pub fn order(&mut self, current: &Sample) -> &[u32] {
        let want = Want {
            sort: self.sort,
            descending: self.descending,
            filter: &self.filter,
            scope: self.scope.as_ref(),
            tree: self.tree,
            expanded: self.expanded,
            limits: self.thresholds,
            upto: (self.window.offset + self.window.page).max(self.selected_position + 1),
            names: self.names.as_ref(),
            names_generation: self.names_generation,
        };
        self.rows.get(current, &want)
    }

    /// How many sockets row `row` (a socket index) stands for: 1, or the
    /// count of a TIME_WAIT group.
    pub fn row_count(&self, row: u32) -> u32 {
        self.rows.shown.count(row)
    }

    /// Whether the order shown is not yet the one asked for (a sort runs
    /// off the UI thread).
    pub fn sorting(&self) -> bool {
        self.rows.sorting()
    }

    /// Takes a sort finished off the UI thread; whether the order changed.
    pub fn poll_order(&mut self) -> bool {
        self.rows.poll()
    }

    /// Lends the cached order out (for drawing while the view is mutated);
    /// `put_order` gives it back.
    pub fn take_order(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.rows.shown.rows)
    }

    pub fn put_order(&mut self, order: Vec<u32>) {
        self.rows.shown.rows = order;
    }

    /// Position of the selection in `order`, following the socket by its
    /// endpoints among the sorted rows and falling back to the same
    /// position when it is gone (or sorted out of the shown part).
    pub fn selected_index(&self, order: &[u32], current: &Sample) -> Option<usize> {
        if order.is_empty() {
            return None;
        }
        let sorted = &order[..self.rows.shown.sorted().min(order.len())];
        self.selected
            .and_then(|key| {
                // Where it was first: the common case costs one comparison.
                let here = sorted.get(self.selected_position);
                if here.is_some_and(|&i| current.sockets.at(i as usize).key() == key) {
                    return Some(self.selected_position);
                }
                sorted
                    .iter()
                    .position(|&i| current.sockets.at(i as usize).key() == key)
            })
            .or(Some(self.selected_position.min(order.len() - 1)))
    }

    fn select(&mut self, current: &Sample, index: usize) {
        if index >= self.order(current).len() {
            return;
        }
        self.selected_position = index;
        // Sorted as far as the new position before it is read.
        let row = self.order(current)[index];
        self.selected = current.sockets.get(row as usize).map(|s| s.key());
    }

    pub fn select_row(&mut self, current: &Sample, index: usize) {
        self.order(current);
        self.select(current, index);
    }

    /// The selected socket in `current`, if it still exists.
    pub fn selected_socket<'a>(&self, current: &'a Sample) -> Option<Socket<'a>> {
        let key = self.selected?;
        current.sockets.iter().find(|s| s.key() == key)
    }

    /// The socket the selection is on (as Enter would pick it), selecting
    /// it by its endpoints from now on.
    pub fn selection<'a>(&mut self, current: &'a Sample) -> Option<Socket<'a>> {
        self.order(current);
        let order = self.take_order();
        let at = self.selected_index(&order, current);
        self.put_order(order);
        self.select(current, at?);
        self.selected_socket(current)
    }

    /// Applies a view action; returns whether anything changed.
    pub fn handle(&mut self, action: Action, current: &Sample) -> bool {
        let len = self.order(current).len();
        let order = self.take_order();
        let at = self.selected_index(&order, current).unwrap_or(0);
        self.put_order(order);
        if let Some(index) = self.window.move_selection(action, at, len) {
            self.select(current, index);
            return true;
        }
        match action {
            Action::Open => {
                self.select(current, at);
                let row = self.rows.shown.rows.get(at).copied();
                match row.filter(|&row| self.row_count(row) > 1) {
                    // A TIME_WAIT group opens into its sockets.
                    Some(row) => self.expanded = Some(current.sockets.at(row as usize).peer),
                    None => self.detail = len > 0,
                }
            }
            Action::Close if !self.detail && self.expanded.is_some() => self.expanded = None,
            Action::Close => {
                return table::close_detail_or_filter(&mut self.detail, &mut self.filter);
            }
            Action::SortNext | Action::SortPrev => {
                self.sort = table::next_sort(
                    SORT_ORDER.iter().copied(),
                    &self.on_screen,
                    self.sort,
                    action,
                );
                self.descending = !matches!(
                    self.sort,
                    Column::Proto
                        | Column::State
                        | Column::Local
                        | Column::Peer
                        | Column::Process
                        | Column::Netns
                );
            }
            Action::SortInvert => self.descending = !self.descending,
            Action::Filter => self.editing_filter = true,
            _ => return false,
        }
        true
    }

    /// What the row order is built for now (for the preparation worker).
    pub fn want(&self) -> WantOwned {
        WantOwned {
            sort: self.sort,
            descending: self.descending,
            filter: self.filter.clone(),
            scope: self.scope.clone(),
            tree: self.tree,
            expanded: self.expanded,
            limits: self.thresholds,
            upto: (self.window.offset + self.window.page).max(self.selected_position + 1),
            names: self.names.clone(),
            names_generation: self.names_generation,
        }
    }

    /// Takes rows the preparation worker built for a new sample: the next
    /// frame uses them when the sort and filter are still those asked for
    /// (`SocketRows::get` checks), and builds its own otherwise.
    pub fn install_rows(&mut self, rows: SocketRows) {
        self.rows.install(rows);
    }
}

impl TabView for SocketsView {
    fn scope(&self) -> Scope {
        Scope::Sockets
    }

    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        if action == Action::ToggleClosed {
            self.listing = self.listing.next();
            self.detail = false;
            return Reply::Redraw(true);
        }
        let (filter, editing) = (&mut self.filter, &mut self.editing_filter);
        match self.listing {
            Listing::Open => {}
            Listing::Closed => {
                return closed::on_action(&mut self.closed, filter, editing, action, shown);
            }
            Listing::Failed => {
                return closed::on_action(&mut self.failed, filter, editing, action, shown);
            }
        }
        // The htop keys work in the table, not in the detail pane.
        match action {
            Action::Tree | Action::KillSocket if self.detail => return Reply::Redraw(false),
            Action::Tree => {
                self.tree = !self.tree;
                return Reply::Redraw(true);
            }
            Action::KillSocket => {
                let current = shown.current();
                return Reply::Kill(current.and_then(|c| self.selection(c).map(|s| s.to_sample())));
            }
            _ => {}
        }
        let Some(current) = shown.current() else {
            return Reply::Redraw(false);
        };
        match action {
            // The row shown selected, as Enter takes it (nothing may have
            // been chosen with the arrows yet).
            Action::Trace => match self.selection(current) {
                Some(socket) if !socket.peer.ip().is_unspecified() => Reply::Trace(socket.peer),
                _ => Reply::Redraw(false),
            },
            Action::Link => match self.selection(current) {
                Some(socket) => Reply::Link(Link::FlowOfSocket {
                    local: socket.local,
                    peer: socket.peer,
                    proto: socket.proto.name(),
                }),
                None => Reply::Redraw(false),
            },
            // Enter on a socket with traffic opens its flow's screen.
            Action::Open
                if !self.detail
                    && let Some(flow) = self.selection(current).and_then(|socket| {
                        let flows = &current.capture.as_ref()?.flows;
                        crate::model::capture::flow_of_socket(flows, &socket).cloned()
                    }) =>
            {
                Reply::OpenFlow(flow)
            }
            _ => Reply::Redraw(self.handle(action, current)),
        }
    }

    fn row_filter(&self) -> Option<(&str, bool)> {
        Some((&self.filter, self.editing_filter))
    }

    fn row_filter_mut(&mut self) -> Option<(&mut String, &mut bool)> {
        Some((&mut self.filter, &mut self.editing_filter))
    }

    fn table(&mut self) -> Option<&mut dyn TableRows> {
        Some(self)
    }
}

impl TableRows for SocketsView {
    fn sort_every_row(&mut self, shown: &Shown) {
        let Some(current) = shown.current().filter(|_| self.listing == Listing::Open) else {
            return;
        };
        // The order is sorted as far as the selection reaches: all of it.
        let at = std::mem::replace(&mut self.selected_position, usize::MAX - 1);
        self.order(current);
        self.selected_position = at;
    }

    fn refresh_rows(&mut self, shown: &Shown) -> Option<(usize, Option<usize>)> {
        match self.listing {
            Listing::Open => {}
            Listing::Closed => {
                let rows = self.closed.rows(shown.history, shown.index?, &self.filter);
                return Some((rows.len(), Some(self.closed.selected)));
            }
            Listing::Failed => {
                let rows = self.failed.rows(shown.history, shown.index?, &self.filter);
                return Some((rows.len(), Some(self.failed.selected)));
            }
        }
        let current = shown.current()?;
        let count = self.order(current).len();
        let order = self.take_order();
        let at = self.selected_index(&order, current);
        self.put_order(order);
        Some((count, at))
    }

    fn row_matches(&self, index: usize, search: &Expr, shown: &Shown) -> bool {
        let Some(current) = shown.current() else {
            return false;
        };
        match self.listing {
            Listing::Open => {}
            Listing::Closed => {
                let conn = self.closed.row(index);
                return conn.is_some_and(|conn| search.matches(&InSample::new(conn, current)));
            }
            // Groups are no rows of the filter language.
            Listing::Failed => return false,
        }
        let row = self.rows.shown.rows.get(index);
        let socket = row.and_then(|&row| current.sockets.get(row as usize));
        socket.is_some_and(|socket| search.matches(&InSample::new(&socket, current)))
    }

    fn select_at(&mut self, index: usize, shown: &Shown) {
        if self.listing == Listing::Closed {
            self.closed.selected = index;
        } else if self.listing == Listing::Failed {
            self.failed.selected = index;
        } else if let Some(current) = shown.current() {
            self.select_row(current, index);
        }
    }

    fn covered(&self) -> bool {
        self.detail
    }
}
