//! What one socket costs in memory (issue 21: 1M sockets against a 400 MB
//! budget): the inline size of a SocketSample and its parts, and the heap
//! one owner adds, printed (`cargo test --release --test socket_memory --
//! --nocapture`) and bounded so a field added without thought shows here.

use netlens::model::sockets::{SocketSample, SocketUser, TcpInfoSample};
use std::mem::size_of;
use std::net::SocketAddr;

/// glibc malloc's chunk for a request of `n` bytes (64-bit): 8 bytes of
/// header, rounded up to 16, at least 32.
fn chunk(n: usize) -> usize {
    (n + 8).div_ceil(16).max(2) * 16
}

#[test]
fn a_socket_and_its_owner_cost_what_the_breakdown_says() {
    let inline = size_of::<SocketSample>();
    let parts = [
        ("proto + state", 2),
        ("local + peer (SocketAddr)", 2 * size_of::<SocketAddr>()),
        ("recv_q, send_q, uid, inode", 16),
        ("users (Vec header)", size_of::<Vec<SocketUser>>()),
        (
            "tcp (Option<TcpInfoSample>)",
            size_of::<Option<TcpInfoSample>>(),
        ),
        ("drops, rcvbuf (Option<u32>)", 2 * size_of::<Option<u32>>()),
        ("queue_streak, owner_denied, v6only, netns", 4 + 1 + 1 + 2),
    ];
    let named: usize = parts.iter().map(|(_, n)| n).sum();
    for (what, n) in parts {
        eprintln!("  {what:<44} {n:>4} B");
    }
    // One owner: its Vec's buffer (one SocketUser); the process name is
    // shared by every socket of the process (ProcessName), so a copy of the
    // socket adds no name. Before it was a String: chunk(15) more per copy.
    let user_heap = chunk(size_of::<SocketUser>());
    let shared_name = chunk(16 + 15);
    eprintln!(
        "SocketSample: {inline} B inline ({named} B of fields, {} B padding); \
         one owner adds {user_heap} B of heap per copy (malloc chunks; its name, \
         {shared_name} B, once per process); a socket with its owner: {} B per copy \
         (a String name: {} B)",
        inline - named.min(inline),
        inline + user_heap,
        inline + chunk(32) + chunk(15)
    );
    assert!(named <= inline, "a field is missing from the breakdown");
    assert!(inline <= 208, "SocketSample grew to {inline} B");
    assert_eq!(size_of::<SocketUser>(), 24);
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
