//! The overlay stack: what is open over the tabs. The top overlay gets
//! every key first; it may pass a key on (to the global keys and the tab
//! below) or close itself (Esc). The key routing is here too:
//!
//! 1. the top overlay (help, findings list, setup, F9's y/N, F3's search
//!    line, replay's time prompt);
//! 2. a prompt of the open tab's own (its `/` filter line, the capture
//!    filter, a DNS probe, the load form's field or y/N): it belongs to its
//!    tab and waits there while another tab is shown;
//! 3. the replay keys, while replaying;
//! 4. the global keys;
//! 5. the flow screen, when it is open over this tab, else the tab.

use super::keymap::{self, Action, Key, Scope};
use super::kill::KillPrompt;
use super::links::FindingsList;
use super::setup::Setup;
use super::view::Reply;
use super::{App, search};

pub enum Overlay {
    /// The key list (`?`, F1), scrolled to its `scroll`th line.
    Help { scroll: u16 },
    /// The findings list (`!`); Enter goes to a finding's evidence.
    Findings(FindingsList),
    /// The setup screen (F2).
    Setup(Setup),
    /// F9's y/N question.
    Kill(KillPrompt),
    /// F3's search line (its text stays for the next F3: App::search).
    Search,
    /// Replay's `t` prompt: the time being typed.
    Time(String),
    /// The Path view (`t` on a Sockets or Flows row); its prober runs
    /// until the overlay is dropped.
    Path(Box<super::path::PathView>),
}

/// What an overlay did with a key.
pub(super) enum Keyed {
    /// Taken; whether the screen must be redrawn.
    Done(bool),
    /// Not the overlay's: handled as if it were not there (it may have
    /// closed itself, then `redraw` is set).
    Pass { redraw: bool },
}

impl App {
    /// The overlay drawn over the body (help, findings, setup), topmost.
    pub fn screen_overlay(&self) -> Option<&Overlay> {
        self.overlays.iter().rev().find(|o| {
            matches!(
                o,
                Overlay::Help { .. } | Overlay::Findings(_) | Overlay::Setup(_) | Overlay::Path(_)
            )
        })
    }

    /// The help pane's first line shown, while it is open.
    pub fn help_scroll(&mut self) -> Option<&mut u16> {
        self.overlays.iter_mut().rev().find_map(|o| match o {
            Overlay::Help { scroll } => Some(scroll),
            _ => None,
        })
    }

    pub fn help_open(&self) -> bool {
        self.overlays
            .iter()
            .any(|o| matches!(o, Overlay::Help { .. }))
    }

    /// The findings list's state, while it is open.
    pub fn findings_list(&self) -> Option<&FindingsList> {
        self.overlays.iter().find_map(|o| match o {
            Overlay::Findings(list) => Some(list),
            _ => None,
        })
    }

    /// The setup screen's state, while it is open.
    pub fn setup(&self) -> Option<&Setup> {
        self.overlays.iter().find_map(|o| match o {
            Overlay::Setup(setup) => Some(setup),
            _ => None,
        })
    }

    pub fn setup_mut(&mut self) -> Option<&mut Setup> {
        self.overlays.iter_mut().find_map(|o| match o {
            Overlay::Setup(setup) => Some(setup),
            _ => None,
        })
    }

    /// F9's question, while it is asked.
    pub fn kill_prompt(&self) -> Option<&KillPrompt> {
        match self.overlays.last() {
            Some(Overlay::Kill(prompt)) => Some(prompt),
            _ => None,
        }
    }

    /// Whether F3's search line is open.
    pub fn searching(&self) -> bool {
        matches!(self.overlays.last(), Some(Overlay::Search))
    }

    /// The replay time prompt's text, while it is typed.
    pub fn time_prompt(&self) -> Option<&str> {
        self.overlays.iter().find_map(|o| match o {
            Overlay::Time(text) => Some(text.as_str()),
            _ => None,
        })
    }

    pub(super) fn close_help(&mut self) {
        self.overlays.retain(|o| !matches!(o, Overlay::Help { .. }));
    }

    /// Takes a key; returns whether the screen must be redrawn.
    pub fn on_key(&mut self, key: Key) -> bool {
        // Any key clears the last kill's, search's or save's outcome, but
        // the setup screen and the y/N question keep theirs under them.
        let answering = matches!(
            self.overlays.last(),
            Some(Overlay::Setup(_) | Overlay::Kill(_))
        );
        let cleared = !answering && self.status.take().is_some();
        let redraw = match self.overlay_key(key) {
            Keyed::Done(redraw) => redraw,
            Keyed::Pass { redraw } => self.key_below_overlays(key) || redraw,
        };
        redraw || cleared
    }

