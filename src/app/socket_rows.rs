//! The Sockets tab's row order, built to stay fast at a million sockets.
//!
//! - TIME_WAIT sockets are counted per remote endpoint: one row per peer
//!   holding two or more (`groups` gives its count), the sockets of one peer
//!   listed only once it is expanded (Enter on the row). A filter lists them
//!   all: it is how one asks for them.
//! - Only what can be shown is sorted: `rows[..sorted]` is in its final
//!   order and every later row sorts after it (a partial selection, O(n)),
//!   and the prefix grows on demand when the window or the selection goes
//!   further down (End sorts the rest once per sample). The tree (F5) needs
//!   the whole order and sorts it all. At scale a new order and a growth
//!   over many rows are made off the UI thread (`socket_order`).
//! - The filtered, grouped rows before any sort (`base`) are kept per
//!   sample: a new sort key copies them and selects again (O(n), no hashing
//!   and no filter), a new sample's rows are built by the preparation
//!   worker (`prepare`) before the sample reaches the UI.

use super::sockets::{Column, compare, group_by_owner};
use super::view;
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::model::filter::rows::InSample;
use crate::model::socket_table::{Socket, SocketTable};
use crate::model::sockets::{Proto, TCP_TIME_WAIT};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// Rows sorted past the furthest one asked for: a page of any terminal and
/// some scrolling without another selection.
const AHEAD: usize = 1024;

/// What decides the order: sample time, sort column, descending, filter,
/// tree, the expanded TIME_WAIT peer, the namespace scope and the reverse
/// names' generation (`host:NAME` matches other rows once N turns names on
/// or off, or new names are shared, without waiting for a sample).
pub(super) type Inputs = (
    f64,
    Column,
    bool,
    String,
    bool,
    Option<SocketAddr>,
    Option<u16>,
    u64,
);

/// What the rows were filtered and grouped for: sample time, filter,
/// expanded peer, scope, names' generation.
type BaseInputs = (f64, String, Option<SocketAddr>, Option<u16>, u64);

#[derive(Debug, Clone, Default)]
pub struct SocketRows {
    /// Indices into the sample's sockets; a TIME_WAIT group is shown by its
    /// first socket.
    pub rows: Vec<u32>,
    /// `rows[..sorted]` is final; the rest sorts after it, in no order.
    sorted: usize,
    /// A TIME_WAIT group's first socket -> sockets in the group (2 or more).
    pub groups: Arc<HashMap<u32, u32>>,
    built_for: Option<Inputs>,
    /// The rows filtered and grouped, unsorted, and what for (sample time,
    /// filter, expanded peer): each sort starts from a copy.
    base: Arc<Vec<u32>>,
    base_for: Option<BaseInputs>,
    /// The sample the rows index, when it is shared (prepared by the
    /// worker): a new order of it can then be made off the UI thread
    /// (`socket_order`).
    pub sample: Option<Arc<Sample>>,
}

/// How rows are compared: the view's sort, then endpoints, then index (so
/// the order is total and the same at every size of prefix).
struct Sorter<'a> {
    sockets: &'a SocketTable,
    column: Column,
    descending: bool,
    limits: Thresholds,
}

impl Sorter<'_> {
    fn cmp(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (x, y) = (&self.sockets.at(a as usize), &self.sockets.at(b as usize));
        let by = compare(x, y, self.column, &self.limits);
        let by = if self.descending { by.reverse() } else { by };
        by.then_with(|| x.local.cmp(&y.local))
            .then_with(|| x.peer.cmp(&y.peer))
            .then_with(|| a.cmp(&b))
    }
}

/// `Want` with its filter owned, to send to the preparation worker.
#[derive(Debug, Clone)]
pub struct WantOwned {
    pub sort: Column,
    pub descending: bool,
    pub filter: String,
    pub scope: Option<view::NsScope>,
    pub tree: bool,
    pub expanded: Option<SocketAddr>,
    pub limits: Thresholds,
    pub upto: usize,
    pub names: Option<std::sync::Arc<crate::model::filter::KnownNames>>,
    pub names_generation: u64,
}

