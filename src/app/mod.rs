//! Application state and input handling. No terminal I/O here: `run` owns the
//! terminal and the event loop; `ui` draws this state.
//!
//! Each tab's state is its own struct (InterfacesView, SocketsView, ...)
//! implementing `view::TabView`: its keys, its prompt, its filter, F3's
//! search, a click on a row. What is open over the tabs (help, findings
//! list, setup, F9's y/N, F3's line, replay's time prompt) is a stack in
//! `overlay`, which also routes the keys: the top overlay, the tab's own
//! prompt, the replay keys, the global keys, then the flow screen or the
//! tab. The key table is `keymap`.

pub mod closed;
pub mod conntrack;
pub mod conntrack_order;
pub mod dns;
pub mod drops;
pub mod failed;
pub mod flow_detail;
mod flow_screen;
pub mod flows;
pub mod format;
mod freeze;
pub mod history;
pub mod input;
pub mod interfaces;
pub mod keymap;
pub mod kill;
pub mod line_edit;
pub mod links;
pub mod load;
pub mod names;
pub mod namespaces;
pub mod overlay;
pub mod path;
pub mod prepare;
pub mod processes;
pub mod recording;
pub mod replay;
pub mod search;
pub mod setup;
pub mod socket_columns;
pub mod socket_order;
pub mod socket_rows;
pub mod socket_trails;
pub mod sockets;
pub mod table;
pub mod tabs;
pub mod tcp;
pub mod view;

use crate::collect::{Demand, SamplerEvent};
use crate::findings::{Finding, Thresholds};
use crate::model::Sample;
use crate::model::conntrack::ConntrackEntry;
use crate::model::rates::{HostTotals, host_totals};
use conntrack::ConntrackView;
use history::History;
use interfaces::InterfacesView;
use load::{LoadEvent, LoadView};
use ratatui::layout::Rect;
use sockets::SocketsView;
use std::sync::Arc;
use std::time::Duration;
use tabs::Tab;
use tokio::sync::mpsc::UnboundedReceiver;
use view::{Shown, TabView};

/// Screen regions from the last draw, for mouse clicks.
#[derive(Debug, Default, Clone)]
pub struct HitMap {
    pub tabs: Vec<(Rect, Tab)>,
    /// The table's data rows and the index of the first one shown.
    pub rows: Option<(Rect, usize)>,
}

/// What the header shows about the shown sample, computed once per sample
/// rather than once per frame.
#[derive(Debug, Default)]
pub struct Derived {
    /// (shown, previous) sample times this was computed for.
    key: (Option<f64>, Option<f64>),
    pub findings: Vec<Finding>,
    pub totals: Option<HostTotals>,
}

