//! Packets: capture, the flow screen and trace.
//! Pure data: build.rs includes it (through sections/mod.rs).

pub const PACKETS: &str = r#".SH CAPTURE
The live view and \fBsnapshot\fR capture packets on every interface (\fB\-\-iface\fR
picks one) with an AF_PACKET TPACKET_V3 ring of 4 MiB, as libpcap does: the kernel
hands over whole blocks of packets, so capture costs about what tcpdump costs. On
a loopback device each packet would be seen twice (leaving and arriving); the
leaving copy is skipped, as libpcap does. Only the first 384 bytes of each packet
are kept: enough for every header and for DNS names (\fB\-\-payload\fR keeps whole
packets). Packets the ring had no room for are counted by the kernel and shown as
"kernel drops" in the Flows tab and "cap drops" in the header. Lines are printed
only while the Flows tab is open, at most 100 per tenth of a second (the rest are
counted as not listed), and the list moves with each sample; flows are counted for
every packet. A flow screen shows its flow's new packets within a fifth of a second. \fBnetlens capture\fR prints what \fBtcpdump \-n\fR prints, or
writes a pcap file (\fB\-w\fR) that tcpdump and Wireshark read; Ctrl-C, SIGTERM or
SIGHUP stops it with the file complete. A write that fails (a full disk) names the cause,
exits non-zero and keeps the whole packets written as a valid pcap, saying how many. Interfaces are in the watched namespace: \fB\-\-netns\fR
applies.
.SH FLOW SCREEN
Enter on a flow in the Flows tab, or on a socket in the Sockets tab that has
captured traffic (a flow with the socket's two endpoints), opens that flow's screen
(Esc goes back; on a socket without traffic Enter opens the socket's detail). The
title names the flow, its state and its process (joined with the socket table by
the two endpoints; also the PROCESS column of the flow table and \fBpid\fR,
\fBprocess\fR in \fBflows[]\fR). \fBv\fR and \fBV\fR switch the sub-views:
\fBSummary\fR (client and server, duration, packets and bytes per direction,
handshake timings SYN \(-> SYN/ACK \(-> ACK, RTT samples with a chart, throughput
charts per direction, retransmits, duplicate ACKs, out-of-order segments,
zero-window and window-full events, resets, and the close: three-way, four-way,
simultaneous or reset); \fBPackets\fR (tcpdump lines with the time since the first
packet and the gap since the previous one; a gap of 20 ms or more, and four times the
smallest RTT, is marked \(lq\[u25C6]\(rq; evidence packets \(lq*\(rq); \fBSequence\fR (client
and server lanes with an arrow, the flags and the length per packet, relative
sequence and acknowledgement numbers); \fBFindings\fR (each finding with its evidence
packets marked \(lq\[u25BA]\(rq: for nagle\-delayed\-ack the small segment, the delayed
ACK and the segment it released); \fBPayload\fR (hex and ASCII of both directions,
only with \fB\-\-payload\fR). The movement keys scroll. \fBe\fR writes the flow's
packets to a new netlens\-flow\-PORT\-PORT\-TIME\-RANDOM.pcapng in the current
directory (each packet with its interface, namespace, process and container) and
says its full path. The summary names two packet counts: those on
the screen, and the flow table's (with its bytes on the wire) as of the last sample. The screen starts with the flow's packets still
in a ring of the last 4,096 captured (8 MiB at most) and then follows it; it keeps
its last 5,000 packets, the analysis counts them all.
.SH TRACE
\fBnetlens trace\fR HOST[:PORT] traces the path hop by hop, as \fBtraceroute \-\-tcp \-n\fR,
\fBhping3 \-S\fR and \fBmtr \-\-report\fR do: TCP SYN probes by default (port 80), \fB\-\-udp\fR
(port 33434) or \fB\-\-icmp\fR (echo requests), with a rising TTL from 1 to \fB\-\-max\-ttl\fR
(30), one probe per TTL per round, \fB\-\-count\fR rounds (10; or until \fB\-\-duration\fR),
at most one round per \fB\-\-interval\fR (1s) and \fB\-\-rate\fR probes per second (20;
1000 at most). A probe unanswered after \fB\-\-timeout\fR (1s) is lost. Each ICMP time
exceeded or destination unreachable is matched to its probe by the header it quotes
(RFC 792): the TCP or UDP source port (one per probe) and the TCP sequence number, or the
echo identifier and sequence. The destination's own answer ends the path: SYN\-ACK or RST
(TCP), port unreachable (UDP), echo reply (ICMP); a router's destination unreachable ends
it there (traceroute's !N, !H, !X, shown as words). The destination's SYN\-ACK meets no
socket, so the local kernel answers it with a RST, as for traceroute \-\-tcp.
HOST is an IPv4 address, used as given; only a name is resolved, once, through the system
resolver. IPv6 destinations are refused (not supported yet). Hop names are looked up
only with \fB\-\-resolve\fR, through the system resolver (getnameinfo), each on its own
thread, waiting at most 2 s at the end; without it no name is looked up. With
\fB\-\-netns\fR/\fB\-\-pid\fR the probes leave from that namespace.
Per hop: HOST, LOSS% (of the probes answered or timed out), SENT, LAST, AVG, BEST, WORST,
STDEV (ms, population, as mtr) and RECENT (a sparkline of the last 32 round-trip times),
then the findings \fBpath\-loss\fR and \fBpath\-latency\fR (see FINDINGS; thresholds
path_loss_*, path_latency_* and path_min_probes). \fB\-\-json\fR prints one object:
\fBtarget\fR, \fBaddr\fR, \fBport\fR (not for ICMP), \fBprobe\fR (tcp, udp, icmp),
\fBnetns\fR, \fBrounds\fR, \fBreached\fR, \fBdone\fR, \fBerror\fR (when sending failed),
\fBhops\fR[] (\fBttl\fR, \fBaddr\fR (null when none answered), \fBname\fR (with
\-\-resolve), \fBother_addrs\fR (other addresses that answered at that TTL), \fBsent\fR,
\fBreceived\fR, \fBlast_ms\fR, \fBbest_ms\fR, \fBworst_ms\fR, \fBrecent_ms\fR[],
\fBunreachable\fR), \fBhop_figures\fR[] (\fBttl\fR, \fBloss_percent\fR, \fBavg_ms\fR,
\fBstddev_ms\fR) and \fBfindings\fR[] (as in a snapshot; evidence tab "path", row
"hop N (ADDR)"). Needs CAP_NET_RAW (raw sockets); without it netlens says so in one line
and exits 1. Bad input (a host that is neither an address nor a name that resolves, a bad
port, \fB\-\-count 0\fR, a rate above 1000) is one line and exit 1 or 2.
.TP
The Path view
\fBt\fR on a row of Sockets or Flows opens the Path view to that row's remote address and
port: the same prober (TCP SYN probes, one round per second, until closed) runs on its
own thread from the watched namespace, and the hop table and findings update as replies
come in. It fits 80x24; a narrow pane drops the BEST, WORST, STDEV and sparkline columns.
Esc closes it and stops the probing.
.SH NFTRACE
\fBnetlens nftrace\fR PROTO A B traces the packets of one flow, both directions, through
the nftables rules of the watched namespace (\fB\-\-netns\fR/\fB\-\-pid\fR), as \fBnft
monitor trace\fR prints them after a \fBmeta nftrace set 1\fR for that flow: per packet
(\fBtrace id\fR) its headers, interface and hook, then each rule it met, as \fBnft list
ruleset\fR prints it, with the verdict, each return and each policy. PROTO is tcp, udp,
sctp, icmp, icmpv6 or a number; A and B are ADDR, ADDR:PORT or [ADDR]:PORT, a missing
port (or 0) any port, 0.0.0.0 (or ::) any address. It adds a table of its own, \fBinet
netlens_trace_PID\fR, whose chains at prerouting and output (priority \-350) mark only
that flow's packets, and removes it when it stops (\fB\-\-duration\fR, \fB\-\-count\fR
packets, SIGINT, SIGTERM, SIGHUP); the table belongs to its netlink socket, so the
kernel removes it even when netlens is killed, and a table of a dead netlens left by an
older kernel is removed at the next start. \fB\-\-json\fR prints one object per event:
\fBt\fR, \fBid\fR, \fBfamily\fR, \fBtable\fR, \fBchain\fR, \fBhandle\fR, \fBkind\fR
(rule, return, policy), \fBverdict\fR, \fBhook\fR, \fBiif\fR, \fBoif\fR, \fBpacket\fR
and \fBrule\fR (its text). Needs CAP_NET_ADMIN and nf_tables; rules of the legacy
iptables are not traced. In the live view \fBT\fR on a flow's screen does the same
(see DROPS).
"#;
