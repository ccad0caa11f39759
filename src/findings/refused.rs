//! connect-refused: connections refused at a rate. Two sides, from the
//! namespace's counters (the refused sockets themselves never outlive the
//! RST, so the socket table has nothing to show):
//!
//! - refused here: this host answers connection attempts with RSTs. Tcp
//!   OutRsts counts every RST sent; the ones an application caused by an
//!   abort are also counted as TcpExt TCPAbortOnData, TCPAbortOnClose,
//!   TCPAbortOnMemory or TCPAbortOnLinger, so what is left is RSTs the
//!   stack sent on its own: SYNs (or stray segments) to a port with no
//!   listener.
//! - failed there: local clients' connects fail. Tcp AttemptFails counts
//!   connections that died in SYN_SENT or SYN_RECV; the ones that timed out
//!   are also counted as TcpExt TCPAbortOnTimeout (connect-timeout's case).
//!   What is left was refused by an RST, or was unreachable: an ICMP
//!   destination unreachable ended it (the application sees "No route to
//!   host", not "Connection refused"). Icmp InDestUnreachs counts those;
//!   when this host found no neighbour for the destination (ARP or NDP
//!   unanswered) it sends the ICMP to itself, so OutDestUnreachs rises
//!   too, and the neighbour table holds the FAILED entries.
//!
//! With the capture on, the summary starts with the refusing ports and the
//! peers they refused, from the capture's refusal counts (a SYN answered
//! by an RST from the side it was sent to).

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::model::Sample;
use crate::model::capture::RefusedSample;
use crate::model::netns::PRIMARY;
use crate::model::snmp;
use crate::model::socket_table::Socket;
use crate::model::sockets::{Proto, TCP_LISTEN};
use crate::model::tcp_rates::TcpRates;

pub const CONNECT_REFUSED: &str = "connect-refused";

/// The RSTs an application caused, each also counted in Tcp.OutRsts.
const ABORTS: [&str; 4] = [
    snmp::TCP_EXT_TCP_ABORT_ON_DATA,
    snmp::TCP_EXT_TCP_ABORT_ON_CLOSE,
    snmp::TCP_EXT_TCP_ABORT_ON_MEMORY,
    snmp::TCP_EXT_TCP_ABORT_ON_LINGER,
];

/// Per second: RSTs this host sent on its own, and connects of its own that
/// failed without timing out.
pub fn refused_rates(rates: &TcpRates) -> (f64, f64) {
    let rate = |name| rates.rate(name).unwrap_or(0.0);
    let aborts: f64 = ABORTS.iter().map(|name| rate(name)).sum();
    let here = (rate(snmp::TCP_OUT_RSTS) - aborts).max(0.0);
    let there = (rate(snmp::TCP_ATTEMPT_FAILS) - rate(snmp::TCP_EXT_TCP_ABORT_ON_TIMEOUT)).max(0.0);
    (here, there)
}

/// Connects of this host's that failed without timing out, per second, by
/// what ended them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failed {
    /// An RST from the destination.
    pub refused: f64,
    /// An ICMP unreachable this host sent itself: no neighbour answered.
    pub no_neighbour: f64,
    /// An ICMP unreachable from a router or the destination.
    pub unreachable: f64,
}

impl Failed {
    /// Splits `there` (AttemptFails less the timeouts) by the ICMP
    /// destination-unreachable messages received, and of them those this
    /// host sent (to itself) over the same interval.
    pub fn of(rates: &TcpRates, there: f64) -> Failed {
        let rate =
            |names: [&str; 2]| -> f64 { names.iter().map(|n| rates.rate(n).unwrap_or(0.0)).sum() };
        let received = rate([snmp::ICMP_IN_DEST_UNREACHS, snmp::ICMP6_IN_DEST_UNREACHS]);
        let sent = rate([snmp::ICMP_OUT_DEST_UNREACHS, snmp::ICMP6_OUT_DEST_UNREACHS]);
        let icmp = there.min(received);
        let no_neighbour = icmp.min(sent);
        Failed {
            refused: there - icmp,
            no_neighbour,
            unreachable: icmp - no_neighbour,
        }
    }

