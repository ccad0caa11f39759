//! The column titles each table has, as `[columns]` names them. The
//! tables' own specs (widths, priorities) are in app and ui; the
//! `config_column_titles` test in tests/system/config.rs checks they agree.

use super::Tab;

/// "NS" shows only while more than one namespace is sampled (--all-netns).
pub const INTERFACES: &[&str] = &[
    "NS", "IFACE", "STATE", "rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "%util", "err/s", "drop/s",
    "ovr/s", "carr/s", "coll/s", "MTU", "SPEED",
];

pub const SOCKETS: &[&str] = &[
    "NS", "Net", "State", "RcvQ/acc", "SndQ/max", "Local", "Peer", "Flag", "Process", "rtt ms",
    "cwnd", "retr",
];

pub const CONNTRACK: &[&str] = &[
    "PROTO",
    "STATE",
    "ORIG SRC → DST ⇒ NAT",
    "TIMEOUT",
    "PKTS",
    "BYTES",
    "MARK",
    "ZONE",
];

/// The flow table's titles, then those only the grouped tables have
/// ("NS" as for Sockets).
pub const FLOWS: &[&str] = &[
    "NS", "PROTO", "FLOW", "NAME", "NAT", "PKTS", "BYTES", "B/s", "PKT/s", "STATE", "RTT ms",
    "RETX", "PROCESS", "FIRST", "LAST", "KEY", "FLOWS",
];

/// The column titles a tab has (none for tabs without a column table).
pub fn titles(tab: Tab) -> &'static [&'static str] {
    match tab {
        Tab::Interfaces => INTERFACES,
        Tab::Sockets => SOCKETS,
        Tab::Conntrack => CONNTRACK,
        Tab::Flows => FLOWS,
        _ => &[],
    }
}
