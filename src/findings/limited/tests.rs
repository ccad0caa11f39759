use super::*;
use crate::findings::Severity;
use crate::model::InterfaceSample;
use crate::model::sockets::SocketSample;
use crate::model::sockets::{SocketUser, TcpInfoSample, TcpLimits};

const INTERVAL: f64 = 2.0;

/// A sender PID `pid` from 198.18.0.1:`port` to `peer`, with its
/// cumulative limits (microseconds) and the window and RTT.
fn sender(pid: u32, port: u16, peer: &str, busy: u64, rwnd: u64, sndbuf: u64) -> SocketSample {
    SocketSample {
        proto: Proto::Tcp,
        state: 1,
        local: format!("198.18.0.1:{port}").parse().unwrap(),
        peer: peer.parse().unwrap(),
        inode: u32::from(port),
        users: vec![SocketUser {
            process: "rsync".into(),
            pid,
            fd: 3,
        }]
        .into(),
        tcp: Some(TcpInfoSample {
            rtt_us: 40_000,
            ..Default::default()
        }),
        limits: Some(Box::new(TcpLimits {
            busy_us: busy,
            rwnd_limited_us: rwnd,
            sndbuf_limited_us: sndbuf,
            snd_wnd: 65_536,
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn samples(before: Vec<SocketSample>, after: Vec<SocketSample>) -> (Sample, Sample) {
    let a = Sample {
        mono: 10.0,
        sockets: before.into(),
        ..Default::default()
    };
    let b = Sample {
        mono: 10.0 + INTERVAL,
        sockets: after.into(),
        ..Default::default()
    };
    (a, b)
}

/// `n` connections of PID 812 to 198.18.4.0/24, each busy `busy_s` of
/// the interval with `rwnd` and `sndbuf` of it limited (seconds).
fn group(n: u16, busy_s: f64, rwnd_s: f64, sndbuf_s: f64) -> Vec<Finding> {
    let us = |s: f64| (s * 1e6) as u64;
    let base = 5_000_000;
    let before = (0..n)
        .map(|i| sender(812, 40_000 + i, "198.18.4.9:873", base, base / 2, 0))
        .collect();
    let after = (0..n)
        .map(|i| {
            sender(
                812,
                40_000 + i,
                "198.18.4.9:873",
                base + us(busy_s),
                base / 2 + us(rwnd_s),
                us(sndbuf_s),
            )
        })
        .collect();
    let (a, b) = samples(before, after);
    evaluate(Some(&a), &b)
}

#[test]
fn a_window_limited_group_is_one_finding_naming_process_subnet_and_cap() {
    for (n, busy, share) in [(1, 1.0, 0.6), (3, 1.9, 0.78), (12, 0.5, 0.95)] {
        let found = group(n, busy, busy * share, 0.0);
        assert_eq!(found.len(), 1, "{n} {busy} {share}: {found:?}");
        let f = &found[0];
        assert_eq!(f.id, "conn:rwnd-limited");
        assert_eq!(f.severity, Severity::Warn);
        assert!(
            f.summary.starts_with("PID 812 (rsync) -> 198.18.4.0/24: "),
            "{}",
            f.summary
        );
        let pct = format!("{:.0}% of the busy time", share * 100.0);
        assert!(f.summary.contains(&pct), "{}", f.summary);
        // 64 KiB at 40 ms: 13.1 Mbit/s.
        assert!(
            f.summary
                .contains("64 KiB at 40.0 ms RTT caps it near 13.1 Mbit/s"),
            "{}",
            f.summary
        );
        assert!(f.hint.contains("tcp_rmem"), "{}", f.hint);
        assert_eq!(f.evidence.row, "pid:812 dst:198.18.4.0/24 state:estab");
    }
}

#[test]
fn below_the_share_or_idle_raises_nothing() {
    // Limited less than half the busy time.
    assert!(group(2, 1.5, 0.6, 0.0).is_empty());
    // Limited all the time it was busy, but busy a tenth of the interval.
    assert!(group(1, 0.2, 0.2, 0.0).is_empty());
    // No busy time at all.
    assert!(group(4, 0.0, 0.0, 0.0).is_empty());
}

#[test]
fn a_send_buffer_limited_group_names_tcp_wmem_with_its_value() {
    let (mut a, mut b) = samples(
        vec![sender(90, 5000, "[2001:db8:1:2::7]:443", 0, 0, 0)],
        vec![sender(
            90,
            5000,
            "[2001:db8:1:2::7]:443",
            1_800_000,
            0,
            1_500_000,
        )],
    );
    let mut tcp = TcpSample::default();
    tcp.knobs
        .insert("net.ipv4.tcp_wmem".into(), "4096 16384 65536".into());
    b.tcp = Some(tcp);
    a.tcp = None;
    let found = evaluate(Some(&a), &b);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].id, "conn:sndbuf-limited");
    assert!(
        found[0]
            .summary
            .contains("-> 2001:db8:1:2::/64: 1 connection held by the send buffer 83%"),
        "{}",
        found[0].summary
    );
    assert!(
        found[0]
            .hint
            .contains("tcp_wmem's maximum, here 4096 16384 65536"),
        "{}",
        found[0].hint
    );
}

#[test]
fn the_receivers_tcp_rmem_is_named_only_when_the_receiver_is_here() {
    let receiver = |mut s: SocketSample| {
        (s.local, s.peer) = (s.peer, s.local);
        s.limits = None;
        s.users[0].pid = 44;
        s
    };
    for local in [false, true] {
        let one = |busy, rwnd| sender(91, 5100, "198.18.0.9:80", busy, rwnd, 0);
        let (mut a, mut b) = samples(vec![one(0, 0)], vec![one(1_800_000, 1_500_000)]);
        if local {
            b.sockets.push(receiver(one(0, 0)));
        }
        let mut tcp = TcpSample::default();
        tcp.knobs
            .insert("net.ipv4.tcp_rmem".into(), "4096 8192 16384".into());
        b.tcp = Some(tcp);
        a.tcp = None;
        let found = evaluate(Some(&a), &b);
        assert_eq!(found[0].id, "conn:rwnd-limited", "{found:?}");
        let named = found[0]
            .hint
            .contains("tcp_rmem's maximum, here 4096 8192 16384");
        assert_eq!(named, local, "{}", found[0].hint);
    }
}

#[test]
fn an_application_limited_group_is_info_not_the_network() {
    let app = |s: SocketSample| {
        let mut s = s;
        s.limits.as_mut().unwrap().app_limited = true;
        s
    };
    for n in [1u16, 5] {
        let before = (0..n)
            .map(|i| sender(7, 6000 + i, "198.18.9.1:80", 0, 0, 0))
            .collect();
        let after = (0..n)
            .map(|i| app(sender(7, 6000 + i, "198.18.9.1:80", 1_000_000, 10_000, 0)))
            .collect();
        let (a, b) = samples(before, after);
        let found = evaluate(Some(&a), &b);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, "conn:app-limited");
        assert_eq!(found[0].severity, Severity::Info);
        assert!(
            found[0].hint.contains("not the network's"),
            "{}",
            found[0].hint
        );
    }
}

#[test]
fn groups_split_by_process_and_subnet_and_a_new_connection_counts_whole() {
    let (a, b) = samples(
        vec![],
        vec![
            sender(1, 1000, "198.18.4.9:80", 1_500_000, 1_400_000, 0),
            sender(2, 1001, "198.18.4.9:80", 1_500_000, 1_400_000, 0),
            sender(1, 1002, "198.18.5.9:80", 1_500_000, 1_400_000, 0),
        ],
    );
    let found = evaluate(Some(&a), &b);
    let rows: Vec<&str> = found.iter().map(|f| f.evidence.row.as_str()).collect();
    assert_eq!(
        rows,
        [
            "pid:1 dst:198.18.4.0/24 state:estab",
            "pid:1 dst:198.18.5.0/24 state:estab",
            "pid:2 dst:198.18.4.0/24 state:estab"
        ]
    );
}

#[test]
fn a_local_receiver_is_named_and_a_zero_window_says_it_stopped_reading() {
    let mut slow = sender(5, 7000, "198.18.0.1:9000", 2_000_000, 1_900_000, 0);
    slow.limits.as_mut().unwrap().snd_wnd = 0;
    let mut receiver = sender(66, 9000, "198.18.0.1:7000", 0, 0, 0);
    receiver.limits = None;
    receiver.users = vec![SocketUser {
        process: "python3".into(),
        pid: 66,
        fd: 4,
    }]
    .into();
    let (a, b) = samples(vec![], vec![slow, receiver]);
    let found = evaluate(Some(&a), &b);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .summary
            .contains("window 0: the receiver stopped reading"),
        "{}",
        found[0].summary
    );
    assert!(
        found[0].hint.starts_with("the receiver, PID 66 (python3),"),
        "{}",
        found[0].hint
    );
}

/// A bulk sender from 198.18.0.1 with `srtt` and `min` RTT (ms) and an
/// interface holding that address whose qdisc sent `sent` bytes over
/// the interval and holds `backlog`.
fn queued(srtt: f64, min: f64, sent: u64, backlog: u64) -> Vec<Finding> {
    use crate::model::QdiscStats;
    let mut socket = sender(3, 5000, "198.18.7.7:80", 1_900_000, 0, 0);
    socket.tcp.as_mut().unwrap().rtt_us = (srtt * 1000.0) as u32;
    socket.limits.as_mut().unwrap().min_rtt_us = (min * 1000.0) as u32;
    let iface = |bytes, backlog_bytes| InterfaceSample {
        index: 2,
        name: "veth0".into(),
        addresses: vec!["198.18.0.1/24".into()],
        qdisc: Some(QdiscStats {
            kind: "tbf".into(),
            bytes,
            backlog_bytes,
            ..Default::default()
        }),
        ..Default::default()
    };
    let (mut a, mut b) = samples(vec![], vec![socket]);
    a.interfaces = vec![iface(1_000_000, 0)];
    b.interfaces = vec![iface(1_000_000 + sent, backlog)];
    evaluate(Some(&a), &b)
}

#[test]
fn a_queue_in_this_hosts_qdisc_is_named_with_its_share_of_the_wait() {
    // 2.5 MB over 2 s: 1.25 MB/s, so 125,000 bytes queued are 100 ms.
    for (srtt, backlog, ms) in [(120.0, 125_000, 100), (45.0, 50_000, 40)] {
        let found = queued(srtt, 0.1, 2_500_000, backlog);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, "conn:queueing");
        let summary = &found[0].summary;
        assert!(
            summary.contains(&format!("RTT {srtt:.1} ms against 0.10 ms at best")),
            "{summary}"
        );
        assert!(
            summary.contains(&format!(
                "in this host's tbf qdisc on veth0 (backlog {}, about {ms} ms at its rate)",
                crate::findings::backlog_size(backlog)
            )),
            "{summary}"
        );
        assert!(
            found[0].hint.contains("tc -s qdisc show dev veth0"),
            "{}",
            found[0].hint
        );
    }
}

