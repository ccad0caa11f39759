//! The catalogue: every kernel counter that means trouble, in one table
//! that the findings (`counter:<Id>`), `netlens explain`, the man page's
//! COUNTER CATALOGUE section and docs/catalogue.md's block are generated
//! from. Adding a finding for a new counter is one row here.
//!
//! Plain data and string rendering only: build.rs includes this folder by
//! path to render the man page, so nothing here may name the crate.
//!
//! Each entry names the counter as users see it (`TcpExt.ListenOverflows`
//! as nstat prints it, `netdev.rx_missed_errors`, `qdisc.drops`), the kernel
//! drop reasons (SKB_DROP_REASON_* without the prefix) that count the same
//! packets, a level and a rate threshold. Counters that only count volume
//! (`Tcp.InSegs`, `IpExt.OutOctets`) are in `NOT_FAILURES`, so that a test
//! can check every field the running kernel has is classified.

/// One catalogue row: `entry!(id, Source, Level, per_s, [REASONS], covered_by, meaning, fix)`.
macro_rules! entry {
    ($id:expr, $source:ident, $level:ident, $per_s:expr, [$($reason:ident),*], $covered:expr,
     $meaning:expr, $fix:expr $(,)?) => {
        super::Entry {
            id: $id,
            finding: concat!("counter:", $id),
            source: super::Source::$source,
            level: super::Level::$level,
            per_s: $per_s,
            reasons: &[$(stringify!($reason)),*],
            covered_by: $covered,
            meaning: $meaning,
            fix: $fix,
        }
    };
}

pub mod conns;
mod ip;
mod link;
mod reasons;
mod render;
mod tcp;
mod tcp_ext;
mod udp_icmp;

pub use reasons::{NOT_REASONS, REASONS, Reason, UNKNOWN_PER_S, reason};
pub use render::{
    conns_man_section, conns_readme_block, explain, man_section, readme_block, reason_raises,
    reasons_man_section, reasons_readme_block,
};

/// Where a counter is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// /proc/net/snmp (Ip, Icmp, Tcp, Udp, UdpLite).
    Snmp,
    /// /proc/net/netstat (TcpExt, IpExt).
    Netstat,
    /// /proc/net/snmp6 (Ip6, Icmp6, Udp6, UdpLite6).
    Snmp6,
    /// rtnl_link_stats64 of each interface (`ip -s -s link`).
    Netdev,
    /// The root qdisc's statistics (`tc -s qdisc`, RTM_GETQDISC).
    Qdisc,
    /// Conntrack statistics (`conntrack -S`).
    Conntrack,
    /// The per-CPU backlog's statistics (/proc/net/softnet_stat).
    Softnet,
}

impl Source {
    pub fn label(self) -> &'static str {
        match self {
            Source::Snmp => "/proc/net/snmp",
            Source::Netstat => "/proc/net/netstat",
            Source::Snmp6 => "/proc/net/snmp6",
            Source::Netdev => "netdev stats64",
            Source::Qdisc => "qdisc stats",
            Source::Conntrack => "conntrack stats",
            Source::Softnet => "/proc/net/softnet_stat",
        }
    }
}

/// How bad a rising counter is. Info: normal life, shown, raises nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Info,
    Warn,
    Crit,
}

impl Level {
    pub fn label(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Crit => "crit",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// As users see it: "TcpExt.ListenOverflows", "netdev.rx_missed_errors".
    pub id: &'static str,
    /// The finding id it raises: "counter:" and the id.
    pub finding: &'static str,
    pub source: Source,
    pub level: Level,
    /// A finding is raised when the counter rises faster than this, per second.
    pub per_s: f64,
    /// Kernel drop reasons counting the same packets, without SKB_DROP_REASON_.
    pub reasons: &'static [&'static str],
    /// A hand-written finding that already reports this counter: then the
    /// catalogue raises none of its own.
    pub covered_by: Option<&'static str>,
    pub meaning: &'static str,
    pub fix: &'static str,
}

impl Entry {
    /// The part after the group: "ListenOverflows", "rx_missed_errors".
    pub fn name(&self) -> &'static str {
        self.id.split_once('.').map_or(self.id, |(_, name)| name)
    }

    /// Whether a rising counter raises a catalogue finding.
    pub fn raises(&self) -> bool {
        self.level != Level::Info && self.covered_by.is_none()
    }
}

