//! F2: the setup screen, as htop's. It lists what the config file holds
//! that is worth changing while watching: the interval, the theme, the
//! Sockets and Flows columns (shown or not, and their order) and every
//! finding threshold with its default. Each change applies at once; `w`
//! writes the config file (config::save: a new private file renamed over
//! the old one). Values go through the config file's own parsers and
//! checks, so what the screen takes the file takes.

use super::App;
use super::keymap::{self, Action, Key};
use super::line_edit;
use super::overlay::Overlay;
use crate::app::tabs::Tab;
use crate::config::{Columns, ThemeName};
pub use crate::config::{interval_text, threshold_text};
use crate::findings::Thresholds;
use crate::findings::thresholds::THRESHOLDS;

/// The two tables whose columns the screen edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Sockets,
    Flows,
}

impl Table {
    pub fn title(self) -> &'static str {
        match self {
            Table::Sockets => "Sockets columns",
            Table::Flows => "Flows columns",
        }
    }

    /// Every column the screen offers, in the table's own order. The flow
    /// table's first column (FLOW, or KEY when grouped) is always shown.
    fn titles(self) -> Vec<&'static str> {
        match self {
            Table::Sockets => crate::config::column_titles(Tab::Sockets),
            Table::Flows => crate::config::column_titles(Tab::Flows)
                .into_iter()
                .filter(|t| !matches!(*t, "FLOW" | "KEY"))
                .collect(),
        }
    }

    fn list(self, columns: &mut Columns) -> &mut Vec<String> {
        match self {
            Table::Sockets => &mut columns.sockets,
            Table::Flows => &mut columns.flows,
        }
    }
}

/// One line of the screen that can be selected.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Interval,
    Theme,
    Column {
        table: Table,
        title: &'static str,
        shown: bool,
    },
    /// An index into `findings::thresholds::THRESHOLDS`.
    Threshold(usize),
}

#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub selected: usize,
    /// First line shown (the screen scrolls).
    pub offset: usize,
    /// The value being typed, while editing one.
    pub editing: Option<String>,
    /// Why the last value or save was refused, or where it was saved.
    pub message: Option<String>,
    /// Something changed since the last save.
    pub unsaved: bool,
}

/// The rows of `table`: the listed columns in their order, then the others
/// (hidden); an empty list means every column, in table order.
pub fn column_items(table: Table, columns: &Columns) -> Vec<Item> {
    let mut columns = columns.clone();
    let list = table.list(&mut columns).clone();
    let all = table.titles();
    let shown: Vec<&'static str> = if list.is_empty() {
        all.clone()
    } else {
        list.iter()
            .filter_map(|t| all.iter().find(|a| **a == t.as_str()).copied())
            .collect()
    };
    let hidden = all.iter().filter(|t| !shown.contains(t)).copied();
    shown
        .iter()
        .map(|&title| (title, true))
        .chain(hidden.map(|title| (title, false)))
        .map(|(title, shown)| Item::Column {
            table,
            title,
            shown,
        })
        .collect()
}

/// Every selectable row, in screen order.
pub fn items(columns: &Columns) -> Vec<Item> {
    let mut items = vec![Item::Interval, Item::Theme];
    items.extend(column_items(Table::Sockets, columns));
    items.extend(column_items(Table::Flows, columns));
    items.extend((0..THRESHOLDS.len()).map(Item::Threshold));
    items
}

/// `thresholds` with `key` set to `text`, through the config file's
/// deserializer and checks; the error is the config loader's message.
pub fn set_threshold(thresholds: &Thresholds, key: &str, text: &str) -> Result<Thresholds, String> {
    let not_a_number = || format!("{key}: '{text}' is not a number");
    if text.chars().any(char::is_control) {
        return Err(not_a_number());
    }
    let value = toml::from_str::<toml::Table>(&format!("value = {text}"))
        .map_err(|_| not_a_number())?
        .remove("value")
        .ok_or_else(not_a_number)?;
    let mut table = toml::Table::try_from(thresholds).map_err(|e| e.to_string())?;
    table.insert(key.to_string(), value);
    let changed: Thresholds = table
        .try_into()
        .map_err(|e: toml::de::Error| format!("{key}: {}", e.message().trim()))?;
    changed.check().map_err(|(_, message)| message)?;
    Ok(changed)
}

