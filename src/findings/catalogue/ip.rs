//! Ip (/proc/net/snmp), IpExt (/proc/net/netstat) and Ip6 (/proc/net/snmp6).

use super::Entry;

pub const IP: &[Entry] = &[
    entry!(
        "Ip.InHdrErrors",
        Snmp,
        Warn,
        1.0,
        [IP_INHDR, IP_CSUM],
        None,
        "IPv4 packets dropped for a bad header: version, length, checksum, options, TTL",
        "corrupted frames, a broken sender or a TTL that ran out: check rx_crc_errors, capture the senders"
    ),
    entry!(
        "Ip.InAddrErrors",
        Snmp,
        Warn,
        1.0,
        [IP_INADDRERRORS, IP_INVALID_DEST],
        None,
        "IPv4 packets dropped for an invalid destination address (martian, not for this host)",
        "traffic for an address this host does not have: check `ip addr` and who sends it"
    ),
    entry!(
        "Ip.InUnknownProtos",
        Snmp,
        Warn,
        1.0,
        [IP_NOPROTO],
        None,
        "IPv4 packets for a protocol nothing here handles",
        "a tunnel (GRE, IPIP, SCTP) whose module is not loaded, or a scan"
    ),
    entry!(
        "Ip.InDiscards",
        Snmp,
        Warn,
        1.0,
        [NOMEM],
        None,
        "IPv4 packets received fine but discarded (no memory, no buffer)",
        "memory pressure on this host: check free memory and vm.min_free_kbytes"
    ),
    entry!(
        "Ip.OutDiscards",
        Snmp,
        Warn,
        1.0,
        [NOMEM, BPF_CGROUP_EGRESS],
        None,
        "IPv4 packets to send discarded (no memory, a cgroup BPF program)",
        "memory pressure or an egress filter: check cgroup BPF programs (`bpftool cgroup tree`)"
    ),
    entry!(
        "Ip.OutNoRoutes",
        Snmp,
        Warn,
        1.0,
        [IP_OUTNOROUTES],
        None,
        "IPv4 packets dropped: no route to their destination",
        "a missing route or default gateway: `ip route get DEST`, check the routing table"
    ),
    entry!(
        "Ip.ReasmTimeout",
        Snmp,
        Warn,
        1.0,
        [FRAG_REASM_TIMEOUT],
        None,
        "fragment reassemblies that timed out: a fragment was lost",
        "fragments lost on the path: avoid fragmentation (path MTU, smaller UDP payloads)"
    ),
    entry!(
        "Ip.ReasmFails",
        Snmp,
        Warn,
        1.0,
        [FRAG_REASM_TIMEOUT, DUP_FRAG, FRAG_TOO_FAR, NOMEM],
        None,
        "fragment reassemblies that failed (timeout, overlap, too far, memory)",
        "lost or bad fragments; raise net.ipv4.ipfrag_high_thresh if memory, avoid fragmentation"
    ),
    entry!(
        "Ip.FragFails",
        Snmp,
        Warn,
        1.0,
        [PKT_TOO_BIG],
        None,
        "IPv4 packets too big to send that could not be fragmented (DF set)",
        "an MTU smaller than the sender assumes: check the interface MTU and that ICMP frag-needed gets through"
    ),
];

pub const IP_EXT: &[Entry] = &[
    entry!(
        "IpExt.InNoRoutes",
        Netstat,
        Warn,
        1.0,
        [IP_INNOROUTES],
        None,
        "IPv4 packets received that could not be routed",
        "forwarding without a route to the destination: `ip route get DEST`"
    ),
    entry!(
        "IpExt.InTruncatedPkts",
        Netstat,
        Warn,
        1.0,
        [PKT_TOO_SMALL],
        None,
        "IPv4 packets shorter than their header says",
        "corruption on the link or a broken sender: check rx_crc_errors"
    ),
    entry!(
        "IpExt.InCsumErrors",
        Netstat,
        Warn,
        1.0,
        [IP_CSUM],
        None,
        "IPv4 packets with a bad header checksum",
        "corruption on the path or a NIC offload bug: check rx_crc_errors, `ethtool -K IF rx off`"
    ),
    entry!(
        "IpExt.InCEPkts",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "IPv4 packets received with an ECN congestion mark",
        "a congested queue on the path marks instead of dropping: normal with ECN"
    ),
    entry!(
        "IpExt.ReasmOverlaps",
        Netstat,
        Warn,
        0.0,
        [DUP_FRAG],
        None,
        "fragments dropped because they overlapped others",
        "a fragment attack or a broken sender: capture the fragments"
    ),
];