pub struct App {
    pub tab: Tab,
    pub history: History,
    /// The frozen sample's monotonic time while paused.
    paused_at: Option<f64>,
    /// When the sampler's newest sample arrived (live): the header says
    /// "stale" once that is two intervals ago. (Arrival, not the sample's
    /// own clock: the sampler sends each sample the moment it is whole,
    /// and a sample built elsewhere, a test's, has a clock of its own.)
    sampled_at: Option<std::time::Instant>,
    pub interfaces: InterfacesView,
    pub conntrack: ConntrackView,
    pub flows: flows::FlowsView,
    pub dns: dns::DnsView,
    pub drops: drops::DropsView,
    pub processes: processes::ProcessesView,
    pub namespaces: namespaces::NamespacesView,
    /// Enter in Namespaces: every tab shows this namespace's rows only.
    scope: Option<view::NsScope>,
    /// One flow's screen, open over the tab it was opened from.
    pub flow_detail: Option<flow_detail::FlowDetail>,
    /// Shared with the sampler: what the open tab needs collected.
    pub demand: Arc<Demand>,
    pub sockets: SocketsView,
    pub tcp: tcp::TcpView,
    pub load: LoadView,
    pub color: bool,
    pub interval: Duration,
    pub hostname: String,
    /// Last sampler error, shown until the next good sample.
    pub error: Option<String>,
    pub hits: HitMap,
    pub derived: Derived,
    pub quit: bool,
    /// Ctrl-L: the terminal is cleared before the next draw.
    pub repaint: bool,
    /// Replaying a recording: the Source of samples instead of the sampler.
    pub replay: Option<crate::record::player::Player>,
    /// Replay: the times of the samples where a finding starts to show,
    /// over the whole recording (the timeline's ! marks; { and } go there).
    finding_marks: Vec<f64>,
    /// Recording the live samples (--record, or R).
    pub recording: Option<crate::record::Recorder>,
    /// --record FILE: the first recording, and where R's new files go.
    pub record_path: Option<std::path::PathBuf>,
    /// --on-finding: told of every live sample.
    pub hook: Option<crate::notify::FindingHook>,
    /// Where a recording went, or why it stopped (see `recording`).
    notice: Option<recording::Notice>,
    /// B: the incident bundle being written (see `freeze`).
    freezing: Option<freeze::Freezing>,
    /// What each recording closed this session saved, and the errors that
    /// stopped any: printed on exit.
    recorded: Vec<String>,
    record_failures: Vec<String>,
    /// When findings fire (the config's [thresholds]); set with set_thresholds.
    thresholds: Thresholds,
    /// The config's [columns]: which columns each table shows.
    pub columns: crate::config::Columns,
    /// The compact layout (--compact, or chosen by size at each draw).
    pub compact: bool,
    /// F3's search text, kept for the next F3.
    search: search::Search,
    /// What is open over the tabs, bottom first (see overlay.rs).
    overlays: Vec<overlay::Overlay>,
    /// One line about what the last F9, F3 or save did; the next key clears it.
    status: Option<String>,
    /// The settings the setup screen edits and saves: the config file as
    /// loaded, with its changes.
    pub config: crate::config::Config,
    /// Where the setup screen saves: --config, else the default path.
    pub config_path: Option<std::path::PathBuf>,
    /// The namespace the Path view probes from (the watched one); None:
    /// netlens' own.
    /// N / --resolve: reverse names and service names (see names.rs).
    pub names: names::Names,
    pub probe_from: Option<crate::collect::netns::Target>,
    /// Live: the thread preparing new samples (see `prepare`); None: they
    /// are prepared inline.
    preparer: Option<prepare::Worker>,
    /// The newest sample taken from the sampler, prepared or not yet: the
    /// next one's previous.
    submitted: Option<Arc<Sample>>,
}

impl App {
    pub fn new(tab: Tab, interval: Duration, color: bool) -> Self {
        Self {
            tab,
            history: History::default(),
            paused_at: None,
            sampled_at: None,
            interfaces: InterfacesView::default(),
            conntrack: ConntrackView::default(),
            flows: flows::FlowsView::default(),
            dns: dns::DnsView::default(),
            drops: drops::DropsView::default(),
            processes: processes::ProcessesView::default(),
            namespaces: namespaces::NamespacesView::default(),
            scope: None,
            flow_detail: None,
            demand: Arc::default(),
            sockets: SocketsView::default(),
            tcp: tcp::TcpView::default(),
            load: LoadView::default(),
            color,
            interval,
            hostname: hostname(),
            error: None,
            hits: HitMap::default(),
            derived: Derived::default(),
            quit: false,
            repaint: false,
            replay: None,
            finding_marks: Vec::new(),
            recording: None,
            record_path: None,
            hook: None,
            notice: None,
            freezing: None,
            recorded: Vec::new(),
            record_failures: Vec::new(),
            thresholds: Thresholds::DEFAULT,
            columns: crate::config::Columns::default(),
            compact: false,
            search: search::Search::default(),
            overlays: Vec::new(),
            status: None,
            config: crate::config::Config::default(),
            config_path: None,
            probe_from: None,
            names: names::Names::default(),
            preparer: None,
            submitted: None,
        }
    }

    /// Uses `limits` for the findings and the Sockets tab's STUCK marks.
    pub fn set_thresholds(&mut self, limits: Thresholds) {
        self.thresholds = limits;
        self.sockets.thresholds = limits;
        self.history = History::new(limits);
        self.derived = Derived::default();
    }

