//! Tcp (/proc/net/snmp) and the TcpExt counters of loss and recovery.

use super::Entry;

const RETRANSMITS: Option<&str> = Some("retransmits");

pub const TCP: &[Entry] = &[
    entry!(
        "Tcp.AttemptFails",
        Snmp,
        Warn,
        5.0,
        [TCP_RESET],
        Some("connect-refused"),
        "connection attempts that failed: a SYN answered by a reset, or a half-open connection reset",
        "the peer refuses (nothing listens, a firewall resets) or the listener is overloaded: check `ss -tn state syn-sent`, the server's ListenOverflows and its firewall"
    ),
    entry!(
        "Tcp.EstabResets",
        Snmp,
        Info,
        0.0,
        [TCP_RESET],
        None,
        "established or close-wait connections reset: part of normal life for many clients",
        "a sudden rise means a peer or middlebox is resetting: capture the resets (`tcp[tcpflags] & tcp-rst != 0`) and see who sends them"
    ),
    entry!(
        "Tcp.RetransSegs",
        Snmp,
        Warn,
        0.0,
        [],
        RETRANSMITS,
        "segments retransmitted: loss, or a path slower than the timers",
        "look at the retransmits finding and the connections in TCP; loss on a link shows in its interface errors and qdisc drops"
    ),
    entry!(
        "Tcp.InErrs",
        Snmp,
        Warn,
        1.0,
        [TCP_CSUM, PKT_TOO_SMALL, TCP_FLAGS],
        None,
        "segments received with an error: bad checksum, too short, or bad header",
        "corrupted frames on the path or a NIC offload bug: check the interface's rx_crc_errors, try `ethtool -K IF rx off`, look for a bad cable or switch port"
    ),
    entry!(
        "Tcp.OutRsts",
        Snmp,
        Info,
        0.0,
        [],
        None,
        "resets sent: to closed ports, aborted connections, unread data at close",
        "a rise means clients reach a port with no listener or applications close with unread data: see TcpExt.TCPAbortOnClose and the Sockets tab"
    ),
    entry!(
        "Tcp.InCsumErrors",
        Snmp,
        Warn,
        1.0,
        [TCP_CSUM],
        None,
        "segments dropped for a bad TCP checksum",
        "corruption on the path, a broken NIC checksum offload or a faulty middlebox: check rx_crc_errors, try `ethtool -K IF rx off`"
    ),
];

