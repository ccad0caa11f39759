//! What limited the sending connections over the interval, from the
//! connection catalogue (`catalogue::conns`): tcp_info's busy,
//! rwnd_limited and sndbuf_limited times are cumulative microseconds, so
//! their deltas between two samples say what held each sender during the
//! interval. Connections are judged in groups the way a person reads
//! them, a process and the /24 (IPv6: /64) it sends to in one namespace,
//! never one finding per socket: "PID 812 (rsync) -> 198.18.4.0/24".

use super::catalogue::conns::{APP_LIMITED, Conn, QUEUEING, RWND_LIMITED, SNDBUF_LIMITED};
use super::{Evidence, Finding, Hold};
use crate::model::netns::PRIMARY;
use crate::model::sockets::{Proto, SocketKey, SocketSample, TcpLimits, TcpSample};
use crate::model::{InterfaceSample, Sample};
use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// A group counts once its connections were busy (had data in flight)
/// for at least this share of the interval, summed: an idle pool raises
/// nothing.
const MIN_BUSY_SHARE: f64 = 0.2;

/// The destination a group is named by: the peer's /24 or /64, as the
/// network address (kept as an address: a string per socket cost more
/// than the rest of the evaluation at 100,000 sockets).
fn subnet(peer: SocketAddr) -> IpAddr {
    match peer.ip() {
        IpAddr::V4(ip) => {
            let [a, b, c, _] = ip.octets();
            IpAddr::from([a, b, c, 0])
        }
        IpAddr::V6(ip) => {
            let s = ip.segments();
            IpAddr::from([s[0], s[1], s[2], s[3], 0, 0, 0, 0])
        }
    }
}

/// "198.18.4.0/24", "2001:db8:1:2::/64".
fn subnet_text(net: IpAddr) -> String {
    match net {
        IpAddr::V4(ip) => format!("{ip}/24"),
        IpAddr::V6(ip) => format!("{ip}/64"),
    }
}

/// One process's connections to one subnet, over the interval.
#[derive(Default)]
struct Group<'a> {
    owner: Option<&'a SocketSample>,
    connections: u32,
    busy_us: u64,
    rwnd_us: u64,
    sndbuf_us: u64,
    app_limited: u32,
    /// The connection busiest in the interval: its window and RTT.
    busiest: Option<(u64, &'a SocketSample)>,
}

impl Group<'_> {
    fn share(&self, part: u64) -> f64 {
        100.0 * part as f64 / self.busy_us as f64
    }
}

/// Busy, rwnd-limited and sndbuf-limited microseconds in the interval: the
/// deltas from the same connection in `before`, or the whole counts of a
/// connection that is new (its counters started at zero).
fn deltas(now: &TcpLimits, before: Option<&TcpLimits>) -> (u64, u64, u64) {
    let was = before.copied().unwrap_or_default();
    (
        now.busy_us.saturating_sub(was.busy_us),
        now.rwnd_limited_us.saturating_sub(was.rwnd_limited_us),
        now.sndbuf_limited_us.saturating_sub(was.sndbuf_limited_us),
    )
}

pub fn evaluate(previous: Option<&Sample>, current: &Sample) -> Vec<Finding> {
    let Some(previous) = previous else {
        return Vec::new();
    };
    let interval_us = (current.mono - previous.mono) * 1e6;
    if interval_us <= 0.0 {
        return Vec::new();
    }
    // Sized to the senders, not the sockets: most of a big host's sockets
    // carry no limits, and a map for all of them was a third of a socket
    // table at the live view's peak.
    let senders = previous.sockets.iter().filter(|s| s.limits.is_some());
    let mut before: HashMap<SocketKey, &TcpLimits> = HashMap::with_capacity(senders.count());
    for socket in &previous.sockets {
        if let Some(limits) = socket.limits.as_deref() {
            before.insert(socket.key(), limits);
        }
    }
    let mut groups: BTreeMap<(u16, Option<u32>, IpAddr), Group> = BTreeMap::new();
    for socket in current.sockets.iter().filter(|s| s.proto == Proto::Tcp) {
        let Some(limits) = socket.limits.as_deref() else {
            continue;
        };
        let (busy, rwnd, sndbuf) = deltas(limits, before.get(&socket.key()).copied());
        if busy == 0 {
            continue;
        }
        let pid = socket.users.first().map(|u| u.pid);
        let group = groups
            .entry((socket.netns, pid, subnet(socket.peer)))
            .or_default();
        group.owner = group.owner.or(Some(socket));
        group.connections += 1;
        group.busy_us += busy;
        group.rwnd_us += rwnd;
        group.sndbuf_us += sndbuf;
        group.app_limited += u32::from(limits.app_limited);
        if group.busiest.is_none_or(|(most, _)| busy > most) {
            group.busiest = Some((busy, socket));
        }
    }
    groups
        .into_iter()
        .filter(|(_, g)| g.busy_us as f64 >= MIN_BUSY_SHARE * interval_us)
        .filter_map(|((netns, pid, net), group)| {
            let to = subnet_text(net);
            // The settings netlens reads are the watched namespace's.
            let knobs = current.tcp.as_ref().filter(|_| netns == PRIMARY);
            let finding = judge(&group, previous, current, knobs)?;
            let who = group.owner.map_or_else(String::new, super::process_of);
            let mut row = match pid {
                Some(pid) => format!("pid:{pid} "),
                None => String::new(),
            };
            row.push_str(&format!("dst:{to} state:estab"));
            Some(Finding {
                hold: Hold::default(),
                id: finding.0.finding,
                severity: finding.0.level.into(),
                summary: format!("{who} -> {to}: {}", finding.1),
                hint: finding.2,
                evidence: Evidence {
                    netns: Some(netns),
                    tab: "sockets",
                    row,
                },
            })
        })
        .collect()
}