pub const IP6: &[Entry] = &[
    entry!(
        "Ip6.InHdrErrors",
        Snmp6,
        Warn,
        1.0,
        [IP_INHDR, IPV6_BAD_EXTHDR],
        None,
        "IPv6 packets dropped for a bad header or extension header, or hop limit exceeded",
        "a broken sender or a routing loop: capture the senders"
    ),
    entry!(
        "Ip6.InTooBigErrors",
        Snmp6,
        Warn,
        1.0,
        [PKT_TOO_BIG],
        None,
        "IPv6 packets to forward that exceeded the next link's MTU",
        "a smaller MTU on the path: make sure ICMPv6 Packet Too Big gets back to senders"
    ),
    entry!(
        "Ip6.InNoRoutes",
        Snmp6,
        Warn,
        1.0,
        [IP_INNOROUTES],
        None,
        "IPv6 packets received that could not be routed",
        "a missing IPv6 route: `ip -6 route get DEST`"
    ),
    entry!(
        "Ip6.InAddrErrors",
        Snmp6,
        Warn,
        1.0,
        [IP_INADDRERRORS],
        None,
        "IPv6 packets dropped for an invalid destination address",
        "traffic for an address this host does not have: check `ip -6 addr`"
    ),
    entry!(
        "Ip6.InUnknownProtos",
        Snmp6,
        Warn,
        1.0,
        [IP_NOPROTO],
        None,
        "IPv6 packets for a next header nothing here handles",
        "a tunnel whose module is not loaded, or a scan"
    ),
    entry!(
        "Ip6.InTruncatedPkts",
        Snmp6,
        Warn,
        1.0,
        [PKT_TOO_SMALL],
        None,
        "IPv6 packets shorter than their header says",
        "corruption on the link or a broken sender"
    ),
    entry!(
        "Ip6.InDiscards",
        Snmp6,
        Warn,
        1.0,
        [NOMEM, IPV6DISABLED],
        None,
        "IPv6 packets discarded on input (IPv6 disabled on the interface, no memory)",
        "IPv6 disabled on the receiving interface (net.ipv6.conf.IF.disable_ipv6) or memory pressure"
    ),
    entry!(
        "Ip6.OutDiscards",
        Snmp6,
        Warn,
        1.0,
        [NOMEM, IPV6DISABLED, BPF_CGROUP_EGRESS],
        None,
        "IPv6 packets to send discarded (IPv6 disabled, no memory, an egress filter)",
        "check net.ipv6.conf.IF.disable_ipv6 and cgroup BPF programs"
    ),
    entry!(
        "Ip6.OutNoRoutes",
        Snmp6,
        Warn,
        1.0,
        [IP_OUTNOROUTES],
        None,
        "IPv6 packets dropped: no route to their destination",
        "a missing IPv6 default route: `ip -6 route get DEST`"
    ),
    entry!(
        "Ip6.ReasmTimeout",
        Snmp6,
        Warn,
        1.0,
        [FRAG_REASM_TIMEOUT],
        None,
        "IPv6 reassemblies that timed out: a fragment was lost",
        "avoid fragmentation (smaller UDP payloads, path MTU)"
    ),
    entry!(
        "Ip6.ReasmFails",
        Snmp6,
        Warn,
        1.0,
        [FRAG_REASM_TIMEOUT, DUP_FRAG, FRAG_TOO_FAR, NOMEM],
        None,
        "IPv6 reassemblies that failed",
        "lost or bad fragments; raise net.ipv6.ip6frag_high_thresh if memory"
    ),
    entry!(
        "Ip6.FragFails",
        Snmp6,
        Warn,
        1.0,
        [PKT_TOO_BIG],
        None,
        "IPv6 packets that could not be fragmented to send",
        "a payload bigger than the MTU on a socket that forbids fragmenting: check the MTU"
    ),
    entry!(
        "Ip6.InCEPkts",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "IPv6 packets received with an ECN congestion mark",
        "a congested queue on the path marks instead of dropping: normal with ECN"
    ),
];
