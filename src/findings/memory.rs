//! tcp-memory: TCP memory pressure or the orphan limit. sockstat's `mem`
//! (pages all TCP sockets of the host hold) against net.ipv4.tcp_mem's
//! pressure and limit values, TcpExt TCPMemoryPressures (the stack entered
//! pressure) and TCPAbortOnMemory (it reset connections for memory or too
//! many orphans), and sockstat's orphans against net.ipv4.tcp_max_orphans.
//! tcp_mem, tcp_max_orphans, `mem` and orphans are host-wide; the counters
//! and the sockets named are the watched namespace's.

use super::{Evidence, Finding, Hold, Severity, Thresholds, process_of};
use crate::model::Sample;
use crate::model::snmp;
use crate::model::socket_table::{Socket, SocketTable};
use crate::model::sockets::{Proto, TcpSample};
use crate::model::tcp_rates::TcpRates;

pub const TCP_MEMORY: &str = "tcp-memory";

/// net.ipv4.tcp_mem's three values, in pages: below min the stack is
/// relaxed, above pressure it shrinks buffers, at max it refuses memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TcpMem {
    pressure: u64,
    max: u64,
}

fn tcp_mem(tcp: &TcpSample) -> Option<TcpMem> {
    let values: Vec<u64> = tcp
        .knob("net.ipv4.tcp_mem")?
        .split_whitespace()
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    match values[..] {
        [_, pressure, max] => Some(TcpMem { pressure, max }),
        _ => None,
    }
}

