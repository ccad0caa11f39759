//! Whether the `procfs` crate is fast enough to parse the /proc files the
//! sampler reads each tick, against netlens' own parsers, on captured
//! copies (tests/data/proc). procfs-core 0.18 covers /proc/stat
//! (KernelStats) and /proc/net/snmp (Snmp); it has no parser for
//! softnet_stat, softirqs, interrupts or the neighbour statistics, so those
//! are measured for their own cost per tick.
//!
//! Decision (2 vCPU VM, Rust 1.95): speed does not decide it (KernelStats
//! ~1.2 us vs parse_stat ~1.9 us; Snmp ~70 us vs parse_pairs ~23 us: both
//! far below a 1 s tick). netlens keeps its parsers because procfs does not
//! fit: KernelStats numbers CPUs by their position in a Vec (wrong once a
//! CPU is offline, where /proc/stat skips it), Snmp is a fixed struct that
//! drops the counters netlens keys by "Group.Name" (and there is no
//! netstat/TcpExt parser), its path readers use /proc/self/net (the main
//! thread's namespace, not the sampler thread's), and the files this issue
//! adds have no procfs parser at all.

use criterion::{Criterion, criterion_group, criterion_main};
use netlens::collect::{interrupts, neigh, snmp, softirqs, softnet};
use procfs_core::{ExplicitSystemInfo, FromBufRead, FromBufReadSI, KernelStats, net::Snmp};
use std::hint::black_box;

fn data(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/data/proc/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("tests/data/proc")
}

fn benches(c: &mut Criterion) {
    let stat = data("stat_2cpu");
    let snmp_text = data("snmp");
    let system = ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: 100,
        page_size: 4096,
        is_little_endian: true,
    };
    c.bench_function("stat/procfs KernelStats", |b| {
        b.iter(|| KernelStats::from_buf_read(black_box(stat.as_bytes()), &system).unwrap())
    });
    c.bench_function("stat/netlens parse_stat", |b| {
        b.iter(|| softirqs::parse_stat(black_box(&stat)))
    });
    c.bench_function("snmp/procfs Snmp", |b| {
        b.iter(|| Snmp::from_buf_read(black_box(snmp_text.as_bytes())).unwrap())
    });
    c.bench_function("snmp/netlens parse_pairs", |b| {
        b.iter(|| snmp::parse_pairs(black_box(&snmp_text)))
    });
    let (net, irqs, sirq) = (
        data("softnet_stat_15col"),
        data("softirqs_16cpu"),
        data("softirqs_2cpu"),
    );
    c.bench_function("softnet_stat+softirqs+stat merge (2 CPUs)", |b| {
        b.iter(|| softnet::merge(black_box(&net), black_box(&sirq), black_box(&stat)))
    });
    c.bench_function("softirqs (16 CPUs)", |b| {
        b.iter(|| softirqs::parse_softirqs(black_box(&irqs)))
    });
    let interrupts_text = data("interrupts_16cpu");
    c.bench_function("interrupts (16 CPUs)", |b| {
        b.iter(|| interrupts::parse(black_box(&interrupts_text)))
    });
    let arp = data("arp_cache");
    c.bench_function("arp_cache", |b| {
        b.iter(|| neigh::parse_stat(black_box(&arp)))
    });
    // The whole per-tick read from the live files, as the sampler does it.
    let files = softnet::HostFiles::open();
    c.bench_function("live: softnet::collect (files + knobs + queues)", |b| {
        b.iter(|| softnet::collect(&files, &[]))
    });
    let interfaces = netlens::collect::link::LinkCollector::new()
        .and_then(|mut l| l.collect())
        .expect("interfaces");
    c.bench_function("live: softnet::collect with this host's interfaces", |b| {
        b.iter(|| softnet::collect(&files, &interfaces))
    });
    let mut rtnl = netlens::collect::rtnl::Rtnl::new().expect("rtnetlink");
    c.bench_function("live: neigh::collect (stat files + RTM_GETNEIGH x2)", |b| {
        b.iter(|| neigh::collect(&mut rtnl, &files, &[]).unwrap())
    });
}

criterion_group!(procfs, benches);
criterion_main!(procfs);
