//! The catalogue's own checks: every entry complete, ids unique, every
//! field of this kernel's snmp files classified.

use super::*;
use std::collections::{BTreeMap, HashSet};

#[test]
fn every_entry_has_meaning_fix_and_a_known_source_name() {
    for entry in entries() {
        assert!(!entry.meaning.trim().is_empty(), "{}: no meaning", entry.id);
        assert!(!entry.fix.trim().is_empty(), "{}: no fix", entry.id);
        assert!(entry.per_s >= 0.0, "{}", entry.id);
        let (group, name) = entry.id.split_once('.').expect("Group.Name");
        assert!(!group.is_empty() && !name.is_empty(), "{}", entry.id);
        assert_eq!(entry.finding, format!("counter:{}", entry.id));
        for reason in entry.reasons {
            assert!(
                REASONS.iter().any(|r| r.name == *reason),
                "{}: {reason} is not in the reasons catalogue",
                entry.id
            );
        }
    }
}

#[test]
fn ids_are_unique_and_not_also_listed_as_not_failures() {
    let mut seen = HashSet::new();
    for entry in entries() {
        assert!(seen.insert(entry.id), "{} twice", entry.id);
        assert!(!is_not_failure(entry.id), "{} is both", entry.id);
    }
    let mut plain = HashSet::new();
    for name in NOT_FAILURES {
        assert!(plain.insert(name), "{name} twice in NOT_FAILURES");
    }
}

/// "Group.Name" of every field of an snmp/netstat style file.
fn header_fields(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if i % 2 == 1 {
            continue;
        }
        let Some((group, names)) = line.split_once(':') else {
            continue;
        };
        out.extend(names.split_whitespace().map(|n| format!("{group}.{n}")));
    }
    out
}

fn snmp6_fields(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|name| {
            let group = SNMP6_GROUPS.iter().find(|g| name.starts_with(*g))?;
            Some(format!("{group}.{}", &name[group.len()..]))
        })
        .collect()
}

#[test]
fn every_field_of_this_kernel_is_classified() {
    let mut fields = Vec::new();
    for file in ["/proc/net/snmp", "/proc/net/netstat"] {
        let text = std::fs::read_to_string(file).expect("readable");
        fields.extend(header_fields(&text));
    }
    if let Ok(text) = std::fs::read_to_string("/proc/net/snmp6") {
        fields.extend(snmp6_fields(&text));
    }
    assert!(fields.len() > 150, "{fields:?}");
    let unclassified: Vec<&String> = fields
        .iter()
        .filter(|f| {
            let group = f.split_once('.').map_or("", |(g, _)| g);
            CLASSIFIED_GROUPS.contains(&group) && classify(f) == Class::Unknown
        })
        .collect();
    assert!(
        unclassified.is_empty(),
        "not in the catalogue: {unclassified:?}"
    );
}

#[test]
fn explain_finds_by_name_group_or_reason_case_insensitively() {
    let kernel = BTreeMap::from([("MPTcpExt.MPJoinSynRx".to_string(), 7u64)]);
    let text = explain("tcpbacklogdrop", &kernel).unwrap();
    assert!(
        text.starts_with("TcpExt.TCPBacklogDrop  (/proc/net/netstat)"),
        "{text}"
    );
    assert!(text.contains("reasons:  SOCKET_BACKLOG"), "{text}");
    let all = explain("NoPorts", &kernel).unwrap();
    for id in [
        "Udp.NoPorts",
        "UdpLite.NoPorts",
        "Udp6.NoPorts",
        "UdpLite6.NoPorts",
    ] {
        assert!(all.contains(id), "{all}");
    }
    let reason = explain("skb_drop_reason_socket_rcvbuff", &kernel).unwrap();
    assert!(reason.contains("Udp.RcvbufErrors"), "{reason}");
    assert!(
        explain("Tcp.InSegs", &kernel)
            .unwrap()
            .contains("not a failure")
    );
    assert!(
        explain(
            "IcmpMsg.InType3",
            &BTreeMap::from([("IcmpMsg.InType3".into(), 1)])
        )
        .unwrap()
        .contains("not a failure")
    );
    let unknown = explain("mpjoinsynrx", &kernel).unwrap();
    assert!(unknown.contains("not in the catalogue"), "{unknown}");
    let err = explain("ListenOverflow", &kernel).unwrap_err();
    assert!(err.contains("TcpExt.ListenOverflows"), "{err}");
    assert!(!err.contains('\n'));
}

