//! What one socket costs in memory (1M sockets against a 400 MB budget):
//! the bytes per socket of a sample's table and of the connection log, and
//! how many tables the live view keeps, printed (`cargo test --profile
//! fast-build --test suite pure::socket_memory -- --nocapture`) and bounded
//! so a field added without thought shows here.

use netlens::model::socket_table::SocketTable;
use netlens::model::sockets::{Owners, SocketSample, SocketUser, TcpInfoSample, TcpLimits};
use std::mem::size_of;
use std::net::SocketAddr;

use crate::common::heap::{self, live, reset_peak};

/// What a socket costs in a sample's table (`SocketTable`): a 60-byte
/// row, and out of line only what it has: tcp_info (TCP sockets), one
/// owner per process holding it, what limited it (active senders), IPv6
/// addresses. The owned form a table packs (`SocketSample`) is 224 B.
#[test]
fn a_socket_costs_its_row_and_what_it_has() {
    // The heap counts are the process's: measured with no other test beside.
    if heap::alone() {
        return;
    }
    let established = table(COUNT, 0);
    let table_bytes = established.heap_bytes() as f64 / f64::from(COUNT);
    let time_wait: SocketTable = established
        .iter()
        .map(|s| SocketSample {
            state: 6,
            tcp: None,
            users: Owners::new(),
            inode: 0,
            ..s.to_sample()
        })
        .collect();
    let mut time_wait = time_wait;
    time_wait.shrink_to_fit();
    let bare = time_wait.heap_bytes() as f64 / f64::from(COUNT);
    eprintln!(
        "SocketSample (owned): {} B; in a table: {table_bytes:.0} B per established socket \
         (row, tcp_info {} B, one owner {} B), {bare:.0} B per TIME_WAIT socket (row alone)",
        size_of::<SocketSample>(),
        size_of::<TcpInfoSample>(),
        size_of::<SocketUser>(),
    );
    assert_eq!(bare, 60.0, "a row grew");
    assert_eq!(
        table_bytes,
        (60 + size_of::<TcpInfoSample>() + size_of::<SocketUser>()) as f64
    );
    assert!(table_bytes <= 150.0, "{table_bytes:.0} B per socket");
    // What limited a sending or receiving socket (88 B) is out of line:
    // only sockets that sent, hold unsent data or are receiving pay for it.
    assert_eq!(size_of::<TcpLimits>(), 88);
    assert_eq!(size_of::<SocketUser>(), 24);
    // The counting allocator agrees with the table's own count.
    let before = live();
    let again = table(COUNT, 0);
    let counted = per_socket(live() - before);
    assert!(
        (counted - table_bytes).abs() < 2.0,
        "{counted:.1} B counted"
    );
    drop(again);
}

/// Owners of one process share its name: cloning a socket's owners (each
/// sample does, for every socket) copies no name.
#[test]
fn owners_share_the_process_name() {
    use netlens::model::sockets::ProcessName;
    let name = ProcessName::from("hold-conns");
    let a = SocketUser {
        process: name.clone(),
        pid: 7,
        fd: 3,
    };
    let b = a.clone();
    assert!(std::ptr::eq(a.process.as_str(), b.process.as_str()));
    assert_eq!(b.process, "hold-conns");
    // Stored and printed as a plain string, as before.
    assert_eq!(
        serde_json::to_string(&b).unwrap(),
        r#"{"process":"hold-conns","pid":7,"fd":3}"#
    );
    let back: SocketUser = rmp_serde::from_slice(&rmp_serde::to_vec_named(&b).unwrap()).unwrap();
    assert_eq!(back, b);
}

// ---- The heap (tests/common/heap.rs): what the pipeline keeps alive. ----

use netlens::app::App;
use netlens::app::tabs::Tab;
use netlens::collect::SamplerEvent;
use netlens::collect::conn_log::ConnLog;
use netlens::model::Sample;
use netlens::model::sockets::{Proto, TCP_ESTABLISHED};
use std::time::Duration;

/// Sockets of the generator (`hold-conns`): established loopback
/// connections, one owner each (53 processes), tcp_info and meminfo.
fn table(count: u32, second: u32) -> netlens::model::socket_table::SocketTable {
    let names: Vec<netlens::model::sockets::ProcessName> =
        (0..53).map(|_| "hold-conns".into()).collect();
    let mut table = (0..count)
        .map(|i| SocketSample {
            proto: Proto::Tcp,
            state: TCP_ESTABLISHED,
            local: SocketAddr::from(([127, 0, 0, 1], 2000 + (i / 19_000) as u16)),
            peer: SocketAddr::from(([127, 0, 0, 1], 10_000 + (i % 50_000) as u16)),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: 1_000_000 + i,
            users: vec![SocketUser {
                process: names[(i / 19_000) as usize % 53].clone(),
                pid: 5000 + i / 19_000,
                fd: 3 + i % 19_000,
            }]
            .into(),
            owner_denied: false,
            owner_pending: false,
            tcp: Some(TcpInfoSample {
                rtt_us: 20 + i % 7,
                cwnd: 10,
                mss: 65483,
                rto_us: 201_000,
                bytes_acked: 1,
                last_send_ms: second * 1000,
                ..Default::default()
            }),
            drops: Some(0),
            rcvbuf: Some(131_072),
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        })
        .collect::<netlens::model::socket_table::SocketTable>();
    // As the sampler leaves it: no slack beyond the sockets.
    table.shrink_to_fit();
    table
}

