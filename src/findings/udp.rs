//! udp-drops: a UDP socket dropping datagrams because its receive buffer is
//! full. The evidence is the socket's own drop counter (sock_diag
//! SK_MEMINFO_DROPS, ss's `d` in skmem) rising between two samples; Udp
//! RcvbufErrors and InErrors (nstat's UdpRcvbufErrors, UdpInErrors) say the
//! same for the whole namespace and raise it alone when no socket is left
//! to blame (an IPv4 socket that closed since).

use super::{Evidence, Finding, Hold, Severity, Thresholds, process_of};
use crate::model::Sample;
use crate::model::snmp;
use crate::model::socket_table::Socket;
use crate::model::sockets::{Proto, TcpSample};
use crate::model::tcp_rates::TcpRates;
use std::collections::HashMap;

pub const UDP_DROPS: &str = "udp-drops";

pub fn evaluate(
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
) -> Option<Finding> {
    let previous = previous?;
    // The sockets' drop counters move between the socket dumps.
    let seconds = crate::model::rates::sockets_interval(previous, current);
    if seconds <= 0.0 {
        return None;
    }
    let tcp = current.tcp.as_ref()?;
    let rates = TcpRates::new(Some(previous), current);
    let rate = |name| rates.and_then(|r| r.rate(name)).unwrap_or(0.0);
    let (rcvbuf_errors, in_errors) = (rate(snmp::UDP_RCVBUF_ERRORS), rate(snmp::UDP_IN_ERRORS));
    let mut dropping = dropping_sockets(previous, current, seconds, limits);
    dropping.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.local.cmp(&b.0.local)));
    let counters = format!("Udp RcvbufErrors {rcvbuf_errors:.0}/s, InErrors {in_errors:.0}/s");
    let Some(&(worst, per_s)) = dropping.first() else {
        if rcvbuf_errors <= limits.udp_drops_per_s || rcvbuf_errors <= 0.0 {
            return None;
        }
        return Some(Finding {
            hold: Hold::default(),
            id: UDP_DROPS,
            severity: severity(rcvbuf_errors, limits),
            summary: format!(
                "UDP receive buffers full: {counters} (no socket's drop counter rose: it closed, \
                 or it is not in this sample)"
            ),
            hint: fix(tcp, None),
            evidence: Evidence {
                netns: None,
                tab: "tcp",
                row: snmp::UDP_RCVBUF_ERRORS.into(),
            },
        });
    };
    let others = match dropping.len() {
        1 => String::new(),
        2 => " (+1 more socket)".to_string(),
        n => format!(" (+{} more sockets)", n - 1),
    };
    let rcvbuf = worst
        .rcvbuf
        .map_or("rcvbuf ?".to_string(), |b| format!("rcvbuf {b} B"));
    Some(Finding {
        hold: Hold::default(),
        id: UDP_DROPS,
        severity: severity(per_s, limits),
        summary: format!(
            "udp {} {} dropped {per_s:.0} datagrams/s, receive buffer full ({rcvbuf}, Recv-Q {} \
             B); {counters}{others}",
            worst.local_text(),
            process_of(&worst),
            worst.recv_q,
        ),
        hint: fix(tcp, worst.rcvbuf),
        evidence: Evidence {
            netns: Some(worst.netns),
            tab: "sockets",
            row: format!("{} {}", worst.local, worst.peer),
        },
    })
}

fn severity(per_s: f64, limits: &Thresholds) -> Severity {
    if per_s >= limits.udp_drops_crit_per_s {
        Severity::Crit
    } else {
        Severity::Warn
    }
}

/// UDP sockets whose drop counter rose faster than the threshold, with
/// their drops per second. A socket is followed by its inode: sockets
/// sharing a port (SO_REUSEPORT) share their endpoints too.
fn dropping_sockets<'a>(
    previous: &Sample,
    current: &'a Sample,
    seconds: f64,
    limits: &Thresholds,
) -> Vec<(Socket<'a>, f64)> {
    let before: HashMap<u32, u32> = previous
        .sockets
        .iter()
        .filter(|s| s.proto == Proto::Udp && s.inode != 0)
        .filter_map(|s| Some((s.inode, s.drops?)))
        .collect();
    current
        .sockets
        .iter()
        .filter(|s| s.proto == Proto::Udp && s.inode != 0)
        .filter_map(|s| {
            let rise = s.drops?.checked_sub(*before.get(&s.inode)?)?;
            let per_s = f64::from(rise) / seconds;
            (rise > 0 && per_s > limits.udp_drops_per_s).then_some((s, per_s))
        })
        .collect()
}