/// TcpExt counters of loss detection and recovery. The ones that are
/// retransmissions are part of Tcp.RetransSegs, which the retransmits
/// finding watches.
pub const TCP_EXT_LOSS: &[Entry] = &[
    entry!(
        "TcpExt.TCPRenoRecovery",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "loss recoveries entered on a connection without SACK",
        "normal under some loss; many mean the path loses packets and SACK is off: check net.ipv4.tcp_sack"
    ),
    entry!(
        "TcpExt.TCPSackRecovery",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "loss recoveries entered with SACK: fast retransmit after loss was detected",
        "normal under some loss; a steady rate means the path loses packets: look at retransmits per connection in TCP"
    ),
    entry!(
        "TcpExt.TCPSACKReneging",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "the peer discarded data it had already SACKed",
        "a peer under memory pressure or a broken middlebox; nothing to change here"
    ),
    entry!(
        "TcpExt.TCPSACKReorder",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "reordering detected by SACK",
        "reordering on the path (multipath, bonding, ECMP): usually harmless; tcp_reordering adapts"
    ),
    entry!(
        "TcpExt.TCPRenoReorder",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "reordering detected by fast retransmit without SACK",
        "reordering on the path; enable SACK (net.ipv4.tcp_sack=1)"
    ),
    entry!(
        "TcpExt.TCPTSReorder",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "reordering detected from a hole being filled (timestamps)",
        "reordering on the path: usually harmless"
    ),
    entry!(
        "TcpExt.TCPFullUndo",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a congestion window reduction fully undone: the retransmission was spurious",
        "spurious retransmissions: reordering or delay spikes, not loss"
    ),
    entry!(
        "TcpExt.TCPPartialUndo",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a congestion window reduction partly undone after a partial ACK",
        "reordering or delay spikes on the path: usually harmless"
    ),
    entry!(
        "TcpExt.TCPDSACKUndo",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a congestion window reduction undone after a D-SACK said the data had arrived",
        "spurious retransmissions: reordering, not loss"
    ),
    entry!(
        "TcpExt.TCPLossUndo",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a loss recovery undone: the data had not been lost",
        "spurious timeouts: delay spikes on the path"
    ),
    entry!(
        "TcpExt.TCPLostRetransmit",
        Netstat,
        Warn,
        0.0,
        [],
        RETRANSMITS,
        "a retransmitted segment was lost again",
        "heavy loss on the path: look at the interface errors and qdisc drops on both ends"
    ),
    entry!(
        "TcpExt.TCPRenoFailures",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a recovery without SACK failed and fell back to a timeout",
        "heavy loss; enable SACK (net.ipv4.tcp_sack=1)"
    ),
    entry!(
        "TcpExt.TCPSackFailures",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a SACK recovery failed and fell back to a timeout",
        "heavy loss on the path: see retransmits"
    ),
    entry!(
        "TcpExt.TCPLossFailures",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a timeout while in loss recovery",
        "heavy loss or a stalled path: see retransmits and TCPTimeouts"
    ),
    entry!(
        "TcpExt.TCPFastRetrans",
        Netstat,
        Warn,
        0.0,
        [],
        RETRANSMITS,
        "segments sent again by fast retransmit",
        "loss on the path: see the retransmits finding"
    ),
    entry!(
        "TcpExt.TCPSlowStartRetrans",
        Netstat,
        Warn,
        0.0,
        [],
        RETRANSMITS,
        "segments sent again in slow start after a timeout",
        "loss on the path: see the retransmits finding"
    ),
    entry!(
        "TcpExt.TCPTimeouts",
        Netstat,
        Warn,
        0.0,
        [],
        RETRANSMITS,
        "retransmission timeouts: nothing came back within the RTO",
        "heavy loss or a dead peer: see the retransmits finding and TCPAbortOnTimeout"
    ),
    entry!(
        "TcpExt.TCPLossProbes",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "tail loss probes sent (TLP): normal at the end of bursts",
        "nothing; a high rate beside retransmits confirms tail loss"
    ),
    entry!(
        "TcpExt.TCPLossProbeRecovery",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "losses repaired by a tail loss probe",
        "nothing: the probe saved a timeout"
    ),
    entry!(
        "TcpExt.TCPRenoRecoveryFail",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a recovery without SACK failed (timeout before recovery ended)",
        "heavy loss; enable SACK"
    ),
    entry!(
        "TcpExt.TCPSackRecoveryFail",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "a SACK recovery failed (timeout before recovery ended)",
        "heavy loss on the path: see retransmits"
    ),
    entry!(
        "TcpExt.TCPSpuriousRTOs",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "timeouts found spurious by F-RTO",
        "delay spikes on the path (wireless, bufferbloat), not loss"
    ),
    entry!(
        "TcpExt.TCPSynRetrans",
        Netstat,
        Warn,
        0.0,
        [],
        RETRANSMITS,
        "SYN and SYN-ACK retransmissions: connection setup not answered in time",
        "the peer or a firewall drops SYNs (see the connect-timeout finding and syn-unanswered in Flows), or the listener's queues are full: the server's ListenDrops"
    ),
    entry!(
        "TcpExt.TCPRetransFail",
        Netstat,
        Warn,
        1.0,
        [NOMEM, QDISC_DROP],
        None,
        "retransmissions that could not be sent: the local queue or memory refused them",
        "a full qdisc or driver queue or memory pressure on this host: check `tc -s qdisc` and TCPMemoryPressures"
    ),
    entry!(
        "TcpExt.TCPSpuriousRtxHostQueues",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "retransmissions skipped because the original was still in the host's queues",
        "the local qdisc or NIC queue is slow to drain: check `tc -s qdisc` backlog"
    ),
    entry!(
        "TcpExt.TCPDSACKOldSent",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "D-SACKs sent for old duplicate data: the peer retransmitted what had arrived",
        "the peer retransmits spuriously (our ACKs lost or late)"
    ),
    entry!(
        "TcpExt.TCPDSACKOfoSent",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "D-SACKs sent for out-of-order duplicate data",
        "reordering or spurious retransmissions by the peer"
    ),
    entry!(
        "TcpExt.TCPDSACKRecv",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "D-SACKs received: we retransmitted data the peer already had",
        "spurious retransmissions: reordering or delay spikes"
    ),
    entry!(
        "TcpExt.TCPDSACKOfoRecv",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "D-SACKs received for out-of-order duplicates",
        "reordering on the path"
    ),
    entry!(
        "TcpExt.TCPDSACKRecvSegs",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "segments reported duplicate by D-SACKs received",
        "spurious retransmissions: reordering or delay spikes"
    ),
    entry!(
        "TcpExt.TCPDSACKIgnoredOld",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "D-SACKs ignored: for data older than the current window",
        "nothing to change"
    ),
    entry!(
        "TcpExt.TCPDSACKIgnoredNoUndo",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "D-SACKs ignored: no undo possible",
        "nothing to change"
    ),
    entry!(
        "TcpExt.TCPDSACKIgnoredDubious",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "D-SACKs ignored as dubious (would undo more than was retransmitted)",
        "a peer with a buggy D-SACK: nothing to change here"
    ),
    entry!(
        "TcpExt.TCPSACKDiscard",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "SACK blocks discarded as invalid",
        "a peer or middlebox rewriting sequence numbers: capture and compare"
    ),
    entry!(
        "TcpExt.TcpTimeoutRehash",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "flow label changed after a timeout to try another path (IPv6)",
        "a path fails and ECMP rehash tries another: see which peer in TCP"
    ),
    entry!(
        "TcpExt.TcpDuplicateDataRehash",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "flow label changed after duplicate data (IPv6)",
        "the peer's ACKs are lost on one path: nothing to change here"
    ),
    entry!(
        "TcpExt.TCPPLBRehash",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "Protective Load Balancing moved a congested flow to another path",
        "congestion in the fabric: nothing to change on this host"
    ),
    entry!(
        "TcpExt.TCPDeliveredCE",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "segments delivered with an ECN congestion mark",
        "a congested queue on the path marks instead of dropping: normal with ECN"
    ),
];

