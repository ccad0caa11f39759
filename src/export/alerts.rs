//! Prometheus alerting rules for every finding netlens can raise, and for
//! the raw signals a fleet watches, generated from the findings' own tables
//! (names, the counter catalogue) so a new finding gets its rule with no
//! second list. `assets/netlens-alerts.yml` is this file's output;
//! tests/docs/alerts.rs keeps it fresh and runs `promtool check rules` and
//! `promtool test rules` on it.

use crate::findings::{catalogue, drops, names, path};
use std::fmt::Write;

/// One alerting rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// "NetlensListenOverflow": a valid metric name, as Prometheus wants.
    pub alert: String,
    /// The finding id it watches; None for a raw-signal rule.
    pub finding: Option<String>,
    pub expr: String,
    /// How long the condition must hold, as Prometheus writes a duration.
    pub hold: &'static str,
    /// A fixed severity label; finding rules take the series' own.
    pub severity: Option<&'static str>,
    pub summary: String,
    pub fix: String,
}

/// Findings hold their own hysteresis; one minute more keeps a rule from
/// paging on a single scrape.
const FINDING_HOLD: &str = "1m";

/// "counter:TcpExt.ListenDrops" -> "NetlensCounterTcpExtListenDrops".
pub fn alert_name(id: &str) -> String {
    let mut name = String::from("Netlens");
    for part in id.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            name.push(first.to_ascii_uppercase());
            name.extend(chars);
        }
    }
    name
}

/// The summary annotation of a finding rule: where, then what it means.
pub fn finding_summary(means: &str) -> String {
    format!("{{{{ $labels.instance }}}} netns {{{{ $labels.netns }}}}: {means}")
}

fn finding_rule(id: &str, means: &str, fix: &str) -> Rule {
    Rule {
        alert: alert_name(id),
        finding: Some(id.to_string()),
        expr: format!(
            "max by (instance, job, netns, severity) (netlens_finding{{id=\"{id}\"}}) > 0"
        ),
        hold: FINDING_HOLD,
        severity: None,
        summary: finding_summary(means),
        fix: fix.to_string(),
    }
}

/// Every finding id with its meaning and fix: the hand-written findings,
/// the catalogue's counters, drop reasons and connection entries that
/// raise one, and
/// `drop:unknown` (a reason newer than the catalogue). Not the on-demand
/// findings (path-loss, path-latency): only `netlens trace` and the Path
/// view raise them, no exported series carries them, and a rule that can
/// never fire would only pretend to watch the path.
pub fn findings() -> Vec<(String, String, String)> {
    let named = names::NAMES
        .iter()
        .filter(|e| !path::ON_DEMAND.contains(&e.id))
        .map(|e| (e.id.to_string(), e.means.to_string(), e.fix.to_string()));
    let counters = catalogue::entries().filter(|e| e.raises()).map(|e| {
        (
            e.finding.to_string(),
            e.meaning.to_string(),
            e.fix.to_string(),
        )
    });
    let reasons = catalogue::REASONS.iter().filter(|r| r.raises()).map(|r| {
        (
            r.finding.to_string(),
            r.meaning.to_string(),
            r.fix.to_string(),
        )
    });
    let conns = catalogue::conns::CONNS
        .iter()
        .filter(|c| c.level != catalogue::Level::Info)
        .map(|c| {
            (
                c.finding.to_string(),
                c.meaning.to_string(),
                c.fix.to_string(),
            )
        });
    let unknown = std::iter::once((
        drops::DROP_UNKNOWN.to_string(),
        "the kernel dropped packets for a reason this netlens' catalogue does not know (a newer kernel); the finding names the reason".to_string(),
        "netlens explain NAME, and the kernel's include/net/dropreason-core.h for that reason".to_string(),
    ));
    named
        .chain(counters)
        .chain(reasons)
        .chain(conns)
        .chain(unknown)
        .collect()
}

