//! Issue 25's malformed-packet kinds (GRE, bad IPv4 lengths and versions,
//! SCTP, LLC/SNAP), each line as tcpdump prints it.

use super::*;

/// Issue 25's malformed-packet kinds that printed differently from tcpdump:
/// each frame's line (first line) as netlens prints it, then, where tcpdump
/// is installed, every line compared with `tcpdump -n -r`.
fn prints_like_tcpdump(tag: &str, cases: &[(Vec<u8>, &str)]) {
    let file = std::env::temp_dir().join(format!("netlens-{tag}-{}.pcap", std::process::id()));
    let mut writer = PcapFileWriter::create(&file, FileLayout::pcap(1, 65535)).unwrap();
    let mut ours = Vec::new();
    let mut formatter = Formatter::new(netlens::capture::HOST);
    for (i, (frame, want)) in cases.iter().enumerate() {
        let ts = Timestamp {
            sec: 1_700_000_000 + i as i64,
            frac: 0,
            nanos: false,
        };
        writer.write(ts, frame.len() as u32, frame).unwrap();
        let mut line = String::new();
        formatter.line(1, ts, frame, frame.len() as u32, &mut line);
        let first = line.lines().next().unwrap_or_default();
        assert_eq!(first.get(16..), Some(*want), "{tag} case {i}: {line}");
        ours.extend(line.lines().map(str::to_string));
    }
    let Some(theirs) = tcpdump_reads_back(writer, &file) else {
        return;
    };
    assert_eq!(theirs.len(), ours.len(), "{theirs:#?}\n{ours:#?}");
    for (o, t) in ours.iter().zip(&theirs) {
        let skip = if o.starts_with('\t') { 0 } else { 15 };
        assert_eq!(o.get(skip..), t.get(skip..), "netlens: {o}\ntcpdump: {t}");
    }
}

fn ether_frame(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut frame = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    frame.extend_from_slice(&ethertype.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// An IPv4 header (198.18.0.1 > 198.18.0.2, or 198.19.0.1 > 198.19.0.2 for
/// an `inner` one) and `payload`;
/// `total` overrides the total length, `version` the version.
fn ipv4_packet(proto: u8, payload: &[u8], total: Option<u16>, version: u8, inner: bool) -> Vec<u8> {
    let total = total.unwrap_or(20 + payload.len() as u16);
    let mut ip = vec![(version << 4) | 5, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 1, 0, 0, 64, proto, 0, 0]);
    if inner {
        ip.extend_from_slice(&[198, 19, 0, 1, 198, 19, 0, 2]);
    } else {
        ip.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2]);
    }
    ip.extend_from_slice(payload);
    ip
}

fn echo_request() -> Vec<u8> {
    let mut icmp = vec![8, 0, 0, 0, 0, 1, 0, 1];
    icmp.extend(b"abcdefgh".repeat(7));
    icmp
}

fn ipv6_no_next_header() -> Vec<u8> {
    let mut ip = vec![0x60, 0, 0, 0, 0, 8, 59, 64];
    for last in [1u8, 2] {
        let addr: std::net::Ipv6Addr = format!("2001:db8::{last}").parse().unwrap();
        ip.extend_from_slice(&addr.octets());
    }
    ip.extend_from_slice(&[0; 8]);
    ip
}

const ECHO_LINE: &str = "IP 198.19.0.1 > 198.19.0.2: ICMP echo request, id 1, seq 1, length 64";