/// TcpExt counters of TCP-MD5 and TCP-AO signatures (BGP sessions).
pub const TCP_EXT_AUTH: &[Entry] = &[
    entry!(
        "TcpExt.TCPMD5NotFound",
        Netstat,
        Warn,
        0.0,
        [TCP_MD5NOTFOUND],
        None,
        "segments dropped: TCP-MD5 expected but missing",
        "a BGP peer without the MD5 password configured"
    ),
    entry!(
        "TcpExt.TCPMD5Unexpected",
        Netstat,
        Warn,
        0.0,
        [TCP_MD5UNEXPECTED],
        None,
        "segments dropped: TCP-MD5 present but not configured here",
        "configure the same MD5 key on both ends"
    ),
    entry!(
        "TcpExt.TCPMD5Failure",
        Netstat,
        Warn,
        0.0,
        [TCP_MD5FAILURE],
        None,
        "segments dropped: TCP-MD5 signature wrong",
        "the MD5 passwords differ between the peers"
    ),
    entry!(
        "TcpExt.TCPAORequired",
        Netstat,
        Warn,
        0.0,
        [TCP_AONOTFOUND],
        None,
        "segments dropped: TCP-AO required but missing",
        "configure TCP-AO on the peer"
    ),
    entry!(
        "TcpExt.TCPAOBad",
        Netstat,
        Warn,
        0.0,
        [TCP_AOFAILURE],
        None,
        "segments dropped: TCP-AO signature wrong",
        "the TCP-AO keys differ between the peers"
    ),
    entry!(
        "TcpExt.TCPAOKeyNotFound",
        Netstat,
        Warn,
        0.0,
        [TCP_AOKEYNOTFOUND],
        None,
        "segments dropped: no matching TCP-AO key",
        "add the peer's key id"
    ),
    entry!(
        "TcpExt.TCPAODroppedIcmps",
        Netstat,
        Info,
        0.0,
        [],
        None,
        "ICMP errors ignored on TCP-AO connections",
        "nothing to change"
    ),
];