#[test]
fn a_queue_the_qdisc_does_not_hold_is_further_on_the_path() {
    // 10 ms of backlog against a 60 ms wait.
    let found = queued(60.0, 0.2, 2_500_000, 12_500);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .summary
            .contains("60 ms queued further on the path"),
        "{}",
        found[0].summary
    );
    assert!(
        found[0].hint.contains("netlens trace 198.18.7.7"),
        "{}",
        found[0].hint
    );
}

#[test]
fn a_short_wait_or_one_small_beside_the_path_rtt_is_no_queue() {
    // Under 20 ms of wait; then 40 ms of wait on a 60 ms path.
    assert!(queued(15.0, 0.1, 2_500_000, 125_000).is_empty());
    assert!(queued(100.0, 60.0, 2_500_000, 125_000).is_empty());
}

/// One connection of PID 8 to 198.18.6.9 busy 1.8 s of the interval,
/// before and after `change` moved its counters (the before sample holds
/// them at zero).
fn moved_one(change: impl Fn(&mut SocketSample)) -> (Sample, Sample) {
    let one = |busy| sender(8, 4000, "198.18.6.9:80", busy, 0, 0);
    let mut after = one(1_800_000);
    change(&mut after);
    samples(vec![one(0)], vec![after])
}

fn set(s: &mut SocketSample, tcp: impl Fn(&mut TcpInfoSample), limits: impl Fn(&mut TcpLimits)) {
    tcp(s.tcp.as_mut().unwrap());
    limits(s.limits.as_deref_mut().unwrap());
}

