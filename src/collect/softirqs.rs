//! /proc/softirqs (NET_RX and NET_TX per CPU) and /proc/stat (each CPU's
//! softirq ticks against all its ticks). Both are host-wide.

/// At most this many CPUs are read (the kernel's NR_CPUS tops out at 8192).
pub const MAX_CPUS: usize = 8192;

/// NET_RX and NET_TX softirq counts per CPU, by CPU number. The header
/// names the CPUs ("CPU0 CPU1 ..."); a CPU missing from a row counts 0.
pub fn parse_softirqs(text: &str) -> Vec<(u32, u64, u64)> {
    let mut lines = text.lines();
    let cpus: Vec<u32> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .take(MAX_CPUS)
        .collect();
    let mut rx = vec![0u64; cpus.len()];
    let mut tx = vec![0u64; cpus.len()];
    for line in lines {
        let Some((name, counts)) = line.split_once(':') else {
            continue;
        };
        let target = match name.trim() {
            "NET_RX" => &mut rx,
            "NET_TX" => &mut tx,
            _ => continue,
        };
        for (slot, count) in target.iter_mut().zip(counts.split_whitespace()) {
            *slot = count.parse().unwrap_or(0);
        }
    }
    cpus.into_iter()
        .zip(rx.into_iter().zip(tx))
        .map(|(cpu, (rx, tx))| (cpu, rx, tx))
        .collect()
}

/// Each "cpuN" line of /proc/stat: (N, softirq ticks, total ticks). The
/// total is user+nice+system+idle+iowait+irq+softirq+steal (guest time is
/// already inside user and nice). Older kernels have fewer columns; the
/// missing ones count 0.
pub fn parse_stat(text: &str) -> Vec<(u32, u64, u64)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu: u32 = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let ticks: Vec<u64> = fields.take(8).map(|f| f.parse().unwrap_or(0)).collect();
            let softirq = ticks.get(6).copied().unwrap_or(0);
            Some((cpu, softirq, ticks.iter().sum()))
        })
        .take(MAX_CPUS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::collect::proc_fixture as data;

    #[test]
    fn softirqs_of_two_and_of_many_cpus() {
        let two = parse_softirqs(&data("softirqs_2cpu"));
        assert_eq!(two, vec![(0, 12403985, 5713), (1, 12777702, 8365)]);
        let many = parse_softirqs(&data("softirqs_16cpu"));
        assert_eq!(many.len(), 16);
        assert_eq!(many[15], (15, 1_500_015, 1615));
        assert_eq!(many[3].1, 4_000_003);
    }

    #[test]
    fn stat_softirq_and_total_ticks() {
        let stat = parse_stat(&data("stat_2cpu"));
        assert_eq!(stat.len(), 2, "the all-CPU line is not a CPU");
        assert_eq!(
            stat[0],
            (0, 6116, 1279224 + 423077 + 423779 + 2161 + 6116 + 2347)
        );
        // A 2.6.11-era row without steal: 7 numbers.
        let old = parse_stat(&data("stat_old_kernel"));
        assert_eq!(old[1], (1, 30, 100 + 20 + 300 + 4000 + 10 + 5 + 30));
    }
}
