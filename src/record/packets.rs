//! The packets and payloads streams: the packets captured during each
//! sample's interval, so the Flows tab's packet list and the flow table's
//! per-flow packets can be rebuilt in replay.
//!
//! Bounded: the capture's tap keeps at most `PACKETS_PER_SECOND` packets of
//! each second, and a segment holds at most `PACKETS_PER_SEGMENT`; what is
//! left out is counted (`skipped`, shown as "not printed"). A packet's first
//! `HEADER_BYTES` (what a default capture keeps) go to the packets stream; the
//! rest, when whole packets were captured (--payload), to the payloads
//! stream, so a recording without payloads never holds more than live
//! capture keeps by default.
//!
//! ```text
//! packets record  = linktype u32 | skipped | count | packet*
//! packet          = sec i64 | frac u32 | nanos u8 | orig_len u32
//!                   | caplen | stored | bytes[stored]
//! payloads record = count | (len | bytes[len])*      (one per packet)
//! interfaces record = count | ifindex*               (one per packet)
//! ```
//! Unsized integers are LEB128 varints; sized ones little-endian.

use crate::capture::live::{PacketBatch, RawPacket};
use crate::packet::format::Timestamp;
use anyhow::{Result, bail};

/// Bytes of each packet in the packets stream: the default snap length,
/// plus the 20-byte SLL2 header a capture on every interface puts in front
/// (so a capture without --payload is never cut further).
pub const HEADER_BYTES: usize = crate::capture::ring::DEFAULT_SNAPLEN as usize + 20;
/// Packets one segment (about a minute) holds at most.
pub const PACKETS_PER_SEGMENT: u32 = 6_000;

use super::bytes::{Input, put_varint as put};

pub fn encode_headers(batch: &PacketBatch) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + batch.packets.len() * 96);
    out.extend_from_slice(&batch.linktype.to_le_bytes());
    put(&mut out, batch.skipped);
    put(&mut out, batch.packets.len() as u64);
    for p in &batch.packets {
        out.extend_from_slice(&p.ts.sec.to_le_bytes());
        out.extend_from_slice(&p.ts.frac.to_le_bytes());
        out.push(u8::from(p.ts.nanos));
        out.extend_from_slice(&p.orig_len.to_le_bytes());
        put(&mut out, p.data.len() as u64);
        let stored = &p.data[..p.data.len().min(HEADER_BYTES)];
        put(&mut out, stored.len() as u64);
        out.extend_from_slice(stored);
    }
    out
}

/// The bytes past `HEADER_BYTES`; None when no packet has any.
pub fn encode_payloads(batch: &PacketBatch) -> Option<Vec<u8>> {
    if batch.packets.iter().all(|p| p.data.len() <= HEADER_BYTES) {
        return None;
    }
    let mut out = Vec::new();
    put(&mut out, batch.packets.len() as u64);
    for p in &batch.packets {
        let rest = p.data.get(HEADER_BYTES..).unwrap_or_default();
        put(&mut out, rest.len() as u64);
        out.extend_from_slice(rest);
    }
    Some(out)
}

/// Each packet's interface index; None when the capture knew none.
pub fn encode_interfaces(batch: &PacketBatch) -> Option<Vec<u8>> {
    if batch.packets.iter().all(|p| p.ifindex == 0) {
        return None;
    }
    let mut out = Vec::with_capacity(4 + batch.packets.len() * 2);
    put(&mut out, batch.packets.len() as u64);
    for p in &batch.packets {
        put(&mut out, u64::from(p.ifindex));
    }
    Some(out)
}

/// Sets each packet's interface from its interfaces record; a record that
/// does not match the packets (damage) sets none.
pub fn apply_interfaces(bytes: &[u8], batch: &mut PacketBatch) -> Result<()> {
    let mut input = Input::new(bytes, "an interfaces record");
    if input.varint()? != batch.packets.len() as u64 {
        bail!("the interfaces do not match their packets");
    }
    let mut indexes = Vec::with_capacity(batch.packets.len());
    for _ in &batch.packets {
        indexes.push(u32::try_from(input.varint()?).unwrap_or(0));
    }
    for (packet, index) in batch.packets.iter_mut().zip(indexes) {
        packet.ifindex = index;
    }
    Ok(())
}

