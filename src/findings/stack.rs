//! Findings about sockets and the TCP stack: syn-flood, listen-overflow,
//! socket-backlog, retransmits. Thresholds come from `Thresholds`; the man
//! page (FINDINGS, CONFIGURATION) documents each.

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::model::Sample;
use crate::model::netdev;
use crate::model::rates::InterfaceRates;
use crate::model::snmp;
use crate::model::socket_table::{Socket, SocketTable};
use crate::model::sockets::{TCP_SYN_RECV, TcpSample};
use crate::model::tcp_rates::TcpRates;
use std::collections::HashMap;

pub const SYN_FLOOD: &str = "syn-flood";
pub const LISTEN_OVERFLOW: &str = "listen-overflow";
pub const SOCKET_BACKLOG: &str = "socket-backlog";
pub const RETRANSMITS: &str = "retransmits";

pub fn evaluate(
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
    out: &mut Vec<Finding>,
) {
    let Some(tcp) = current.tcp.as_ref() else {
        return;
    };
    let rates = TcpRates::new(previous, current);
    out.extend(syn_flood(previous, current, tcp, rates, limits));
    out.extend(listen_overflow(current, tcp, rates));
    out.extend(socket_backlog(current, limits));
    out.extend(retransmits(rates, limits));
}

fn knob(tcp: &TcpSample, name: &str) -> String {
    tcp.knob(name).unwrap_or("?").to_string()
}

