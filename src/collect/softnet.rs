//! The per-CPU network work: /proc/net/softnet_stat, /proc/softirqs and
//! /proc/stat, the net.core knobs that govern the backlog and the NAPI
//! budget, and each NIC's queues (`nic_queues`). The proc files are host
//! data; they are opened before the sampler thread enters the watched
//! namespace (`HostFiles`) and re-read from the start each tick.

use super::{interrupts, nic_queues, softirqs, sysctl};
use crate::model::InterfaceSample;
use crate::model::cpu::{CpuCounters, CpuSample, Softnet};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// The backlog and budget knobs shown beside the CPUs. Host-wide: only the
/// host's namespace has them, so they are opened with `HostFiles`.
pub const KNOBS: &[&str] = &[
    "net.core.netdev_max_backlog",
    "net.core.netdev_budget",
    "net.core.netdev_budget_usecs",
    "net.core.rps_sock_flow_entries",
];

/// The most a proc file is read: /proc/interrupts of 8192 CPUs is ~100 KiB
/// a line; anything past this is left unread.
const MAX_FILE: u64 = 16 << 20;

/// Host-wide files, opened in netlens' own namespace.
#[derive(Default)]
pub struct HostFiles {
    pub softnet_stat: Option<File>,
    pub softirqs: Option<File>,
    pub stat: Option<File>,
    pub interrupts: Option<File>,
    pub arp_cache: Option<File>,
    pub ndisc_cache: Option<File>,
    /// Knob name -> its /proc/sys file.
    pub knobs: Vec<(&'static str, File)>,
}

impl HostFiles {
    /// Opens what the calling thread's namespace has of them.
    pub fn open() -> Self {
        let open = |path: &str| File::open(path).ok();
        let knobs = KNOBS
            .iter()
            .chain(super::neigh::KNOBS)
            .filter_map(|name| Some((*name, File::open(sysctl::path(name)).ok()?)))
            .collect();
        Self {
            softnet_stat: open("/proc/thread-self/net/softnet_stat"),
            softirqs: open("/proc/softirqs"),
            stat: open("/proc/stat"),
            interrupts: open("/proc/interrupts"),
            arp_cache: open("/proc/thread-self/net/stat/arp_cache"),
            ndisc_cache: open("/proc/thread-self/net/stat/ndisc_cache"),
            knobs,
        }
    }