/// The raw signals, for a fleet that wants them beside the findings.
fn signals() -> Vec<Rule> {
    let rule = |alert: &str, expr: &str, hold, severity, summary: &str, fix: &str| Rule {
        alert: alert.to_string(),
        finding: None,
        expr: expr.to_string(),
        hold,
        severity: Some(severity),
        summary: summary.to_string(),
        fix: fix.to_string(),
    };
    vec![
        rule(
            "NetlensExporterDown",
            "up{job=\"netlens\"} == 0",
            "2m",
            "crit",
            "{{ $labels.instance }}: netlens export does not answer scrapes",
            "check that `netlens export` runs and its --listen address is reachable",
        ),
        rule(
            "NetlensInterfaceSaturated",
            "(rate(node_network_receive_bytes_total[2m]) / node_network_speed_bytes > 0.9) or (rate(node_network_transmit_bytes_total[2m]) / node_network_speed_bytes > 0.9)",
            "5m",
            "warn",
            "{{ $labels.instance }} {{ $labels.device }} (netns {{ $labels.netns }}) runs above 90% of its link speed",
            "find the top talkers (netlens Flows tab), shape or move traffic, or a faster or bonded link",
        ),
        rule(
            "NetlensConntrackFilling",
            "node_nf_conntrack_entries / node_nf_conntrack_entries_limit > 0.9",
            "5m",
            "warn",
            "{{ $labels.instance }} netns {{ $labels.netns }}: the conntrack table is over 90% full",
            "raise net.netfilter.nf_conntrack_max (and the hash size), shorten the timeouts, or NOTRACK stateless traffic",
        ),
        rule(
            "NetlensTcpRetransmits",
            "rate(node_netstat_Tcp_RetransSegs_total[5m]) / rate(node_netstat_Tcp_OutSegs_total[5m]) > 0.02 and rate(node_netstat_Tcp_OutSegs_total[5m]) > 100",
            "10m",
            "warn",
            "{{ $labels.instance }} netns {{ $labels.netns }}: over 2% of TCP segments are retransmitted",
            "look for loss on the path (interface errors, qdisc drops, the Flows tab's retransmitting flows)",
        ),
        rule(
            "NetlensDnsTimeouts",
            "sum by (instance, job, netns, server) (rate(netlens_dns_probes_total{outcome=\"timeout\"}[5m])) / sum by (instance, job, netns, server) (rate(netlens_dns_probes_total[5m])) > 0.1",
            "5m",
            "warn",
            "{{ $labels.instance }} netns {{ $labels.netns }}: over 10% of DNS probes to {{ $labels.server }} time out",
            "check the resolver's health and the path to it; /etc/resolv.conf's timeout and attempts options",
        ),
    ]
}

/// Every rule: one per finding id, then the raw signals.
pub fn rules() -> Vec<Rule> {
    let mut all: Vec<Rule> = findings()
        .iter()
        .map(|(id, means, fix)| finding_rule(id, means, fix))
        .collect();
    all.extend(signals());
    all
}

/// A YAML double-quoted scalar.
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The rules file, as `assets/netlens-alerts.yml` holds it.
pub fn rules_yaml() -> String {
    let mut out = String::from(
        "# Prometheus alerting rules for netlens export: one per finding id\n\
         # (on netlens_finding) and the raw signals a fleet watches.\n\
         # Generated from netlens' findings tables by tests/docs/alerts.rs\n\
         # (NETLENS_UPDATE_README=1 cargo test --profile fast-build --test suite docs::alerts); do not edit.\n\
         groups:\n",
    );
    for (group, finding_rules) in [("netlens-findings", true), ("netlens-signals", false)] {
        let _ = writeln!(out, "  - name: {group}\n    rules:");
        for rule in rules()
            .iter()
            .filter(|r| r.finding.is_some() == finding_rules)
        {
            let _ = writeln!(out, "      - alert: {}", rule.alert);
            let _ = writeln!(out, "        expr: {}", quoted(&rule.expr));
            let _ = writeln!(out, "        for: {}", rule.hold);
            out.push_str("        labels:\n");
            if let Some(severity) = rule.severity {
                let _ = writeln!(out, "          severity: {severity}");
            }
            if let Some(id) = &rule.finding {
                let _ = writeln!(out, "          netlens_finding: {}", quoted(id));
            } else {
                out.push_str("          netlens_signal: \"true\"\n");
            }
            out.push_str("        annotations:\n");
            let _ = writeln!(out, "          summary: {}", quoted(&rule.summary));
            let _ = writeln!(out, "          fix: {}", quoted(&rule.fix));
        }
    }
    out
}

