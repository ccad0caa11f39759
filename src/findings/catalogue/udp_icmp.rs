//! Udp, UdpLite (/proc/net/snmp), Udp6, UdpLite6 (/proc/net/snmp6), Icmp
//! and Icmp6.

use super::Entry;

/// The same seven UDP failure counters of one group.
macro_rules! udp {
    ($group:literal, $source:ident) => {
        [
            entry!(concat!($group, ".NoPorts"), $source, Warn, 5.0, [NO_SOCKET], None,
                "datagrams to a port where nothing listens (answered with ICMP port unreachable)",
                "a client sends to a closed port: a service is down or a client misconfigured; `ss -uln` lists the bound ports"),
            entry!(concat!($group, ".InErrors"), $source, Warn, 1.0, [SOCKET_RCVBUFF, UDP_CSUM, PROTO_MEM, SOCKET_FILTER], Some("udp-drops"),
                "datagrams not delivered: receive buffer full, bad checksum, memory or a socket filter",
                "see RcvbufErrors, InCsumErrors and MemErrors to tell which"),
            entry!(concat!($group, ".RcvbufErrors"), $source, Warn, 1.0, [SOCKET_RCVBUFF], Some("udp-drops"),
                "datagrams dropped because the socket's receive buffer was full",
                "the application reads too slowly: raise SO_RCVBUF (and net.core.rmem_max), add readers (SO_REUSEPORT)"),
            entry!(concat!($group, ".SndbufErrors"), $source, Warn, 1.0, [], None,
                "datagrams not sent: the socket's send buffer or the device queue was full",
                "sending faster than the link or qdisc drains: raise SO_SNDBUF (net.core.wmem_max), check `tc -s qdisc`"),
            entry!(concat!($group, ".InCsumErrors"), $source, Warn, 1.0, [UDP_CSUM], None,
                "datagrams dropped for a bad UDP checksum",
                "corruption on the path or a NIC offload bug: check rx_crc_errors"),
            entry!(concat!($group, ".MemErrors"), $source, Crit, 0.0, [PROTO_MEM], None,
                "datagrams dropped because UDP memory (net.ipv4.udp_mem) was exhausted",
                "raise net.ipv4.udp_mem or find the sockets with full receive queues"),
            entry!(concat!($group, ".IgnoredMulti"), $source, Info, 0.0, [], None,
                "broadcast or multicast datagrams no socket wanted",
                "normal on a shared LAN"),
        ]
    };
}

pub const UDP: [Entry; 7] = udp!("Udp", Snmp);
pub const UDP_LITE: [Entry; 7] = udp!("UdpLite", Snmp);
pub const UDP6: [Entry; 7] = udp!("Udp6", Snmp6);
pub const UDP_LITE6: [Entry; 7] = udp!("UdpLite6", Snmp6);