    /// Gives the key to the top overlay, which stays open unless its key
    /// closed it.
    fn overlay_key(&mut self, key: Key) -> Keyed {
        let Some(top) = self.overlays.pop() else {
            return Keyed::Pass { redraw: false };
        };
        let (keep, keyed) = match top {
            Overlay::Help { scroll } => help_key(scroll, key, &mut self.quit),
            Overlay::Findings(list) => self.findings_key(list, key),
            Overlay::Setup(setup) => (self.setup_key(setup, key), Keyed::Done(true)),
            Overlay::Kill(prompt) => {
                self.answer_kill(prompt, key);
                (None, Keyed::Done(true))
            }
            Overlay::Search if matches!(key, Key::Enter | Key::Esc) => (None, Keyed::Done(true)),
            Overlay::Search if self.search_key(key) => (Some(Overlay::Search), Keyed::Done(true)),
            // The key ended the search: handled as usual, and the prompt's
            // line goes, so redraw.
            Overlay::Search => (None, Keyed::Pass { redraw: true }),
            Overlay::Time(text) => self.time_prompt_key(text, key),
            Overlay::Path(view) => match keymap::lookup(key).map(|b| b.action) {
                // Dropping the view stops its prober.
                Some(Action::Close) => (None, Keyed::Done(true)),
                Some(Action::Quit) => {
                    self.quit = true;
                    (None, Keyed::Done(true))
                }
                _ => (Some(Overlay::Path(view)), Keyed::Done(false)),
            },
        };
        if let Some(overlay) = keep {
            self.overlays.push(overlay);
        }
        keyed
    }

    fn key_below_overlays(&mut self, key: Key) -> bool {
        if let Some(redraw) = self.view_mut().prompt_key(key) {
            return redraw;
        }
        if self.replay.is_some()
            && let Some(binding) = keymap::lookup_replay(key)
        {
            return self.replay_action(binding.action, key);
        }
        let Some(binding) = keymap::lookup_in(key, self.view().scope()) else {
            return false;
        };
        if binding.scope == Scope::Global {
            return self.global(binding.action, key);
        }
        if self.flow_detail_shown() {
            return self.flow_screen_action(binding.scope, binding.action, key);
        }
        self.tab_action(binding.scope, binding.action, key)
    }

    fn global(&mut self, action: Action, key: Key) -> bool {
        match action {
            Action::Quit => self.quit = true,
            Action::Repaint => self.repaint = true,
            Action::Help => self.overlays.push(Overlay::Help { scroll: 0 }),
            Action::NextTab => self.tab = self.tab.next(),
            Action::PrevTab => self.tab = self.tab.previous(),
            Action::GotoTab => {
                if let Some(tab) = key_digit(key).and_then(|d| super::tabs::ALL.get(d - 1)) {
                    self.tab = *tab;
                }
            }
            Action::Pause if self.replay.is_some() => return self.replay_action(action, key),
            Action::Pause => {
                self.paused_at = match self.paused_at {
                    Some(_) => None,
                    None => self.shown().1.map(|s| s.mono),
                };
            }
            Action::Record => return self.toggle_recording(),
            Action::Freeze => return self.freeze(),
            Action::Names => {
                self.names.toggle();
                self.share_names();
                self.status = Some(match self.names.status() {
                    Some(status) => status,
                    None => "names off: addresses and ports as numbers".into(),
                });
            }
            Action::Findings => {
                self.refresh_derived();
                self.overlays
                    .push(Overlay::Findings(FindingsList::default()));
            }
            Action::Setup => self.overlays.push(Overlay::Setup(Setup::default())),
            Action::ClearScope => return self.set_scope(None),
            _ => return false,
        }
        true
    }

