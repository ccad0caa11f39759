//! The conntrack collector: cheap statistics every tick, the entry dump only
//! when asked for and at most about once a second.
//!
//! Sources, best first:
//! - ctnetlink (needs CAP_NET_ADMIN): GET_STATS_CPU, GET_STATS, the dump;
//! - /proc/thread-self/net/stat/nf_conntrack for the statistics and
//!   /proc/sys/net/netfilter/nf_conntrack_{count,max} (world readable).
//!
//! Every path is read by the sampler thread after it entered the watched
//! namespace: /proc/thread-self/net is that thread's namespace (/proc/self/net
//! would be the main thread's), and /proc/sys/net resolves per namespace of the
//! task that opens it, so both describe the watched namespace.
//!
//! Nothing here is an error for the caller: a missing module, a missing
//! capability or a namespace where nothing is tracked yet becomes
//! `available: false` (or `entries_error`) with a reason in words.

use super::ctnetlink::Ctnetlink;
use crate::model::conntrack::{ConntrackSample, ConntrackStats, StatsSource};
use std::io;
use std::time::{Duration, Instant};

/// The entry dump walks the whole global hash table (about 10 ms even when
/// empty, 80 ms at 17k entries), so it runs at most this often. The 50 ms
/// below one second absorbs the timer jitter of a 1 s sampling tick.
pub const MIN_DUMP_INTERVAL: Duration = Duration::from_millis(950);

const STAT_FILE: &str = "/proc/thread-self/net/stat/nf_conntrack";
const SYSCTL_DIR: &str = "/proc/sys/net/netfilter";

pub const REASON_NOT_LOADED: &str = "the nf_conntrack module is not loaded (no \
    /proc/net/stat/nf_conntrack): nothing is tracked; `modprobe nf_conntrack` loads it";
pub const REASON_NO_CAP: &str = "listing entries needs CAP_NET_ADMIN (run as root, or \
    `setcap cap_net_admin+ep netlens`); counters come from /proc";
pub const REASON_NOT_TRACKING: &str = "no connection tracking in this namespace yet: \
    it has no netfilter table, and conntrack starts only when a rule needs it \
    (a nat table, -m conntrack, nft ct)";

pub struct ConntrackCollector {
    netlink: Option<Ctnetlink>,
    /// Why the netlink socket could not be opened or used, if so.
    netlink_error: Option<io::Error>,
    last_dump: Option<Instant>,
}

impl Default for ConntrackCollector {
    fn default() -> Self {
        Self::new()
    }
}

impl ConntrackCollector {
    /// Must run on the thread that is in the watched namespace.
    pub fn new() -> Self {
        match Ctnetlink::new() {
            Ok(netlink) => Self {
                netlink: Some(netlink),
                netlink_error: None,
                last_dump: None,
            },
            Err(error) => Self {
                netlink: None,
                netlink_error: Some(error),
                last_dump: None,
            },
        }
    }

    /// Whether a dump asked for now may run (rate limit).
    fn dump_due(&self, now: Instant) -> bool {
        self.last_dump
            .is_none_or(|last| now.duration_since(last) >= MIN_DUMP_INTERVAL)
    }

    /// One tick. `want_entries`: the tab is open or a snapshot asked.
    pub fn collect(&mut self, want_entries: bool) -> ConntrackSample {
        let mut sample = ConntrackSample {
            read_mono: Some(super::boottime_seconds()),
            buckets: read_sysctl("nf_conntrack_buckets"),
            acct: read_sysctl("nf_conntrack_acct").map(|v| v != 0),
            ..Default::default()
        };
        if let Some(netlink) = self.netlink.as_mut() {
            match netlink.stats().and_then(|stats| {
                let (count, max) = netlink.count_and_max()?;
                Ok((stats, count, max))
            }) {
                Ok((stats, count, max)) => {
                    self.netlink_error = None;
                    sample.source = StatsSource::Netlink;
                    sample.stats = Some(stats);
                    sample.count = count;
                    sample.max = max;
                }
                Err(error) => self.netlink_error = Some(error),
            }
        }
        if sample.source == StatsSource::None {
            match read_stat_file() {
                Ok((stats, count)) => {
                    sample.source = StatsSource::Proc;
                    sample.stats = Some(stats);
                    sample.count = read_sysctl("nf_conntrack_count").or(count);
                }
                Err(_) => {
                    sample.reason = Some(REASON_NOT_LOADED.into());
                    return sample;
                }
            }
        }
        if sample.max.is_none() {
            sample.max = read_sysctl("nf_conntrack_max");
        }
        sample.available = true;

        let netlink_works = sample.source == StatsSource::Netlink;
        let netlink_problem = (!netlink_works).then(|| match &self.netlink_error {
            Some(error) if is_permission(error) => REASON_NO_CAP.to_string(),
            Some(error) => format!("cannot list entries: ctnetlink: {error}"),
            None => "cannot list entries: ctnetlink is unavailable".to_string(),
        });
        if want_entries {
            let now = Instant::now();
            if let Some(problem) = &netlink_problem {
                sample.entries_error = Some(problem.clone());
            } else if self.dump_due(now) {
                self.last_dump = Some(now);
                if let Some(netlink) = self.netlink.as_mut() {
                    match netlink.entries() {
                        Ok(entries) => sample.entries = Some(entries),
                        Err(error) => {
                            sample.entries_error = Some(format!("entry dump failed: {error}"))
                        }
                    }
                }
            }
        }

        // Nothing counted and nothing that could make conntrack run: say so
        // rather than show a table of zeros as if all were well.
        let idle =
            sample.count == Some(0) && sample.stats.is_some_and(|s| s == ConntrackStats::default());
        if idle && !self.has_tables() {
            sample.available = false;
            sample.reason = Some(REASON_NOT_TRACKING.into());
        } else {
            sample.reason = netlink_problem;
        }
        sample
    }

