//! What `netlens snapshot` prints: its table and its JSON keys.
//! Pure data: build.rs includes it (through sections/mod.rs).

pub const SNAPSHOT: &str = r#".SH SNAPSHOT OUTPUT
\fBnetlens snapshot\fR takes a baseline sample, then prints \fB\-\-count\fR samples one
\fB\-\-interval\fR apart; each sample's rates cover the interval before it. Without
\fB\-\-json\fR it prints a table like \fBsar \-n DEV\fR and \fBsar \-n EDEV\fR (kB is 1024
bytes), then the conntrack count, max and statistics per second; the conntrack
entries (NAT decoded, as \fBconntrack \-L\fR lists them) only with
\fB\-\-section conntrack\fR. With \fB\-\-json\fR it prints one JSON object per sample,
one per line, with the conntrack entries.
.PP
\fB\-\-section\fR limited to \fBinterfaces\fR, \fBtcp\fR and \fBdns\fR prints nothing that
names a process, so no socket's owner is looked up (no scan of the processes'
open files: seconds of CPU on a host with a million of them), unless
\fB\-\-all\-netns\fR or \fB\-\-record\fR asks for more.
.PP
Names other users choose (process, interface, cgroup and container names, a
recording's description) never reach the terminal as control characters: text
output (snapshot, \fBconns\fR, \fBreplay \-\-info\fR, \fBtrace\fR, \fBread\fR) writes C0
and C1 controls and DEL as \fB\\x1b\fR, as tcpdump does, and the bidirectional
formatting characters and line and paragraph separators as \fB\\u{202e}\fR;
exporter label values hold the same text, then OpenMetrics' own escapes. Every
JSON writer (\fBsnapshot\fR, \fBconns\fR, \fBreplay\fR, \fBtrace\fR, \fBread\fR, \fBload\fR,
\fB\-\-on\-finding\fR) writes those characters as \fB\\u001b\fR-style escapes, which
decode back to the same name.
.SH JSON KEYS
.TP
\fBt\fR, \fBinterval\fR, \fBnetns\fR
Wall-clock time of the sample (Unix seconds), the seconds its rates cover
(monotonic clock), and the namespace watched: a name, a path or "pid N" as given;
without \fB\-\-netns\fR/\fB\-\-pid\fR, "host" in the initial namespace, else its name
from /run/netns as \fBip netns identify\fR prints it (so under
\fBip netns exec NAME netlens\fR it is NAME), else "net:[INODE]".
.TP
\fBsockets_interval\fR
The seconds between the two samples' socket dumps, which the per-socket and
per-process rates (and the connection findings) cover: the dump follows the
interfaces by a time that varies with load (most in the first sample, which
finds the sockets' owners), so a rate times this interval is the bytes moved.
.TP
\fBage\fR, \fBlate[]\fR
Seconds from when the sample was taken to when its line was written (from a
recording: to when it was recorded). The parts that missed their deadline that tick
(half the interval for "interfaces", which the rest reads; three quarters for the others):
\fBpart\fR ("interfaces", "neighbours", "conntrack", "processes", "containers") and
\fBage_ms\fR, the age of the data shown for it (its last good collection; a part
never collected shows empty). Left out when no part was late.
.TP
\fBinterfaces[]\fR
\fBname\fR, \fBindex\fR, \fBkind\fR (veth, bridge... or null), \fBup\fR (IFF_UP),
\fBlower_up\fR (IFF_LOWER_UP: carrier), \fBmtu\fR, \fBmac\fR, \fBaddresses\fR ("addr/prefix"),
\fBspeed_mbps\fR and \fBduplex\fR (null when the driver does not say, and for
virtual devices by their link kind: veth, bridge, dummy, tun, tunnels, loopback...,
whose reported speed is made up; their drops show their limit);
rates per second: \fBrx_packets_per_s\fR, \fBtx_packets_per_s\fR, \fBrx_bytes_per_s\fR,
\fBtx_bytes_per_s\fR, \fButil_percent\fR (sar's %ifutil: full duplex max(rx,tx)/speed,
otherwise (rx+tx)/speed; null when the speed is unknown), \fBrx_errors_per_s\fR,
\fBtx_errors_per_s\fR, \fBrx_dropped_per_s\fR, \fBtx_dropped_per_s\fR,
\fBrx_overruns_per_s\fR, \fBtx_carrier_per_s\fR, \fBcollisions_per_s\fR;
raw counters: \fBrx_bytes\fR, \fBtx_bytes\fR, \fBrx_packets\fR, \fBtx_packets\fR,
\fBrx_errors\fR, \fBtx_errors\fR, \fBrx_dropped\fR, \fBtx_dropped\fR, \fBrx_overruns\fR,
\fBtx_carrier\fR, \fBcollisions\fR;
\fBqdisc\fR: the root qdisc as \fBtc \-s qdisc show dev IF\fR prints it (null when not
collected, e.g. an old recording): \fBkind\fR, \fBhandle\fR ("8001:"), counters \fBbytes\fR,
\fBpackets\fR, \fBdrops\fR, \fBoverlimits\fR, \fBrequeues\fR, the queue now:
\fBbacklog_bytes\fR, \fBbacklog_packets\fR, and rates \fBbytes_per_s\fR, \fBpackets_per_s\fR,
\fBdrops_per_s\fR, \fBoverlimits_per_s\fR, \fBrequeues_per_s\fR (null when the qdisc
was replaced). A rate is null when the interface has no earlier
sample to compare with: it just appeared, was re-created, or its counters went
backwards. A reset never shows as a spike.
.TP
\fBcpus[]\fR
Shown with \fBinterfaces\fR (null when not collected, e.g. an old recording). One object
per CPU by number: \fBcpu\fR; rates per second over the interval: \fBnet_rx_per_s\fR and
\fBnet_tx_per_s\fR (NET_RX/NET_TX softirqs run, /proc/softirqs), \fBsoftirq_percent\fR
(top's si%: the softirq ticks of /proc/stat as a % of the CPU's ticks),
\fBprocessed_per_s\fR, \fBdropped_per_s\fR (backlog full), \fBtime_squeeze_per_s\fR,
\fBreceived_rps_per_s\fR, \fBflow_limit_count_per_s\fR (/proc/net/softnet_stat; 32-bit
counters whose wrap is taken into account); raw counters \fBnet_rx\fR, \fBnet_tx\fR,
\fBprocessed\fR, \fBdropped\fR, \fBtime_squeeze\fR, \fBreceived_rps\fR and
\fBflow_limit_count\fR (null on kernels whose softnet_stat rows are too short: 9 columns
before 2.6.35, 11 before 5.10), \fBbacklog_len\fR (packets waiting now; 5.10 and later).
These are host-wide, whichever namespace is watched. \fBsoftnet_knobs\fR: the live
net.core.netdev_max_backlog, netdev_budget, netdev_budget_usecs and
rps_sock_flow_entries, by sysctl name (read in the host's namespace).
.TP
\fBneighbours\fR
Shown with \fBinterfaces\fR (null when not collected). \fBarp\fR and \fBndisc\fR: the
tables' statistics (/proc/net/stat/arp_cache, ndisc_cache; host-wide, null where they
cannot be read): \fBentries\fR (the table's size now), the counters \fBallocs\fR,
\fBdestroys\fR, \fBforced_gc_runs\fR, \fBunresolved_discards\fR, \fBtable_fulls\fR (summed over
CPUs) and their rates \fBallocs_per_s\fR, \fBdestroys_per_s\fR, \fBforced_gc_runs_per_s\fR,
\fBunresolved_discards_per_s\fR, \fBtable_fulls_per_s\fR, the limits \fBgc_thresh1\fR,
\fBgc_thresh2\fR, \fBgc_thresh3\fR (net.ipv4/ipv6.neigh.default.*) and \fBfill_percent\fR
(entries as a % of gc_thresh3). \fBentries[]\fR: the watched namespace's neighbours
counted by \fBfamily\fR (inet, inet6), \fBinterface\fR and \fBstate\fR (REACHABLE, STALE,
DELAY, PROBE, FAILED, INCOMPLETE, NOARP, PERMANENT as \fBip neigh\fR prints them) with their
\fBcount\fR (an RTM_GETNEIGH dump per family); \fBby_state\fR: the same summed per state.
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
\fBtcp\fR
\fBstates\fR {\fBESTABLISHED\fR, \fBSYN_SENT\fR, \fBSYN_RECV\fR, \fBFIN_WAIT1\fR, \fBFIN_WAIT2\fR,
\fBTIME_WAIT\fR, \fBCLOSE\fR, \fBCLOSE_WAIT\fR, \fBLAST_ACK\fR, \fBLISTEN\fR, \fBCLOSING\fR}: TCP sockets
per state, IPv4 and IPv6, counted from the sock_diag dump (SYN_RECV includes
request sockets); rates per second from /proc/net/snmp and /proc/net/netstat:
\fBretrans_segs_per_s\fR, \fBout_segs_per_s\fR, \fBretrans_percent\fR (RetransSegs /
OutSegs over the interval, null when nothing was sent), \fBlisten_overflows_per_s\fR,
\fBlisten_drops_per_s\fR, \fBsyncookies_sent_per_s\fR, \fBactive_opens_per_s\fR,
\fBpassive_opens_per_s\fR, \fBattempt_fails_per_s\fR, \fBestab_resets_per_s\fR,
\fBout_rsts_per_s\fR, \fBudp_in_errors_per_s\fR, \fBudp_rcvbuf_errors_per_s\fR,
\fBudp_sndbuf_errors_per_s\fR; \fBcounters\fR (raw values by "Group.Name", e.g.
"TcpExt.ListenOverflows": every field of /proc/net/snmp, /proc/net/netstat and
/proc/net/snmp6, the latter's "Ip6InDiscards" as "Ip6.InDiscards") and \fBcounters_per_s\fR (their rates); \fBsockstat\fR
(/proc/net/sockstat: \fBsockets_used\fR, \fBtcp_inuse\fR, \fBtcp_orphan\fR, \fBtcp_tw\fR,
\fBtcp_alloc\fR, \fBtcp_mem_pages\fR, \fBudp_inuse\fR, \fBudp_mem_pages\fR; the kernel
counts tcp_orphan, tcp_alloc and tcp_mem_pages for the whole host, every namespace
together, as \fBss \-s\fR shows them); \fBorphans\fR (this namespace's orphaned
sockets, counted from the dump: no file, in FIN\-WAIT\-1/2, CLOSING or LAST\-ACK; the
text snapshot's \fBorphan\fR column and the TCP tab show this one);
\fBmemory_pressure\fR (tcp_mem_pages at or above the middle value of
net.ipv4.tcp_mem); \fBknobs\fR (sysctl name to value, read live: tcp_max_syn_backlog,
somaxconn, tcp_syncookies, tcp_synack_retries, tcp_fin_timeout, tcp_tw_reuse,
ip_local_port_range, tcp_rmem, tcp_wmem, tcp_mem, netdev_max_backlog (host-wide: absent
in another namespace), and for the findings' fixes tcp_max_orphans, rmem_default,
rmem_max; tcp_mem and tcp_max_orphans are host-wide and read from netlens' own
namespace when the watched one has no entry for them); \fBunix_sockets\fR.
.TP
\fBsockets[]\fR
Every TCP and UDP socket, IPv4 and IPv6, as \fBss \-tuanp\fR lists them: \fBproto\fR (tcp,
udp), \fBfamily\fR (ipv4, ipv6), \fBstate\fR (ss's names: ESTAB, LISTEN, TIME\-WAIT...; UDP
UNCONN or ESTAB), \fBlocal\fR, \fBpeer\fR ("ip:port", "[v6]:port", kept machine-readable:
a LISTEN or unconnected socket's peer is "0.0.0.0:0" or "[::]:0", port 0 meaning none;
the text snapshot and the Sockets tab print addresses as \fBss\fR does: "0.0.0.0:*",
"[::]:*", and "*:*" or "*:22" for a dual-stack IPv6 socket), \fBv6only\fR
(IPV6_V6ONLY: an IPv6 socket that takes no IPv4), \fBrecv_q\fR,
\fBsend_q\fR (for LISTEN: the accept queue length and the backlog limit), \fBpid\fR
and \fBprocess\fR (the first owner; null when unknown), \fBowner_note\fR ("unknown (no
permission)" when a /proc/PID/fd could not be read, "looking" while \fBowner_pending\fR),
\fBowner_pending\fR (true while the owner is still being looked for, by a thread beside
the sampler: it fills in at a later sample; absent otherwise), \fBusers\fR [{\fBprocess\fR,
\fBpid\fR, \fBfd\fR}], \fBcontainer\fR (the first owner's container, absent
outside containers: as in \fBprocesses[]\fR), \fBuid\fR, \fBinode\fR; from tcp_info (null for UDP, TIME\-WAIT
and SYN\-RECV): \fBrtt_ms\fR, \fBrttvar_ms\fR, \fBcwnd\fR (segments), \fBretrans\fR and
\fBtotal_retrans\fR (retransmissions over the connection's life), \fBbytes_acked\fR,
\fBbytes_received\fR, \fBlast_send_ms\fR, \fBlast_recv_ms\fR (age of the last data sent
and received); \fBdrops\fR (sk_meminfo drops), \fBrcvbuf\fR (sk_meminfo rcvbuf, ss's rb), \fBqueue_streak\fR (samples in a row
with a queue that made no progress), \fBaccept_queue_full\fR; \fBlimits\fR (TCP sockets
that have sent or hold unsent data, as \fBss \-ti\fR prints them): \fBbusy_ms\fR (time
with data in flight), \fBrwnd_limited_ms\fR and \fBrwnd_limited_pct\fR (of it, waiting
on the receiver's window), \fBsndbuf_limited_ms\fR and \fBsndbuf_limited_pct\fR (on
this socket's send buffer), \fBdelivery_rate_bps\fR, \fBapp_limited\fR (the rate was
measured while the application had nothing more to send), \fBmin_rtt_ms\fR,
\fBnotsent_bytes\fR, \fBsnd_wnd\fR (the peer's window, bytes), \fBreord_seen\fR,
\fBdsack_dups\fR (retransmits the peer reported as duplicates).
.TP
\fBprocesses[]\fR
Every process holding a socket, busiest first (see PROCESSES): \fBpid\fR,
\fBcommand\fR, \fBuser\fR, \fBcgroup\fR (container or systemd unit, null when
none), \fBcontainer\fR (absent outside containers: \fBruntime\fR, \fBid\fR, and
where the runtime says \fBname\fR, \fBpod\fR, \fBk8s_namespace\fR; see CONTAINERS), \fBtcp_send_bytes_per_s\fR and \fBtcp_recv_bytes_per_s\fR (from its TCP
sockets' tcp_info bytes_acked and bytes_received over the interval),
\fBudp_bytes_per_s\fR (its captured UDP flows, both ways; null with capture off),
\fBsockets\fR, \fBstates\fR ({"ESTAB": 3, "LISTEN": 1, ...}),
\fBretrans_per_s\fR, \fBmax_rtt_ms\fR (its slowest established socket).
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
\fBfirst_seen\fR, \fBlast_seen\fR (Unix seconds), \fBpid\fR and \fBprocess\fR (the
owner of the local end, joined with the socket table by the two endpoints; null when
unknown), \fBfindings[]\fR ({\fBid\fR, \fBsummary\fR} from the flow's own analysis, as
\fBnetlens read \-\-flows \-\-json\fR prints them), \fBnat\fR (null unless conntrack
translated the flow: \fBkind\fR dnat, snat or snat+dnat, \fBtranslated\fR (the flow's
packets are the ones after the translation), \fBstate\fR as \fBconntrack \-L\fR names it,
\fBoriginal\fR and \fBreply\fR {\fBsrc\fR, \fBdst\fR}: the entry's two tuples, from
this sample's or the previous one's dump of the entries, which \fBsnapshot \-\-json\fR
asks for with the flows).
.TP
\fBnetlens read \-\-flows \-\-json\fR
One object per flow per line: \fBproto\fR, \fBsrc\fR, \fBdst\fR, \fBpackets\fR,
\fBbytes\fR, \fBstate\fR, \fBrtt_ms\fR, \fBretransmits\fR, \fBfirst_seen\fR,
\fBlast_seen\fR and \fBfindings[]\fR {\fBid\fR, \fBsummary\fR}: nagle\-delayed\-ack,
retransmits, zero\-window, syn\-unanswered, rst\-after\-data (see FINDINGS).
.TP
\fBdns\fR
DNS results settled during the interval (null when not collected, e.g. an old
recording). \fBprobes[]\fR: one object per probe query (\fB\-\-dns\-probe\fR) and
\fBpassive[]\fR: one per query seen by the capture and matched to its response
(or timed out), each with \fBserver\fR ("ip:port"), \fBname\fR, \fBqtype\fR (A, AAAA,
PTR, ...), \fBlatency_ms\fR (null on timeout or error), \fBoutcome\fR (ok, timeout,
nxdomain, servfail, refused or error), \fBt\fR (Unix seconds the query was sent)
and \fBanswers\fR (the first 4 answer records). \fBservers[]\fR: per server and
\fBsource\fR (probe or passive) over the interval: \fBcount\fR, \fBp50_ms\fR,
\fBp90_ms\fR, \fBp99_ms\fR, \fBmax_ms\fR, \fBtimeouts\fR, \fBservfail_percent\fR,
\fBnxdomain_percent\fR, \fBrefused_percent\fR. \fBconfig\fR: the resolver
configuration: \fBnameservers[]\fR {\fBaddress\fR, \fBstub\fR (e.g. "systemd\-resolved
stub" for a loopback server, or null)}, \fBsearch[]\fR, \fBtimeout_s\fR,
\fBattempts\fR, \fBrotate\fR, \fBndots\fR (resolv.conf), \fBhosts_entries\fR
(/etc/hosts), \fBnsswitch_hosts\fR (the hosts line of nsswitch.conf), \fBerror\fR.
Also \fBprobe_servers[]\fR, \fBprobe_specs[]\fR ("A example.com"), \fBpassive_on\fR,
\fBpassive_error\fR, \fBpassive_dropped\fR (results over the bound of 2,000 per
sample, and queries whose answer the capture may have dropped: not timeouts),
\fBtimeout_s\fR (after which an unanswered query is a timeout).
.TP
\fBdrops\fR
The kernel's drop reasons, counted by an eBPF program on \fBskb:kfree_skb\fR since
netlens started (null in a recording made without them). \fBavailable\fR (false
with \fB\-\-no\-bpf\fR or when the program cannot load), \fBunavailable\fR (why, and
what would fix it; null while counting), \fBlost\fR (the watched namespace's drops,
every namespace's when it is the initial one, not counted because the kernel map
was full), \fBrows[]\fR, busiest first (by \fBper_s\fR, then
\fBpackets\fR): \fBnetns\fR ("host", the \fBip netns\fR name, or "netns:INODE"; "\-"
for a packet with neither device nor socket), \fBreason\fR (the kernel's name
without SKB_DROP_REASON_, e.g. NO_SOCKET; "reason N" when the running kernel has
no name for N), \fBlocation\fR (the kernel function that dropped it, from
/proc/kallsyms), \fBinterface\fR (the packet's device; "ifN" outside the watched
namespace; null without one), \fBproto\fR and \fBport\fR (the socket the drop
concerned: tcp, udp, unix...; null without one; port 0 stands for any port in the
watched namespace's ip_local_port_range, a client's, so that connections share
one row), \fBdestination\fR (NETFILTER_DROP only: where the packet was going
when the rule dropped it, "198.18.3.2:8080", "[2001:db8::1]:443", the address alone
without a port or with one in that range; null otherwise, and past the first 256
destinations, whose drops count in their site's row without one), \fBtranslated_from\fR
(where it was going before conntrack translated it, e.g. a DNAT in prerouting;
null when it was not), \fBpid\fR and \fBprocess\fR (the
process owning that port in the watched namespace, listeners first; null when
unknown), \fBpackets\fR (cumulative) and \fBper_s\fR. With \fB\-\-netns\fR or
\fB\-\-pid\fR only that namespace's rows; in the initial namespace every
namespace's.
.TP
\fBfirewall\fR
With \fBdrops\fR, when the rules were read (see DROPS): \fBunavailable\fR (why they
could not be; null), \fBtotal_rules\fR (the whole ruleset's), \fBleft_out\fR
(dropping rules past 5,000), \fBdropping[]\fR (every rule whose verdict drops and
every base chain whose policy drops, in ruleset order), \fBcandidates[]\fR (those
without a counter, when the NETFILTER_DROP drops exceed what the counted rules
explain) and \fBunexplained_per_s\fR (that excess). A rule: \fBbackend\fR
("nftables" or "iptables-legacy"), \fBfamily\fR, \fBtable\fR, \fBchain\fR,
\fBhandle\fR (nf_tables; null for iptables), \fBposition\fR (1\-based in its chain; 0
for a policy), \fBpolicy\fR, \fBtext\fR (as \fBnft list ruleset\fR prints it with the
counter's values left out, or as \fBiptables\-save\fR does; a policy reads "policy
drop" or ":INPUT DROP"), \fBverdict\fR ("drop" or "reject"), \fBpackets\fR and
\fBbytes\fR (its counter; null without one) and \fBper_s\fR (its drops per second
over the interval; null without a counter or an earlier read).
.TP
\fBfindings[]\fR
\fBid\fR, \fBseverity\fR (info, warn or crit), \fBsummary\fR, \fBhint\fR,
\fBevidence\fR {\fBtab\fR, \fBrow\fR}: where the evidence is shown, \fBsince\fR (the
Unix time of the sample where it began to show) and \fBcalm\fR (samples in a row its
condition has not held: 0 while it fires; see Hysteresis under FINDINGS). Firing
findings come first, then by severity, then the newest.
"#;