    /// A knob's value, whitespace trimmed.
    pub fn knob(&self, name: &str) -> Option<String> {
        let (_, file) = self.knobs.iter().find(|(n, _)| *n == name)?;
        reread(&mut &*file).map(|t| t.trim().to_string())
    }
}

/// The whole file again from its start (seq_file restarts on a seek to 0).
pub fn reread(file: &mut &File) -> Option<String> {
    file.seek(SeekFrom::Start(0)).ok()?;
    let mut text = String::new();
    file.take(MAX_FILE).read_to_string(&mut text).ok()?;
    Some(text)
}

fn read(file: &Option<File>) -> Option<String> {
    reread(&mut file.as_ref()?)
}

/// Parses /proc/net/softnet_stat: one row per online CPU, hex columns
/// processed, dropped, time_squeeze, five zeros (once fastroute), a zero
/// (once cpu_collision), received_rps, flow_limit_count, backlog_len and
/// the CPU number. Kernels before 2.6.35 have 9 columns, before 5.10 (with
/// flow limits) 11, later 13 or more. Without the CPU column the n-th row is
/// taken as CPU n (exact when every CPU is online).
pub fn parse_softnet(text: &str) -> Vec<(u32, Softnet)> {
    text.lines()
        .take(softirqs::MAX_CPUS)
        .enumerate()
        .filter_map(|(row, line)| {
            let columns: Vec<u32> = line
                .split_whitespace()
                .map(|c| u32::from_str_radix(c, 16).ok())
                .collect::<Option<_>>()?;
            if columns.len() < 3 {
                return None;
            }
            let at = |i: usize| columns.get(i).copied();
            let cpu = at(12).unwrap_or(row as u32);
            Some((
                cpu,
                Softnet {
                    processed: columns[0],
                    dropped: columns[1],
                    time_squeeze: columns[2],
                    received_rps: at(9),
                    flow_limit_count: at(10),
                    backlog_len: at(11),
                },
            ))
        })
        .collect()
}

/// One tick's CPU rows from the three files' text: every CPU any of them
/// names, by number.
pub fn merge(softnet: &str, softirqs_text: &str, stat: &str) -> Vec<CpuCounters> {
    let mut cpus: BTreeMap<u32, CpuCounters> = BTreeMap::new();
    fn entry(cpus: &mut BTreeMap<u32, CpuCounters>, cpu: u32) -> &mut CpuCounters {
        cpus.entry(cpu).or_insert(CpuCounters {
            cpu,
            ..Default::default()
        })
    }
    for (cpu, rx, tx) in softirqs::parse_softirqs(softirqs_text) {
        let c = entry(&mut cpus, cpu);
        c.net_rx = rx;
        c.net_tx = tx;
    }
    for (cpu, softirq, total) in softirqs::parse_stat(stat) {
        let c = entry(&mut cpus, cpu);
        c.softirq_ticks = softirq;
        c.total_ticks = total;
    }
    for (cpu, softnet) in parse_softnet(softnet) {
        entry(&mut cpus, cpu).softnet = Some(softnet);
    }
    cpus.into_values().collect()
}

/// Reads the CPUs, the knobs and the NICs' queues.
pub fn collect(files: &HostFiles, interfaces: &[InterfaceSample]) -> Option<CpuSample> {
    let softnet = read(&files.softnet_stat).unwrap_or_default();
    let softirqs_text = read(&files.softirqs).unwrap_or_default();
    let stat = read(&files.stat).unwrap_or_default();
    let cpus = merge(&softnet, &softirqs_text, &stat);
    if cpus.is_empty() {
        return None;
    }
    let knobs = KNOBS
        .iter()
        .filter_map(|name| Some((name.to_string(), files.knob(name)?)))
        .collect();
    let irqs = read(&files.interrupts)
        .map(|t| interrupts::parse(&t))
        .unwrap_or_default();
    Some(CpuSample {
        cpus,
        knobs,
        nics: nic_queues::collect(interfaces, &irqs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::collect::proc_fixture as data;

    #[test]
    fn nine_columns_have_no_rps_or_flow_limit() {
        let rows = parse_softnet(&data("softnet_stat_9col"));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].0, 1);
        let s = rows[0].1;
        assert_eq!((s.processed, s.dropped, s.time_squeeze), (0xaa00, 1, 2));
        assert_eq!((s.received_rps, s.flow_limit_count), (None, None));
    }

    #[test]
    fn eleven_columns_add_rps_and_flow_limit() {
        let rows = parse_softnet(&data("softnet_stat_11col"));
        assert_eq!(rows[0].1.received_rps, Some(0x10));
        assert_eq!(rows[0].1.flow_limit_count, Some(4));
        assert_eq!(rows[0].1.backlog_len, None);
        assert_eq!(rows[1].0, 1);
    }

    #[test]
    fn thirteen_columns_name_the_cpu_so_an_offline_one_is_skipped() {
        let rows = parse_softnet(&data("softnet_stat_13col"));
        let cpus: Vec<u32> = rows.iter().map(|r| r.0).collect();
        assert_eq!(cpus, vec![0, 2, 3], "CPU 1 is offline: no row");
        assert_eq!(rows[1].1.processed, u32::MAX);
        assert_eq!(rows[2].1.dropped, 0xff);
        assert_eq!(rows[0].1.backlog_len, Some(7));
    }

    #[test]
    fn fifteen_columns_of_a_6_x_kernel() {
        let rows = parse_softnet(&data("softnet_stat_15col"));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].0, 1);
        assert_eq!(rows[1].1.processed, 0x00ea5130);
        assert_eq!(rows[1].1.time_squeeze, 10);
    }

    #[test]
    fn garbage_rows_are_skipped() {
        assert!(parse_softnet("zz 1 2\n\n1 2\n").is_empty());
    }

    #[test]
    fn merge_joins_the_three_files_by_cpu() {
        let cpus = merge(
            &data("softnet_stat_15col"),
            &data("softirqs_2cpu"),
            &data("stat_2cpu"),
        );
        assert_eq!(cpus.len(), 2);
        assert_eq!(cpus[1].net_rx, 12777702);
        assert_eq!(cpus[1].softirq_ticks, 7288);
        assert_eq!(cpus[1].softnet.unwrap().processed, 0x00ea5130);
    }
}