pub fn evaluate(
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
) -> Option<Finding> {
    let tcp = current.tcp.as_ref()?;
    let rates = TcpRates::new(previous, current);
    let rate = |name| rates.and_then(|r| r.rate(name)).unwrap_or(0.0);
    let (pressures, aborts) = (
        rate(snmp::TCP_EXT_TCP_MEMORY_PRESSURES),
        rate(snmp::TCP_EXT_TCP_ABORT_ON_MEMORY),
    );
    let pages = tcp.sockstat.tcp_mem_pages;
    let mem = tcp_mem(tcp);
    let warn_pages = mem.map(|m| m.pressure as f64 * limits.tcp_mem_warn_percent / 100.0);
    let at_pressure = warn_pages.is_some_and(|w| pages as f64 >= w);
    let at_limit = mem.is_some_and(|m| pages >= m.max);
    let orphans = tcp.sockstat.tcp_orphan;
    let max_orphans = tcp
        .knob("net.ipv4.tcp_max_orphans")
        .and_then(|v| v.parse::<u64>().ok());
    let orphans_high = max_orphans.is_some_and(|max| {
        max > 0 && orphans as f64 >= max as f64 * limits.tcp_orphans_warn_percent / 100.0
    });
    if !(at_pressure || at_limit || pressures > 0.0 || aborts > 0.0 || orphans_high) {
        return None;
    }
    let orphans_full = max_orphans.is_some_and(|max| orphans >= max);
    let severity = if at_limit || aborts > 0.0 || orphans_full {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let mut parts = Vec::new();
    if at_pressure || at_limit || pressures > 0.0 || aborts > 0.0 {
        parts.push(match mem {
            Some(m) => format!(
                "TCP memory {pages} pages, {} (tcp_mem pressure {}, limit {})",
                if at_limit {
                    "at the limit: sockets cannot get memory"
                } else if pages >= m.pressure {
                    "past the pressure threshold: the kernel shrinks buffers"
                } else if at_pressure {
                    "near the pressure threshold"
                } else {
                    "below the pressure threshold now"
                },
                m.pressure,
                m.max
            ),
            None => format!("TCP memory {pages} pages (tcp_mem unread)"),
        });
        parts.push(format!(
            "TCPMemoryPressures {pressures:.1}/s, TCPAbortOnMemory {aborts:.1}/s"
        ));
    }
    if orphans_high {
        parts.push(format!(
            "{orphans} orphaned sockets of tcp_max_orphans {} (host-wide)",
            max_orphans.unwrap_or_default()
        ));
    }
    let holders = largest_queues(&current.sockets, 3);
    if !holders.is_empty() {
        parts.push(format!("largest queues here: {}", holders.join(", ")));
    }
    let knob = match (orphans_high, tcp.knob("net.ipv4.tcp_mem"), max_orphans) {
        (true, _, Some(max)) => format!(
            "orphans are sockets closed by their process that the kernel still finishes: \
             shorten net.ipv4.tcp_fin_timeout (now {}) or raise net.ipv4.tcp_max_orphans from \
             {max} (host-wide; each orphan may hold up to 64 KiB)",
            tcp.knob("net.ipv4.tcp_fin_timeout").unwrap_or("?")
        ),
        (_, Some(now), _) => format!(
            "raise net.ipv4.tcp_mem (now \"{now}\" pages, host-wide) only if the host has the \
             memory; first find what holds it"
        ),
        _ => "check net.ipv4.tcp_mem (host-wide) against sockstat's mem".to_string(),
    };
    Some(Finding {
        hold: Hold::default(),
        id: TCP_MEMORY,
        severity,
        summary: parts.join("; "),
        hint: format!(
            "{knob}: full receive queues are applications not reading (the largest queues \
             above, `ss -tmp` for skmem), full send queues are slow peers; lower \
             net.ipv4.tcp_rmem/tcp_wmem maximums to cap each socket"
        ),
        evidence: Evidence {
            netns: None,
            tab: "tcp",
            row: if orphans_high && !at_pressure && !at_limit {
                "orphans"
            } else {
                "tcp mem"
            }
            .into(),
        },
    })
}

/// The TCP sockets holding the most queued bytes, as "local -> peer PID
/// (command) Recv-Q N B".
fn largest_queues(sockets: &SocketTable, count: usize) -> Vec<String> {
    let mut tcp: Vec<Socket> = sockets
        .iter()
        .filter(|s| s.proto == Proto::Tcp && !s.is_listener() && s.recv_q + s.send_q > 0)
        .collect();
    // Largest first; equal queues by address, so the list is stable.
    tcp.sort_by_key(|s| {
        (
            std::cmp::Reverse(u64::from(s.recv_q) + u64::from(s.send_q)),
            s.local,
            s.peer,
        )
    });
    tcp.iter()
        .take(count)
        .map(|s| {
            let (queue, size) = if s.recv_q >= s.send_q {
                ("Recv-Q", s.recv_q)
            } else {
                ("Send-Q", s.send_q)
            };
            format!(
                "{} -> {} {} {queue} {size} B",
                s.local,
                s.peer,
                process_of(s)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::SocketUser;

    const D: Thresholds = Thresholds::DEFAULT;

    fn sample(mono: f64, pages: u64, counters: &[(&str, u64)]) -> Sample {
        let mut tcp = TcpSample::default();
        tcp.sockstat.tcp_mem_pages = pages;
        tcp.knobs
            .insert("net.ipv4.tcp_mem".into(), "1000 2000 3000".into());
        tcp.knobs
            .insert("net.ipv4.tcp_max_orphans".into(), "100".into());
        for (name, value) in counters {
            tcp.counters.insert(name.to_string(), *value);
        }
        let socket = SocketSample {
            proto: Proto::Tcp,
            state: 1,
            local: "198.18.0.2:80".parse().unwrap(),
            peer: "198.18.0.1:40000".parse().unwrap(),
            recv_q: 900_000,
            send_q: 0,
            uid: 0,
            inode: 9,
            users: vec![SocketUser {
                process: "python3".into(),
                pid: 77,
                fd: 4,
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
        Sample {
            mono,
            sockets: vec![socket].into(),
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    #[test]
    fn pressure_and_limit_against_tcp_mem() {
        let quiet = sample(0.0, 1500, &[]);
        assert!(evaluate(None, &quiet, &D).is_none());
        let pressure = evaluate(None, &sample(1.0, 2100, &[]), &D).unwrap();
        assert_eq!(pressure.severity, Severity::Warn);
        assert!(
            pressure.summary.starts_with(
                "TCP memory 2100 pages, past the pressure threshold: the kernel shrinks buffers \
                 (tcp_mem pressure 2000, limit 3000)"
            ),
            "{}",
            pressure.summary
        );
        assert!(
            pressure.summary.contains(
                "largest queues here: 198.18.0.2:80 -> 198.18.0.1:40000 PID 77 (python3) \
                 Recv-Q 900000 B"
            ),
            "{}",
            pressure.summary
        );
        assert!(pressure.hint.contains("now \"1000 2000 3000\" pages"));
        let limit = evaluate(None, &sample(1.0, 3000, &[]), &D).unwrap();
        assert_eq!(limit.severity, Severity::Crit);
        // Back under pressure, but the counter says it was there: warn.
        let a = sample(0.0, 1500, &[(snmp::TCP_EXT_TCP_MEMORY_PRESSURES, 3)]);
        let b = sample(1.0, 1500, &[(snmp::TCP_EXT_TCP_MEMORY_PRESSURES, 4)]);
        assert_eq!(evaluate(Some(&a), &b, &D).unwrap().severity, Severity::Warn);
    }

    #[test]
    fn orphans_near_the_limit() {
        let mut s = sample(0.0, 10, &[]);
        s.tcp.as_mut().unwrap().sockstat.tcp_orphan = 85;
        let found = evaluate(None, &s, &D).unwrap();
        assert_eq!(found.evidence.row, "orphans");
        assert!(
            found
                .summary
                .starts_with("85 orphaned sockets of tcp_max_orphans 100")
        );
        assert!(
            found.hint.contains("tcp_max_orphans from 100"),
            "{}",
            found.hint
        );
    }
}
