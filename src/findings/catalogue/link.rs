//! Per-interface counters (netdev stats64, the root qdisc), conntrack
//! statistics and the per-CPU backlog's (softnet_stat).

use super::Entry;

const IFACE_ERRORS: Option<&str> = Some("iface-errors");
const CONNTRACK_FULL: Option<&str> = Some("conntrack-full");
const CONNTRACK_DROPS: Option<&str> = Some("conntrack-drops");
const SOFTNET_DROPS: Option<&str> = Some("softnet-drops");

pub const NETDEV: &[Entry] = &[
    entry!(
        "netdev.rx_errors",
        Netdev,
        Warn,
        0.0,
        [],
        IFACE_ERRORS,
        "frames received with an error (the sum of the rx_*_errors below)",
        "see the iface-errors finding; `ethtool -S IF` names the kind"
    ),
    entry!(
        "netdev.tx_errors",
        Netdev,
        Warn,
        0.0,
        [],
        IFACE_ERRORS,
        "frames that failed to send",
        "see the iface-errors finding"
    ),
    entry!(
        "netdev.rx_dropped",
        Netdev,
        Warn,
        0.0,
        [CPU_BACKLOG, UNHANDLED_PROTO, OTHERHOST, DEV_READY],
        IFACE_ERRORS,
        "frames received but dropped before the stack: backlog full, no handler for the protocol",
        "see the iface-errors finding: raise net.core.netdev_max_backlog or the ring"
    ),
    entry!(
        "netdev.tx_dropped",
        Netdev,
        Warn,
        0.0,
        [DEV_READY, TC_EGRESS],
        IFACE_ERRORS,
        "frames dropped on the way out by the device or its driver",
        "see the iface-errors finding; `tc -s qdisc show dev IF`"
    ),
    entry!(
        "netdev.rx_over_errors",
        Netdev,
        Warn,
        0.0,
        [FULL_RING],
        IFACE_ERRORS,
        "frames lost because the receive ring overflowed",
        "see the iface-errors finding: raise the ring (`ethtool -G IF rx N`), spread IRQs"
    ),
    entry!(
        "netdev.rx_crc_errors",
        Netdev,
        Warn,
        0.0,
        [],
        IFACE_ERRORS,
        "frames received with a bad CRC (counted in rx_errors)",
        "a bad cable, transceiver or switch port: replace it; see `ethtool -S IF`"
    ),
    entry!(
        "netdev.rx_frame_errors",
        Netdev,
        Warn,
        0.0,
        [],
        IFACE_ERRORS,
        "frames received misaligned (counted in rx_errors)",
        "a bad cable or a duplex mismatch: check `ethtool IF`"
    ),
    entry!(
        "netdev.rx_fifo_errors",
        Netdev,
        Warn,
        0.0,
        [FULL_RING],
        IFACE_ERRORS,
        "receive FIFO errors: the NIC's FIFO overflowed (counted in rx_errors)",
        "the host drains the NIC too slowly: raise the ring, spread IRQs (RSS, irqbalance)"
    ),
    entry!(
        "netdev.rx_missed_errors",
        Netdev,
        Warn,
        0.0,
        [FULL_RING],
        None,
        "frames the NIC had no room for: the host did not drain the ring in time",
        "raise the ring (`ethtool -G IF rx N`), spread IRQs over CPUs (RSS, irqbalance), check softirq CPU time"
    ),
    entry!(
        "netdev.tx_carrier_errors",
        Netdev,
        Warn,
        0.0,
        [],
        IFACE_ERRORS,
        "carrier lost while sending",
        "see the iface-errors finding: check the cable and the switch port"
    ),
    entry!(
        "netdev.tx_fifo_errors",
        Netdev,
        Warn,
        0.0,
        [],
        IFACE_ERRORS,
        "transmit FIFO underruns (counted in tx_errors)",
        "a driver or bus problem: see `ethtool -S IF`"
    ),
    entry!(
        "netdev.collisions",
        Netdev,
        Warn,
        0.0,
        [],
        IFACE_ERRORS,
        "collisions: half duplex",
        "see the iface-errors finding: fix the duplex (`ethtool IF`)"
    ),
];