impl App {
    /// Every key while the setup screen is open; the screen, unless the
    /// key closed it.
    pub(super) fn setup_key(&mut self, mut setup: Setup, key: Key) -> Option<Overlay> {
        let items = items(&self.config.columns);
        let open = if setup.editing.is_some() {
            self.setup_edit(&mut setup, &items, key);
            true
        } else {
            self.setup_action(&mut setup, &items, key)
        };
        open.then_some(Overlay::Setup(setup))
    }

    /// Keys while a value is typed: Enter applies it if it is good.
    fn setup_edit(&mut self, setup: &mut Setup, items: &[Item], key: Key) {
        let Some(text) = setup.editing.as_mut() else {
            return;
        };
        match key {
            key if line_edit::edit(text, key) => {}
            Key::Esc => setup.editing = None,
            Key::Enter => {
                let text = text.clone();
                match self.apply_value(items.get(setup.selected), &text) {
                    Ok(()) => {
                        setup.editing = None;
                        setup.message = None;
                        setup.unsaved = true;
                    }
                    Err(why) => setup.message = Some(why),
                }
            }
            _ => {}
        }
    }

    /// A key on the list; false when it closes the screen.
    fn setup_action(&mut self, setup: &mut Setup, items: &[Item], key: Key) -> bool {
        let action = keymap::lookup_setup(key)
            .or_else(|| keymap::lookup(key))
            .map(|b| b.action);
        let last = items.len().saturating_sub(1);
        let page = 10;
        let item = items.get(setup.selected).cloned();
        setup.message = None;
        match action {
            Some(Action::Close) => return false,
            Some(Action::Quit) => {
                self.quit = true;
                return false;
            }
            Some(Action::Up) => setup.selected = setup.selected.saturating_sub(1),
            Some(Action::Down) => setup.selected = (setup.selected + 1).min(last),
            Some(Action::PageUp) => setup.selected = setup.selected.saturating_sub(page),
            Some(Action::PageDown) => setup.selected = (setup.selected + page).min(last),
            Some(Action::Top) => setup.selected = 0,
            Some(Action::Bottom) => setup.selected = last,
            Some(Action::Save) => {
                setup.message = Some(match self.save_config() {
                    Ok(path) => {
                        setup.unsaved = false;
                        format!("saved {path}")
                    }
                    Err(why) => why,
                });
            }
            Some(Action::Toggle) => match item {
                Some(Item::Interval) => {
                    let now = self.config.interval.unwrap_or(self.interval);
                    setup.editing = Some(interval_text(now));
                }
                Some(Item::Threshold(index)) => {
                    let key = THRESHOLDS[index].0;
                    setup.editing = Some(threshold_text(&self.config.thresholds, key));
                }
                Some(Item::Theme) => {
                    self.config.theme = match self.config.theme {
                        ThemeName::Color => ThemeName::Mono,
                        ThemeName::Mono => ThemeName::Color,
                    };
                    self.color = self.config.theme == ThemeName::Color;
                    setup.unsaved = true;
                }
                Some(Item::Column {
                    table,
                    title,
                    shown,
                }) => {
                    match self.toggle_column(table, title, shown) {
                        Ok(()) => setup.unsaved = true,
                        Err(why) => setup.message = Some(why),
                    }
                    setup.selected = follow(&self.config.columns, table, title, setup.selected);
                }
                None => {}
            },
            Some(Action::MoveColumn) => {
                if let Some(Item::Column {
                    table,
                    title,
                    shown,
                }) = item
                {
                    let up = key == Key::F(7);
                    match self.move_column(table, title, shown, up) {
                        Ok(()) => setup.unsaved = true,
                        Err(why) => setup.message = Some(why),
                    }
                    setup.selected = follow(&self.config.columns, table, title, setup.selected);
                } else {
                    setup.message = Some("F7/F8 move a column; select one first".into());
                }
            }
            _ => {}
        }
        true
    }