#[test]
fn a_connection_at_its_pacing_cap_names_the_cap_not_the_network() {
    // Caps of 10 and 100 Mbit/s; delivered 96% and 85% of them over 2 s.
    for (cap_mbit, share) in [(10.0, 0.96), (100.0, 0.85)] {
        let cap = (cap_mbit * 1e6 / 8.0) as u64;
        let acked = (cap as f64 * share * INTERVAL) as u64;
        let (a, b) = moved_one(|s| {
            set(s, |t| t.bytes_acked = acked, |l| l.max_pacing_rate = cap);
            // The window held it part of the time too: the cap explains it.
            s.limits.as_deref_mut().unwrap().rwnd_limited_us = 1_000_000;
        });
        let found = evaluate(Some(&a), &b);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, "conn:pacing-capped");
        assert_eq!(found[0].severity, Severity::Warn);
        let summary = &found[0].summary;
        assert!(
            summary.contains(&format!(
                "1 connection capped by the application at {cap_mbit:.1} Mbit/s each"
            )),
            "{summary}"
        );
        assert!(
            summary.contains(&format!("{:.0}% of the cap", share * 100.0)),
            "{summary}"
        );
        assert!(found[0].hint.contains("PID 8 (rsync)"), "{}", found[0].hint);
    }
    // Half the cap delivered: something else holds it (here the window).
    let cap = 1_250_000;
    let (a, b) = moved_one(|s| {
        set(s, |t| t.bytes_acked = cap, |l| l.max_pacing_rate = cap);
        s.limits.as_deref_mut().unwrap().rwnd_limited_us = 1_500_000;
    });
    assert_eq!(evaluate(Some(&a), &b)[0].id, "conn:rwnd-limited");
    // No cap set (all ones): never pacing-capped.
    let (a, b) = moved_one(|s| {
        set(
            s,
            |t| t.bytes_acked = 1 << 30,
            |l| l.max_pacing_rate = u64::MAX,
        );
    });
    assert!(
        evaluate(Some(&a), &b)
            .iter()
            .all(|f| f.id != "conn:pacing-capped")
    );
}

