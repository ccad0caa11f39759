//! TcpExt (/proc/net/netstat): connection setup, queues, memory, security.

use super::Entry;

const LISTEN_OVERFLOW: Option<&str> = Some("listen-overflow");
const SYN_FLOOD: Option<&str> = Some("syn-flood");

pub const TCP_EXT: &[Entry] = &[
    entry!(
        "TcpExt.SyncookiesSent",
        Netstat,
        Warn,
        0.0,
        [],
        SYN_FLOOD,
        "SYN cookies sent: the SYN queue was full",
        "a SYN flood or a burst of connections: see the syn-flood finding; raise net.ipv4.tcp_max_syn_backlog and the listen backlog"
    ),
    entry!(
        "TcpExt.SyncookiesRecv",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "valid SYN cookies received back: connections completed through cookies",
        "the SYN queue overflows: raise net.ipv4.tcp_max_syn_backlog and the listen backlog"
    ),
    entry!(
        "TcpExt.SyncookiesFailed",
        Netstat,
        Warn,
        10.0,
        [],
        None,
        "ACKs with an invalid SYN cookie: the connection is dropped",
        "an ACK flood, or cookies that expired: check for a flood in Flows"
    ),
    entry!(
        "TcpExt.EmbryonicRsts",
        Netstat,
        Info,
        0.0,
        [TCP_RESET],
        None,
        "resets received for connections in SYN_RECV",
        "clients giving up while the handshake was slow: check the listener's queues"
    ),
    entry!(
        "TcpExt.PruneCalled",
        Netstat,
        Warn,
        1.0,
        [],
        None,
        "a socket's receive queue went over its memory and the kernel had to collapse or prune it",
        "the application reads too slowly for its buffer: read faster, or raise net.ipv4.tcp_rmem's maximum"
    ),
    entry!(
        "TcpExt.RcvPruned",
        Netstat,
        Crit,
        0.0,
        [PROTO_MEM],
        None,
        "received data dropped because the receive queue could not be shrunk under its memory limit",
        "the application does not read: look for a stuck Recv-Q in Sockets; raise net.ipv4.tcp_rmem or read faster"
    ),
    entry!(
        "TcpExt.OfoPruned",
        Netstat,
        Warn,
        1.0,
        [TCP_OFO_QUEUE_PRUNE],
        None,
        "out-of-order data dropped to free receive memory",
        "loss and a small receive buffer together: raise net.ipv4.tcp_rmem's maximum"
    ),
    entry!(
        "TcpExt.OutOfWindowIcmps",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ICMP errors dropped because they named a sequence outside the window",
        "forged or stale ICMP errors: nothing to change"
    ),
    entry!(
        "TcpExt.LockDroppedIcmps",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ICMP errors dropped because the socket was busy",
        "nothing to change"
    ),
    entry!(
        "TcpExt.ArpFilter",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ARP requests filtered by net.ipv4.conf.*.arp_filter",
        "expected with arp_filter=1 on multi-homed hosts"
    ),
    entry!(
        "TcpExt.TWKilled",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "TIME_WAIT sockets ended early",
        "nothing to change"
    ),
    entry!(
        "TcpExt.PAWSActive",
        Netstat,
        Warn,
        1.0,
        [TCP_RFC7323_PAWS],
        None,
        "SYN-ACKs dropped by PAWS: their timestamp was older than allowed",
        "clients behind one NAT with different clocks, or tcp_timestamps mismatch: check net.ipv4.tcp_timestamps on both ends"
    ),
    entry!(
        "TcpExt.PAWSEstab",
        Netstat,
        Warn,
        5.0,
        [TCP_RFC7323_PAWS],
        None,
        "segments dropped by PAWS on established connections: an old timestamp",
        "a NAT mixing clients with different timestamp clocks, or a middlebox rewriting timestamps"
    ),
    entry!(
        "TcpExt.BeyondWindow",
        Netstat,
        Warn,
        10.0,
        [TCP_OVERWINDOW],
        None,
        "segments dropped because they lay beyond the receive window",
        "a peer or middlebox ignoring the advertised window, or sequence numbers rewritten: capture the connection"
    ),
    entry!(
        "TcpExt.TSEcrRejected",
        Netstat,
        Warn,
        5.0,
        [TCP_RFC7323_TSECR],
        None,
        "segments dropped because their timestamp echo was invalid",
        "a middlebox rewriting timestamps: capture and compare both sides"
    ),
    entry!(
        "TcpExt.PAWSOldAck",
        Netstat,
        Info,
        0.0,
        [TCP_RFC7323_PAWS_ACK],
        None,
        "old ACKs dropped by PAWS",
        "nothing to change"
    ),
    entry!(
        "TcpExt.PAWSTimewait",
        Netstat,
        Info,
        0.0,
        [TCP_RFC7323_TW_PAWS],
        None,
        "segments to a TIME_WAIT socket dropped by PAWS",
        "clients reusing ports quickly: nothing to change"
    ),
    entry!(
        "TcpExt.DelayedACKLocked",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "delayed ACKs postponed because the socket was busy",
        "nothing to change"
    ),
    entry!(
        "TcpExt.DelayedACKLost",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "data received again that had been ACKed: our ACK was lost or late",
        "loss on the reverse path; see retransmits on the peer"
    ),
    entry!(
        "TcpExt.ListenOverflows",
        Netstat,
        Crit,
        0.0,
        [TCP_LISTEN_OVERFLOW],
        LISTEN_OVERFLOW,
        "a listener's accept queue was full: the handshake's final ACK was dropped",
        "see the listen-overflow finding: the application accepts too slowly; raise the listen backlog and net.core.somaxconn"
    ),
    entry!(
        "TcpExt.ListenDrops",
        Netstat,
        Crit,
        0.0,
        [TCP_LISTEN_OVERFLOW],
        LISTEN_OVERFLOW,
        "SYNs or final ACKs dropped by a listener, for any reason (includes ListenOverflows)",
        "see the listen-overflow finding; if ListenOverflows does not move, memory or an LSM drops them"
    ),
    entry!(
        "TcpExt.TCPAbortOnData",
        Netstat,
        Info,
        0.0,
        [TCP_ABORT_ON_DATA],
        None,
        "connections reset because data arrived after the application closed",
        "normal for HTTP clients that close early; a rise is an application closing too soon"
    ),
    entry!(
        "TcpExt.TCPAbortOnClose",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "connections reset because the application closed with unread data",
        "an application that does not read its whole request before closing"
    ),
    entry!(
        "TcpExt.TCPAbortOnMemory",
        Netstat,
        Crit,
        0.0,
        [],
        Some("tcp-memory"),
        "connections killed for lack of memory or too many orphans",
        "raise net.ipv4.tcp_mem or net.ipv4.tcp_max_orphans; find who holds socket memory in Sockets"
    ),
    entry!(
        "TcpExt.TCPAbortOnTimeout",
        Netstat,
        Warn,
        1.0,
        [],
        None,
        "connections killed after their retries or keepalives ran out",
        "a dead or unreachable peer, or heavy loss: see retransmits; tcp_retries2 sets how long"
    ),
    entry!(
        "TcpExt.TCPAbortOnLinger",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "connections reset by SO_LINGER with a zero timeout",
        "an application choosing to reset on close"
    ),
    entry!(
        "TcpExt.TCPAbortFailed",
        Netstat,
        Warn,
        0.0,
        [NOMEM],
        None,
        "a reset could not be sent (no memory)",
        "memory pressure on this host: check TCPMemoryPressures and free memory"
    ),
    entry!(
        "TcpExt.TCPMemoryPressures",
        Netstat,
        Crit,
        0.0,
        [],
        Some("tcp-memory"),
        "TCP entered memory pressure: socket buffers are being shrunk",
        "TCP memory reached net.ipv4.tcp_mem's middle value: raise tcp_mem or find the sockets with large queues"
    ),
    entry!(
        "TcpExt.TCPMemoryPressuresChrono",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "milliseconds spent in TCP memory pressure",
        "see TCPMemoryPressures"
    ),
    entry!(
        "TcpExt.TCPRcvCollapsed",
        Netstat,
        Warn,
        100.0,
        [],
        None,
        "segments merged to save receive memory",
        "the application reads slowly for its buffer: raise net.ipv4.tcp_rmem's maximum or read faster"
    ),
    entry!(
        "TcpExt.TCPBacklogDrop",
        Netstat,
        Warn,
        0.0,
        [SOCKET_BACKLOG],
        None,
        "segments dropped because the socket's backlog was full while the application held it",
        "the application holds its socket lock too long or reads too slowly: raise net.ipv4.tcp_rmem, look at the process"
    ),
    entry!(
        "TcpExt.PFMemallocDrop",
        Netstat,
        Crit,
        0.0,
        [PFMEMALLOC],
        None,
        "segments dropped because they came from emergency memory reserves",
        "the host is out of memory: free memory, raise vm.min_free_kbytes"
    ),
    entry!(
        "TcpExt.TCPMinTTLDrop",
        Netstat,
        Warn,
        0.0,
        [TCP_MINTTL],
        None,
        "segments dropped below the socket's IP_MINTTL (GTSM)",
        "a spoofing attempt or a peer further away than configured"
    ),
    entry!(
        "TcpExt.TCPDeferAcceptDrop",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "connections dropped by TCP_DEFER_ACCEPT: no data arrived",
        "clients that connect and send nothing; expected with defer accept"
    ),
    entry!(
        "TcpExt.IPReversePathFilter",
        Netstat,
        Warn,
        1.0,
        [IP_RPFILTER],
        None,
        "packets dropped by reverse path filtering: their source would not route back this way",
        "asymmetric routing: set net.ipv4.conf.IF.rp_filter=2 (loose) or fix the routes"
    ),
    entry!(
        "TcpExt.TCPTimeWaitOverflow",
        Netstat,
        Warn,
        1.0,
        [],
        None,
        "TIME_WAIT sockets not created: net.ipv4.tcp_max_tw_buckets reached",
        "many short connections: raise tcp_max_tw_buckets, reuse connections (keepalive)"
    ),
    entry!(
        "TcpExt.TCPReqQFullDoCookies",
        Netstat,
        Warn,
        0.0,
        [],
        SYN_FLOOD,
        "SYN queue full: answered with a SYN cookie",
        "see the syn-flood finding"
    ),
    entry!(
        "TcpExt.TCPReqQFullDrop",
        Netstat,
        Crit,
        0.0,
        [],
        SYN_FLOOD,
        "SYN queue full and syncookies off: SYNs dropped",
        "see the syn-flood finding: set net.ipv4.tcp_syncookies=1, raise tcp_max_syn_backlog"
    ),
    entry!(
        "TcpExt.TCPOFOQueue",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "segments queued out of order: loss or reordering before them",
        "normal under some loss or reordering"
    ),
    entry!(
        "TcpExt.TCPOFODrop",
        Netstat,
        Warn,
        1.0,
        [TCP_OFO_DROP],
        None,
        "out-of-order segments dropped: no receive memory for them",
        "raise net.ipv4.tcp_rmem's maximum; the application reads slowly"
    ),
    entry!(
        "TcpExt.TCPOFOMerge",
        Netstat,
        Info,
        0.0,
        [TCP_OFOMERGE],
        None,
        "out-of-order segments overlapping ones already queued",
        "duplicate data from the peer: nothing to change"
    ),
    entry!(
        "TcpExt.TCPChallengeACK",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "challenge ACKs sent (RFC 5961) for suspicious RST or SYN",
        "a rise means spoofed resets or a NAT confusing connections"
    ),
    entry!(
        "TcpExt.TCPSYNChallenge",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "challenge ACKs sent for a SYN on an established connection",
        "clients reconnecting on the same port (NAT): usually harmless"
    ),
    entry!(
        "TcpExt.TCPFastOpenActiveFail",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "TCP Fast Open attempts that fell back to a normal handshake",
        "a middlebox drops SYN data: nothing to change"
    ),
    entry!(
        "TcpExt.TCPFastOpenPassiveFail",
        Netstat,
        Info,
        0.0,
        [TCP_FASTOPEN],
        None,
        "Fast Open SYNs with an invalid cookie or that could not make a socket",
        "nothing to change unless it is a flood"
    ),
    entry!(
        "TcpExt.TCPFastOpenListenOverflow",
        Netstat,
        Warn,
        1.0,
        [],
        None,
        "Fast Open requests refused: the listener's TFO queue was full",
        "raise the TCP_FASTOPEN queue length the application sets"
    ),
    entry!(
        "TcpExt.TCPFastOpenBlackhole",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "Fast Open disabled after a path black-holed it",
        "a middlebox drops SYN data: nothing to change"
    ),
    entry!(
        "TcpExt.TCPFromZeroWindowAdv",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "receive window opened again after advertising zero",
        "see TCPToZeroWindowAdv"
    ),
    entry!(
        "TcpExt.TCPToZeroWindowAdv",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "zero receive window advertised: an application here stopped reading",
        "find the socket with a full Recv-Q in Sockets and its process"
    ),
    entry!(
        "TcpExt.TCPWantZeroWindowAdv",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "the receive window shrank to zero but was not advertised",
        "an application here reads slowly"
    ),
    entry!(
        "TcpExt.TCPZeroWindowDrop",
        Netstat,
        Warn,
        1.0,
        [TCP_ZEROWINDOW],
        None,
        "segments dropped because the receive window was zero",
        "an application here does not read: find the full Recv-Q in Sockets"
    ),
    entry!(
        "TcpExt.TCPRcvQDrop",
        Netstat,
        Warn,
        1.0,
        [PROTO_MEM],
        None,
        "segments dropped: no memory to queue them on the socket",
        "TCP memory is short: raise net.ipv4.tcp_mem or tcp_rmem, or read faster"
    ),
    entry!(
        "TcpExt.TCPWqueueTooBig",
        Netstat,
        Warn,
        1.0,
        [],
        None,
        "a write queue grew too large to split for a retransmission",
        "huge send buffers with loss: lower net.ipv4.tcp_wmem's maximum"
    ),
    entry!(
        "TcpExt.TCPACKSkippedSynRecv",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "duplicate ACKs not sent in SYN_RECV (rate limited)",
        "nothing to change"
    ),
    entry!(
        "TcpExt.TCPACKSkippedPAWS",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ACKs for PAWS-rejected segments not sent (rate limited)",
        "see PAWSEstab"
    ),
    entry!(
        "TcpExt.TCPACKSkippedSeq",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ACKs for out-of-window segments not sent (rate limited)",
        "a peer sending outside the window: capture it"
    ),
    entry!(
        "TcpExt.TCPACKSkippedFinWait2",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ACKs in FIN_WAIT2 not sent (rate limited)",
        "nothing to change"
    ),
    entry!(
        "TcpExt.TCPACKSkippedTimeWait",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ACKs in TIME_WAIT not sent (rate limited)",
        "nothing to change"
    ),
    entry!(
        "TcpExt.TCPACKSkippedChallenge",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "challenge ACKs not sent (rate limited)",
        "a flood of spoofed RST or SYN: see TCPChallengeACK"
    ),
    entry!(
        "TcpExt.TCPWinProbe",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "zero window probes sent: a peer stopped reading",
        "the peer's application is slow: see the socket's Send-Q"
    ),
    entry!(
        "TcpExt.TCPMTUPFail",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "path MTU probes that failed",
        "a smaller MTU on the path; with net.ipv4.tcp_mtu_probing it adapts"
    ),
    entry!(
        "TcpExt.TCPMigrateReqFailure",
        Netstat,
        Warn,
        0.0,
        [],
        None,
        "requests that could not move to another listener of a SO_REUSEPORT group",
        "a listener closed with requests pending and no other took them: check the application's restarts"
    ),
];
