//! What the table tabs draw alike: which columns fit, their widths, the
//! header row with the sort marker, the selected row, and the note in an
//! empty table.

use super::theme::Theme;
use crate::app::table::{ColumnSpec, Window};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

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

/// What a table tab's table is drawn from besides its rows: the columns,
/// the view's window, sort and selection.
pub struct Drawn<'a, C: 'static> {
    pub columns: &'static [ColumnSpec<C>],
    pub window: &'a mut Window,
    /// The columns that fit, noted for the sort cycle.
    pub on_screen: &'a mut Vec<C>,
    pub sorted: Option<C>,
    pub descending: bool,
    pub selected: Option<usize>,
    /// The column that takes the width left over.
    pub flexible: C,
    pub right_aligned: fn(C) -> bool,
}

/// Draws `rows` in `area`: the columns that fit, the header with the sort
/// marker, and the rows the window shows around the selection, `cell`
/// filling each. Returns the body's area and first row (for clicks and
/// the empty note); None when only the header fits.
pub fn render_rows<C: Copy + PartialEq, R>(
    frame: &mut Frame,
    area: Rect,
    drawn: Drawn<'_, C>,
    rows: &[R],
    cell: impl Fn(&R, &ColumnSpec<C>) -> Cell<'static>,
    theme: Theme,
) -> Option<(Rect, usize)> {
    let visible = usize::from(area.height.saturating_sub(1));
    drawn.window.fit(drawn.selected, rows.len(), visible);
    let columns = fitting(drawn.columns, area.width, |_| true);
    *drawn.on_screen = columns.iter().map(|spec| spec.column).collect();
    let sorted = drawn.sorted;
    let header = header(
        &columns,
        |c| sorted == Some(c),
        drawn.descending,
        drawn.right_aligned,
        theme,
    );
    let offset = drawn.window.offset;
    let body = rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(visible)
        .map(|(i, row)| {
            let cells = columns.iter().map(|spec| cell(row, spec));
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

/// Fits endpoint text ("198.18.0.1:40000 > 198.18.0.2:5201", "[2001:db8::1]:443",
/// a host) into `width` columns. Addresses and ports are a row's identity,
/// so the port numbers stay whole: the addresses are cut in the middle,
/// the longest first, each cut marked with '…'. Only when the ports alone
/// do not fit is the end cut (also with '…').
pub fn fit_endpoints(text: &str, width: usize) -> String {
    let total = text.chars().count();
    if total <= width {
        return text.to_string();
    }
    // Tokens split on spaces: (address, its length now, the kept port).
    let mut parts: Vec<(Vec<char>, usize, &str)> = text
        .split(' ')
        .map(|token| {
            let (addr, port) = split_port(token);
            let addr: Vec<char> = addr.chars().collect();
            let len = addr.len();
            (addr, len, port)
        })
        .collect();
    let mut over = total - width;
    while over > 0 {
        // The longest address still longer than its '…'.
        let Some(longest) = parts
            .iter_mut()
            .filter(|(addr, len, _)| *len > 1 && !is_separator(addr))
            .max_by_key(|(_, len, _)| *len)
        else {
            break;
        };
        longest.1 -= 1;
        over -= 1;
    }
    let joined = parts
        .iter()
        .map(|(addr, len, port)| format!("{}{port}", shortened(addr, *len)))
        .collect::<Vec<_>>()
        .join(" ");
    super::format::fit(&joined, width)
}

/// `addr` in `len` characters: whole, or a third of the room kept at the
/// start and the rest at the end (where addresses of one network differ),
/// '…' between.
fn shortened(addr: &[char], len: usize) -> String {
    if len >= addr.len() {
        return addr.iter().collect();
    }
    let room = len.saturating_sub(1);
    let head = room / 3;
    let tail = room - head;
    let mut out: String = addr[..head].iter().collect();
    out.push('…');
    out.extend(&addr[addr.len() - tail..]);
    out
}

fn is_separator(token: &[char]) -> bool {
    matches!(token, ['>'] | ['→'] | ['<'] | ['-', '>'])
}

/// "addr:port" → ("addr", ":port"); "[v6]:port" → ("[v6]", ":port"); a
/// token without a port number is all address.
fn split_port(token: &str) -> (&str, &str) {
    if let Some(at) = token.rfind(':') {
        let (addr, port) = token.split_at(at);
        let numeric = port.len() > 1 && port[1..].chars().all(|c| c.is_ascii_digit() || c == '*');
        let single = !addr.contains(':') || addr.ends_with(']');
        if numeric && single {
            return (addr, port);
        }
    }
    (token, "")
}

#[cfg(test)]
mod tests {
    use super::fit_endpoints;

    #[test]
    fn endpoints_keep_their_ports_and_mark_every_cut() {
        let flow = "198.18.99.1:40001 > 198.18.99.2:5201";
        assert_eq!(fit_endpoints(flow, 80), flow);
        let cut = fit_endpoints(flow, 30);
        assert_eq!(cut.chars().count(), 30, "{cut}");
        assert!(cut.ends_with(":5201") && cut.contains(":40001 > "), "{cut}");
        assert!(cut.contains('…'), "{cut}");
        // Two flows to ports 5201 and 5202 stay apart however narrow.
        for width in [16, 20, 26] {
            let a = fit_endpoints(flow, width);
            let b = fit_endpoints(&flow.replace("5201", "5202"), width);
            assert_ne!(a, b, "{width}");
            assert!(a.chars().count() <= width, "{a}");
        }
        assert_eq!(fit_endpoints(flow, 16), "…:40001 > …:5201");
        let v6 = "[2001:db8::1]:443";
        assert_eq!(fit_endpoints(v6, 10), "[…::1]:443");
        // No room even for the ports: the end is cut, marked.
        assert!(fit_endpoints(flow, 8).ends_with('…'));
    }
}
