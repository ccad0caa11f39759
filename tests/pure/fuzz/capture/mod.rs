//! Robustness of the packet path: random bytes through the line printer, the
//! summary decoder and the filter matcher; random text through the filter
//! parser; crafted packets (pnet builders) cut at every length through the
//! printer, which must end the line as tcpdump does (`[|proto]`), and where
//! tcpdump is installed, print exactly what `tcpdump -n -r` prints for them.

use netlens::capture::pcap_file::{FileLayout, PcapFileWriter};
use netlens::packet::decode::summarize;
use netlens::packet::filter::Filter;
use netlens::packet::format::{Formatter, Timestamp};
use pnet_packet::MutablePacket;
use pnet_packet::ethernet::{EtherTypes, MutableEthernetPacket};
use pnet_packet::icmp::MutableIcmpPacket;
use pnet_packet::ip::IpNextHeaderProtocols;
use pnet_packet::ipv4::MutableIpv4Packet;
use pnet_packet::ipv6::MutableIpv6Packet;
use pnet_packet::tcp::MutableTcpPacket;
use pnet_packet::udp::MutableUdpPacket;
use proptest::prelude::*;
use std::process::Command;

use super::cap;
use crate::common::random::{XorShift, random_filter};

mod crafted;
mod malformed;
mod random;

fn filters() -> Vec<Filter> {
    [
        "tcp[tcpflags] & (tcp-syn) != 0",
        "tcp[13] & 2 != 0",
        "udp port 53 or icmp",
        "host 198.18.0.1 and not arp",
        "ip6 and tcp",
        "icmp[icmptype] = icmp-echo",
        "portrange 1-1024 and greater 100",
        "net 198.18.0.0/15",
        "ip[8] = 64",
    ]
    .iter()
    .map(|f| Filter::parse(f).unwrap())
    .collect()
}

/// Closes `writer`'s file, has tcpdump print it and removes it; None (and
/// a SKIP line) when tcpdump is not installed.
fn tcpdump_reads_back(writer: PcapFileWriter, file: &std::path::Path) -> Option<Vec<String>> {
    writer.finish().unwrap();
    let theirs = crate::common::need::installed("tcpdump").then(|| tcpdump_read(file, &[]));
    let _ = std::fs::remove_file(file);
    if theirs.is_none() {
        crate::common::need::missing("tcpdump");
    }
    theirs
}

/// What `tcpdump -n -r FILE [ARGS]` prints, line by line.
fn tcpdump_read(file: &std::path::Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("tcpdump")
        .env("TZ", "UTC")
        .args(["-n", "-r"])
        .arg(file)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}