#[test]
fn every_reason_has_meaning_fix_and_a_unique_name() {
    let mut seen = HashSet::new();
    for r in REASONS {
        assert!(seen.insert(r.name), "{} twice", r.name);
        assert!(!r.meaning.trim().is_empty(), "{}: no meaning", r.name);
        assert!(!r.fix.trim().is_empty(), "{}: no fix", r.name);
        assert!(
            !r.meaning.contains('\n') && !r.fix.contains('\n'),
            "{}",
            r.name
        );
        assert!(r.per_s >= 0.0, "{}", r.name);
        assert_eq!(r.finding, format!("drop:{}", r.name));
        assert!(
            r.name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
            "{}",
            r.name
        );
        assert_eq!(
            reason(&format!("skb_drop_reason_{}", r.name.to_lowercase())),
            Some(r)
        );
    }
    // Normal life raises nothing; the kinds of trouble the issue names do.
    for quiet in [
        "NOT_SPECIFIED",
        "SOCKET_CLOSE",
        "TCP_CLOSE",
        "QUEUE_PURGE",
        "TCP_OLD_DATA",
    ] {
        assert!(!reason(quiet).unwrap().raises(), "{quiet}");
    }
    for loud in [
        "NETFILTER_DROP",
        "NO_SOCKET",
        "QDISC_DROP",
        "IP_RPFILTER",
        "NEIGH_FAILED",
        "PKT_TOO_BIG",
    ] {
        assert!(reason(loud).unwrap().raises(), "{loud}");
    }
    assert_eq!(
        reason("TCP_LISTEN_OVERFLOW").unwrap().covered_by,
        Some("listen-overflow")
    );
}

/// The names the running kernel's tracepoint prints for its enum, from
/// tracefs (None when tracefs is not readable: not root, not mounted).
fn kernel_reason_names() -> Option<Vec<String>> {
    let format = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find_map(|root| {
            std::fs::read_to_string(format!("{root}/events/skb/kfree_skb/format")).ok()
        })?;
    let symbolic = format.split_once("__print_symbolic(REC->reason,")?.1;
    Some(
        symbolic
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn every_reason_of_the_running_kernel_is_in_the_catalogue() {
    let Some(names) = kernel_reason_names() else {
        println!(
            "SKIP every_reason_of_the_running_kernel_is_in_the_catalogue: tracefs unreadable (needs root)"
        );
        return;
    };
    assert!(names.len() > 50, "{names:?}");
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| reason(n).is_none() && !NOT_REASONS.contains(&n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "not in the reasons catalogue: {missing:?}"
    );
}

#[test]
fn explain_a_reason_lists_its_counters_and_a_counter_its_reasons() {
    let kernel = BTreeMap::new();
    for name in ["NO_SOCKET", "no_socket", "SKB_DROP_REASON_NO_SOCKET"] {
        let text = explain(name, &kernel).unwrap();
        let r = reason("NO_SOCKET").unwrap();
        assert!(
            text.starts_with("NO_SOCKET  (drop reason SKB_DROP_REASON_NO_SOCKET)"),
            "{text}"
        );
        assert!(text.contains(r.meaning) && text.contains(r.fix), "{text}");
        assert!(
            text.contains("finding:  warn (finding drop:NO_SOCKET) above 5/s"),
            "{text}"
        );
        for counter in ["Udp.NoPorts", "Udp6.NoPorts"] {
            assert!(text.contains(counter), "{text}");
        }
    }
    let quiet = explain("tcp_close", &kernel).unwrap();
    assert!(
        quiet.contains("info: normal life, raises nothing"),
        "{quiet}"
    );
    assert!(quiet.contains("counters: none in the catalogue"), "{quiet}");
    let counter = explain("Udp.NoPorts", &kernel).unwrap();
    assert!(
        counter.contains(&format!(
            "NO_SOCKET: {}",
            reason("NO_SOCKET").unwrap().meaning
        )),
        "{counter}"
    );
}

/// Every sysctl a fix names (counters, drop reasons, connections) is one
/// netlens reads, so the finding can give its value
/// (`findings::settings::with_values`); a name that is not a real file
/// here is a typo.
#[test]
fn every_setting_a_fix_names_is_read_and_exists() {
    use crate::findings::settings::named;
    let read: HashSet<&str> = crate::model::sockets::KNOBS
        .iter()
        .chain(crate::model::sockets::FINDING_KNOBS)
        .chain(crate::collect::softnet::KNOBS)
        .copied()
        .collect();
    let fixes = entries()
        .map(|e| e.fix)
        .chain(REASONS.iter().map(|r| r.fix))
        .chain(conns::CONNS.iter().map(|c| c.fix));
    let mut missing = Vec::new();
    for fix in fixes {
        // A pattern's head ("net.ipv4.conf" of net.ipv4.conf.*.rp_filter)
        // is a directory, not a setting.
        for name in named(fix) {
            let path = format!("/proc/sys/{}", name.replace('.', "/"));
            if std::path::Path::new(&path).is_dir() {
                continue;
            }
            assert!(
                std::path::Path::new(&path).exists() || name.starts_with("net.netfilter."),
                "{name} is not a setting of this kernel"
            );
            if !read.contains(name) {
                missing.push(name);
            }
        }
    }
    missing.sort_unstable();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "named in a fix but not read: {missing:?}"
    );
}
