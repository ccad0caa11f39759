//! The numbers that decide when a finding fires. Defaults are what the man
//! page quotes; `[thresholds]` in the config file changes them. One value is
//! passed to `findings::evaluate` wherever findings are computed (live view,
//! replay, snapshot, record, export), so every mode agrees.

use serde::{Deserialize, Serialize};

mod table;
pub use table::THRESHOLDS;

/// Every threshold, with its config key (the field name). The man page's
/// CONFIGURATION section and `--print-config` list them from [`THRESHOLDS`];
/// a test keeps that table and this struct in step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Thresholds {
    /// iface-saturated: %ifutil for warn.
    pub iface_saturated_warn_percent: f64,
    /// iface-saturated: %ifutil for crit.
    pub iface_saturated_crit_percent: f64,
    /// iface-saturated (no link speed): root qdisc drops per second above
    /// this (0: any drop).
    pub qdisc_drop_per_s: f64,
    /// iface-saturated (no link speed): packets queued in the root qdisc in
    /// two samples in a row that make a standing backlog.
    pub qdisc_backlog_packets: u32,
    /// conntrack-full: count as a % of max for warn.
    pub conntrack_full_warn_percent: f64,
    /// conntrack-full: count as a % of max for crit.
    pub conntrack_full_crit_percent: f64,
    /// conntrack-drops: drop/insert_failed/early_drop per second above this
    /// counts as rising (0: any drop is news).
    pub conntrack_drop_per_s: f64,
    /// small-packet-flood: captured packets/s for warn.
    pub flood_warn_pps: f64,
    /// small-packet-flood: captured packets/s for crit.
    pub flood_crit_pps: f64,
    /// small-packet-flood: the mean packet size must be below this.
    pub flood_mean_bytes: f64,
    /// syn-flood: SYN_RECV sockets that make a flood by themselves.
    pub syn_flood_syn_recv: u32,
    /// syn-flood: growth of SYN_RECV per second.
    pub syn_flood_rise_per_s: f64,
    /// syn-flood: syncookies sent per second.
    pub syn_flood_cookies_per_s: f64,
    /// syn-flood: an interface receiving this many packets/s of small packets
    /// is named as where the flood comes in...
    pub small_packet_pps: f64,
    /// ...when its packets average at most this many bytes.
    pub small_packet_bytes: f64,
    /// socket-backlog: samples in a row with a stuck queue.
    pub stuck_queue_samples: u32,
    /// retransmits: RetransSegs as a % of OutSegs for warn.
    pub retrans_warn_percent: f64,
    /// retransmits: the same for crit.
    pub retrans_crit_percent: f64,
    /// retransmits: fewer segments sent per second than this is ignored.
    pub retrans_min_out_segs_per_s: f64,
    /// retransmits (per flow): share of a flow's packets that makes it warn
    /// rather than info.
    pub flow_retrans_warn_percent: f64,
    /// dns-slow: 90th percentile of a probe's latency, in milliseconds.
    pub dns_slow_p90_ms: f64,
    /// dns-timeout: timed-out queries in the DNS window that raise it.
    pub dns_timeout_count: u32,
    /// close-wait: CLOSE_WAIT sockets of one process on one local port,
    /// already in CLOSE_WAIT the sample before, for warn.
    pub close_wait_warn_sockets: u32,
    /// close-wait: the same, for crit.
    pub close_wait_crit_sockets: u32,
    /// close-wait: fewer such sockets than warn still fire when at least
    /// this many and their count grew since the sample before.
    pub close_wait_growing_sockets: u32,
    /// port-exhaustion: sockets from one address to one destination as a %
    /// of net.ipv4.ip_local_port_range's size, for warn.
    pub port_exhaustion_warn_percent: f64,
    /// port-exhaustion: the same, for crit.
    pub port_exhaustion_crit_percent: f64,
    /// connect-timeout: SYN_SENT sockets to one destination whose SYN was
    /// retransmitted, for warn.
    pub connect_timeout_warn_sockets: u32,
    /// connect-timeout: the same, for crit.
    pub connect_timeout_crit_sockets: u32,
    /// udp-drops: a UDP socket's drops per second above this (0: any drop).
    pub udp_drops_per_s: f64,
    /// udp-drops: drops per second that make it critical.
    pub udp_drops_crit_per_s: f64,
    /// connect-refused: refused connections per second to warn.
    pub connect_refused_warn_per_s: f64,
    /// connect-refused: the same, critical.
    pub connect_refused_crit_per_s: f64,
    /// tcp-memory: sockstat's TCP mem as a % of tcp_mem's pressure value.
    pub tcp_mem_warn_percent: f64,
    /// tcp-memory: orphans as a % of tcp_max_orphans.
    pub tcp_orphans_warn_percent: f64,
    /// softnet-drops: a CPU's backlog drops per second above this (crit).
    pub softnet_drop_per_s: f64,
    /// softnet-drops: a CPU's time_squeeze per second above this (warn).
    pub softnet_squeeze_per_s: f64,
    /// softirq-imbalance: one CPU's share of the packets processed, in %.
    pub softirq_imbalance_percent: f64,
    /// softirq-imbalance: packets processed per second by all CPUs, at least.
    pub softirq_imbalance_min_pps: f64,
    /// softirq-imbalance: the busiest CPU's softirq time (top's si), in %,
    /// at least: an imbalance matters once that CPU nears its limit.
    pub softirq_imbalance_si_percent: f64,
    /// neigh-table-full: entries as a % of gc_thresh3 to warn.
    pub neigh_table_warn_percent: f64,
    /// neigh-table-full: forced garbage collections per second above this.
    pub neigh_forced_gc_per_s: f64,
    /// path-loss: loss in % at the destination, and at every answering hop
    /// from where it starts, to warn.
    pub path_loss_warn_percent: f64,
    /// path-loss: loss in % at the destination that makes it critical.
    pub path_loss_crit_percent: f64,
    /// path-latency: a rise of the mean RTT at one hop, kept by every hop
    /// after it, in milliseconds, to warn.
    pub path_latency_step_ms: f64,
    /// path-latency: the same rise that makes it critical.
    pub path_latency_crit_ms: f64,
    /// path-loss, path-latency: probes with a known fate a hop needs before
    /// it is judged.
    pub path_min_probes: u32,
    /// Every finding: samples in a row its condition must hold to show.
    pub findings_on_samples: u32,
    /// Every finding: calm samples in a row after which it stops showing.
    pub findings_off_samples: u32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Thresholds {
    /// Today's values: what the man page quotes.
    pub const DEFAULT: Thresholds = Thresholds {
        iface_saturated_warn_percent: 80.0,
        iface_saturated_crit_percent: 95.0,
        qdisc_drop_per_s: 0.0,
        qdisc_backlog_packets: 50,
        conntrack_full_warn_percent: 80.0,
        conntrack_full_crit_percent: 95.0,
        conntrack_drop_per_s: 0.0,
        flood_warn_pps: 10_000.0,
        flood_crit_pps: 100_000.0,
        flood_mean_bytes: 100.0,
        syn_flood_syn_recv: 256,
        syn_flood_rise_per_s: 100.0,
        syn_flood_cookies_per_s: 100.0,
        small_packet_pps: 100.0,
        small_packet_bytes: 128.0,
        stuck_queue_samples: 3,
        retrans_warn_percent: 2.0,
        retrans_crit_percent: 10.0,
        retrans_min_out_segs_per_s: 50.0,
        flow_retrans_warn_percent: 1.0,
        dns_slow_p90_ms: 100.0,
        dns_timeout_count: 1,
        close_wait_warn_sockets: 64,
        close_wait_crit_sockets: 512,
        close_wait_growing_sockets: 8,
        port_exhaustion_warn_percent: 80.0,
        port_exhaustion_crit_percent: 95.0,
        connect_timeout_warn_sockets: 2,
        connect_timeout_crit_sockets: 20,
        udp_drops_per_s: 0.0,
        udp_drops_crit_per_s: 100.0,
        connect_refused_warn_per_s: 5.0,
        connect_refused_crit_per_s: 100.0,
        tcp_mem_warn_percent: 100.0,
        tcp_orphans_warn_percent: 80.0,
        softnet_drop_per_s: 0.0,
        softnet_squeeze_per_s: 10.0,
        softirq_imbalance_percent: 80.0,
        softirq_imbalance_min_pps: 10_000.0,
        softirq_imbalance_si_percent: 50.0,
        neigh_table_warn_percent: 90.0,
        neigh_forced_gc_per_s: 0.0,
        path_loss_warn_percent: 5.0,
        path_loss_crit_percent: 25.0,
        path_latency_step_ms: 20.0,
        path_latency_crit_ms: 100.0,
        path_min_probes: 5,
        findings_on_samples: 1,
        findings_off_samples: 3,
    };

    /// What is wrong with these values, naming the config key: negative or
    /// not finite numbers, a warn level above its crit level, a zero count.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let numbers = [
            (
                "iface_saturated_warn_percent",
                self.iface_saturated_warn_percent,
            ),
            (
                "iface_saturated_crit_percent",
                self.iface_saturated_crit_percent,
            ),
            ("qdisc_drop_per_s", self.qdisc_drop_per_s),
            (
                "conntrack_full_warn_percent",
                self.conntrack_full_warn_percent,
            ),
            (
                "conntrack_full_crit_percent",
                self.conntrack_full_crit_percent,
            ),
            ("conntrack_drop_per_s", self.conntrack_drop_per_s),
            ("flood_warn_pps", self.flood_warn_pps),
            ("flood_crit_pps", self.flood_crit_pps),
            ("flood_mean_bytes", self.flood_mean_bytes),
            ("syn_flood_rise_per_s", self.syn_flood_rise_per_s),
            ("syn_flood_cookies_per_s", self.syn_flood_cookies_per_s),
            ("small_packet_pps", self.small_packet_pps),
            ("small_packet_bytes", self.small_packet_bytes),
            ("retrans_warn_percent", self.retrans_warn_percent),
            ("retrans_crit_percent", self.retrans_crit_percent),
            (
                "retrans_min_out_segs_per_s",
                self.retrans_min_out_segs_per_s,
            ),
            ("flow_retrans_warn_percent", self.flow_retrans_warn_percent),
            ("dns_slow_p90_ms", self.dns_slow_p90_ms),
            (
                "port_exhaustion_warn_percent",
                self.port_exhaustion_warn_percent,
            ),
            (
                "port_exhaustion_crit_percent",
                self.port_exhaustion_crit_percent,
            ),
            ("udp_drops_per_s", self.udp_drops_per_s),
            ("udp_drops_crit_per_s", self.udp_drops_crit_per_s),
            (
                "connect_refused_warn_per_s",
                self.connect_refused_warn_per_s,
            ),
            (
                "connect_refused_crit_per_s",
                self.connect_refused_crit_per_s,
            ),
            ("tcp_mem_warn_percent", self.tcp_mem_warn_percent),
            ("tcp_orphans_warn_percent", self.tcp_orphans_warn_percent),
            ("softnet_drop_per_s", self.softnet_drop_per_s),
            ("softnet_squeeze_per_s", self.softnet_squeeze_per_s),
            ("softirq_imbalance_percent", self.softirq_imbalance_percent),
            ("softirq_imbalance_min_pps", self.softirq_imbalance_min_pps),
            (
                "softirq_imbalance_si_percent",
                self.softirq_imbalance_si_percent,
            ),
            ("neigh_table_warn_percent", self.neigh_table_warn_percent),
            ("neigh_forced_gc_per_s", self.neigh_forced_gc_per_s),
            ("path_loss_warn_percent", self.path_loss_warn_percent),
            ("path_loss_crit_percent", self.path_loss_crit_percent),
            ("path_latency_step_ms", self.path_latency_step_ms),
            ("path_latency_crit_ms", self.path_latency_crit_ms),
        ];
        for (key, value) in numbers {
            if !(value.is_finite() && value >= 0.0) {
                return Err((
                    key,
                    format!("{key} must be a number 0 or more, not {value}"),
                ));
            }
        }
        for (warn, crit, warn_value, crit_value) in [
            (
                "iface_saturated_warn_percent",
                "iface_saturated_crit_percent",
                self.iface_saturated_warn_percent,
                self.iface_saturated_crit_percent,
            ),
            (
                "conntrack_full_warn_percent",
                "conntrack_full_crit_percent",
                self.conntrack_full_warn_percent,
                self.conntrack_full_crit_percent,
            ),
            (
                "flood_warn_pps",
                "flood_crit_pps",
                self.flood_warn_pps,
                self.flood_crit_pps,
            ),
            (
                "retrans_warn_percent",
                "retrans_crit_percent",
                self.retrans_warn_percent,
                self.retrans_crit_percent,
            ),
            (
                "close_wait_warn_sockets",
                "close_wait_crit_sockets",
                f64::from(self.close_wait_warn_sockets),
                f64::from(self.close_wait_crit_sockets),
            ),
            (
                "port_exhaustion_warn_percent",
                "port_exhaustion_crit_percent",
                self.port_exhaustion_warn_percent,
                self.port_exhaustion_crit_percent,
            ),
            (
                "connect_timeout_warn_sockets",
                "connect_timeout_crit_sockets",
                f64::from(self.connect_timeout_warn_sockets),
                f64::from(self.connect_timeout_crit_sockets),
            ),
            (
                "connect_refused_warn_per_s",
                "connect_refused_crit_per_s",
                self.connect_refused_warn_per_s,
                self.connect_refused_crit_per_s,
            ),
            (
                "path_loss_warn_percent",
                "path_loss_crit_percent",
                self.path_loss_warn_percent,
                self.path_loss_crit_percent,
            ),
            (
                "path_latency_step_ms",
                "path_latency_crit_ms",
                self.path_latency_step_ms,
                self.path_latency_crit_ms,
            ),
        ] {
            if warn_value > crit_value {
                return Err((
                    warn,
                    format!("{warn} ({warn_value}) is above {crit} ({crit_value})"),
                ));
            }
        }
        for (key, value) in [
            ("qdisc_backlog_packets", self.qdisc_backlog_packets),
            ("stuck_queue_samples", self.stuck_queue_samples),
            ("dns_timeout_count", self.dns_timeout_count),
            ("close_wait_warn_sockets", self.close_wait_warn_sockets),
            ("close_wait_crit_sockets", self.close_wait_crit_sockets),
            (
                "close_wait_growing_sockets",
                self.close_wait_growing_sockets,
            ),
            (
                "connect_timeout_warn_sockets",
                self.connect_timeout_warn_sockets,
            ),
            (
                "connect_timeout_crit_sockets",
                self.connect_timeout_crit_sockets,
            ),
            ("path_min_probes", self.path_min_probes),
            ("findings_on_samples", self.findings_on_samples),
            ("findings_off_samples", self.findings_off_samples),
        ] {
            if value == 0 {
                return Err((key, format!("{key} must be 1 or more")));
            }
        }
        Ok(())
    }
}