impl From<&Want<'_>> for WantOwned {
    fn from(want: &Want) -> Self {
        Self {
            sort: want.sort,
            descending: want.descending,
            filter: want.filter.to_string(),
            scope: want.scope.cloned(),
            tree: want.tree,
            expanded: want.expanded,
            limits: want.limits,
            upto: want.upto,
            names: want.names.cloned(),
            names_generation: want.names_generation,
        }
    }
}

impl WantOwned {
    pub fn want(&self) -> Want<'_> {
        Want {
            sort: self.sort,
            descending: self.descending,
            filter: &self.filter,
            scope: self.scope.as_ref(),
            tree: self.tree,
            expanded: self.expanded,
            limits: self.limits,
            upto: self.upto,
            names: self.names.as_ref(),
            names_generation: self.names_generation,
        }
    }
}

pub struct Want<'a> {
    pub sort: Column,
    pub descending: bool,
    pub filter: &'a str,
    /// The namespace scope (Enter in Namespaces), before the filter.
    pub scope: Option<&'a view::NsScope>,
    pub tree: bool,
    pub expanded: Option<SocketAddr>,
    pub limits: Thresholds,
    /// The furthest row position that must be in its final place.
    pub upto: usize,
    /// Reverse names for `host:NAME` (names on), shared: a sort on its own
    /// thread takes another handle, not a copy.
    pub names: Option<&'a std::sync::Arc<crate::model::filter::KnownNames>>,
    /// Changes whenever `names` does (`SocketsView::names_generation`).
    pub names_generation: u64,
}

fn time_wait(socket: &Socket) -> bool {
    socket.proto == Proto::Tcp && socket.state == TCP_TIME_WAIT
}

/// What `current` and `want` decide the order by (`Inputs`).
pub(super) fn inputs(current: &Sample, want: &Want) -> Inputs {
    (
        current.mono,
        want.sort,
        want.descending,
        want.filter.to_string(),
        want.tree,
        want.expanded,
        view::scope_id(want.scope),
        want.names_generation,
    )
}

/// How far a selection asked `upto` sorts: AHEAD past it (so the next steps
/// down need no selection, each a pass over every row), every row in the
/// tree.
fn sort_upto(len: usize, upto: usize, tree: bool) -> usize {
    if tree {
        len
    } else {
        upto.saturating_add(AHEAD).min(len)
    }
}

impl SocketRows {
    /// Rows for `current` as `want` asks, rebuilt only when an input
    /// changed, the sorted prefix extended when `want.upto` passes it.
    pub fn get(&mut self, current: &Sample, want: &Want) -> &[u32] {
        let inputs = inputs(current, want);
        if self.built_for.as_ref() != Some(&inputs) {
            self.rebuild(current, want, inputs);
        }
        self.grow(current, want.upto, want.limits);
        &self.rows
    }

    /// The order for new inputs: the unsorted rows (filtered and grouped
    /// again only when the sample, filter or expanded peer changed).
    fn rebuild(&mut self, current: &Sample, want: &Want, inputs: Inputs) {
        let base_for = (
            current.mono,
            want.filter.to_string(),
            want.expanded,
            view::scope_id(want.scope),
            want.names_generation,
        );
        if self.base_for.as_ref() != Some(&base_for) {
            self.build(current, want);
            self.base_for = Some(base_for);
        }
        if self.sample.as_ref().is_some_and(|s| s.mono != current.mono) {
            self.sample = None;
        }
        self.rows.clear();
        self.rows.extend_from_slice(&self.base);
        self.sorted = 0;
        self.built_for = Some(inputs);
    }

