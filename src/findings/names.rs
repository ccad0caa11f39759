//! What netlens names: every finding id with what it means, its evidence
//! and its fix. Pure data (no imports): build.rs includes this file to
//! render the man page's FINDINGS, and docs/findings.md's table is
//! generated from it too (tests/docs/readme.rs keeps it fresh), so the
//! two cannot drift. A test in src/findings/mod.rs checks that every id
//! `findings::evaluate` can raise is here. Plain text: the renderers escape.

/// One finding: its id (the JSON contract), what it means (with the
/// default thresholds), the evidence it names, the fix it suggests.
pub struct Entry {
    pub id: &'static str,
    pub means: &'static str,
    pub evidence: &'static str,
    pub fix: &'static str,
}

pub const NAMES: &[Entry] = &[
    Entry {
        id: "iface-errors",
        means: "An interface's errors, drops, overruns, carrier errors or collisions rose during the interval.",
        evidence: "the interface row; the kinds of error with their rates per second.",
        fix: "the usual cause and the command to look further: cabling and duplex, ethtool -S, the rx ring (ethtool -G) or net.core.netdev_max_backlog (live value), tc -s qdisc.",
    },
    Entry {
        id: "iface-saturated",
        means: "An interface ran at 80% (warn) or 95% (crit) of its link speed, by sar's %ifutil. Virtual devices (veth, bridge, dummy, tun, tunnels, loopback: by link kind) have no link speed; their drops raise iface-errors, which then says so. A device without a link speed (virtual, or its driver does not say) is judged by its root qdisc instead, as tc -s qdisc show dev IF shows it: it is saturated when the qdisc drops packets (crit; over qdisc_drop_per_s) or holds a standing backlog of at least qdisc_backlog_packets in two samples in a row (warn).",
        evidence: "the interface row; %util and direction, or the qdisc's drops per second and backlog.",
        fix: "find the top talkers in Flows, shape or move traffic, a faster or bonded link; without a link speed, the qdisc and what limits it (txqueuelen, or the qdisc's rate or limit).",
    },
    Entry {
        id: "conntrack-full",
        means: "The conntrack table is nearly full: nf_conntrack_count is at least 80% of nf_conntrack_max (warn) or 95% (crit), or early_drop rose (the kernel is evicting entries to make room: crit); nearly full while drop rises is crit too. New connections are dropped once it is full.",
        evidence: "the Conntrack tab; count, max and the drop counters.",
        fix: "raise net.netfilter.nf_conntrack_max from its value to twice it and the hash size (nf_conntrack_buckets, to about the new max/4), shorten the timeouts, or stop tracking stateless traffic with a NOTRACK rule.",
    },
    Entry {
        id: "conntrack-drops",
        means: "Conntrack dropped packets during the interval: its drop or insert_failed counters rose (any rise counts).",
        evidence: "the Conntrack tab's counters.",
        fix: "a full table, insert races (UDP DNS queries sent in parallel from one socket), or conntrack -S and the kernel log.",
    },
    Entry {
        id: "small-packet-flood",
        means: "Captured traffic ran at 10,000 packets/s or more (crit from 100,000) with a mean packet under 100 bytes: the SYN-flood signature sar -n DEV shows as high rxpck/s with low rxkB/s. Live, it is a warning only when the stack shows a flood's harm over the same interval (TcpExt ListenOverflows, ListenDrops, SyncookiesSent or TCPReqQFullDrop, Udp NoPorts, RcvbufErrors or InErrors rising); else it is information, a busy host's many short connections or small requests. netlens read --flows reports it for a file, from the packets alone.",
        evidence: "the capture (Flows tab): packets/s and the mean size.",
        fix: "check SYN_RECV in TCP, tcp_syncookies (live value), rate-limit the source.",
    },
    Entry {
        id: "syn-flood",
        means: "256 or more sockets in SYN_RECV, or SYN_RECV growing by 100/s or more, or 100 syncookies/s or more sent (with syncookies off: SYNs dropped for a full SYN queue, TcpExt TCPReqQFullDrop, count as cookies would). Crit when tcp_syncookies is 0 or TCPReqQFullDrop rises.",
        evidence: "the TCP tab's SYN_RECV row; the top source addresses of the SYN_RECV sockets and the busiest interface receiving 100 pkt/s or more of packets averaging 128 bytes or less.",
        fix: "by the knobs' live values: turn syncookies on when they are off; once on, raise tcp_max_syn_backlog (to twice its value), the flooded listener's listen() backlog or net.core.somaxconn when that caps it, lower tcp_synack_retries when above 2, and rate-limit SYNs from the top source.",
    },
    Entry {
        id: "listen-overflow",
        means: "A listener's accept queue is full (Recv-Q above its backlog, the Send-Q of a LISTEN socket) or TcpExt ListenOverflows rose.",
        evidence: "the listener in Sockets, its process and its backlog (or the ListenOverflows counter).",
        fix: "fix the slow accept, or raise the listen() backlog while net.core.somaxconn allows more, or somaxconn once it is the cap (live values).",
    },
    Entry {
        id: "socket-backlog",
        means: "An established socket's Recv-Q or Send-Q stayed non-empty without progress for 3 samples in a row: the application read nothing of its Recv-Q, or the peer acknowledged nothing of its Send-Q. A busy transfer whose queues move never counts. Such sockets are marked STUCK in the Sockets tab.",
        evidence: "the socket in Sockets, its process, the queue and for how many samples.",
        fix: "a stuck Recv-Q: the process does not read (blocked, busy, deadlocked: strace/perf); a stuck Send-Q: the peer or the path takes no data.",
    },
    Entry {
        id: "retransmits",
        means: "Host level: retransmitted segments reached 2% (warn) or 10% (crit) of the segments sent over the interval, while at least 50 segments/s were sent. Flow level: a TCP flow sent data it had already sent; netlens read --flows --json lists it in the flow's findings, with the retransmission timeout and backoff.",
        evidence: "the TCP tab's RetransSegs row (host), or the flow.",
        fix: "packet loss or congestion on the path: interface drops and errors, ss -ti for the sockets with retrans, the path with mtr.",
    },
    Entry {
        id: "dns-timeout",
        means: "DNS queries went unanswered in the last window (probes, or queries seen on the wire after the client's timeout: --dns-timeout, else resolv.conf's options timeout, else 5 s); crit when every query to that server went unanswered. The window is twice the timeout plus the interval, at least 10 s, so a server that only times out (one result per timeout) keeps the finding between its timeouts; a replay, which has each interval's results only, judges each interval alone.",
        evidence: "the DNS tab: the server and the names, a reverse lookup as PTR 198.18.0.9.",
        fix: "the server or the path to it; for PTR the classic stall (tools that reverse-resolve every address wait the timeout for each): add the PTR records, answer NXDOMAIN, or use -n. For a nameserver of /etc/resolv.conf the fix names its place in the list and the options timeout, attempts and rotate in force: a dead first server costs every lookup its timeout unless rotate spreads them.",
    },
    Entry {
        id: "dns-slow",
        means: "A server's p90 answer latency over the same window reached 100 ms (warn) or 1000 ms (crit), from at least 1 answer (dns_slow_p90_ms; crit is 10 times it).",
        evidence: "the DNS tab: the server and its slowest name.",
        fix: "a closer resolver or a local cache such as dnsmasq or systemd-resolved.",
    },
    Entry {
        id: "nagle-delayed-ack",
        means: "A TCP flow shows the Nagle + delayed ACK stall at least twice: one side sent a small segment, the peer acknowledged everything only 30-250 ms later with a pure ACK (its delayed ACK; 40 ms minimum on Linux), and within 5 ms of that ACK the first side sent its next small segment (the write Nagle's algorithm held).",
        evidence: "the flow; the side that held its writes and the gaps (range, mean, the first eight).",
        fix: "TCP_NODELAY on the sender (or one write per response), or TCP_QUICKACK on the receiver.",
    },
    Entry {
        id: "zero-window",
        means: "A TCP flow's receiver advertised a zero window: its application is not reading.",
        evidence: "the flow; the receiver, how often the window closed and for how long in all.",
        fix: "the receiving application: it does not read its socket fast enough.",
    },
    Entry {
        id: "syn-unanswered",
        means: "A SYN was sent at least twice (retransmitted) and the other side never sent a packet.",
        evidence: "the flow.",
        fix: "a firewall drops it, a route is missing or the host is down (a closed port would answer RST).",
    },
    Entry {
        id: "rst-after-data",
        means: "A TCP connection was reset after data had flowed (info: often an aborting application or a middlebox timeout).",
        evidence: "the flow; the side that sent the RST and the bytes before it.",
        fix: "the application that aborts (SO_LINGER 0, closing with unread data) or the middlebox's idle timeout.",
    },
    Entry {
        id: "close-wait",
        means: "A process does not close connections its peers closed: its sockets on one local port pile up in CLOSE_WAIT (the peer's FIN arrived, the application never called close()). Only sockets already in CLOSE_WAIT the sample before count (a close in progress does not); 64 or more of one process on one port warn, 512 or more are crit, and 8 or more warn while their count grows.",
        evidence: "the process (pid and command), the count and its growth per second (\"PID 2231 (java) holds 950 sockets in CLOSE_WAIT on :8443, +3.0/s\"); Enter shows them: the Sockets tab filtered to close-wait pid=N :PORT.",
        fix: "the application's connection handling (close after read returns 0 or an error; a pool that drops dead connections), not a sysctl.",
    },
    Entry {
        id: "port-exhaustion",
        means: "A client is running out of ephemeral ports towards one destination: its TCP sockets from one local address to one destination ip:port (TIME_WAIT included; not when tcp_tw_reuse lets connect() reuse those: 1, or 2 on loopback) reached 80% (warn) or 95% (crit) of the size of net.ipv4.ip_local_port_range. connect() to it then fails with EADDRNOTAVAIL, which no counter records, so the socket table is the evidence. Only sockets whose local port is in the range count (a server's accepted sockets use its listening port).",
        evidence: "the destination, the count, how many are in TIME_WAIT, the range and the process holding the open ones; Enter: the Sockets tab filtered to LOCAL DESTINATION.",
        fix: "reuse connections (keep-alive, a pool), tcp_tw_reuse=1 (with its live value), a wider range, more destination addresses or ports.",
    },
    Entry {
        id: "connect-timeout",
        means: "Connects whose SYN goes unanswered (no SYN-ACK, no RST): 2 or more (warn) or 20 or more (crit) sockets in SYN_SENT towards one destination whose SYN the kernel already retransmitted (tcp_info's total_retrans, ss -ti's retrans:X/Y), so each has waited at least the initial 1 s RTO.",
        evidence: "the destination, how many connects and processes wait (pid and command), the most SYNs one has sent, and TcpExt TCPSynRetrans per second; Enter: the Sockets tab filtered to syn-sent DESTINATION. (With capture on, the flow finding syn-unanswered may name the same connects from the packets.)",
        fix: "a firewall dropping SYNs, a dead host or a routing hole on the way to that destination (a closed port would answer RST).",
    },
    Entry {
        id: "udp-drops",
        means: "A UDP socket drops datagrams because its receive buffer is full: its own drop counter (sock_diag SK_MEMINFO_DROPS, the d of ss -uam's skmem) rose by more than udp_drops_per_s (default 0: any drop; crit from 100/s), shown with Udp RcvbufErrors and InErrors per second (nstat's UdpRcvbufErrors, UdpInErrors). RcvbufErrors rising with no socket to blame raises it alone.",
        evidence: "the socket in Sockets; its process (PID and command), rcvbuf (ss's rb), Recv-Q and drops per second.",
        fix: "read faster (more threads, recvmmsg), a larger SO_RCVBUF within net.core.rmem_max (live value; raise that first when it is the cap), or more readers on the port with SO_REUSEPORT.",
    },
    Entry {
        id: "connect-refused",
        means: "Connections refused at 5/s or more (crit from 100/s). Here: the host answers connection attempts with RSTs, counted as Tcp OutRsts minus the RSTs applications caused by aborting (TcpExt TCPAbortOnData, OnClose, OnMemory, OnLinger). There: local clients' connects fail without timing out, Tcp AttemptFails minus TcpExt TCPAbortOnTimeout, and the summary says what ended them: refused (an RST), or unreachable (the application's \"No route to host\"): Icmp InDestUnreachs over the same interval counts those, and when this host sent them to itself (OutDestUnreachs rose as much) no neighbour answered ARP or NDP for the destination, named with the interfaces' FAILED neighbour entries. With the capture on, the summary starts with the refusing address:port and the peers it refused, per second (\"refused 25/s: 198.18.0.2:8080 refused 198.18.0.1 (25/s)\"): SYNs the capture saw answered by an RST from the side they were sent to, with no SYN-ACK; up to 16 ports and 8 peers each are kept, the least recently refused making room; for an address of this namespace each port says what listens on it (\"nothing listens on port 8080\", \"port 8080 is listened on at 127.0.0.1:8080 only, by PID 812 (nginx)\").",
        evidence: "the TCP tab's OutRsts (refused here) or AttemptFails (failed there) row, with the rates behind it.",
        fix: "refused: the service is down or listens on another address or port: compare ss -ltnp with where the clients connect (a listener on 127.0.0.1 refuses other addresses). No neighbour: the address is wrong or its host is down or on another network (ip neigh show nud failed). Unreachable from the way: a missing route or an ICMP-rejecting firewall (ip route get DEST, netlens trace DEST).",
    },
    Entry {
        id: "tcp-memory",
        means: "TCP memory pressure or the orphan limit: sockstat's TCP mem reached net.ipv4.tcp_mem's pressure value (warn; tcp_mem_warn_percent of it) or its limit (crit: sockets cannot get memory), TcpExt TCPMemoryPressures rose (warn) or TCPAbortOnMemory rose (crit), or orphaned sockets reached 80% of net.ipv4.tcp_max_orphans (crit at 100%). tcp_mem, tcp_max_orphans, mem and orphans are host-wide, read from the host even when watching a namespace.",
        evidence: "the TCP tab's tcp mem (or orphans) row; the pages against tcp_mem's values, the counters, and the sockets of the watched namespace with the largest queues, with their processes.",
        fix: "what holds the memory: applications not reading their full receive queues, slow peers behind full send queues; cap per-socket buffers with tcp_rmem/tcp_wmem; raise tcp_mem (live value) only if the host has the memory; for orphans, a shorter tcp_fin_timeout or a higher tcp_max_orphans (live values).",
    },
    Entry {
        id: "softnet-drops",
        means: "A CPU's per-CPU receive backlog (/proc/net/softnet_stat) dropped packets (dropped rose: the backlog held net.core.netdev_max_backlog packets; crit) or NET_RX ran out of its budget before the backlog was empty more than 10 times a second (time_squeeze; warn). The counters are per CPU and 32-bit; netlens takes their rise across a wrap.",
        evidence: "the CPU row in the Interfaces tab's CPU panel: dropped/s, squeeze/s and processed/s, and how many other CPUs do the same.",
        fix: "drops: raise net.core.netdev_max_backlog (live value, to twice it); squeezes: raise net.core.netdev_budget or netdev_budget_usecs; either way spread the receive work over more CPUs with RSS queues (ethtool -L) or RPS (rps_cpus).",
    },
    Entry {
        id: "softirq-imbalance",
        means: "One CPU processed at least 80% of the packets of all CPUs (softnet_stat processed) while the host received at least 10,000 packets/s, and that CPU spent at least 50% of its time in softirq (top's si): the others idle while it nears saturation, the single-queue or single-interrupt pattern of a small-packet flood.",
        evidence: "the CPU row in the CPU panel: its share, its packets/s, NET_RX softirqs/s and si% (top's).",
        fix: "more RSS queues (ethtool -L IF combined N), the queues' interrupts spread over CPUs (/proc/irq/N/smp_affinity_list, irqbalance), or RPS for a single-queue device (rps_cpus).",
    },
    Entry {
        id: "neigh-table-full",
        means: "The ARP (or NDP) table is at its limit: table_fulls rose (the kernel logged neighbour table overflow and refused new neighbours; crit), forced garbage collections rose (forced_gc_runs; warn), or the entries reached 90% of gc_thresh3 (warn). The tables and their statistics (/proc/net/stat/arp_cache, ndisc_cache) are shared by every namespace.",
        evidence: "the table: entries against gc_thresh3, table fulls, forced GC and unresolved discards per second.",
        fix: "raise net.ipv4.neigh.default.gc_thresh1/2/3 (and ipv6's; live values, to twice them), or put fewer peers on one L2 segment (smaller subnets, routing instead of bridging).",
    },
    Entry {
        id: "path-loss",
        means: "netlens trace and the Path view only (no sample or exported series raises it): probes are lost at the destination (5% or more, crit from 25%, of at least 5 probes) and at every answering hop from hop N on, so the loss starts at hop N and persists to the end. Loss at one hop that later hops do not show is that router rate-limiting or dropping its own ICMP time exceeded, and is not path loss; routers that never answer are skipped.",
        evidence: "the hop where the loss starts (TTL and address), its loss and the destination's, of how many probes.",
        fix: "the link into hop N or that router: its interface errors and queues, or its operator with the trace; for a one-hop loss nothing (it is the router's ICMP rate limit).",
    },
    Entry {
        id: "path-latency",
        means: "netlens trace and the Path view only: the mean round-trip time rises by 20 ms or more (crit from 100 ms) at hop N over every hop before it, and every hop after it keeps the rise to the destination. A hop slow only in answering (its ICMP is made in the router's slow path) with faster hops after it is no step.",
        evidence: "the hop where the step is, the mean RTT before it and the least mean RTT from it to the end.",
        fix: "the link into hop N or that router: a long or congested link, a deep queue (bufferbloat: its qdisc), a detour of the route.",
    },
];
