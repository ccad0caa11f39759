//! The man page's ALL NAMESPACES section (build.rs appends it after the
//! other sections; `netlens man` prints the result).

pub const ALL_NAMESPACES: &str = r#".SH ALL NAMESPACES
\fB\-\-all\-netns\fR (live view, \fBsnapshot\fR, \fBrecord\fR, \fBexport\fR) samples every
network namespace of the host at once, from the one sampler thread. It is not the
default, even as root in the initial namespace: it changes what every table, JSON
line and exporter page holds (rows of namespaces the user did not ask about, one
series set per namespace) and costs a socket dump per namespace, so a script or
dashboard written for one namespace keeps getting exactly that; asking for the
whole host is one flag. It conflicts with \fB\-\-netns\fR and \fB\-\-pid\fR.
\fBcapture\fR, \fBconns\fR and \fBload\fR work inside one namespace and refuse it
(exit 1, naming \fB\-\-netns\fR); \fBtmux\fR passes it on to every pane.
.PP
Each interval netlens finds the namespaces: the links /proc/PID/ns/net of every
process (read with readlink, "net:[INODE]", no stat), and the bind mounts in
/run/netns, /var/run/netns (\fBip netns\fR) and /run/docker/netns, one entry per
inode. A namespace seen for the first time is entered once (setns) to open a
sock_diag socket, a route netlink socket and its /proc/net/snmp and netstat, which
stay bound to it; every later interval reads those without entering it again. A
namespace that no process and no bind mount holds any more is dropped, and one that
appears while netlens runs is picked up at the next interval. Socket owners come
from one lookup for all of them (socket inodes are global), looking at every process.
A namespace kept open holds six descriptors, and any user can make thousands of
namespaces: netlens raises its soft RLIMIT_NOFILE to the hard limit, and the ones kept
open hold at most a quarter of it, leaving the
rest to the exporter's connections and the capture; every namespace past that is
entered, read and closed again each interval, so every sample still covers them
all (at the cost of a setns pair per namespace and interval).
.PP
Cost: each namespace's TCP dump (one per namespace, IPv4 and IPv6 together) walks
the kernel's established-socket table, and that table is shared by every namespace
unless \fBnet.ipv4.tcp_child_ehash_entries\fR gave the namespace its own when it
was created. So on a host whose namespaces share it, one \fB\-\-all\-netns\fR sample
walks every socket of the host once per namespace: 50 namespaces of 2,000 sockets
cost about 4 times one namespace of the same 100,000 sockets, and about the same
with their own tables (docs/performance.md in the source tree).
.PP
Each namespace gets an id for the session (0: netlens' own, "host"; never reused), a
label (its \fBip netns\fR name, else "pid N COMM" of the lowest pid in it, else
"net:[INODE]") and, when a process in it belongs to a container, the container
(from /proc/PID/cgroup, as the Processes tab names it; systemd units and slices are
not containers). Socket and interface rows carry the id; rates are kept per
(namespace, ifindex), so two namespaces' "lo" never mix. A namespace's traffic is the
sum of its interfaces but loopback; the host-side peer of each of its veths (the
initial namespace's interface whose IFLA_LINK is the veth and whose index is the
veth's IFLA_LINK, both crossing namespaces) is listed with its rates. Its drops are
Ip.InDiscards, Ip.OutDiscards, TcpExt.ListenDrops, TcpExt.TCPBacklogDrop,
Udp.RcvbufErrors and Udp.InErrors summed; its retransmits Tcp.RetransSegs.
Its conntrack count is its own nf_conntrack_count (opened inside it once, read each
interval; "-" when nf_conntrack was not loaded when netlens first entered it; a
namespace tracks nothing until a rule there asks for conntrack).
The TCP, Conntrack, DNS, CPU and Drops tabs and the findings on the stack's
counters stay those of the watched namespace; the findings on interfaces and sockets
cover every namespace's rows, and their evidence carries the namespace's id (the
close-wait, port-exhaustion and connect-timeout groups are formed per namespace:
each has its own ports). In the live view the Interfaces, Sockets and Flows tables
list every namespace's rows together, with an \fBNS\fR column (the namespace's
container, else its label) while more than one namespace is sampled; the Sockets
tab's info line names the selected socket's namespace ("netns NAME (container)"),
the flow screen's summary the flow's ("namespace NAME (container)"),
and the filter \fBns:NAME\fR keeps one namespace's rows. Recordings keep the
namespace list (with each one's conntrack count) and each socket's and interface's
id; older recordings read as one namespace, without conntrack counts.
.PP
The Namespaces tab (\fB0\fR, "NS", \fB\-\-tab namespaces\fR) has one row per
namespace: NAMESPACE (its label; "\(Fc" marks the one the tabs are scoped to), rx/s and
tx/s (bytes, summed over its interfaces but loopback), rxpk/s, txpk/s, ESTAB, LSTN
and TW (its TCP sockets in ESTABLISHED, LISTEN and TIME_WAIT, as \fBss \-tan\fR
inside it counts them), retr/s, FIND (findings shown now whose evidence is in it);
wider, OTH (its other TCP sockets), drop/s, CT (conntrack entries), CONTAINER, UDP
and the host-side veth peers' rx/s and tx/s. Below the table the selected namespace:
its container, inode and pid, its host-side peers with their rates, retransmits and
drops per second, its sockets by state, conntrack count and findings. Sort with
\fBs\fR, \fB<\fR, \fBI\fR; filter with \fB/\fR (\fBns:\fR and \fBcontainer:\fR
match the row's label and container, a bare word its label, container or inode).
Without \fB\-\-all\-netns\fR it has one row, the watched namespace's (from the
sample's own counters), and says how to see every namespace.
.PP
\fBEnter\fR there scopes every tab to the selected namespace: the header shows
"[scope ns:NAME]" (the compact status line "[ns:NAME]"), and the Interfaces,
Sockets, Procs and Flows tables show only its rows (the scope is \fBns:\fR matched
to the whole label, applied before each tab's own filter; a process's namespace is
its first socket's). A flow's namespace is that of the socket it is joined with
(another namespace's when either end's socket is in one: a container's traffic
seen on its host-side veth), else the watched one's; \fBsnapshot \-\-json\fR gives
each flow its \fBnetns\fR label under \fB\-\-all\-netns\fR. The capture itself, the
TCP counters, the conntrack entries, DNS, Drops and Load are the watched
namespace's only: scoped to another namespace, those tabs say so on their first
line (Flows: it shows that namespace's flows as the capture sees them, not the
traffic inside it), the TCP tab with the namespace's own retransmits
and drops per second, the Conntrack tab (which then lists no entry) with its
conntrack count. \fBu\fR, or \fBEsc\fR when the tab has no detail or filter to
close, ends the scope.
.PP
\fBsnapshot \-\-json\fR adds \fBnamespaces[]\fR: \fBid\fR, \fBlabel\fR, \fBinode\fR,
\fBcontainer\fR, \fBpid\fR, \fBinterval\fR (the seconds its interface rates span, between
its two reads of its links: rate times interval is the counters' delta),
\fBrx_bytes_per_s\fR, \fBtx_bytes_per_s\fR,
\fBrx_packets_per_s\fR, \fBtx_packets_per_s\fR, \fBhost_peers\fR (names),
\fBhost_peer_rx_bytes_per_s\fR, \fBhost_peer_tx_bytes_per_s\fR, \fBsockets\fR,
\fBestablished\fR, \fBlistening\fR, \fBtime_wait\fR, \fBtcp_other\fR (TCP by state),
\fBudp\fR, \fBretrans_per_s\fR, \fBdrops_per_s\fR, the raw \fBretrans_segs\fR and
\fBdrops\fR, \fBconntrack_count\fR (null without nf_conntrack) and \fBfindings\fR
(those of the sample about it); each socket and interface gains \fBnetns\fR, its
namespace's label, and a finding's \fBevidence\fR its namespace's \fBnetns\fR id.
.PP
\fBexport \-\-all\-netns\fR labels each interface's series (\fBnode_network_*\fR,
\fBnode_qdisc_*\fR) with its namespace's \fBnetns\fR label, plus \fBcontainer\fR where
known, and adds per namespace \fBnetlens_netns_info\fR{\fBnetns\fR,\fBinode\fR} (1),
\fBnetlens_netns_sockets\fR (gauge), \fBnetlens_netns_conntrack_entries\fR (gauge; none
for a namespace without nf_conntrack), \fBnetlens_netns_tcp_retransmits_total\fR and
\fBnetlens_netns_drops_total\fR. Cardinality: the \fBnetns\fR label takes one value per
namespace (a busy container host: one per container, and a new value when a container
is re-created, its namespace being new); per namespace 5 series plus the interface
series of each of its interfaces (about 20 per interface); sockets are never a label.
The other series keep the watched namespace's label.
"#;