/// A packets record, with its payloads record when there is one. Payloads
/// that do not fit their packets (damage) are left out: the packets keep
/// their first `HEADER_BYTES`.
pub fn decode(headers: &[u8], payloads: Option<&[u8]>) -> Result<PacketBatch> {
    let mut input = Input::new(headers, "a packets record");
    let linktype = u32::from_le_bytes(input.take(4)?.try_into().expect("4 bytes"));
    let skipped = input.varint()?;
    let count = input.count()?;
    if count > PACKETS_PER_SEGMENT as usize {
        bail!("a packets record claims {count} packets, more than a segment holds");
    }
    let mut packets = Vec::with_capacity(count);
    for _ in 0..count {
        let fixed = input.take(17)?;
        let ts = Timestamp {
            sec: i64::from_le_bytes(fixed[..8].try_into().expect("8 bytes")),
            frac: u32::from_le_bytes(fixed[8..12].try_into().expect("4 bytes")),
            nanos: fixed[12] != 0,
        };
        let orig_len = u32::from_le_bytes(fixed[13..17].try_into().expect("4 bytes"));
        let caplen = input.varint()?;
        let stored = input.count()?;
        let data = input.take(stored)?;
        packets.push((
            RawPacket {
                ts,
                orig_len,
                data: data.into(),
                ifindex: 0,
            },
            caplen,
        ));
    }
    let rests = payloads.and_then(|p| split_payloads(p, &packets).ok());
    let packets = match rests {
        Some(rests) => packets
            .into_iter()
            .zip(rests)
            .map(|((mut p, _), rest)| {
                if !rest.is_empty() {
                    p.data = [&p.data[..], rest].concat();
                }
                p
            })
            .collect(),
        None => packets.into_iter().map(|(p, _)| p).collect(),
    };
    Ok(PacketBatch {
        linktype,
        skipped,
        packets,
    })
}

fn split_payloads<'a>(bytes: &'a [u8], packets: &[(RawPacket, u64)]) -> Result<Vec<&'a [u8]>> {
    let mut input = Input::new(bytes, "a payloads record");
    if input.varint()? != packets.len() as u64 {
        bail!("the payloads do not match their packets");
    }
    let mut rests = Vec::with_capacity(packets.len());
    for (packet, caplen) in packets {
        let len = input.count()?;
        if packet.data.len() as u64 + len as u64 != *caplen {
            bail!("a payload does not match its packet");
        }
        rests.push(input.take(len)?);
    }
    Ok(rests)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch() -> PacketBatch {
        let packet = |n: usize, len: usize| RawPacket {
            ts: Timestamp {
                sec: 1_700_000_000 + n as i64,
                frac: 123_456_789,
                nanos: true,
            },
            orig_len: len as u32 + 10,
            data: (0..len).map(|i| (i * 7 + n) as u8).collect(),
            ifindex: 0,
        };
        PacketBatch {
            linktype: 276,
            skipped: 3,
            packets: vec![packet(0, 60), packet(1, 1500), packet(2, 0), packet(3, 404)],
        }
    }

    #[test]
    fn interfaces_round_trip_and_a_mismatch_sets_none() {
        let mut sent = batch();
        assert_eq!(encode_interfaces(&sent), None, "no index, no record");
        for (i, p) in sent.packets.iter_mut().enumerate() {
            p.ifindex = 7 + i as u32 * 300;
        }
        let record = encode_interfaces(&sent).unwrap();
        let mut read = decode(&encode_headers(&sent), None).unwrap();
        apply_interfaces(&record, &mut read).unwrap();
        let indexes: Vec<u32> = read.packets.iter().map(|p| p.ifindex).collect();
        assert_eq!(indexes, vec![7, 307, 607, 907]);
        read.packets.pop();
        for p in &mut read.packets {
            p.ifindex = 0;
        }
        assert!(apply_interfaces(&record, &mut read).is_err());
        assert!(read.packets.iter().all(|p| p.ifindex == 0));
        assert!(apply_interfaces(&record[..3], &mut read).is_err());
    }

    #[test]
    fn headers_and_payloads_round_trip_and_split() {
        let batch = batch();
        let headers = encode_headers(&batch);
        let payloads = encode_payloads(&batch).unwrap();
        assert_eq!(decode(&headers, Some(&payloads)).unwrap(), batch);
        // Without (or with damaged) payloads: the first HEADER_BYTES.
        let cut = decode(&headers, None).unwrap();
        assert_eq!(cut.packets[1].data.len(), HEADER_BYTES);
        assert_eq!(cut.packets[0], batch.packets[0]);
        let damaged = decode(&headers, Some(&payloads[..payloads.len() - 1])).unwrap();
        assert_eq!(damaged, cut);
        for end in 0..headers.len() {
            assert!(decode(&headers[..end], None).is_err());
        }
        let small = PacketBatch {
            packets: vec![batch.packets[0].clone()],
            ..batch
        };
        assert!(encode_payloads(&small).is_none());
    }
}
