//! Robustness of the packet path: random bytes through the line printer, the
//! summary decoder and the filter matcher; random text through the filter
//! parser; crafted packets (pnet builders) cut at every length through the
//! printer, which must end the line as tcpdump does (`[|proto]`), and where
//! tcpdump is installed, print exactly what `tcpdump -n -r` prints for them.

use netlens::capture::pcap_file::PcapFileWriter;
use netlens::packet::decode::summarize;
use netlens::packet::filter::Filter;
use netlens::packet::format::{Formatter, Timestamp};
use pnet_packet::MutablePacket;
use pnet_packet::ethernet::{EtherTypes, MutableEthernetPacket};
use pnet_packet::icmp::MutableIcmpPacket;
use pnet_packet::ip::IpNextHeaderProtocols;
use pnet_packet::ipv4::MutableIpv4Packet;
use pnet_packet::ipv6::MutableIpv6Packet;
use pnet_packet::tcp::MutableTcpPacket;
use pnet_packet::udp::MutableUdpPacket;
use proptest::prelude::*;
use std::process::Command;

use crate::common::random::{XorShift, random_filter};

const LINKTYPES: &[u32] = &[1, 0, 101, 108, 113, 276, 239, 12];

fn filters() -> Vec<Filter> {
    [
        "tcp[tcpflags] & (tcp-syn) != 0",
        "tcp[13] & 2 != 0",
        "udp port 53 or icmp",
        "host 198.18.0.1 and not arp",
        "ip6 and tcp",
        "icmp[icmptype] = icmp-echo",
        "portrange 1-1024 and greater 100",
        "net 198.18.0.0/15",
        "ip[8] = 64",
    ]
    .iter()
    .map(|f| Filter::parse(f).unwrap())
    .collect()
}

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

fn ipv4(buf: &mut [u8], proto: pnet_packet::ip::IpNextHeaderProtocol, total: usize) {
    let mut ip = MutableIpv4Packet::new(buf).unwrap();
    ip.set_version(4);
    ip.set_header_length(5);
    ip.set_total_length(total as u16);
    ip.set_ttl(64);
    ip.set_identification(7);
    ip.set_next_level_protocol(proto);
    ip.set_source([198, 18, 0, 1].into());
    ip.set_destination([198, 18, 0, 2].into());
    let checksum = pnet_packet::ipv4::checksum(&ip.to_immutable());
    ip.set_checksum(checksum);
}

