//! Times in a recording: `--at` and the `t` prompt, and the clock shown in
//! the timeline.

use crate::units::parse_duration;

/// The local time zone's offset from UTC at `t`, seconds.
pub fn local_offset(t: f64) -> i64 {
    crate::clock::utc_offset(t.floor() as i64)
}

/// "HH:MM:SS" of `t` at `offset` seconds from UTC.
pub fn clock(t: f64, offset: i64) -> String {
    let seconds = (t.floor() as i64 + offset).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// "1:02:03" or "02:03" for a span of seconds.
pub fn span(seconds: f64) -> String {
    let seconds = seconds.max(0.0).round() as u64;
    if seconds >= 3600 {
        format!(
            "{}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        )
    } else {
        format!("{:02}:{:02}", seconds / 60, seconds % 60)
    }
}

/// Reads a time to jump to, as wall-clock seconds:
/// - `HH:MM` or `HH:MM:SS`: that clock time (the first one at or after the
///   start of the recording);
/// - `+D` / `-D` (`+30s`, `-5m`): relative to `current`;
/// - `D` (`90s`, `10m`, `1h`): that far from the start (`0` or `0s`: the
///   start itself).
pub fn parse_at(text: &str, start: f64, current: f64, offset: i64) -> Result<f64, String> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('+') {
        return Ok(current + parse_duration(rest)?.as_secs_f64());
    }
    if let Some(rest) = text.strip_prefix('-') {
        return Ok(current - parse_duration(rest)?.as_secs_f64());
    }
    if text.contains(':') {
        let parts: Vec<&str> = text.split(':').collect();
        let numbers: Option<Vec<u32>> = parts.iter().map(|p| p.parse().ok()).collect();
        let clock = match numbers.as_deref() {
            Some([h, m]) if *h < 24 && *m < 60 => h * 3600 + m * 60,
            Some([h, m, s]) if *h < 24 && *m < 60 && *s < 60 => h * 3600 + m * 60 + s,
            _ => {
                return Err(format!(
                    "'{text}' is not a time of day (use HH:MM or HH:MM:SS)"
                ));
            }
        };
        let local_start = start.floor() as i64 + offset;
        let day = local_start - local_start.rem_euclid(86_400);
        let mut at = (day + i64::from(clock) - offset) as f64;
        if at < start.floor() {
            at += 86_400.0;
        }
        return Ok(at);
    }
    crate::units::parse_duration_or_zero(text)
        .map(|d| start + d.as_secs_f64())
        .map_err(|error| {
            // A number with a bad unit or out of range: the duration's own
            // reason; anything else is not a time at all.
            if text.starts_with(|c: char| c.is_ascii_digit()) {
                error
            } else {
                format!("'{text}' is not a time (try 14:05:30, +30s, -5m or 10m)")
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_and_span() {
        assert_eq!(clock(3661.5, 0), "01:01:01");
        assert_eq!(clock(0.0, -3600), "23:00:00");
        assert_eq!(span(59.6), "01:00");
        assert_eq!(span(3725.0), "1:02:05");
    }

    #[test]
    fn times_of_day_offsets_and_durations() {
        // 2024-01-01 10:00:00 UTC.
        let start = 1_704_103_200.0;
        assert_eq!(parse_at("10:05", start, start, 0), Ok(start + 300.0));
        assert_eq!(parse_at("11:00:30", start, start, 3600), Ok(start + 30.0));
        assert_eq!(
            parse_at("09:59", start, start, 0),
            Ok(start + 86_400.0 - 60.0)
        );
        assert_eq!(parse_at("+30s", start, start + 10.0, 0), Ok(start + 40.0));
        assert_eq!(parse_at("-1m", start, start + 100.0, 0), Ok(start + 40.0));
        assert_eq!(parse_at("10m", start, start + 100.0, 0), Ok(start + 600.0));
        // Back to the start, as the replay benchmark's first jump types it.
        assert_eq!(parse_at("0s", start, start + 100.0, 0), Ok(start));
        assert_eq!(parse_at("0", start, start + 100.0, 0), Ok(start));
        assert!(parse_at("25:00", start, start, 0).is_err());
        assert!(
            parse_at("soon", start, start, 0)
                .unwrap_err()
                .contains("not a time")
        );
    }
}
