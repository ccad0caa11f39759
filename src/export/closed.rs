//! The connection log as series: `netlens_tcp_closed_total{how,netns}`, the
//! TCP connections that ended since netlens started, by how they ended, and
//! `netlens_tcp_closed_lost_total`, the close notifications the kernel
//! dropped before netlens read them.

use super::render::{escape, family};
use crate::model::Sample;
use crate::model::closed::Ending;
use std::fmt::Write;

pub fn render(out: &mut String, sample: &Sample, ns: &str) {
    let Some(closed) = &sample.closed else {
        return;
    };
    if closed.error.is_some() {
        return;
    }
    family(
        out,
        "netlens_tcp_closed",
        "counter",
        None,
        "TCP connections that ended since netlens started, by how (fin, rst-received, rst-sent, rst: sent or received, timeout, refused, syn-timeout, unreachable), from sock_diag destroy notifications",
    );
    for ending in Ending::ALL {
        let _ = writeln!(
            out,
            "netlens_tcp_closed_total{{how=\"{}\",netns=\"{}\"}} {}",
            ending.name(),
            escape(ns),
            closed.total(ending)
        );
    }
    family(
        out,
        "netlens_tcp_closed_lost",
        "counter",
        None,
        "TCP close notifications the kernel dropped because netlens' receive queue was full",
    );
    let _ = writeln!(
        out,
        "netlens_tcp_closed_lost_total{{netns=\"{}\"}} {}",
        escape(ns),
        closed.lost
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::closed::ClosedSample;

    #[test]
    fn one_series_per_ending_and_the_lost_count() {
        let mut totals = vec![0; Ending::ALL.len()];
        totals[0] = 41;
        totals[4] = 2;
        let sample = Sample {
            closed: Some(ClosedSample {
                totals,
                lost: 3,
                ..ClosedSample::default()
            }),
            ..Sample::default()
        };
        let mut out = String::new();
        render(&mut out, &sample, "blue");
        assert!(out.contains("netlens_tcp_closed_total{how=\"fin\",netns=\"blue\"} 41\n"));
        assert!(out.contains("netlens_tcp_closed_total{how=\"timeout\",netns=\"blue\"} 2\n"));
        assert!(out.contains("netlens_tcp_closed_total{how=\"refused\",netns=\"blue\"} 0\n"));
        assert!(out.contains("netlens_tcp_closed_lost_total{netns=\"blue\"} 3\n"));
        let unavailable = Sample {
            closed: Some(ClosedSample::unavailable("no".into())),
            ..Sample::default()
        };
        let mut none = String::new();
        render(&mut none, &unavailable, "blue");
        assert!(none.is_empty());
    }
}