/// Crafted frames: (what the line must end with when cut inside the last
/// header, the frame, where that header starts).
fn crafted() -> Vec<(&'static str, Vec<u8>, usize)> {
    let mut out = Vec::new();
    // TCP SYN with MSS, SACK-permitted, timestamps, NOP, window scale.
    let mut buf = vec![0u8; 14 + 20 + 40];
    {
        let mut eth = MutableEthernetPacket::new(&mut buf).unwrap();
        eth.set_ethertype(EtherTypes::Ipv4);
        ipv4(eth.payload_mut(), IpNextHeaderProtocols::Tcp, 60);
    }
    {
        let mut tcp = MutableTcpPacket::new(&mut buf[34..]).unwrap();
        tcp.set_source(40000);
        tcp.set_destination(9000);
        tcp.set_sequence(1000);
        tcp.set_data_offset(10);
        tcp.set_flags(0x02);
        tcp.set_window(64240);
    }
    buf[54..74].copy_from_slice(&[
        2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
    ]);
    out.push(("[|tcp]", buf, 34));
    // TCP ACK with SACK blocks, an unknown option and a Fast Open cookie:
    // cuts inside values that tcpdump checks with LENCHECK (sack, unknown)
    // and inside one it reads field by field (tfo).
    let mut buf = vec![0u8; 14 + 20 + 20 + 32];
    {
        let mut eth = MutableEthernetPacket::new(&mut buf).unwrap();
        eth.set_ethertype(EtherTypes::Ipv4);
        ipv4(eth.payload_mut(), IpNextHeaderProtocols::Tcp, 72);
    }
    {
        let mut tcp = MutableTcpPacket::new(&mut buf[34..]).unwrap();
        tcp.set_source(9000);
        tcp.set_destination(40000);
        tcp.set_sequence(7000);
        tcp.set_acknowledgement(1001);
        tcp.set_data_offset(13);
        tcp.set_flags(0x10);
        tcp.set_window(501);
    }
    buf[54..86].copy_from_slice(&[
        1, 1, 5, 18, 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 0x30, 0, 0, 0, 0x40, 0, 99, 4, 0xab, 0xcd,
        34, 6, 1, 2, 3, 4, 1, 1,
    ]);
    out.push(("[|tcp]", buf, 34));
    // UDP to port 53 carrying a DNS query.
    let query: Vec<u8> = [
        &[0x90, 0x2d, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0][..],
        b"\x07example\x04test\x00",
        &[0, 1, 0, 1],
    ]
    .concat();
    let mut buf = vec![0u8; 14 + 20 + 8 + query.len()];
    {
        let mut eth = MutableEthernetPacket::new(&mut buf).unwrap();
        eth.set_ethertype(EtherTypes::Ipv4);
        ipv4(
            eth.payload_mut(),
            IpNextHeaderProtocols::Udp,
            28 + query.len(),
        );
    }
    {
        let mut udp = MutableUdpPacket::new(&mut buf[34..]).unwrap();
        udp.set_source(40053);
        udp.set_destination(53);
        udp.set_length((8 + query.len()) as u16);
    }
    buf[42..].copy_from_slice(&query);
    out.push(("[|udp]", buf, 34));
    // ICMP echo request.
    let mut buf = vec![0u8; 14 + 20 + 8 + 16];
    {
        let mut eth = MutableEthernetPacket::new(&mut buf).unwrap();
        eth.set_ethertype(EtherTypes::Ipv4);
        ipv4(eth.payload_mut(), IpNextHeaderProtocols::Icmp, 44);
    }
    {
        let mut icmp = MutableIcmpPacket::new(&mut buf[34..]).unwrap();
        icmp.set_icmp_type(pnet_packet::icmp::IcmpTypes::EchoRequest);
    }
    buf[38..42].copy_from_slice(&[0x12, 0x34, 0, 1]);
    out.push(("[|icmp]", buf, 34));
    // IPv6 TCP ACK.
    let mut buf = vec![0u8; 14 + 40 + 20];
    {
        let mut eth = MutableEthernetPacket::new(&mut buf).unwrap();
        eth.set_ethertype(EtherTypes::Ipv6);
        let mut ip = MutableIpv6Packet::new(eth.payload_mut()).unwrap();
        ip.set_version(6);
        ip.set_payload_length(20);
        ip.set_next_header(IpNextHeaderProtocols::Tcp);
        ip.set_hop_limit(64);
        ip.set_source("2001:db8::1".parse().unwrap());
        ip.set_destination("2001:db8::2".parse().unwrap());
        let mut tcp = MutableTcpPacket::new(ip.payload_mut()).unwrap();
        tcp.set_source(443);
        tcp.set_destination(50000);
        tcp.set_sequence(5);
        tcp.set_acknowledgement(9);
        tcp.set_data_offset(5);
        tcp.set_flags(0x10);
        tcp.set_window(100);
    }
    out.push(("[|tcp]", buf, 54));
    out
}

/// Closes `writer`'s file, has tcpdump print it and removes it; None (and
/// a SKIP line) when tcpdump is not installed.
fn tcpdump_reads_back(writer: PcapFileWriter, file: &std::path::Path) -> Option<Vec<String>> {
    writer.finish().unwrap();
    let theirs = crate::common::need::installed("tcpdump").then(|| tcpdump_read(file, &[]));
    let _ = std::fs::remove_file(file);
    if theirs.is_none() {
        crate::common::need::missing("tcpdump");
    }
    theirs
}