fn sample(count: u32, second: u32) -> Sample {
    Sample {
        t: 1e9 + f64::from(second),
        mono: f64::from(second),
        sockets: table(count, second),
        tcp: Some(Default::default()),
        ..Default::default()
    }
}

/// Sockets per measurement: enough that the per-socket figures dwarf the
/// fixed costs; under the history's FREE_ELSEWHERE (50,000), so old lists
/// are freed inline, before `take_prepared` returns, not on a thread.
const COUNT: u32 = 40_000;

fn per_socket(bytes: isize) -> f64 {
    bytes as f64 / f64::from(COUNT)
}

/// What one socket table costs, and how many of them the live view's
/// pipeline (the preparation worker, the history) keeps: after each sample
/// is taken, and at its peak while the next is prepared. The sampler's
/// table under construction comes on top (one more).
#[test]
fn the_live_pipeline_keeps_few_socket_tables() {
    // The heap counts are the process's: measured with no other test beside.
    if heap::alone() {
        return;
    }
    let before = live();
    let one = table(COUNT, 0);
    let table_bytes = live() - before;
    drop(one);
    let per_table = per_socket(table_bytes);
    eprintln!("one socket table: {per_table:.0} B per socket");

    let mut app = App::new(Tab::Sockets, Duration::from_secs(1), false);
    let mut prepared = app.start_preparing().unwrap();
    let base = live();
    let (mut kept, mut peak) = (0.0f64, 0.0f64);
    for second in 0..8 {
        let next = Box::new(sample(COUNT, second));
        reset_peak();
        app.on_sampler(SamplerEvent::Sample(next));
        let ready = prepared.blocking_recv().unwrap();
        app.take_prepared(ready);
        if second >= 3 {
            kept = kept.max(per_socket(live() - base));
            peak = peak.max(per_socket(heap::peak() - base));
        }
    }
    eprintln!(
        "live view, {COUNT} sockets, 8 samples: {kept:.0} B per socket kept between \
         samples ({:.2} tables), {peak:.0} B at the peak of a new sample ({:.2} tables)",
        kept / per_table,
        peak / per_table
    );
    // The shown sample's table, and while the next is prepared that one's
    // too (the worker's); before, the previous sample's stayed as well
    // (2.03 and 3.07 tables).
    assert!(kept < 1.25 * per_table, "{kept:.0} B per socket kept");
    assert!(
        peak < 2.25 * per_table,
        "{peak:.0} B per socket at the peak"
    );
    // On the Processes tab the previous sample keeps its table: its rates
    // per socket are drawn from the two.
    app.on_key(netlens::app::keymap::Key::Char('9'));
    for second in 8..10 {
        app.on_sampler(SamplerEvent::Sample(Box::new(sample(COUNT, second))));
        app.take_prepared(prepared.blocking_recv().unwrap());
    }
    let with_previous = per_socket(live() - base);
    eprintln!("Processes tab: {with_previous:.0} B per socket kept");
    assert!(with_previous > 1.75 * per_table && with_previous < 2.25 * per_table);
    drop(app);
}

/// Per-process rates (the Processes tab, `snapshot`'s processes, the
/// exporter) find each socket's counters in the previous sample through an
/// index into its table: a map holding every 72-byte key again peaked at
/// 238 B a socket here (38 MB of `snapshot`'s 115 MB at 200,000 sockets).
#[test]
fn process_rates_index_the_previous_sample_without_copying_its_keys() {
    if heap::alone() {
        return;
    }
    let (previous, current) = (sample(COUNT, 0), sample(COUNT, 1));
    let base = live();
    reset_peak();
    let rows = netlens::model::processes::process_rows(Some(&previous), &current);
    let peak = per_socket(heap::peak() - base);
    eprintln!("process rows: {peak:.1} B per socket at the peak");
    // 40,000 sockets of 19,000 each: three processes, each with a rate.
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.tcp_send_per_s == Some(0.0)));
    assert!(peak < 16.0, "{peak:.1} B per socket");
}

/// The connection log remembers every TCP socket a dump saw (for the log
/// entry when it closes): bytes per socket beyond the dump's table, which
/// it shares with the sample instead of copying what it needs.
#[test]
fn the_connection_log_remembers_little_per_socket() {
    if heap::alone() {
        return;
    }
    let sockets = table(COUNT, 0);
    let cookies: Vec<u64> = (0..u64::from(COUNT)).map(|c| c + 1).collect();
    let mut log = ConnLog::open(false);
    let before = live();
    log.observe(&sockets, &cookies, 1.0);
    log.observe(&sockets, &cookies, 2.0);
    let bytes = per_socket(live() - before);
    eprintln!("connection log: {bytes:.0} B per socket");
    // A sorted Vec of 24 B entries (cookie, first sighting, tick, row):
    // copies of the addresses, counters and owner were 162 B a socket.
    assert!(bytes < 32.0, "{bytes:.0} B per socket");
    drop(log);
}
