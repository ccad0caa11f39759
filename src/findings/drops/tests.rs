//! Tests of the `drop:` findings over constructed samples.

use super::*;
use crate::findings::{Engine, Severity, Thresholds, evaluate as all};
use crate::model::snmp;
use crate::model::sockets::SocketSample;
use crate::model::sockets::{Proto, SocketUser, TcpSample};

const NS: u64 = 4026532999;

fn row(reason: &str, location: &str, packets: u64) -> DropRow {
    DropRow {
        netns_inode: NS,
        netns: "dropsui-t".into(),
        reason: reason.into(),
        location: location.into(),
        packets,
        ..DropRow::default()
    }
}

fn sample(mono: f64, rows: Vec<DropRow>) -> Sample {
    Sample {
        mono,
        netns: "dropsui-t".into(),
        drops: Some(DropsSample {
            netns_inode: NS,
            rows,
            ..DropsSample::default()
        }),
        ..Sample::default()
    }
}

fn ids(found: &[Finding]) -> Vec<&str> {
    found.iter().map(|f| f.id).collect()
}

/// Rows growing at rates that vary from interval to interval, over
/// intervals of different lengths: the finding is raised exactly in the
/// intervals whose summed rate of the reason is over its threshold.
#[test]
fn a_reason_over_its_threshold_fires_in_the_intervals_it_is_over() {
    let limit = catalogue::reason("NETFILTER_DROP").unwrap().per_s;
    // (interval seconds, growth at nf_hook_slow, growth at a second site)
    let steps: [(f64, u64, u64); 7] = [
        (1.0, 3, 2),      // 5/s: under
        (2.0, 30, 0),     // 15/s: over
        (0.5, 2, 1),      // 6/s: under
        (1.0, 6, 6),      // 12/s, summed over the two sites: over
        (3.0, 1000, 500), // 500/s: over
        (1.0, 10, 0),     // exactly the threshold: under
        (2.0, 0, 0),      // quiet
    ];
    let (mut mono, mut a, mut b) = (0.0, 100, 7);
    let mut previous = sample(mono, vec![row("NETFILTER_DROP", "nf_hook_slow", a)]);
    for (seconds, grow_a, grow_b) in steps {
        mono += seconds;
        a += grow_a;
        b += grow_b;
        let current = sample(
            mono,
            vec![
                row("NETFILTER_DROP", "nf_hook_slow", a),
                row("NETFILTER_DROP", "nft_do_chain", b),
            ],
        );
        // The second site is new in the first interval: all of its count
        // is new then.
        let grown_b = if mono == 1.0 { b } else { grow_b };
        let rate = (grow_a + grown_b) as f64 / seconds;
        let found = evaluate(Some(&previous), &current);
        if rate > limit {
            assert_eq!(ids(&found), ["drop:NETFILTER_DROP"], "at {rate}/s");
            let f = &found[0];
            assert!(
                f.summary.starts_with(&format!(
                    "NETFILTER_DROP {rate:.1}/s in netns dropsui-t at "
                )),
                "{}",
                f.summary
            );
            let busiest = if grow_a as f64 >= grown_b as f64 {
                "nf_hook_slow"
            } else {
                "nft_do_chain"
            };
            assert!(
                f.summary.contains(&format!("at {busiest}")),
                "{}",
                f.summary
            );
            assert!(
                f.summary
                    .ends_with(catalogue::reason("NETFILTER_DROP").unwrap().meaning)
            );
            assert_eq!(f.hint, catalogue::reason("NETFILTER_DROP").unwrap().fix);
            assert_eq!(
                (f.evidence.tab, f.evidence.row.as_str()),
                ("drops", "NETFILTER_DROP")
            );
            assert_eq!(f.severity, Severity::Warn);
        } else {
            assert!(found.is_empty(), "at {rate}/s: {found:?}");
        }
        previous = current;
    }
}