/// The entry that explains the group, the summary's words and the fix
/// with the setting's value (`knobs`: the group's namespace's settings,
/// when netlens read them): the receiver's window first (the sender can do
/// nothing about it, and a slow reader's late ACKs stretch the RTT too),
/// then the send buffer, then a queue on the way, then the application.
fn judge(
    group: &Group,
    previous: &Sample,
    current: &Sample,
    knobs: Option<&TcpSample>,
) -> Option<(&'static Conn, String, String)> {
    let rwnd = group.share(group.rwnd_us);
    let sndbuf = group.share(group.sndbuf_us);
    let connections = match group.connections {
        1 => "1 connection".to_string(),
        n => format!("{n} connections"),
    };
    let value = |name: &str| {
        knobs
            .and_then(|t| t.knob(name))
            .map_or(String::new(), |v| format!(", here {v}"))
    };
    if rwnd >= RWND_LIMITED.threshold {
        let cap = group.busiest.and_then(|(_, s)| window_cap(s));
        let local = group.busiest.and_then(|(_, s)| local_receiver(current, s));
        let receiver = local.map_or_else(
            || "the receiver".to_string(),
            |r| format!("the receiver, {},", super::process_of(r)),
        );
        // The receiver's setting: known only when it is in this namespace.
        let rmem = if local.is_some() {
            value("net.ipv4.tcp_rmem")
        } else {
            String::new()
        };
        return Some((
            &RWND_LIMITED,
            format!(
                "{connections} limited by the receiver's window {rwnd:.0}% of the busy time{}",
                cap.map_or(String::new(), |c| format!(" ({c})"))
            ),
            format!(
                "{receiver} does not open its window: raise its receive buffer (its SO_RCVBUF, \
                 or net.ipv4.tcp_rmem's maximum{}) or make it read faster; nothing on this \
                 sender or the path helps",
                rmem
            ),
        ));
    }
    if sndbuf >= SNDBUF_LIMITED.threshold {
        return Some((
            &SNDBUF_LIMITED,
            format!("{connections} held by the send buffer {sndbuf:.0}% of the busy time"),
            format!(
                "raise the sender's send buffer: its SO_SNDBUF, or net.ipv4.tcp_wmem's maximum{}",
                value("net.ipv4.tcp_wmem")
            ),
        ));
    }
    if let Some((_, busiest)) = group.busiest
        && let Some(found) = queueing(busiest, previous, current, &connections)
    {
        return Some(found);
    }
    let app = 100.0 * f64::from(group.app_limited) / f64::from(group.connections);
    (app >= APP_LIMITED.threshold).then(|| {
        (
            &APP_LIMITED,
            format!(
                "{connections} application-limited (window {rwnd:.0}%, send buffer {sndbuf:.0}% \
                 of the busy time): the application wrote less than they carry"
            ),
            "the time is the application's, not the network's: look at the sender (its CPU, \
             its own upstream, how it writes)"
                .to_string(),
        )
    })
}

