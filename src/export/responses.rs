//! Servers' response times as a histogram,
//! `netlens_server_response_seconds{server,netns}`: the capture's
//! cumulative counts (`model::responses`) folded into fixed `le` bounds,
//! so `histogram_quantile` over `rate(..._bucket[5m])` gives the
//! percentiles the Flows tab's servers grouping shows per interval.

use super::render::{escape, family};
use crate::model::Sample;
use std::fmt::Write;

/// The bounds, seconds: 1 ms to 10 s, as latency histograms usually are.
pub const LE_SECONDS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

pub fn render(out: &mut String, sample: &Sample, ns: &str) {
    let Some(capture) = &sample.capture else {
        return;
    };
    if capture.responses.is_empty() {
        return;
    }
    let name = "netlens_server_response_seconds";
    family(
        out,
        name,
        "histogram",
        Some("seconds"),
        "Servers' response times timed from packets: a request's last segment to its answer's first (TLS too), per server address",
    );
    let ns = escape(ns);
    for s in &capture.responses {
        let labels = format!("server=\"{}\",netns=\"{ns}\"", escape(&s.server));
        for le in LE_SECONDS {
            // A fine bucket counts under a bound by its requests' mean,
            // exact for alike requests.
            let count: u64 = s
                .buckets
                .iter()
                .filter(|&&(_, n, sum)| n > 0 && sum / n as f64 <= le * 1000.0)
                .map(|&(_, n, _)| n)
                .sum();
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{le:?}\"}} {count}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", s.answered);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", s.answered);
        let _ = writeln!(out, "{name}_sum{{{labels}}} {:?}", s.sum_ms / 1000.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::capture::CaptureSample;
    use crate::model::responses::{ResponseSample, bucket_of};

    #[test]
    fn buckets_are_cumulative_under_each_bound() {
        let sample = Sample {
            capture: Some(CaptureSample {
                responses: vec![ResponseSample {
                    server: "198.18.0.1:8080".into(),
                    answered: 30,
                    sum_ms: 10.0 * 4.0 + 20.0 * 250.0,
                    buckets: vec![(bucket_of(4.0), 10, 40.0), (bucket_of(250.0), 20, 5000.0)],
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut out = String::new();
        render(&mut out, &sample, "host");
        let series = |le: &str| {
            format!(
                "netlens_server_response_seconds_bucket{{server=\"198.18.0.1:8080\",netns=\"host\",le=\"{le}\"}} "
            )
        };
        for (le, want) in [
            ("0.0025", 0),
            ("0.005", 10),
            ("0.1", 10),
            ("0.25", 30),
            ("+Inf", 30),
        ] {
            assert!(
                out.contains(&format!("{}{want}\n", series(le))),
                "{le}: {out}"
            );
        }
        assert!(out.contains("netlens_server_response_seconds_sum{server=\"198.18.0.1:8080\",netns=\"host\"} 5.04\n"), "{out}");
    }
}