    /// Whether this namespace has any netfilter table: nftables (which
    /// iptables-nft uses) or legacy iptables. Unknown counts as yes.
    fn has_tables(&mut self) -> bool {
        let legacy = ["ip_tables_names", "ip6_tables_names"].iter().any(|name| {
            std::fs::read_to_string(format!("/proc/thread-self/net/{name}"))
                .is_ok_and(|text| !text.trim().is_empty())
        });
        if legacy {
            return true;
        }
        match self.netlink.as_mut().map(|n| n.has_nft_tables()) {
            Some(Ok(any)) => any,
            _ => true,
        }
    }
}

fn is_permission(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EPERM | libc::EACCES))
}

/// A number from /proc/sys/net/netfilter, read in this thread's namespace.
pub fn read_sysctl(name: &str) -> Option<u64> {
    std::fs::read_to_string(format!("{SYSCTL_DIR}/{name}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The statistics and the count from /proc/net/stat/nf_conntrack of this
/// thread's namespace.
pub fn read_stat_file() -> io::Result<(ConntrackStats, Option<u64>)> {
    let text = std::fs::read_to_string(STAT_FILE)?;
    parse_stat_file(&text)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable nf_conntrack stats"))
}

/// Parses /proc/net/stat/nf_conntrack: a header of column names, then one
/// row of hex numbers per CPU. Columns are found by name, so a kernel that
/// adds or drops one still parses. Returns the summed stats and `entries`.
pub fn parse_stat_file(text: &str) -> Option<(ConntrackStats, Option<u64>)> {
    let mut lines = text.lines();
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let mut stats = ConntrackStats::default();
    let mut entries = None;
    for line in lines {
        let values: Vec<u64> = line
            .split_whitespace()
            .map(|v| u64::from_str_radix(v, 16))
            .collect::<Result<_, _>>()
            .ok()?;
        if values.len() != names.len() {
            return None;
        }
        for (name, value) in names.iter().zip(values) {
            let field = match *name {
                "entries" => {
                    entries = Some(value); // the same in every row
                    continue;
                }
                "found" => &mut stats.found,
                "invalid" => &mut stats.invalid,
                "insert" => &mut stats.insert,
                "insert_failed" => &mut stats.insert_failed,
                "drop" => &mut stats.drop,
                "early_drop" => &mut stats.early_drop,
                "icmp_error" => &mut stats.error,
                "search_restart" => &mut stats.search_restart,
                "clashres" => &mut stats.clash_resolve,
                "chainlength" => &mut stats.chaintoolong,
                _ => continue,
            };
            *field += value;
        }
    }
    Some((stats, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart
0000002a  00000001 00000010 00000000 00000003 00000000 00000000 00000000 00000020 00000002 00000005 00000001 00000000  00000000 00000000 00000000 00000004
0000002a  00000000 00000001 00000000 00000000 00000000 00000000 00000001 0000000a 00000000 00000001 00000000 00000002  00000000 00000000 00000000 00000000
";

    #[test]
    fn stat_file_sums_cpus_by_column_name() {
        let (stats, entries) = parse_stat_file(STAT).unwrap();
        assert_eq!(entries, Some(42));
        assert_eq!(
            stats,
            ConntrackStats {
                found: 17,
                invalid: 3,
                insert: 42,
                insert_failed: 2,
                drop: 6,
                early_drop: 1,
                error: 2,
                search_restart: 4,
                clash_resolve: 1,
                chaintoolong: 1,
            }
        );
    }

    #[test]
    fn bad_stat_file_is_none() {
        assert_eq!(parse_stat_file(""), None);
        assert_eq!(parse_stat_file("entries found\nzz 1\n"), None);
        assert_eq!(parse_stat_file("entries found\n1\n"), None);
    }

    #[test]
    fn dumps_are_rate_limited() {
        let mut collector = ConntrackCollector {
            netlink: None,
            netlink_error: None,
            last_dump: None,
        };
        let now = Instant::now();
        assert!(collector.dump_due(now));
        collector.last_dump = Some(now);
        assert!(!collector.dump_due(now + Duration::from_millis(500)));
        assert!(collector.dump_due(now + Duration::from_secs(1)));
    }
}