/// conn:queueing for the group's busiest connection: its queueing delay
/// (srtt - min_rtt), and where the wait is: this host's qdisc on the
/// interface holding the connection's local address when that qdisc's
/// backlog, drained at the rate the qdisc sent over the interval, is at
/// least half the delay; else further on the path.
fn queueing(
    socket: &SocketSample,
    previous: &Sample,
    current: &Sample,
    connections: &str,
) -> Option<(&'static Conn, String, String)> {
    let srtt_ms = f64::from(socket.tcp.as_ref()?.rtt_us) / 1000.0;
    let min_ms = f64::from(socket.limits.as_deref()?.min_rtt_us) / 1000.0;
    let wait_ms = srtt_ms - min_ms;
    if min_ms <= 0.0 || wait_ms < QUEUEING.threshold || wait_ms < srtt_ms / 2.0 {
        return None;
    }
    let unsent = socket.limits.as_deref().map_or(0, |l| l.notsent_bytes);
    let unsent = if unsent > 0 {
        format!(
            "; {} more wait unsent in the socket",
            super::backlog_size(u64::from(unsent))
        )
    } else {
        String::new()
    };
    let summary = format!(
        "{connections} waiting in a queue: RTT {srtt_ms:.1} ms against {min_ms:.2} ms at best"
    );
    let seconds = current.mono - previous.mono;
    let here = egress(current, socket).and_then(|iface| qdisc_wait(previous, seconds, iface));
    Some(match here {
        Some((iface, kind, backlog, qdisc_ms)) if qdisc_ms >= wait_ms / 2.0 => (
            &QUEUEING,
            format!(
                "{summary}, {wait_ms:.0} ms of it in this host's {kind} qdisc on {iface} \
                 (backlog {}, about {qdisc_ms:.0} ms at its rate){unsent}",
                super::backlog_size(backlog)
            ),
            format!(
                "the queue is this host's: shorten it with the qdisc's limit or a shaper's \
                 latency or burst (tc -s qdisc show dev {iface}), or an AQM qdisc such as \
                 fq_codel; more buffer only adds delay"
            ),
        ),
        _ => (
            &QUEUEING,
            format!(
                "{summary}: {wait_ms:.0} ms queued further on the path (this host's qdisc \
                 holds no such backlog){unsent}"
            ),
            format!(
                "a buffer between here and {}: netlens trace {} shows the hop where the \
                 delay begins",
                socket.peer.ip(),
                socket.peer.ip()
            ),
        ),
    })
}

/// The interface holding the socket's local address, in its namespace.
fn egress<'a>(current: &'a Sample, socket: &SocketSample) -> Option<&'a InterfaceSample> {
    let local = socket.local.ip().to_string();
    current.interfaces.iter().find(|i| {
        i.netns == socket.netns
            && i.addresses
                .iter()
                .any(|a| a.split('/').next() == Some(local.as_str()))
    })
}

/// The interface's root qdisc: its name, kind, backlog in bytes and how
/// many milliseconds that backlog takes at the rate the qdisc sent over
/// the `seconds` since `previous`.
fn qdisc_wait<'a>(
    previous: &Sample,
    seconds: f64,
    iface: &'a InterfaceSample,
) -> Option<(&'a str, &'a str, u64, f64)> {
    let now = iface.qdisc.as_ref()?;
    let before = previous
        .interfaces
        .iter()
        .find(|i| i.netns == iface.netns && i.index == iface.index)?
        .qdisc
        .as_ref()?;
    let per_s = now.bytes.checked_sub(before.bytes)? as f64 / seconds;
    (per_s > 0.0).then(|| {
        let ms = now.backlog_bytes as f64 / per_s * 1000.0;
        (
            iface.name.as_str(),
            now.kind.as_str(),
            now.backlog_bytes,
            ms,
        )
    })
}

/// "window 64 KB at 40 ms RTT caps it near 13 Mbit/s", from the peer's
/// advertised window and the smoothed RTT of the connection.
fn window_cap(socket: &SocketSample) -> Option<String> {
    let window = socket.limits.as_deref()?.snd_wnd;
    let rtt_us = socket.tcp.as_ref()?.rtt_us;
    if window == 0 {
        return Some("window 0: the receiver stopped reading".to_string());
    }
    if rtt_us == 0 {
        return None;
    }
    let mbit_per_s = f64::from(window) * 8.0 / f64::from(rtt_us);
    Some(format!(
        "window {} at {:.1} ms RTT caps it near {mbit_per_s:.1} Mbit/s",
        super::backlog_size(u64::from(window)),
        f64::from(rtt_us) / 1000.0,
    ))
}

/// The socket on this host at the other end of `socket`, if the receiver
/// is local (same namespace).
fn local_receiver<'a>(current: &'a Sample, socket: &SocketSample) -> Option<&'a SocketSample> {
    current.sockets.iter().find(|s| {
        s.proto == Proto::Tcp
            && s.netns == socket.netns
            && s.local == socket.peer
            && s.peer == socket.local
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;
    use crate::model::sockets::{SocketUser, TcpInfoSample};

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
            sockets: before,
            ..Default::default()
        };
        let b = Sample {
            mono: 10.0 + INTERVAL,
            sockets: after,
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
                    super::super::backlog_size(backlog)
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
}
