//! sock_diag's destroy notifications: the parser of one message (struct
//! inet_diag_msg and its INET_DIAG_INFO tcp_info) and the rule that names
//! how the connection ended.
//!
//! The kernel builds the message in inet_diag_handler_get_info() when the
//! socket is freed: the msg (state, addresses, cookie, idiag_rqueue =
//! rcv_nxt - copied_seq, idiag_wqueue = write_seq - snd_una), then
//! INET_DIAG_PROTOCOL and INET_DIAG_INFO only: no INET_DIAG_SHUTDOWN, no
//! uid, no inode. idiag_state is TCP_CLOSE for every ending, so the ending
//! comes from the counters (see `ending`).

use super::inet_diag;
#[cfg(test)]
use std::net::IpAddr;
use std::net::SocketAddr;

const INET_DIAG_MSG_LEN: usize = 72;
const INET_DIAG_INFO: u16 = 2;
const AF_INET: u8 = libc::AF_INET as u8;
const AF_INET6: u8 = libc::AF_INET6 as u8;
pub const TCP_LISTEN: u8 = 10;

/// The tcp_info fields the ending and the log need (offsets: linux/tcp.h).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeathInfo {
    /// tcpi_retransmits: consecutive unanswered RTO retransmissions.
    pub retransmits: u8,
    /// tcpi_probes: unanswered keepalive / zero-window probes.
    pub probes: u8,
    pub rtt_us: u32,
    pub total_retrans: u32,
    /// snd_una - ISN: data acknowledged, plus our SYN (active opener only)
    /// and our FIN once acknowledged.
    pub bytes_acked: u64,
    /// rcv_nxt - IRS - 1: data received, plus the peer's FIN.
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub data_segs_in: u32,
    /// Data bytes transmitted, retransmissions included.
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
}

/// One destroy notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destroyed {
    pub state: u8,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    pub cookie: u64,
    pub rqueue: u32,
    pub wqueue: u32,
    /// None when the message carried no (or a too short) INET_DIAG_INFO.
    pub info: Option<DeathInfo>,
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .map_or(0, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    match bytes.get(at..at + 8) {
        Some(b) => raw.copy_from_slice(b),
        None => return 0,
    }
    u64::from_ne_bytes(raw)
}

/// The socket cookie of an inet_diag_msg (idiag_cookie: two u32, low first).
pub fn cookie(payload: &[u8]) -> Option<u64> {
    (payload.len() >= INET_DIAG_MSG_LEN)
        .then(|| u64::from(u32_at(payload, 44)) | (u64::from(u32_at(payload, 48)) << 32))
}

fn endpoint(family: u8, address: &[u8], port: [u8; 2]) -> SocketAddr {
    SocketAddr::new(
        inet_diag::address(family, address),
        u16::from_be_bytes(port),
    )
}

/// One message payload (after the netlink header); None when it is too
/// short or not IPv4/IPv6. Attributes are bounded by the payload: a
/// truncated or lying length ends the walk, never a read past the end.
pub fn parse(payload: &[u8]) -> Option<Destroyed> {
    if payload.len() < INET_DIAG_MSG_LEN {
        return None;
    }
    let family = payload[0];
    if family != AF_INET && family != AF_INET6 {
        return None;
    }
    let mut destroyed = Destroyed {
        state: payload[1],
        local: endpoint(family, &payload[8..24], [payload[4], payload[5]]),
        peer: endpoint(family, &payload[24..40], [payload[6], payload[7]]),
        cookie: cookie(payload)?,
        rqueue: u32_at(payload, 56),
        wqueue: u32_at(payload, 60),
        info: None,
    };
    inet_diag::attributes(&payload[INET_DIAG_MSG_LEN..], |kind, value| {
        if kind == INET_DIAG_INFO {
            destroyed.info = death_info(value);
        }
    });
    Some(destroyed)
}

/// tcp_info up to tcpi_bytes_retrans (Linux 4.19+: 216 bytes); an older,
/// shorter struct of at least 104 bytes reads its missing fields as 0.
fn death_info(b: &[u8]) -> Option<DeathInfo> {
    (b.len() >= 104).then(|| DeathInfo {
        retransmits: b[2],
        probes: b[3],
        rtt_us: u32_at(b, 68),
        total_retrans: u32_at(b, 100),
        bytes_acked: u64_at(b, 120),
        bytes_received: u64_at(b, 128),
        segs_out: u32_at(b, 136),
        segs_in: u32_at(b, 140),
        data_segs_in: u32_at(b, 152),
        bytes_sent: u64_at(b, 200),
        bytes_retrans: u64_at(b, 208),
    })
}

