//! Packet capture: the AF_PACKET ring, pcap files, decoding, tcpdump-style
//! lines, pcap-filter expressions and the flow table.

pub mod analysis;
pub mod decode;
pub mod filter;
pub mod flows;
pub mod format;
pub mod headless;
pub mod live;
pub mod pcap;
pub mod read;
pub mod ring;
