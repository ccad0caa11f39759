//! What the table tabs draw alike: which columns fit, their widths, the
//! header row with the sort marker, the selected row, and the note in an
//! empty table.

use super::theme::Theme;
pub use crate::app::format::fit_endpoints;
use crate::app::table::{Align, CellText, ColumnSpec, Hint, Window};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

/// The `wanted` columns that fit in `width`, by priority, kept in table
/// order. The first by priority is kept even when it does not fit.
pub fn fitting<C: Copy + PartialEq, S, D>(
    columns: &'static [ColumnSpec<C, S, D>],
    width: u16,
    wanted: impl Fn(&ColumnSpec<C, S, D>) -> bool,
) -> Vec<&'static ColumnSpec<C, S, D>> {
    let mut by_priority: Vec<&ColumnSpec<C, S, D>> = columns.iter().filter(|s| wanted(s)).collect();
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
pub fn widths<C: Copy, S, D>(
    columns: &[&ColumnSpec<C, S, D>],
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
pub fn header<C: Copy, S, D>(
    columns: &[&ColumnSpec<C, S, D>],
    sorted: impl Fn(C) -> bool,
    descending: bool,
    theme: Theme,
) -> Row<'static> {
    Row::new(columns.iter().map(|spec| {
        let marker = match (sorted(spec.column), descending) {
            (false, _) => "",
            (true, true) => "▼",
            (true, false) => "▲",
        };
        let title = Line::from(format!("{}{marker}", spec.title));
        Cell::from(aligned(title, spec.align))
    }))
    .style(theme.header())
}

fn aligned(line: Line<'static>, align: Align) -> Line<'static> {
    match align {
        Align::Left => line,
        Align::Right => line.right_aligned(),
    }
}

/// The theme's style for a cell's hint.
pub fn style(hint: Hint, theme: Theme) -> Style {
    match hint {
        Hint::Plain => Style::new(),
        Hint::Good => theme.good(),
        Hint::Alert => theme.alert(),
        Hint::Warn => theme.warn(),
        Hint::Dim => theme.dim(),
        Hint::Rx => theme.rx(),
    }
}

/// A column's cell as its descriptor made it: the text styled by its
/// hint, led by the flag word, aligned as the column is.
pub fn cell(shown: CellText, align: Align, theme: Theme) -> Cell<'static> {
    let text = Span::styled(shown.text, style(shown.hint, theme));
    let line = match shown.flag {
        Some(word) => Line::from(vec![
            Span::styled(word, theme.alert()),
            Span::raw(" "),
            text,
        ]),
        None => Line::from(text),
    };
    Cell::from(aligned(line, align))
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

/// What a table tab's table is drawn from besides its rows: the columns,
/// the view's window, sort and selection.
pub struct Drawn<'a, C: 'static, S: 'static, D: 'static> {
    pub columns: &'static [ColumnSpec<C, S, D>],
    pub window: &'a mut Window,
    /// The columns that fit, noted for the sort cycle.
    pub on_screen: &'a mut Vec<C>,
    pub sorted: Option<C>,
    pub descending: bool,
    pub selected: Option<usize>,
    /// The column that takes the width left over.
    pub flexible: C,
}

/// Draws `rows` in `area`: the columns that fit, the header with the sort
/// marker, and the rows the window shows around the selection, each cell
/// the column's `cell` (called by `text` with the tab's context).
/// Returns the body's area and first row (for clicks and the empty note);
/// None when only the header fits.
pub fn render_rows<C: Copy + PartialEq, S, D, R>(
    frame: &mut Frame,
    area: Rect,
    drawn: Drawn<'_, C, S, D>,
    rows: &[R],
    text: impl Fn(&R, &ColumnSpec<C, S, D>) -> CellText,
    theme: Theme,
) -> Option<(Rect, usize)> {
    let visible = usize::from(area.height.saturating_sub(1));
    drawn.window.fit(drawn.selected, rows.len(), visible);
    let columns = fitting(drawn.columns, area.width, |_| true);
    *drawn.on_screen = columns.iter().map(|spec| spec.column).collect();
    let sorted = drawn.sorted;
    let header = header(&columns, |c| sorted == Some(c), drawn.descending, theme);
    let offset = drawn.window.offset;
    let body = rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(visible)
        .map(|(i, row)| {
            let cells = columns
                .iter()
                .map(|spec| cell(text(row, spec), spec.align, theme));
            body_row(cells, Some(i) == drawn.selected, theme)
        });
    let flexible = drawn.flexible;
    let widths = widths(&columns, |c| c == flexible);
    frame.render_widget(
        Table::new(body, widths).header(header).column_spacing(1),
        area,
    );
    body_area(area).map(|body| (body, offset))
}

/// Says on the first body row why the table is empty.
pub fn render_empty_note(frame: &mut Frame, body_area: Rect, note: &str) {
    let first_row = Rect {
        height: 1,
        ..body_area
    };
    frame.render_widget(Paragraph::new(note), first_row);
}