#[test]
fn gre_prints_like_tcpdump() {
    super::cap();
    let inner = ipv4_packet(1, &echo_request(), None, 4, true);
    let gre = |header: &[u8], payload: &[u8]| {
        ether_frame(
            0x0800,
            &ipv4_packet(47, &[header, payload].concat(), None, 4, false),
        )
    };
    let pair = "IP 198.18.0.1 > 198.18.0.2: ";
    let cases = vec![
        (
            gre(&[0, 0, 8, 0], &inner),
            format!("{pair}GREv0, length 88: {ECHO_LINE}"),
        ),
        (
            gre(&[0x20, 0, 8, 0, 0, 0, 0, 0x2a], &inner),
            format!("{pair}GREv0, key=0x2a, length 92: {ECHO_LINE}"),
        ),
        (
            gre(&[0x90, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 7], &inner),
            format!("{pair}GREv0, off 0x0, seq 7, length 96: {ECHO_LINE}"),
        ),
        (
            gre(&[0, 0, 0x86, 0xdd], &ipv6_no_next_header()),
            format!("{pair}GREv0, length 52: IP6 2001:db8::1 > 2001:db8::2: no next header"),
        ),
        (
            gre(&[0, 0, 0x65, 0x58], &ether_frame(0x0800, &inner)),
            format!("{pair}GREv0, length 102: {ECHO_LINE}"),
        ),
        (
            gre(&[0, 0, 0x12, 0x34], &[0x78; 20]),
            format!("{pair}GREv0, length 24: gre-proto-0x1234"),
        ),
        (gre(&[0, 0], &[]), format!("{pair}GREv0 [|gre]")),
        (
            gre(
                &[0x30, 1, 0x88, 0x0b, 0, 0x10, 0, 5, 0, 0, 0, 1],
                &[0xff, 3, 0, 0x21],
            ),
            format!("{pair}GREv1, call 5, seq 1, length 16:  [|ip]"),
        ),
        (
            gre(
                &[0x30, 1, 0x88, 0x0b, 0, 0x10, 0, 5, 0, 0, 0, 1],
                &[0x78; 16],
            ),
            format!("{pair}GREv1, call 5, seq 1, length 28: unknown PPP protocol (0x7878) "),
        ),
        (
            gre(&[0x20, 1, 0x88, 0x0b, 0, 0x10, 0, 5], &[]),
            format!("{pair}GREv1, call 5, no-payload, length 8"),
        ),
    ];
    let cases: Vec<(Vec<u8>, &str)> = cases.iter().map(|(f, w)| (f.clone(), w.as_str())).collect();
    prints_like_tcpdump("gre", &cases);
}

#[test]
fn ipv4_total_length_below_the_header_is_bad_len_like_tcpdump() {
    super::cap();
    let echo = echo_request();
    let cases = vec![
        (
            ether_frame(0x0800, &ipv4_packet(1, &echo, Some(0), 4, false)),
            "IP bad-len 0",
        ),
        (
            ether_frame(0x0800, &ipv4_packet(1, &echo, Some(10), 4, false)),
            "IP bad-len 10",
        ),
    ];
    prints_like_tcpdump("badlen", &cases);
}

#[test]
fn ip_versions_other_than_4_under_the_ipv4_ethertype_print_like_tcpdump() {
    super::cap();
    let echo = echo_request();
    let cases = vec![
        (
            ether_frame(0x0800, &ipv6_no_next_header()),
            "IP6, wrong link-layer encapsulation (invalid)",
        ),
        (
            ether_frame(0x0800, &ipv4_packet(1, &echo, None, 6, false)),
            "IP6, wrong link-layer encapsulation (invalid)",
        ),
        (
            ether_frame(0x0800, &ipv4_packet(1, &echo, None, 9, false)),
            "IP9 (invalid)",
        ),
        (
            ether_frame(0x0800, &ipv4_packet(1, &echo, None, 0, false)),
            "IP0 (invalid)",
        ),
    ];
    prints_like_tcpdump("ipversion", &cases);
}

