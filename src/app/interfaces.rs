//! The Interfaces tab's state and table model: columns, sorting, filtering,
//! selection. Rendering lives in ui/interfaces.rs.

use super::keymap::Action;
use crate::model::rates::{InterfaceRates, interface_util};
use crate::model::{InterfaceSample, Sample};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Name,
    State,
    RxPackets,
    TxPackets,
    RxKBytes,
    TxKBytes,
    Util,
    Errors,
    Dropped,
    Overruns,
    Carrier,
    Collisions,
    Mtu,
    Speed,
}

pub struct ColumnSpec {
    pub column: Column,
    pub title: &'static str,
    pub width: u16,
    /// Lower shows first when the terminal is narrow.
    pub priority: u8,
}

/// Table order. Error columns sum both directions; the detail pane splits them.
pub const COLUMNS: &[ColumnSpec] = &[
    ColumnSpec {
        column: Column::Name,
        title: "IFACE",
        width: 10,
        priority: 0,
    },
    ColumnSpec {
        column: Column::State,
        title: "STATE",
        width: 6,
        priority: 2,
    },
    ColumnSpec {
        column: Column::RxPackets,
        title: "rxpck/s",
        width: 9,
        priority: 1,
    },
    ColumnSpec {
        column: Column::TxPackets,
        title: "txpck/s",
        width: 9,
        priority: 1,
    },
    ColumnSpec {
        column: Column::RxKBytes,
        title: "rxkB/s",
        width: 9,
        priority: 1,
    },
    ColumnSpec {
        column: Column::TxKBytes,
        title: "txkB/s",
        width: 9,
        priority: 1,
    },
    ColumnSpec {
        column: Column::Util,
        title: "%util",
        width: 6,
        priority: 2,
    },
    ColumnSpec {
        column: Column::Errors,
        title: "err/s",
        width: 7,
        priority: 3,
    },
    ColumnSpec {
        column: Column::Dropped,
        title: "drop/s",
        width: 7,
        priority: 3,
    },
    ColumnSpec {
        column: Column::Overruns,
        title: "ovr/s",
        width: 6,
        priority: 4,
    },
    ColumnSpec {
        column: Column::Carrier,
        title: "carr/s",
        width: 6,
        priority: 4,
    },
    ColumnSpec {
        column: Column::Collisions,
        title: "coll/s",
        width: 6,
        priority: 4,
    },
    ColumnSpec {
        column: Column::Mtu,
        title: "MTU",
        width: 5,
        priority: 5,
    },
    ColumnSpec {
        column: Column::Speed,
        title: "SPEED",
        width: 10,
        priority: 5,
    },
];

/// One interface with its rates over the shown interval.
pub struct Row<'a> {
    pub iface: &'a InterfaceSample,
    pub rates: InterfaceRates,
    pub util: Option<f64>,
}

impl Row<'_> {
    /// Short link state: readable without colour.
    pub fn state(&self) -> &'static str {
        match (self.iface.up, self.iface.lower_up) {
            (true, true) => "up",
            (true, false) => "NOCARR",
            (false, _) => "down",
        }
    }

    /// The numeric value a column shows, for sorting and highlighting.
    pub fn value(&self, column: Column) -> Option<f64> {
        let r = &self.rates;
        match column {
            Column::Name | Column::State => None,
            Column::RxPackets => r.rx_packets,
            Column::TxPackets => r.tx_packets,
            Column::RxKBytes => r.rx_bytes.map(|b| b / 1024.0),
            Column::TxKBytes => r.tx_bytes.map(|b| b / 1024.0),
            Column::Util => self.util,
            Column::Errors => r.errors_total(),
            Column::Dropped => r.dropped_total(),
            Column::Overruns => r.rx_overruns,
            Column::Carrier => r.tx_carrier,
            Column::Collisions => r.collisions,
            Column::Mtu => Some(f64::from(self.iface.mtu)),
            Column::Speed => self.iface.speed_mbps.map(f64::from),
        }
    }

    fn compare(&self, other: &Row, column: Column) -> Ordering {
        match column {
            Column::Name => self.iface.name.cmp(&other.iface.name),
            Column::State => self.state().cmp(other.state()),
            _ => {
                // Unknown sorts below every number.
                let key = |row: &Row| row.value(column).unwrap_or(f64::NEG_INFINITY);
                key(self).total_cmp(&key(other))
            }
        }
    }

    fn matches(&self, filter: &str) -> bool {
        let needle = filter.to_lowercase();
        let iface = self.iface;
        iface.name.to_lowercase().contains(&needle)
            || iface.kind.as_deref().is_some_and(|k| k.contains(&needle))
            || iface.mac.as_deref().is_some_and(|m| m.contains(&needle))
            || iface.addresses.iter().any(|a| a.contains(&needle))
            || self.state().to_lowercase() == needle
    }
}

