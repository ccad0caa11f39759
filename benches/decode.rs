//! Capture budget: decode (summary) + filter + flow accounting of packets
//! from a pcap, on one core. The budget is >= 2 M packets/s.
//!
//! The pcap is synthesized at bench time: 1,000 TCP and UDP flows on
//! 198.18.0.0/15 (handshakes, data, ACKs, DNS-sized UDP), 200,000 packets,
//! written with netlens' pcap writer and read back, so the bench measures
//! the same path `netlens read --flows` runs.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use netlens::capture::pcap_file::{FileLayout, PcapFileWriter};
use netlens::packet::analysis::{Analysis, Seg};
use netlens::packet::decode::summarize;
use netlens::packet::filter::Filter;
use netlens::packet::flows::FlowKey;
use netlens::packet::flows::FlowTable;
use netlens::packet::format::Timestamp;
use std::hint::black_box;

fn frame(flow: u32, i: u32, udp: bool) -> Vec<u8> {
    let payload = if udp {
        60
    } else if i.is_multiple_of(3) {
        0
    } else {
        200
    };
    let l4 = if udp { 8 } else { 20 };
    let mut f = vec![0u8; 14 + 20 + l4 + payload];
    f[12] = 0x08;
    let total = (20 + l4 + payload) as u16;
    f[14] = 0x45;
    f[16..18].copy_from_slice(&total.to_be_bytes());
    f[22] = 64;
    f[23] = if udp { 17 } else { 6 };
    let reverse = !i.is_multiple_of(2);
    let (a, b) = ([198, 18, (flow >> 8) as u8, flow as u8], [198, 19, 0, 1]);
    let (src, dst) = if reverse { (b, a) } else { (a, b) };
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&dst);
    let (sp, dp) = (10_000 + (flow % 50_000) as u16, if udp { 53 } else { 443 });
    let (sp, dp) = if reverse { (dp, sp) } else { (sp, dp) };
    f[34..36].copy_from_slice(&sp.to_be_bytes());
    f[36..38].copy_from_slice(&dp.to_be_bytes());
    if udp {
        f[38..40].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
    } else {
        f[38..42].copy_from_slice(&(1000 + i * 200).to_be_bytes());
        f[42..46].copy_from_slice(&(5000 + i).to_be_bytes());
        f[46] = 5 << 4;
        f[47] = match i {
            0 => 0x02,
            1 => 0x12,
            _ => 0x18,
        };
    }
    f
}

fn make_pcap(path: &std::path::Path, packets: u32) {
    let mut w = PcapFileWriter::create(path, FileLayout::pcap(1, 65535)).unwrap();
    for n in 0..packets {
        let flow = n % 1000;
        let i = n / 1000;
        let data = frame(flow, i, flow.is_multiple_of(4));
        let ts = Timestamp {
            sec: 1_700_000_000 + i64::from(n / 100_000),
            frac: n % 1_000_000,
            nanos: false,
        };
        w.write(ts, data.len() as u32, &data).unwrap();
    }
    w.finish().unwrap();
}

fn load(path: &std::path::Path) -> Vec<(f64, u32, Vec<u8>)> {
    let mut r = netlens::capture::pcap_file::open(path).unwrap();
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while let Some(rec) = r.next_into(&mut buf).unwrap() {
        out.push((rec.ts.as_secs_f64(), rec.orig_len, buf.clone()));
    }
    out
}

fn bench(c: &mut Criterion) {
    const PACKETS: u32 = 200_000;
    let path = std::env::temp_dir().join(format!("netlens-bench-{}.pcap", std::process::id()));
    make_pcap(&path, PACKETS);
    let packets = load(&path);
    let filter = Filter::parse("tcp or udp port 53").unwrap();
    let mut group = c.benchmark_group("capture");
    group.throughput(Throughput::Elements(u64::from(PACKETS)));
    group.bench_function("decode+flows", |b| {
        b.iter(|| {
            let mut table = FlowTable::new(100_000, 120.0);
            for (t, len, data) in &packets {
                let s = summarize(1, data, *len);
                table.add(&s, *t);
            }
            black_box(table.len())
        })
    });
    group.bench_function("decode+filter+flows", |b| {
        b.iter(|| {
            let mut table = FlowTable::new(100_000, 120.0);
            for (t, len, data) in &packets {
                let s = summarize(1, data, *len);
                if filter.matches(&s, data) {
                    table.add(&s, *t);
                }
            }
            black_box(table.len())
        })
    });
    group.bench_function("read file+decode+flows", |b| {
        b.iter(|| {
            let mut r = netlens::capture::pcap_file::open(&path).unwrap();
            let mut buf = Vec::new();
            let mut table = FlowTable::new(100_000, 120.0);
            while let Some(rec) = r.next_into(&mut buf).unwrap() {
                let s = summarize(rec.linktype, &buf, rec.orig_len);
                table.add(&s, rec.ts.as_secs_f64());
            }
            black_box(table.len())
        })
    });
    // The per-flow TCP analysis alone (already part of decode+flows): the
    // cost per packet of handshake/RTT/retransmit/window/Nagle tracking.
    let segs: Vec<(Seg, bool)> = packets
        .iter()
        .filter_map(|(t, len, data)| {
            let s = summarize(1, data, *len);
            let (_, reverse) = FlowKey::of(&s)?;
            (s.proto == 6).then(|| (Seg::of(&s, reverse, *t), reverse))
        })
        .collect();
    group.throughput(Throughput::Elements(segs.len() as u64));
    group.bench_function("tcp analysis only", |b| {
        b.iter(|| {
            let mut a = Analysis::default();
            for (seg, _) in &segs {
                a.add(seg);
            }
            black_box(a.n)
        })
    });
    group.bench_function("tcp analysis detailed (drill-down)", |b| {
        b.iter(|| {
            let mut a = Analysis::detailed();
            for (seg, _) in &segs {
                a.add(seg);
            }
            black_box(a.n)
        })
    });
    group.finish();
    let _ = std::fs::remove_file(&path);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
