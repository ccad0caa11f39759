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
    for (key, counts) in failures.groups() {
        let _ = writeln!(
            out,
            "netlens_failed_total{{kind=\"{}\",process=\"{}\",container=\"{}\",destination=\"{}\",question=\"{}\",netns=\"{}\"}} {}",
            key.kind.name(),
            escape(&key.comm),
            escape(key.container.as_deref().unwrap_or("")),
            escape(&key.destination),
            escape(key.question.as_deref().unwrap_or("")),
            escape(ns),
            counts.count
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
}
