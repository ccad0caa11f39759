//! `--all-netns` rates (issue 27): the per-namespace figures of a sample
//! with 50 namespaces of 2,000 sockets each, as `snapshot --json` computes
//! them every interval. "per namespace" calls `namespace_rates` once per
//! namespace (each filters all 100,000 sockets), "one pass" is
//! `all_namespace_rates` (counts them in one walk). The whole sample's CPU
//! is benches/scripts/bench-all-netns.sh's.

use criterion::{Criterion, criterion_group, criterion_main};
use netlens::model::netns::{NamespaceInfo, all_namespace_rates, namespace_rates};
use netlens::model::sockets::{Proto, SocketSample};
use netlens::model::{InterfaceSample, LinkCounters, Sample};
use std::hint::black_box;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

const SPACES: u16 = 50;
const PER_NS: u32 = 2_000;

/// The primary namespace (id 0) and SPACES others, each with a loopback
/// and a veth, and PER_NS sockets (a listener, the rest established).
fn sample(mono: f64) -> Sample {
    let tick = mono as u64;
    let mut sample = Sample {
        mono,
        netns: "host".into(),
        ..Default::default()
    };
    for id in 0..=SPACES {
        sample.namespaces.push(NamespaceInfo {
            id,
            label: format!("ns{id}"),
            retrans_segs: 10 * tick,
            drops: tick,
            ..Default::default()
        });
        for (index, name) in [(1, "lo"), (2, "eth0")] {
            sample.interfaces.push(InterfaceSample {
                netns: id,
                index,
                name: name.into(),
                loopback: name == "lo",
                counters: LinkCounters {
                    rx_bytes: 1000 * tick * u64::from(id + 1),
                    tx_bytes: 500 * tick,
                    rx_packets: 10 * tick,
                    tx_packets: 5 * tick,
                    ..Default::default()
                },
                ..Default::default()
            });
        }
        let sockets = (0..PER_NS).map(|i| SocketSample {
            proto: Proto::Tcp,
            state: if i == 0 { 10 } else { 1 },
            local: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 20000)),
            peer: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 30000 + i as u16)),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: u32::from(id) * PER_NS + i + 1,
            users: Default::default(),
            owner_denied: false,
            owner_pending: false,
            tcp: None,
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: id,
            limits: None,
        });
        sample.sockets.extend(sockets);
    }
    sample
}

fn rates(c: &mut Criterion) {
    let (before, after) = (sample(10.0), sample(11.0));
    let per_namespace = || -> Vec<_> {
        after
            .namespaces
            .iter()
            .map(|info| namespace_rates(Some(&before), &after, info))
            .collect()
    };
    assert_eq!(per_namespace(), all_namespace_rates(Some(&before), &after));
    let name = |how: &str| {
        format!(
            "namespace rates, {} namespaces x {PER_NS} sockets, {how}",
            SPACES + 1
        )
    };
    c.bench_function(&name("per namespace"), |b| {
        b.iter(|| black_box(per_namespace()))
    });
    c.bench_function(&name("one pass"), |b| {
        b.iter(|| black_box(all_namespace_rates(Some(&before), black_box(&after))))
    });
}

criterion_group!(benches, rates);
criterion_main!(benches);
