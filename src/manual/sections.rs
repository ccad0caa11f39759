//! Hand-written man page sections (roff). Pure data: build.rs includes this
//! file. Options and keys are generated, and so is the threshold list (from
//! findings/thresholds/table.rs); these explain the rest.

pub const SECTIONS: &str = r#".SH SNAPSHOT OUTPUT
\fBnetlens snapshot\fR takes a baseline sample, then prints \fB\-\-count\fR samples one
\fB\-\-interval\fR apart; each sample's rates cover the interval before it. Without
\fB\-\-json\fR it prints a table like \fBsar \-n DEV\fR and \fBsar \-n EDEV\fR (kB is 1024
bytes), then the conntrack count, max and statistics per second; the conntrack
entries (NAT decoded, as \fBconntrack \-L\fR lists them) only with
\fB\-\-section conntrack\fR. With \fB\-\-json\fR it prints one JSON object per sample,
one per line, with the conntrack entries.
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
with a queue that made no progress), \fBaccept_queue_full\fR.
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
\fBnetlens read \-\-flows \-\-json\fR prints them).
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
sample), \fBtimeout_s\fR (after which an unanswered query is a timeout).
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
one row), \fBpid\fR and \fBprocess\fR (the
process owning that port in the watched namespace, listeners first; null when
unknown), \fBpackets\fR (cumulative) and \fBper_s\fR. With \fB\-\-netns\fR or
\fB\-\-pid\fR only that namespace's rows; in the initial namespace every
namespace's.
.TP
\fBfindings[]\fR
\fBid\fR, \fBseverity\fR (info, warn or crit), \fBsummary\fR, \fBhint\fR,
\fBevidence\fR {\fBtab\fR, \fBrow\fR}: where the evidence is shown, \fBsince\fR (the
Unix time of the sample where it began to show) and \fBcalm\fR (samples in a row its
condition has not held: 0 while it fires; see Hysteresis under FINDINGS). Firing
findings come first, then by severity, then the newest.
.SH FINDINGS
Hysteresis: a finding shows once its condition held for \fBfindings_on_samples\fR
samples in a row (default 1) and stays until it was calm for \fBfindings_off_samples\fR
samples in a row (default 3), so a condition that comes and goes every other second
does not blink. While calm it is listed after the firing ones as
"calm N ID (was CRIT)", never as a live CRIT. The live view, snapshot, replay,
record and export all compute it alike from the samples in order: replay's
\fB\-\-json\fR prints what snapshot printed. The header shows the first finding and
how many there are ("3 findings"); \fB!\fR lists them all, the selected one whole.
Every fix that names a knob is computed from its live value (syncookies
already on: the next steps, not "turn them on").
.\" FINDINGS TABLE: build.rs puts src/findings/names.rs here
.PP
The flow findings (and a flow's \fBretransmits\fR, which adds the retransmission
timeout and backoff: the gaps between successive retransmits of one segment, e.g.
"RTO 204 ms, backoff 204 → 408 → 816 ms"; fast retransmits follow duplicate ACKs)
come from the per-flow analysis, the same code live, in \fBsnapshot\fR and in
\fBnetlens read\fR. In \fBfindings[]\fR they name the flow and its process, for flows
active in the last 60 s, at most 5 flows per id.
.TP
\fBcounter:\fIGroup.Name\fR
Generated from the COUNTER CATALOGUE: a catalogued counter rose faster than its
entry's threshold over the interval (\fBcounter:Udp.NoPorts\fR,
\fBcounter:TcpExt.TCPBacklogDrop\fR, \fBcounter:netdev.rx_missed_errors\fR,
\fBcounter:qdisc.drops\fR). The id is "counter:" and the entry's id, stable across
releases. \fBseverity\fR is the entry's (warn or crit); \fBsummary\fR is
"[IF: ]ID RATE/s in netns NS: MEANING" (IF for netdev and qdisc counters, RATE per
second over the interval, as \fBnstat\fR's delta divided by the interval);
\fBhint\fR is the entry's fix; \fBevidence\fR is {tab "tcp", row ID} for the
snmp/netstat/snmp6 counters, {tab "interfaces", row IF} for netdev and qdisc, {tab
"conntrack", row ID} for conntrack. Info entries (normal life) and counters a finding
above reports already (ListenOverflows: listen\-overflow; RetransSegs: retransmits;
SyncookiesSent: syn\-flood; rx_errors: iface\-errors; conntrack drop: conntrack\-drops;
qdisc drops while iface\-saturated names the interface) raise none. In export,
\fBnetlens_finding\fR{\fBid\fR="counter:..."} counts them like the others.
.TP
\fBdrop:\fIREASON\fR
Generated from DROP REASONS: the kernel's drops of one reason in the watched
namespace (summed over its sites in the Drops tab) rose faster than the reason's
threshold over the interval (\fBdrop:NETFILTER_DROP\fR, \fBdrop:NO_SOCKET\fR,
\fBdrop:QDISC_DROP\fR). The id is "drop:" and the reason as the kernel names it
without SKB_DROP_REASON_. \fBseverity\fR is the reason's (warn or crit);
\fBsummary\fR is "REASON RATE/s in netns NS at LOCATION[ on IF][, PROTO:PORT PID
N (COMMAND)]: MEANING", naming the busiest site (the kernel function that dropped,
the packet's interface, the socket and the process holding it); \fBhint\fR is the
reason's fix; \fBevidence\fR is {tab "drops", row REASON}. Info reasons (normal
life) and reasons a finding above reports (TCP_LISTEN_OVERFLOW: listen\-overflow;
SOCKET_RCVBUFF: udp\-drops; CPU_BACKLOG: iface\-errors) raise none. While a
reason's finding is raised, a \fBcounter:\fR finding whose entry counts the same
drops is not (the reason is the more specific claim). A reason the table lacks (a
newer kernel) raises \fBdrop:unknown\fR above 1/s, its name in the summary and
the evidence row.
.PP
A finding clears as soon as its condition no longer holds. Every number above is
a default: \fB[thresholds]\fR in the config file changes it (see CONFIGURATION).
Press \fB!\fR for the list of active findings; Enter on one opens the tab and the
row its evidence is in (the interface, the socket or listener, the TCP state or
counter, the flow), or, for a group of sockets (close\-wait, port\-exhaustion,
connect\-timeout), the Sockets tab filtered to that group.
.SH CROSS-LINKS
\fBx\fR goes from the selected row to the related rows of another tab: from an
interface to the Flows tab filtered to the flows to or from its addresses (flows
carry addresses, not interfaces; an interface without an address has none to
show); from a socket to the Flows tab showing its flow (either side may have spoken
first); from a flow (one row per flow, \fBa\fR) to the Sockets tab filtered to its
process's sockets (\fBpid:N\fR), with the flow's own socket selected, or to its
5-tuple when no process owns it. The filters it sets are in the FILTERS language
(\fBhost:ADDR or host:ADDR2\fR, \fBproto:tcp host:A:P host:B:Q\fR, \fBpid:N\fR).
.SH SMALL PANES AND TMUX
Below 60 columns or 12 rows, or always with \fB\-\-compact\fR (config
\fBcompact = true\fR), the live view drops the header, tab bar and footer and keeps one
status line (tab, worst finding or "ok", PAUSED or REC, a filter being typed) above
the tab's table, whose columns give way by priority; a 40x8 pane shows each tab's
essentials. Nothing wraps or overlaps at any size, and a resize redraws at once.
.PP
\fBnetlens tmux\fR [\fB\-\-session\fR NAME] [\fB\-\-detached\fR] opens a layout of four
compact panes: Interfaces, TCP, Flows and DNS, each \fBnetlens \-\-compact \-\-tab\fR T
with the same \fB\-\-interval\fR, \fB\-\-netns\fR/\fB\-\-pid\fR, \fB\-\-config\fR,
\fB\-\-no\-color\fR and \fB\-\-mouse\fR. Outside tmux it creates session NAME
(default netlens) and attaches to it, unless \fB\-\-detached\fR; inside tmux ($TMUX
set) it opens a new window named NAME in the current session. The Flows pane
captures packets (with \fB\-\-iface\fR and \fB\-\-filter\fR); the DNS pane captures only
\fBudp port 53\fR (the queries seen on the wire) and gets \fB\-\-dns\-probe\fR,
\fB\-\-dns\-server\fR and \fB\-\-dns\-timeout\fR; the other panes run with
\fB\-\-no\-capture\fR, and with \fB\-\-no\-capture\fR none captures. \fB\-\-tmux\-socket\fR NAME talks to the server \fBtmux \-L\fR NAME
runs. Without tmux installed it fails with a one-line error. For your own tmux
config, \fBassets/netlens.tmux\fR in the source builds the same layout:
\fBtmux source-file netlens.tmux\fR.
.PP
netlens reads the terminal itself: Esc followed by a key's escape sequence in
the same read (over SSH, or \fBtmux send\-keys Escape F3\fR) is Esc then that key,
and Esc followed by a letter is Esc then the letter. Ctrl\-Z and SIGTSTP suspend
(main screen, cursor shown, cooked mode) until \fBfg\fR. The frame is at most 1000
columns by 500 rows; a larger terminal shows it in its top left corner.
.PP
netlens works under TERM=screen-256color and tmux-256color, through detach and
attach, and takes the mouse only with \fB\-\-mouse\fR or \fBmouse = true\fR, so tmux
keeps its own mouse (pane selection, copy mode) by default.
.SH DNS
The DNS tab shows the resolver configuration (nameservers of /etc/resolv.conf, a
loopback server marked as a stub, search domains, options timeout, attempts,
rotate, ndots; the number of /etc/hosts entries; the hosts line of
nsswitch.conf), a table per server and source ("probe", or "wire" for queries
seen by the capture; netlens's own probes seen on the wire count once, as
probes) over the history (5 minutes): count, p50, p90, p99 and max
latency in ms, timeouts, SERVFAIL, NXDOMAIN and REFUSED in percent; the selected
server's latency histogram and, for probes, its timeline (one character per
sample: a bar by latency, x timeout, n NXDOMAIN, u ICMP port unreachable
(nothing listens on the server's port; "unreachable" in JSON), ! other failure,
\[pc] none);
the slowest and the failing names; and a PTR line when reverse lookups were seen.
.PP
Passive (the default, sends nothing): every DNS query over UDP port 53 that the
capture sees (before any \fB\-\-filter\fR) is matched to its response by client,
server, id and question. It needs capture (CAP_NET_RAW); \fBrecord\fR and
\fBexport\fR carry probes only.
.PP
Probes (opt-in): \fB\-\-dns\-probe\fR PROBE, repeatable, or \fBn\fR in the tab. PROBE is
NAME or \fBA:\fRNAME (A), \fBAAAA:\fRNAME, \fBPTR:\fRADDRESS, or a bare IP address (its
PTR). Each probe queries every server of \fB\-\-dns\-server\fR ADDR[:PORT] (repeatable),
or when none is given the nameservers of /etc/resolv.conf (at most 3, as glibc),
once per interval: one thread per server sends one query at a time over a fresh UDP
socket, recursion desired, no cache and no retry, and waits up to
\fB\-\-dns\-timeout\fR (default: resolv.conf's options timeout, else 5 s). Nothing else
is read from the system configuration and no other server is ever asked.
.SH NAMES
Off by default: addresses and ports show as numbers, as \fBss \-n\fR prints them, and
no name is looked up. \fBN\fR in the live view (or \fB\-\-resolve\fR, for the live view
and \fBsnapshot\fR) turns names on for both: reverse names for addresses and service
names for ports, in Sockets (Local, Peer, the info lines and the socket's detail) and
Flows (the FLOW column, the per-host and per-port groups, and the flow screen).
Service names are off by default too, unlike \fBss\fR without \fB\-n\fR, because the
numbers are what the filters, the capture filter and the other tools match on, and one
key then shows every name or none; /etc/services is read once, at most 1 MiB,
lines over 512 bytes and names over 32 bytes skipped, at most 20000 ports.
.PP
Reverse names are PTR queries sent by netlens itself, over UDP from the namespace
netlens runs in, to the first \fB\-\-dns\-server\fR, else the first nameserver of
/etc/resolv.conf (/etc/hosts is not consulted). They go from one resolver thread,
at most 20 a second, each given up after 2 s; a name is cached 10 minutes, no name
(NXDOMAIN, an empty answer) 5 minutes and a timeout 1 minute; the cache holds 4096
addresses, the oldest going first. A frame never waits: an address whose lookup is
pending, stalled or failed shows as the address. A name is shown only if it is made
of letters, digits, '\-', '_' and '.'. Loopback and unspecified addresses are not
looked up. \fBsnapshot \-\-resolve\fR waits up to the timeout per sample, then adds
\fB"names": {"ADDRESS": "NAME"}\fR to its JSON (a Names section to the text).
\fBtrace \-\-resolve\fR uses the same resolver.
.PP
With capture on, the name a client asks a server for is read from the packets that
pass (no traffic of netlens' own): the TLS ClientHello's server_name (SNI), an HTTP/1
request's Host header, and the SNI in a QUIC v1 client Initial (its keys derive from
the Destination Connection ID, RFC 9001; a whole Initial is authenticated, one cut
short by the snap length is read unauthenticated). The first 3 payloads a client
sends on each flow are looked at; the name shows in the Flows table's NAME column
(shown while a flow has one), the flow screen, \fBsni\fR and \fBhttp_host\fR of
\fBsnapshot \-\-json\fR's flows, and recordings.
.SH DROPS
The Drops tab (\fB8\fR, \fB\-\-tab drops\fR) answers "why are packets dropped, where,
and what do I change": one row per drop site the kernel reported on the
\fBskb:kfree_skb\fR tracepoint, busiest first: REASON (SKB_DROP_REASON_* without the
prefix), drops per second over the interval, the total since netlens started counting,
NETNS (a column when rows of more than one namespace are shown: the host view shows
every namespace's, \fB\-\-netns\fR and \fB\-\-pid\fR that namespace's), WHERE (the
kernel function that dropped it), IFACE/SOCKET (the packet's interface, or the socket as
"udp:5353 (812/avahi\-daemon)": protocol, local port, pid and command of the process
holding it), TREND (a sparkline of the reason's rate in that namespace) and the
reason's meaning as far as the width allows; the selected row's meaning is shown whole
under the table. A reason this kernel has that DROP REASONS lacks is shown by its name
with "not in the catalogue". Below: the failure counters that moved in this interval
with their rates per second (the COUNTER CATALOGUE's, and any snmp/netstat field it
does not list, marked "not in the catalogue"). When drop reasons are not counted (no
CAP_BPF/CAP_PERFMON, \fB\-\-no\-bpf\fR, a kernel without drop reasons, a recording
made without them) one line says why, and the counters are still shown. \fBEnter\fR
opens a reason: its meaning, fix and finding, its sites, and the related counters with
their rates; \fBo\fR goes to the site's socket (the Sockets tab filtered on its protocol
and port) and \fBi\fR to its interface (the Interfaces tab). Rows, rates and
sparklines come from the samples, so a replayed recording shows what was recorded.
.SH PROCESSES
The Processes tab (\fB9\fR, \fB\-\-tab processes\fR) answers "which process is using the
network", as nethogs does, with no packet copy: one row per process holding a socket,
busiest (sent plus received) first: PID, Command, User, Cgroup (the container's name
when its runtime gives one, "web" or "NAMESPACE/POD/CONTAINER" (see CONTAINERS); else
its runtime and short id: "docker:3f2a1b9c8d7e", "containerd:...", "crio:...",
"podman:...", "k8s:podUID/...", "nspawn:NAME", "lxc:NAME"; else the innermost systemd
unit, "nginx.service"; from /proc/PID/cgroup), TCP send/s and TCP recv/s (the change
of its TCP sockets' tcp_info bytes_acked and bytes_received over the interval: payload
the peer acknowledged, and payload received), UDP/s (its captured UDP flows' bytes,
both ways, when capture is on; only the flows a sample carries), Socks, Estab, Lstn
(sockets by state), Retr/s (tcpi_total_retrans) and max rtt (ms). A connection that
closes between two samples is counted to its end from the CONNECTION LOG's final tcp_info,
under the process that held it (listed even when it holds no socket any more). Not
counted: sockets whose owner is unknown (other users' without root), and, without a
connection log (older recordings), a closing socket's bytes after its last sample; the
tab says so under the table. A socket shared by several processes is counted under the first. \fBs\fR,
\fB<\fR, \fBI\fR sort by any column; \fB/\fR filters by pid, command, user or
cgroup. \fBEnter\fR lists the process's sockets with their own rates; \fBx\fR goes to
them in the Sockets tab (filter "pid=PID"). \fBsnapshot \-\-section processes\fR
prints the same rows (\fBprocesses[]\fR in JSON), and replays show them from the
recorded sockets. \fBexport \-\-per\-process\fR (off by default: one series per
process) adds the counters \fBnetlens_process_tcp_sent_bytes_total\fR,
\fBnetlens_process_tcp_received_bytes_total\fR, \fBnetlens_process_udp_bytes_total\fR
and \fBnetlens_process_tcp_retransmits_total\fR {\fBpid\fR, \fBcommand\fR,
\fBcgroup\fR, \fBcontainer\fR (its name as the Cgroup column shows it, "" outside
containers; no more series than the pids)}, summed since the exporter started; a
process that holds no socket any more leaves the page.
.SH CONTAINERS
A socket owner's container comes from /proc/PID/cgroup (docker, containerd/CRI,
CRI-O, podman, Kubernetes, systemd-nspawn and LXC layouts) and its name from the
runtime, read without a daemon where root can: Podman's
/var/lib/containers/storage/overlay-containers/containers.json (rootless: under the
owner's ~/.local/share/containers), else conmon's command line (\fB-n NAME -c ID\fR);
Docker's /var/lib/docker/containers/ID/config.v2.json; the OCI bundle's config.json of
containerd (/run/containerd/io.containerd.runtime.v2.task/*/ID) and CRI-O (its
userdata), whose annotations give the Kubernetes container, pod and namespace. Where
those files are unreadable, Docker's API (/var/run/docker.sock) or Podman's
(/run/podman/podman.sock; rootless: /run/user/UID/podman/podman.sock) is asked
\fBGET /containers/ID/json\fR from a thread of its own (one 0.5 s deadline for
connect, request and answer, 1 MiB answer limit), so a stalled daemon or a socket
that never accepts never delays a sample; an unnamed container is asked again at
most every 5 s. Every state file is opened without waiting and without following a
symbolic link in its last place, and read only when it is a regular file of at most
16 MiB (containers.json), 4 MiB (config.v2.json, config.json) or 64 KiB (conmon's
command line); a rootless store only when it
belongs to the process's user. A FIFO or device put there names nothing. What a
user controls (their rootless store and API socket, where a FUSE mount can make any
open or read wait for good) is read on a thread of its own, one per user and at most
16 at once: a sample waits for it at most 0.2 s, and never again for a user whose
look-up once took longer; until the answer comes, their container shows by runtime
and id. Every name
read from outside (container, pod, Kubernetes namespace, cgroup, process, interface
and namespace names) is kept to at most 253 bytes, a cut one ending in "~", with its
control characters written as escapes (\fB\\x1b\fR). The Processes tab's Cgroup
column, the Sockets tab's process cell ("[web] httpd/42"), its info line and detail
screen, \fBsnapshot \-\-json\fR and \fBexport \-\-per\-process\fR show it.
.SH LOAD
\fBnetlens load\fR generates load to watch in the other tabs, from the command line
or from the Load tab. Every run is bounded by a duration (at most one hour) or a
count, and sends only to the address it was given: no redirects, no discovery.
\fBload serve\fR is the other end of \fBload tcp\fR, \fBload udp\fR and \fBload http\fR
(TCP and UDP on one port, 5201 by default); a TCP connection that does not start
with the tcp test's header is answered as HTTP/1.1 (closed at once if it holds a NUL
byte). \fBload tcp\fR also runs against a real \fBiperf3 \-s\fR: it opens with
iperf3's 37-byte cookie, which an iperf3 server answers with PARAM_EXCHANGE and
\fBload serve\fR closes, then speaks iperf3's protocol (parameters and results as JSON,
data connections that start with the cookie), so the receiver's bytes in a forward
test, and the sender's in a reverse one, are the iperf3 server's own counts; an iperf3
server busy with another test is reported as such. \fBload pktgen\fR drives the
kernel's pktgen (CONFIG_NET_PKTGEN, \fBmodprobe pktgen\fR) through /proc/net/pktgen:
per thread \fBrem_device_all\fR and \fBadd_device\fR, per device \fBcount\fR,
\fBclone_skb\fR, \fBpkt_size\fR, \fBdelay\fR, \fBdst\fR, \fBdst_mac\fR, then \fBstart\fR in
pgctrl (and \fBstop\fR at the time cap); it reads each device's Result line.
The global \fB\-\-interval\fR sets how often a load reports (1s by default);
\fB\-\-netns\fR and \fB\-\-pid\fR run the load (or the server) inside that namespace.
.SH BELOW THE SOCKETS
The Interfaces tab has a CPU panel below its table once the terminal has 12 rows for
the tab: one row per CPU, busiest first (packets processed, else NET_RX softirqs), under a
totals row \fBall\fR: NET_RX/s and NET_TX/s (softirqs run, \fB/proc/softirqs\fR), si% (as
top shows it, from \fB/proc/stat\fR), pkt/s, drop/s, sqz/s, rps/s and flim/s
(\fB/proc/net/softnet_stat\fR's processed, dropped, time_squeeze, received_rps and
flow_limit_count per second; "\-" where the kernel's rows lack the column), and a
sparkline of NET_RX/s. A CPU whose backlog drops is marked DROP. Its title line shows the
live net.core.netdev_max_backlog, netdev_budget/netdev_budget_usecs and
rps_sock_flow_entries, and the ARP table's entries against gc_thresh3 with the watched
namespace's neighbours by state (REACH, STALE, FAIL, INCOMP). CPU and neighbour table
figures are host-wide whichever namespace is watched; the neighbour entries are the
watched namespace's. Enter on an interface shows its neighbours by family and state as
\fBip neigh show dev IF\fR counts them ("neigh inet REACHABLE 3 STALE 1"). Enter on a hardware interface (or loopback; not on software devices
such as veth or bridge, by link kind) adds two lines: its queues (\fBethtool \-l\fR:
combined, rx, tx now/max), its rings (\fBethtool \-g\fR: rx, tx now/max), rps_cpus and
xps_cpus per queue (from /sys/class/net/IF/queues, when sysfs is the watched
namespace's), and its interrupts per CPU per second, summed over the
\fB/proc/interrupts\fR lines named after the interface, its bus device (virtio2\-input.0)
or its PCI address (mlx5_comp0@pci:0000:3b:00.0).
.SH EXPORT (OPENMETRICS)
\fBnetlens export\fR [\fB\-\-listen\fR ADDR:PORT] serves the latest sample on
\fBGET /metrics\fR (and HEAD) in the format the scrape's Accept header asks for, as
Prometheus' client_golang chooses: OpenMetrics 1.0 (Content-Type
"application/openmetrics-text; version=1.0.0; charset=utf-8", ending with # EOF) when a
media range names application/openmetrics-text (version 1.0.0, 0.0.1 or none), ranges tried
by falling q; otherwise the classic text format 0.0.4 ("text/plain; version=0.0.4;
charset=utf-8": a counter's HELP and TYPE name its \fB_total\fR sample, no UNIT, no # EOF),
which older Prometheus servers, promtool, curl and most agents get. Both are rendered
once per sample from the same series.
The default address is 127.0.0.1:9464; port 0 picks a free one. The first line on
stdout names the address. Other paths get 404, other methods 405, malformed requests
400, a request head over 8 KiB 431, one not sent within 5 s 408; one request per
connection. Idle or slow clients cannot delay a scrape: the accept loop never waits, up
to 4096 connections are held (fewer under a lower descriptor limit; the soft limit is
raised to the hard one at start), and when that many are open, or descriptors run out,
the oldest connection still sending its request is closed first. The collectors run once per
\fB\-\-interval\fR on the sampler thread (inside \fB\-\-netns\fR/\fB\-\-pid\fR when given);
each sample is rendered once and every scrape until the next one gets that text.
Every series has the label \fBnetns\fR. Names follow node_exporter where it has the metric:
\fBnode_network_{receive,transmit}_{bytes,packets,errs,drop,fifo}_total\fR,
\fBnode_network_receive_{frame,multicast}_total\fR,
\fBnode_network_transmit_{colls,carrier}_total\fR (label \fBdevice\fR),
\fBnode_network_up\fR (IFF_UP and carrier), \fBnode_network_mtu_bytes\fR,
\fBnode_network_speed_bytes\fR (when known); \fBnode_sockstat_*\fR;
\fBnode_netstat_<Group>_<Name>_total\fR for every snmp/netstat/snmp6 counter (counters, so the
OpenMetrics \fB_total\fR suffix is added to node_exporter's untyped name);
\fBnode_nf_conntrack_entries\fR, \fBnode_nf_conntrack_entries_limit\fR and
\fBnode_nf_conntrack_stat_*\fR (gauges, as node_exporter has them), only where conntrack is
available; per CPU (label \fBcpu\fR), host-wide:
\fBnode_softnet_{processed,dropped,times_squeezed,received_rps,flow_limit_count}_total\fR and
\fBnode_softnet_backlog_len\fR (gauge) as node_exporter's softnet collector names them,
\fBnode_softirqs_functions_total\fR{\fBtype\fR="NET_RX"|"NET_TX"}; the watched
namespace's ARP entries as node_exporter's arp collector names them:
\fBnode_arp_entries\fR{\fBdevice\fR} and \fBnode_arp_states\fR{\fBdevice\fR,\fBstate\fR}
(gauges); the tables' \fBnetlens_neigh_entries\fR and \fBnetlens_neigh_gc_thresh3\fR
(gauges) and \fBnetlens_neigh_{table_fulls,forced_gc_runs,unresolved_discards}_total\fR
(label \fBtable\fR: arp, ndisc). netlens' own: \fBnetlens_tcp_connections\fR{\fBstate\fR} (gauge, the 11 TCP
states), \fBnetlens_finding\fR{\fBid\fR,\fBseverity\fR} (gauge: how many instances of that
finding are active), \fBnetlens_sample_timestamp_seconds\fR,
\fBnetlens_sample_age_seconds\fR (seconds since the sample served was taken, at the
scrape), \fBnetlens_collector_late\fR{\fBpart\fR} (gauge, 1 when interfaces, neighbours,
conntrack, processes or containers missed their deadline and show their last good
data; no interface rate is taken over a late read) with
\fBnetlens_collector_data_age_seconds\fR{\fBpart\fR} (that data's age), and
\fBnetlens_dns_probe_duration_seconds\fR{\fBserver\fR,\fBname\fR,\fBqtype\fR} (histogram,
only emitted when there are DNS probe results: \fB\-\-dns\-probe\fR; cumulative since the
exporter started, answered probes (NOERROR and NXDOMAIN) only, buckets 1 ms to 5 s) and
\fBnetlens_dns_probes_total\fR{\fBserver\fR,\fBname\fR,\fBqtype\fR,\fBoutcome\fR} (every probe
by outcome: ok, nxdomain, timeout, servfail, refused, error, port unreachable);
\fBnode_qdisc_{bytes,packets,drops,overlimits,requeues}_total\fR and
\fBnode_qdisc_backlog\fR{\fBdevice\fR,\fBkind\fR} (each interface's root qdisc, as
node_exporter's qdisc collector names them); \fBnetlens_drops_available\fR (1 when the
kernel's drop reasons are counted), \fBnetlens_drops_total\fR{\fBreason\fR,\fBlocation\fR,\fBnetns\fR}
(packets the kernel dropped, by reason and dropping function, summed over interfaces and
sockets; here \fBnetns\fR is the namespace the packet died in) and
\fBnetlens_drops_lost_total\fR. Cardinality: one series per interface, qdisc, TCP state,
finding id, DNS server and name, and drop (reason, function, namespace). assets/prometheus.yml,
assets/netlens-alerts.yml (an alerting rule for every finding id and for interface
saturation, conntrack fill, retransmits and DNS timeouts, generated from the findings tables
and unit-tested with promtool) and assets/grafana-netlens.json in the source tree are a
scrape config, alert rules and a dashboard.
.SH ON-FINDING
\fB\-\-on\-finding\fR CMD (the live view, \fBrecord\fR and \fBexport\fR) runs CMD with
\fB/bin/sh \-c\fR when a finding starts to show and when it clears, after the same
hysteresis as the screen (\fBfindings_on_samples\fR, \fBfindings_off_samples\fR): one start
and one clear per episode, never one per sample. The event is one JSON object on stdin:
\fBevent\fR ("start" or "clear"), \fBtime\fR (the sample's Unix time), \fBhost\fR (the host
name), \fBnetns\fR and \fBfinding\fR (as in \fBsnapshot \-\-json\fR; for a clear, as it last
showed); the environment has \fBNETLENS_EVENT\fR, \fBNETLENS_FINDING\fR (the id) and
\fBNETLENS_SEVERITY\fR. At most 4 commands run at once; 64 more events wait, and events
beyond that are dropped and reported. A command still running after
\fB\-\-on\-finding\-timeout\fR (default 10s) is killed with its process group. A command
that fails or is killed is reported in one line (stderr headless; the status line in the
live view, where the command's stderr goes to /dev/null). The sampler never waits for a
command; on exit netlens waits for the commands already queued, each within its timeout.
The command runs as netlens runs (often root). assets/on-finding-webhook.sh in the source
tree (/usr/share/netlens in the package) POSTs the event to \fBNETLENS_WEBHOOK_URL\fR with
curl. For a fleet, the Prometheus alert rules (EXPORT) and Alertmanager are the way: the
hook is for one host.
.SH FLIGHT RECORDER
\fBnetlens record \-\-ring D \-\-ring\-dir DIR\fR (and \fBnetlens export\fR with the same
flags) keeps a rolling recording of the last D instead of one growing file. The ring is
a directory (created mode 0700; a symbolic link is refused) of ordinary recordings,
\fBring\-\fIUTC\fB\-\fIMS\fB\-\fIRANDOM\fB.nlrec\fR, each complete and readable alone
(\fBnetlens replay\fR opens any of them). Each covers a minute, or a third of D when
that is shorter (at least a second). Whole files are dropped from the old end: the
oldest goes once the files after it still cover D, or sooner while the ring is over
\fB\-\-max\-size\fR (default 256M; 64k to 1T; k, M, G, T are powers of 1024), and the
file being written is closed early at a quarter of that size, so the ring stays within
its size. Memory holds one segment, as any recording. Ring files left by an earlier run
are kept and dropped first.
.PP
\fB\-\-freeze\-on\fR \fIwarn\fR|\fIcrit\fR|\fIID\fR,... writes an incident bundle when a
finding of that level (or above) or id starts, with the start semantics of
\fB\-\-on\-finding\fR (after the hysteresis). The bundle is written
\fB\-\-freeze\-after\fR (default 1m) after the start, from the ring: from D before the
start to then. Every matching start in between (the finding flapping, or another)
belongs to the same incident, and a finding that stays raised never starts again: one
bundle per incident. At most \fB\-\-max\-bundles\-per\-hour\fR (default 6) are written in
any hour; an incident over it is named on standard error ("no bundle for ID ...") and
not written. Bundles go to \fB\-\-bundle\-dir\fR (default the ring's directory; created
mode 0700, never through a symbolic link):
.PP
.nf
netlens\-incident\-\fIYYYYMMDDTHHMMSSZ\fR\-\fIID\fR/     (mode 0700, files 0600)
  recording.nlrec   one ordinary recording of the window
  packets.pcap      its captured packets (tcpdump \-r); no packets when capture was off
  summary.md        findings with evidence and fix, when each started and cleared,
                    top interfaces, flows and sockets (by queue, by retransmits)
  snapshot.json     the sample at the start, as snapshot \-\-json prints it
.fi
.PP
Bundles are not counted in \fB\-\-max\-size\fR (the per-hour cap bounds them) and are
never removed by netlens. A bundle that fails halfway is removed whole.
\fBnetlens replay BUNDLE\-DIR\fR opens
its recording.nlrec. \fBnetlens export\fR does not capture, so its bundles' pcaps are
empty and their summaries say so. In the live view \fBB\fR freezes the last 5 minutes
the view holds (and the packets the Flows tab listed) into a bundle named
\fBnetlens\-incident\-\fIUTC\fB\-manual\fR in the current directory; the findings line
shows the progress and the full path.
.SH LOAD JSON KEYS
With \fB\-\-json\fR each load kind prints per-interval objects (\fBtype\fR "interval", or
"probe" for each probe) and ends with one summary object (\fBtype\fR "summary"). Every
summary has \fBkind\fR and \fBstopped\fR (true when stopped before its end).
.TP
\fBtcp\fR
\fBseconds\fR, \fBbytes\fR (what the receiver got), \fBbits_per_s\fR, \fBretransmits\fR
(from tcp_info; null with \fB\-\-reverse\fR, where the server sends), \fBpackets_per_s\fR
(segments), \fBloss_percent\fR (retransmitted segments per segment sent),
\fBcwnd_bytes\fR, \fBstreams\fR, \fBreverse\fR, \fBserver\fR ("netlens" or "iperf3"),
\fBsender\fR and \fBreceiver\fR
{\fBbytes\fR, \fBbits_per_s\fR}. Intervals: \fBstart\fR, \fBend\fR, \fBbytes\fR, \fBbits_per_s\fR,
\fBretransmits\fR, \fBcwnd_bytes\fR.
.TP
\fBudp\fR
\fBseconds\fR, \fBbytes\fR and \fBbits_per_s\fR (sent payload), \fBretransmits\fR (always
null), \fBpackets_per_s\fR (sent), \fBloss_percent\fR, \fBjitter_ms\fR (RFC 3550, as the
server measured it), \fBsent_packets\fR, \fBsend_errors\fR, \fBreceived_packets\fR,
\fBreceived_bytes\fR, \fBreceived_packets_per_s\fR, \fBlost_packets\fR, \fBout_of_order\fR.
The receiver's keys are null when no \fBload serve\fR answered.
.TP
\fBhttp\fR
\fBrequests\fR, \fBrequests_per_s\fR, \fBbytes\fR and \fBbytes_per_s\fR (read, head and
body), \fBerrors\fR {\fBconnect\fR, \fBread\fR, \fBwrite\fR, \fBtimeout\fR, \fBstatus\fR
(responses 400 and up)}, \fBlatency_ms\fR {\fBp50\fR, \fBp75\fR, \fBp90\fR, \fBp99\fR,
\fBp999\fR, \fBmax\fR, \fBmean\fR, \fBstdev\fR} (HdrHistogram, from sending a request to
the end of its response), \fBconnections\fR, \fBthreads\fR, \fBseconds\fR.
.TP
\fBprobe\fR
\fBsent\fR, \fBreceived\fR (SYN-ACK or RST), \fBclosed\fR (RST), \fBloss_percent\fR,
\fBmin_ms\fR, \fBavg_ms\fR, \fBmax_ms\fR (null when nothing answered).
.TP
\fBpktgen\fR
\fBpackets\fR, \fBpackets_per_s\fR, \fBmbits_per_s\fR, \fBbits_per_s\fR, \fBerrors\fR,
\fBseconds\fR, \fBdevices[]\fR (the same per device, from its Result line).
.TP
\fBload serve \-\-json\fR
A \fBlistening\fR object (\fBaddress\fR, \fBport\fR), then one \fBserved\fR object per
finished test: tcp {\fBdirection\fR, \fBbytes\fR, \fBseconds\fR, \fBbits_per_s\fR,
\fBcomplete\fR}, http {\fBrequests\fR, \fBbytes_sent\fR, \fBbytes_received\fR},
udp {\fBpackets\fR, \fBbytes\fR, \fBsent\fR, \fBlost\fR, \fBloss_percent\fR,
\fBout_of_order\fR, \fBjitter_ms\fR}.
.SH RECORDING FILES
\fBnetlens record \-o FILE\fR, \fB\-\-record FILE\fR, \fBR\fR in the live view and
\fBsnapshot \-\-record FILE\fR write a recording; \fBnetlens replay FILE\fR shows it in the
same UI with a timeline bar, \fB\-\-json\fR prints it as \fBsnapshot \-\-json\fR would
have, \fB\-\-info\fR describes it (streams, sizes, packets kept and left out,
damage). A recording holds raw samples; rates and findings are computed at
replay by the same code as live. While capture runs (not with
\fB\-\-no\-capture\fR) it also holds the captured packets, bounded: at most 200
of each second and 6000 of each segment, each cut to its first 384 bytes, the
rest of each packet only when whole packets were captured (\fB\-\-payload\fR).
Replay feeds them to the Flows tab as live capture does (the packet list and
the flow table's per-flow packets); after a jump they start again from the
segment's first record. Files are created with mode 0600; an existing file or a
symbolic link is never written through.
.PP
In the live view the first recording is \fB\-\-record FILE\fR; \fBR\fR starts
later ones as \fBnetlens\-DATE\-TIME.nlrec\fR beside it, or without
\fB\-\-record\fR in \fB$XDG_STATE_HOME/netlens\fR (\fB~/.local/state/netlens\fR,
created mode 0700). The findings line shows the full path when a recording starts
and what it saved when it stops; on exit netlens prints where each one went. A
failed write (a full disk) stops the recording with its cause and the samples
saved: on the findings line until a key is pressed, again on exit, and exit
status 1; \fBnetlens record\fR prints the same and exits 1. What was written
stays readable. SIGINT, SIGTERM, SIGHUP and a terminal that hangs up close a
recording cleanly.
.PP
Every file netlens creates (recordings, \fBcapture \-w\fR, the Flows tab's \fBw\fR, the
flow screen's \fBe\fR) is opened with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600: an
existing file or a symbolic link at the path, even a dangling one, is refused with
a one-line error. An output named on the command line (\fBcapture \-w\fR, \fBrecord
\-o\fR, \fBsnapshot \-\-record\fR) may be an existing character device or FIFO, as
with tcpdump: \fB\-w /dev/null\fR measures, a FIFO feeds \fBtcpdump \-r \-\fR (a FIFO
that no process opens for reading within 5 seconds is an error). Names netlens picks itself (\fBw\fR: netlens\-TIME\-RANDOM.pcap)
carry random bits; a \fBw\fR or \fBe\fR that fails removes its partial file.
.PP
Format 2: a 16-byte header (magic \fB\\x89NLREC\\r\\n\fR, major and minor version;
a reader refuses a major version it does not know, and still reads format 1),
then chunks: \fBNLck\fR, kind, stream,
flags, payload length, payload, CRC-32 of kind through payload, and the length
again so the file can be scanned backwards and resynchronized after damage.
Kinds: meta (JSON: version, host, namespace, interval, command line), data (one
record), index and end (written at close). Streams: 0 samples, 1 findings
(when they change), 2 packets (first 384 bytes of each) and 3 payloads (the
rest, with \fB\-\-payload\fR). Each
stream is cut into segments of about a minute; a segment is one zstd stream
whose first record is the keyframe and whose later records are each flushed as
one chunk (one write per sample), so each compresses against those before it.
A sample record is the sample without its sockets as MessagePack with field
names, then its sockets as columns of differences from the previous sample's
sockets with the same protocol and endpoints (the keyframe's are stored
whole): an unchanged socket costs a row of zeros. Since format 2.1 every tenth
sample of a segment stores its sockets whole too (a socket keyframe, which
compresses against the records before it), so a seek decodes at most ten
samples. Since 2.2 each sample's head (the sample without its sockets) is also
written to a stream of its own, so a jump's five minutes of chart history read
small records. Format 2.0 and 2.1 readers read 2.2 files (they skip the heads),
and 2.2 reads 2.1, 2.0 and 1. Findings are JSON. An fdatasync ends each segment. A
recording whose index is missing (the recorder was killed) is indexed again by
a scan: it reads up to its last complete sample; a damaged chunk loses at most
the rest of its segment, and \fBreplay \-\-info\fR and \fB\-\-json\fR report it on
standard error.
.PP
Bounds a reader holds any file to, so that a crafted one costs no more memory
than an honest one: a sample lists at most 2097152 sockets and its socket table
decodes to at most 512 MiB; its head (the sample without its sockets) is
stored in at most 64 MiB; each socket of the previous sample is referred to at
most once (as netlens writes them); a packets record holds at most 6000 packets;
a chunk's payload is at most 256 MiB and a segment decompresses to at most
1 GiB. A sample or segment past a bound is damage, reported and skipped as
above. \fBreplay \-\-json\fR (with \fB\-\-follow\fR too), \fB\-\-info\fR, the replay's
finding marks and an incident bundle's copy hold one record and two samples at
a time, however long a segment is. Interactive replay keeps at most 768 MiB of
a segment's decoded samples (each charged its sockets and its record's size;
past that those farthest from the one in use are dropped and decoded again when needed), 1.75 GiB of
segments in all, and a jump refills its history with whole samples up to
768 MiB (at least the shown one and the one before it; older ones without
their sockets).
.PP
A recording without its index whose recorder still runs (a process holds it
open for writing, seen in /proc, or it changed within the last 5 seconds or two
intervals) is "still being written": \fBreplay \-\-info\fR says so instead of
"the recorder was stopped", and \fBreplay \-\-json\fR notes it on standard error.
\fBreplay \-\-json \-\-follow FILE\fR follows such a file as \fBtail \-f\fR does: it
prints the samples already there, then each one as it is appended (the file is
looked at every interval, at most once a second), and exits 0 when the recorder
closes the file (its index appears), or on SIGINT or SIGTERM. A file whose
recorder was killed is followed until SIGINT. \fBreplay \-\-follow FILE\fR does
the same in the live view: it plays from the end of the file, shows each sample
as it is appended, and shows FOLLOW in the header (where REPLAY is otherwise)
until the recorder closes the file; it waits for the first sample of a file
that has none yet.
.TP
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
packets to a new netlens\-flow\-PORT\-PORT\-TIME\-RANDOM.pcap in the current
directory and says its full path. The summary names two packet counts: those on
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
.SH PRIVILEGES
Interfaces, their counters, addresses and speed, sockets (sock_diag) and the TCP
counters need no privileges. The owner of a socket comes from eBPF task iterators
(root; the socket fds of the watched namespace's processes, listed in the kernel), else
from /proc/PID/fd of the processes in the watched namespace, which only root (or the
owner) may read: without it, sockets of other users show "unknown (no permission)". A
socket whose owner is still being looked for shows "(looking)". Watching
another namespace (\fB\-\-netns\fR, \fB\-\-pid\fR) needs CAP_SYS_ADMIN to enter it, in
practice root. The conntrack entry list and the exact statistics come from
ctnetlink, which needs CAP_NET_ADMIN; without it the Conntrack tab still shows the
count, max and statistics from /proc and says why the entries are missing.
\fBload pktgen\fR needs root; the other load kinds need none.
Counting the kernel's drop reasons loads an eBPF program (tp_btf, else a
tracepoint, on \fBskb:kfree_skb\fR): it needs CAP_BPF and CAP_PERFMON (root), kernel
BTF (/sys/kernel/btf/vmlinux) and Linux 5.17 or newer, and no lockdown. Without
them, or with \fB\-\-no\-bpf\fR, the \fBdrops\fR section says why and everything else
is collected as before.
.TP
Packet capture needs CAP_NET_RAW (the ring is locked in memory with CAP_IPC_LOCK
when available). Without it the Flows tab says so and the other tabs work; grant
it once with \fBsudo setcap cap_net_raw,cap_net_admin+ep $(which netlens)\fR.
That grants both to every user who can run the file: CAP_NET_RAW reads every
packet on the host's interfaces and sends raw probes; CAP_NET_ADMIN lists every
conntrack entry and destroys any TCP socket. Run by a user other than root (real
uid not 0), netlens kills (F9) only that user's own sockets (the uid \fBss \-e\fR
shows) and says so for the others. On a shared host, let only a trusted group
run the file.
.TP
\fBnetlens trace\fR and the Path view need CAP_NET_RAW too (raw sockets to send
probes with their own TTL and to read the ICMP answers).
.SH ENVIRONMENT
.TP
\fBXDG_CONFIG_HOME\fR, \fBHOME\fR
Where the config file is looked for (see CONFIGURATION).
.TP
\fBXDG_STATE_HOME\fR
Where \fBR\fR records without \fB\-\-record\fR: \fB$XDG_STATE_HOME/netlens\fR, else
\fB~/.local/state/netlens\fR.
.TP
\fBTMUX\fR
Set inside tmux: \fBnetlens tmux\fR opens a window rather than a session.
.TP
\fBNO_COLOR\fR
When set and not empty, no colour is used, as with \fB\-\-no\-color\fR. The selection
stays visible in reverse video.
.TP
\fBNETLENS_BPF_ATTACH\fR
\fBtracepoint\fR: count drop reasons with the classic tracepoint program, as on a
kernel where the faster tp_btf one cannot attach; \fBtp_btf3\fR: the tp_btf program
of kernels before 6.11, without the receiving socket (for comparison and tests).
.TP
\fBNETLENS_DEBUG_BPF\fR
When set, prints which drop-reason program attached and how long loading took.
.SH INPUT LIMITS
Every value a user gives has a limit; a value beyond it is a one-line error and
exit status 2 (flags) or 1 (the config file, prompts), never a crash.
.TP
Durations
A number with ms, s, m or h (or none: seconds), greater than zero. The interval
(\fB\-\-interval\fR, the config's \fBinterval\fR) is 100ms to 1h;
\fB\-\-dns\-timeout\fR at most 60s; load runs (\fBnetlens load\fR, the Load tab) at
most 1h; every other duration (\fB\-\-duration\fR, \fB\-\-at\fR and the replay
\fBt\fR prompt) at most 365 days (8760h).
.TP
Sizes
\fB\-\-max\-size\fR: a number with k, M, G or T (powers of 1024) or none (bytes),
64k to 1T.
.TP
Filters
A pcap-filter expression (\fB\-\-filter\fR, \fB\-f\fR, the Flows tab's \fBf\fR) is at
most 4096 bytes, with parentheses, \fBnot\fR and unary minus nested at most 100
levels deep. A row filter (the tabs' \fB/\fR, \fBsnapshot \-\-where\fR) is at most
1024 characters and 64 terms, nested at most 32 levels deep (FILTERS).
.TP
\fBread \-\-flows\fR
At most 100000 flows are kept; when the table is full, the least recently active
eighth is evicted. netlens then says on stderr how many flows were evicted, and
\fB\-\-json\fR ends with {"evicted_flows": N, "max_flows": 100000}. A flow seen
again after its eviction counts from then.
.TP
Config file
A regular file of at most 1 MiB.
.TP
Damaged recordings
Damage found while rebuilding a lost index is reported as ranges of bytes with
the number of places in each where no record starts: at most 32 ranges one by
one, the rest as one count. Memory does not grow with the damage.
.SH EXIT STATUS
0 on success; 1 with a one-line message on standard error for any failure (unknown
namespace, no permission, stdout not a terminal for the live view); 2 for a usage
error.
"#;

/// The CONFIGURATION section's text before the thresholds (build.rs adds
/// them from `findings::thresholds::THRESHOLDS`).
pub const CONFIGURATION: &str = r#".SH CONFIGURATION
netlens reads \fB$XDG_CONFIG_HOME/netlens/config.toml\fR (\fB~/.config/netlens/config.toml\fR
when XDG_CONFIG_HOME is unset) if it exists, or the file \fB\-\-config\fR names (which
must exist). \fBnetlens \-\-print\-config\fR prints a commented file with every
setting at its default. Command-line flags override the file. An unknown key or
a bad value is an error naming the file and line; netlens then exits with status 1.
The file must be a regular file (a symlink to one is fine) of at most 1 MiB.
.TP
\fBtab\fR = "interfaces"
The tab to open first: interfaces, sockets, tcp, conntrack, dns, flows or load.
.TP
\fBinterval\fR = "1s"
The sampling interval, as \fB\-\-interval\fR takes it (100ms to 1h).
.TP
\fBtheme\fR = "color"
"color", or "mono" for no colour at all (as \fB\-\-no\-color\fR and NO_COLOR).
.TP
\fBmouse\fR = false
Take the mouse (click tabs and rows), as \fB\-\-mouse\fR. Off by default, so that
tmux and the terminal keep their own mouse (selection, pane focus).
.TP
\fBcompact\fR = false
Always use the compact layout (as \fB\-\-compact\fR).
.TP
\fB[columns]\fR interfaces, sockets, conntrack, flows = [ "TITLE", ... ]
The columns a tab shows, by their header titles (case does not matter); an
empty list shows every column that fits. Sockets and Flows show them in the
order listed, Interfaces and Conntrack in the tab's own order. The setup
screen (\fBF2\fR) edits the Sockets and Flows lists, the interval, the theme
and every threshold, with the checks this file gets; \fBw\fR there writes the
file: every setting, commented as \fB\-\-print\-config\fR (other comments are
not kept), to a new 0600 file in the same directory renamed over the old one.
A config path that is a symbolic link is refused rather than followed.
.TP
\fB[dns]\fR probes = [ "NAME", ... ], servers = [ "ADDR[:PORT]", ... ]
Names the DNS prober resolves and the servers it asks, added to
\fB\-\-dns\-probe\fR and \fB\-\-dns\-server\fR.
.TP
\fB[thresholds]\fR
When each finding (see FINDINGS) fires. Each key, its default and meaning:
"#;
