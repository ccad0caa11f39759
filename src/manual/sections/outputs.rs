//! What netlens hands other programs: the exporter, hooks, the flight
//! recorder, load JSON and recording files.
//! Pure data: build.rs includes it (through sections/mod.rs).

pub const OUTPUTS: &str = r#".SH EXPORT (OPENMETRICS)
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
\fBnetlens_server_response_seconds\fR{\fBserver\fR} (histogram, with \fB\-\-capture\fR only:
each server's response times timed from packets, a request's last segment to its answer's
first, cumulative since the exporter started, buckets 1 ms to 10 s; at most 64 servers);
\fBnode_qdisc_{bytes,packets,drops,overlimits,requeues}_total\fR and
\fBnode_qdisc_backlog\fR{\fBdevice\fR,\fBkind\fR} (each interface's root qdisc, as
node_exporter's qdisc collector names them); \fBnetlens_drops_available\fR (1 when the
kernel's drop reasons are counted), \fBnetlens_drops_total\fR{\fBreason\fR,\fBlocation\fR,\fBnetns\fR}
(packets the kernel dropped, by reason and dropping function, summed over interfaces and
sockets; here \fBnetns\fR is the namespace the packet died in) and
\fBnetlens_drops_lost_total\fR. Cardinality: one series per interface, qdisc, TCP state,
finding id, DNS server and name, server answering requests, and drop (reason, function, namespace). assets/prometheus.yml,
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
  packets.pcapng    its captured packets (tcpdump \-r, Wireshark), each with its
                    interface, namespace, process and container; none when capture was off
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
that no process opens for reading within 5 seconds is an error). Names netlens picks itself (\fBw\fR: netlens\-TIME\-RANDOM.pcapng)
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
"#;