    /// The biggest part, as the finding's fix names it.
    fn most(&self) -> Ended {
        if self.no_neighbour >= self.refused.max(self.unreachable) {
            Ended::NoNeighbour
        } else if self.unreachable >= self.refused {
            Ended::Unreachable
        } else {
            Ended::Refused
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Refused,
    NoNeighbour,
    Unreachable,
}

/// "40 unresolved on veth0": per interface, the neighbour entries still
/// resolving or given up (INCOMPLETE, FAILED; a destination that never
/// answers cycles through both), as `ip neigh show nud failed` and `nud
/// incomplete` list them.
fn unresolved_neighbours(current: &Sample) -> Option<String> {
    let entries = &current.neighbours.as_ref()?.entries;
    let mut counts: Vec<(&str, u64)> = Vec::new();
    for entry in entries
        .iter()
        .filter(|e| e.state == "FAILED" || e.state == "INCOMPLETE")
    {
        match counts.iter_mut().find(|(name, _)| *name == entry.interface) {
            Some((_, count)) => *count += entry.count,
            None => counts.push((&entry.interface, entry.count)),
        }
    }
    let named: Vec<String> = counts
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(name, count)| {
            format!(
                "{count} unresolved on {}",
                crate::text::escape_control(name)
            )
        })
        .collect();
    (!named.is_empty()).then(|| named.join(", "))
}

pub fn evaluate(
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
) -> Option<Finding> {
    let rates = TcpRates::new(previous, current)?;
    let (here, there) = refused_rates(&rates);
    let warn = limits.connect_refused_warn_per_s;
    let (here_fires, there_fires) = (here >= warn && here > 0.0, there >= warn && there > 0.0);
    if !here_fires && !there_fires {
        return None;
    }
    let worst = if here_fires { here } else { 0.0 }.max(if there_fires { there } else { 0.0 });
    let severity = if worst >= limits.connect_refused_crit_per_s {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let opens = rates.rate(snmp::TCP_PASSIVE_OPENS).unwrap_or(0.0);
    let mut parts: Vec<String> = previous
        .and_then(|p| named(p, current))
        .into_iter()
        .collect();
    if here_fires {
        parts.push(format!(
            "this host refused {here:.0} connections/s (RSTs sent with no abort behind them: \
             Tcp OutRsts {:.0}/s; {opens:.0} accepted/s)",
            rates.rate(snmp::TCP_OUT_RSTS).unwrap_or(0.0)
        ));
    }
    let failed = Failed::of(&rates, there);
    if there_fires {
        let mut ways = Vec::new();
        if failed.refused >= 0.5 {
            ways.push(format!("{:.0}/s refused (an RST)", failed.refused));
        }
        if failed.no_neighbour >= 0.5 {
            ways.push(format!(
                "{:.0}/s unreachable, no neighbour answered ({}; \"No route to host\")",
                failed.no_neighbour,
                unresolved_neighbours(current).unwrap_or_else(|| "ARP or NDP unanswered".into())
            ));
        }
        if failed.unreachable >= 0.5 {
            ways.push(format!(
                "{:.0}/s unreachable, an ICMP from the way (\"No route to host\")",
                failed.unreachable
            ));
        }
        parts.push(format!(
            "{there:.0} connects/s from here failed: {} (Tcp AttemptFails {:.0}/s, {:.0}/s of \
             them timeouts; Icmp InDestUnreachs {:.0}/s, OutDestUnreachs {:.0}/s)",
            ways.join(", "),
            rates.rate(snmp::TCP_ATTEMPT_FAILS).unwrap_or(0.0),
            rates
                .rate(snmp::TCP_EXT_TCP_ABORT_ON_TIMEOUT)
                .unwrap_or(0.0),
            rates.rate(snmp::ICMP_IN_DEST_UNREACHS).unwrap_or(0.0),
            rates.rate(snmp::ICMP_OUT_DEST_UNREACHS).unwrap_or(0.0),
        ));
    }
    let hint = if here_fires {
        "nothing listens on the port the clients ask for: the service is down, crashed, or \
         listens on another address or port (compare `ss -ltnp` with where the clients connect; \
         a listener on 127.0.0.1 refuses other addresses); with the capture on, the summary \
         names the refused ports and peers"
    } else {
        match failed.most() {
            Ended::Refused => {
                "the servers these clients connect to refuse them (an RST): the service there \
                 is down or listens on another address or port; check the client's configured \
                 address and `ss -ltnp` on the server; with the capture on, the summary names \
                 them"
            }
            Ended::NoNeighbour => {
                "nothing answers ARP or NDP for the destination on its link: the address is \
                 wrong (check the client's configured address against `ip neigh show nud \
                 failed`), or the host is down or on another network; no port or service \
                 setting explains it"
            }
            Ended::Unreachable => {
                "a router on the way (or the destination's host) answered unreachable: a route \
                 is missing or a firewall rejects with ICMP; `ip route get DEST` here, and \
                 `netlens trace DEST` shows where the path ends"
            }
        }
    };
    Some(Finding {
        hold: Hold::default(),
        id: CONNECT_REFUSED,
        severity,
        summary: parts.join("; "),
        hint: hint.into(),
        evidence: Evidence {
            netns: None,
            tab: "tcp",
            row: if here_fires {
                snmp::TCP_OUT_RSTS
            } else {
                snmp::TCP_ATTEMPT_FAILS
            }
            .into(),
        },
    })
}

/// Ports and peers named at most in the summary.
const NAMED_PORTS: usize = 3;
const NAMED_PEERS: usize = 3;

/// "refused 25/s: 198.18.0.2:8080 refused 198.18.0.1 (25/s)" from the
/// capture's refusal counts between two samples; None when the capture is
/// off or saw no refusal in the interval.
fn named(previous: &Sample, current: &Sample) -> Option<String> {
    let (before, now) = (previous.capture.as_ref()?, current.capture.as_ref()?);
    // The counts are as of each summary's newest packet (the ring hands
    // packets over in blocks, up to 100 ms late): divide by that span.
    let seconds = if before.newest_packet_t > 0.0 && now.newest_packet_t > before.newest_packet_t {
        now.newest_packet_t - before.newest_packet_t
    } else {
        current.mono - previous.mono
    };
    if !now.active || seconds <= 0.0 {
        return None;
    }
    let rate =
        |now: u64, before: Option<u64>| now.saturating_sub(before.unwrap_or(0)) as f64 / seconds;
    let earlier = |port: &str| before.refused.iter().find(|r| r.port == port);
    let mut ports: Vec<(&RefusedSample, f64)> = now
        .refused
        .iter()
        .map(|r| (r, rate(r.count, earlier(&r.port).map(|e| e.count))))
        .filter(|(_, per_s)| *per_s > 0.0)
        .collect();
    if ports.is_empty() {
        return None;
    }
    ports.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.port.cmp(&b.0.port)));
    let total: f64 = ports.iter().map(|(_, per_s)| per_s).sum();
    let listed: Vec<String> = ports
        .iter()
        .take(NAMED_PORTS)
        .map(|(r, _)| {
            let old = earlier(&r.port);
            let mut peers: Vec<(&str, f64)> = r
                .peers
                .iter()
                .map(|p| {
                    let was = old.and_then(|o| o.peers.iter().find(|q| q.addr == p.addr));
                    (p.addr.as_str(), rate(p.count, was.map(|q| q.count)))
                })
                .filter(|(_, per_s)| *per_s > 0.0)
                .collect();
            peers.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let peers: Vec<String> = peers
                .iter()
                .take(NAMED_PEERS)
                .map(|(addr, per_s)| format!("{addr} ({per_s:.0}/s)"))
                .collect();
            format!(
                "{} refused {}{}",
                r.port,
                peers.join(", "),
                listening(current, &r.port)
            )
        })
        .collect();
    Some(format!("refused {total:.0}/s: {}", listed.join("; ")))
}