    /// Index in history of the sample on screen: the newest, or the frozen one.
    pub fn shown_index(&self) -> Option<usize> {
        match self.paused_at {
            Some(mono) => self
                .history
                .index_at(mono)
                .or(Some(0))
                .filter(|_| !self.history.is_empty()),
            None => self.history.len().checked_sub(1),
        }
    }

    /// The sample on screen and the one before it (for rates).
    pub fn shown(&self) -> (Option<&Sample>, Option<&Sample>) {
        match self.shown_index() {
            Some(index) => self.history.pair(index),
            None => (None, None),
        }
    }

    /// Recomputes `derived` when the shown sample changed.
    pub fn refresh_derived(&mut self) {
        let (previous, current) = self.shown();
        let key = (current.map(|c| c.mono), previous.map(|p| p.mono));
        if self.derived.key == key && key.0.is_some() {
            return;
        }
        let findings = self
            .shown_index()
            .map(|index| self.history.findings(index).to_vec())
            .unwrap_or_default();
        let totals = current.and_then(|c| host_totals(previous, c));
        self.derived = Derived {
            key,
            findings,
            totals,
        };
    }

    /// Tells the sampler what the open tab needs: the conntrack entry dump
    /// is costly, so it runs only while the Conntrack tab is shown, or the
    /// Flows tab or a flow screen (each flow's NAT) while the table is
    /// small enough (`NAT_DUMP_MAX_ENTRIES`).
    pub fn publish_demand(&mut self) {
        let entries = self.history.newest().and_then(|s| s.conntrack.count);
        let small = entries.is_some_and(|n| n <= crate::model::conntrack::NAT_DUMP_MAX_ENTRIES);
        let nat = small && (self.tab == Tab::Flows || self.flow_detail.is_some());
        self.demand
            .set_conntrack_entries(self.tab == Tab::Conntrack || nat);
        self.demand.set_firewall_rules(self.tab == Tab::Drops);
        // The tab's order holds its dump's sample: let it go when closed.
        if self.tab != Tab::Conntrack && self.conntrack.order.holds() {
            self.conntrack.order.clear();
        }
        if let Some(capture) = &self.flows.capture {
            capture.set_lines(self.tab == Tab::Flows);
        }
    }

    /// The newest conntrack entry list at or before the shown sample (entries
    /// are dumped at most once a second, so not every sample has them), and
    /// how many samples older than the shown one it is.
    pub fn conntrack_entries(&self) -> Option<(&[ConntrackEntry], usize)> {
        self.conntrack_entries_at()
            .map(|(entries, age, _)| (entries, age))
    }

    /// As `conntrack_entries`, with the monotonic time of the dump.
    pub fn conntrack_entries_at(&self) -> Option<(&[ConntrackEntry], usize, f64)> {
        self.shown_view().conntrack_entries_at()
    }