pub const QDISC: &[Entry] = &[
    entry!(
        "qdisc.drops",
        Qdisc,
        Warn,
        0.0,
        [
            QDISC_DROP,
            QDISC_OVERLIMIT,
            QDISC_CONGESTED,
            FQ_FLOW_LIMIT,
            FQ_BAND_LIMIT,
            FQ_HORIZON_LIMIT,
            CAKE_FLOOD
        ],
        None,
        "packets the interface's root qdisc dropped: its queue was full or over its limit",
        "the link or the shaping rate is the bottleneck: raise txqueuelen or the qdisc's limit, find the sender in Flows; `tc -s qdisc show dev IF` (on a device without a link speed iface-saturated reports it instead)"
    ),
    entry!(
        "qdisc.overlimits",
        Qdisc,
        Info,
        0.0,
        [],
        None,
        "times the qdisc held packets back because of its rate or limit",
        "normal for a shaping qdisc (tbf, htb); see qdisc.drops for losses"
    ),
    entry!(
        "qdisc.requeues",
        Qdisc,
        Info,
        0.0,
        [],
        None,
        "packets put back because the driver's queue was busy",
        "the NIC's transmit queue is full at times: normal under load"
    ),
];

pub const CONNTRACK: &[Entry] = &[
    entry!(
        "conntrack.drop",
        Conntrack,
        Crit,
        0.0,
        [NETFILTER_DROP],
        CONNTRACK_DROPS,
        "packets dropped because no conntrack entry could be made (table full)",
        "see the conntrack-full and conntrack-drops findings: raise net.netfilter.nf_conntrack_max"
    ),
    entry!(
        "conntrack.early_drop",
        Conntrack,
        Crit,
        0.0,
        [],
        CONNTRACK_FULL,
        "entries evicted early to make room: the table is full",
        "see the conntrack-full finding: raise nf_conntrack_max, shorten the timeouts"
    ),
    entry!(
        "conntrack.insert_failed",
        Conntrack,
        Warn,
        0.0,
        [NETFILTER_DROP],
        CONNTRACK_DROPS,
        "packets dropped because their entry could not be inserted (a race or a clash)",
        "see the conntrack-drops finding: often parallel UDP DNS queries from one socket (`options single-request-reopen`)"
    ),
    entry!(
        "conntrack.invalid",
        Conntrack,
        Warn,
        0.0,
        [],
        CONNTRACK_DROPS,
        "packets conntrack could not track (out of window, bad state)",
        "see the conntrack-drops finding; net.netfilter.nf_conntrack_tcp_be_liberal=1 for asymmetric paths"
    ),
    entry!(
        "conntrack.chaintoolong",
        Conntrack,
        Warn,
        0.0,
        [NETFILTER_DROP],
        None,
        "entries not inserted because their hash chain was too long",
        "too few buckets for the entries: raise net.netfilter.nf_conntrack_buckets"
    ),
    entry!(
        "conntrack.error",
        Conntrack,
        Info,
        0.0,
        [],
        None,
        "ICMP errors conntrack could not match to a connection",
        "stale or forged ICMP errors: nothing to change"
    ),
    entry!(
        "conntrack.search_restart",
        Conntrack,
        Info,
        0.0,
        [],
        None,
        "lookups restarted because the table changed under them",
        "heavy churn in the table: nothing to change"
    ),
    entry!(
        "conntrack.clash_resolve",
        Conntrack,
        Info,
        0.0,
        [],
        None,
        "insert clashes resolved without dropping",
        "parallel packets of one new flow: nothing to change"
    ),
];

/// /proc/net/softnet_stat, summed over the CPUs (each CPU's counter is 32
/// bits and wraps on its own).
pub const SOFTNET: &[Entry] = &[
    entry!(
        "softnet.dropped",
        Softnet,
        Warn,
        0.0,
        [CPU_BACKLOG],
        SOFTNET_DROPS,
        "packets dropped because a CPU's input backlog (net.core.netdev_max_backlog) was full",
        "see the softnet-drops finding: raise net.core.netdev_max_backlog, spread the work with RSS or RPS"
    ),
    entry!(
        "softnet.time_squeeze",
        Softnet,
        Warn,
        0.0,
        [],
        SOFTNET_DROPS,
        "times the receive softirq stopped with work left: its budget (netdev_budget, netdev_budget_usecs) ran out",
        "see the softnet-drops finding: raise net.core.netdev_budget and netdev_budget_usecs"
    ),
    entry!(
        "softnet.flow_limit_count",
        Softnet,
        Warn,
        0.0,
        [CPU_BACKLOG],
        SOFTNET_DROPS,
        "packets of one busy flow dropped by the backlog's flow limit (counted in dropped too)",
        "one flow fills a CPU's backlog: spread it (RPS/RSS) or raise net.core.flow_limit_table_len"
    ),
];
