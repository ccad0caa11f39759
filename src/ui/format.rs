//! Number formatting shared by the views.

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
}