/// What `tcpdump -n -r FILE [ARGS]` prints, line by line.
fn tcpdump_read(file: &std::path::Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("tcpdump")
        .env("TZ", "UTC")
        .args(["-n", "-r"])
        .arg(file)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn crafted_packets_cut_at_every_length_end_like_tcpdump() {
    super::cap();
    let dir = std::env::temp_dir();
    let file = dir.join(format!("netlens-cuts-{}.pcap", std::process::id()));
    let mut writer = PcapFileWriter::create(&file, 1, 65535).unwrap();
    let mut ours = Vec::new();
    let mut fmt = Formatter::new(netlens::capture::HOST);
    for (end, frame, header_at) in crafted() {
        for cut in 0..=frame.len() {
            let ts = Timestamp {
                sec: 1_700_000_000,
                frac: ours.len() as u32,
                nanos: false,
            };
            writer.write(ts, frame.len() as u32, &frame[..cut]).unwrap();
            let mut line = String::new();
            fmt.line(1, ts, &frame[..cut], frame.len() as u32, &mut line);
            // Cut inside the transport header: tcpdump's truncation marker.
            if cut > header_at + 4 && cut < header_at + 8 {
                assert!(line.ends_with(end), "cut {cut} of {end}: {line}");
            }
            // Cut anywhere in the IP or transport header: marked.
            if cut >= 14 && cut < header_at + 8 {
                assert!(line.contains("[|"), "cut {cut} of {end} not marked: {line}");
            }
            ours.push(line);
        }
    }
    let Some(theirs) = tcpdump_reads_back(writer, &file) else {
        return;
    };
    assert_eq!(theirs.len(), ours.len());
    // Our lines used the local time zone; compare after the timestamp.
    let mut differ = Vec::new();
    for (o, t) in ours.iter().zip(&theirs) {
        if o.get(15..) != t.get(15..) {
            differ.push(format!("netlens: {o}\ntcpdump: {t}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // The option cuts that end in tcpdump's '>' are among them.
    assert!(ours.iter().filter(|l| l.ends_with("[|tcp]>")).count() >= 10);
}

/// tcpdump's two endings for an option cut inside its value, checked
/// without tcpdump: '>' follows " [|tcp]" when the cut is found by its
/// LENCHECK after an option was printed; the first option, and values read
/// field by field (tfo), end without it.
#[test]
fn option_cut_inside_its_value_ends_like_tcpdump() {
    super::cap();
    let frames = crafted();
    let mut fmt = Formatter::new(netlens::capture::HOST);
    let mut body = |frame: &[u8], cut: usize| {
        let mut line = String::new();
        fmt.body(1, &frame[..cut], frame.len() as u32, &mut line);
        line
    };
    let syn = &frames[0].1;
    let ack = &frames[1].1;
    // (frame, cut, the line from its options on), as tcpdump 4.99 prints it.
    let cases = [
        // mss, the first option, cut in its value: no option before, no '>'.
        (syn, 57, "options [mss [|tcp]"),
        // The next option's length byte missing: read field by field, no '>'.
        (syn, 59, "options [mss 1460, [|tcp]"),
        (syn, 64, "options [mss 1460,sackOK,TS [|tcp]>"),
        (
            syn,
            73,
            "options [mss 1460,sackOK,TS val 1 ecr 0,nop,wscale [|tcp]>",
        ),
        (ack, 60, "options [nop,nop,sack 2  [|tcp]>"),
        (ack, 70, "options [nop,nop,sack 2 {3096:7192} [|tcp]>"),
        (
            ack,
            77,
            "options [nop,nop,sack 2 {3096:7192}{11288:15384},unknown-99 0xab [|tcp]>",
        ),
        (
            ack,
            82,
            "options [nop,nop,sack 2 {3096:7192}{11288:15384},unknown-99 0xabcd,tfo [|tcp]>",
        ),
    ];
    for (frame, cut, want) in cases {
        let line = body(frame, cut);
        let got = line.find("options").map_or(line.as_str(), |i| &line[i..]);
        assert_eq!(got, want, "cut at {cut}");
    }
}

/// IPv6 with a payload length of 0 (a Jumbo Payload, or a broken header):
/// tcpdump walks the extension headers looking for the Jumbo option, then
/// treats the packet as its 40-byte header. Each line as tcpdump 4.99
/// prints it, and, where tcpdump is installed, compared with it.
#[test]
fn ipv6_payload_length_zero_prints_like_tcpdump() {
    super::cap();
    fn v6(next: u8, payload_length: u16, payload: &[u8]) -> Vec<u8> {
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        frame.extend_from_slice(&payload_length.to_be_bytes());
        frame.extend_from_slice(&[next, 64]);
        for last in [1u8, 2] {
            let addr: std::net::Ipv6Addr = format!("2001:db8::{last}").parse().unwrap();
            frame.extend_from_slice(&addr.octets());
        }
        frame.extend_from_slice(payload);
        frame
    }
    let echo: &[u8] = &[128, 0, 0, 0, 0, 1, 0, 2, b'a', b'b', b'c', b'd', 1, 2, 3, 4];
    let udp: &[u8] = &[0x9c, 0x40, 0, 53, 0, 12, 0, 0, 0, 1, 0, 0];
    let tcp: &[u8] = &[
        0x9c, 0x40, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 2, 0, 0, 0, 0, 0,
    ];
    let options = |next: u8, option: &[u8]| [&[next, 0][..], option, echo].concat();
    let padn: &[u8] = &[1, 4, 0, 0, 0, 0];
    let jumbo = |value: u32| [&[0xc2, 4][..], &value.to_be_bytes()].concat();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (v6(58, 0, echo), "ICMP6, length 0 (invalid)"),
        (v6(17, 0, udp), " [|udp]"),
        (v6(6, 0, tcp), "[|tcp]"),
        (
            v6(0, 0, &options(58, padn)),
            "HBH [No valid Jumbo Payload Hop-by-Hop option found] (invalid)",
        ),
        (
            v6(0, 0, &options(58, &jumbo(100))),
            "HBH [No valid Jumbo Payload Hop-by-Hop option found] (invalid)",
        ),
        (
            v6(0, 0, &options(58, &jumbo(70_000))),
            "HBH truncated-ip6 - 69976 bytes missing!ICMP6, echo request, id 1, seq 2, \
             length 69992",
        ),
        (v6(60, 0, &options(58, padn)), "DSTOPT  [|ip6]"),
        (v6(59, 0, &[]), "no next header"),
        (
            v6(58, echo.len() as u16, echo),
            "ICMP6, echo request, id 1, seq 2, length 16",
        ),
    ];
    let file = std::env::temp_dir().join(format!("netlens-v6-plen0-{}.pcap", std::process::id()));
    let mut writer = PcapFileWriter::create(&file, 1, 65535).unwrap();
    let mut ours = Vec::new();
    for (i, (frame, want)) in cases.iter().enumerate() {
        let ts = Timestamp {
            sec: 1_700_000_000 + i as i64,
            frac: 0,
            nanos: false,
        };
        writer.write(ts, frame.len() as u32, frame).unwrap();
        let mut line = String::new();
        Formatter::new(netlens::capture::HOST).line(1, ts, frame, frame.len() as u32, &mut line);
        let body = &line[16..];
        assert_eq!(
            body,
            format!("IP6 2001:db8::1 > 2001:db8::2: {want}"),
            "{line}"
        );
        ours.push(line);
    }
    let Some(theirs) = tcpdump_reads_back(writer, &file) else {
        return;
    };
    assert_eq!(theirs.len(), ours.len(), "{theirs:#?}");
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o.get(15..), t.get(15..), "netlens: {o}\ntcpdump: {t}");
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
    let mut writer = PcapFileWriter::create(&file, 1, 65535).unwrap();
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

/// Issue 25's malformed-packet kinds that printed differently from tcpdump:
/// each frame's line (first line) as netlens prints it, then, where tcpdump
/// is installed, every line compared with `tcpdump -n -r`.
fn prints_like_tcpdump(tag: &str, cases: &[(Vec<u8>, &str)]) {
    let file = std::env::temp_dir().join(format!("netlens-{tag}-{}.pcap", std::process::id()));
    let mut writer = PcapFileWriter::create(&file, 1, 65535).unwrap();
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
