//! Numbers the way iperf3 and wrk print them.

/// iperf3's transfer column: 1024-based, "1.25 GBytes".
pub fn transfer(bytes: f64) -> String {
    let units = ["Bytes", "KBytes", "MBytes", "GBytes", "TBytes"];
    let (mut value, mut unit) = (bytes, 0);
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} {}", units[0])
    } else {
        format!("{value:.2} {}", units[unit])
    }
}

/// iperf3's bitrate column: 1000-based, "27.5 Gbits/sec".
pub fn bitrate(bits_per_s: f64) -> String {
    let units = [
        "bits/sec",
        "Kbits/sec",
        "Mbits/sec",
        "Gbits/sec",
        "Tbits/sec",
    ];
    let (mut value, mut unit) = (bits_per_s, 0);
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.2} {}", units[unit])
}

/// A count with a k/M suffix, wrk style: "12.34k".
pub fn count(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.2}M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.2}k", value / 1e3)
    } else {
        format!("{value:.2}")
    }
}

/// Milliseconds the way wrk prints latencies: "812.00us", "1.23ms", "2.01s".
pub fn millis(ms: f64) -> String {
    if ms < 1.0 {
        format!("{:.2}us", ms * 1000.0)
    } else if ms < 1000.0 {
        format!("{ms:.2}ms")
    } else {
        format!("{:.2}s", ms / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf_units() {
        assert_eq!(transfer(512.0), "512 Bytes");
        assert_eq!(transfer(3.0 * 1024.0 * 1024.0 * 1024.0), "3.00 GBytes");
        assert_eq!(bitrate(27_500_000_000.0), "27.50 Gbits/sec");
        assert_eq!(bitrate(999.0), "999.00 bits/sec");
        assert_eq!(count(12_340.0), "12.34k");
        assert_eq!(millis(0.812), "812.00us");
        assert_eq!(millis(2010.0), "2.01s");
    }
}
