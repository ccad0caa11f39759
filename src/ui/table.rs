//! What the table tabs draw alike: which columns fit, their widths, the
//! header row with the sort marker, the selected row, and the note in an
//! empty table.

use super::theme::Theme;
use crate::app::table::ColumnSpec;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row};

/// The `wanted` columns that fit in `width`, by priority, kept in table
/// order. The first by priority is kept even when it does not fit.
pub fn fitting<C: Copy + PartialEq>(
    columns: &'static [ColumnSpec<C>],
    width: u16,
    wanted: impl Fn(&ColumnSpec<C>) -> bool,
) -> Vec<&'static ColumnSpec<C>> {
    let mut by_priority: Vec<&ColumnSpec<C>> = columns.iter().filter(|s| wanted(s)).collect();
    by_priority.sort_by_key(|spec| spec.priority);
    let mut used = 0u16;
    let mut chosen = Vec::new();
    for spec in by_priority {
        let needed = spec.width + u16::from(!chosen.is_empty());
        if used + needed > width && !chosen.is_empty() {
            continue;
        }
        used += needed;
        chosen.push(spec.column);
    }
    columns
        .iter()
        .filter(|spec| chosen.contains(&spec.column))
        .collect()
}

/// Each column's own width; the `flexible` ones take what is left over.
pub fn widths<C: Copy>(
    columns: &[&ColumnSpec<C>],
    flexible: impl Fn(C) -> bool,
) -> Vec<Constraint> {
    columns
        .iter()
        .map(|spec| {
            if flexible(spec.column) {
                Constraint::Min(spec.width)
            } else {
                Constraint::Length(spec.width)
            }
        })
        .collect()
}

/// The header row: the titles, ▼ or ▲ after the `sorted` ones, aligned as
/// their columns are.
pub fn header<C: Copy>(
    columns: &[&ColumnSpec<C>],
    sorted: impl Fn(C) -> bool,
    descending: bool,
    right_aligned: impl Fn(C) -> bool,
    theme: Theme,
) -> Row<'static> {
    Row::new(columns.iter().map(|spec| {
        let marker = match (sorted(spec.column), descending) {
            (false, _) => "",
            (true, true) => "▼",
            (true, false) => "▲",
        };
        let title = Line::from(format!("{}{marker}", spec.title));
        Cell::from(if right_aligned(spec.column) {
            title.right_aligned()
        } else {
            title
        })
    }))
    .style(theme.header())
}

/// A body row, in the selection style when it is the selected one.
pub fn body_row<'a>(
    cells: impl IntoIterator<Item = Cell<'a>>,
    selected: bool,
    theme: Theme,
) -> Row<'a> {
    let row = Row::new(cells);
    if selected {
        row.style(theme.selected())
    } else {
        row
    }
}

/// Where the body rows are drawn (below the header line), for clicks;
/// None when only the header fits.
pub fn body_area(table_area: Rect) -> Option<Rect> {
    (table_area.height > 1).then(|| Rect {
        y: table_area.y + 1,
        height: table_area.height - 1,
        ..table_area
    })
}

/// Says on the first body row why the table is empty.
pub fn render_empty_note(frame: &mut Frame, body_area: Rect, note: &str) {
    let first_row = Rect {
        height: 1,
        ..body_area
    };
    frame.render_widget(Paragraph::new(note), first_row);
}
