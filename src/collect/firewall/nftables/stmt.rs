//! The statements that print from their own attributes: nat, log and
//! limit, as nftables' statement.c prints them.

use super::expr::{Log, Nat};

/// NFPROTO_IPV6.
const IPV6: u32 = 10;

/// An address or port range: the low end, and the high one if it differs.
pub type Range = Option<(String, Option<String>)>;

/// snat, dnat, masquerade and redirect (nft's nat_stmt_print), given
/// the address and port ranges of their registers; `inet` for a
/// table of the inet family, where the address family is named.
pub fn nat_text(nat: &Nat, inet: bool, addr: Range, proto: Range) -> String {
    let ip6 = nat.family == IPV6;
    let mut out = nat.kind.to_string();
    if addr.is_some() || proto.is_some() {
        if inet {
            out.push_str(if ip6 { " ip6" } else { " ip" });
        }
        if nat.flags & 0x40 != 0 {
            out.push_str(" prefix");
        }
        out.push_str(" to");
    }
    if let Some((low, high)) = &addr {
        out.push(' ');
        let bracket = ip6 && proto.is_some();
        out.push_str(&match high {
            None if bracket => format!("[{low}]"),
            Some(high) if bracket => format!("[{low}]-[{high}]"),
            None => low.clone(),
            Some(high) => format!("{low}-{high}"),
        });
    }
    if let Some((low, high)) = &proto {
        if addr.is_none() {
            out.push(' ');
        }
        out.push_str(&format!(":{low}"));
        if let Some(high) = high {
            out.push_str(&format!("-{high}"));
        }
    }
    let flags: Vec<&str> = [(0x4, "random"), (0x10, "fully-random"), (0x8, "persistent")]
        .iter()
        .filter(|(bit, _)| nat.flags & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    if !flags.is_empty() {
        out.push(' ');
        out.push_str(&flags.join(","));
    }
    out
}

pub fn log_text(log: &Log) -> String {
    const LEVELS: [&str; 9] = [
        "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug", "audit",
    ];
    let mut out = String::from("log");
    if let Some(prefix) = &log.prefix {
        out.push_str(&format!(" prefix \"{prefix}\""));
    }
    if let Some(group) = log.group {
        out.push_str(&format!(" group {group}"));
    }
    if let Some(snaplen) = log.snaplen {
        out.push_str(&format!(" snaplen {snaplen}"));
    }
    if let Some(threshold) = log.qthreshold {
        out.push_str(&format!(" queue-threshold {threshold}"));
    }
    if let Some(level) = log.level.filter(|level| *level != 4) {
        let name = LEVELS.get(level as usize).copied().unwrap_or("unknown");
        out.push_str(&format!(" level {name}"));
    }
    let flags = log.flags;
    if flags & 0x2f == 0x2f {
        out.push_str(" flags all");
    } else {
        if flags & 0x3 != 0 {
            out.push_str(" flags tcp");
            let mut options = Vec::new();
            if flags & 0x1 != 0 {
                options.push("sequence");
            }
            if flags & 0x2 != 0 {
                options.push("options");
            }
            out.push_str(&format!(" {}", options.join(",")));
        }
        for (bit, text) in [
            (0x4, " flags ip options"),
            (0x8, " flags skuid"),
            (0x20, " flags ether"),
        ] {
            if flags & bit != 0 {
                out.push_str(text);
            }
        }
    }
    out
}

pub fn limit_text(rate: u64, unit: u64, burst: u32, bytes: bool, over: bool) -> String {
    let unit = match unit {
        1 => "second",
        60 => "minute",
        3600 => "hour",
        86400 => "day",
        604_800 => "week",
        _ => "error",
    };
    let over = if over { "over " } else { "" };
    if !bytes {
        let burst = match burst {
            0 | 5 => String::new(),
            n => format!(" burst {n} packets"),
        };
        return format!("limit rate {over}{rate}/{unit}{burst}");
    }
    let scaled = |mut n: u64| {
        let mut names = ["bytes", "kbytes", "mbytes"].iter();
        let mut name = names.next().copied().unwrap_or("bytes");
        for next in names {
            if n == 0 || !n.is_multiple_of(1024) {
                break;
            }
            n /= 1024;
            name = next;
        }
        format!("{n} {name}")
    };
    let burst = match burst {
        0 | 5 => String::new(),
        n => format!(" burst {}", scaled(u64::from(n))),
    };
    format!("limit rate {over}{}/{unit}{burst}", scaled(rate))
}