/// The tables, in the order the man page and docs/catalogue.md list them.
pub const TABLES: &[&[Entry]] = &[
    tcp::TCP,
    tcp_ext::TCP_EXT,
    tcp::TCP_EXT_LOSS,
    tcp::TCP_EXT_AUTH,
    ip::IP,
    ip::IP_EXT,
    ip::IP6,
    udp_icmp::ICMP,
    udp_icmp::ICMP6,
    &udp_icmp::UDP,
    &udp_icmp::UDP_LITE,
    &udp_icmp::UDP6,
    &udp_icmp::UDP_LITE6,
    link::NETDEV,
    link::QDISC,
    link::CONNTRACK,
    link::SOFTNET,
];

/// Every entry.
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    TABLES.iter().flat_map(|t| t.iter())
}

/// The catalogue entry of a counter, by its exact id.
pub fn get(id: &str) -> Option<&'static Entry> {
    entries().find(|e| e.id == id)
}

/// Fields of the kernel's snmp files that count volume or state, not
/// trouble. A trailing `*` matches any suffix (IcmpMsg.InType3, ...).
pub const NOT_FAILURES: &[&str] = &[
    "Ip.Forwarding",
    "Ip.DefaultTTL",
    "Ip.InReceives",
    "Ip.ForwDatagrams",
    "Ip.InDelivers",
    "Ip.OutRequests",
    "Ip.ReasmReqds",
    "Ip.ReasmOKs",
    "Ip.FragOKs",
    "Ip.FragCreates",
    "Ip.OutTransmits",
    "IpExt.InMcastPkts",
    "IpExt.OutMcastPkts",
    "IpExt.InBcastPkts",
    "IpExt.OutBcastPkts",
    "IpExt.InOctets",
    "IpExt.OutOctets",
    "IpExt.InMcastOctets",
    "IpExt.OutMcastOctets",
    "IpExt.InBcastOctets",
    "IpExt.OutBcastOctets",
    "IpExt.InNoECTPkts",
    "IpExt.InECT1Pkts",
    "IpExt.InECT0Pkts",
    "Ip6.InReceives",
    "Ip6.InDelivers",
    "Ip6.OutForwDatagrams",
    "Ip6.OutRequests",
    "Ip6.ReasmReqds",
    "Ip6.ReasmOKs",
    "Ip6.FragOKs",
    "Ip6.FragCreates",
    "Ip6.InMcastPkts",
    "Ip6.OutMcastPkts",
    "Ip6.InOctets",
    "Ip6.OutOctets",
    "Ip6.InMcastOctets",
    "Ip6.OutMcastOctets",
    "Ip6.InBcastOctets",
    "Ip6.OutBcastOctets",
    "Ip6.InNoECTPkts",
    "Ip6.InECT1Pkts",
    "Ip6.InECT0Pkts",
    "Ip6.OutTransmits",
    "Icmp.InMsgs",
    "Icmp.OutMsgs",
    "Icmp.InEchos",
    "Icmp.InEchoReps",
    "Icmp.InTimestamps",
    "Icmp.InTimestampReps",
    "Icmp.InAddrMasks",
    "Icmp.InAddrMaskReps",
    "Icmp.OutEchos",
    "Icmp.OutEchoReps",
    "Icmp.OutTimestamps",
    "Icmp.OutTimestampReps",
    "Icmp.OutAddrMasks",
    "Icmp.OutAddrMaskReps",
    "IcmpMsg.InType*",
    "IcmpMsg.OutType*",
    "Icmp6.InMsgs",
    "Icmp6.OutMsgs",
    "Icmp6.InEchos",
    "Icmp6.InEchoReplies",
    "Icmp6.InGroupMembQueries",
    "Icmp6.InGroupMembResponses",
    "Icmp6.InGroupMembReductions",
    "Icmp6.InRouterSolicits",
    "Icmp6.InRouterAdvertisements",
    "Icmp6.InNeighborSolicits",
    "Icmp6.InNeighborAdvertisements",
    "Icmp6.InMLDv2Reports",
    "Icmp6.OutEchos",
    "Icmp6.OutEchoReplies",
    "Icmp6.OutGroupMembQueries",
    "Icmp6.OutGroupMembResponses",
    "Icmp6.OutGroupMembReductions",
    "Icmp6.OutRouterSolicits",
    "Icmp6.OutRouterAdvertisements",
    "Icmp6.OutNeighborSolicits",
    "Icmp6.OutNeighborAdvertisements",
    "Icmp6.OutMLDv2Reports",
    "Icmp6.InType*",
    "Icmp6.OutType*",
    "Tcp.RtoAlgorithm",
    "Tcp.RtoMin",
    "Tcp.RtoMax",
    "Tcp.MaxConn",
    "Tcp.ActiveOpens",
    "Tcp.PassiveOpens",
    "Tcp.CurrEstab",
    "Tcp.InSegs",
    "Tcp.OutSegs",
    "Udp.InDatagrams",
    "Udp.OutDatagrams",
    "UdpLite.InDatagrams",
    "UdpLite.OutDatagrams",
    "Udp6.InDatagrams",
    "Udp6.OutDatagrams",
    "UdpLite6.InDatagrams",
    "UdpLite6.OutDatagrams",
    "TcpExt.TW",
    "TcpExt.TWRecycled",
    "TcpExt.DelayedACKs",
    "TcpExt.TCPHPHits",
    "TcpExt.TCPPureAcks",
    "TcpExt.TCPHPAcks",
    "TcpExt.TCPSackShifted",
    "TcpExt.TCPSackMerged",
    "TcpExt.TCPSackShiftFallback",
    "TcpExt.TCPRcvCoalesce",
    "TcpExt.TCPBacklogCoalesce",
    "TcpExt.TCPFastOpenActive",
    "TcpExt.TCPFastOpenPassive",
    "TcpExt.TCPFastOpenCookieReqd",
    "TcpExt.TCPFastOpenPassiveAltKey",
    "TcpExt.BusyPollRxPackets",
    "TcpExt.TCPAutoCorking",
    "TcpExt.TCPOrigDataSent",
    "TcpExt.TCPHystartTrainDetect",
    "TcpExt.TCPHystartTrainCwnd",
    "TcpExt.TCPHystartDelayDetect",
    "TcpExt.TCPHystartDelayCwnd",
    "TcpExt.TCPKeepAlive",
    "TcpExt.TCPMTUPSuccess",
    "TcpExt.TCPDelivered",
    "TcpExt.TCPAckCompressed",
    "TcpExt.TCPMigrateReqSuccess",
    "TcpExt.TCPAOGood",
];

