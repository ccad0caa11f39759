//! Crafted packets (pnet builders) cut at every length, options cut inside
//! their value, IPv6 with a payload length of 0: each ends like tcpdump.

use super::*;

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

#[test]
fn crafted_packets_cut_at_every_length_end_like_tcpdump() {
    super::cap();
    let dir = std::env::temp_dir();
    let file = dir.join(format!("netlens-cuts-{}.pcap", std::process::id()));
    let mut writer = PcapFileWriter::create(&file, FileLayout::pcap(1, 65535)).unwrap();
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
    let mut writer = PcapFileWriter::create(&file, FileLayout::pcap(1, 65535)).unwrap();
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
