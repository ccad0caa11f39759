//! Failed connections and DNS queries as series:
//! `netlens_failed_total{kind,process,container,destination,question,netns}`,
//! counted since the exporter started (`model::failed::Failures`, at most
//! `MAX_GROUPS` series; the rest in `netlens_failed_overflow_total`).

use super::render::{escape, family};
use crate::model::failed::Failures;
use std::fmt::Write;

pub fn render(out: &mut String, failures: &Failures, ns: &str) {
    family(
        out,
        "netlens_failed",
        "counter",
        None,
        "TCP connections that failed (refused, syn-timeout, unreachable, reset, timeout) and DNS queries without a good answer (dns-no-answer, dns-nxdomain, dns-servfail, ...) since the exporter started, by process, container and destination",
    );
    // A group is per process id too; the series are not (a pid label
    // would make a series of every short-lived client): groups of one
    // command's processes add up in one series.
    let mut series: std::collections::BTreeMap<_, u64> = std::collections::BTreeMap::new();
    for (key, counts) in failures.groups() {
        let labels = (
            key.kind.name(),
            key.comm.as_str(),
            key.container.as_deref().unwrap_or(""),
            key.destination.as_str(),
            key.question.as_deref().unwrap_or(""),
        );
        *series.entry(labels).or_default() += counts.count;
    }
    for ((kind, comm, container, destination, question), count) in series {
        let _ = writeln!(
            out,
            "netlens_failed_total{{kind=\"{kind}\",process=\"{}\",container=\"{}\",destination=\"{}\",question=\"{}\",netns=\"{}\"}} {count}",
            escape(comm),
            escape(container),
            escape(destination),
            escape(question),
            escape(ns),
        );
    }
    family(
        out,
        "netlens_failed_overflow",
        "counter",
        None,
        "Failures not in a netlens_failed series: their group came after the first 2000",
    );
    let _ = writeln!(
        out,
        "netlens_failed_overflow_total{{netns=\"{}\"}} {}",
        escape(ns),
        failures.overflow
    );
}

#[cfg(test)]
mod tests {
    use crate::model::closed::Ending;
    use crate::model::failed::Failures;
    use crate::model::failed::tests::{conn, sample};

    #[test]
    fn each_group_is_a_counter_with_escaped_labels() {
        let mut refused = conn(1.0, Ending::Refused, 7, "198.18.0.2:81");
        refused.users[0].process = "cu\"rl".into();
        let sample = sample(0.0, vec![refused.clone(), refused], Vec::new());
        let mut out = String::new();
        super::render(&mut out, &Failures::of([&sample]), "blue");
        assert!(out.contains(
            "netlens_failed_total{kind=\"refused\",process=\"cu\\\"rl\",container=\"\",destination=\"198.18.0.2:81\",question=\"\",netns=\"blue\"} 2\n"
        ), "{out}");
        assert!(out.contains("netlens_failed_overflow_total{netns=\"blue\"} 0\n"));
    }

    #[test]
    fn processes_of_one_command_share_a_series() {
        let first = conn(1.0, Ending::Refused, 7, "198.18.0.2:81");
        let mut second = first.clone();
        second.users[0].pid = 8;
        let sample = sample(0.0, vec![first, second], Vec::new());
        let mut out = String::new();
        super::render(&mut out, &Failures::of([&sample]), "blue");
        let series: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("netlens_failed_total"))
            .collect();
        assert_eq!(series.len(), 1, "{out}");
        assert!(series[0].ends_with(" 2"), "{out}");
    }
}
