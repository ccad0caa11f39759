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
                KERNEL_REASONS.contains(reason),
                "{}: unknown reason {reason}",
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
