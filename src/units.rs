//! Text to values and back: the durations, rates and speeds a user types
//! (options, the config file, prompts), each with its limits and a one-line
//! error. No clap here; cli uses these as value parsers.

use std::time::Duration;

/// The longest sampling interval (`--interval`, the config's `interval`).
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);
/// The longest DNS timeout (`--dns-timeout`).
pub const MAX_DNS_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest of every other duration (`--duration`, offsets in a
/// recording, load options): a year. Anything longer is a typo, and a cap
/// keeps deadlines (now + duration) far from overflowing.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// A sampling interval: from 100 ms (so a typo cannot turn the sampler into
/// a busy loop) to [`MAX_INTERVAL`].
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = parse_duration_upto(text, MAX_INTERVAL)?;
    if interval < Duration::from_millis(100) {
        return Err(format!(
            "'{text}' is too short: the interval must be at least 100ms"
        ));
    }
    Ok(interval)
}

/// A DNS timeout: up to [`MAX_DNS_TIMEOUT`].
pub fn parse_dns_timeout(text: &str) -> Result<Duration, String> {
    parse_duration_upto(text, MAX_DNS_TIMEOUT)
}

/// Parses "1s", "500ms", "2m", "1h" or a bare number of seconds ("0.5"), up
/// to [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    parse_duration_upto(text, MAX_DURATION)
}

/// A duration greater than zero and at most `max`: the one parser every
/// duration a user types goes through.
pub fn parse_duration_upto(text: &str, max: Duration) -> Result<Duration, String> {
    let text = text.trim();
    let (value, unit) = number_and_unit(text)
        .ok_or_else(|| format!("'{text}' is not a duration (try 1s, 500ms, 2m)"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "unknown unit '{unit}' in '{text}' (use ms, s, m or h)"
            ));
        }
    };
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!("'{text}' must be greater than zero"));
    }
    if seconds > max.as_secs_f64() {
        return Err(format!("'{text}' is too long (at most {})", show_max(max)));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// "1.5G" -> (1.5, "G"): the leading decimal number and the rest.
fn number_and_unit(text: &str) -> Option<(f64, &str)> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    Some((number.parse().ok()?, unit))
}

/// A maximum as the error states it: "1h", "60s", "365 days".
fn show_max(max: Duration) -> String {
    let seconds = max.as_secs();
    match seconds {
        s if s >= 2 * 86_400 && s % 86_400 == 0 => format!("{} days", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// A duration that may be zero ("0s").
pub fn parse_duration_or_zero(text: &str) -> Result<Duration, String> {
    if text.trim().trim_end_matches(['s', 'm', 'h']).trim() == "0" {
        return Ok(Duration::ZERO);
    }
    parse_duration(text)
}

/// The smallest `--max-size`: a ring must hold a few records.
pub const MIN_SIZE: u64 = 64 << 10;

/// A size in bytes: "500M", "2G", "64k" or a bare number of bytes,
/// 1024-based (as du -h shows them), from [`MIN_SIZE`] to 1 TiB.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (value, unit) =
        number_and_unit(text).ok_or_else(|| format!("'{text}' is not a size (try 500M, 2G)"))?;
    let scale: u64 = match unit.trim_end_matches(['B', 'i']) {
        "" => 1,
        "k" | "K" => 1 << 10,
        "M" | "m" => 1 << 20,
        "G" | "g" => 1 << 30,
        "T" | "t" => 1 << 40,
        _ => {
            return Err(format!(
                "unknown unit '{unit}' in '{text}' (use k, M, G or T)"
            ));
        }
    };
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < MIN_SIZE as f64 {
        return Err(format!("'{text}' is too small (at least 64k)"));
    }
    if bytes > (1u64 << 40) as f64 {
        return Err(format!("'{text}' is too large (at most 1T)"));
    }
    Ok(bytes as u64)
}

/// A bit rate: "0", "500k", "100M", "1.5G" (1000-based), bits per second.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, factor) = match text.chars().last() {
        Some('k' | 'K') => (&text[..text.len() - 1], 1e3),
        Some('m' | 'M') => (&text[..text.len() - 1], 1e6),
        Some('g' | 'G') => (&text[..text.len() - 1], 1e9),
        _ => (text, 1.0),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a rate (try 100M, 1G, 500k or 0)"))?;
    let bits = value * factor;
    if !bits.is_finite() || !(0.0..=1e12).contains(&bits) {
        return Err(format!("'{text}' is out of range (0 to 1T bits/s)"));
    }
    Ok(bits as u64)
}

/// Requests per second: a finite number, 0 or more.
pub fn parse_request_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && (0.0..=10_000_000.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "'{text}' is not a request rate (a number of requests per second, 0 for no limit)"
        )),
    }
}

/// The most probes per second `netlens trace --rate` allows: a prober, not
/// a flood.
pub const MAX_PROBE_RATE: f64 = 1000.0;

/// Probes per second for `netlens trace`: above 0, at most [`MAX_PROBE_RATE`].
pub fn parse_probe_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 && rate <= MAX_PROBE_RATE => Ok(rate),
        Ok(rate) if rate > MAX_PROBE_RATE => Err(format!(
            "'{text}' is too high: at most {MAX_PROBE_RATE} probes per second"
        )),
        _ => Err(format!(
            "'{text}' is not a probe rate (probes per second, above 0, at most {MAX_PROBE_RATE})"
        )),
    }
}

/// A probe timeout: above 0, at most a minute.
pub fn parse_probe_timeout(text: &str) -> Result<Duration, String> {
    parse_duration_upto(text, Duration::from_secs(60))
}

/// A replay speed within 0.25x-4096x (`record::player::MAX_SPEED`).
pub fn parse_speed(text: &str) -> Result<f64, String> {
    let speed: f64 = text
        .trim_end_matches('x')
        .parse()
        .map_err(|_| format!("'{text}' is not a speed (try 0.5, 2 or 16)"))?;
    if !(0.25..=4096.0).contains(&speed) {
        return Err(format!("'{text}' is outside 0.25 to 4096"));
    }
    Ok(speed)
}
