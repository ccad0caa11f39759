//! Application state and input handling. No terminal I/O here: `run` owns the
//! terminal and the event loop; `ui` draws this state.

pub mod conntrack;
pub mod dns;
pub mod flow_detail;
pub mod flows;
pub mod history;
pub mod input;
pub mod interfaces;
pub mod keymap;
pub mod kill;
pub mod line_edit;
pub mod links;
pub mod load;
pub mod recording;
pub mod replay;
pub mod run;
pub mod search;
pub mod setup;
pub mod sockets;
pub mod table;
pub mod tabs;
pub mod tcp;

use crate::collect::{Demand, SamplerEvent};
use crate::findings::{Finding, Thresholds};
use crate::model::Sample;
use crate::model::conntrack::ConntrackEntry;
use crate::model::rates::{HostTotals, host_totals};
use conntrack::ConntrackView;
use history::History;
use interfaces::InterfacesView;
use keymap::{Action, Key, Scope};
use load::{LoadEvent, LoadView};
use ratatui::layout::{Position, Rect};
use sockets::SocketsView;
use std::sync::Arc;
use std::time::Duration;
use tabs::Tab;

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
    pub paused_at: Option<f64>,
    pub help: bool,
    /// First line of the help pane shown.
    pub help_scroll: u16,
    pub interfaces: InterfacesView,
    pub conntrack: ConntrackView,
    pub flows: flows::FlowsView,
    pub dns: dns::DnsView,
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
    pub finding_marks: Vec<f64>,
    /// The `t` prompt's text while the user types a time to jump to.
    pub time_prompt: Option<String>,
    /// Recording the live samples (--record, or R).
    pub recording: Option<crate::record::Recorder>,
    /// --record FILE: the first recording, and where R's new files go.
    pub record_path: Option<std::path::PathBuf>,
    /// Where a recording went, or why it stopped (see `recording`).
    pub notice: Option<recording::Notice>,
    /// What each recording closed this session saved, and the errors that
    /// stopped any: printed on exit.
    pub recorded: Vec<String>,
    pub record_failures: Vec<String>,
    /// When findings fire (the config's [thresholds]); set with set_thresholds.
    pub thresholds: Thresholds,
    /// The config's [columns]: which columns each table shows.
    pub columns: crate::config::Columns,
    /// The compact layout (--compact, or chosen by size at each draw).
    pub compact: bool,
    /// The findings list (`!`), while it is open.
    pub findings_list: Option<links::FindingsList>,
    /// F3's search prompt and text.
    pub search: search::Search,
    /// F9's y/N question, while it is asked.
    pub kill: Option<kill::KillPrompt>,
    /// One line about what the last F9, F3 or save did; the next key clears it.
    pub status: Option<String>,
    /// The setup screen (F2), while it is open.
    pub setup: Option<setup::Setup>,
    /// The settings the setup screen edits and saves: the config file as
    /// loaded, with its changes.
    pub config: crate::config::Config,
    /// Where the setup screen saves: --config, else the default path.
    pub config_path: Option<std::path::PathBuf>,
}

