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
.SH PRIVILEGES
Interfaces, their counters, addresses and speed need no privileges. Watching
another namespace (\fB\-\-netns\fR, \fB\-\-pid\fR) needs CAP_SYS_ADMIN to enter it, in
practice root.
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