/// How the connection ended, from the socket's last tcp_info; `accepted`:
/// the socket came from a listener (it did not send the SYN, so its
/// bytes_acked lacks the SYN's sequence number); `syn_retries`: the
/// namespace's net.ipv4.tcp_syn_retries.
///
/// Worked out on Linux 6.18 with real sockets in namespaces (the tests in
/// tests/system/conn_log.rs repeat each case):
///
/// 1. Counters zeroed (segs_out = segs_in = 0): tcp_disconnect() ran, which
///    a SO_LINGER 0 close and a failed blocking connect() both call. It
///    sets write_seq += max_window + 2, so idiag_wqueue is 3 (the unacked
///    SYN + 2) when no window was ever advertised (no SYN-ACK): then a
///    failed connect, `syn-timeout` when tcpi_retransmits (left alone by
///    tcp_disconnect) exceeds tcp_syn_retries, else `refused` (a reset or
///    an ICMP error answered). Otherwise an abort: `rst-sent`.
/// 2. An active opener whose SYN was never acknowledged (bytes_acked 0):
///    `refused` when something came back (segs_in > 0: an RST). Else
///    `syn-timeout` once its SYNs ran out (tcpi_retransmits reached
///    tcp_syn_retries); before that only an error ends it, and with no RST
///    that was an ICMP error or the host's own for an unanswered neighbour
///    (which segs_in does not count): `unreachable`.
/// 3. Our FIN acknowledged: bytes_acked counts it, so it exceeds the unique
///    data sent (bytes_sent - bytes_retrans) plus our SYN: `fin`. A peer
///    that resets after acknowledging our FIN also lands here.
/// 4. tcpi_retransmits or tcpi_probes non-zero at death (tcp_done() does
///    not clear them, an ACK would have): `timeout`.
/// 5. Else a reset ended it. idiag_rqueue 0 means no data was unread at
///    close, so the kernel had no reason to send one: `rst-received` (or
///    killed by `ss -K`). With data unread, the reset was sent by close()
///    or had arrived before: tcp_info holds nothing to tell which (no
///    sk_err, no shutdown bits): `rst`.
///
/// A failed connect (1, 2) whose error the eBPF program recorded is named
/// by that error instead (`failed_by`).
pub fn ending(destroyed: &Destroyed, accepted: bool, syn_retries: u32) -> Ending {
    let info = destroyed.info.unwrap_or_default();
    if info.segs_out == 0 && info.segs_in == 0 {
        if destroyed.wqueue <= 3 && !accepted {
            return if u32::from(info.retransmits) > syn_retries {
                Ending::SynTimeout
            } else {
                Ending::Refused
            };
        }
        return Ending::RstSent;
    }
    if !accepted && info.bytes_acked == 0 {
        return if info.segs_in > 0 {
            Ending::Refused
        } else if u32::from(info.retransmits) < syn_retries {
            Ending::Unreachable
        } else {
            Ending::SynTimeout
        };
    }
    if fin_acked(&info, accepted) {
        Ending::Fin
    } else if info.retransmits > 0 || info.probes > 0 {
        Ending::Timeout
    } else if destroyed.rqueue == 0 {
        Ending::RstReceived
    } else {
        Ending::Rst
    }
}

use crate::model::closed::Ending;

/// How a failed connect's error (sk_err) names its failure: an RST or an
/// ICMP port unreachable (ECONNREFUSED) `refused`; an ICMP destination
/// unreachable (icmp_err_convert: net, host, unknown host, isolated host,
/// administratively prohibited) or this host's own, sent when no
/// neighbour answered, `unreachable`; no answer (ETIMEDOUT) `syn-timeout`.
/// None for another error (ECONNABORTED: `ss -K`): the counters decide.
pub fn failed_by(errno: i32) -> Option<Ending> {
    match errno {
        libc::ECONNREFUSED => Some(Ending::Refused),
        libc::ENETUNREACH | libc::EHOSTUNREACH | libc::EHOSTDOWN | libc::ENONET => {
            Some(Ending::Unreachable)
        }
        libc::ETIMEDOUT => Some(Ending::SynTimeout),
        _ => None,
    }
}