    /// Sorts the rows up to `upto` (and AHEAD past it) by the inputs they
    /// were built for; nothing when they are sorted that far.
    pub(super) fn grow(&mut self, current: &Sample, upto: usize, limits: Thresholds) {
        let Some((_, column, descending, _, tree, ..)) = self.built_for.clone() else {
            return;
        };
        let asked = if tree {
            self.rows.len()
        } else {
            upto.max(1).min(self.rows.len())
        };
        if asked <= self.sorted {
            return;
        }
        let upto = sort_upto(self.rows.len(), upto, tree);
        let sorter = Sorter {
            sockets: &current.sockets,
            column,
            descending,
            limits,
        };
        let rest = &mut self.rows[self.sorted..];
        let take = upto - self.sorted;
        if take < rest.len() {
            rest.select_nth_unstable_by(take - 1, |&a, &b| sorter.cmp(a, b));
        }
        rest[..take].sort_unstable_by(|&a, &b| sorter.cmp(a, b));
        self.sorted = upto;
        if tree {
            self.rows = group_by_owner(std::mem::take(&mut self.rows), &current.sockets);
        }
    }

    /// What the rows are ordered for (None before the first build).
    pub(super) fn built_for(&self) -> Option<&Inputs> {
        self.built_for.as_ref()
    }

    /// The rows a growth to `upto` would select among: every row not yet
    /// in its final place (0 when sorted that far already).
    pub(super) fn to_select(&self, upto: usize) -> usize {
        let tree = self.built_for.as_ref().is_some_and(|i| i.4);
        let asked = if tree {
            self.rows.len()
        } else {
            upto.max(1).min(self.rows.len())
        };
        if asked <= self.sorted {
            0
        } else {
            self.rows.len() - self.sorted
        }
    }

    /// How many rows the order holds before it is sorted (filtered and
    /// grouped): what a new sort selects among.
    pub(super) fn unsorted_len(&self) -> usize {
        self.base.len()
    }

    /// How many rows are in their final place.
    pub fn sorted(&self) -> usize {
        self.sorted
    }

    fn build(&mut self, current: &Sample, want: &Want) {
        let sockets = &current.sockets;
        let mut base = Vec::new();
        let mut groups = HashMap::new();
        if !want.filter.is_empty() {
            let filter = view::scoped_filter(want.scope, want.filter);
            base.extend((0..sockets.len() as u32).filter(|&i| {
                let socket = sockets.at(i as usize);
                let row = InSample::new(&socket, current);
                filter.matches(&row.with_names(want.names.map(|n| &**n)))
            }));
            self.base = Arc::new(base);
            self.groups = Arc::new(groups);
            return;
        }
        // Per peer: its first TIME_WAIT socket and how many it has.
        let mut peers: HashMap<SocketAddr, (u32, u32)> = HashMap::new();
        base.reserve(sockets.len());
        let scope = want.scope.map(|s| view::scoped_filter(Some(s), ""));
        for (i, socket) in sockets.iter().enumerate() {
            let i = i as u32;
            if scope
                .as_ref()
                .is_some_and(|s| !s.matches(&InSample::new(&socket, current)))
            {
                continue;
            }
            if time_wait(&socket) && want.expanded != Some(socket.peer) {
                peers.entry(socket.peer).or_insert((i, 0)).1 += 1;
            } else {
                base.push(i);
            }
        }
        for (first, count) in peers.into_values() {
            base.push(first);
            if count > 1 {
                groups.insert(first, count);
            }
        }
        self.base = Arc::new(base);
        self.groups = Arc::new(groups);
    }