    /// A key of the open tab: the View scope's or the tab's own.
    fn tab_action(&mut self, scope: Scope, action: Action, key: Key) -> bool {
        let (view, shown) = self.view_and_shown();
        if scope != Scope::View && scope != view.scope() {
            return false;
        }
        // The Load tab's form has no rows to search.
        let form = view.scope() == Scope::Load;
        if action == Action::Search && !form {
            self.start_search();
            return true;
        }
        match view.on_action(action, key, &shown) {
            // Esc with nothing of the tab's own to close ends the scope.
            Reply::Redraw(false) if action == Action::Close => self.set_scope(None),
            Reply::Redraw(redraw) => redraw,
            Reply::Scope(scope) => self.set_scope(Some(scope)),
            Reply::OpenFlow(flow) => {
                self.open_flow_detail(flow);
                true
            }
            Reply::Kill(socket) => {
                self.ask_kill(socket);
                true
            }
            Reply::Link(link) => {
                self.follow_link(link);
                true
            }
            Reply::Trace(dest) => {
                self.open_path(dest);
                true
            }
        }
    }

    /// The findings list takes the movement keys, Enter and Esc; while
    /// replaying, the time keys still move in time under it.
    fn findings_key(&mut self, mut list: FindingsList, key: Key) -> (Option<Overlay>, Keyed) {
        if self.replay.is_some() && keymap::lookup_replay(key).is_some() {
            return (Some(Overlay::Findings(list)), Keyed::Pass { redraw: false });
        }
        let Some(binding) = keymap::lookup(key) else {
            return (Some(Overlay::Findings(list)), Keyed::Done(false));
        };
        let last = self.derived.findings.len().saturating_sub(1);
        let selected = &mut list.selected;
        match binding.action {
            Action::Quit => self.quit = true,
            Action::Findings | Action::Close => return (None, Keyed::Done(true)),
            Action::Up => *selected = selected.saturating_sub(1),
            Action::Down => *selected = (*selected + 1).min(last),
            Action::PageUp => *selected = selected.saturating_sub(10),
            Action::PageDown => *selected = (*selected + 10).min(last),
            Action::Top => *selected = 0,
            Action::Bottom => *selected = last,
            Action::Open => {
                let chosen = self.derived.findings.get(list.selected).cloned();
                if let Some(finding) = chosen {
                    self.go_to_evidence(&finding.evidence);
                }
                return (None, Keyed::Done(true));
            }
            _ => return (Some(Overlay::Findings(list)), Keyed::Done(false)),
        }
        (Some(Overlay::Findings(list)), Keyed::Done(true))
    }

    /// F3: opens the search line; with text from before, finds the next
    /// match at once.
    pub fn start_search(&mut self) {
        if !search::searchable(self.tab) {
            self.status = Some(format!(
                "F3 searches a table; {} has none",
                self.tab.title()
            ));
            return;
        }
        self.overlays.push(Overlay::Search);
        if !self.search.text.is_empty() {
            self.find(1);
        }
    }

    /// A click: a tab in the tab bar (closing the help), or a row in the
    /// table.
    pub fn on_click(&mut self, column: u16, row: u16) -> bool {
        let at = ratatui::layout::Position::new(column, row);
        if let Some((_, tab)) = self.hits.tabs.iter().find(|(rect, _)| rect.contains(at)) {
            self.tab = *tab;
            self.close_help();
            return true;
        }
        let Some((rect, first)) = self.hits.rows else {
            return false;
        };
        if !rect.contains(at) {
            return false;
        }
        let index = first + usize::from(row - rect.y);
        let (view, shown) = self.view_and_shown();
        view.click_row(index, &shown)
    }
}

/// The help pane scrolls with the movement keys (render clamps it).
fn help_key(mut scroll: u16, key: Key, quit: &mut bool) -> (Option<Overlay>, Keyed) {
    let page = 10;
    let action = keymap::lookup(key).map(|b| b.action);
    match action {
        Some(Action::Quit) => *quit = true,
        Some(Action::Help | Action::Close) => return (None, Keyed::Done(true)),
        Some(Action::Up) => scroll = scroll.saturating_sub(1),
        Some(Action::Down) => scroll = scroll.saturating_add(1),
        Some(Action::PageUp) => scroll = scroll.saturating_sub(page),
        Some(Action::PageDown) => scroll = scroll.saturating_add(page),
        Some(Action::Top) => scroll = 0,
        Some(Action::Bottom) => scroll = u16::MAX,
        _ => return (Some(Overlay::Help { scroll }), Keyed::Done(false)),
    }
    (Some(Overlay::Help { scroll }), Keyed::Done(true))
}

/// The tab number 1-10 a digit key is (0 is the tenth), if it is one.
fn key_digit(key: Key) -> Option<usize> {
    match key {
        Key::Char('0') => Some(10),
        Key::Char(c @ '1'..='9') => Some(c as usize - '0' as usize),
        _ => None,
    }
}
