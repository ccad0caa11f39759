//! DNS findings from the results a sample carries (probes and passive):
//! dns-timeout (queries without answers) and dns-slow (p90 over the
//! threshold), per server.

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::dns::stats::{self, Stats};
use crate::dns::{DnsResult, Outcome};
use crate::model::Sample;
use crate::model::dns::ResolverConfig;

pub const DNS_TIMEOUT: &str = "dns-timeout";
pub const DNS_SLOW: &str = "dns-slow";

/// The p90 (`Thresholds::dns_slow_p90_ms`) that makes a server very slow
/// (crit) is this many times the warn level. A cached answer takes well
/// under a millisecond and a good recursive resolver a few tens.
pub const DNS_SLOW_CRIT_FACTOR: f64 = 10.0;
/// Answers a server needs in the interval before its p90 counts.
pub const DNS_SLOW_MIN_ANSWERS: usize = 1;
/// Names a finding lists at most.
const NAMES_SHOWN: usize = 3;

pub fn evaluate(current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    let Some(dns) = &current.dns else {
        return Vec::new();
    };
    // The window when the sample carries one (live, snapshot, export,
    // record), else the interval (a replayed sample).
    let all: Vec<&DnsResult> = if dns.recent.is_empty() {
        dns.probes.iter().chain(&dns.passive).collect()
    } else {
        dns.recent.iter().collect()
    };
    let span = if dns.recent.is_empty() {
        String::new()
    } else {
        format!(" in the last {:.0} s", dns.recent_s)
    };
    let mut findings = Vec::new();
    for server in stats::by_server(all.iter().copied()) {
        let of_server: Vec<&DnsResult> = all
            .iter()
            .copied()
            .filter(|r| r.server == server.key)
            .collect();
        if server.timeouts > 0 && server.timeouts >= u64::from(limits.dns_timeout_count) {
            let mut finding = timeout_finding(&server, &of_server, dns.timeout_s, &span);
            finding
                .hint
                .push_str(&resolver_settings(&dns.config, &server.key));
            findings.push(finding);
        }
        if let Some(finding) = slow_finding(&server, &of_server, limits, &span) {
            findings.push(finding);
        }
    }
    findings
}