    /// Applies a typed value to the config and to the live view.
    fn apply_value(&mut self, item: Option<&Item>, text: &str) -> Result<(), String> {
        match item {
            Some(Item::Interval) => {
                let interval = crate::units::parse_interval(text.trim())
                    .map_err(|e| format!("interval: {e}"))?;
                self.config.interval = Some(interval);
                self.interval = interval;
                self.demand.set_interval(interval);
            }
            Some(Item::Threshold(index)) => {
                let key = THRESHOLDS[*index].0;
                let changed = set_threshold(&self.config.thresholds, key, text)?;
                self.config.thresholds = changed;
                self.set_thresholds(changed);
            }
            _ => {}
        }
        Ok(())
    }

    fn toggle_column(&mut self, table: Table, title: &str, shown: bool) -> Result<(), String> {
        let list = table.list(&mut self.config.columns);
        if list.is_empty() {
            *list = table.titles().iter().map(|t| t.to_string()).collect();
        }
        if shown {
            if list.len() == 1 {
                return Err("one column at least stays shown".into());
            }
            list.retain(|t| t != title);
        } else {
            list.push(title.to_string());
        }
        self.columns = self.config.columns.clone();
        Ok(())
    }

    fn move_column(
        &mut self,
        table: Table,
        title: &str,
        shown: bool,
        up: bool,
    ) -> Result<(), String> {
        if !shown {
            return Err(format!(
                "{title} is hidden: Space shows it, then F7/F8 move it"
            ));
        }
        let list = table.list(&mut self.config.columns);
        if list.is_empty() {
            *list = table.titles().iter().map(|t| t.to_string()).collect();
        }
        let Some(at) = list.iter().position(|t| t == title) else {
            return Ok(());
        };
        let to = if up {
            at.checked_sub(1)
        } else {
            (at + 1 < list.len()).then_some(at + 1)
        };
        if let Some(to) = to {
            list.swap(at, to);
        }
        self.columns = self.config.columns.clone();
        Ok(())
    }

    /// Writes the config file; the path, or why not.
    fn save_config(&self) -> Result<String, String> {
        let path = self
            .config_path
            .clone()
            .ok_or("no config path (HOME is unset): start netlens with --config FILE")?;
        crate::config::save::save(&path, &self.config)?;
        Ok(path.display().to_string())
    }
}

/// The row of `title` in `table` after a change, so the selection follows
/// the column it was on.
fn follow(columns: &Columns, table: Table, title: &str, fallback: usize) -> usize {
    items(columns)
        .iter()
        .position(|item| {
            matches!(item, Item::Column { table: t, title: c, .. } if *t == table && *c == title)
        })
        .unwrap_or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_goes_through_the_config_checks() {
        let base = Thresholds::DEFAULT;
        let changed = set_threshold(&base, "retrans_warn_percent", "5").unwrap();
        assert_eq!(changed.retrans_warn_percent, 5.0);
        assert_eq!(threshold_text(&changed, "retrans_warn_percent"), "5.0");
        let error = set_threshold(&base, "retrans_warn_percent", "50").unwrap_err();
        assert!(error.contains("is above retrans_crit_percent"), "{error}");
        let error = set_threshold(&base, "stuck_queue_samples", "0").unwrap_err();
        assert!(error.contains("1 or more"), "{error}");
        let error = set_threshold(&base, "stuck_queue_samples", "x").unwrap_err();
        assert!(!error.contains('\n'), "{error}");
        assert!(set_threshold(&base, "dns_slow_p90_ms", "-1").is_err());
    }

    #[test]
    fn columns_list_the_shown_in_order_then_the_hidden() {
        let columns = Columns {
            sockets: vec!["Peer".into(), "Net".into()],
            ..Columns::default()
        };
        let rows = column_items(Table::Sockets, &columns);
        let first: Vec<(&str, bool)> = rows
            .iter()
            .take(3)
            .map(|item| match item {
                Item::Column { title, shown, .. } => (*title, *shown),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(first, [("Peer", true), ("Net", true), ("NS", false)]);
        assert_eq!(
            interval_text(std::time::Duration::from_millis(500)),
            "500ms"
        );
        assert_eq!(interval_text(std::time::Duration::from_secs(120)), "2m");
    }
}