#[test]
fn sctp_prints_like_tcpdump() {
    super::cap();
    let sctp = |src_port: u16, chunks: &[&[u8]]| {
        let mut body = src_port.to_be_bytes().to_vec();
        body.extend_from_slice(&[0x13, 0x89, 0, 0, 0, 1, 0, 0, 0, 0]);
        body.extend(chunks.concat());
        ether_frame(0x0800, &ipv4_packet(132, &body, None, 4, false))
    };
    let chunk = |kind: u8, flags: u8, body: &[u8], pad: bool| {
        let mut c = vec![kind, flags];
        c.extend_from_slice(&(4 + body.len() as u16).to_be_bytes());
        c.extend_from_slice(body);
        while pad && c.len() % 4 != 0 {
            c.push(0);
        }
        c
    };
    let data = |flags: u8, ppid: u32, payload: &[u8]| {
        let mut d = vec![0, 0, 0, 7, 0, 1, 0, 2];
        d.extend_from_slice(&ppid.to_be_bytes());
        d.extend_from_slice(payload);
        chunk(0, flags, &d, true)
    };
    let short = |body: &[u8]| ether_frame(0x0800, &ipv4_packet(132, body, None, 4, false));
    let sack: Vec<u8> = [
        &[0, 0, 0, 100, 0, 0, 0x13, 0x88, 0, 2, 0, 1][..],
        &[0, 2, 0, 3, 0, 5, 0, 6, 0, 0, 0, 90],
    ]
    .concat();
    let ports = "IP 198.18.0.1.5000 > 198.18.0.2.5001: sctp";
    let cases = vec![
        (
            short(&[0x13, 0x88, 0x13, 0x89, 0, 0, 0, 1]),
            "IP truncated-sctp - 4 bytes missing!".to_string(),
        ),
        (
            short(&[0x13, 0x88, 0x13]),
            "IP truncated-sctp - 9 bytes missing!".into(),
        ),
        (sctp(5000, &[&[1, 0, 0, 0x20]]), format!("{ports} [|sctp]")),
        (
            sctp(
                5000,
                &[&chunk(
                    1,
                    0,
                    &[0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1],
                    true,
                )],
            ),
            format!(
                "{ports} (1) [INIT] [init tag: 1] [rwnd: 65536] [OS: 1] [MIS: 1] [init TSN: 1] "
            ),
        ),
        (
            sctp(5000, &[&data(3, 46, b"hello")]),
            format!("{ports} (1) [DATA] (B)(E) [TSN: 7] [SID: 1] [SSEQ 2] [PPID 0x2e] "),
        ),
        (
            sctp(5000, &[&data(4, 3, b"hi")]),
            format!("{ports} (1) [DATA] (U) [TSN: 7] [SID: 1] [SSEQ 2] [PPID M3UA] "),
        ),
        (
            sctp(5000, &[&data(3, 46, b"")]),
            format!(
                "{ports} (1) [DATA] (B)(E) [TSN: 7] [SID: 1] [SSEQ 2] [PPID 0x2e] bogus chunk length 16]"
            ),
        ),
        (
            sctp(5000, &[&chunk(3, 0, &sack, true)]),
            format!("{ports} (1) [SACK] [cum ack 100] [a_rwnd 5000] [#gap acks 2] [#dup tsns 1] "),
        ),
        (
            sctp(
                5000,
                &[
                    &chunk(11, 0, &[], true),
                    &chunk(4, 0, &[0, 1, 0, 6, b'a', b'b'], true),
                    &chunk(0x42, 0, b"xyz", true),
                ],
            ),
            format!("{ports} (1) [COOKIE ACK] , (2) [HB REQ] , (3) [Unknown chunk type: 0x42] "),
        ),
        (
            sctp(5000, &[&[11, 0, 0, 2]]),
            format!("{ports} (1) [Bad chunk length 2, < size of chunk descriptor]"),
        ),
        (
            sctp(5000, &[&[11, 0]]),
            format!("{ports} (1) [chunk descriptor cut off at end of packet]"),
        ),
        (
            sctp(5000, &[&chunk(4, 0, &[0, 1, 0, 5, b'a'], false)]),
            format!("{ports} (1) [HB REQ]  [|sctp]"),
        ),
        (
            sctp(6704, &[&chunk(11, 0, &[], true)]),
            "IP 198.18.0.1.6704 > 198.18.0.2.5001: sctp[ForCES HP] (1) [COOKIE ACK] ".into(),
        ),
    ];
    let cases: Vec<(Vec<u8>, &str)> = cases.iter().map(|(f, w)| (f.clone(), w.as_str())).collect();
    prints_like_tcpdump("sctp", &cases);
}

#[test]
fn llc_snap_prints_like_tcpdump() {
    super::cap();
    let llc = |dst: [u8; 6], llc: &[u8]| {
        let mut frame = dst.to_vec();
        frame.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
        frame.extend_from_slice(&(llc.len() as u16).to_be_bytes());
        frame.extend_from_slice(llc);
        frame
    };
    let to = [2, 0, 0, 0, 0, 2];
    let snap = |oui: [u8; 3], kind: u16, payload: &[u8]| {
        let mut l = vec![0xaa, 0xaa, 3];
        l.extend_from_slice(&oui);
        l.extend_from_slice(&kind.to_be_bytes());
        l.extend_from_slice(payload);
        llc(to, &l)
    };
    let ip = ipv4_packet(1, &echo_request(), None, 4, false);
    let cases = vec![
        (
            snap([0, 0, 0], 0x0800, &ip),
            "IP 198.18.0.1 > 198.18.0.2: ICMP echo request, id 1, seq 1, length 64",
        ),
        (
            snap([0, 0, 0], 0x1234, &[0x11; 20]),
            "02:00:00:00:00:01 > 02:00:00:00:00:02 SNAP, ethertype Unknown (0x1234), length 20: ",
        ),
        (
            snap([0, 0x10, 0x20], 0x0800, &ip),
            "02:00:00:00:00:01 > 02:00:00:00:00:02 SNAP, oui Unknown (0x001020), pid Unknown (0x0800), length 84: ",
        ),
        (llc(to, &[0xaa, 0xaa, 3, 0, 0]), " [|snap]"),
        (llc(to, &[0xaa, 0xaa, 3, 0, 0, 0, 8]), " [|snap]"),
    ];
    prints_like_tcpdump("snap", &cases);
}