/// `promtool test rules` unit tests for every finding rule: the finding's
/// series fires the alert in one namespace, with its severity and words,
/// while a healthy namespace's series (0) and a brief blip stay silent.
/// One test group holds every finding's series (each rule selects its own
/// id): promtool evaluates every rule of the file at each step of each
/// group, so a group per finding cost it a minute of CPU.
pub fn findings_tests_yaml(rules_path: &str) -> String {
    let mut series = String::new();
    let mut expected = String::new();
    let instance = "web1:9464";
    for (i, (id, means, fix)) in findings().iter().enumerate() {
        let severity = ["warn", "crit"][i % 2];
        for (netns, values) in [
            ("blue", "0 0 1 1 1 1 1"),
            ("green", "0 0 0 0 0 0 0"),
            ("red", "0 1 0 0 0 0 0"),
        ] {
            let name = format!(
                "netlens_finding{{id=\"{id}\",severity=\"{severity}\",netns=\"{netns}\",instance=\"{instance}\",job=\"netlens\"}}"
            );
            let _ = write!(
                series,
                "      - series: {}\n        values: \"{values}\"\n",
                quoted(&name)
            );
        }
        let summary = format!("{instance} netns blue: {means}");
        let _ = write!(
            expected,
            "      - eval_time: 2m\n        alertname: {alert}\n        exp_alerts: []\n\
             \x20     - eval_time: 5m\n        alertname: {alert}\n        exp_alerts:\n\
             \x20         - exp_labels:\n\
             \x20             severity: {severity}\n\
             \x20             netns: blue\n\
             \x20             instance: {instance:?}\n\
             \x20             job: netlens\n\
             \x20             netlens_finding: {id_q}\n\
             \x20           exp_annotations:\n\
             \x20             summary: {summary_q}\n\
             \x20             fix: {fix_q}\n",
            alert = alert_name(id),
            id_q = quoted(id),
            summary_q = quoted(&summary),
            fix_q = quoted(fix),
        );
    }
    format!(
        "# promtool test rules for every finding rule of {rules_path}.\n\
         # Generated by tests/docs/alerts.rs from the same tables; do not edit.\n\
         rule_files:\n  - {}\nevaluation_interval: 1m\ntests:\n\
         \x20 - interval: 1m\n    input_series:\n{series}    alert_rule_test:\n{expected}",
        quoted(rules_path)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_finding_has_one_rule_with_a_unique_valid_name() {
        let rules = rules();
        let names: BTreeSet<&str> = rules.iter().map(|r| r.alert.as_str()).collect();
        assert_eq!(names.len(), rules.len(), "alert names collide");
        for rule in &rules {
            assert!(
                rule.alert.chars().all(|c| c.is_ascii_alphanumeric()),
                "{}",
                rule.alert
            );
            assert!(
                !rule.summary.is_empty() && !rule.fix.is_empty(),
                "{}",
                rule.alert
            );
        }
        let reasons = rules
            .iter()
            .filter(|r| r.alert.starts_with("NetlensDrop"))
            .count();
        assert!(reasons > 90, "{reasons} drop reason rules");
        for id in crate::findings::IDS {
            let ruled = rules.iter().any(|r| r.finding.as_deref() == Some(*id));
            assert_eq!(ruled, !path::ON_DEMAND.contains(id), "{id}");
        }
        assert_eq!(
            alert_name("counter:TcpExt.ListenDrops"),
            "NetlensCounterTcpExtListenDrops"
        );
        assert_eq!(alert_name("iface-errors"), "NetlensIfaceErrors");
    }

    #[test]
    fn quoting_survives_quotes_and_backslashes() {
        assert_eq!(quoted(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
