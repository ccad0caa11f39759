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
from the one /proc/PID/fd scan for all of them (socket inodes are global).
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
The TCP, Conntrack, DNS, CPU and Drops tabs and the findings on the stack's
counters stay those of the watched namespace; the findings on interfaces and sockets
cover every namespace's rows (their evidence names the interface or socket, not its
namespace). In the live view the Interfaces and Sockets tables list every
namespace's rows together; the Sockets tab's info line names the selected socket's
namespace ("netns NAME (container)"), and the filter \fBns:NAME\fR keeps one
namespace's rows. Recordings keep the namespace list and each socket's and
interface's id; older recordings read as one namespace.
.PP
\fBsnapshot \-\-json\fR adds \fBnamespaces[]\fR: \fBid\fR, \fBlabel\fR, \fBinode\fR,
\fBcontainer\fR, \fBpid\fR, \fBrx_bytes_per_s\fR, \fBtx_bytes_per_s\fR,
\fBrx_packets_per_s\fR, \fBtx_packets_per_s\fR, \fBhost_peers\fR (names),
\fBhost_peer_rx_bytes_per_s\fR, \fBhost_peer_tx_bytes_per_s\fR, \fBsockets\fR,
\fBestablished\fR, \fBlistening\fR, \fBretrans_per_s\fR, \fBdrops_per_s\fR and the raw
\fBretrans_segs\fR and \fBdrops\fR; each socket and interface gains \fBnetns\fR, its
namespace's label.
.PP
\fBexport \-\-all\-netns\fR labels each interface's series (\fBnode_network_*\fR,
\fBnode_qdisc_*\fR) with its namespace's \fBnetns\fR label, plus \fBcontainer\fR where
known, and adds per namespace \fBnetlens_netns_info\fR{\fBnetns\fR,\fBinode\fR} (1),
\fBnetlens_netns_sockets\fR (gauge), \fBnetlens_netns_tcp_retransmits_total\fR and
\fBnetlens_netns_drops_total\fR. Cardinality: the \fBnetns\fR label takes one value per
namespace (a busy container host: one per container, and a new value when a container
is re-created, its namespace being new); per namespace 4 series plus the interface
series of each of its interfaces (about 20 per interface); sockets are never a label.
The other series keep the watched namespace's label.
"#;
