use super::findings::*;
use super::*;

const C: usize = 0;
const S: usize = 1;

/// A packet of a connection between a client (dir 0) and a server (dir 1).
fn seg(t: f64, dir: usize, flags: u8, seq: u32, ack: u32, payload: u32) -> Seg {
    Seg {
        t,
        dir,
        flags,
        seq,
        ack,
        win: 512,
        wscale: (flags & SYN != 0).then_some(7),
        mss: if flags & SYN != 0 { 1460 } else { 0 },
        payload,
        wire_len: 66 + payload,
    }
}

fn handshake(a: &mut Analysis) {
    a.add(&seg(0.000, C, SYN, 1000, 0, 0));
    a.add(&seg(0.001, S, SYN | ACK, 5000, 1001, 0));
    a.add(&seg(0.002, C, ACK, 1001, 5001, 0));
}

const NAMES: [&str; 2] = ["198.18.0.1:40000", "198.18.0.2:9000"];

#[test]
fn handshake_rtt_and_data_rtt() {
    let mut a = Analysis::detailed();
    handshake(&mut a);
    a.add(&seg(0.010, C, ACK | 0x08, 1001, 5001, 100));
    a.add(&seg(0.013, S, ACK, 5001, 1101, 0));
    assert_eq!(
        a.handshake.syn_to_syn_ack_ms().map(|v| v.round()),
        Some(1.0)
    );
    assert_eq!(a.handshake.total_ms().map(|v| v.round()), Some(2.0));
    assert_eq!(a.rtt.count, 1);
    assert!((a.rtt.last_ms - 3.0).abs() < 1e-6);
    assert_eq!(a.client, Some(0));
    assert_eq!(a.dirs[C].payload_bytes, 100);
    assert!(a.findings(NAMES).is_empty());
}

#[test]
fn nagle_stall_is_found_with_its_gaps_and_evidence() {
    let mut a = Analysis::detailed();
    handshake(&mut a);
    let (mut cseq, mut sseq) = (1001u32, 5001u32);
    let mut t = 0.010;
    for _ in 0..3 {
        // Request, then the response's first small write at once...
        a.add(&seg(t, C, ACK | 0x08, cseq, sseq, 50));
        cseq += 50;
        a.add(&seg(t + 0.0001, S, ACK | 0x08, sseq, cseq, 20));
        sseq += 20;
        // ...the client's delayed ACK 40 ms later releases the second.
        a.add(&seg(t + 0.0401, C, ACK, cseq, sseq, 0));
        a.add(&seg(t + 0.0402, S, ACK | 0x08, sseq, cseq, 30));
        sseq += 30;
        t += 0.05;
    }
    assert_eq!(a.nagle.count, 3);
    assert_eq!(a.nagle.dir, S as u8);
    let found = a.findings(NAMES);
    let nagle = found.iter().find(|f| f.id == NAGLE_DELAYED_ACK).unwrap();
    assert!(nagle.summary.starts_with("198.18.0.2:9000 held a small segment until 198.18.0.1:40000's delayed ACK 3 times: gaps 40-40 ms"), "{}", nagle.summary);
    // Evidence: first write, the ACK and the released write, per stall.
    assert_eq!(a.evidence(NAGLE_DELAYED_ACK)[..3], [4, 5, 6]);
}

#[test]
fn nodelay_response_is_not_a_stall() {
    let mut a = Analysis::detailed();
    handshake(&mut a);
    let (mut cseq, mut sseq) = (1001u32, 5001u32);
    let mut t = 0.010;
    for _ in 0..5 {
        a.add(&seg(t, C, ACK | 0x08, cseq, sseq, 50));
        cseq += 50;
        a.add(&seg(t + 0.0001, S, ACK | 0x08, sseq, cseq, 20));
        a.add(&seg(t + 0.0002, S, ACK | 0x08, sseq + 20, cseq, 30));
        sseq += 50;
        t += 0.001;
    }
    // The client's last delayed ACK comes 40 ms later but releases nothing.
    a.add(&seg(t + 0.04, C, ACK, cseq, sseq, 0));
    assert_eq!(a.nagle.count, 0);
    assert!(a.findings(NAMES).is_empty());
}

