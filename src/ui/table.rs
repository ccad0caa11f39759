//! What the table tabs draw alike: which columns fit, their widths, the
//! header row with the sort marker, the selected row, and the note in an
//! empty table.

use super::theme::Theme;
pub use crate::app::format::fit_endpoints;
use crate::app::table::{Align, CellText, ColumnSpec, Hint};
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

/// Where the body rows are drawn (below the header line), for clicks;
/// None when only the header fits.
pub fn body_area(table_area: Rect) -> Option<Rect> {
    (table_area.height > 1).then(|| Rect {
        y: table_area.y + 1,
        height: table_area.height - 1,
        ..table_area
    })
}

/// A table as a tab draws it: the columns it chose (in the order shown)
/// and the width each one's cells are made for, the sort and the selection.
pub struct Drawn<'a, C: 'static, S: 'static, D: 'static> {
    pub columns: Vec<&'static ColumnSpec<C, S, D>>,
    /// Each column's width, in `columns`' order.
    pub widths: Vec<u16>,
    /// The columns that also take the width left over.
    pub flexible: &'a [C],
    pub sorted: Option<C>,
    pub descending: bool,
    pub selected: Option<usize>,
    /// The first row shown.
    pub offset: usize,
}

impl<'a, C: Copy, S, D> Drawn<'a, C, S, D> {
    /// `columns` at their own widths, unsorted, from the first row.
    pub fn new(columns: Vec<&'static ColumnSpec<C, S, D>>, flexible: &'a [C]) -> Self {
        Self {
            widths: columns.iter().map(|spec| spec.width).collect(),
            columns,
            flexible,
            sorted: None,
            descending: false,
            selected: None,
            offset: 0,
        }
    }

    /// The columns shown, for the sort cycle.
    pub fn on_screen(&self) -> Vec<C> {
        self.columns.iter().map(|spec| spec.column).collect()
    }
}

/// How many body rows fit in a table's `area` (below its header).
pub fn visible_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(1))
}

/// No whole-row style: every row as its cells style it.
pub fn plain<R>(_: &R) -> Hint {
    Hint::Plain
}

/// Draws the table every table tab shows: the header with the sort
/// marker, then the rows from `drawn.offset` that fit, each built by `row`
/// (None past the last: only the visible rows are built), its cells by
/// `text` in their widths, the whole row styled by `hint` (the selection's
/// style wins). Returns the body's area, for clicks and the empty note;
/// None when only the header fits.
pub fn render<C: Copy + PartialEq, S, D, R>(
    frame: &mut Frame,
    area: Rect,
    drawn: Drawn<'_, C, S, D>,
    row: impl Fn(usize) -> Option<R>,
    text: impl Fn(&R, &ColumnSpec<C, S, D>, u16) -> CellText,
    hint: impl Fn(&R) -> Hint,
    theme: Theme,
) -> Option<Rect> {
    let Drawn {
        columns, widths, ..
    } = &drawn;
    let sorted = |column| drawn.sorted == Some(column);
    let header = header(columns, sorted, drawn.descending, theme);
    let shown = drawn.offset..drawn.offset.saturating_add(visible_rows(area));
    let body = shown.map_while(|i| Some((i, row(i)?))).map(|(i, row)| {
        let cells = (columns.iter().zip(widths))
            .map(|(spec, &width)| cell(text(&row, spec, width), spec.align, theme));
        let style = if Some(i) == drawn.selected {
            theme.selected()
        } else {
            style(hint(&row), theme)
        };
        Row::new(cells).style(style)
    });
    let constraints = columns.iter().zip(widths).map(|(spec, &width)| {
        if drawn.flexible.contains(&spec.column) {
            Constraint::Min(width)
        } else {
            Constraint::Length(width)
        }
    });
    frame.render_widget(
        Table::new(body, constraints)
            .header(header)
            .column_spacing(1),
        area,
    );
    body_area(area)
}

/// Says on the first body row why the table is empty.
pub fn render_empty_note(frame: &mut Frame, body_area: Rect, note: &str) {
    let first_row = Rect {
        height: 1,
        ..body_area
    };
    frame.render_widget(Paragraph::new(note), first_row);
}
