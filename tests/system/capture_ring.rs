//! The live capture's ring follows the rate: a ring resized between bursts
//! of real UDP packets (in a namespace this test creates, on lo) hands over
//! every packet of each burst, none dropped, at each size.

use crate::common::*;
use netlens::capture::ring::{BUFFER_LEAST, BUFFER_MOST, Ring, RingOptions, buffer_for};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

const PORT: u16 = 9131;
/// About 200 KB in the ring: within the smallest ring, sent before a drain.
const BURST: usize = 1_000;

/// Sends one burst to PORT and drains the ring until all of it came
/// (bounded by 5 s): the burst's packets the ring handed over.
fn burst(ring: &mut Ring, tx: &UdpSocket, tag: u8) -> usize {
    for i in 0..BURST {
        let mut payload = [tag; 64];
        payload[..4].copy_from_slice(&(i as u32).to_be_bytes());
        tx.send_to(&payload, ("127.0.0.1", PORT)).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = 0;
    while seen < BURST && Instant::now() < deadline {
        ring.poll(100, |p| {
            // Linux cooked header (16), IPv4 (20), UDP (8), then the payload.
            let udp_dport = p.data.get(38..40).map(|b| u16::from_be_bytes([b[0], b[1]]));
            if udp_dport == Some(PORT) && p.data.get(48) == Some(&tag) {
                seen += 1;
            }
        })
        .unwrap();
    }
    seen
}

#[test]
fn a_resized_ring_hands_over_every_packet_at_each_size() {
    if need_root(&["ip"]) {
        return;
    }
    let ns = Netns::new("cring");
    ns.ip(&["link", "set", "lo", "up"]);
    let path = ns.path();
    let (buffers, seen, dropped) = std::thread::spawn(move || {
        enter_netns(&path).expect("setns");
        let options = RingOptions {
            buffer: BUFFER_LEAST,
            ..RingOptions::new(None, false)
        };
        let mut ring = Ring::open(&options, "test").unwrap();
        let _rx = UdpSocket::bind(("127.0.0.1", PORT)).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut buffers = vec![ring.buffer()];
        let mut seen = vec![burst(&mut ring, &tx, 1)];
        let carried = ring.carried();
        ring.set_buffer(BUFFER_MOST).unwrap();
        buffers.push(ring.buffer());
        seen.push(burst(&mut ring, &tx, 2));
        assert!(ring.carried() > carried, "a block's bytes are counted");
        ring.set_buffer(BUFFER_LEAST).unwrap();
        buffers.push(ring.buffer());
        seen.push(burst(&mut ring, &tx, 3));
        (buffers, seen, ring.stats().dropped)
    })
    .join()
    .unwrap();
    assert_eq!(buffers, vec![BUFFER_LEAST, BUFFER_MOST, BUFFER_LEAST]);
    assert_eq!(seen, vec![BURST; 3], "every packet of each burst");
    assert_eq!(dropped, 0);
}

#[test]
fn the_ring_holds_a_second_of_what_it_carries() {
    assert_eq!(buffer_for(0), BUFFER_LEAST);
    // The live view's sampled capture at its budget: 1,000 packets a second
    // of at most 384 bytes and their headers.
    assert_eq!(buffer_for(1_000 * 460), BUFFER_LEAST);
    assert_eq!(buffer_for(600_000), 1 << 20);
    assert_eq!(buffer_for(3_000_000), BUFFER_MOST);
    assert_eq!(buffer_for(u64::MAX), BUFFER_MOST);
}
