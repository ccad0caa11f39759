//! The threshold table: pure data (no imports), because build.rs includes
//! this file to render the man page's CONFIGURATION section.

/// The finding thresholds: config key (in `[thresholds]`), default, meaning.
/// build.rs renders them in the man page's CONFIGURATION, `--print-config`
/// writes them as comments, the setup screen lists them, and a test in
/// src/manual/mod.rs checks this table against `Thresholds`.
pub const THRESHOLDS: &[(&str, &str, &str)] = &[
    (
        "iface_saturated_warn_percent",
        "80.0",
        "iface-saturated: %ifutil (sar's) at which it warns",
    ),
    (
        "iface_saturated_crit_percent",
        "95.0",
        "iface-saturated: %ifutil at which it is critical",
    ),
    (
        "qdisc_drop_per_s",
        "0.0",
        "iface-saturated (device without a link speed): root qdisc drops per second above this (crit)",
    ),
    (
        "qdisc_backlog_packets",
        "50",
        "iface-saturated (device without a link speed): packets queued in the root qdisc two samples in a row (warn)",
    ),
    (
        "conntrack_full_warn_percent",
        "80.0",
        "conntrack-full: nf_conntrack_count as a % of nf_conntrack_max to warn",
    ),
    (
        "conntrack_full_crit_percent",
        "95.0",
        "conntrack-full: the same, critical",
    ),
    (
        "conntrack_drop_per_s",
        "0.0",
        "conntrack-drops/-full: drop, insert_failed or early_drop per second above this counts as rising",
    ),
    (
        "flood_warn_pps",
        "10000.0",
        "small-packet-flood: captured packets/s to warn",
    ),
    (
        "flood_crit_pps",
        "100000.0",
        "small-packet-flood: captured packets/s, critical",
    ),
    (
        "flood_mean_bytes",
        "100.0",
        "small-packet-flood: the mean captured packet must be under this many bytes",
    ),
    (
        "syn_flood_syn_recv",
        "256",
        "syn-flood: sockets in SYN_RECV that make a flood by themselves",
    ),
    (
        "syn_flood_rise_per_s",
        "100.0",
        "syn-flood: growth of SYN_RECV per second",
    ),
    (
        "syn_flood_cookies_per_s",
        "100.0",
        "syn-flood: syncookies sent per second",
    ),
    (
        "small_packet_pps",
        "100.0",
        "syn-flood: an interface receiving this many packets/s ...",
    ),
    (
        "small_packet_bytes",
        "128.0",
        "syn-flood: ... averaging at most this many bytes is named as where the flood comes in",
    ),
    (
        "stuck_queue_samples",
        "3",
        "socket-backlog: samples in a row a queue must stay stuck (also the STUCK mark)",
    ),
    (
        "retrans_warn_percent",
        "2.0",
        "retransmits: RetransSegs as a % of OutSegs to warn",
    ),
    (
        "retrans_crit_percent",
        "10.0",
        "retransmits: the same, critical",
    ),
    (
        "retrans_min_out_segs_per_s",
        "50.0",
        "retransmits: ignored while fewer segments than this are sent per second",
    ),
    (
        "flow_retrans_warn_percent",
        "1.0",
        "retransmits (a flow's): % of its packets retransmitted to warn rather than inform",
    ),
    (
        "dns_slow_p90_ms",
        "100.0",
        "dns-slow: a server's 90th percentile answer latency in the window, in milliseconds (crit at 10 times this)",
    ),
    (
        "dns_timeout_count",
        "1",
        "dns-timeout: timed-out queries in the window that raise it",
    ),
    (
        "close_wait_warn_sockets",
        "64",
        "close-wait: sockets of one process on one local port in CLOSE_WAIT in two samples in a row, to warn",
    ),
    (
        "close_wait_crit_sockets",
        "512",
        "close-wait: the same, critical",
    ),
    (
        "close_wait_growing_sockets",
        "8",
        "close-wait: fewer than warn still warn when at least this many and their count grew since the sample before",
    ),
    (
        "port_exhaustion_warn_percent",
        "80.0",
        "port-exhaustion: sockets from one address to one destination ip:port as a % of ip_local_port_range's size, to warn",
    ),
    (
        "port_exhaustion_crit_percent",
        "95.0",
        "port-exhaustion: the same, critical",
    ),
    (
        "connect_timeout_warn_sockets",
        "2",
        "connect-timeout: SYN_SENT sockets to one destination whose SYN was retransmitted (unanswered for 1 s or more), to warn",
    ),
    (
        "connect_timeout_crit_sockets",
        "20",
        "connect-timeout: the same, critical",
    ),
    (
        "udp_drops_per_s",
        "0.0",
        "udp-drops: a UDP socket's drop counter rising faster than this many datagrams/s (0: any drop)",
    ),
    (
        "udp_drops_crit_per_s",
        "100.0",
        "udp-drops: drops/s that make it critical",
    ),
    (
        "connect_refused_warn_per_s",
        "5.0",
        "connect-refused: connections refused per second (either side) to warn",
    ),
    (
        "connect_refused_crit_per_s",
        "100.0",
        "connect-refused: the same, critical",
    ),
    (
        "tcp_mem_warn_percent",
        "100.0",
        "tcp-memory: sockstat's TCP mem as a % of net.ipv4.tcp_mem's pressure value to warn (below 100 warns before the kernel presses)",
    ),
    (
        "tcp_orphans_warn_percent",
        "80.0",
        "tcp-memory: orphaned sockets as a % of net.ipv4.tcp_max_orphans to warn (crit at 100)",
    ),
    (
        "softnet_drop_per_s",
        "0.0",
        "softnet-drops: one CPU's backlog drops per second (softnet_stat dropped) above this (crit)",
    ),
    (
        "softnet_squeeze_per_s",
        "10.0",
        "softnet-drops: one CPU's time_squeeze per second above this (warn)",
    ),
    (
        "softirq_imbalance_percent",
        "80.0",
        "softirq-imbalance: one CPU's share of the packets all CPUs processed (softnet_stat), in %",
    ),
    (
        "softirq_imbalance_min_pps",
        "10000.0",
        "softirq-imbalance: the packets processed per second by all CPUs must reach this",
    ),
    (
        "softirq_imbalance_si_percent",
        "50.0",
        "softirq-imbalance: the busiest CPU's time in softirq (top's si), in %, must reach this",
    ),
    (
        "neigh_table_warn_percent",
        "90.0",
        "neigh-table-full: ARP/NDP table entries as a % of gc_thresh3 to warn",
    ),
    (
        "neigh_forced_gc_per_s",
        "0.0",
        "neigh-table-full: forced garbage collections of the table per second above this (warn)",
    ),
    (
        "path_loss_warn_percent",
        "5.0",
        "path-loss (netlens trace, Path view): loss in % at the destination, and at every answering hop from the one where it starts, to warn",
    ),
    (
        "path_loss_crit_percent",
        "25.0",
        "path-loss: loss in % at the destination that makes it critical",
    ),
    (
        "path_latency_step_ms",
        "20.0",
        "path-latency (netlens trace, Path view): a rise of the mean round-trip time at one hop, kept by every hop after it, in ms, to warn",
    ),
    (
        "path_latency_crit_ms",
        "100.0",
        "path-latency: the same rise, in ms, that makes it critical",
    ),
    (
        "path_min_probes",
        "5",
        "path-loss, path-latency: probes answered or timed out that a hop needs before it is judged",
    ),
    (
        "findings_on_samples",
        "1",
        "every finding: samples in a row its condition must hold before it shows (raise it to ignore one-sample spikes; snapshot then needs --count of at least this)",
    ),
    (
        "findings_off_samples",
        "3",
        "every finding: calm samples in a row before it stops showing; until then it shows marked \"calm N\" below the firing ones",
    ),
];
