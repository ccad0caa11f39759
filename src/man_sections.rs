//! Hand-written man page sections (roff). Pure data: build.rs includes this
//! file. Options and keys are generated; these explain the rest.

pub const SECTIONS: &str = r#".SH SNAPSHOT OUTPUT
\fBnetlens snapshot\fR takes a baseline sample, then prints \fB\-\-count\fR samples one
\fB\-\-interval\fR apart; each sample's rates cover the interval before it. Without
\fB\-\-json\fR it prints a table like \fBsar \-n DEV\fR and \fBsar \-n EDEV\fR (kB is 1024
bytes), then the conntrack count, max and statistics per second; the conntrack
entries (NAT decoded, as \fBconntrack \-L\fR lists them) only with
\fB\-\-section conntrack\fR. With \fB\-\-json\fR it prints one JSON object per sample,
one per line, with the conntrack entries.
.SH JSON KEYS
.TP
\fBt\fR, \fBinterval\fR, \fBnetns\fR
Wall-clock time of the sample (Unix seconds), the seconds its rates cover
(monotonic clock), and the namespace watched ("host", a name, a path or "pid N").
.TP
\fBinterfaces[]\fR
\fBname\fR, \fBindex\fR, \fBkind\fR (veth, bridge... or null), \fBup\fR (IFF_UP),
\fBlower_up\fR (IFF_LOWER_UP: carrier), \fBmtu\fR, \fBmac\fR, \fBaddresses\fR ("addr/prefix"),
\fBspeed_mbps\fR and \fBduplex\fR (null when the driver does not say);
rates per second: \fBrx_packets_per_s\fR, \fBtx_packets_per_s\fR, \fBrx_bytes_per_s\fR,
\fBtx_bytes_per_s\fR, \fButil_percent\fR (sar's %ifutil: full duplex max(rx,tx)/speed,
otherwise (rx+tx)/speed; null when the speed is unknown), \fBrx_errors_per_s\fR,
\fBtx_errors_per_s\fR, \fBrx_dropped_per_s\fR, \fBtx_dropped_per_s\fR,
\fBrx_overruns_per_s\fR, \fBtx_carrier_per_s\fR, \fBcollisions_per_s\fR;
raw counters: \fBrx_bytes\fR, \fBtx_bytes\fR, \fBrx_packets\fR, \fBtx_packets\fR,
\fBrx_errors\fR, \fBtx_errors\fR, \fBrx_dropped\fR, \fBtx_dropped\fR, \fBrx_overruns\fR,
\fBtx_carrier\fR, \fBcollisions\fR. A rate is null when the interface has no earlier
sample to compare with: it just appeared, was re-created, or its counters went
backwards. A reset never shows as a spike.
.TP
\fBconntrack\fR
Connection tracking in the watched namespace. \fBavailable\fR (false when
conntrack is not loaded or nothing is tracked in this namespace yet),
\fBreason\fR (why not, or what is missing, in words; null when all is well),
\fBsource\fR (netlink: ctnetlink; proc: /proc/net/stat/nf_conntrack, without
CAP_NET_ADMIN), \fBcount\fR (nf_conntrack_count of this namespace), \fBmax\fR
(nf_conntrack_max), \fBusage_percent\fR, \fBbuckets\fR, \fBacct\fR
(nf_conntrack_acct); the per-CPU statistics summed, per second:
\fBfound_per_s\fR, \fBinvalid_per_s\fR, \fBinsert_per_s\fR, \fBinsert_failed_per_s\fR,
\fBdrop_per_s\fR, \fBearly_drop_per_s\fR, \fBerror_per_s\fR, \fBsearch_restart_per_s\fR,
\fBclash_resolve_per_s\fR, and raw in \fBstats\fR {found, invalid, insert,
insert_failed, drop, early_drop, error, search_restart, clash_resolve,
chaintoolong} (these equal \fBconntrack \-S\fR summed over CPUs);
\fBentries[]\fR: \fBproto\fR, \fBstate\fR (the TCP state; UNREPLIED, REPLIED or
ASSURED for other protocols), \fBorig_src\fR, \fBorig_dst\fR, \fBreply_src\fR,
\fBreply_dst\fR ("ip:port"), \fBnat\fR (snat, dnat, snat+dnat or null),
\fBnat_src\fR (the source SNAT wrote), \fBnat_dst\fR (where DNAT sent it),
\fBtimeout_s\fR, \fBmark\fR, \fBzone\fR, \fBstatus\fR (IPS_* bits),
\fBpackets_orig\fR, \fBpackets_reply\fR, \fBbytes_orig\fR, \fBbytes_reply\fR (null
while nf_conntrack_acct is 0); \fBentries\fR is null and \fBentries_error\fR says
why when they cannot be listed (no CAP_NET_ADMIN). Listing walks the kernel's
whole table (tens of milliseconds at tens of thousands of entries), so the live
view lists entries only while the Conntrack tab is open, at most once a second;
\fBsnapshot\fR always lists them for the samples it prints.
.TP
\fBcapture\fR
Packet capture (absent with \fB\-\-no\-capture\fR): \fBactive\fR, \fBerror\fR (why there
is no capture, e.g. no CAP_NET_RAW, or null), \fBiface\fR ("any" or the name),
\fBfilter\fR (the pcap-filter expression, "" for none), \fBpackets\fR and \fBbytes\fR
that matched since start, \fBpackets_per_s\fR, \fBbytes_per_s\fR,
\fBkernel_received\fR and \fBkernel_dropped\fR (PACKET_STATISTICS: what the socket saw
and what the ring had no room for), \fBkernel_dropped_in_interval\fR,
\fBflows_active\fR and \fBflows_evicted\fR (idle for 120 s, or least recently seen
when the table holds 100,000 flows).
.TP
\fBflows[]\fR
The busiest flows, at most 256 (half by bytes, half by packets): \fBproto\fR,
\fBsrc\fR, \fBdst\fR ("ip:port", "[v6]:port"; src is the side that opened a TCP
connection), \fBpackets\fR, \fBbytes\fR (both directions, since the flow began),
\fBpackets_per_s\fR, \fBbytes_per_s\fR (over the interval; null when the flow was
not listed in the previous sample), \fBstate\fR (SYN_SENT, SYN_RECEIVED, ESTABLISHED,
FIN_WAIT, CLOSED, RESET, or "\-" for other protocols), \fBrtt_ms\fR (SYN to the
handshake's last ACK, as seen where the capture runs), \fBretransmits\fR,
\fBfirst_seen\fR, \fBlast_seen\fR (Unix seconds).
.TP
\fBfindings[]\fR
\fBid\fR, \fBseverity\fR (info, warn or crit), \fBsummary\fR, \fBhint\fR, and
\fBevidence\fR {\fBtab\fR, \fBrow\fR}: where the evidence is shown.
.SH FINDINGS
.TP
\fBiface\-errors\fR
An interface's errors, drops, overruns, carrier errors or collisions rose during
the interval. The hint names the usual cause and the command to look further.
.TP
\fBiface\-saturated\fR
An interface ran at 80% (warn) or 95% (crit) of its link speed, by sar's %ifutil.
.TP
\fBconntrack\-full\fR
The conntrack table is nearly full: nf_conntrack_count is at least 80% of
nf_conntrack_max (warn) or 95% (crit), or early_drop rose (the kernel is evicting
entries to make room: crit); nearly full while drop rises is crit too. New connections are dropped once it is full. Fix:
raise net.netfilter.nf_conntrack_max and the hash size (nf_conntrack_buckets,
about max/4), shorten the timeouts, or stop tracking stateless traffic with a
NOTRACK rule.
.TP
\fBconntrack\-drops\fR
Conntrack dropped packets during the interval: its drop or insert_failed counters
rose (any rise counts). The hint points at a full table, at insert races (UDP DNS
queries sent in parallel from one socket) or at \fBconntrack \-S\fR and the kernel log.
.TP
\fBsmall\-packet\-flood\fR
Captured traffic ran at 10,000 packets/s or more (crit from 100,000) with a mean
packet under 100 bytes: the SYN-flood signature \fBsar \-n DEV\fR shows as high
rxpck/s with low rxkB/s. \fBnetlens read \-\-flows\fR reports it for a file.
.TP
\fBretransmits\fR
A TCP flow sent data it had already sent (a segment ending at or before the
highest sequence seen in that direction). \fBnetlens read \-\-flows \-\-json\fR lists it
in the flow's \fBfindings\fR.
.SH CAPTURE
The live view and \fBsnapshot\fR capture packets on every interface (\fB\-\-iface\fR
picks one) with an AF_PACKET TPACKET_V3 ring of 4 MiB, as libpcap does: the kernel
hands over whole blocks of packets, so capture costs about what tcpdump costs. On
a loopback device each packet would be seen twice (leaving and arriving); the
leaving copy is skipped, as libpcap does. Only the first 384 bytes of each packet
are kept: enough for every header and for DNS names (\fB\-\-payload\fR keeps whole
packets). Packets the ring had no room for are counted by the kernel and shown as
"kernel drops" in the Flows tab and "cap drops" in the header. Lines are printed
only while the Flows tab is open, at most 2,000 per tenth of a second; flows are
counted for every packet. \fBnetlens capture\fR prints what \fBtcpdump \-n\fR prints, or
writes a pcap file (\fB\-w\fR) that tcpdump and Wireshark read; Ctrl-C or SIGTERM
stops it with the file complete. Interfaces are in the watched namespace: \fB\-\-netns\fR
applies.
.SH PRIVILEGES
Interfaces, their counters, addresses and speed need no privileges. Watching
another namespace (\fB\-\-netns\fR, \fB\-\-pid\fR) needs CAP_SYS_ADMIN to enter it, in
practice root. The conntrack entry list and the exact statistics come from
ctnetlink, which needs CAP_NET_ADMIN; without it the Conntrack tab still shows the
count, max and statistics from /proc and says why the entries are missing.
Packet capture needs CAP_NET_RAW (the ring is locked in memory with CAP_IPC_LOCK
when available). Without it the Flows tab says so and the other tabs work; grant
it once with \fBsudo setcap cap_net_raw,cap_net_admin+ep $(which netlens)\fR.
.SH ENVIRONMENT
.TP
\fBNO_COLOR\fR
When set and not empty, no colour is used, as with \fB\-\-no\-color\fR. The selection
stays visible in reverse video.
.SH EXIT STATUS
0 on success; 1 with a one-line message on standard error for any failure (unknown
namespace, no permission, stdout not a terminal for the live view); 2 for a usage
error.
"#;
