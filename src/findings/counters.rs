//! Findings generated from the catalogue: a counter rising faster than its
//! entry's threshold raises `counter:<Id>` ("counter:Udp.NoPorts",
//! "counter:netdev.rx_missed_errors") with the entry's words, the rate,
//! where (namespace; interface for netdev and qdisc) and the fix. Entries
//! at level info, and those a hand-written finding reports (`covered_by`),
//! raise nothing here.

use super::catalogue::{self, Entry, Source};
use super::{Evidence, Finding, Hold, IFACE_SATURATED, Severity};
use crate::model::conntrack::{ConntrackStats, stats_interval};
use crate::model::cpu::{self, CpuRate};
use crate::model::netdev;
use crate::model::rates::{counter_rate, links_interval};
use crate::model::tcp_rates::TcpRates;
use crate::model::{InterfaceSample, LinkCounters, QdiscStats, Sample};

/// The catalogue's findings for `current`. `raised` holds the hand-written
/// findings of the same sample: an interface whose qdisc drops the
/// iface-saturated finding already names raises no second one.
pub fn evaluate(previous: Option<&Sample>, current: &Sample, raised: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(previous) = previous.filter(|p| p.netns == current.netns) else {
        return out;
    };
    let tcp = TcpRates::new(Some(previous), current);
    for entry in catalogue::entries().filter(|e| e.raises()) {
        match entry.source {
            Source::Snmp | Source::Netstat | Source::Snmp6 => {
                if let Some(rate) = tcp.and_then(|t| t.rate(entry.id)) {
                    push(&mut out, entry, rate, current, None);
                }
            }
            Source::Netdev => {
                for iface in &current.interfaces {
                    let Some(before) = previous.same_interface(iface) else {
                        continue;
                    };
                    let pick = |c: &LinkCounters| link_counter(c, entry.name());
                    let seconds = links_interval(previous, current, iface.netns);
                    if let (Some(b), Some(a)) = (pick(&before.counters), pick(&iface.counters))
                        && let Some(rate) = counter_rate(b, a, seconds)
                    {
                        push(&mut out, entry, rate, current, Some(iface));
                    }
                }
            }
            Source::Qdisc => {
                for iface in &current.interfaces {
                    let saturated = raised
                        .iter()
                        .any(|f| f.id == IFACE_SATURATED && f.evidence.row == iface.name);
                    let before = previous
                        .same_interface(iface)
                        .and_then(|i| i.qdisc.as_ref());
                    let (Some(b), Some(a)) = (before, iface.qdisc.as_ref()) else {
                        continue;
                    };
                    if saturated || a.handle != b.handle || a.kind != b.kind {
                        continue;
                    }
                    let seconds = links_interval(previous, current, iface.netns);
                    if let (Some(b), Some(a)) = (qdisc(b, entry.name()), qdisc(a, entry.name()))
                        && let Some(rate) = counter_rate(b, a, seconds)
                    {
                        push(&mut out, entry, rate, current, Some(iface));
                    }
                }
            }
            Source::Softnet => {
                if let Some(rate) = softnet_rate(previous, current, entry.name()) {
                    push(&mut out, entry, rate, current, None);
                }
            }
            Source::Conntrack => {
                let (Some(b), Some(a)) = (&previous.conntrack.stats, &current.conntrack.stats)
                else {
                    continue;
                };
                let seconds = stats_interval(previous, current);
                if let (Some(b), Some(a)) = (conntrack(b, entry.name()), conntrack(a, entry.name()))
                    && let Some(rate) = counter_rate(b, a, seconds)
                {
                    push(&mut out, entry, rate, current, None);
                }
            }
        }
    }
    out
}