#[derive(Debug, Clone)]
pub struct InterfacesView {
    pub sort: Column,
    pub descending: bool,
    /// Selected interface, by name so it survives re-sorting.
    pub selected: Option<String>,
    /// Where the selection was, for when that interface disappears.
    pub selected_position: usize,
    /// First visible row.
    pub offset: usize,
    /// Rows visible in the table at the last draw (PgUp/PgDn step).
    pub page: usize,
    pub filter: String,
    pub editing_filter: bool,
    pub detail: bool,
}

impl Default for InterfacesView {
    fn default() -> Self {
        Self {
            sort: Column::Name,
            descending: false,
            selected: None,
            selected_position: 0,
            offset: 0,
            page: 10,
            filter: String::new(),
            editing_filter: false,
            detail: false,
        }
    }
}

impl InterfacesView {
    /// Rows of `current`, filtered and sorted as the view says.
    pub fn rows<'a>(&self, previous: Option<&Sample>, current: &'a Sample) -> Vec<Row<'a>> {
        let mut rows: Vec<Row> = current
            .interfaces
            .iter()
            .map(|iface| {
                let rates = InterfaceRates::for_interface(previous, current, iface);
                let util = interface_util(iface, &rates);
                Row { iface, rates, util }
            })
            .filter(|row| self.filter.is_empty() || row.matches(&self.filter))
            .collect();
        rows.sort_by(|a, b| {
            let order = a
                .compare(b, self.sort)
                .then_with(|| a.iface.index.cmp(&b.iface.index));
            if self.descending {
                order.reverse()
            } else {
                order
            }
        });
        rows
    }

    /// Position of the selection in `rows`, following the interface by name
    /// and falling back to the same position when it is gone.
    pub fn selected_index(&self, rows: &[Row]) -> Option<usize> {
        if rows.is_empty() {
            return None;
        }
        self.selected
            .as_ref()
            .and_then(|name| rows.iter().position(|r| &r.iface.name == name))
            .or(Some(self.selected_position.min(rows.len() - 1)))
    }

    fn select(&mut self, rows: &[Row], index: usize) {
        if let Some(row) = rows.get(index) {
            self.selected = Some(row.iface.name.clone());
            self.selected_position = index;
        }
    }

    pub fn select_row(&mut self, previous: Option<&Sample>, current: &Sample, index: usize) {
        let rows = self.rows(previous, current);
        self.select(&rows, index);
    }

    /// Applies a view action; returns whether anything changed.
    pub fn handle(&mut self, action: Action, previous: Option<&Sample>, current: &Sample) -> bool {
        let rows = self.rows(previous, current);
        let last = rows.len().saturating_sub(1);
        let at = self.selected_index(&rows).unwrap_or(0);
        let page = self.page.max(1);
        match action {
            Action::Up => self.select(&rows, at.saturating_sub(1)),
            Action::Down => self.select(&rows, (at + 1).min(last)),
            Action::PageUp => self.select(&rows, at.saturating_sub(page)),
            Action::PageDown => self.select(&rows, (at + page).min(last)),
            Action::Top => self.select(&rows, 0),
            Action::Bottom => self.select(&rows, last),
            Action::Open => {
                self.select(&rows, at);
                self.detail = !rows.is_empty();
            }
            Action::Close => {
                if self.detail {
                    self.detail = false;
                } else if !self.filter.is_empty() {
                    self.filter.clear();
                } else {
                    return false;
                }
            }
            Action::SortNext | Action::SortPrev => {
                let position = COLUMNS
                    .iter()
                    .position(|c| c.column == self.sort)
                    .unwrap_or(0);
                let next = if action == Action::SortNext {
                    (position + 1) % COLUMNS.len()
                } else {
                    (position + COLUMNS.len() - 1) % COLUMNS.len()
                };
                self.sort = COLUMNS[next].column;
                // Biggest first for numbers, as htop does; A-Z for text.
                self.descending = !matches!(self.sort, Column::Name | Column::State);
            }
            Action::SortInvert => self.descending = !self.descending,
            Action::Filter => self.editing_filter = true,
            _ => return false,
        }
        true
    }

    /// Keeps the selection inside the visible window of `height` rows.
    pub fn scroll_to_selection(&mut self, selected: usize, height: usize) {
        let height = height.max(1);
        if selected < self.offset {
            self.offset = selected;
        } else if selected >= self.offset + height {
            self.offset = selected + 1 - height;
        }
    }
}
