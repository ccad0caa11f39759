//! Findings read off the socket table, where no counter tells: close-wait
//! (a process that does not close what its peers closed), port-exhaustion
//! (a client running out of ephemeral ports towards one destination: the
//! EADDRNOTAVAIL no counter records) and connect-timeout (connects whose
//! SYN goes unanswered). Thresholds come from `Thresholds`; the man page
//! (FINDINGS, CONFIGURATION) documents each.
//!
//! Each finding's evidence row is a Sockets filter ("close-wait pid=2231
//! :8443"): stable across samples (the hysteresis key) and, on Enter, the
//! very sockets that make the finding.

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::model::Sample;
use crate::model::snmp;
use crate::model::socket_table::Socket;
use crate::model::sockets::{
    Proto, SocketKey, TCP_CLOSE_WAIT, TCP_LISTEN, TCP_SYN_SENT, TCP_TIME_WAIT, TcpSample,
};
use crate::model::tcp_rates::TcpRates;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};

pub const CLOSE_WAIT: &str = "close-wait";
pub const PORT_EXHAUSTION: &str = "port-exhaustion";
pub const CONNECT_TIMEOUT: &str = "connect-timeout";

pub fn evaluate(previous: Option<&Sample>, current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    let mut out = close_wait(previous, current, limits);
    if let Some(tcp) = current.tcp.as_ref() {
        out.extend(port_exhaustion(current, tcp, limits));
    }
    out.extend(connect_timeout(previous, current, limits));
    out
}

/// "PID 2231 (java)" for a socket's first owner.
fn process(user: Option<(u32, &str)>) -> Option<String> {
    user.map(|(pid, name)| super::pid_name(pid, name))
}

fn first_owner<'a>(socket: &Socket<'a>) -> Option<(u32, &'a str)> {
    socket.users.first().map(|u| (u.pid, u.process.as_str()))
}

fn tcp_in(socket: &Socket, state: u8) -> bool {
    socket.proto == Proto::Tcp && socket.state == state
}

/// One process's CLOSE_WAIT sockets on one local port.
#[derive(Default)]
struct Pile<'a> {
    owner: Option<(u32, &'a str)>,
    count: u32,
    /// Of them, those already in CLOSE_WAIT in the sample before.
    held: u32,
    denied: bool,
}

/// close-wait: the peer closed (its FIN arrived) and the application never
/// called close(). A socket that stays in CLOSE_WAIT from one sample to the
/// next is held, not being closed; a pile of held ones that is large, or
/// smaller but growing, is a leak.
fn close_wait(previous: Option<&Sample>, current: &Sample, limits: &Thresholds) -> Vec<Finding> {
    let Some(previous) = previous else {
        return Vec::new();
    };
    let before: HashSet<SocketKey> = previous
        .sockets
        .iter()
        .filter(|s| tcp_in(s, TCP_CLOSE_WAIT))
        .map(|s| s.key())
        .collect();
    // Keyed by namespace too: under --all-netns two namespaces' piles on
    // one port are two leaks.
    let mut count_before: HashMap<(u16, Option<u32>, u16), u32> = HashMap::new();
    for socket in previous
        .sockets
        .iter()
        .filter(|s| tcp_in(s, TCP_CLOSE_WAIT))
    {
        let pid = first_owner(&socket).map(|(pid, _)| pid);
        *count_before
            .entry((socket.netns, pid, socket.local.port()))
            .or_default() += 1;
    }
    let mut piles: BTreeMap<(u16, Option<u32>, u16), Pile> = BTreeMap::new();
    for socket in current.sockets.iter().filter(|s| tcp_in(s, TCP_CLOSE_WAIT)) {
        let owner = first_owner(&socket);
        let pile = piles
            .entry((socket.netns, owner.map(|(pid, _)| pid), socket.local.port()))
            .or_default();
        pile.owner = pile.owner.or(owner);
        pile.count += 1;
        pile.held += u32::from(before.contains(&socket.key()));
        pile.denied |= socket.owner_denied;
    }
    let seconds = current.mono - previous.mono;
    piles
        .into_iter()
        .filter_map(|((netns, pid, port), pile)| {
            let was = count_before.get(&(netns, pid, port)).copied().unwrap_or(0);
            let growing = pile.count > was && pile.held >= limits.close_wait_growing_sockets;
            if pile.held < limits.close_wait_warn_sockets && !growing {
                return None;
            }
            let rise = if seconds > 0.0 {
                (f64::from(pile.count) - f64::from(was)) / seconds
            } else {
                0.0
            };
            let who = match (process(pile.owner), pile.denied) {
                (Some(name), _) => format!("{name} holds"),
                (None, true) => "a process netlens may not inspect holds".to_string(),
                (None, false) => "no process (owner unknown) holds".to_string(),
            };
            let mut filter = "close-wait".to_string();
            if let Some(pid) = pid {
                filter.push_str(&format!(" pid={pid}"));
            }
            filter.push_str(&format!(" :{port}"));
            let culprit = process(pile.owner).unwrap_or_else(|| "the process".into());
            Some(Finding {
                hold: Hold::default(),
                id: CLOSE_WAIT,
                severity: if pile.held >= limits.close_wait_crit_sockets {
                    Severity::Crit
                } else {
                    Severity::Warn
                },
                summary: format!(
                    "{who} {} sockets in CLOSE_WAIT on :{port}, {rise:+.1}/s: it does not close \
                     connections its peers closed",
                    pile.count
                ),
                hint: format!(
                    "a connection leak in {culprit}: after read() returns 0 (the peer's FIN) or \
                     an error it must close() the socket; look for a missing close/finally, a \
                     pool that keeps dead connections, or threads stuck before close \
                     (`ss -tnp state close-wait`, `ls -l /proc/PID/fd | wc -l` against its fd \
                     limit). No sysctl frees CLOSE_WAIT (tcp_fin_timeout is for FIN_WAIT2): \
                     fix the code; restarting the process frees them meanwhile"
                ),
                evidence: Evidence {
                    netns: Some(netns),
                    tab: "sockets",
                    row: filter,
                },
            })
        })
        .collect()
}