#[test]
fn needless_retransmits_name_reordering_or_early_timers() {
    let knobs = |b: &mut Sample| {
        let mut tcp = TcpSample::default();
        for (k, v) in [
            ("net.ipv4.tcp_reordering", "3"),
            ("net.ipv4.tcp_max_reordering", "300"),
        ] {
            tcp.knobs.insert(k.into(), v.into());
        }
        b.tcp = Some(tcp);
    };
    // (retransmits, needless, reorderings, degree): the last two with the
    // degree where it started, so not the path's reordering.
    for (retrans, dsack, reord, degree) in [
        (100, 30, 12, 27),
        (20, 20, 1, 27),
        (400, 60, 0, 3),
        (50, 50, 2, 3),
    ] {
        let (a, mut b) = moved_one(|s| {
            set(
                s,
                |t| {
                    t.total_retrans = retrans;
                    t.rto_us = 204_000;
                },
                |l| {
                    l.dsack_dups = dsack;
                    l.reord_seen = reord;
                    l.reordering = degree;
                },
            );
        });
        knobs(&mut b);
        let found = evaluate(Some(&a), &b);
        assert_eq!(found[0].id, "conn:spurious-retrans", "{found:?}");
        let summary = &found[0].summary;
        let pct = f64::from(dsack) * 100.0 / f64::from(retrans);
        assert!(
            summary.contains(&format!(
                "retransmitted {retrans} segments, {dsack} ({pct:.0}%) needlessly"
            )),
            "{summary}"
        );
        if degree > 3 {
            assert!(
                summary.contains(&format!(
                    "the path reordered segments ({reord} reorderings; the sender now waits \
                     for 27 segments)"
                )),
                "{summary}"
            );
            assert!(
                found[0]
                    .hint
                    .contains("net.ipv4.tcp_max_reordering, here 300"),
                "{}",
                found[0].hint
            );
        } else {
            assert!(
                summary.contains("its timer fired before the ACK came (RTO 204 ms"),
                "{summary}"
            );
        }
    }
    // A few needless ones among many, or too few retransmits: not spurious.
    for (retrans, dsack) in [(200, 10), (8, 8)] {
        let (a, b) = moved_one(|s| {
            set(s, |t| t.total_retrans = retrans, |l| l.dsack_dups = dsack);
        });
        assert!(evaluate(Some(&a), &b).is_empty());
    }
}