#[test]
fn retransmits_report_rto_and_backoff() {
    let mut a = Analysis::detailed();
    handshake(&mut a);
    a.add(&seg(0.100, C, ACK | 0x08, 1001, 5001, 1000));
    a.add(&seg(0.304, C, ACK | 0x08, 1001, 5001, 1000));
    a.add(&seg(0.712, C, ACK | 0x08, 1001, 5001, 1000));
    a.add(&seg(1.528, C, ACK | 0x08, 1001, 5001, 1000));
    a.add(&seg(1.530, S, ACK, 5001, 2001, 0));
    assert_eq!(a.retransmits, 3);
    // Karn: no RTT sample from a retransmitted segment.
    assert_eq!(a.rtt.count, 0);
    let found = a.findings(NAMES);
    let retx = found.iter().find(|f| f.id == RETRANSMITS).unwrap();
    assert_eq!(
        retx.summary,
        "3 of 8 packets retransmitted (0 fast, 3 by timeout); RTO 204 ms, backoff 204 → 408 → 816 ms \
         (198.18.0.1:40000 retransmitted one segment 3 times)"
    );
    assert_eq!(a.evidence(RETRANSMITS), [4, 5, 6]);
}

#[test]
fn dup_acks_then_fast_retransmit() {
    let mut a = Analysis::detailed();
    handshake(&mut a);
    for i in 0..5u32 {
        a.add(&seg(
            0.01 + f64::from(i) * 0.001,
            C,
            ACK,
            1001 + i * 100,
            5001,
            100,
        ));
    }
    // Segment 1 lost: the server acks 1101 four times.
    for i in 0..4 {
        a.add(&seg(0.02 + f64::from(i) * 0.0001, S, ACK, 5001, 1101, 0));
    }
    a.add(&seg(0.021, C, ACK, 1101, 5001, 100));
    assert_eq!(a.dup_acks, 3);
    assert_eq!((a.retransmits, a.fast_retransmits), (1, 1));
}

#[test]
fn zero_window_counts_and_times_the_closed_window() {
    let mut a = Analysis::detailed();
    handshake(&mut a);
    a.add(&seg(0.01, C, ACK | 0x08, 1001, 5001, 1000));
    let mut closed = seg(0.02, S, ACK, 5001, 2001, 0);
    closed.win = 0;
    a.add(&closed);
    let mut probe = seg(0.5, S, ACK, 5001, 2001, 0);
    probe.win = 0;
    a.add(&probe);
    a.add(&seg(1.02, S, ACK, 5001, 2001, 0));
    assert_eq!(a.zero_windows, 1);
    let found = a.findings(NAMES);
    let zw = found.iter().find(|f| f.id == ZERO_WINDOW).unwrap();
    assert!(
        zw.summary
            .starts_with("198.18.0.2:9000 advertised a zero window 1 times (1.0 s closed)"),
        "{}",
        zw.summary
    );
    assert_eq!(a.evidence(ZERO_WINDOW), [4]);
}

#[test]
fn unanswered_syns_and_reset_after_data() {
    let mut a = Analysis::default();
    a.add(&seg(0.0, C, SYN, 1000, 0, 0));
    a.add(&seg(1.0, C, SYN, 1000, 0, 0));
    a.add(&seg(3.0, C, SYN, 1000, 0, 0));
    let found = a.findings(NAMES);
    assert!(found.iter().any(|f| {
        f.id == SYN_UNANSWERED
            && f.summary
                .starts_with("198.18.0.1:40000 sent SYN 3 times over 3.0 s")
    }));

    let mut b = Analysis::default();
    handshake(&mut b);
    b.add(&seg(0.01, C, ACK | 0x08, 1001, 5001, 10));
    b.add(&seg(0.02, S, RST | ACK, 5001, 1011, 0));
    let found = b.findings(NAMES);
    let rst = found.iter().find(|f| f.id == RST_AFTER_DATA).unwrap();
    assert_eq!(
        rst.summary,
        "198.18.0.2:9000 reset the connection after 10 bytes of data"
    );
    assert_eq!(b.close, Close::Reset);
}

#[test]
fn three_and_four_way_close() {
    let mut three = Analysis::default();
    handshake(&mut three);
    three.add(&seg(0.01, C, FIN | ACK, 1001, 5001, 0));
    three.add(&seg(0.02, S, FIN | ACK, 5001, 1002, 0));
    three.add(&seg(0.03, C, ACK, 1002, 5002, 0));
    assert_eq!(three.close, Close::ThreeWay);

    let mut four = Analysis::default();
    handshake(&mut four);
    four.add(&seg(0.01, C, FIN | ACK, 1001, 5001, 0));
    four.add(&seg(0.02, S, ACK, 5001, 1002, 0));
    four.add(&seg(0.03, S, FIN | ACK, 5001, 1002, 0));
    four.add(&seg(0.04, C, ACK, 1002, 5002, 0));
    assert_eq!(four.close, Close::FourWay);
    // FIN is not data: none of this is a retransmit.
    assert_eq!(four.retransmits, 0);
}