fn syn_flood(
    previous: Option<&Sample>,
    current: &Sample,
    tcp: &TcpSample,
    rates: Option<TcpRates>,
    limits: &Thresholds,
) -> Option<Finding> {
    let syn_recv = tcp.state_count(TCP_SYN_RECV);
    let rise = previous
        .and_then(|p| p.tcp.as_ref().map(|t| (p, t.state_count(TCP_SYN_RECV))))
        .map(|(p, before)| {
            let seconds = current.mono - p.mono;
            if seconds > 0.0 {
                (f64::from(syn_recv) - f64::from(before)) / seconds
            } else {
                0.0
            }
        })
        .unwrap_or(0.0);
    let cookies = rates
        .and_then(|r| r.rate(snmp::TCP_EXT_SYNCOOKIES_SENT))
        .unwrap_or(0.0);
    let queue_full_drops = rates
        .and_then(|r| r.rate(snmp::TCP_EXT_TCP_REQ_Q_FULL_DROP))
        .unwrap_or(0.0);
    // With syncookies off a full SYN queue drops SYNs (TCPReqQFullDrop)
    // instead of sending cookies: the same flood, counted the same way.
    if syn_recv < limits.syn_flood_syn_recv
        && rise < limits.syn_flood_rise_per_s
        && cookies + queue_full_drops < limits.syn_flood_cookies_per_s
    {
        return None;
    }
    let syncookies = knob(tcp, "net.ipv4.tcp_syncookies");
    let severity = if syncookies == "0" || queue_full_drops > 0.0 {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let sources = top_sources(&current.sockets, 3);
    let from = if sources.is_empty() {
        "sources unknown (syncookies keep no state)".to_string()
    } else {
        let list: Vec<String> = sources
            .iter()
            .map(|(ip, n)| format!("{ip} ({n})"))
            .collect();
        format!("from {}", list.join(", "))
    };
    let mut summary = format!(
        "{syn_recv} SYN_RECV ({rise:+.0}/s), {cookies:.0} syncookies/s, syncookies {}, {from}",
        if syncookies == "0" { "off" } else { "on" }
    );
    if queue_full_drops > 0.0 {
        summary.push_str(&format!(
            "; {queue_full_drops:.0} SYNs/s dropped, SYN queue full"
        ));
    }
    if let Some((name, pps, size)) = small_packet_interface(previous, current, limits) {
        summary.push_str(&format!("; {name} rx {pps:.0} pkt/s of {size:.0} B"));
    }
    Some(Finding {
        hold: Hold::default(),
        id: SYN_FLOOD,
        severity,
        summary,
        hint: syn_flood_fix(current, tcp, sources.first().map(|(ip, _)| ip.as_str())),
        evidence: Evidence {
            netns: None,
            tab: "tcp",
            row: "SYN_RECV".into(),
        },
    })
}

/// The next real steps against a SYN flood, from the knobs' live values:
/// syncookies first when they are off; once on, the queues that are the
/// limit (the SYN queue is min(listen() backlog, somaxconn,
/// tcp_max_syn_backlog)), fewer SYN-ACK retries, and the source.
fn syn_flood_fix(current: &Sample, tcp: &TcpSample, top_source: Option<&str>) -> String {
    let number = |name| tcp.knob(name).and_then(|v| v.parse::<u32>().ok());
    let mut steps = Vec::new();
    match tcp.knob("net.ipv4.tcp_syncookies") {
        Some("0") => steps.push("set net.ipv4.tcp_syncookies=1 (now 0)".to_string()),
        Some(on) => steps.push(format!(
            "syncookies are on (net.ipv4.tcp_syncookies={on}), so the flood costs CPU, not \
             connections"
        )),
        None => steps.push("check net.ipv4.tcp_syncookies (unread here) is 1".to_string()),
    }
    let somaxconn = number("net.core.somaxconn");
    if let Some(max_syn) = number("net.ipv4.tcp_max_syn_backlog") {
        steps.push(format!(
            "raise net.ipv4.tcp_max_syn_backlog from {max_syn} to {}",
            max_syn.saturating_mul(2)
        ));
    }
    // The flooded listener: the one on the SYN_RECV sockets' local port.
    let port = current
        .sockets
        .iter()
        .find(|s| s.state == TCP_SYN_RECV)
        .map(|s| s.local.port());
    let listener = current
        .sockets
        .iter()
        .find(|s| s.is_listener() && Some(s.local.port()) == port);
    match (listener, somaxconn) {
        (Some(l), Some(max)) if l.send_q >= max => steps.push(format!(
            "raise net.core.somaxconn from {max} (it caps {}'s listen() backlog) and that backlog",
            l.local
        )),
        (Some(l), Some(max)) => steps.push(format!(
            "raise {}'s listen() backlog from {} (net.core.somaxconn allows {max})",
            l.local, l.send_q
        )),
        (None, Some(max)) => steps.push(format!(
            "raise the listener's listen() backlog (net.core.somaxconn allows {max})"
        )),
        _ => {}
    }
    if let Some(retries) = number("net.ipv4.tcp_synack_retries").filter(|r| *r > 2) {
        steps.push(format!(
            "lower net.ipv4.tcp_synack_retries from {retries} to 2"
        ));
    }
    steps.push(match top_source {
        Some(ip) => format!(
            "rate-limit SYNs per source, starting with {ip} (nft limit / iptables -m hashlimit)"
        ),
        None => "find the source with a capture (Flows tab, `tcpdump 'tcp[tcpflags] == tcp-syn'`) \
                 and rate-limit SYNs per source (nft limit / iptables -m hashlimit)"
            .to_string(),
    });
    steps.join("; ")
}

/// What to raise against an overflowing accept queue: the listen() backlog
/// while net.core.somaxconn allows more, somaxconn once it is the cap.
fn listen_fix(backlog: &str, somaxconn: Option<&str>) -> String {
    let raise = match (backlog.parse::<u64>(), somaxconn.map(str::parse::<u64>)) {
        (Ok(b), Some(Ok(max))) if b >= max => format!(
            "raise net.core.somaxconn from {max} (it caps the backlog) and then the listen() \
             backlog"
        ),
        (Ok(b), Some(Ok(max))) => {
            format!("raise the listen() backlog from {b} (net.core.somaxconn allows {max})")
        }
        _ => format!(
            "raise the listen() backlog (now {backlog}) and net.core.somaxconn (now {})",
            somaxconn.unwrap_or("?")
        ),
    };
    format!(
        "the application accepts too slowly for its backlog: fix the slow accept loop, or {raise}"
    )
}

/// Peer addresses of SYN_RECV sockets, most frequent first.
pub fn top_sources(sockets: &SocketTable, count: usize) -> Vec<(String, usize)> {
    let mut by_ip: HashMap<std::net::IpAddr, usize> = HashMap::new();
    for socket in sockets.iter().filter(|s| s.state == TCP_SYN_RECV) {
        *by_ip.entry(socket.peer.ip()).or_default() += 1;
    }
    let mut list: Vec<_> = by_ip.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    list.truncate(count);
    list.into_iter()
        .map(|(ip, n)| (ip.to_string(), n))
        .collect()
}

/// The busiest interface receiving small packets: name, rx pps, mean size.
fn small_packet_interface(
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
) -> Option<(String, f64, f64)> {
    current
        .interfaces
        .iter()
        .filter_map(|iface| {
            let rates = InterfaceRates::for_interface(previous, current, iface);
            let pps = rates.rate(&netdev::RX_PACKETS)?;
            let bytes = rates.rate(&netdev::RX_BYTES)?;
            let size = bytes / pps.max(1.0);
            (pps >= limits.small_packet_pps && size <= limits.small_packet_bytes)
                .then(|| (iface.name.clone(), pps, size))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

fn owner(socket: &Socket) -> String {
    match socket.process_names() {
        Some(names) => format!(" ({names})"),
        None => String::new(),
    }
}

fn listen_overflow(current: &Sample, tcp: &TcpSample, rates: Option<TcpRates>) -> Option<Finding> {
    let overflows = rates
        .and_then(|r| r.rate(snmp::TCP_EXT_LISTEN_OVERFLOWS))
        .unwrap_or(0.0);
    let mut full: Vec<Socket> = current
        .sockets
        .iter()
        .filter(|s| s.accept_queue_full())
        .collect();
    if full.is_empty() && overflows <= 0.0 {
        return None;
    }
    full.sort_by_key(|s| std::cmp::Reverse(s.recv_q));
    let (summary, row, backlog) = match full.first() {
        Some(worst) => {
            let others = if full.len() > 1 {
                format!(" (+{} more listeners)", full.len() - 1)
            } else {
                String::new()
            };
            (
                format!(
                    "{}{} accept queue full: {} waiting, backlog {}; {overflows:.1} overflows/s{others}",
                    worst.local,
                    owner(worst),
                    worst.recv_q,
                    worst.send_q
                ),
                worst.local.to_string(),
                worst.send_q.to_string(),
            )
        }
        None => (
            format!(
                "ListenOverflows rising: {overflows:.1}/s (a listener's accept queue overflowed)"
            ),
            "ListenOverflows".to_string(),
            "?".to_string(),
        ),
    };
    Some(Finding {
        hold: Hold::default(),
        id: LISTEN_OVERFLOW,
        severity: Severity::Crit,
        summary,
        hint: listen_fix(&backlog, tcp.knob("net.core.somaxconn")),
        evidence: Evidence {
            netns: None,
            tab: if row == "ListenOverflows" {
                "tcp"
            } else {
                "sockets"
            },
            row,
        },
    })
}

/// Whether a socket's queue counts as stuck (highlighted in Sockets).
pub fn stuck(socket: &Socket, limits: &Thresholds) -> bool {
    socket.queue_streak >= limits.stuck_queue_samples
}

fn socket_backlog(current: &Sample, limits: &Thresholds) -> Option<Finding> {
    let mut stuck: Vec<Socket> = current
        .sockets
        .iter()
        .filter(|s| stuck(s, limits))
        .collect();
    let worst = *stuck
        .iter()
        .max_by_key(|s| u64::from(s.recv_q) + u64::from(s.send_q))?;
    stuck.sort_by_key(|s| s.local);
    let (queue, size, why) = if worst.recv_q >= worst.send_q {
        ("Recv-Q", worst.recv_q, "the application is not reading")
    } else {
        ("Send-Q", worst.send_q, "the peer is not acknowledging")
    };
    let others = if stuck.len() > 1 {
        format!(" (+{} more sockets)", stuck.len() - 1)
    } else {
        String::new()
    };
    Some(Finding {
        hold: Hold::default(),
        id: SOCKET_BACKLOG,
        severity: Severity::Warn,
        summary: format!(
            "{} -> {}{}: {queue} {size} B stuck for {} samples{others}",
            worst.local,
            worst.peer,
            owner(&worst),
            worst.queue_streak
        ),
        hint: format!(
            "{why}: a stuck Recv-Q means the process does not read its socket (blocked, busy or \
             deadlocked: look at it with strace/perf); a stuck Send-Q means the peer or the path \
             does not take data (slow reader, zero window, loss)"
        ),
        evidence: Evidence {
            netns: Some(worst.netns),
            tab: "sockets",
            row: format!("{} {}", worst.local, worst.peer),
        },
    })
}

fn retransmits(rates: Option<TcpRates>, limits: &Thresholds) -> Option<Finding> {
    let rates = rates?;
    let percent = rates.retrans_percent()?;
    let out = rates.rate(snmp::TCP_OUT_SEGS)?;
    if percent < limits.retrans_warn_percent || out < limits.retrans_min_out_segs_per_s {
        return None;
    }
    let severity = if percent >= limits.retrans_crit_percent {
        Severity::Crit
    } else {
        Severity::Warn
    };
    Some(Finding {
        hold: Hold::default(),
        id: RETRANSMITS,
        severity,
        summary: format!(
            "{percent:.1}% of segments retransmitted ({:.0}/s of {out:.0}/s)",
            rates.rate(snmp::TCP_RETRANS_SEGS).unwrap_or_default()
        ),
        hint: "packet loss or congestion on the path: check interface drops and errors, \
               `ss -ti` for the sockets with retrans, and the path with mtr"
            .into(),
        evidence: Evidence {
            netns: None,
            tab: "tcp",
            row: snmp::TCP_RETRANS_SEGS.into(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::{Proto, SocketUser, TCP_ESTABLISHED, TCP_LISTEN};

    const D: Thresholds = Thresholds::DEFAULT;

    fn socket(state: u8, local: &str, peer: &str, recv_q: u32, send_q: u32) -> SocketSample {
        SocketSample {
            proto: Proto::Tcp,
            state,
            local: local.parse().unwrap(),
            peer: peer.parse().unwrap(),
            recv_q,
            send_q,
            uid: 0,
            inode: 1,
            users: vec![SocketUser {
                process: "web".into(),
                pid: 42,
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
        }
    }

    fn sample(mono: f64, sockets: Vec<SocketSample>, counters: &[(&str, u64)]) -> Sample {
        let mut tcp = TcpSample::default();
        for s in &sockets {
            tcp.states[usize::from(s.state) - 1] += 1;
        }
        for (name, value) in counters {
            tcp.counters.insert(name.to_string(), *value);
        }
        tcp.knobs
            .insert("net.ipv4.tcp_syncookies".into(), "1".into());
        tcp.knobs.insert("net.core.somaxconn".into(), "4096".into());
        Sample {
            mono,
            sockets: sockets.into(),
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    fn ids(previous: &Sample, current: &Sample) -> Vec<&'static str> {
        let mut out = Vec::new();
        evaluate(Some(previous), current, &D, &mut out);
        out.iter().map(|f| f.id).collect()
    }

    #[test]
    fn syn_flood_names_the_top_source_and_clears() {
        let flood: Vec<_> = (0..300u32)
            .map(|i| {
                let source = if i < 200 { "198.18.1.1" } else { "198.18.1.2" };
                socket(
                    TCP_SYN_RECV,
                    "198.18.0.2:80",
                    &format!("{source}:{}", 1000 + i),
                    0,
                    0,
                )
            })
            .collect();
        let quiet = sample(0.0, vec![], &[]);
        let busy = sample(1.0, flood, &[]);
        let mut found = Vec::new();
        evaluate(Some(&quiet), &busy, &D, &mut found);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, SYN_FLOOD);
        assert!(
            found[0]
                .summary
                .contains("from 198.18.1.1 (200), 198.18.1.2 (100)"),
            "{}",
            found[0].summary
        );
        // Syncookies already on: the fix goes on to the next steps.
        let fix = &found[0].hint;
        assert!(!fix.contains("set net.ipv4.tcp_syncookies"), "{fix}");
        assert!(
            fix.starts_with("syncookies are on (net.ipv4.tcp_syncookies=1)"),
            "{fix}"
        );
        assert!(fix.contains("starting with 198.18.1.1"), "{fix}");
        let mut off = busy.clone();
        let knobs = &mut off.tcp.as_mut().unwrap().knobs;
        knobs.insert("net.ipv4.tcp_syncookies".into(), "0".into());
        knobs.insert("net.ipv4.tcp_max_syn_backlog".into(), "128".into());
        let mut found = Vec::new();
        evaluate(Some(&quiet), &off, &D, &mut found);
        let fix = &found[0].hint;
        assert!(
            fix.starts_with("set net.ipv4.tcp_syncookies=1 (now 0)"),
            "{fix}"
        );
        assert!(fix.contains("tcp_max_syn_backlog from 128 to 256"), "{fix}");
        let after = sample(2.0, vec![], &[]);
        assert!(ids(&busy, &after).is_empty());
    }

    #[test]
    fn syncookies_alone_raise_syn_flood() {
        let a = sample(0.0, vec![], &[(snmp::TCP_EXT_SYNCOOKIES_SENT, 0)]);
        let b = sample(1.0, vec![], &[(snmp::TCP_EXT_SYNCOOKIES_SENT, 500)]);
        assert_eq!(ids(&a, &b), [SYN_FLOOD]);
        let c = sample(2.0, vec![], &[(snmp::TCP_EXT_SYNCOOKIES_SENT, 500)]);
        assert!(ids(&b, &c).is_empty());
    }

    #[test]
    fn full_accept_queue_names_the_listener() {
        let listener = socket(TCP_LISTEN, "198.18.0.2:8080", "0.0.0.0:0", 5, 4);
        let a = sample(0.0, vec![], &[(snmp::TCP_EXT_LISTEN_OVERFLOWS, 10)]);
        let b = sample(1.0, vec![listener], &[(snmp::TCP_EXT_LISTEN_OVERFLOWS, 13)]);
        let mut found = Vec::new();
        evaluate(Some(&a), &b, &D, &mut found);
        assert_eq!(found[0].id, LISTEN_OVERFLOW);
        assert!(
            found[0].summary.starts_with(
                "198.18.0.2:8080 (web) accept queue full: 5 waiting, backlog 4; 3.0 overflows/s"
            ),
            "{}",
            found[0].summary
        );
        assert!(
            found[0]
                .hint
                .ends_with("raise the listen() backlog from 4 (net.core.somaxconn allows 4096)"),
            "{}",
            found[0].hint
        );
        // Room in the queue and no overflow: nothing.
        let ok = socket(TCP_LISTEN, "198.18.0.2:8080", "0.0.0.0:0", 4, 4);
        let c = sample(2.0, vec![ok], &[(snmp::TCP_EXT_LISTEN_OVERFLOWS, 13)]);
        assert!(ids(&b, &c).is_empty());
    }

    #[test]
    fn stuck_queue_needs_several_samples() {
        let mut s = socket(TCP_ESTABLISHED, "198.18.0.2:80", "198.18.0.1:5000", 1000, 0);
        s.queue_streak = D.stuck_queue_samples - 1;
        let a = sample(0.0, vec![s.clone()], &[]);
        assert!(ids(&a, &a).is_empty());
        s.queue_streak = D.stuck_queue_samples;
        let b = sample(1.0, vec![s], &[]);
        let mut found = Vec::new();
        evaluate(Some(&a), &b, &D, &mut found);
        assert_eq!(found[0].id, SOCKET_BACKLOG);
        assert!(
            found[0]
                .summary
                .contains("Recv-Q 1000 B stuck for 3 samples")
        );
        assert!(found[0].hint.starts_with("the application is not reading"));
    }

    #[test]
    fn retransmit_percent_threshold() {
        let a = sample(
            0.0,
            vec![],
            &[(snmp::TCP_RETRANS_SEGS, 0), (snmp::TCP_OUT_SEGS, 0)],
        );
        let low = sample(
            1.0,
            vec![],
            &[(snmp::TCP_RETRANS_SEGS, 1), (snmp::TCP_OUT_SEGS, 1000)],
        );
        assert!(ids(&a, &low).is_empty());
        let high = sample(
            1.0,
            vec![],
            &[(snmp::TCP_RETRANS_SEGS, 150), (snmp::TCP_OUT_SEGS, 1000)],
        );
        let mut found = Vec::new();
        evaluate(Some(&a), &high, &D, &mut found);
        assert_eq!(found[0].id, RETRANSMITS);
        assert_eq!(found[0].severity, Severity::Crit);
        // Few segments: a percentage of little traffic is noise.
        let few = sample(
            1.0,
            vec![],
            &[(snmp::TCP_RETRANS_SEGS, 5), (snmp::TCP_OUT_SEGS, 20)],
        );
        assert!(ids(&a, &few).is_empty());
    }
}
