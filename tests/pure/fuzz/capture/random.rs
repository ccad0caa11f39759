//! Random input: bytes, plausible headers and filter text never panic;
//! plausible packets with random fields print as tcpdump prints them.

use super::*;

const LINKTYPES: &[u32] = &[1, 0, 101, 108, 113, 276, 239, 12];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(
        link in prop::sample::select(LINKTYPES),
        data in prop::collection::vec(any::<u8>(), 0..200),
        extra in 0u32..2000,
    ) {
        super::cap();
        let wire = data.len() as u32 + extra;
        let mut fmt = Formatter::new(netlens::capture::HOST);
        let mut out = String::new();
        fmt.line(link, Timestamp::default(), &data, wire, &mut out);
        prop_assert!(!out.is_empty());
        let s = summarize(link, &data, wire);
        for f in filters() {
            let _ = f.matches(&s, &data);
        }
    }

    /// Headers that are mostly valid with random fields are a better fuzz
    /// than random bytes: they reach the deep decoders.
    #[test]
    fn plausible_headers_with_random_fields_never_panic(
        proto in prop::sample::select(&[6u8, 17, 1, 58, 0, 43, 44, 50, 51][..]),
        v6 in any::<bool>(),
        body in prop::collection::vec(any::<u8>(), 0..120),
        cut in 0usize..200,
    ) {
        super::cap();
        let mut frame = vec![0u8; 14];
        frame[12..14].copy_from_slice(if v6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
        if v6 {
            let mut ip = vec![0x60, 0, 0, 0];
            ip.extend_from_slice(&(body.len() as u16).to_be_bytes());
            ip.extend_from_slice(&[proto, 64]);
            ip.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            ip.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            frame.extend_from_slice(&ip);
        } else {
            let total = (20 + body.len()) as u16;
            let mut ip = vec![0x45, 0];
            ip.extend_from_slice(&total.to_be_bytes());
            ip.extend_from_slice(&[0, 1, 0, 0, 64, proto, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
            frame.extend_from_slice(&ip);
        }
        // Port 53 on both sides sends UDP and TCP bodies through DNS.
        let mut body = body;
        if body.len() >= 4 && (proto == 6 || proto == 17) {
            body[0..4].copy_from_slice(&[0, 53, 0, 53]);
        }
        frame.extend_from_slice(&body);
        let wire = frame.len() as u32;
        let data = &frame[..cut.min(frame.len())];
        let mut fmt = Formatter::new(netlens::capture::HOST);
        let mut out = String::new();
        fmt.line(1, Timestamp::default(), data, wire, &mut out);
        let s = summarize(1, data, wire);
        for f in filters() {
            let _ = f.matches(&s, data);
        }
    }

    #[test]
    fn filter_parser_never_panics(
        words in prop::collection::vec(prop::sample::select(&[
            "tcp", "udp", "icmp", "icmp6", "arp", "ip", "ip6", "host", "src", "dst", "net",
            "port", "portrange", "less", "greater", "and", "or", "not", "(", ")", "[", "]",
            "&", "|", "!=", "=", "<", ">", "tcp[tcpflags]", "tcp-syn", "13", "2", "0",
            "198.18.0.1", "198.18.0.0/15", "::1", "1-1024", ":", "+", "-", "*", "/", "%",
            "0xff", "99999999999", "ip[8]", "icmp[icmptype]", "len", "ether", "broadcast",
        ][..]), 0..12),
        junk in "[ -~]{0,12}",
    ) {
        super::cap();
        let text = words.join(" ") + &junk;
        match Filter::parse(&text) {
            Ok(filter) => {
                let s = summarize(1, &[0u8; 60], 60);
                let _ = filter.matches(&s, &[0u8; 60]);
            }
            Err(e) => prop_assert!(e.position <= text.len(), "{} > {}", e.position, text.len()),
        }
    }
}

/// Ethernet/IPv4 or IPv6 frames with consistent lengths and random
/// transport bytes (ports 53 now and then, so DNS is reached), cut at a
/// random length now and then: each line as tcpdump prints it.
#[test]
fn plausible_packets_with_random_fields_print_as_tcpdump_does() {
    super::cap();
    if crate::common::need(&["tcpdump"]) {
        return;
    }
    let mut rng = XorShift(0x7463_7064_756d_7021);
    let file = std::env::temp_dir().join(format!("netlens-plausible-{}.pcap", std::process::id()));
    let mut writer = PcapFileWriter::create(&file, FileLayout::pcap(1, 65535)).unwrap();
    let mut ours = Vec::new();
    let mut frames = Vec::new();
    let mut fmt = Formatter::new(netlens::capture::HOST);
    for i in 0..20000u32 {
        let proto = [6u8, 17, 1, 58, 0, 43, 44, 60, 59][rng.below(9)];
        let v6 = rng.below(2) == 1;
        let mut body: Vec<u8> = (0..rng.below(120)).map(|_| rng.next() as u8).collect();
        if body.len() >= 4 && (proto == 6 || proto == 17) && rng.below(3) == 0 {
            body[0..4].copy_from_slice(&[0, 53, 0, 53]);
        }
        // Keep to the protocols netlens prints (tcpdump also decodes EIGRP,
        // AH, DCCP, RPL, ... which end at "length N" here): an extension
        // header leads to TCP, UDP, ICMPv6 or no next header, and the
        // ports of UDP and TCP are DNS or unassigned.
        if matches!(proto, 0 | 43 | 60) && !body.is_empty() {
            body[0] = [6, 17, 58, 59][usize::from(body[0]) % 4];
        }
        if proto == 58 && body.first() == Some(&155) {
            body[0] = 200;
        }
        if matches!(proto, 6 | 17) && body.len() >= 4 && body[0..4] != [0, 53, 0, 53] {
            body[0] |= 0xc0;
            body[2] |= 0xc0;
        }
        let mut frame = vec![0u8; 12];
        if v6 {
            frame.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
            frame.extend_from_slice(&(body.len() as u16).to_be_bytes());
            frame.extend_from_slice(&[proto, 64]);
            frame.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            frame.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        } else {
            frame.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
            frame.extend_from_slice(&((20 + body.len()) as u16).to_be_bytes());
            frame.extend_from_slice(&[0, 1, 0, 0, 64, proto, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
        }
        frame.extend_from_slice(&body);
        let wire = frame.len() as u32;
        let cut = if rng.below(4) == 0 {
            14 + rng.below(frame.len() - 13)
        } else {
            frame.len()
        };
        let ts = Timestamp {
            sec: 1_700_000_000,
            frac: i,
            nanos: false,
        };
        writer.write(ts, wire, &frame[..cut]).unwrap();
        let mut line = String::new();
        fmt.line(1, ts, &frame[..cut], wire, &mut line);
        ours.push(line);
        frame.truncate(cut);
        frames.push((frame, wire));
    }
    writer.finish().unwrap();
    let theirs = tcpdump_read(&file, &[]);
    // tcpdump prints some packets on several lines: compare packet by
    // packet, each tcpdump packet being its timestamped line and the lines
    // that follow it.
    let mut packets: Vec<String> = Vec::new();
    for line in theirs {
        match packets.last_mut() {
            Some(last) if !line.starts_with(|c: char| c.is_ascii_digit()) => {
                last.push('\n');
                last.push_str(&line);
            }
            _ => packets.push(line),
        }
    }
    assert_eq!(packets.len(), ours.len());
    let differ: Vec<String> = ours
        .iter()
        .zip(&packets)
        .filter(|(o, t)| o.get(15..) != t.get(15..))
        .map(|(o, t)| format!("netlens: {o}\ntcpdump: {t}"))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        ours.len(),
        differ
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Random filters select the same packets from them (tcpdump -O: see
    // tests/system/capture.rs for libpcap's optimizer). A packet is known by its
    // timestamp's microseconds, its index here.
    for _ in 0..150 {
        let text = random_filter(&mut rng, 2);
        let filter = Filter::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let theirs: Vec<usize> = tcpdump_read(&file, &["-O", &text])
            .iter()
            .filter_map(|l| l.get(9..15)?.parse().ok())
            .collect();
        let ours: Vec<usize> = frames
            .iter()
            .enumerate()
            .filter(|(_, (data, wire))| filter.matches(&summarize(1, data, *wire), data))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(ours, theirs, "filter {text:?}");
    }
    let _ = std::fs::remove_file(&file);
}
