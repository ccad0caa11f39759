//! The man page's CONNECTION LOG section (build.rs appends it after the
//! other sections; `netlens man` prints the result).

pub const CONNECTION_LOG: &str = r#".SH CONNECTION LOG
Every TCP connection that ends in the watched namespace, as bcc's \fBtcplife\fR lists
them, from the kernel's sock_diag destroy notifications (a NETLINK_SOCK_DIAG socket bound
to SKNLGRP_INET_TCP_DESTROY and SKNLGRP_INET6_TCP_DESTROY, opened by the sampler thread
inside \fB\-\-netns\fR/\fB\-\-pid\fR): no capture and no eBPF. The kernel sends the
socket's last tcp_info as it frees it. \fBnetlens conns\fR prints them (a table, or JSON
Lines with \fB\-\-json\fR; each line flushed; until Ctrl-C, SIGTERM or \fB\-\-duration\fR D,
then one more sample, at most two intervals later, so what closed meanwhile is printed); the
Sockets tab's Closed view (\fBc\fR steps Open, Closed, Failed) lists the last ones,
filtered by the tab's filter and sorted by any column; \fBsnapshot \-\-json\fR has them
in \fBclosed[]\fR; recordings keep them; the exporter counts them.
.TP
Columns
TIME (when netlens read the notification), PID and COMM (the process that held the
socket when a sample last saw it, even if it has exited since; for a socket that lived
and died between two samples, the owner of the listener that accepted it; else "-"),
LOCAL, PEER, TX_B (data bytes the peer acknowledged: tcpi_bytes_acked less the SYN's and
FIN's sequence numbers, at most the unique data sent: bytes_sent less bytes_retrans),
RX_B (tcpi_bytes_received less the peer's FIN), MS (from the first sample that saw the
socket to its end: a lower bound, "-" (the Closed view: "<tick") when no sample saw it;
tcp_info holds no age),
RTT_MS (smoothed), RETR (tcpi_total_retrans) and HOW.
.TP
HOW
\fBfin\fR: our FIN was acknowledged (a normal close; a peer that resets after
acknowledging our FIN is counted here too). \fBrst-received\fR: a reset ended it and no
data was unread at close, so the kernel had no reason to send one (or \fBss \-K\fR killed
it). \fBrst-sent\fR: an abortive close (SO_LINGER 0): the kernel sent a reset and zeroed
the socket's counters and peer port, so bytes, RTT and peer come from the last sample that
saw the socket (a lower bound), else are unknown ("-", null). \fBrst\fR: a reset with data
unread at close: sent by that close(), or received before it; tcp_info cannot tell these
two apart (no sk_err, no shutdown bits reach the notification), only eBPF could.
\fBtimeout\fR: retransmissions or keepalive/window probes went unanswered
(tcpi_retransmits or tcpi_probes left non-zero at death). \fBrefused\fR: never
established, a reset (or an ICMP port unreachable) answered the SYN. \fBsyn-timeout\fR:
never established, no answer (tcpi_retransmits above the namespace's tcp_syn_retries; a
TCP_SYNCNT set per socket is not seen). \fBunreachable\fR: never established, an ICMP
destination unreachable ended it: a router's, or this host's own when the neighbour did
not answer (ARP, NDP). Only the connection-owner eBPF program sees the socket's error
(EHOSTUNREACH, ENETUNREACH against ECONNREFUSED); where it cannot attach by tp_btf (or
missed one), a connect an ICMP error ended is logged as \fBunreachable\fR when no RST
came back before its SYNs ran out, and as \fBrefused\fR when a blocking connect()
reported it (which zeroes the counters that tell). The rule, worked out on Linux 6.18, is
documented in src/collect/tcp_destroy.rs. Which end is the server comes from the listeners
netlens saw (a port with a listener); a client using a port that also has a listener is
taken for the server. RX_B can be one byte short after \fBfin\fR when the socket was an
orphaned active closer, which the kernel frees before the peer's FIN arrives.
.TP
Limits
At most 4096 closed connections are kept per sample (the rest are counted as
\fBoverflow\fR, and \fBconns\fR says so on stderr); the Closed view keeps the last 1000
(\fBclosed_rows\fR in the config file). The socket asks for a 32 MiB receive
buffer (SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it net.core.rmem_max caps it);
notifications the kernel drops when it is full are read back as the socket's drop count
(SO_MEMINFO) and shown as \fBlost\fR, never dropped silently. On Linux 6.18 subscribing
needs no privilege; a kernel that refuses it (EPERM) gets one line where the log would
show, and the rest of netlens works as before. UDP is not logged.
.TP
JSON (\fBclosed[]\fR, one \fBconns \-\-json\fR line)
\fBt\fR (Unix seconds), \fBpid\fR, \fBcomm\fR (null and "-" when unknown), \fBlocal\fR,
\fBpeer\fR ("addr:port"; port 0 when a failed connect or an abort cleared it and no sample
saw the socket), \fBaccepted\fR (from a listener), \fBbytes_sent\fR, \fBbytes_received\fR
(null when unknown), \fBduration_ms\fR (null when no sample saw it), \fBrtt_ms\fR,
\fBretrans\fR, \fBending\fR (the HOW names above), \fBfailure\fR (the KIND below; null
when it did not fail), \fBcontainer\fR ("web (podman)"; null outside containers),
\fBcookie\fR (the kernel's socket cookie). \fBconns \-\-failed\fR prints only the
connections that failed. \fBsnapshot \-\-json\fR adds \fBclosed_log\fR: \fBlost\fR (since netlens started),
\fBoverflow\fR (this sample), \fBerror\fR (why there is no log, else null); both come with
the \fBsockets\fR section.
.TP
Exporter
\fBnetlens_tcp_closed_total\fR{\fBhow\fR,\fBnetns\fR}: connections that ended since netlens
started, one series per HOW; \fBnetlens_tcp_closed_lost_total\fR{\fBnetns\fR}.
.TP
Failed connections
The Sockets tab's Failed view (\fBc\fR twice) groups what failed by KIND, process,
container and destination: COUNT since the view's first sample (a replay: the loaded
history's), /S over the shown interval, FIRST and LAST seen. KIND, for TCP, from the
connection log: \fBrefused\fR (an RST, or an ICMP port unreachable, answered the SYN),
\fBsyn-timeout\fR (no answer to the SYNs), \fBunreachable\fR (an ICMP destination
unreachable, or no neighbour answered), \fBreset\fR (an established connection ended by
a reset: HOW \fBrst-received\fR or \fBrst\fR), \fBtimeout\fR (an established connection's
retransmissions or probes went unanswered); a FIN and an abort the application chose
(\fBrst-sent\fR) are no failures. The destination is the address the SYN went to: the
peer for a connect, this host's (shown "in ADDR:PORT") for an accepted connection. The
container is the process's; for one that exited before netlens looked it up (a \fBcurl\fR
that failed and quit), that of the cgroup v2 the connection-owner eBPF program recorded
as it connected (not on cgroup v1 hosts, nor once the cgroup is removed). For
DNS, from the probes and, with the capture on, the queries seen on the wire:
\fBdns-no-answer\fR (none within the timeout), \fBdns-nxdomain\fR, \fBdns-servfail\fR,
\fBdns-refused\fR, \fBdns-unreachable\fR (ICMP port unreachable), \fBdns-error\fR, by
question ("NAME TYPE") and server; a DNS result names no process. The tab's filter
applies to the connections (DNS groups show only without one). At most 2000 groups are
kept; failures of further groups are counted as overflow. \fBsnapshot \-\-json\fR (and
\fBreplay \-\-json\fR, per sample) has the interval's groups in \fBfailed[]\fR, with the
\fBsockets\fR section: \fBkind\fR, \fBpid\fR, \fBcomm\fR, \fBcontainer\fR,
\fBdestination\fR, \fBaccepted\fR, \fBquestion\fR (DNS; else null), \fBcount\fR,
\fBfirst_seen\fR, \fBlast_seen\fR (Unix seconds), \fBrate\fR (per second). The exporter
serves \fBnetlens_failed_total\fR{\fBkind\fR,\fBprocess\fR,\fBcontainer\fR,\fBdestination\fR,
\fBquestion\fR,\fBnetns\fR}, counted since it started, and
\fBnetlens_failed_overflow_total\fR{\fBnetns\fR}.
"#;
