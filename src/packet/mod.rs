//! Bytes in, facts out: decoding, pcap files on `io::Read`/`io::Write`,
//! pcap-filter expressions, the tcpdump-style printer, the flow table with
//! its per-flow analysis, and passive DNS matching. No OS I/O here; the
//! capture engine (capture) and the commands feed it.

pub mod analysis;
pub mod decode;
pub mod dns_passive;
pub mod dns_wire;
pub mod exchanges;
pub mod filter;
pub mod flows;
pub mod format;
pub mod pcap;
pub mod pcapng;
pub mod quic;
pub mod refusals;
pub mod responses;
pub mod server_name;