/// net.ipv4.ip_local_port_range as (low, high).
fn port_range(tcp: &TcpSample) -> Option<(u16, u16)> {
    let mut parts = tcp.knob("net.ipv4.ip_local_port_range")?.split_whitespace();
    let low = parts.next()?.parse().ok()?;
    let high = parts.next()?.parse().ok()?;
    (low <= high).then_some((low, high))
}

/// Sockets from one local address to one destination.
#[derive(Default)]
struct Destination<'a> {
    count: u32,
    time_wait: u32,
    /// Owners of the open ones (TIME_WAIT has none): pid -> (name, sockets).
    owners: BTreeMap<u32, (&'a str, u32)>,
}

/// port-exhaustion: connect() picks a local port from ip_local_port_range
/// that is free for its 4-tuple, so one local address has at most the
/// range's size of connections to one destination ip:port, TIME_WAIT
/// included (unless tcp_tw_reuse lets connect() take those). Past that it
/// fails with EADDRNOTAVAIL, which no counter records.
fn port_exhaustion(current: &Sample, tcp: &TcpSample, limits: &Thresholds) -> Vec<Finding> {
    let Some((low, high)) = port_range(tcp) else {
        return Vec::new();
    };
    let size = u32::from(high - low) + 1;
    let reuse = tcp.knob("net.ipv4.tcp_tw_reuse").unwrap_or("?");
    // Each namespace has its own port range and its own ports.
    let mut destinations: BTreeMap<(u16, IpAddr, SocketAddr), Destination> = BTreeMap::new();
    for socket in &current.sockets {
        let port = socket.local.port();
        if socket.proto != Proto::Tcp
            || socket.state == TCP_LISTEN
            || socket.peer.port() == 0
            || !(low..=high).contains(&port)
        {
            continue;
        }
        let to = destinations
            .entry((socket.netns, socket.local.ip(), socket.peer))
            .or_default();
        to.count += 1;
        if socket.state == TCP_TIME_WAIT {
            to.time_wait += 1;
        }
        if let Some((pid, name)) = first_owner(&socket) {
            to.owners.entry(pid).or_insert((name, 0)).1 += 1;
        }
    }
    destinations
        .into_iter()
        .filter_map(|((netns, local, peer), to)| {
            // tcp_tw_reuse=1 lets connect() take a TIME_WAIT port (after
            // 1 s); 2, the default, only on loopback.
            let reusable =
                reuse == "1" || (reuse == "2" && (peer.ip().is_loopback() || local.is_loopback()));
            let used = if reusable {
                to.count - to.time_wait
            } else {
                to.count
            };
            let percent = f64::from(used) * 100.0 / f64::from(size);
            if percent < limits.port_exhaustion_warn_percent {
                return None;
            }
            let mut summary = format!(
                "{local} -> {peer}: {used} of {size} ephemeral ports in use ({} in TIME_WAIT{}; \
                 ip_local_port_range {low}-{high})",
                to.time_wait,
                if reusable {
                    ", reusable, not counted"
                } else {
                    ""
                }
            );
            if let Some((pid, (name, n))) = to.owners.iter().max_by_key(|(_, (_, n))| *n) {
                summary.push_str(&format!("; {} holds {n} open", super::pid_name(*pid, name)));
            }
            summary.push_str(if used >= size {
                ": connect() to it fails with EADDRNOTAVAIL"
            } else {
                ": connect() to it will fail with EADDRNOTAVAIL"
            });
            let tw_reuse = match reuse {
                "1" => "net.ipv4.tcp_tw_reuse is 1 already (TIME_WAIT ports are reused)".into(),
                "2" => "set net.ipv4.tcp_tw_reuse=1 (now 2: loopback only) so connect() takes \
                        TIME_WAIT ports after 1 s"
                    .to_string(),
                now => format!(
                    "set net.ipv4.tcp_tw_reuse=1 (now {now}) so connect() takes TIME_WAIT ports \
                     after 1 s"
                ),
            };
            Some(Finding {
                hold: Hold::default(),
                id: PORT_EXHAUSTION,
                severity: if percent >= limits.port_exhaustion_crit_percent {
                    Severity::Crit
                } else {
                    Severity::Warn
                },
                summary,
                hint: format!(
                    "reuse connections (HTTP keep-alive, a connection pool) instead of one per \
                     request; {tw_reuse}; widen net.ipv4.ip_local_port_range (now {low} {high}: \
                     {size} ports); or spread the load over more destination addresses or ports \
                     (each destination ip:port has the whole range)"
                ),
                evidence: Evidence {
                    netns: Some(netns),
                    tab: "sockets",
                    row: format!("{local} {peer}"),
                },
            })
        })
        .collect()
}