pub const ICMP: &[Entry] = &[
    entry!(
        "Icmp.InErrors",
        Snmp,
        Warn,
        1.0,
        [ICMP_CSUM],
        None,
        "ICMP messages received with an error (bad checksum, too short)",
        "corruption on the path or malformed ICMP: capture `icmp`"
    ),
    entry!(
        "Icmp.InCsumErrors",
        Snmp,
        Warn,
        1.0,
        [ICMP_CSUM],
        None,
        "ICMP messages with a bad checksum",
        "corruption on the path: check rx_crc_errors"
    ),
    entry!(
        "Icmp.OutErrors",
        Snmp,
        Warn,
        1.0,
        [],
        None,
        "ICMP messages that could not be sent",
        "memory or routing trouble on this host: check Ip.OutNoRoutes"
    ),
    entry!(
        "Icmp.OutRateLimitGlobal",
        Snmp,
        Warn,
        10.0,
        [],
        None,
        "ICMP messages not sent: the host-wide limit net.ipv4.icmp_msgs_per_sec was hit",
        "a flood to closed ports or unreachable hosts makes many errors: find its source, or raise icmp_msgs_per_sec"
    ),
    entry!(
        "Icmp.OutRateLimitHost",
        Snmp,
        Warn,
        10.0,
        [],
        None,
        "ICMP messages not sent: the per-destination limit net.ipv4.icmp_ratelimit was hit",
        "one peer triggers many errors (closed port, no route): find it in Flows"
    ),
    entry!(
        "Icmp.InDestUnreachs",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "destination unreachable received: a peer or router says a port or host cannot be reached",
        "a rise means this host talks to closed ports or dead hosts: capture `icmp` to see which"
    ),
    entry!(
        "Icmp.InTimeExcds",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "time exceeded received: a TTL ran out (traceroute, or a routing loop)",
        "a rise without traceroute means a routing loop on the path"
    ),
    entry!(
        "Icmp.InParmProbs",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "parameter problem received: a router rejected a header we sent",
        "capture `icmp` to see which packets"
    ),
    entry!(
        "Icmp.InSrcQuenchs",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "source quench received (obsolete)",
        "nothing to change"
    ),
    entry!(
        "Icmp.InRedirects",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "redirects received: a router says another gateway is better",
        "fix the routes so the first hop is right; net.ipv4.conf.all.accept_redirects controls them"
    ),
    entry!(
        "Icmp.OutDestUnreachs",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "destination unreachable sent: mostly port unreachable for Udp.NoPorts",
        "see Udp.NoPorts and Ip.OutNoRoutes"
    ),
    entry!(
        "Icmp.OutTimeExcds",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "time exceeded sent: packets forwarded here ran out of TTL",
        "a routing loop through this host, or traceroutes"
    ),
    entry!(
        "Icmp.OutParmProbs",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "parameter problem sent for bad headers received",
        "see Ip.InHdrErrors"
    ),
    entry!(
        "Icmp.OutSrcQuenchs",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "source quench sent (obsolete)",
        "nothing to change"
    ),
    entry!(
        "Icmp.OutRedirects",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "redirects sent: this router forwards out the interface the packet came in on",
        "hosts use this router for a route another gateway has: fix their routes or set send_redirects=0"
    ),
];

pub const ICMP6: &[Entry] = &[
    entry!(
        "Icmp6.InErrors",
        Snmp6,
        Warn,
        1.0,
        [ICMP_CSUM],
        None,
        "ICMPv6 messages received with an error",
        "corruption or malformed ICMPv6: capture `icmp6`"
    ),
    entry!(
        "Icmp6.OutErrors",
        Snmp6,
        Warn,
        1.0,
        [],
        None,
        "ICMPv6 messages that could not be sent",
        "memory or routing trouble on this host: check Ip6.OutNoRoutes"
    ),
    entry!(
        "Icmp6.InCsumErrors",
        Snmp6,
        Warn,
        1.0,
        [ICMP_CSUM],
        None,
        "ICMPv6 messages with a bad checksum",
        "corruption on the path: check rx_crc_errors"
    ),
    entry!(
        "Icmp6.OutRateLimitHost",
        Snmp6,
        Warn,
        10.0,
        [],
        None,
        "ICMPv6 messages not sent: the per-destination limit net.ipv6.icmp.ratelimit was hit",
        "one peer triggers many errors (closed port, no route): find it in Flows"
    ),
    entry!(
        "Icmp6.InDestUnreachs",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "destination unreachable received",
        "a rise means this host talks to closed ports or dead hosts: capture `icmp6`"
    ),
    entry!(
        "Icmp6.InPktTooBigs",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "packet too big received: path MTU discovery at work",
        "normal; many for one peer mean a small MTU on its path"
    ),
    entry!(
        "Icmp6.InTimeExcds",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "time exceeded received: a hop limit ran out",
        "a rise without traceroute means a routing loop"
    ),
    entry!(
        "Icmp6.InParmProblems",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "parameter problem received",
        "capture `icmp6` to see which packets"
    ),
    entry!(
        "Icmp6.InRedirects",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "redirects received",
        "fix the routes so the first hop is right"
    ),
    entry!(
        "Icmp6.OutDestUnreachs",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "destination unreachable sent",
        "see Udp6.NoPorts and Ip6.OutNoRoutes"
    ),
    entry!(
        "Icmp6.OutPktTooBigs",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "packet too big sent: this router forwards onto a smaller MTU",
        "normal at an MTU boundary"
    ),
    entry!(
        "Icmp6.OutTimeExcds",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "time exceeded sent",
        "a routing loop through this host, or traceroutes"
    ),
    entry!(
        "Icmp6.OutParmProblems",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "parameter problem sent",
        "see Ip6.InHdrErrors"
    ),
    entry!(
        "Icmp6.OutRedirects",
        Snmp6,
        Info,
        0.0,
        [],
        None,
        "redirects sent",
        "hosts use this router for a route another gateway has"
    ),
];