fn push(
    out: &mut Vec<Finding>,
    entry: &'static Entry,
    rate: f64,
    current: &Sample,
    iface: Option<&InterfaceSample>,
) {
    if rate <= entry.per_s || rate <= 0.0 {
        return;
    }
    // Only entries that raise (warn or crit) get here.
    let severity = Severity::from(entry.level);
    let netns = if current.netns.is_empty() {
        "host"
    } else {
        current.netns.as_str()
    };
    let (prefix, tab, row) = match (iface, entry.source) {
        (Some(i), _) => (format!("{}: ", i.name), "interfaces", i.name.clone()),
        (None, Source::Conntrack) => (String::new(), "conntrack", entry.id.to_string()),
        (None, _) => (String::new(), "tcp", entry.id.to_string()),
    };
    out.push(Finding {
        hold: Hold::default(),
        id: entry.finding,
        severity,
        summary: format!(
            "{prefix}{} {rate:.1}/s in netns {netns}: {}",
            entry.id, entry.meaning
        ),
        hint: super::settings::with_values(
            &entry
                .fix
                .replace(" IF", &format!(" {}", iface.map_or("IF", |i| &i.name))),
            current,
        ) + &routes_behind(entry.id, current),
        evidence: Evidence {
            tab,
            row,
            netns: None,
        },
    });
}

/// The entries a routing table explains, each with its table's family.
const ROUTED: [(&str, &str); 3] = [
    ("Ip.OutNoRoutes", "inet"),
    ("Ip6.OutNoRoutes", "inet6"),
    ("Ip6.InNoRoutes", "inet6"),
];

/// For a no-route entry, what the watched namespace's main table says
/// (its default route, its rejecting routes); else nothing.
fn routes_behind(id: &str, current: &Sample) -> String {
    let family = ROUTED.iter().find(|(entry, _)| *entry == id);
    match (family, &current.routes) {
        (Some((_, family)), Some(routes)) => routes.explain(family),
        _ => String::new(),
    }
}

/// A netdev stats64 counter by its kernel name ("rx_missed_errors"), from
/// its row in `model::netdev`.
fn link_counter(c: &LinkCounters, name: &str) -> Option<u64> {
    netdev::by_kernel(name).map(|counter| counter.of(c))
}

fn qdisc(q: &QdiscStats, name: &str) -> Option<u64> {
    Some(match name {
        "drops" => q.drops,
        "overlimits" => q.overlimits,
        "requeues" => q.requeues,
        _ => return None,
    })
}

fn conntrack(s: &ConntrackStats, name: &str) -> Option<u64> {
    Some(match name {
        "drop" => s.drop,
        "early_drop" => s.early_drop,
        "insert_failed" => s.insert_failed,
        "invalid" => s.invalid,
        "chaintoolong" => s.chaintoolong,
        "error" => s.error,
        "search_restart" => s.search_restart,
        "clash_resolve" => s.clash_resolve,
        _ => return None,
    })
}

/// A counter that rose over the interval, as the Drops tab lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// "TcpExt.TCPBacklogDrop", "netdev.rx_dropped", or a field of this
    /// kernel the catalogue lacks ("MPTcpExt.MPJoinSynRx").
    pub id: String,
    /// None: not in the catalogue.
    pub entry: Option<&'static Entry>,
    /// The interface of a netdev or qdisc counter.
    pub iface: Option<String>,
    pub per_s: f64,
}