/// Connects waiting on one destination.
#[derive(Default)]
struct Waiting<'a> {
    count: u32,
    /// The most SYN retransmissions of one of them.
    most_retries: u32,
    owners: BTreeMap<u32, (&'a str, u32)>,
    unowned: u32,
}

/// connect-timeout: connects whose SYN got no answer, neither SYN-ACK nor
/// RST: SYN_SENT sockets whose SYN the kernel already retransmitted
/// (tcp_info's total_retrans: unanswered for at least the initial 1 s RTO;
/// how long since depends on tcp_syn_linear_timeouts, so only the count of
/// SYNs is told),
/// grouped by destination. TcpExt.TCPSynRetrans rising corroborates.
fn connect_timeout(
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
) -> Vec<Finding> {
    let mut destinations: BTreeMap<(u16, SocketAddr), Waiting> = BTreeMap::new();
    for socket in current.sockets.iter().filter(|s| tcp_in(s, TCP_SYN_SENT)) {
        let Some(retries) = socket.tcp.map(|t| t.total_retrans).filter(|r| *r > 0) else {
            continue;
        };
        let to = destinations.entry((socket.netns, socket.peer)).or_default();
        to.count += 1;
        to.most_retries = to.most_retries.max(retries);
        match first_owner(&socket) {
            Some((pid, name)) => to.owners.entry(pid).or_insert((name, 0)).1 += 1,
            None => to.unowned += 1,
        }
    }
    let syn_retrans =
        TcpRates::new(previous, current).and_then(|r| r.rate(snmp::TCP_EXT_TCP_SYN_RETRANS));
    destinations
        .into_iter()
        .filter(|(_, to)| to.count >= limits.connect_timeout_warn_sockets)
        .map(|((netns, peer), to)| {
            let mut clients: Vec<(u32, &str, u32)> = to
                .owners
                .iter()
                .map(|(pid, (name, n))| (*pid, *name, *n))
                .collect();
            clients.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
            let processes = clients.len();
            let mut named: Vec<String> = clients
                .iter()
                .take(3)
                .map(|(pid, name, n)| format!("{} {n}", super::pid_name(*pid, name)))
                .collect();
            if processes > 3 {
                named.push(format!("+{} more", processes - 3));
            }
            if to.unowned > 0 {
                named.push(format!("{} without a known process", to.unowned));
            }
            let mut summary = format!(
                "{} connects to {peer} unanswered in SYN_SENT, from {processes} process{}: {}; \
                 SYN sent up to {} times",
                to.count,
                if processes == 1 { "" } else { "es" },
                named.join(", "),
                to.most_retries + 1,
            );
            if let Some(rate) = syn_retrans {
                summary.push_str(&format!("; TcpExt.TCPSynRetrans {rate:.1}/s"));
            }
            Finding {
                hold: Hold::default(),
                id: CONNECT_TIMEOUT,
                severity: if to.count >= limits.connect_timeout_crit_sockets {
                    Severity::Crit
                } else {
                    Severity::Warn
                },
                summary,
                hint: format!(
                    "no SYN-ACK and no RST comes back from {peer} (a closed port would answer \
                     RST at once): a firewall drops the SYNs (here, on the path or at {ip}: \
                     `nft list ruleset`, `iptables -L -nv`), {ip} is down, or a route is \
                     missing (`ip route get {ip}`); `tcpdump -n host {ip} and port {port}` shows \
                     SYNs leaving with no answer. Each connect waits through \
                     net.ipv4.tcp_syn_retries retransmissions before ETIMEDOUT",
                    ip = peer.ip(),
                    port = peer.port()
                ),
                evidence: Evidence {
                    netns: Some(netns),
                    tab: "sockets",
                    row: format!("syn-sent {peer}"),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::{SocketUser, TCP_ESTABLISHED, TcpInfoSample};

    const D: Thresholds = Thresholds::DEFAULT;

    fn socket(state: u8, local: &str, peer: &str, owner: Option<(u32, &str)>) -> SocketSample {
        SocketSample {
            proto: Proto::Tcp,
            state,
            local: local.parse().unwrap(),
            peer: peer.parse().unwrap(),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: u32::from(owner.is_some()),
            users: owner
                .map(|(pid, name)| SocketUser {
                    process: name.into(),
                    pid,
                    fd: 3,
                })
                .into_iter()
                .collect(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        }
    }

    fn sample(mono: f64, sockets: Vec<SocketSample>, knobs: &[(&str, &str)]) -> Sample {
        let mut tcp = TcpSample::default();
        for (name, value) in knobs {
            tcp.knobs.insert(name.to_string(), value.to_string());
        }
        Sample {
            mono,
            sockets: sockets.into(),
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    /// `n` CLOSE_WAIT sockets of PID 2231 (java) on :8443, peers from port
    /// 20000 on (so the first ones are the same sockets in every sample).
    fn close_waits(n: u32) -> Vec<SocketSample> {
        (0..n)
            .map(|i| {
                socket(
                    TCP_CLOSE_WAIT,
                    "198.18.0.2:8443",
                    &format!("198.18.0.1:{}", 20000 + i),
                    Some((2231, "java")),
                )
            })
            .collect()
    }

    #[test]
    fn a_held_pile_of_close_wait_names_the_process_and_port() {
        let a = sample(0.0, close_waits(947), &[]);
        let b = sample(1.0, close_waits(950), &[]);
        let found = close_wait(Some(&a), &b, &D);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Crit);
        assert_eq!(
            found[0].summary,
            "PID 2231 (java) holds 950 sockets in CLOSE_WAIT on :8443, +3.0/s: it does not \
             close connections its peers closed"
        );
        assert_eq!(found[0].evidence.row, "close-wait pid=2231 :8443");
        assert!(found[0].hint.contains("No sysctl frees CLOSE_WAIT"));
        // The first sample alone judges nothing: CLOSE_WAIT for an instant
        // is a close in progress.
        assert!(close_wait(None, &b, &D).is_empty());
    }

    #[test]
    fn close_wait_that_comes_and_goes_is_healthy() {
        // 100 sockets in CLOSE_WAIT in both samples, but never the same ones.
        let a = sample(0.0, close_waits(100), &[]);
        let mut fresh = close_waits(100);
        for s in &mut fresh {
            s.peer.set_port(s.peer.port() + 1000);
        }
        let b = sample(1.0, fresh, &[]);
        assert!(close_wait(Some(&a), &b, &D).is_empty());
    }

    #[test]
    fn a_small_pile_fires_only_while_it_grows() {
        let a = sample(0.0, close_waits(10), &[]);
        let b = sample(1.0, close_waits(14), &[]);
        let found = close_wait(Some(&a), &b, &D);
        assert_eq!(found[0].severity, Severity::Warn);
        assert!(
            found[0].summary.contains("14 sockets"),
            "{}",
            found[0].summary
        );
        let c = sample(2.0, close_waits(14), &[]);
        assert!(close_wait(Some(&b), &c, &D).is_empty());
        // Below the growing floor: nothing.
        let d = sample(3.0, close_waits(5), &[]);
        let e = sample(4.0, close_waits(7), &[]);
        assert!(close_wait(Some(&d), &e, &D).is_empty());
    }

    fn clients(n: u16, state: u8, port: u16) -> Vec<SocketSample> {
        (0..n)
            .map(|i| {
                let owner = (state != TCP_TIME_WAIT).then_some((77, "curl"));
                socket(
                    state,
                    &format!("198.18.0.1:{}", 40000 + i),
                    &format!("198.18.0.2:{port}"),
                    owner,
                )
            })
            .collect()
    }

    const RANGE: (&str, &str) = ("net.ipv4.ip_local_port_range", "40000 40299");

    #[test]
    fn ports_near_the_range_size_to_one_destination_are_exhaustion() {
        let mut sockets = clients(250, TCP_TIME_WAIT, 80);
        sockets.extend(clients(40, TCP_ESTABLISHED, 80).into_iter().map(|mut s| {
            s.local.set_port(s.local.port() + 250);
            s
        }));
        // Another destination has its own ports.
        sockets.extend(clients(200, TCP_TIME_WAIT, 81));
        let now = sample(1.0, sockets, &[RANGE, ("net.ipv4.tcp_tw_reuse", "2")]);
        let found = evaluate(None, &now, &D);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!((f.id, f.severity), (PORT_EXHAUSTION, Severity::Crit));
        assert_eq!(
            f.summary,
            "198.18.0.1 -> 198.18.0.2:80: 290 of 300 ephemeral ports in use (250 in TIME_WAIT; \
             ip_local_port_range 40000-40299); PID 77 (curl) holds 40 open: connect() to it \
             will fail with EADDRNOTAVAIL"
        );
        assert!(
            f.hint.contains("tcp_tw_reuse=1 (now 2: loopback only)"),
            "{}",
            f.hint
        );
        assert!(
            f.hint.contains("(now 40000 40299: 300 ports)"),
            "{}",
            f.hint
        );
        assert_eq!(f.evidence.row, "198.18.0.1 198.18.0.2:80");
        // With tcp_tw_reuse=1 the TIME_WAIT ports are free for connect().
        let reuse = sample(
            1.0,
            now.sockets.clone().to_vec(),
            &[RANGE, ("net.ipv4.tcp_tw_reuse", "1")],
        );
        assert!(evaluate(None, &reuse, &D).is_empty());
        // A server's accepted sockets use its listening port: never counted.
        let server: Vec<_> = (0..300)
            .map(|i| {
                socket(
                    TCP_ESTABLISHED,
                    "198.18.0.2:40000",
                    &format!("198.18.0.1:{}", 1000 + i),
                    None,
                )
            })
            .collect();
        assert!(evaluate(None, &sample(1.0, server, &[RANGE]), &D).is_empty());
    }

    fn syn_sent(peer: &str, local_port: u16, retries: u32, owner: (u32, &str)) -> SocketSample {
        let mut s = socket(
            TCP_SYN_SENT,
            &format!("198.18.0.1:{local_port}"),
            peer,
            Some(owner),
        );
        s.tcp = Some(TcpInfoSample {
            total_retrans: retries,
            ..Default::default()
        });
        s
    }

    #[test]
    fn unanswered_syns_name_the_destination_and_the_clients() {
        let mut sockets: Vec<_> = (0..3)
            .map(|i| syn_sent("198.18.0.2:80", 50000 + i, 2, (10, "python3")))
            .collect();
        sockets.push(syn_sent("198.18.0.2:80", 50010, 1, (11, "curl")));
        // Not yet retransmitted: an answer may still be on its way.
        sockets.push(syn_sent("198.18.0.2:80", 50011, 0, (11, "curl")));
        sockets.push(syn_sent("198.18.0.3:80", 50012, 3, (11, "curl")));
        let mut a = sample(0.0, vec![], &[]);
        a.tcp
            .as_mut()
            .unwrap()
            .counters
            .insert(snmp::TCP_EXT_TCP_SYN_RETRANS.into(), 100);
        let mut b = sample(2.0, sockets, &[]);
        b.tcp
            .as_mut()
            .unwrap()
            .counters
            .insert(snmp::TCP_EXT_TCP_SYN_RETRANS.into(), 108);
        let found = connect_timeout(Some(&a), &b, &D);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].severity, Severity::Warn);
        assert_eq!(
            found[0].summary,
            "4 connects to 198.18.0.2:80 unanswered in SYN_SENT, from 2 processes: PID 10 \
             (python3) 3, PID 11 (curl) 1; SYN sent up to 3 times; TcpExt.TCPSynRetrans \
             4.0/s"
        );
        assert_eq!(found[0].evidence.row, "syn-sent 198.18.0.2:80");
        let many: Vec<_> = (0..25)
            .map(|i| syn_sent("198.18.0.2:443", 50000 + i, 1, (10, "python3")))
            .collect();
        let found = connect_timeout(None, &sample(1.0, many, &[]), &D);
        assert_eq!(found[0].severity, Severity::Crit);
    }
}