#[test]
fn crit_reasons_and_interfaces_in_the_fix() {
    let mut a = row("NOMEM", "skb_alloc", 0);
    a.interface = Some("veth7".into());
    let mut b = a.clone();
    b.packets = 3;
    let found = evaluate(Some(&sample(0.0, vec![a])), &sample(1.0, vec![b]));
    assert_eq!(ids(&found), ["drop:NOMEM"]);
    assert_eq!(found[0].severity, Severity::Crit);
    assert!(
        found[0].summary.contains("at skb_alloc on veth7"),
        "{}",
        found[0].summary
    );
    let mut q = row("QDISC_DROP", "__dev_queue_xmit", 0);
    q.interface = Some("veth7".into());
    let mut q2 = q.clone();
    q2.packets = 900;
    let found = evaluate(Some(&sample(0.0, vec![q])), &sample(1.0, vec![q2]));
    assert!(
        found[0].hint.contains("tc -s qdisc show dev veth7"),
        "{}",
        found[0].hint
    );
}

#[test]
fn a_firewall_drop_after_nat_names_both_destinations() {
    let mut a = row("NETFILTER_DROP", "nf_hook_slow", 0);
    a.interface = Some("r1in".into());
    a.destination = Some("198.18.3.2:8080".into());
    a.translated_from = Some("198.18.1.1:80".into());
    let mut b = a.clone();
    b.packets = 50;
    let found = evaluate(Some(&sample(0.0, vec![a])), &sample(1.0, vec![b]));
    assert_eq!(ids(&found), ["drop:NETFILTER_DROP"]);
    assert!(
        found[0].summary.contains(
            "at nf_hook_slow on r1in, to 198.18.3.2:8080 (translated from 198.18.1.1:80): "
        ),
        "{}",
        found[0].summary
    );
}

/// Normal life at any rate, and trouble under its thresholds, on a busy
/// healthy host: nothing.
#[test]
fn info_reasons_and_a_busy_healthy_sequence_raise_nothing() {
    let info = [
        "NOT_SPECIFIED",
        "SOCKET_CLOSE",
        "TCP_CLOSE",
        "QUEUE_PURGE",
        "TCP_OLD_DATA",
        "TCP_RESET",
        "UNHANDLED_PROTO",
        "OTHERHOST",
    ];
    let mut previous = sample(0.0, Vec::new());
    let mut mono = 0.0;
    for step in 1..=20u64 {
        mono += if step % 3 == 0 { 2.0 } else { 1.0 };
        let mut rows: Vec<DropRow> = info
            .iter()
            .enumerate()
            .map(|(i, r)| row(r, "tcp_v4_rcv", step * step * 5_000 * (i as u64 + 1)))
            .collect();
        // A few closed-port probes and firewall drops, under their limits.
        rows.push(row("NO_SOCKET", "__udp4_lib_rcv", step * 2));
        rows.push(row("NETFILTER_DROP", "nf_hook_slow", step * 5));
        let current = sample(mono, rows);
        let found = evaluate(Some(&previous), &current);
        assert!(found.is_empty(), "step {step}: {found:?}");
        previous = current;
    }
}