/// The failure counters that rose between `previous` and `current` (of the
/// same namespace), fastest first: the catalogue's entries of every source,
/// and any snmp/netstat field the catalogue does not classify. Volume
/// counters (`catalogue::NOT_FAILURES`) are left out.
pub fn moved(previous: Option<&Sample>, current: &Sample) -> Vec<Moved> {
    let mut out = Vec::new();
    let Some(previous) = previous.filter(|p| p.netns == current.netns) else {
        return out;
    };
    let mut push = |id: String, entry, iface, rate: Option<f64>| {
        if let Some(per_s) = rate.filter(|r| *r > 0.0) {
            out.push(Moved {
                id,
                entry,
                iface,
                per_s,
            });
        }
    };
    if let Some(tcp) = TcpRates::new(Some(previous), current) {
        for id in tcp.current().counters.keys() {
            let entry = match catalogue::classify(id) {
                catalogue::Class::Entry(entry) => Some(entry),
                catalogue::Class::NotAFailure => continue,
                catalogue::Class::Unknown => None,
            };
            push(id.to_string(), entry, None, tcp.rate(id));
        }
    }
    for entry in catalogue::entries() {
        match entry.source {
            Source::Netdev => {
                for iface in &current.interfaces {
                    let before = previous.same_interface(iface);
                    let pick = |c: &LinkCounters| link_counter(c, entry.name());
                    let seconds = links_interval(previous, current, iface.netns);
                    let rate = before
                        .and_then(|b| Some((pick(&b.counters)?, pick(&iface.counters)?)))
                        .and_then(|(b, a)| counter_rate(b, a, seconds));
                    push(
                        entry.id.to_string(),
                        Some(entry),
                        Some(iface.name.clone()),
                        rate,
                    );
                }
            }
            Source::Qdisc => {
                for iface in &current.interfaces {
                    let before = previous
                        .same_interface(iface)
                        .and_then(|i| i.qdisc.as_ref());
                    let pick = |q: &QdiscStats| qdisc(q, entry.name());
                    let seconds = links_interval(previous, current, iface.netns);
                    let rate = before
                        .zip(iface.qdisc.as_ref())
                        .filter(|(b, a)| a.handle == b.handle && a.kind == b.kind)
                        .and_then(|(b, a)| Some((pick(b)?, pick(a)?)))
                        .and_then(|(b, a)| counter_rate(b, a, seconds));
                    push(
                        entry.id.to_string(),
                        Some(entry),
                        Some(iface.name.clone()),
                        rate,
                    );
                }
            }
            Source::Conntrack => {
                let rate = previous
                    .conntrack
                    .stats
                    .as_ref()
                    .zip(current.conntrack.stats.as_ref())
                    .and_then(|(b, a)| {
                        Some((conntrack(b, entry.name())?, conntrack(a, entry.name())?))
                    })
                    .and_then(|(b, a)| counter_rate(b, a, stats_interval(previous, current)));
                push(entry.id.to_string(), Some(entry), None, rate);
            }
            Source::Softnet => push(
                entry.id.to_string(),
                Some(entry),
                None,
                softnet_rate(previous, current, entry.name()),
            ),
            Source::Snmp | Source::Netstat | Source::Snmp6 => {}
        }
    }
    out.sort_by(|a, b| b.per_s.total_cmp(&a.per_s).then_with(|| a.id.cmp(&b.id)));
    out
}

/// A softnet entry's rate: its field summed over the CPUs, each CPU's
/// 32-bit counter across a wrap (model::cpu).
fn softnet_rate(previous: &Sample, current: &Sample, name: &str) -> Option<f64> {
    softnet(&cpu::total(&cpu::cpu_rates(Some(previous), current)), name)?
}

/// The field of a softnet entry; None for a name softnet_stat lacks.
fn softnet(rate: &CpuRate, name: &str) -> Option<Option<f64>> {
    match name {
        "dropped" => Some(rate.dropped),
        "time_squeeze" => Some(rate.time_squeeze),
        "flow_limit_count" => Some(rate.flow_limit_count),
        _ => None,
    }
}

