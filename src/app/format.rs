//! Number and text formatting shared by the views: app/ builds the table
//! cells with it (ui/ re-exports it as `ui::format`).

/// A rate in a fixed-width column: one decimal while small, none when big;
/// "–" when unknown (never 0).
pub fn rate(value: Option<f64>) -> String {
    match value {
        None => "–".into(),
        Some(v) if v < 100_000.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
    }
}

/// Bits per second the way ifconfig-era tools print it: 1.23 Mb/s.
pub fn bits(bits_per_s: f64) -> String {
    scaled(bits_per_s, 1000.0, &["b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s"])
}

/// Compact bits per second for the header: 880.5Mb/s.
pub fn bits_short(bits_per_s: f64) -> String {
    let (value, unit) = scale(bits_per_s, 1000.0, &["b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s"]);
    format!("{value:.1}{unit}")
}

/// Compact packets per second for the header: 80.1kp/s.
pub fn packets_short(per_s: f64) -> String {
    let (value, unit) = scale(per_s, 1000.0, &["p/s", "kp/s", "Mp/s", "Gp/s"]);
    format!("{value:.1}{unit}")
}

/// Packets per second with an SI suffix: 12.3k p/s.
pub fn packets(per_s: f64) -> String {
    scaled(per_s, 1000.0, &["p/s", "kp/s", "Mp/s", "Gp/s"])
}

/// A byte count in binary units: 1.5 MiB.
pub fn bytes(count: f64) -> String {
    scaled(count, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
}

/// A byte count in at most 8 characters, for table columns: three
/// significant digits ("9.78 MiB", "59.7 MiB", "119 MiB", "1023 MiB"), so a
/// right-aligned cell never loses its leading digits.
pub fn bytes_short(count: f64) -> String {
    match scale(count, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"]) {
        (value, "B") => format!("{value:.0} B"),
        (value, unit) if value < 9.995 => format!("{value:.2} {unit}"),
        (value, unit) if value < 99.95 => format!("{value:.1} {unit}"),
        (value, unit) => format!("{value:.0} {unit}"),
    }
}

/// A count in at most `width` characters: whole when it fits, else with an
/// SI suffix ("12.3M").
pub fn count_short(n: u64, width: usize) -> String {
    let whole = n.to_string();
    if whole.len() <= width {
        return whole;
    }
    let (value, unit) = scale(n as f64, 1000.0, &["", "k", "M", "G", "T", "P"]);
    if value < 99.95 {
        format!("{value:.1}{unit}")
    } else {
        format!("{value:.0}{unit}")
    }
}

/// Bytes per second in a table cell: "11.9 MiB/s", "–" when unknown.
pub fn per_s(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |v| format!("{}/s", bytes_short(v)))
}

/// The value divided down to the largest unit it reaches.
fn scale<'u>(mut value: f64, step: f64, units: &[&'u str]) -> (f64, &'u str) {
    let mut unit = 0;
    while value.abs() >= step && unit + 1 < units.len() {
        value /= step;
        unit += 1;
    }
    (value, units[unit])
}

fn scaled(value: f64, step: f64, units: &[&str]) -> String {
    match scale(value, step, units) {
        (value, unit) if unit == units[0] => format!("{value:.0} {unit}"),
        (value, unit) => format!("{value:.2} {unit}"),
    }
}

/// "10G full", "100M half", "–".
pub fn speed(mbps: Option<u32>, duplex: crate::model::Duplex) -> String {
    use crate::model::Duplex;
    let Some(mbps) = mbps else {
        return "–".into();
    };
    let speed = if mbps >= 1000 && mbps % 1000 == 0 {
        format!("{}G", mbps / 1000)
    } else {
        format!("{mbps}M")
    };
    match duplex {
        Duplex::Full => format!("{speed} full"),
        Duplex::Half => format!("{speed} half"),
        Duplex::Unknown => speed,
    }
}

/// Truncates to `width` columns, marking the cut with '…'.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Greedy word wrap into lines of at most `width` characters (a longer
/// word stays whole on its own line).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
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
    fit(&joined, width)
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

/// An endpoint in `width` columns: whole when it fits, else the address
/// cut with "…" before the port, which always shows (as ss does with -W
/// off it is the port that tells a service).
pub fn fit_endpoint(text: &str, width: u16) -> String {
    let width = usize::from(width);
    if text.chars().count() <= width {
        return text.to_string();
    }
    let Some((address, port)) = text.rsplit_once(':') else {
        return fit(text, width);
    };
    // "[v6]": the bracket stays, so the port still reads as one.
    let close = if address.ends_with(']') { "]" } else { "" };
    let room = width.saturating_sub(port.chars().count() + 2 + close.len());
    let kept: String = address.chars().take(room).collect();
    format!("{kept}…{close}:{port}")
}

/// A row's namespace in `width` characters: its container's name when it
/// has one, else its label (the Sockets and Interfaces NS column).
pub fn netns_cell(sample: &crate::model::Sample, id: u16, width: u16) -> String {
    let info = sample.namespaces.iter().find(|n| n.id == id);
    let text = match info.and_then(|n| n.container.as_deref()) {
        Some(container) => container,
        None => sample.netns_label(id),
    };
    fit(text, usize::from(width))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Duplex;

    #[test]
    fn formats() {
        assert_eq!(rate(None), "–");
        assert_eq!(rate(Some(0.0)), "0.0");
        assert_eq!(rate(Some(123_456.7)), "123457");
        assert_eq!(bits(1_234_000.0), "1.23 Mb/s");
        assert_eq!(bits(999.0), "999 b/s");
        assert_eq!(packets(12_300.0), "12.30 kp/s");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(speed(Some(10000), Duplex::Full), "10G full");
        assert_eq!(speed(Some(100), Duplex::Half), "100M half");
        assert_eq!(speed(None, Duplex::Full), "–");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }

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