fn timeout_finding(server: &Stats, results: &[&DnsResult], timeout_s: f64, span: &str) -> Finding {
    let mut names: Vec<String> = Vec::new();
    let mut ptr = false;
    for r in results.iter().filter(|r| r.outcome == Outcome::Timeout) {
        ptr |= r.qtype == "PTR";
        let label = question_label(r);
        if !names.contains(&label) {
            names.push(label);
        }
    }
    let more = names.len().saturating_sub(NAMES_SHOWN);
    names.truncate(NAMES_SHOWN);
    let mut list = names.join(", ");
    if more > 0 {
        list.push_str(&format!(" +{more} more"));
    }
    let severity = if server.timeouts == server.count {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let hint = if ptr {
        format!(
            "reverse lookups without an answer: each stalls the caller {timeout_s:.0} s per try \
             (ss, netstat, sshd UseDNS, web server logs resolve every address): add the PTR \
             records, make the server answer NXDOMAIN fast, or turn the lookups off (-n)"
        )
    } else {
        format!(
            "the server does not answer: check it is up and reachable (`dig @{}`); each timeout \
             costs the client {timeout_s:.0} s (options timeout) before it tries the next server",
            server
                .key
                .rsplit_once(':')
                .map_or(server.key.as_str(), |(ip, _)| ip)
        )
    };
    Finding {
        hold: Hold::default(),
        id: DNS_TIMEOUT,
        severity,
        summary: format!(
            "{}: {} of {} queries unanswered{span}: {list}",
            server.key, server.timeouts, server.count
        ),
        hint,
        evidence: Evidence {
            netns: None,
            tab: "dns",
            row: server.key.clone(),
        },
    }
}

/// The resolver settings that set what a server that does not answer
/// costs, when it is one of /etc/resolv.conf's nameservers: "; it is
/// nameserver 1 of 2 in /etc/resolv.conf, here options timeout:5
/// attempts:2 (no rotate): ...". Nothing for another server (a probe's).
fn resolver_settings(config: &ResolverConfig, server: &str) -> String {
    // A nameserver is asked on port 53: the same address on another port
    // is another server.
    let ip = match server.parse::<std::net::SocketAddr>() {
        Ok(at) if at.port() == 53 => at.ip(),
        Ok(_) => return String::new(),
        Err(_) => match server.parse::<std::net::IpAddr>() {
            Ok(ip) => ip,
            Err(_) => return String::new(),
        },
    };
    let Some(at) = config
        .nameservers
        .iter()
        .position(|n| n.parse::<std::net::IpAddr>().is_ok_and(|n| n == ip))
    else {
        return String::new();
    };
    let count = config.nameservers.len();
    let first = if at == 0 && !config.rotate && count > 1 {
        ": as the first, every lookup waits on it before it asks the next"
    } else {
        ""
    };
    format!(
        "; it is nameserver {} of {count} in /etc/resolv.conf{first}, here options timeout:{} \
         attempts:{} ({}rotate): a shorter timeout, rotate, or removing it from the list \
         bounds the wait",
        at + 1,
        config.timeout_s,
        config.attempts,
        if config.rotate { "" } else { "no " },
    )
}

fn slow_finding(
    server: &Stats,
    results: &[&DnsResult],
    limits: &Thresholds,
    span: &str,
) -> Option<Finding> {
    if server.latencies.len() < DNS_SLOW_MIN_ANSWERS {
        return None;
    }
    let p90 = server.percentile(90.0)?;
    if p90 < limits.dns_slow_p90_ms {
        return None;
    }
    let slowest = results
        .iter()
        .filter(|r| r.latency_ms.is_some())
        .max_by(|a, b| {
            a.latency_ms
                .unwrap_or(0.0)
                .total_cmp(&b.latency_ms.unwrap_or(0.0))
        })?;
    let severity = if p90 >= limits.dns_slow_p90_ms * DNS_SLOW_CRIT_FACTOR {
        Severity::Crit
    } else {
        Severity::Warn
    };
    Some(Finding {
        hold: Hold::default(),
        id: DNS_SLOW,
        severity,
        summary: format!(
            "{}: p90 {p90:.0} ms over {} answers{span} (slowest {} {:.0} ms)",
            server.key,
            server.latencies.len(),
            question_label(slowest),
            slowest.latency_ms.unwrap_or(0.0)
        ),
        hint: "every connection that starts with a name waits for this: use a closer resolver, \
               or a local cache such as dnsmasq or systemd-resolved"
            .into(),
        evidence: Evidence {
            netns: None,
            tab: "dns",
            row: server.key.clone(),
        },
    })
}

/// "A example.test", or for a reverse lookup "PTR 198.18.0.9".
pub fn question_label(r: &DnsResult) -> String {
    match (r.qtype.as_str(), ptr_address(&r.name)) {
        ("PTR", Some(ip)) => format!("PTR {ip}"),
        _ => format!("{} {}", r.qtype, r.name),
    }
}

/// The address a reverse name stands for (IPv4 in-addr.arpa, IPv6 ip6.arpa).
pub fn ptr_address(name: &str) -> Option<String> {
    if let Some(rest) = name.strip_suffix(".in-addr.arpa") {
        let octets: Vec<&str> = rest.split('.').rev().collect();
        if octets.len() == 4 && octets.iter().all(|o| o.parse::<u8>().is_ok()) {
            return Some(octets.join("."));
        }
    }
    if let Some(rest) = name.strip_suffix(".ip6.arpa") {
        let nibbles: String = rest.split('.').rev().collect();
        if nibbles.len() == 32 && nibbles.chars().all(|c| c.is_ascii_hexdigit()) {
            let bits = u128::from_str_radix(&nibbles, 16).ok()?;
            return Some(std::net::Ipv6Addr::from(bits).to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::DnsSample;

    fn r(name: &str, qtype: &str, latency: Option<f64>, outcome: Outcome) -> DnsResult {
        DnsResult {
            t: 0.0,
            server: "127.0.0.1:5353".into(),
            name: name.into(),
            qtype: qtype.into(),
            latency_ms: latency,
            outcome,
            answers: vec![],
        }
    }

    #[test]
    fn timeout_and_slow_name_server_and_names() {
        let sample = Sample {
            dns: Some(DnsSample {
                probes: vec![
                    r("fast.test", "A", Some(0.3), Outcome::Ok),
                    r("slow.test", "A", Some(301.0), Outcome::Ok),
                    r("9.0.18.198.in-addr.arpa", "PTR", None, Outcome::Timeout),
                ],
                timeout_s: 5.0,
                ..Default::default()
            }),
            ..Default::default()
        };
        let found = evaluate(&sample, &Thresholds::DEFAULT);
        assert_eq!(found.len(), 2, "{found:?}");
        let timeout = found.iter().find(|f| f.id == DNS_TIMEOUT).unwrap();
        assert!(
            timeout.summary.contains("127.0.0.1:5353"),
            "{}",
            timeout.summary
        );
        assert!(
            timeout.summary.contains("PTR 198.18.0.9"),
            "{}",
            timeout.summary
        );
        assert!(timeout.hint.contains("PTR"));
        let slow = found.iter().find(|f| f.id == DNS_SLOW).unwrap();
        assert!(
            slow.summary.contains("A slow.test 301 ms"),
            "{}",
            slow.summary
        );
        assert!(slow.hint.contains("dnsmasq"));
    }

    #[test]
    fn a_timing_out_nameserver_is_named_with_the_resolvers_settings() {
        let timing_out = |config: ResolverConfig| {
            let mut result = r("a.test", "A", None, Outcome::Timeout);
            result.server = "127.0.0.1:53".into();
            let sample = Sample {
                dns: Some(DnsSample {
                    probes: vec![result],
                    timeout_s: 5.0,
                    config,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let found = evaluate(&sample, &Thresholds::DEFAULT);
            found
                .iter()
                .find(|f| f.id == DNS_TIMEOUT)
                .unwrap()
                .hint
                .clone()
        };
        let config = |servers: &[&str], timeout_s, attempts, rotate| ResolverConfig {
            nameservers: servers.iter().map(|s| s.to_string()).collect(),
            timeout_s,
            attempts,
            rotate,
            ..Default::default()
        };
        let hint = timing_out(config(&["127.0.0.1", "198.18.0.53"], 5, 2, false));
        assert!(
            hint.ends_with(
                "; it is nameserver 1 of 2 in /etc/resolv.conf: as the first, every lookup waits \
                 on it before it asks the next, here options timeout:5 attempts:2 (no rotate): \
                 a shorter timeout, rotate, or removing it from the list bounds the wait"
            ),
            "{hint}"
        );
        let hint = timing_out(config(&["198.18.0.53", "127.0.0.1"], 1, 3, true));
        assert!(
            hint.contains(
                "nameserver 2 of 2 in /etc/resolv.conf, here options timeout:1 attempts:3 (rotate)"
            ),
            "{hint}"
        );
        // A server that is not the system's (a probe's): no settings.
        let hint = timing_out(config(&["198.18.0.53"], 5, 2, false));
        assert!(!hint.contains("resolv.conf, here"), "{hint}");
        // The same address on another port is another server.
        let sample = Sample {
            dns: Some(DnsSample {
                probes: vec![r("a.test", "A", None, Outcome::Timeout)],
                config: config(&["127.0.0.1"], 5, 2, false),
                ..Default::default()
            }),
            ..Default::default()
        };
        let found = evaluate(&sample, &Thresholds::DEFAULT);
        assert!(found.iter().all(|f| !f.hint.contains("resolv.conf, here")));
    }

    #[test]
    fn quiet_and_fast_is_no_finding() {
        let sample = Sample {
            dns: Some(DnsSample {
                passive: vec![r("fast.test", "A", Some(2.0), Outcome::Ok)],
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(evaluate(&sample, &Thresholds::DEFAULT).is_empty());
        assert!(evaluate(&Sample::default(), &Thresholds::DEFAULT).is_empty());
    }

    #[test]
    fn reverse_names() {
        assert_eq!(
            ptr_address("4.3.2.1.in-addr.arpa").as_deref(),
            Some("1.2.3.4")
        );
        let v6 = crate::dns::reverse_name("2001:db8::1".parse().unwrap());
        assert_eq!(ptr_address(&v6).as_deref(), Some("2001:db8::1"));
        assert_eq!(ptr_address("example.test"), None);
    }
}