fn unique_sent(info: &DeathInfo) -> u64 {
    info.bytes_sent.saturating_sub(info.bytes_retrans)
}

fn fin_acked(info: &DeathInfo, accepted: bool) -> bool {
    let syn = u64::from(!accepted);
    // More than the data and our SYN: the FIN's sequence number too.
    info.bytes_acked > unique_sent(info) + syn
}

/// Data bytes the peer acknowledged: bytes_acked less our SYN, and at most
/// the unique data sent (which leaves out our FIN).
pub fn bytes_sent(info: &DeathInfo, accepted: bool) -> u64 {
    let syn = u64::from(!accepted);
    info.bytes_acked.saturating_sub(syn).min(unique_sent(info))
}

/// Data bytes received: bytes_received less the peer's FIN. After a `fin`
/// ending the FIN is taken as received; an orphaned active closer whose
/// FIN was acknowledged before the peer's FIN arrived dies without it
/// (tcp_time_wait(FIN_WAIT2) in tcp_rcv_state_process), so that count can
/// be one byte short. No data segment at all means 0 exactly.
pub fn bytes_received(info: &DeathInfo, ending: Ending) -> u64 {
    if info.data_segs_in == 0 {
        return 0;
    }
    match ending {
        Ending::Fin => info.bytes_received.saturating_sub(1),
        _ => info.bytes_received,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// struct tcp_info (linux/tcp.h) as the kernel lays it out, 248 bytes.
    #[derive(Default)]
    struct Info {
        retransmits: u8,
        probes: u8,
        rtt: u32,
        total_retrans: u32,
        bytes_acked: u64,
        bytes_received: u64,
        segs_out: u32,
        segs_in: u32,
        data_segs_in: u32,
        bytes_sent: u64,
        bytes_retrans: u64,
    }

    fn info_bytes(i: &Info) -> Vec<u8> {
        let mut b = vec![0u8; 248];
        b[0] = 7; // tcpi_state TCP_CLOSE
        b[2] = i.retransmits;
        b[3] = i.probes;
        b[68..72].copy_from_slice(&i.rtt.to_ne_bytes());
        b[100..104].copy_from_slice(&i.total_retrans.to_ne_bytes());
        b[120..128].copy_from_slice(&i.bytes_acked.to_ne_bytes());
        b[128..136].copy_from_slice(&i.bytes_received.to_ne_bytes());
        b[136..140].copy_from_slice(&i.segs_out.to_ne_bytes());
        b[140..144].copy_from_slice(&i.segs_in.to_ne_bytes());
        b[152..156].copy_from_slice(&i.data_segs_in.to_ne_bytes());
        b[200..208].copy_from_slice(&i.bytes_sent.to_ne_bytes());
        b[208..216].copy_from_slice(&i.bytes_retrans.to_ne_bytes());
        b
    }

    /// An inet_diag_msg (72 bytes) with INET_DIAG_PROTOCOL and
    /// INET_DIAG_INFO, as inet_diag_handler_get_info() builds it.
    fn message(local: &str, peer: &str, cookie: u64, queues: (u32, u32), info: &[u8]) -> Vec<u8> {
        let local: SocketAddr = local.parse().unwrap();
        let peer: SocketAddr = peer.parse().unwrap();
        let mut m = vec![0u8; 72];
        m[0] = if local.is_ipv4() { AF_INET } else { AF_INET6 };
        m[1] = 7;
        m[4..6].copy_from_slice(&local.port().to_be_bytes());
        m[6..8].copy_from_slice(&peer.port().to_be_bytes());
        for (at, ip) in [(8, local.ip()), (24, peer.ip())] {
            match ip {
                IpAddr::V4(v4) => m[at..at + 4].copy_from_slice(&v4.octets()),
                IpAddr::V6(v6) => m[at..at + 16].copy_from_slice(&v6.octets()),
            }
        }
        m[44..48].copy_from_slice(&(cookie as u32).to_ne_bytes());
        m[48..52].copy_from_slice(&((cookie >> 32) as u32).to_ne_bytes());
        m[56..60].copy_from_slice(&queues.0.to_ne_bytes());
        m[60..64].copy_from_slice(&queues.1.to_ne_bytes());
        // INET_DIAG_PROTOCOL (10): one byte, padded to 8.
        m.extend_from_slice(&5u16.to_ne_bytes());
        m.extend_from_slice(&10u16.to_ne_bytes());
        m.extend_from_slice(&[6, 0, 0, 0]);
        m.extend_from_slice(&((info.len() + 4) as u16).to_ne_bytes());
        m.extend_from_slice(&INET_DIAG_INFO.to_ne_bytes());
        m.extend_from_slice(info);
        m
    }

    fn datagram(payloads: &[Vec<u8>]) -> Vec<u8> {
        let mut d = Vec::new();
        for p in payloads {
            d.extend_from_slice(&((p.len() + 16) as u32).to_ne_bytes());
            d.extend_from_slice(&20u16.to_ne_bytes());
            d.extend_from_slice(&[0u8; 10]);
            d.extend_from_slice(p);
            while d.len() % 4 != 0 {
                d.push(0);
            }
        }
        d
    }

    #[test]
    fn parses_addresses_cookie_queues_and_tcp_info() {
        let info = Info {
            rtt: 130,
            bytes_acked: 1002,
            bytes_received: 501,
            segs_out: 6,
            segs_in: 4,
            data_segs_in: 1,
            bytes_sent: 1000,
            ..Info::default()
        };
        let cookie = 0x1234_5678_9abc_def0;
        let m = message(
            "198.18.0.1:48406",
            "198.18.0.2:7001",
            cookie,
            (0, 0),
            &info_bytes(&info),
        );
        let d = parse(&m).unwrap();
        assert_eq!(d.local, "198.18.0.1:48406".parse().unwrap());
        assert_eq!(d.peer, "198.18.0.2:7001".parse().unwrap());
        assert_eq!(d.cookie, cookie);
        let i = d.info.unwrap();
        assert_eq!(
            (i.rtt_us, i.bytes_acked, i.bytes_received),
            (130, 1002, 501)
        );
        assert_eq!(ending(&d, false, 6), Ending::Fin);
        assert_eq!(bytes_sent(&i, false), 1000);
        assert_eq!(bytes_received(&i, Ending::Fin), 500);
        let v6 = message(
            "[2001:db8::1]:443",
            "[2001:db8::2]:50000",
            9,
            (0, 0),
            &info_bytes(&info),
        );
        let d6 = parse(&v6).unwrap();
        assert_eq!(d6.peer, "[2001:db8::2]:50000".parse().unwrap());
        let mut out = Vec::new();
        crate::collect::conn_log::parse_datagram(&datagram(&[m, v6]), &mut out);
        assert_eq!(out.len(), 2);
    }

    /// The figures of each ending as Linux 6.18 reported them (client side
    /// unless `accepted`), see `ending`.
    #[test]
    fn each_ending_from_the_counters_the_kernel_left() {
        let case = |queues: (u32, u32), info: Info, accepted: bool| {
            let m = message(
                "198.18.0.1:40000",
                "198.18.0.2:7000",
                1,
                queues,
                &info_bytes(&info),
            );
            ending(&parse(&m).unwrap(), accepted, 1)
        };
        let exchanged = |acked, received| Info {
            bytes_acked: acked,
            bytes_received: received,
            bytes_sent: 1000,
            segs_out: 5,
            segs_in: 4,
            data_segs_in: 1,
            rtt: 40,
            ..Info::default()
        };
        assert_eq!(case((0, 0), exchanged(1002, 501), false), Ending::Fin);
        assert_eq!(case((0, 0), exchanged(1001, 1000), true), Ending::Fin);
        assert_eq!(
            case((0, 0), exchanged(1001, 500), false),
            Ending::RstReceived
        );
        assert_eq!(case((500, 0), exchanged(1001, 500), false), Ending::Rst);
        assert_eq!(case((1000, 0), exchanged(1000, 1000), true), Ending::Rst);
        let zeroed = Info::default();
        assert_eq!(case((0, 68610), Info::default(), false), Ending::RstSent);
        assert_eq!(case((0, 64514), Info::default(), true), Ending::RstSent);
        assert_eq!(case((0, 3), Info::default(), false), Ending::Refused);
        let syn_timeout = Info {
            retransmits: 2,
            ..zeroed
        };
        assert_eq!(case((0, 3), syn_timeout, false), Ending::SynTimeout);
        let timeout = Info {
            retransmits: 3,
            total_retrans: 4,
            bytes_acked: 1001,
            bytes_sent: 8448,
            bytes_retrans: 4448,
            segs_out: 10,
            segs_in: 2,
            ..Info::default()
        };
        assert_eq!(case((0, 3000), timeout, false), Ending::Timeout);
        let unanswered = Info {
            segs_out: 2,
            retransmits: 1,
            ..Info::default()
        };
        assert_eq!(case((0, 1), unanswered, false), Ending::SynTimeout);
        // An ICMP error ended the first SYN, before the timer ran out.
        let icmp_ended = Info {
            segs_out: 1,
            ..Info::default()
        };
        assert_eq!(case((0, 1), icmp_ended, false), Ending::Unreachable);
        let reset_syn = Info {
            segs_out: 1,
            segs_in: 1,
            ..Info::default()
        };
        assert_eq!(case((0, 1), reset_syn, false), Ending::Refused);
    }

    /// The recorded error names the kind whatever the counters say: an
    /// ICMP port unreachable (iptables' REJECT) refuses, as an RST does.
    #[test]
    fn a_recorded_error_names_the_failure() {
        assert_eq!(failed_by(libc::ECONNREFUSED), Some(Ending::Refused));
        assert_eq!(failed_by(libc::EHOSTUNREACH), Some(Ending::Unreachable));
        assert_eq!(failed_by(libc::ENETUNREACH), Some(Ending::Unreachable));
        assert_eq!(failed_by(libc::ETIMEDOUT), Some(Ending::SynTimeout));
        assert_eq!(failed_by(libc::ECONNABORTED), None);
    }

    #[test]
    fn bytes_leave_out_syn_fin_retransmissions_and_the_unacknowledged() {
        let timeout = DeathInfo {
            bytes_acked: 1001,
            bytes_sent: 8448,
            bytes_retrans: 4448,
            ..DeathInfo::default()
        };
        assert_eq!(bytes_sent(&timeout, false), 1000);
        let server_fin = DeathInfo {
            bytes_acked: 501,
            bytes_sent: 500,
            bytes_received: 1001,
            data_segs_in: 1,
            ..DeathInfo::default()
        };
        assert_eq!(bytes_sent(&server_fin, true), 500);
        assert_eq!(bytes_received(&server_fin, Ending::Fin), 1000);
        let only_fin = DeathInfo {
            bytes_received: 1,
            ..DeathInfo::default()
        };
        assert_eq!(bytes_received(&only_fin, Ending::Fin), 0);
    }

    /// Truncations and lying lengths never panic and never read past the
    /// end; every prefix shorter than the msg is refused.
    #[test]
    fn truncated_and_corrupt_messages_never_panic() {
        let info = info_bytes(&Info {
            bytes_acked: 7,
            segs_out: 1,
            ..Info::default()
        });
        let m = message("198.18.0.1:1", "198.18.0.2:2", 3, (0, 0), &info);
        for cut in 0..=m.len() {
            let parsed = parse(&m[..cut]);
            assert_eq!(parsed.is_some(), cut >= 72, "cut {cut}");
            let mut out = Vec::new();
            crate::collect::conn_log::parse_datagram(&datagram(&[m[..cut].to_vec()])[..], &mut out);
            let whole = datagram(std::slice::from_ref(&m));
            crate::collect::conn_log::parse_datagram(&whole[..cut.min(whole.len())], &mut out);
        }
        // Attribute lengths that lie: 0, below the header, past the end, max.
        for length in [0u16, 3, 4, 5, 300, u16::MAX] {
            let mut bad = m.clone();
            bad[80..82].copy_from_slice(&length.to_ne_bytes());
            let _ = parse(&bad);
        }
        // Pseudo-random bytes (a fixed LCG: the same run every time).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..2000 {
            let mut bytes = m.clone();
            for _ in 0..(round % 16 + 1) {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let at = (state >> 33) as usize % bytes.len();
                bytes[at] = (state >> 17) as u8;
            }
            let _ = parse(&bytes);
            let mut out = Vec::new();
            crate::collect::conn_log::parse_datagram(&bytes, &mut out);
        }
        // A short tcp_info (an old kernel) reads the fields it lacks as 0.
        let old = message("198.18.0.1:1", "198.18.0.2:2", 3, (0, 0), &info[..104]);
        assert_eq!(parse(&old).unwrap().info.unwrap().bytes_acked, 0);
        let too_short = message("198.18.0.1:1", "198.18.0.2:2", 3, (0, 0), &info[..50]);
        assert_eq!(parse(&too_short).unwrap().info, None);
    }
}