/// Every counter name the catalogue's netdev, qdisc and conntrack entries
/// use is one these readers know (a test checks it).
pub fn readable(entry: &Entry) -> bool {
    let name = entry.name();
    match entry.source {
        Source::Netdev => link_counter(&LinkCounters::default(), name).is_some(),
        Source::Qdisc => qdisc(&QdiscStats::default(), name).is_some(),
        Source::Conntrack => conntrack(&ConntrackStats::default(), name).is_some(),
        Source::Softnet => softnet(&CpuRate::default(), name).is_some(),
        Source::Snmp | Source::Netstat | Source::Snmp6 => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{IDS, Thresholds, evaluate as all};
    use crate::model::snmp;
    use crate::model::sockets::TcpSample;

    fn sample(mono: f64, counters: &[(&str, u64)]) -> Sample {
        let mut tcp = TcpSample::default();
        for (name, value) in counters {
            tcp.counters.insert(name.to_string(), *value);
        }
        Sample {
            mono,
            netns: "cat-test".into(),
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    /// Every raising snmp entry whose fix names a setting netlens reads
    /// gives that setting's value in the namespace after the fix.
    #[test]
    fn a_counter_finding_names_its_settings_value() {
        use crate::model::sockets::{FINDING_KNOBS, KNOBS};
        let mut checked = 0;
        for entry in catalogue::entries().filter(|e| {
            matches!(e.source, Source::Snmp | Source::Netstat) && e.level != catalogue::Level::Info
        }) {
            let Some(name) = crate::findings::settings::named(entry.fix)
                .find(|n| KNOBS.contains(n) || FINDING_KNOBS.contains(n))
            else {
                continue;
            };
            let (a, mut b) = (
                sample(0.0, &[(entry.id, 0)]),
                sample(2.0, &[(entry.id, 1000)]),
            );
            if let Some(tcp) = b.tcp.as_mut() {
                tcp.knobs.insert(name.to_string(), "4096\t8192".to_string());
            }
            let found = evaluate(Some(&a), &b, &[]);
            // Some raise through a hand-written finding instead.
            let Some(hint) = found
                .iter()
                .find(|f| f.id == entry.finding)
                .map(|f| &f.hint)
            else {
                continue;
            };
            assert!(
                hint.starts_with(entry.fix) && hint.contains(&format!("{name} = 4096 8192")),
                "{}: {hint}",
                entry.id
            );
            checked += 1;
        }
        assert!(checked >= 3, "{checked}");
    }

    #[test]
    fn a_counter_past_its_threshold_raises_its_finding() {
        let a = sample(
            0.0,
            &[
                (snmp::UDP_NO_PORTS, 100),
                (snmp::TCP_EXT_TCP_BACKLOG_DROP, 0),
            ],
        );
        let b = sample(
            2.0,
            &[
                (snmp::UDP_NO_PORTS, 200),
                (snmp::TCP_EXT_TCP_BACKLOG_DROP, 0),
            ],
        );
        let found = all(Some(&a), &b, &Thresholds::DEFAULT);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, "counter:Udp.NoPorts");
        assert_eq!(found[0].severity, Severity::Warn);
        assert!(
            found[0]
                .summary
                .starts_with("Udp.NoPorts 50.0/s in netns cat-test: "),
            "{}",
            found[0].summary
        );
        assert_eq!(
            found[0].hint,
            catalogue::get(snmp::UDP_NO_PORTS).unwrap().fix
        );
        assert_eq!(found[0].evidence.row, snmp::UDP_NO_PORTS);
        // At or under the threshold (5/s): nothing.
        let slow = sample(2.0, &[(snmp::UDP_NO_PORTS, 110)]);
        assert!(all(Some(&a), &slow, &Thresholds::DEFAULT).is_empty());
    }

    #[test]
    fn covered_and_info_counters_raise_nothing_of_their_own() {
        let a = sample(
            0.0,
            &[(snmp::TCP_EXT_LISTEN_OVERFLOWS, 0), (snmp::TCP_OUT_RSTS, 0)],
        );
        let b = sample(
            1.0,
            &[
                (snmp::TCP_EXT_LISTEN_OVERFLOWS, 50),
                (snmp::TCP_OUT_RSTS, 500),
            ],
        );
        let found = all(Some(&a), &b, &Thresholds::DEFAULT);
        assert!(
            found.iter().all(|f| !f.id.starts_with("counter:")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|f| f.id == crate::findings::LISTEN_OVERFLOW)
        );
    }

    #[test]
    fn another_namespace_or_no_previous_sample_raises_nothing() {
        let a = sample(0.0, &[(snmp::UDP_NO_PORTS, 0)]);
        let mut b = sample(1.0, &[(snmp::UDP_NO_PORTS, 1000)]);
        assert!(evaluate(None, &b, &[]).is_empty());
        b.netns = "other".into();
        assert!(evaluate(Some(&a), &b, &[]).is_empty());
    }

    #[test]
    fn covered_by_names_a_finding_netlens_raises() {
        for entry in catalogue::entries() {
            if let Some(id) = entry.covered_by {
                assert!(IDS.contains(&id), "{}: covered by unknown {id}", entry.id);
            }
            assert!(readable(entry), "{}: no reader for it", entry.id);
        }
    }

    /// The catalogue spells its counters itself (build.rs reads it without
    /// the crate): every name `model::snmp` spells must be one it knows.
    #[test]
    fn every_snmp_name_is_in_the_catalogue() {
        let source = include_str!("../model/snmp.rs");
        let names: Vec<&str> = source
            .lines()
            .filter(|line| line.starts_with("pub const "))
            .filter_map(|line| line.split('"').nth(1))
            .collect();
        assert!(names.len() >= 30, "{names:?}");
        for name in names {
            let class = catalogue::classify(name);
            assert!(
                !matches!(class, catalogue::Class::Unknown),
                "{name} is not in the catalogue"
            );
        }
    }

    #[test]
    fn rx_missed_errors_raise_with_the_interface() {
        let iface = |missed| InterfaceSample {
            index: 2,
            name: "eth9".into(),
            counters: LinkCounters {
                rx_missed_errors: missed,
                ..Default::default()
            },
            ..Default::default()
        };
        let a = Sample {
            mono: 0.0,
            interfaces: vec![iface(0)],
            ..Default::default()
        };
        let b = Sample {
            mono: 1.0,
            interfaces: vec![iface(30)],
            ..Default::default()
        };
        let found = evaluate(Some(&a), &b, &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, "counter:netdev.rx_missed_errors");
        assert!(
            found[0]
                .summary
                .starts_with("eth9: netdev.rx_missed_errors 30.0/s")
        );
        assert!(
            found[0].hint.contains("ethtool -G eth9 rx N"),
            "{}",
            found[0].hint
        );
        assert_eq!(found[0].evidence.row, "eth9");
    }

    #[test]
    fn softnet_counters_move_summed_over_cpus_across_a_wrap() {
        use crate::model::cpu::{CpuCounters, CpuSample, Softnet};
        let at = |mono: f64, dropped: [u32; 2]| Sample {
            mono,
            netns: "cat-test".into(),
            cpu: Some(CpuSample {
                cpus: (0..2)
                    .map(|cpu| CpuCounters {
                        cpu,
                        softnet: Some(Softnet {
                            dropped: dropped[cpu as usize],
                            ..Softnet::default()
                        }),
                        ..CpuCounters::default()
                    })
                    .collect(),
                ..CpuSample::default()
            }),
            ..Default::default()
        };
        // CPU 0 wraps (+10), CPU 1 rises by 20: 30 drops in 2 s.
        let moved = moved(Some(&at(0.0, [u32::MAX - 4, 100])), &at(2.0, [5, 120]));
        let dropped = moved.iter().find(|m| m.id == "softnet.dropped");
        assert_eq!(dropped.map(|m| m.per_s), Some(15.0), "{moved:?}");
        assert!(dropped.is_some_and(|m| m.entry.is_some()));
        assert!(moved.iter().all(|m| m.id != "softnet.time_squeeze"));
        // Covered by softnet-drops: no counter finding of its own.
        let previous = at(0.0, [0, 0]);
        assert!(evaluate(Some(&previous), &at(1.0, [500, 0]), &[]).is_empty());
    }

    #[test]
    fn moved_lists_rising_failure_counters_and_unknown_fields() {
        let a = sample(
            0.0,
            &[
                (snmp::UDP_NO_PORTS, 10),
                (snmp::TCP_IN_SEGS, 0),
                ("MPTcpExt.MPJoinSynRx", 0),
                (snmp::TCP_EXT_TCP_BACKLOG_DROP, 4),
            ],
        );
        let b = sample(
            2.0,
            &[
                (snmp::UDP_NO_PORTS, 30),
                (snmp::TCP_IN_SEGS, 900),
                ("MPTcpExt.MPJoinSynRx", 2),
                (snmp::TCP_EXT_TCP_BACKLOG_DROP, 4),
            ],
        );
        let found = moved(Some(&a), &b);
        let ids: Vec<(&str, bool, f64)> = found
            .iter()
            .map(|m| (m.id.as_str(), m.entry.is_some(), m.per_s))
            .collect();
        assert_eq!(
            ids,
            [
                (snmp::UDP_NO_PORTS, true, 10.0),
                ("MPTcpExt.MPJoinSynRx", false, 1.0)
            ]
        );
        assert!(moved(None, &b).is_empty());
    }
}