    /// The samples on screen, as the tabs take them.
    pub fn shown_view(&self) -> Shown<'_> {
        Shown {
            history: &self.history,
            index: self.shown_index(),
        }
    }

    /// The open tab's state.
    pub fn view(&self) -> &dyn TabView {
        match self.tab {
            Tab::Interfaces => &self.interfaces,
            Tab::Sockets => &self.sockets,
            Tab::Tcp => &self.tcp,
            Tab::Conntrack => &self.conntrack,
            Tab::Dns => &self.dns,
            Tab::Flows => &self.flows,
            Tab::Load => &self.load,
            Tab::Drops => &self.drops,
            Tab::Processes => &self.processes,
            Tab::Namespaces => &self.namespaces,
        }
    }

    fn view_mut(&mut self) -> &mut dyn TabView {
        self.view_and_shown().0
    }

    /// The open tab's state, and the samples it shows.
    fn view_and_shown(&mut self) -> (&mut dyn TabView, Shown<'_>) {
        let shown = Shown {
            index: self.shown_index(),
            history: &self.history,
        };
        let view: &mut dyn TabView = match self.tab {
            Tab::Interfaces => &mut self.interfaces,
            Tab::Sockets => &mut self.sockets,
            Tab::Tcp => &mut self.tcp,
            Tab::Conntrack => &mut self.conntrack,
            Tab::Dns => &mut self.dns,
            Tab::Flows => &mut self.flows,
            Tab::Load => &mut self.load,
            Tab::Drops => &mut self.drops,
            Tab::Processes => &mut self.processes,
            Tab::Namespaces => &mut self.namespaces,
        };
        (view, shown)
    }

    /// The namespace every tab is scoped to, if any.
    pub fn scope(&self) -> Option<&view::NsScope> {
        self.scope.as_ref()
    }

    /// Scopes every table tab to one namespace (None: all again); whether
    /// that changed anything. Each view holds a copy: its row cache keys on
    /// it. The rows are the namespace's by `ns:` matched whole, before the
    /// tab's own filter.
    pub fn set_scope(&mut self, scope: Option<view::NsScope>) -> bool {
        if self.scope == scope {
            return false;
        }
        self.interfaces.scope = scope.clone();
        self.sockets.scope = scope.clone();
        self.processes.scope = scope.clone();
        self.flows.scope = scope.clone();
        self.conntrack.scope = scope.clone();
        self.scope = scope;
        true
    }

    /// The filter being typed in the current tab, if any.
    pub fn editing_filter(&self) -> Option<&str> {
        self.view().editing_filter()
    }

    /// The current tab's applied filter, if any.
    pub fn filter(&self) -> Option<&str> {
        self.view().filter()
    }

    /// Why the filter being typed does not parse (the table is unfiltered
    /// meanwhile, and Enter keeps the line open).
    pub fn filter_error(&self) -> Option<crate::model::filter::FilterError> {
        crate::model::filter::Expr::parse(self.editing_filter()?).err()
    }

    /// Whether the display is paused (live: `p`).
    pub fn paused(&self) -> bool {
        self.paused_at.is_some()
    }

    /// The outcome of the last F9, F3 or save, until the next key.
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// Where a recording went, or why it stopped.
    pub fn notice(&self) -> Option<&recording::Notice> {
        self.notice.as_ref()
    }

    /// When findings fire (the config's [thresholds]).
    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// Replay: the times where a finding starts (the timeline's ! marks).
    pub fn finding_marks(&self) -> &[f64] {
        &self.finding_marks
    }

    /// Takes a sampler event; returns whether the screen must be redrawn.
    /// With `start_preparing`, a sample is sent to the worker and shows once
    /// `take_prepared` takes it back; without, it is prepared here.
    pub fn on_sampler(&mut self, event: SamplerEvent) -> bool {
        match event {
            SamplerEvent::Sample(mut sample) => {
                self.sampled_at = Some(std::time::Instant::now());
                self.share_names();
                let (capture, dns) = (self.flows.capture.as_ref(), self.dns.monitor.as_ref());
                crate::session::fill(&mut sample, capture, dns);
                // The Flows tab's packet lines move with each sample.
                if let Some(lines) = capture.map(|c| c.take_lines()) {
                    self.flows.on_capture(lines);
                }
                self.refresh_flow_detail();
                let record_changed = self.record_sample(&mut sample) | self.poll_freeze();
                let hook_failed = self.notify_hook(&sample);
                if let Some(before) = &self.submitted {
                    sample.share_unchanged(before);
                }
                let sample = Arc::new(*sample);
                let previous = self.submitted.replace(Arc::clone(&sample));
                let ask = self.ask();
                let shown = match &self.preparer {
                    Some(worker)
                        if worker.send(previous.clone(), Arc::clone(&sample), ask.clone()) =>
                    {
                        false
                    }
                    _ => {
                        self.preparer = None;
                        let prepared = prepare::prepare(previous.as_deref(), sample, &ask);
                        self.take_prepared(prepared)
                    }
                };
                shown || record_changed || hook_failed
            }
            SamplerEvent::Error(error) => {
                self.error = Some(error);
                true
            }
        }
    }

    /// Gives the Sockets, Flows and Processes filters the reverse names
    /// known now (N on), or none (N off), for `host:NAME`: with each sample
    /// (names arrive between samples) and on N.
    pub fn share_names(&mut self) {
        let known = self.names.known().map(Arc::new);
        if self.sockets.names != known {
            self.sockets.names_generation += 1;
        }
        self.sockets.names = known.clone();
        self.flows.names = known.clone();
        self.processes.names = known;
    }

    /// Starts the worker that prepares new samples off the UI thread; the
    /// event loop hands what comes out of the receiver to `take_prepared`.
    pub fn start_preparing(&mut self) -> std::io::Result<UnboundedReceiver<prepare::Prepared>> {
        let (worker, prepared) = prepare::Worker::start()?;
        self.preparer = Some(worker);
        self.conntrack.order.background = true;
        self.sockets.rows.background = true;
        Ok(prepared)
    }

    /// What a new sample is prepared with: the Sockets tab's order only
    /// when it will show the sample (live, on that tab).
    fn ask(&self) -> prepare::Ask {
        let rows = (self.tab == Tab::Sockets
            && self.sockets.listing == sockets::Listing::Open
            && !self.paused())
        .then(|| self.sockets.want());
        prepare::Ask {
            limits: self.thresholds,
            trail_keys: self.sockets.trail_keys(),
            rows,
        }
    }

    /// Takes a prepared sample into the history; returns whether the
    /// screen must be redrawn. Cheap at any socket count: the passes over
    /// the sockets were made by `prepare`.
    pub fn take_prepared(&mut self, prepared: prepare::Prepared) -> bool {
        self.sockets
            .record_candidates(&prepared.sample, &prepared.trail_rows);
        match prepared.rows.filter(|_| !self.paused()) {
            Some(rows) => self.sockets.install_rows(rows),
            // Not shown: the rows must not keep the older sample's sockets.
            None if !self.paused() => self.sockets.rows.forget_sample(),
            None => {}
        }
        self.history
            .push_evaluated(prepared.sample, prepared.raised);
        self.drop_old_sockets();
        let had_error = self.error.take().is_some();
        self.paused_at.is_none() || had_error
    }

    /// --on-finding sees every live sample, paused or not; a failed command
    /// shows in the status line. Returns whether it did.
    fn notify_hook(&mut self, sample: &Sample) -> bool {
        let Some(hook) = self.hook.as_mut() else {
            return false;
        };
        hook.observe(self.submitted.as_deref(), sample);
        match hook.take_failure() {
            Some(line) => {
                self.status = Some(line);
                true
            }
            None => false,
        }
    }

    /// Takes a load run's report; returns whether the screen must be redrawn.
    pub fn on_load(&mut self, event: LoadEvent) -> bool {
        self.load.on_event(event)
    }

    /// The Flows tab's table rows for the shown sample.
    pub fn flow_rows(&self) -> Vec<flows::Row> {
        self.flows.rows_of(&self.shown_view())
    }

    /// The DNS tab's figures over the samples up to the shown one (of the
    /// shown sample's namespace).
    pub fn dns_summary(&mut self) -> &dns::DnsSummary {
        let shown = Shown {
            index: self.shown_index(),
            history: &self.history,
        };
        self.dns.summary_of(&shown)
    }

    /// Frees old samples' socket lists, keeping the paused pair's, and the
    /// shown sample's previous one only where rates per socket are drawn
    /// from the two (the Processes tab): elsewhere it is a whole table
    /// (~240 MB at a million sockets) kept for nothing, the findings having
    /// been evaluated with it by then. Switching to Processes shows its
    /// rates from the next sample on, as after the first one.
    fn drop_old_sockets(&mut self) {
        let full = if self.tab == Tab::Processes { 2 } else { 1 };
        let keep = self.paused_at.and_then(|mono| {
            let index = self.history.index_at(mono)?;
            let (previous, current) = self.history.pair(index);
            Some((previous.map(|p| p.mono), current.map(|c| c.mono)))
        });
        self.history.drop_old_sockets(full, |mono| {
            keep.is_some_and(|(previous, current)| previous == Some(mono) || current == Some(mono))
        });
    }
}

/// The first visible row of a list `height` rows tall, moved as little as
/// possible so that `selected` stays in view (every table view uses this).
pub fn scroll_offset(offset: usize, selected: usize, height: usize) -> usize {
    let height = height.max(1);
    if selected < offset {
        selected
    } else if selected >= offset + height {
        selected + 1 - height
    } else {
        offset
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}
