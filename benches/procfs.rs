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
//! thread's namespace, not the sampler thread's), and the per-CPU and
//! neighbour files have no procfs parser at all.
//!
//! The socket-owner scan (`owners` group, 15,000 UDP sockets in this
//! process): procfs' all_processes + Process::fd() 88.0 ms per scan,
//! netlens' ProcWalk 65.8 ms for the first scan and 14.4 ms for each
//! rescan of every process after: most of it the kernel listing the
//! 15,000 fds, which is why a scan for new sockets lists the recent
//! openers first (`Reach::Openers`). procfs reads every fd link on every
//! scan; the walk reads only new fds.
//! The scan grows with the sockets: at 200,000 sockets procfs would pass
//! a 1 s tick, so the cache stays.

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
        b.iter(|| neigh::collect(&mut rtnl, &files, &Default::default()).unwrap())
    });
}

/// Which process owns each socket (`ss -p`): netlens' OwnerCache against
/// procfs' process API, with `SOCKETS` UDP sockets held by this process so
/// the scan has real work. procfs' `Process::fd()` reads every fd link on
/// every scan; the cache reads only fds it has not seen.
fn owner_scan(c: &mut Criterion) {
    use netlens::collect::owners::Inodes;
    use netlens::collect::owners::OwnerMap;
    use netlens::collect::owners::procfs::{ProcWalk, Reach};
    use std::os::unix::fs::MetadataExt;
    const SOCKETS: usize = 15_000;
    let sockets: Vec<std::net::UdpSocket> = (0..SOCKETS)
        .map_while(|_| std::net::UdpSocket::bind("127.0.0.1:0").ok())
        .collect();
    let live: Inodes = sockets
        .iter()
        .map(|s| {
            use std::os::fd::AsRawFd;
            std::fs::metadata(format!("/proc/self/fd/{}", s.as_raw_fd()))
                .unwrap()
                .ino() as u32
        })
        .collect();
    let mut group = c.benchmark_group(format!("owners ({} sockets)", live.len()));
    group.sample_size(10);
    group.bench_function("procfs all_processes + fd()", |b| {
        b.iter(|| {
            let mut owned = 0usize;
            for process in procfs::process::all_processes().unwrap().flatten() {
                let Ok(fds) = process.fd() else { continue };
                for fd in fds.flatten() {
                    if let procfs::process::FDTarget::Socket(inode) = fd.target {
                        owned += live.contains(&(inode as u32)) as usize;
                    }
                }
            }
            black_box(owned)
        })
    });
    group.bench_function("netlens ProcWalk first scan", |b| {
        b.iter(|| {
            let (mut walk, mut map) = (ProcWalk::new(None), OwnerMap::default());
            map.scan_now(&mut walk, &live, Reach::Every);
            black_box(map.scans())
        })
    });
    // The steady state of a busy server: each tick brings a socket not
    // seen before, so the cache rescans, reading only the new fds.
    let (mut walk, mut map) = (ProcWalk::new(None), OwnerMap::default());
    map.scan_now(&mut walk, &live, Reach::Every);
    group.bench_function("netlens ProcWalk rescan for one new socket", |b| {
        b.iter(|| map.scan_now(&mut walk, &live, Reach::Every))
    });
    group.finish();
}

criterion_group!(procfs, benches, owner_scan);
criterion_main!(procfs);