#[test]
fn reordering_is_named_at_its_rate() {
    // 2 s: 4 reorderings are 2/s, 1 is 0.5/s (below 1/s); at degree 3
    // (tcp_reordering's start) the path did not reorder further than the
    // sender tolerates at first.
    for (reord, degree, raised) in [(4, 9, true), (40, 9, true), (1, 9, false), (40, 3, false)] {
        let (a, b) = moved_one(|s| {
            set(
                s,
                |_| {},
                |l| {
                    l.reord_seen = reord;
                    l.reordering = degree;
                },
            );
        });
        let found = evaluate(Some(&a), &b);
        assert_eq!(!found.is_empty(), raised, "{reord}: {found:?}");
        if raised {
            assert_eq!(found[0].id, "conn:reordering");
            assert_eq!(found[0].severity, Severity::Warn);
            assert!(
                found[0].summary.contains(&format!(
                    "out of order {reord} times ({:.1}/s); the sender now waits for 9 segments",
                    f64::from(reord) / INTERVAL
                )),
                "{}",
                found[0].summary
            );
        }
    }
}

#[test]
fn unsent_bytes_at_the_delivered_rate_are_the_applications_wait() {
    // 1.25 MB/s delivered: 2.5 MB unsent wait 2000 ms, 250 KB 200 ms,
    // 50 KB 40 ms (below the 100 ms threshold).
    for (notsent, ms) in [
        (2_500_000u32, Some(2000)),
        (250_000, Some(200)),
        (50_000, None),
    ] {
        let (a, mut b) = moved_one(|s| {
            set(
                s,
                |t| t.bytes_acked = 2_500_000,
                |l| l.notsent_bytes = notsent,
            );
        });
        let mut tcp = TcpSample::default();
        tcp.knobs
            .insert("net.ipv4.tcp_notsent_lowat".into(), "4294967295".into());
        b.tcp = Some(tcp);
        let found = evaluate(Some(&a), &b);
        match ms {
            Some(ms) => {
                assert_eq!(found.len(), 1, "{found:?}");
                assert_eq!(found[0].id, "conn:unsent-wait");
                assert!(
                    found[0]
                        .summary
                        .contains(&format!("waits {ms} ms in the socket before it is sent")),
                    "{}",
                    found[0].summary
                );
                assert!(
                    found[0]
                        .hint
                        .contains("net.ipv4.tcp_notsent_lowat, here 4294967295"),
                    "{}",
                    found[0].hint
                );
            }
            None => assert!(found.is_empty(), "{found:?}"),
        }
    }
}

