//! Hand-written man page sections (roff). Pure data: build.rs includes this
//! file. Options and keys are generated; these explain the rest.

pub const SECTIONS: &str = r#".SH SNAPSHOT OUTPUT
\fBnetlens snapshot\fR takes a baseline sample, then prints \fB\-\-count\fR samples one
\fB\-\-interval\fR apart; each sample's rates cover the interval before it. Without
\fB\-\-json\fR it prints a table like \fBsar \-n DEV\fR and \fBsar \-n EDEV\fR (kB is 1024
bytes). With \fB\-\-json\fR it prints one JSON object per sample, one per line.
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
.SH LOAD
\fBnetlens load\fR generates load to watch in the other tabs, from the command line
or from the Load tab. Every run is bounded by a duration (at most one hour) or a
count, and sends only to the address it was given: no redirects, no discovery.
\fBload serve\fR is the other end of \fBload tcp\fR, \fBload udp\fR and \fBload http\fR
(TCP and UDP on one port, 5201 by default); a TCP connection that does not start
with the tcp test's header is answered as HTTP/1.1. \fBload pktgen\fR drives the
kernel's pktgen (CONFIG_NET_PKTGEN, \fBmodprobe pktgen\fR) through /proc/net/pktgen:
per thread \fBrem_device_all\fR and \fBadd_device\fR, per device \fBcount\fR,
\fBclone_skb\fR, \fBpkt_size\fR, \fBdelay\fR, \fBdst\fR, \fBdst_mac\fR, then \fBstart\fR in
pgctrl (and \fBstop\fR at the time cap); it reads each device's Result line.
The global \fB\-\-interval\fR sets how often a load reports (1s by default);
\fB\-\-netns\fR and \fB\-\-pid\fR run the load (or the server) inside that namespace.
.SH LOAD JSON KEYS
With \fB\-\-json\fR each load kind prints per-interval objects (\fBtype\fR "interval", or
"probe" for each probe) and ends with one summary object (\fBtype\fR "summary"). Every
summary has \fBkind\fR and \fBstopped\fR (true when stopped before its end).
.TP
\fBtcp\fR
\fBseconds\fR, \fBbytes\fR (what the receiver got), \fBbits_per_s\fR, \fBretransmits\fR
(from tcp_info; null with \fB\-\-reverse\fR, where the server sends), \fBpackets_per_s\fR
(segments), \fBloss_percent\fR (retransmitted segments per segment sent),
\fBcwnd_bytes\fR, \fBstreams\fR, \fBreverse\fR, \fBsender\fR and \fBreceiver\fR
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
.SH PRIVILEGES
Interfaces, their counters, addresses and speed need no privileges. Watching
another namespace (\fB\-\-netns\fR, \fB\-\-pid\fR) needs CAP_SYS_ADMIN to enter it, in
practice root. \fBload pktgen\fR needs root; the other load kinds need none.
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