/// Read faster, a bigger buffer within net.core.rmem_max (live value), or
/// more readers.
fn fix(tcp: &TcpSample, rcvbuf: Option<u32>) -> String {
    let number = |name| tcp.knob(name).and_then(|v| v.parse::<u64>().ok());
    // SO_RCVBUF asks for a size the kernel doubles (rb is the doubled
    // value), and caps the ask at net.core.rmem_max.
    let buffer = match (number("net.core.rmem_max"), rcvbuf) {
        (Some(max), Some(rb)) if u64::from(rb) >= max.saturating_mul(2) => format!(
            "net.core.rmem_max ({max}) caps SO_RCVBUF: raise it (sysctl -w \
             net.core.rmem_max={}), then the socket's SO_RCVBUF",
            max.saturating_mul(4)
        ),
        (Some(max), _) => format!(
            "raise the socket's SO_RCVBUF (the kernel doubles it, up to net.core.rmem_max \
             {max} asked)"
        ),
        (None, _) => "raise SO_RCVBUF and net.core.rmem_max".to_string(),
    };
    format!(
        "the process does not read as fast as datagrams arrive: read faster (more threads, \
         recvmmsg), {buffer}, or spread the load over more sockets with SO_REUSEPORT"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::SocketUser;

    const D: Thresholds = Thresholds::DEFAULT;

    fn udp(inode: u32, drops: u32) -> SocketSample {
        SocketSample {
            proto: Proto::Udp,
            state: 7,
            local: "198.18.0.2:5353".parse().unwrap(),
            peer: "0.0.0.0:0".parse().unwrap(),
            recv_q: 213_760,
            send_q: 0,
            uid: 0,
            inode,
            users: vec![SocketUser {
                process: "python3".into(),
                pid: 4242,
                fd: 3,
            }]
            .into(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: Some(drops),
            rcvbuf: Some(212_992),
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        }
    }

    fn sample(mono: f64, sockets: Vec<SocketSample>, rcvbuf_errors: u64) -> Sample {
        let mut tcp = TcpSample::default();
        tcp.counters
            .insert(snmp::UDP_RCVBUF_ERRORS.into(), rcvbuf_errors);
        tcp.counters
            .insert(snmp::UDP_IN_ERRORS.into(), rcvbuf_errors);
        tcp.knobs
            .insert("net.core.rmem_max".into(), "106496".into());
        Sample {
            mono,
            sockets: sockets.into(),
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    #[test]
    fn a_rising_drop_counter_names_the_socket_and_process() {
        let a = sample(10.0, vec![udp(7, 100), udp(8, 5)], 1000);
        let b = sample(12.0, vec![udp(7, 1800), udp(8, 5)], 2700);
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert_eq!((found.id, found.severity), (UDP_DROPS, Severity::Crit));
        assert_eq!(
            found.summary,
            "udp 198.18.0.2:5353 PID 4242 (python3) dropped 850 datagrams/s, receive buffer \
             full (rcvbuf 212992 B, Recv-Q 213760 B); Udp RcvbufErrors 850/s, InErrors 850/s"
        );
        assert!(
            found
                .hint
                .contains("net.core.rmem_max (106496) caps SO_RCVBUF"),
            "{}",
            found.hint
        );
        assert_eq!(found.evidence.row, "198.18.0.2:5353 0.0.0.0:0");
        // A few drops/s warn; no rise is quiet.
        let c = sample(13.0, vec![udp(7, 1810), udp(8, 5)], 2710);
        assert_eq!(evaluate(Some(&b), &c, &D).unwrap().severity, Severity::Warn);
        assert!(evaluate(Some(&c), &c.clone(), &D).is_none());
        let d = sample(14.0, vec![udp(7, 1810), udp(8, 5)], 2710);
        assert!(evaluate(Some(&c), &d, &D).is_none());
    }

    #[test]
    fn rcvbuf_errors_alone_still_raise_it() {
        let a = sample(10.0, vec![], 0);
        let b = sample(11.0, vec![], 40);
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert_eq!(found.evidence.row, snmp::UDP_RCVBUF_ERRORS);
        assert!(
            found.summary.contains("RcvbufErrors 40/s"),
            "{}",
            found.summary
        );
    }
}
