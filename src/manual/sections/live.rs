//! The live view: its findings, tabs and what they read.
//! Pure data: build.rs includes it (through sections/mod.rs).

pub const LIVE: &str = r#".SH FINDINGS
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
.SH FIRST SCREEN
The live view draws its first sample at once: interfaces with their states, sockets
with their queues, counts; rates show "\(en" until a second sample. The eBPF programs
of drop reasons and of the owners of short connections load after that first sample, which says so ("its eBPF program loads after the first sample"), and the
second sample is taken 250 ms after the first (at most the interval), then one each
interval. A counter whose drops a reason names waits for the reasons' first rate
rather than fire for one sample. With \fB\-\-record\fR the first sample waits for the
programs, so that a recording counts from its first sample, as \fBrecord\fR,
\fBsnapshot\fR and \fBexport\fR do.
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
.PP
A flow that conntrack translated (DNAT, SNAT, masquerade) is joined with its conntrack
entry: a capture on a host that translates sees it twice, before and after. The Flows
table's NAT column (shown while a flow has one) names the other side, "dnat \(rA
198.18.1.2:8080" on the flow before the DNAT, "dnat \(lA 198.18.1.1:80" on the one
after; the flow screen's \fBconntrack\fR line gives the entry's state and both
tuples; \fBnat\fR of the JSON flows the same. The entries are dumped at most once a
second while the Conntrack tab is shown, and while the Flows tab or a flow screen is
shown if the table holds at most 20,000 entries (a dump costs about 1.3 µs of CPU per
entry); \fBrecord\fR and \fBsnapshot \-\-json\fR dump them whatever the size. A dump
more than 5 s old names nothing.
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
under the table. A firewall's drop (NETFILTER_DROP) has a row per destination, shown
without a socket as "→198.18.3.2:8080", and its site in \fBEnter\fR's detail says
where the packet went before conntrack translated it, "to 198.18.3.2:8080 (DNAT from
198.18.1.1:80)" (past the first 256 destinations, or with the kernel map full, their
drops count in the site's row without one). A reason this kernel has that DROP REASONS lacks is shown by its name
with "not in the catalogue". Below: the failure counters that moved in this interval
with their rates per second (the COUNTER CATALOGUE's, and any snmp/netstat field it
does not list, marked "not in the catalogue"). When drop reasons are not counted (no
CAP_BPF/CAP_PERFMON, \fB\-\-no\-bpf\fR, a kernel without drop reasons, a recording
made without them) one line says why, and the counters are still shown. \fBEnter\fR
opens a reason: its meaning, fix and finding, its sites, and the related counters with
their rates; \fBo\fR goes to the site's socket (the Sockets tab filtered on its protocol
and port) and \fBi\fR to its interface (the Interfaces tab). Rows, rates and
sparklines come from the samples, so a replayed recording shows what was recorded.
.PP
Which firewall rule dropped it: between the sites and the counters, \fBfirewall rules
that dropped\fR lists the watched namespace's rules whose counter grew in the
interval, busiest first: where (nf_tables' "FAMILY TABLE CHAIN #HANDLE", as \fBnft
\-a list ruleset\fR numbers it, or iptables' "TABLE CHAIN POSITION"), the rule's drops
per second, and the rule as \fBnft list ruleset\fR prints it (its counter without the
values) or as \fBiptables\-save\fR does. netlens reads the rules and their counters
from the kernel: nf_tables over netlink (nft, and iptables of the nf_tables backend),
the legacy iptables and ip6tables tables through their getsockopt interface (only
tables that exist; no module is loaded). Only rules whose verdict drops (drop, reject,
DROP, REJECT) and base chains whose policy drops are kept: at most 5,000, each cut at
400 characters. When the NETFILTER_DROP drops of the namespace exceed what the counted
rules explain (by more than 10% and 1 a second), the rules that drop without a
counter are listed after them with "?" as the candidates, and the
\fBdrop:NETFILTER_DROP\fR finding gives the \fBnft replace rule\fR command that adds a
counter to the first; a finding for a counted rule names it, its rate and the command
that removes it. Drops no rule explains may be conntrack's (an invalid packet, a full
table: see the Conntrack tab). The rules are read each sample while the Drops tab is
shown, and for a minute after any NETFILTER_DROP drop (so the findings name the rule
in any tab); reading needs CAP_NET_ADMIN, else one line says why. Enter on a
NETFILTER_DROP site lists the same rules.
.PP
\fBT\fR on a flow's screen traces that flow through the nftables rules (the Rules
sub\-view), as \fBnft monitor trace\fR shows it after a \fBmeta nftrace set 1\fR:
per packet its headers, then each rule (as \fBnft list ruleset\fR prints it), return
and policy it met, with the verdict, newest at the bottom. netlens adds a table of
its own, \fBinet netlens_trace_PID\fR, whose chains at prerouting and output
(priority \-350, before every other) set nftrace on the flow's packets in both
directions, and removes it on \fBT\fR again, Esc or quit (the kernel removes it too
if netlens dies: the table belongs to its netlink socket). Needs CAP_NET_ADMIN; not
in a replay; rules of the legacy iptables are not traced. \fBnetlens nftrace\fR does
the same from the command line.
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
under the process that held it (listed even when it holds no socket any more). What a
socket moved while listed without an owner (its look-up still running, or its process
had just closed it) counts in the sample whose dump or connection log names the owner.
Not counted: sockets whose owner is never known (other users' without root), and,
without a connection log (older recordings), a closing socket's bytes after its last
sample; the tab says so under the table. When the kernel dropped connection ends in
the interval (the log's queue was full), the tab and \fBsnapshot\fR's text say how many
instead: the TCP rates are then too low. A socket shared by several processes is counted under the first. \fBs\fR,
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
"#;
