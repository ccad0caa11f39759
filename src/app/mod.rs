//! Application state and input handling. No terminal I/O here: `run` owns the
//! terminal and the event loop; `ui` draws this state.

pub mod history;
pub mod interfaces;
pub mod keymap;
pub mod load;
pub mod run;
pub mod tabs;

use crate::collect::SamplerEvent;
use crate::model::Sample;
use history::History;
use interfaces::InterfacesView;
use keymap::{Action, Key, Scope};
use load::{LoadEvent, LoadView};
use ratatui::layout::{Position, Rect};
use std::time::Duration;
use tabs::Tab;

/// Screen regions from the last draw, for mouse clicks.
#[derive(Debug, Default, Clone)]
pub struct HitMap {
    pub tabs: Vec<(Rect, Tab)>,
    /// The table's data rows and the index of the first one shown.
    pub rows: Option<(Rect, usize)>,
}

pub struct App {
    pub tab: Tab,
    pub history: History,
    /// The frozen sample's monotonic time while paused.
    pub paused_at: Option<f64>,
    pub help: bool,
    pub interfaces: InterfacesView,
    pub load: LoadView,
    pub color: bool,
    pub interval: Duration,
    pub hostname: String,
    /// Last sampler error, shown until the next good sample.
    pub error: Option<String>,
    pub hits: HitMap,
    pub quit: bool,
}

impl App {
    pub fn new(tab: Tab, interval: Duration, color: bool) -> Self {
        Self {
            tab,
            history: History::default(),
            paused_at: None,
            help: false,
            interfaces: InterfacesView::default(),
            load: LoadView::default(),
            color,
            interval,
            hostname: hostname(),
            error: None,
            hits: HitMap::default(),
            quit: false,
        }
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

    /// Takes a sampler event; returns whether the screen must be redrawn.
    pub fn on_sampler(&mut self, event: SamplerEvent) -> bool {
        match event {
            SamplerEvent::Sample(sample) => {
                self.history.push(*sample);
                let had_error = self.error.take().is_some();
                self.paused_at.is_none() || had_error
            }
            SamplerEvent::Error(error) => {
                self.error = Some(error);
                true
            }
        }
    }

    /// Takes a key; returns whether the screen must be redrawn.
    pub fn on_key(&mut self, key: Key) -> bool {
        if self.tab == Tab::Interfaces && self.interfaces.editing_filter {
            return self.edit_filter(key);
        }
        if self.tab == Tab::Load && !self.help && self.load.modal() {
            return self.load.on_modal_key(key);
        }
        let in_load = self.tab == Tab::Load && !self.help;
        let Some(binding) = keymap::lookup_in(key, in_load) else {
            return false;
        };
        if self.help {
            match binding.action {
                Action::Quit => self.quit = true,
                Action::Help | Action::Close => self.help = false,
                _ => return false,
            }
            return true;
        }
        match binding.scope {
            Scope::Global => self.global(binding.action, key),
            Scope::View if self.tab == Tab::Load => self.load.handle(binding.action, key),
            Scope::View => self.view_action(binding.action),
            Scope::Load => self.load.handle(binding.action, key),
        }
    }

    /// Takes a load run's report; returns whether the screen must be redrawn.
    pub fn on_load(&mut self, event: LoadEvent) -> bool {
        self.load.on_event(event)
    }

    fn global(&mut self, action: Action, key: Key) -> bool {
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.help = true,
            Action::NextTab => self.tab = self.tab.next(),
            Action::PrevTab => self.tab = self.tab.previous(),
            Action::GotoTab => {
                if let Key::Char(digit @ '1'..='7') = key {
                    self.tab = tabs::ALL[digit as usize - '1' as usize];
                }
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

    fn view_action(&mut self, action: Action) -> bool {
        if self.tab != Tab::Interfaces {
            return false;
        }
        let Some(index) = self.shown_index() else {
            return false;
        };
        let (previous, current) = self.history.pair(index);
        let Some(current) = current else {
            return false;
        };
        self.interfaces.handle(action, previous, current)
    }

    fn edit_filter(&mut self, key: Key) -> bool {
        let view = &mut self.interfaces;
        match key {
            Key::Char(c) => view.filter.push(c),
            Key::Backspace => {
                view.filter.pop();
            }
            Key::Enter => view.editing_filter = false,
            Key::Esc => {
                view.filter.clear();
                view.editing_filter = false;
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
        if !rect.contains(at) || self.tab != Tab::Interfaces || self.interfaces.detail {
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

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}
