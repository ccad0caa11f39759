//! Packet capture: the AF_PACKET ring and the live capture engine. What a
//! packet means (decoding, filters, printing, flows) is in `packet`.

pub mod attribution;
pub mod live;
pub mod pcap_file;
pub mod ring;
pub mod sampling;

/// This machine for the packet printer: the local time zone (TZ) and the
/// interface names of the calling thread's network namespace.
pub const HOST: crate::packet::format::Host = crate::packet::format::Host {
    utc_offset: crate::clock::utc_offset,
    ifname: ring::interface_name,
};