    /// The sockets a row stands for: 1, or a TIME_WAIT group's count.
    pub fn count(&self, row: u32) -> u32 {
        self.groups.get(&row).copied().unwrap_or(1)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::TCP_ESTABLISHED;

    /// `n` sockets with spread ports and queues, every seventh TIME_WAIT
    /// to one of five peers (the socket_order tests use it too).
    pub(in crate::app) fn sample(n: u32) -> Sample {
        let sockets = (0..n)
            .map(|i| SocketSample {
                netns: 0,
                proto: Proto::Tcp,
                state: if i % 7 == 0 {
                    TCP_TIME_WAIT
                } else {
                    TCP_ESTABLISHED
                },
                local: format!("198.18.0.1:{}", 1000 + (i * 7919) % 50_000)
                    .parse()
                    .unwrap(),
                peer: format!("198.18.1.{}:80", i % 5).parse().unwrap(),
                recv_q: (i * 104_729) % 97,
                send_q: 0,
                uid: 0,
                inode: i,
                users: Default::default(),
                owner_denied: false,
                owner_pending: false,
                tcp: None,
                drops: None,
                rcvbuf: None,
                queue_streak: 0,
                v6only: false,
                limits: None,
            })
            .collect();
        Sample {
            mono: 1.0,
            sockets,
            ..Default::default()
        }
    }

    fn want(filter: &str, upto: usize) -> Want<'_> {
        Want {
            scope: None,
            sort: Column::RecvQ,
            descending: true,
            filter,
            tree: false,
            expanded: None,
            limits: Thresholds::DEFAULT,
            upto,
            names: None,
            names_generation: 0,
        }
    }

    #[test]
    fn the_sorted_prefix_is_the_top_of_the_full_sort_and_grows_on_demand() {
        let current = sample(20_000);
        let mut full = SocketRows::default();
        // Past the end: everything sorted.
        let all = full.get(&current, &want("", usize::MAX)).to_vec();
        let mut rows = SocketRows::default();
        rows.get(&current, &want("", 10));
        assert_eq!(rows.sorted(), 10 + AHEAD);
        assert_eq!(rows.rows[..rows.sorted()], all[..10 + AHEAD]);
        // Further down: the prefix grows, still the full sort's rows.
        rows.get(&current, &want("", 5000));
        assert_eq!(rows.sorted(), 5000 + AHEAD);
        assert_eq!(rows.rows[..rows.sorted()], all[..5000 + AHEAD]);
        assert_eq!(rows.rows.len(), all.len());
    }

    /// N turning names on (or off) changes what `host:NAME` matches in the
    /// same sample: the rows follow at once, not at the next sample.
    #[test]
    fn host_name_filters_again_when_the_names_change_within_a_sample() {
        let current = sample(700);
        let names: Arc<crate::model::filter::KnownNames> =
            Arc::new([("198.18.1.3".parse().unwrap(), "web.test".to_string())].into());
        let peer = |rows: &[u32]| -> Vec<String> {
            let mut peers: Vec<String> = rows
                .iter()
                .map(|&r| current.sockets.at(r as usize).peer.to_string())
                .collect();
            peers.dedup();
            peers
        };
        let mut rows = SocketRows::default();
        let off = want("host:web.test", usize::MAX);
        assert!(rows.get(&current, &off).is_empty());
        let on = Want {
            names: Some(&names),
            names_generation: 1,
            ..want("host:web.test", usize::MAX)
        };
        let shown = rows.get(&current, &on).to_vec();
        let expected = current
            .sockets
            .iter()
            .filter(|s| s.peer.to_string() == "198.18.1.3:80")
            .count();
        assert_eq!(
            (shown.len(), peer(&shown)),
            (expected, vec!["198.18.1.3:80".into()])
        );
        let off_again = Want {
            names_generation: 2,
            ..want("host:web.test", usize::MAX)
        };
        assert!(rows.get(&current, &off_again).is_empty());
    }

    #[test]
    fn time_wait_groups_count_every_socket_once() {
        let current = sample(20_000);
        let mut rows = SocketRows::default();
        let shown = rows.get(&current, &want("", 0)).to_vec();
        let waiting = current.sockets.iter().filter(|s| time_wait(s)).count();
        let counted: u32 = shown.iter().map(|&r| rows.count(r)).sum();
        assert_eq!(counted as usize, current.sockets.len());
        // Five peers, five TIME_WAIT rows.
        let groups = shown
            .iter()
            .filter(|&&r| time_wait(&current.sockets.at(r as usize)))
            .count();
        assert_eq!(groups, 5);
        assert_eq!(shown.len(), current.sockets.len() - waiting + 5);
        // A filter lists them one by one.
        let listed = rows.get(&current, &want("time", 0)).len();
        assert_eq!(listed, waiting);
    }
}