impl App {
    pub fn new(tab: Tab, interval: Duration, color: bool) -> Self {
        Self {
            tab,
            history: History::default(),
            paused_at: None,
            help: false,
            help_scroll: 0,
            interfaces: InterfacesView::default(),
            conntrack: ConntrackView::default(),
            flows: flows::FlowsView::default(),
            dns: dns::DnsView::default(),
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
            time_prompt: None,
            recording: None,
            record_path: None,
            notice: None,
            recorded: Vec::new(),
            record_failures: Vec::new(),
            thresholds: Thresholds::DEFAULT,
            columns: crate::config::Columns::default(),
            compact: false,
            findings_list: None,
            search: search::Search::default(),
            kill: None,
            status: None,
            setup: None,
            config: crate::config::Config::default(),
            config_path: None,
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
    /// is costly, so it runs only while the Conntrack tab is shown.
    pub fn publish_demand(&self) {
        self.demand
            .set_conntrack_entries(self.tab == Tab::Conntrack);
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
        let shown = self.shown_index()?;
        (0..=shown).rev().find_map(|index| {
            let sample = self.history.get(index)?;
            if sample.netns != self.history.get(shown)?.netns {
                return None;
            }
            sample
                .conntrack
                .entries
                .as_deref()
                .map(|entries| (entries, shown - index, sample.mono))
        })
    }

    /// The filter being typed in the current tab, if any.
    pub fn editing_filter(&self) -> Option<&str> {
        match self.tab {
            Tab::Interfaces if self.interfaces.editing_filter => Some(&self.interfaces.filter),
            Tab::Conntrack if self.conntrack.editing_filter => Some(&self.conntrack.filter),
            Tab::Sockets if self.sockets.editing_filter => Some(&self.sockets.filter),
            Tab::Flows if self.flows.editing_filter => Some(&self.flows.filter),
            _ => None,
        }
    }

    /// The current tab's applied filter, if any.
    pub fn filter(&self) -> Option<&str> {
        let filter = match self.tab {
            Tab::Interfaces => &self.interfaces.filter,
            Tab::Conntrack => &self.conntrack.filter,
            Tab::Sockets => &self.sockets.filter,
            Tab::Flows => &self.flows.filter,
            _ => return None,
        };
        (!filter.is_empty()).then_some(filter.as_str())
    }

    /// Takes a sampler event; returns whether the screen must be redrawn.
    pub fn on_sampler(&mut self, event: SamplerEvent) -> bool {
        match event {
            SamplerEvent::Sample(mut sample) => {
                let (capture, dns) = (self.flows.capture.as_ref(), self.dns.monitor.as_ref());
                crate::session::fill(&mut sample, capture, dns);
                self.sockets.record(&sample);
                self.refresh_flow_detail();
                let record_changed = self.record_sample(&mut sample);
                self.history.push(*sample);
                self.drop_old_sockets();
                let had_error = self.error.take().is_some();
                self.paused_at.is_none() || had_error || record_changed
            }
            SamplerEvent::Error(error) => {
                self.error = Some(error);
                true
            }
        }
    }

    /// Takes a key; returns whether the screen must be redrawn.
    pub fn on_key(&mut self, key: Key) -> bool {
        if let Some(redraw) = self.htop_key(key) {
            return redraw;
        }
        if self.time_prompt.is_some() {
            return self.edit_time_prompt(key);
        }
        if self.tab == Tab::Flows && self.flows.capture_edit.is_some() && !self.help {
            return self.flows.edit_capture_filter(key);
        }
        if self.tab == Tab::Dns && self.dns.prompt.is_some() && !self.help {
            return self.dns.edit_prompt(key);
        }
        if self.editing_filter().is_some() {
            return self.edit_filter(key);
        }
        if self.replay.is_some()
            && !self.help
            && let Some(binding) = keymap::lookup_replay(key)
        {
            return self.replay_action(binding.action, key);
        }
        if self.tab == Tab::Load && !self.help && self.load.modal() {
            return self.load.on_modal_key(key);
        }
        let overlay = self.help || self.findings_list.is_some();
        let in_load = self.tab == Tab::Load && !overlay;
        let Some(binding) = keymap::lookup_in(key, in_load) else {
            return false;
        };
        if self.findings_list.is_some() && !self.help {
            return self.findings_list_action(binding.action);
        }
        if self.help {
            // The help pane scrolls with the movement keys; render clamps.
            let page = 10;
            match binding.action {
                Action::Quit => self.quit = true,
                Action::Help | Action::Close => self.help = false,
                Action::Up => self.help_scroll = self.help_scroll.saturating_sub(1),
                Action::Down => self.help_scroll = self.help_scroll.saturating_add(1),
                Action::PageUp => self.help_scroll = self.help_scroll.saturating_sub(page),
                Action::PageDown => self.help_scroll = self.help_scroll.saturating_add(page),
                Action::Top => self.help_scroll = 0,
                Action::Bottom => self.help_scroll = u16::MAX,
                _ => return false,
            }
            return true;
        }
        if self.flow_detail_shown() {
            match binding.scope {
                Scope::View if binding.action == Action::Close => {
                    self.close_flow_detail();
                    return true;
                }
                Scope::View | Scope::FlowDetail => {
                    return self
                        .flow_detail
                        .as_mut()
                        .is_some_and(|d| d.handle(binding.action, key));
                }
                Scope::Flows => return false,
                _ => {}
            }
        }
        match binding.scope {
            Scope::Global => self.global(binding.action, key),
            Scope::FlowDetail => false,
            Scope::View if self.tab == Tab::Load => self.load.handle(binding.action, key),
            Scope::View => self.view_action(binding.action),
            Scope::Load => self.load.handle(binding.action, key),
            Scope::Replay => self.replay_action(binding.action, key),
            Scope::Flows if self.tab == Tab::Flows => self.flows_action(binding.action),
            Scope::Flows => false,
            Scope::Dns if self.tab == Tab::Dns => self.dns.start_prompt(),
            Scope::Dns => false,
            // htop_key handled these.
            Scope::Sockets | Scope::Setup => false,
        }
    }

    /// Takes a load run's report; returns whether the screen must be redrawn.
    pub fn on_load(&mut self, event: LoadEvent) -> bool {
        self.load.on_event(event)
    }

    fn global(&mut self, action: Action, key: Key) -> bool {
        match action {
            Action::Quit => self.quit = true,
            Action::Repaint => self.repaint = true,
            Action::Help => {
                self.help = true;
                self.help_scroll = 0;
            }
            Action::NextTab => self.tab = self.tab.next(),
            Action::PrevTab => self.tab = self.tab.previous(),
            Action::GotoTab => {
                if let Key::Char(digit @ '1'..='7') = key {
                    self.tab = tabs::ALL[digit as usize - '1' as usize];
                }
            }
            Action::Pause if self.replay.is_some() => return self.replay_action(action, key),
            Action::Record => return self.toggle_recording(),
            Action::Findings => {
                self.refresh_derived();
                self.findings_list = Some(links::FindingsList::default());
            }
            Action::Pause => {
                self.paused_at = match self.paused_at {
                    Some(_) => None,
                    None => self.shown().1.map(|s| s.mono),
                };
            }
            _ => return false,
        }
        true
    }

    /// The Flows tab's table rows for the shown sample.
    pub fn flow_rows(&self) -> Vec<flows::Row> {
        match self.shown() {
            (previous, Some(current)) => self.flows.rows(previous, current),
            _ => Vec::new(),
        }
    }

    /// The DNS tab's figures over the samples up to the shown one (of the
    /// shown sample's namespace).
    pub fn dns_summary(&mut self) -> &dns::DnsSummary {
        let shown = self.shown_index();
        let key = (
            shown.and_then(|i| self.history.get(i)).map(|s| s.mono),
            self.history.len(),
        );
        let history = &self.history;
        self.dns.summary(key, || {
            let Some(shown) = shown else {
                return Vec::new();
            };
            let netns = history.get(shown).map(|s| s.netns.clone());
            (0..=shown)
                .filter_map(|i| history.get(i))
                .filter(|s| Some(&s.netns) == netns.as_ref())
                .collect()
        })
    }

    fn flows_action(&mut self, action: Action) -> bool {
        let rows = self.flow_rows();
        if action == Action::Open && self.flows.grouping == flows::Grouping::Flow {
            let Some(row) = rows.get(self.flows.selected) else {
                return false;
            };
            let flow = self.shown().1.and_then(|s| {
                let capture = s.capture.as_ref()?;
                capture
                    .flows
                    .iter()
                    .find(|f| f.proto == row.proto && format!("{} > {}", f.src, f.dst) == row.key)
                    .cloned()
            });
            return match flow {
                Some(flow) => {
                    self.open_flow_detail(flow);
                    true
                }
                None => false,
            };
        }
        self.flows.handle(action, rows.len())
    }

    /// Whether the flow screen is what the body shows now.
    pub fn flow_detail_shown(&self) -> bool {
        !self.help
            && self
                .flow_detail
                .as_ref()
                .is_some_and(|d| d.origin == self.tab)
    }

    /// Opens a flow's screen over the current tab and starts watching the
    /// flow's packets (its recent ones first).
    pub fn open_flow_detail(&mut self, flow: crate::model::capture::FlowSample) {
        let (linktype, snaplen) = self
            .flows
            .capture
            .as_ref()
            .map_or((0, 0), |c| (c.linktype(), c.snaplen()));
        let payload = snaplen >= crate::capture::ring::PAYLOAD_SNAPLEN;
        let detail = flow_detail::FlowDetail::new(flow, self.tab, linktype, snaplen, payload);
        if let Some(capture) = &self.flows.capture {
            capture.watch(detail.key);
        }
        self.flow_detail = Some(detail);
        self.refresh_flow_detail();
    }

    pub fn close_flow_detail(&mut self) {
        if let Some(capture) = &self.flows.capture {
            capture.watch(None);
        }
        self.flow_detail = None;
    }

    /// Moves the watched flow's new packets into its screen; returns
    /// whether there were any.
    pub fn refresh_flow_detail(&mut self) -> bool {
        let (Some(detail), Some(capture)) = (self.flow_detail.as_mut(), &self.flows.capture) else {
            return false;
        };
        let (packets, missed) = capture.take_watched();
        detail.missed += missed;
        let changed = !packets.is_empty() || missed > 0;
        for p in packets {
            detail.push(p.ts, p.orig_len, &p.data);
        }
        changed
    }

    /// Starts the open flow screen again from the capture's recent packets
    /// (a replay seek rebuilt the capture), keeping the sub-view shown.
    pub fn rebuild_flow_detail(&mut self) {
        let Some(old) = self.flow_detail.take() else {
            return;
        };
        let (tab, view) = (self.tab, old.view);
        self.tab = old.origin;
        self.open_flow_detail(old.flow);
        self.tab = tab;
        if let Some(detail) = self.flow_detail.as_mut() {
            detail.view = view;
        }
    }

    /// Takes a batch of captured (or replayed) packets: into the Flows
    /// tab's list and into an open flow screen. Returns whether what is
    /// shown changed.
    pub fn on_capture(&mut self, event: crate::capture::live::CaptureEvent) -> bool {
        let listed = self.flows.on_capture(event) && self.tab == Tab::Flows;
        let watched = self.refresh_flow_detail() && self.flow_detail_shown();
        listed || watched
    }

    fn view_action(&mut self, action: Action) -> bool {
        if action == Action::Link {
            return self.follow_link();
        }
        if self.tab == Tab::Tcp {
            return self.tcp.handle(action);
        }
        if self.tab == Tab::Flows {
            return self.flows_action(action);
        }
        if self.tab == Tab::Dns {
            let rows = self.dns_summary().servers.len();
            return self.dns.handle(action, rows);
        }
        if self.tab == Tab::Conntrack {
            let mut view = std::mem::take(&mut self.conntrack);
            let entries = self.conntrack_entries().map_or(&[][..], |(e, _)| e);
            let changed = view.handle(action, entries);
            self.conntrack = view;
            return changed;
        }
        let Some(index) = self.shown_index() else {
            return false;
        };
        let (previous, current) = self.history.pair(index);
        let Some(current) = current else {
            return false;
        };
        if self.tab == Tab::Sockets
            && action == Action::Open
            && !self.sockets.detail
            && let Some(flow) = self.sockets.selection(current).and_then(|socket| {
                let flows = &current.capture.as_ref()?.flows;
                crate::model::capture::flow_of_socket(flows, socket).cloned()
            })
        {
            self.open_flow_detail(flow);
            return true;
        }
        match self.tab {
            Tab::Interfaces => self.interfaces.handle(action, previous, current),
            Tab::Sockets => self.sockets.handle(action, current),
            _ => false,
        }
    }

    /// Frees old samples' socket lists, keeping the paused pair's.
    fn drop_old_sockets(&mut self) {
        let keep = self.paused_at.and_then(|mono| {
            let index = self.history.index_at(mono)?;
            let (previous, current) = self.history.pair(index);
            Some((previous.map(|p| p.mono), current.map(|c| c.mono)))
        });
        self.history.drop_old_sockets(|mono| {
            keep.is_some_and(|(previous, current)| previous == Some(mono) || current == Some(mono))
        });
    }

    fn edit_filter(&mut self, key: Key) -> bool {
        let (filter, editing) = match self.tab {
            Tab::Conntrack => (
                &mut self.conntrack.filter,
                &mut self.conntrack.editing_filter,
            ),
            Tab::Sockets => (&mut self.sockets.filter, &mut self.sockets.editing_filter),
            Tab::Flows => (&mut self.flows.filter, &mut self.flows.editing_filter),
            _ => (
                &mut self.interfaces.filter,
                &mut self.interfaces.editing_filter,
            ),
        };
        match key {
            key if line_edit::edit(filter, key) => {}
            Key::Enter => *editing = false,
            Key::Esc => {
                filter.clear();
                *editing = false;
            }
            _ => return false,
        }
        true
    }

    /// A left click: a tab in the tab bar, or a row in the table.
    pub fn on_click(&mut self, column: u16, row: u16) -> bool {
        let at = Position::new(column, row);
        if let Some((_, tab)) = self.hits.tabs.iter().find(|(rect, _)| rect.contains(at)) {
            self.tab = *tab;
            self.help = false;
            return true;
        }
        let Some((rect, first)) = self.hits.rows else {
            return false;
        };
        if !rect.contains(at) {
            return false;
        }
        let index_in_view = |first: usize| first + usize::from(row - rect.y);
        if self.tab == Tab::Conntrack {
            let mut view = std::mem::take(&mut self.conntrack);
            if let Some((entries, _)) = self.conntrack_entries() {
                view.select_row(entries, index_in_view(first));
            }
            self.conntrack = view;
            return true;
        }
        if self.tab == Tab::Sockets && !self.sockets.detail {
            let Some(shown) = self.shown_index() else {
                return false;
            };
            let Some(current) = self.history.get(shown) else {
                return false;
            };
            self.sockets.select_row(current, index_in_view(first));
            return true;
        }
        if self.tab != Tab::Interfaces || self.interfaces.detail {
            return false;
        }
        let Some(shown) = self.shown_index() else {
            return false;
        };
        let (previous, current) = self.history.pair(shown);
        let Some(current) = current else {
            return false;
        };
        let index = first + usize::from(row - rect.y);
        self.interfaces.select_row(previous, current, index);
        true
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