#[test]
fn a_matching_socket_names_its_process() {
    let socket = DropSocket {
        proto: "udp".into(),
        port: 5353,
    };
    let mut a = row("SOCKET_BACKLOG", "sk_add_backlog", 10);
    a.socket = Some(socket.clone());
    let mut b = a.clone();
    b.packets = 60;
    let mut current = sample(2.0, vec![b]);
    let bound = |port, pid, process: &str| SocketSample {
        proto: Proto::Udp,
        state: 7,
        local: format!("198.18.0.1:{port}").parse().unwrap(),
        peer: "0.0.0.0:0".parse().unwrap(),
        recv_q: 0,
        send_q: 0,
        uid: 0,
        inode: pid,
        users: vec![SocketUser {
            process: process.into(),
            pid,
            fd: 3,
        }]
        .into(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
        limits: None,
    };
    current.sockets = vec![bound(53, 11, "dnsd"), bound(5353, 812, "avahi-daemon")].into();
    let found = evaluate(Some(&sample(0.0, vec![a.clone()])), &current);
    assert_eq!(ids(&found), ["drop:SOCKET_BACKLOG"]);
    assert!(
        found[0]
            .summary
            .contains("at sk_add_backlog, udp:5353 PID 812 (avahi-daemon): "),
        "{}",
        found[0].summary
    );
    // A TCP socket on the same port is not the UDP one's owner.
    current.sockets.modify(1, |s| s.proto = Proto::Tcp);
    let found = evaluate(Some(&sample(0.0, vec![a])), &current);
    assert!(
        found[0].summary.contains("at sk_add_backlog, udp:5353: "),
        "{}",
        found[0].summary
    );
}

fn with_counters(mut s: Sample, counters: &[(&str, u64)]) -> Sample {
    let mut tcp = TcpSample::default();
    for (name, value) in counters {
        tcp.counters.insert(name.to_string(), *value);
    }
    s.tcp = Some(tcp);
    s
}

/// Udp.NoPorts and NO_SOCKET count the same datagrams: with the reason
/// raised, the counter's finding is not; without it, the counter's is.
#[test]
fn a_raised_reason_suppresses_the_counters_that_list_it() {
    let a = with_counters(
        sample(0.0, vec![row("NO_SOCKET", "__udp4_lib_rcv", 0)]),
        &[(snmp::UDP_NO_PORTS, 0)],
    );
    let b = with_counters(
        sample(1.0, vec![row("NO_SOCKET", "__udp4_lib_rcv", 80)]),
        &[(snmp::UDP_NO_PORTS, 80)],
    );
    let found = all(Some(&a), &b, &Thresholds::DEFAULT);
    assert!(ids(&found).contains(&"drop:NO_SOCKET"), "{found:?}");
    assert!(!ids(&found).contains(&"counter:Udp.NoPorts"), "{found:?}");
    // Reasons not counted (no eBPF): the counter speaks.
    let mut b2 = b.clone();
    b2.drops.as_mut().unwrap().unavailable = Some("disabled by --no-bpf".into());
    let found = all(Some(&a), &b2, &Thresholds::DEFAULT);
    assert!(ids(&found).contains(&"counter:Udp.NoPorts"), "{found:?}");
    assert!(
        !ids(&found).iter().any(|id| id.starts_with("drop:")),
        "{found:?}"
    );
    // Another reason raised does not silence an unrelated counter.
    let b3 = with_counters(
        sample(1.0, vec![row("NETFILTER_DROP", "nf_hook_slow", 80)]),
        &[(snmp::UDP_NO_PORTS, 80)],
    );
    let found = all(Some(&a), &b3, &Thresholds::DEFAULT);
    assert!(ids(&found).contains(&"counter:Udp.NoPorts"), "{found:?}");
    assert!(ids(&found).contains(&"drop:NETFILTER_DROP"), "{found:?}");
}

/// A live view loads the drop program after its first sample: the sample
/// it first counts in has no reason rate yet, and the counters a reason
/// would name wait for it rather than fire for one sample; the others do
/// not wait.
#[test]
fn counters_wait_for_the_reasons_one_sample_after_their_program_attached() {
    let mut loading = with_counters(
        sample(0.0, vec![]),
        &[(snmp::UDP_NO_PORTS, 0), ("TcpExt.TCPAbortOnTimeout", 0)],
    );
    loading.drops.as_mut().unwrap().unavailable =
        Some("its eBPF program loads after the first sample".into());
    let attached = with_counters(
        sample(0.25, vec![row("NO_SOCKET", "__udp4_lib_rcv", 0)]),
        &[(snmp::UDP_NO_PORTS, 50), ("TcpExt.TCPAbortOnTimeout", 50)],
    );
    let found = all(Some(&loading), &attached, &Thresholds::DEFAULT);
    assert!(!ids(&found).contains(&"counter:Udp.NoPorts"), "{found:?}");
    // Its counts cover part of the interval only: no rate yet.
    let mut attached_busy = attached.clone();
    attached_busy.drops.as_mut().unwrap().rows[0].packets = 20;
    assert!(
        site_rates(Some(&loading), &attached_busy)
            .iter()
            .all(|s| s.per_s.is_none())
    );
    assert!(
        ids(&found).contains(&"counter:TcpExt.TCPAbortOnTimeout"),
        "{found:?}"
    );
    let next = with_counters(
        sample(1.25, vec![row("NO_SOCKET", "__udp4_lib_rcv", 200)]),
        &[(snmp::UDP_NO_PORTS, 250), ("TcpExt.TCPAbortOnTimeout", 50)],
    );
    let found = all(Some(&attached), &next, &Thresholds::DEFAULT);
    assert!(ids(&found).contains(&"drop:NO_SOCKET"), "{found:?}");
    assert!(!ids(&found).contains(&"counter:Udp.NoPorts"), "{found:?}");
}

#[test]
fn covered_unknown_and_other_namespace_reasons() {
    // Covered: listen-overflow reports it, not drop:.
    let a = sample(0.0, vec![row("TCP_LISTEN_OVERFLOW", "tcp_conn_request", 0)]);
    let b = sample(
        1.0,
        vec![row("TCP_LISTEN_OVERFLOW", "tcp_conn_request", 500)],
    );
    assert!(evaluate(Some(&a), &b).is_empty());
    // A newer kernel's reason: shown by name, warn above the default.
    let a = sample(0.0, vec![row("BRAND_NEW", "new_fn", 0)]);
    let b = sample(1.0, vec![row("BRAND_NEW", "new_fn", 9)]);
    let found = evaluate(Some(&a), &b);
    assert_eq!(ids(&found), [DROP_UNKNOWN]);
    assert!(
        found[0]
            .summary
            .starts_with("BRAND_NEW 9.0/s in netns dropsui-t at new_fn: not in the catalogue"),
        "{}",
        found[0].summary
    );
    assert_eq!(found[0].evidence.row, "BRAND_NEW");
    // Another namespace's drops are not this one's.
    let mut other = row("NETFILTER_DROP", "nf_hook_slow", 0);
    other.netns_inode = NS + 1;
    let mut other2 = other.clone();
    other2.packets = 10_000;
    assert!(evaluate(Some(&sample(0.0, vec![other])), &sample(1.0, vec![other2])).is_empty());
    // A reload (counts went down) is no rate.
    let a = sample(0.0, vec![row("NO_SOCKET", "x", 900)]);
    let b = sample(1.0, vec![row("NO_SOCKET", "x", 3)]);
    assert!(evaluate(Some(&a), &b).is_empty());
}

/// The engine's hysteresis applies as to every finding: shown while it
/// holds, then calm for findings_off_samples.
#[test]
fn drop_findings_go_through_the_hysteresis() {
    let mut engine = Engine::default();
    let limits = Thresholds::DEFAULT;
    let counts = [0u64, 100, 200, 200, 200, 200, 200];
    let mut previous: Option<Sample> = None;
    let mut seen = Vec::new();
    for (i, packets) in counts.iter().enumerate() {
        let current = sample(i as f64, vec![row("NO_SOCKET", "__udp4_lib_rcv", *packets)]);
        let shown = engine.step(previous.as_ref(), &current, &limits);
        seen.push(
            shown
                .iter()
                .any(|f| f.id == "drop:NO_SOCKET" && f.hold.calm == 0),
        );
        previous = Some(current);
    }
    assert_eq!(seen, [false, true, true, false, false, false, false]);
}
