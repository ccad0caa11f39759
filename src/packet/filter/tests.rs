use super::*;

/// Deep nesting is an error, not a stack overflow, wherever it nests;
/// the limit itself still parses (and matches, walking the tree).
#[test]
fn nesting_and_length_are_limited() {
    let deep = MAX_FILTER_DEPTH + 1;
    for text in [
        format!("{}tcp{}", "(".repeat(deep), ")".repeat(deep)),
        format!("{}tcp", "not ".repeat(deep)),
        format!("{}tcp", "!".repeat(deep)),
        format!("len = {}1", "- ".repeat(deep)),
        format!("len = {}1{}", "(".repeat(deep), ")".repeat(deep)),
        format!("{}0{} = 0", "tcp[".repeat(deep), "]".repeat(deep)),
        // As in the issue: far deeper than any stack would take.
        format!("{}tcp{}", "(".repeat(15_000), ")".repeat(15_000)),
        "not ".repeat(20_000) + "tcp",
    ] {
        let error = Filter::parse(&text).map(|_| ()).unwrap_err().to_string();
        assert!(
            error.contains("nested more than 100 levels") || error.contains("over the limit"),
            "{error}"
        );
    }
    let ok = MAX_FILTER_DEPTH - 1;
    let text = format!("{}tcp{}", "(".repeat(ok), ")".repeat(ok));
    assert!(Filter::parse(&text).is_ok());
    let text = format!("{}tcp", "not ".repeat(ok));
    assert!(Filter::parse(&text).is_ok());
    let long = "ip or ".repeat(MAX_FILTER_LEN / 6 + 1) + "tcp";
    let error = Filter::parse(&long).map(|_| ()).unwrap_err().to_string();
    assert!(error.contains("over the limit of 4096"), "{error}");
    // The longest chain that fits walks fine on a small thread stack
    // (the capture threads').
    let chain = "ip||".repeat((MAX_FILTER_LEN - 2) / 4) + "ip";
    let filter = Filter::parse(&chain).unwrap();
    let frame = [0u8; 64];
    let s = Summary::default();
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            filter.matches(&s, &frame);
            drop(filter);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn errors_name_the_position() {
    let e = Filter::parse("tcp and port 99999").unwrap_err();
    assert_eq!(e.position, 13);
    assert!(e.to_string().contains("character 14"), "{e}");
    let e = Filter::parse("host").unwrap_err();
    assert!(e.message.contains("needs a value"), "{e}");
    let e = Filter::parse("tcp and (port 80").unwrap_err();
    assert!(e.to_string().contains("filter error"), "{e}");
    assert!(Filter::parse("frobnicate").is_err());
    assert!(Filter::parse("tcp[13] & 2 !=").is_err());
    assert!(Filter::parse("port 80 $").is_err());
}

/// BPF semantics: a load past the captured bytes rejects the packet
/// whatever comes after it, but not a branch decided before it.
#[test]
fn a_load_past_the_capture_rejects_the_packet() {
    // Ethernet + IPv4 (TCP) cut after 24 bytes: the protocol byte is
    // there, the IPv4 header's end and the ports are not.
    let mut frame = vec![0u8; 12];
    frame.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6]);
    let cut = &frame[..24];
    let s = crate::packet::decode::summarize(1, cut, 54);
    let pass = |text: &str| Filter::parse(text).unwrap().matches(&s, cut);
    assert!(pass("tcp"));
    assert!(pass("ip[0] >> 4 = 4 and 1 << 2 = 4"));
    assert!(pass("less 60"));
    assert!(pass("less 60 or tcp[13] & 2 != 0"));
    assert!(!pass("tcp[13] & 2 != 0 or less 60"));
    assert!(!pass("not port 53"));
    assert!(!pass("not host 198.18.0.1"));
    // An IPv6 address never looks into an IPv4 packet.
    assert!(pass("not host 2001:db8::1"));
}

/// tcp[], udp[] and icmp[] are IPv4 only in libpcap; icmp6[] needs
/// ICMPv6 as the first next header.
#[test]
fn transport_loads_follow_libpcap() {
    let mut frame = vec![0u8; 12];
    frame.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0, 0, 20, 6, 64]);
    frame.extend_from_slice(&[0; 32]);
    frame.extend_from_slice(&[0; 20]);
    frame[14 + 40 + 13] = 0x02; // SYN
    let s = crate::packet::decode::summarize(1, &frame, frame.len() as u32);
    let pass = |text: &str| Filter::parse(text).unwrap().matches(&s, &frame);
    assert!(pass("tcp"));
    assert!(pass("ip6 and tcp"));
    assert!(!pass("tcp[13] & 2 != 0"));
    assert!(!pass("tcp[tcpflags] & tcp-syn != 0"));
}

#[test]
fn and_and_or_bind_equally_left_to_right_as_in_libpcap() {
    let root = |text: &str| Filter::parse(text).unwrap().root;
    assert_eq!(
        root("tcp or udp and port 53"),
        root("(tcp or udp) and port 53")
    );
    assert_eq!(
        root("tcp and udp or port 53"),
        root("(tcp and udp) or port 53")
    );
    assert_ne!(
        root("tcp or udp and port 53"),
        root("tcp or (udp and port 53)")
    );
    // not binds tighter than either.
    assert_eq!(root("not tcp or udp"), root("(not tcp) or udp"));
}

#[test]
fn grammar_accepts_the_documented_forms() {
    for text in [
        "",
        "tcp",
        "host 198.18.0.1",
        "src host 198.18.0.1 and dst host 198.18.0.2",
        "net 198.18.0.0/15",
        "tcp port 9000",
        "udp and src port 53",
        "portrange 1-1024",
        "tcp[tcpflags] & (tcp-syn) != 0",
        "tcp[13] & 2 != 0",
        "less 100 or greater 1000",
        "not (arp or icmp) and ip6",
        "host 198.18.0.1 or 198.18.0.2",
        "ip6 host ::1",
        "icmp[icmptype] = icmp-echo",
        "ip[2:2] > 576",
    ] {
        Filter::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}
