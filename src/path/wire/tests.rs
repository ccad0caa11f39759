use super::*;

const SRC: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);
const DST: Ipv4Addr = Ipv4Addr::new(198, 18, 3, 2);
const ROUTER: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 1);

fn spec(kind: ProbeKind) -> ProbeSpec {
    ProbeSpec {
        kind,
        src: SRC,
        dst: DST,
        dport: 80,
        id: 0x1234,
        port_base: 40000,
    }
}

/// An IPv4 header (no options) for `payload` from `src` to `dst`.
fn ip(proto: u8, src: Ipv4Addr, dst: Ipv4Addr, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, 0, 64, proto, 0, 0]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(payload);
    p
}

/// An ICMP error from `from` quoting the first 28 bytes of `probe`, as
/// RFC 792 lays it out (type, code, checksum, 4 unused bytes, the quote).
fn icmp_error(kind: u8, code: u8, from: Ipv4Addr, probe: &[u8]) -> Vec<u8> {
    let mut icmp = vec![kind, code, 0, 0, 0, 0, 0, 0];
    icmp.extend_from_slice(&probe[..28]);
    ip(IPPROTO_ICMP, from, SRC, &icmp)
}

#[test]
fn probes_carry_valid_checksums() {
    for kind in [ProbeKind::Tcp, ProbeKind::Udp, ProbeKind::Icmp] {
        let s = spec(kind);
        let probe = build_probe(&s, 7, 42);
        assert_eq!(probe[8], 7, "ttl");
        assert_eq!(checksum(&[&probe[..20]]), 0, "ip header {kind:?}");
        let transport = &probe[20..];
        let sum = match kind {
            ProbeKind::Icmp => checksum(&[transport]),
            _ => {
                let mut pseudo = SRC.octets().to_vec();
                pseudo.extend_from_slice(&DST.octets());
                pseudo.extend_from_slice(&[0, protocol(kind)]);
                pseudo.extend_from_slice(&(transport.len() as u16).to_be_bytes());
                checksum(&[&pseudo, transport])
            }
        };
        assert_eq!(sum, 0, "{kind:?}");
    }
}

#[test]
fn a_time_exceeded_is_matched_by_the_quoted_probe() {
    for kind in [ProbeKind::Tcp, ProbeKind::Udp, ProbeKind::Icmp] {
        let s = spec(kind);
        let probe = build_probe(&s, 2, 77);
        let reply = match_icmp(&s, &icmp_error(11, 0, ROUTER, &probe));
        assert_eq!(
            reply,
            Some(Reply {
                seq: 77,
                from: ROUTER,
                kind: ReplyKind::TimeExceeded
            }),
            "{kind:?}"
        );
        // Another prober's probe (other id and ports) is not ours.
        let other = ProbeSpec {
            id: 9,
            port_base: 20000,
            ..s
        };
        assert_eq!(match_icmp(&other, &icmp_error(11, 0, ROUTER, &probe)), None);
        // A probe to another destination is not ours either.
        let elsewhere = ProbeSpec { dst: ROUTER, ..s };
        assert_eq!(
            match_icmp(&elsewhere, &icmp_error(11, 0, ROUTER, &probe)),
            None
        );
    }
}

#[test]
fn unreachables_from_the_destination_end_the_path_from_a_router_they_name_why() {
    let s = spec(ProbeKind::Udp);
    let probe = build_probe(&s, 5, 3);
    let port = match_icmp(&s, &icmp_error(3, 3, DST, &probe)).unwrap();
    assert_eq!((port.seq, port.kind), (3, ReplyKind::Destination));
    let host = match_icmp(&s, &icmp_error(3, 1, ROUTER, &probe)).unwrap();
    assert_eq!(host.kind, ReplyKind::Unreachable("host unreachable"));
}

#[test]
fn the_destinations_syn_ack_rst_and_echo_reply_are_matched() {
    let s = spec(ProbeKind::Tcp);
    let seq_number = tcp_seq_number(&s, 9);
    for flags in [TCP_SYN | TCP_ACK, TCP_RST | TCP_ACK] {
        let mut tcp = vec![0, 80];
        tcp.extend_from_slice(&(40000u16 + 9).to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 1]);
        tcp.extend_from_slice(&(seq_number + 1).to_be_bytes());
        tcp.extend_from_slice(&[0x50, flags, 0, 0, 0, 0, 0, 0]);
        let packet = ip(IPPROTO_TCP, DST, SRC, &tcp);
        assert_eq!(
            match_tcp(&s, &packet).map(|r| (r.seq, r.kind)),
            Some((9, ReplyKind::Destination))
        );
        // Acknowledging another sequence number: not an answer to ours.
        let mut wrong = packet.clone();
        wrong[20 + 11] ^= 0x40;
        assert_eq!(match_tcp(&s, &wrong), None);
    }
    let s = spec(ProbeKind::Icmp);
    let mut echo = vec![0, 0, 0, 0];
    echo.extend_from_slice(&0x1234u16.to_be_bytes());
    echo.extend_from_slice(&5u16.to_be_bytes());
    let reply = match_icmp(&s, &ip(IPPROTO_ICMP, DST, SRC, &echo)).unwrap();
    assert_eq!((reply.seq, reply.kind), (5, ReplyKind::Destination));
    // Our own echo request looped back is not a reply.
    let request = build_probe(&s, 64, 5);
    assert_eq!(match_icmp(&s, &request), None);
}

#[test]
fn truncated_and_malformed_replies_never_panic() {
    let mut packets = Vec::new();
    for kind in [ProbeKind::Tcp, ProbeKind::Udp, ProbeKind::Icmp] {
        let probe = build_probe(&spec(kind), 3, 1);
        packets.push(icmp_error(11, 0, ROUTER, &probe));
        packets.push(icmp_error(3, 3, DST, &probe));
    }
    let mut state: u32 = 0x9e37_79b9;
    for _ in 0..2000 {
        let len = (state % 90) as usize;
        let mut bytes = Vec::with_capacity(len);
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            bytes.push(state as u8);
        }
        if let Some(first) = bytes.first_mut() {
            *first = 0x40 | (*first & 0x0f);
        }
        packets.push(bytes);
    }
    for kind in [ProbeKind::Tcp, ProbeKind::Udp, ProbeKind::Icmp] {
        let s = spec(kind);
        for packet in &packets {
            for end in 0..=packet.len() {
                let _ = match_icmp(&s, &packet[..end]);
                let _ = match_tcp(&s, &packet[..end]);
            }
        }
        // The quote cut short of the 8 transport bytes: no match.
        let probe = build_probe(&s, 3, 1);
        let mut short = icmp_error(11, 0, ROUTER, &probe);
        short.truncate(short.len() - 1);
        assert_eq!(match_icmp(&s, &short), None);
        // A header length below 20 bytes, in the reply or the quote.
        let mut bad = icmp_error(11, 0, ROUTER, &probe);
        bad[28] = 0x44;
        assert_eq!(match_icmp(&s, &bad), None);
        bad[0] = 0x41;
        assert_eq!(match_icmp(&s, &bad), None);
    }
}