/// A receiver, PID 900, on 198.18.0.1:5201 and up from `peer`, that had
/// received `received` bytes, advertising at most `window` at an RTT of
/// `rtt_us`, holding `unread` bytes in a buffer of `rcvbuf`.
fn receiver(peer: &str, received: u64, window: u32, rtt_us: u32, unread: u32) -> SocketSample {
    let port: u16 = peer.rsplit(':').next().unwrap().parse().unwrap();
    SocketSample {
        proto: Proto::Tcp,
        state: 1,
        local: "198.18.0.1:5201".parse().unwrap(),
        peer: peer.parse().unwrap(),
        inode: u32::from(port),
        recv_q: unread,
        rcvbuf: Some(65_536),
        users: vec![SocketUser {
            process: "iperf3".into(),
            pid: 900,
            fd: 5,
        }]
        .into(),
        tcp: Some(TcpInfoSample {
            bytes_received: received,
            ..Default::default()
        }),
        limits: Some(Box::new(TcpLimits {
            rcv_rtt_us: rtt_us,
            rcv_ssthresh: window,
            rcv_space: window * 2,
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// `n` receivers from 198.18.6.0/24 that received `share` of what their
/// windows let through over the interval, with `unread` bytes each, and
/// net.ipv4.tcp_rmem's maximum `rmem_max`.
fn receiving(
    n: u16,
    window: u32,
    rtt_us: u32,
    share: f64,
    unread: u32,
    rmem_max: u32,
) -> Vec<Finding> {
    let per_s = f64::from(window) / (f64::from(rtt_us) / 1e6);
    let got = (share * per_s * INTERVAL) as u64;
    let peer = |i: u16| format!("198.18.6.{}:{}", 2 + i, 40_000 + i);
    let before = (0..n)
        .map(|i| receiver(&peer(i), 1_000_000, window, rtt_us, 0))
        .collect();
    let after = (0..n)
        .map(|i| receiver(&peer(i), 1_000_000 + got, window, rtt_us, unread))
        .collect();
    let (a, mut b) = samples(before, after);
    let mut tcp = TcpSample::default();
    tcp.knobs
        .insert("net.ipv4.tcp_rmem".into(), format!("4096 65536 {rmem_max}"));
    b.tcp = Some(tcp);
    evaluate(Some(&a), &b)
}

#[test]
fn a_receive_window_that_holds_the_sender_is_named_on_the_receiver() {
    for (n, window, rtt_us, share) in [
        (1, 47_804, 20_000, 0.99),
        (4, 96_252, 21_000, 0.85),
        (2, 262_144, 3_000, 0.9),
    ] {
        let found = receiving(n, window, rtt_us, share, 0, 6_291_456);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.id, "conn:rcvbuf-limited");
        assert_eq!(f.severity, Severity::Warn);
        let connections = if n == 1 {
            "1 connection".to_string()
        } else {
            format!("{n} connections")
        };
        assert!(
            f.summary.starts_with("PID 900 (iperf3) <- 198.18.6.0/24: ")
                && f.summary.contains(&format!("{connections} received"))
                && f.summary
                    .contains(&format!("{:.0}% of what the window", share * 100.0))
                && f.summary
                    .contains(&format!("at {:.1} ms RTT", f64::from(rtt_us) / 1000.0)),
            "{}",
            f.summary
        );
        // rb (64 KiB) below tcp_rmem's maximum: the application's SO_RCVBUF.
        assert!(
            f.hint.contains("the application set SO_RCVBUF"),
            "{}",
            f.hint
        );
        assert!(f.hint.contains("here 4096 65536 6291456"), "{}", f.hint);
    }
    // At autotuning's ceiling, the ceiling is named.
    let found = receiving(1, 47_804, 20_000, 0.95, 0, 65_536);
    assert!(
        found[0].hint.contains("raise that maximum"),
        "{}",
        found[0].hint
    );
}

#[test]
fn a_receiver_with_room_a_slow_reader_or_a_local_sender_raises_no_rcvbuf_finding() {
    // Half of what the window lets through: the window is not what holds it.
    for share in [0.2, 0.5, 0.75] {
        assert!(receiving(3, 96_252, 21_000, share, 0, 6_291_456).is_empty());
    }
    // The application leaves half a window unread: its own slowness.
    assert!(receiving(1, 47_804, 20_000, 0.99, 30_000, 6_291_456).is_empty());
    // A window that filled once, not round after round (a long RTT in a
    // short interval).
    assert!(receiving(1, 1_000_000, 900_000, 0.99, 0, 6_291_456).is_empty());
    // A connection that was idle at the previous sample (no limits then):
    // its whole count is not this interval's.
    let (mut a, b) = samples(
        vec![receiver("198.18.6.2:40000", 0, 47_804, 20_000, 0)],
        vec![receiver("198.18.6.2:40000", 10_000_000, 47_804, 20_000, 0)],
    );
    a.sockets.modify(0, |s| s.limits = None);
    assert!(evaluate(Some(&a), &b).is_empty());
    // The sender is this host's own socket: its conn:rwnd-limited says it.
    let here = |received| {
        let mut s = receiver("198.18.0.1:40000", received, 47_804, 20_000, 0);
        s.local = "198.18.0.1:5201".parse().unwrap();
        let mut sender = s.clone();
        (sender.local, sender.peer) = (s.peer, s.local);
        sender.inode = 77;
        vec![s, sender]
    };
    let (a, b) = samples(here(1_000_000), here(1_000_000 + 4_700_000));
    assert!(
        !evaluate(Some(&a), &b)
            .iter()
            .any(|f| f.id == "conn:rcvbuf-limited")
    );
}