/// What listens on the refused address's port, when the address is the
/// watched namespace's own,
/// the setting a refusal usually comes down to: " (nothing listens on
/// port 8080)", " (port 8080 is listened on at 127.0.0.1 only, by PID 812
/// (nginx))", or " (listened on at *:8080 by ...)" when a listener takes
/// that address (the RSTs then came from a full accept queue with
/// net.ipv4.tcp_abort_on_overflow, or a firewall's tcp-reset).
fn listening(current: &Sample, refused: &str) -> String {
    let Ok(refused) = refused.parse::<std::net::SocketAddr>() else {
        return String::new();
    };
    // Only this namespace's own addresses: a client's view of a refusal
    // elsewhere says nothing of the listeners there.
    let ours = current
        .interfaces
        .iter()
        .filter(|i| i.netns == PRIMARY)
        .flat_map(|i| &i.addresses)
        .filter_map(|a| a.split('/').next()?.parse::<std::net::IpAddr>().ok())
        .any(|ip| ip == refused.ip());
    if !ours {
        return String::new();
    }
    let listeners: Vec<Socket> = current
        .sockets
        .iter()
        .filter(|s| {
            s.proto == Proto::Tcp
                && s.state == TCP_LISTEN
                && s.netns == PRIMARY
                && s.local.port() == refused.port()
        })
        .collect();
    let port = refused.port();
    let takes = |s: &Socket| {
        s.local.ip() == refused.ip()
            || (s.local.ip().is_unspecified()
                && (s.local.is_ipv4() == refused.is_ipv4() || (s.local.is_ipv6() && !s.v6only)))
    };
    match (listeners.iter().copied().find(takes), listeners.first()) {
        (_, None) => format!(" (nothing listens on port {port})"),
        (Some(s), _) => format!(
            " (listened on at {} by {})",
            s.local_text(),
            super::process_of(&s)
        ),
        (None, Some(s)) => {
            let at: Vec<String> = listeners.iter().map(|s| s.local_text()).collect();
            format!(
                " (port {port} is listened on at {} only, by {}: not at {})",
                at.join(", "),
                super::process_of(s),
                refused.ip()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::TcpSample;

    const D: Thresholds = Thresholds::DEFAULT;

    fn sample(mono: f64, counters: &[(&str, u64)]) -> Sample {
        let mut tcp = TcpSample::default();
        for name in [
            snmp::TCP_OUT_RSTS,
            snmp::TCP_ATTEMPT_FAILS,
            snmp::TCP_PASSIVE_OPENS,
            snmp::TCP_EXT_TCP_ABORT_ON_TIMEOUT,
            snmp::TCP_EXT_TCP_ABORT_ON_DATA,
            snmp::TCP_EXT_TCP_ABORT_ON_CLOSE,
            snmp::TCP_EXT_TCP_ABORT_ON_MEMORY,
            snmp::TCP_EXT_TCP_ABORT_ON_LINGER,
        ] {
            tcp.counters.insert(name.into(), 0);
        }
        for (name, value) in counters {
            tcp.counters.insert(name.to_string(), *value);
        }
        Sample {
            mono,
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    #[test]
    fn rsts_without_aborts_are_refusals() {
        let a = sample(0.0, &[]);
        let b = sample(2.0, &[(snmp::TCP_OUT_RSTS, 400)]);
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert_eq!(
            (found.id, found.severity),
            (CONNECT_REFUSED, Severity::Crit)
        );
        assert!(
            found
                .summary
                .starts_with("this host refused 200 connections/s"),
            "{}",
            found.summary
        );
        assert_eq!(found.evidence.row, snmp::TCP_OUT_RSTS);
        // The same RSTs explained by aborts (linger 0, unread data): none.
        let c = sample(
            2.0,
            &[
                (snmp::TCP_OUT_RSTS, 400),
                (snmp::TCP_EXT_TCP_ABORT_ON_DATA, 300),
                (snmp::TCP_EXT_TCP_ABORT_ON_CLOSE, 100),
            ],
        );
        assert!(evaluate(Some(&a), &c, &D).is_none());
    }

    #[test]
    fn failed_connects_that_did_not_time_out_are_refusals() {
        let a = sample(0.0, &[]);
        let b = sample(1.0, &[(snmp::TCP_ATTEMPT_FAILS, 20)]);
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert_eq!(found.severity, Severity::Warn);
        assert_eq!(found.evidence.row, snmp::TCP_ATTEMPT_FAILS);
        assert!(found.summary.starts_with("20 connects/s from here failed"));
        // Timeouts are connect-timeout's, not refusals.
        let c = sample(
            1.0,
            &[
                (snmp::TCP_ATTEMPT_FAILS, 20),
                (snmp::TCP_EXT_TCP_ABORT_ON_TIMEOUT, 20),
            ],
        );
        assert!(evaluate(Some(&a), &c, &D).is_none());
        // Under the threshold: quiet.
        let d = sample(1.0, &[(snmp::TCP_ATTEMPT_FAILS, 2)]);
        assert!(evaluate(Some(&a), &d, &D).is_none());
    }

    #[test]
    fn the_capture_names_the_refused_ports_and_peers() {
        use crate::model::capture::{CaptureSample, RefusedPeer, RefusedSample};
        let refused = |count: u64, peers: &[(&str, u64)]| RefusedSample {
            port: "198.18.0.2:8080".into(),
            count,
            peers: peers
                .iter()
                .map(|(addr, count)| RefusedPeer {
                    addr: addr.to_string(),
                    count: *count,
                })
                .collect(),
        };
        let with = |mut s: Sample, r: Vec<RefusedSample>| {
            s.capture = Some(CaptureSample {
                active: true,
                refused: r,
                ..Default::default()
            });
            s
        };
        let a = with(sample(0.0, &[]), vec![refused(10, &[("198.18.0.1", 10)])]);
        let mut b = with(
            sample(2.0, &[(snmp::TCP_OUT_RSTS, 60)]),
            vec![refused(70, &[("198.18.0.1", 60), ("198.18.0.3", 20)])],
        );
        // A client's view (the refused address is not this namespace's):
        // nothing about listeners.
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert!(
            found.summary.starts_with(
                "refused 30/s: 198.18.0.2:8080 refused 198.18.0.1 (25/s), 198.18.0.3 (10/s); \
                 this host refused 30 connections/s"
            ),
            "{}",
            found.summary
        );
        b.interfaces = vec![crate::model::InterfaceSample {
            name: "veth0".into(),
            addresses: vec!["198.18.0.2/24".into()],
            ..Default::default()
        }];
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert!(
            found.summary.starts_with(
                "refused 30/s: 198.18.0.2:8080 refused 198.18.0.1 (25/s), 198.18.0.3 (10/s) \
                 (nothing listens on port 8080); this host refused 30 connections/s"
            ),
            "{}",
            found.summary
        );
        // The listeners on that port: on another address only, then on
        // the wildcard, which takes the refused address too.
        let listener = |local: &str, v6only| SocketSample {
            proto: Proto::Tcp,
            state: TCP_LISTEN,
            local: local.parse().unwrap(),
            peer: "0.0.0.0:0".parse().unwrap(),
            v6only,
            users: vec![crate::model::sockets::SocketUser {
                process: "nginx".into(),
                pid: 812,
                fd: 6,
            }]
            .into(),
            ..Default::default()
        };
        for (locals, said) in [
            (
                vec![listener("127.0.0.1:8080", false)],
                " (port 8080 is listened on at 127.0.0.1:8080 only, by PID 812 (nginx): not at \
                 198.18.0.2);",
            ),
            (
                vec![
                    listener("127.0.0.1:8080", false),
                    listener("[::]:8080", true),
                ],
                "only, by PID 812 (nginx): not at 198.18.0.2);",
            ),
            (
                vec![listener("[::]:8080", false)],
                " (listened on at *:8080 by PID 812 (nginx));",
            ),
            (
                vec![listener("0.0.0.0:8080", false)],
                " (listened on at 0.0.0.0:8080 by PID 812 (nginx));",
            ),
        ] {
            let mut b = b.clone();
            b.sockets = locals.into();
            let found = evaluate(Some(&a), &b, &D).unwrap();
            assert!(
                found.summary.contains(said),
                "{said:?} in {}",
                found.summary
            );
        }
        // Capture off: today's text.
        let found = evaluate(
            Some(&sample(0.0, &[])),
            &sample(2.0, &[(snmp::TCP_OUT_RSTS, 60)]),
            &D,
        )
        .unwrap();
        assert!(found.summary.starts_with("this host refused 30"));
    }
}