/// Whether a "Group.Name" field is listed as not a failure.
pub fn is_not_failure(id: &str) -> bool {
    NOT_FAILURES.iter().any(|n| match n.strip_suffix('*') {
        Some(prefix) => id.starts_with(prefix),
        None => *n == id,
    })
}

/// How the catalogue classifies a counter the kernel has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Class {
    Entry(&'static Entry),
    NotAFailure,
    /// The kernel has it, the catalogue does not: shown by its name with
    /// "not in the catalogue".
    Unknown,
}

pub fn classify(id: &str) -> Class {
    match get(id) {
        Some(entry) => Class::Entry(entry),
        None if is_not_failure(id) => Class::NotAFailure,
        None => Class::Unknown,
    }
}

/// The groups of /proc/net/snmp6, longest first: its lines are
/// "Ip6InReceives 12", group and name run together.
pub const SNMP6_GROUPS: [&str; 4] = ["UdpLite6", "Udp6", "Icmp6", "Ip6"];

/// The groups whose every field the catalogue classifies (a test checks it
/// against the running kernel). MPTcpExt is not among them.
pub const CLASSIFIED_GROUPS: &[&str] = &[
    "Ip", "Icmp", "IcmpMsg", "Tcp", "Udp", "UdpLite", "TcpExt", "IpExt", "Ip6", "Icmp6", "Udp6",
    "UdpLite6",
];

/// The counter entries counting the same packets as drop reason `name`:
/// the inverse of their `reasons`, so there is one list, not two.
pub fn related_counters(name: &str) -> impl Iterator<Item = &'static Entry> {
    let wanted = reasons::fold(name);
    entries().filter(move |e| e.reasons.contains(&wanted.as_str()))
}

#[cfg(test)]
mod tests;
