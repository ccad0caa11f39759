//! Running netlens: privileges, environment, input limits, exit status,
//! and the configuration file.
//! Pure data: build.rs includes it (through sections/mod.rs).

pub const RUNNING: &str = r#".SH PRIVILEGES
Interfaces, their counters, addresses and speed, sockets (sock_diag) and the TCP
counters need no privileges. The owner of a socket comes from eBPF task iterators
(root; the socket fds of the watched namespace's processes, listed in the kernel), else
from /proc/PID/fd of the processes in the watched namespace, which only root (or the
owner) may read: without it, sockets of other users show "unknown (no permission)". A
socket whose owner is still being looked for shows "(looking)". Through /proc, a new
socket is looked for first in the processes that opened sockets lately (a server's
workers), then, if it is still open at the next sample, in every process, all of which
are also read every few seconds: a second holder of a new socket (a fork, a passed
descriptor) may show those few seconds after the first. Watching
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
