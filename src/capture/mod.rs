//! Packet capture: the AF_PACKET ring and the live capture engine. What a
//! packet means (decoding, filters, printing, flows) is in `packet`.

pub mod live;
pub mod ring;
