//! The two exposition formats a scrape can ask for, chosen from its Accept
//! header as Prometheus' client_golang chooses: OpenMetrics 1.0 when asked
//! for, the classic text format 0.0.4 otherwise (older Prometheus servers,
//! promtool, many agents). Both come from the same rendered series: the
//! classic page is the OpenMetrics page with the few lines the two formats
//! write differently rewritten.

use std::sync::Arc;

pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const CLASSIC: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Which format a scrape gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Classic,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => OPENMETRICS,
            Format::Classic => CLASSIC,
        }
    }
}

/// One sample's page in both formats, rendered once and shared by every
/// scrape until the next sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Pages {
    pub openmetrics: Arc<str>,
    pub classic: Arc<str>,
    /// When the sample was taken (Unix seconds) and its namespace's label
    /// (escaped): each scrape adds the sample's age at that time.
    pub taken: f64,
    pub netns: String,
}

/// The one series written at each scrape rather than with the sample.
const AGE: &str = "netlens_sample_age_seconds";

impl Pages {
    pub fn new(openmetrics: String, taken: f64, netns: &str) -> Self {
        let classic = classic(&openmetrics);
        Self {
            openmetrics: openmetrics.into(),
            classic: classic.into(),
            taken,
            netns: super::render::escape(netns).into_owned(),
        }
    }

    /// The page in `format` served at `now_t` (Unix seconds), in two parts:
    /// the shared text, then the sample's age at `now_t` (and OpenMetrics'
    /// closing `# EOF`, which must come last).
    pub fn served(&self, format: Format, now_t: f64) -> (&str, String) {
        let text: &str = self.get(format);
        let shared = text.strip_suffix("# EOF\n").unwrap_or(text);
        let mut tail = format!("# TYPE {AGE} gauge\n");
        if format == Format::OpenMetrics {
            tail.push_str(&format!("# UNIT {AGE} seconds\n"));
        }
        tail.push_str(&format!(
            "# HELP {AGE} Seconds since the sample served was taken, at the scrape\n\
             {AGE}{{netns=\"{}\"}} {}\n",
            self.netns,
            (now_t - self.taken).max(0.0)
        ));
        if shared.len() < text.len() {
            tail.push_str("# EOF\n");
        }
        (shared, tail)
    }

    pub fn get(&self, format: Format) -> &Arc<str> {
        match format {
            Format::OpenMetrics => &self.openmetrics,
            Format::Classic => &self.classic,
        }
    }
}

/// Media ranges in an Accept header, at most this many looked at.
const MAX_MEDIA_RANGES: usize = 32;

/// The format for a request's Accept header (None: no header). Media ranges
/// are tried by falling q, earlier first among equals; the first one that
/// names OpenMetrics (version 1.0.0, 0.0.1 or none) or the text format
/// (version 0.0.4 or none) decides. Anything else: the classic format.
pub fn negotiate(accept: Option<&str>) -> Format {
    let Some(accept) = accept else {
        return Format::Classic;
    };
    let mut ranges: Vec<(f64, &str, Option<&str>)> = accept
        .split(',')
        .take(MAX_MEDIA_RANGES)
        .filter_map(|range| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().filter(|m| !m.is_empty())?;
            let mut q = 1.0;
            let mut version = None;
            for param in parts {
                let Some((key, value)) = param.split_once('=') else {
                    continue;
                };
                let value = value.trim().trim_matches('"');
                match key.trim().to_ascii_lowercase().as_str() {
                    "q" => q = value.parse().unwrap_or(0.0),
                    "version" => version = Some(value),
                    _ => {}
                }
            }
            Some((q, media, version))
        })
        .filter(|(q, _, _)| *q > 0.0)
        .collect();
    // Stable: ranges of equal q keep the client's order.
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, media, version) in ranges {
        if media.eq_ignore_ascii_case("application/openmetrics-text")
            && matches!(version, None | Some("1.0.0" | "0.0.1"))
        {
            return Format::OpenMetrics;
        }
        if media.eq_ignore_ascii_case("text/plain") && matches!(version, None | Some("0.0.4")) {
            return Format::Classic;
        }
    }
    Format::Classic
}

/// The classic text format of an OpenMetrics page netlens rendered. Where
/// they differ: a counter's family is named with its `_total` suffix (so
/// its HELP and TYPE name the sample, as promtool wants), and there is no
/// UNIT line and no `# EOF`. Histograms, gauges, labels and escaping are
/// the same in both.
pub fn classic(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len() + openmetrics.len() / 16);
    let mut counters: Vec<&str> = Vec::new();
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ")
            && let Some(name) = rest.strip_suffix(" counter")
        {
            counters.push(name);
            out.push_str("# TYPE ");
            out.push_str(name);
            out.push_str("_total counter\n");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ")
            && let Some((name, help)) = rest.split_once(' ')
            && counters.last() == Some(&name)
        {
            out.push_str("# HELP ");
            out.push_str(name);
            out.push_str("_total ");
            out.push_str(help);
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMETHEUS_2: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

    #[test]
    fn the_accept_header_picks_the_format() {
        assert_eq!(negotiate(Some(PROMETHEUS_2)), Format::OpenMetrics);
        assert_eq!(negotiate(None), Format::Classic);
        assert_eq!(negotiate(Some("*/*")), Format::Classic);
        assert_eq!(
            negotiate(Some("text/plain; version=0.0.4; charset=utf-8")),
            Format::Classic
        );
        assert_eq!(
            negotiate(Some("application/openmetrics-text")),
            Format::OpenMetrics
        );
        // By q, not by position.
        assert_eq!(
            negotiate(Some(
                "application/openmetrics-text;q=0.2, text/plain;version=0.0.4;q=0.9"
            )),
            Format::Classic
        );
        // An OpenMetrics version netlens does not write, or q=0: not chosen.
        assert_eq!(
            negotiate(Some("application/openmetrics-text;version=2.0.0")),
            Format::Classic
        );
        assert_eq!(
            negotiate(Some("application/openmetrics-text;q=0")),
            Format::Classic
        );
        assert_eq!(
            negotiate(Some("Application/OpenMetrics-Text; Version=\"1.0.0\"")),
            Format::OpenMetrics
        );
    }

    #[test]
    fn the_classic_page_names_counter_families_by_their_samples() {
        let om = "# TYPE node_network_receive_bytes counter\n\
                  # UNIT node_network_receive_bytes bytes\n\
                  # HELP node_network_receive_bytes Bytes received\n\
                  node_network_receive_bytes_total{device=\"lo\"} 5\n\
                  # TYPE node_network_up gauge\n\
                  # HELP node_network_up 1 when up\n\
                  node_network_up{device=\"lo\"} 1\n\
                  # EOF\n";
        assert_eq!(
            classic(om),
            "# TYPE node_network_receive_bytes_total counter\n\
             # HELP node_network_receive_bytes_total Bytes received\n\
             node_network_receive_bytes_total{device=\"lo\"} 5\n\
             # TYPE node_network_up gauge\n\
             # HELP node_network_up 1 when up\n\
             node_network_up{device=\"lo\"} 1\n"
        );
    }
}
