//! SCTP (IP protocol 132) as tcpdump 4.99's print-sctp.c prints it without
//! -v: the ports, then each chunk as "(N) [NAME] ..." with the DATA, INIT,
//! INIT ACK and SACK fields, and its messages for a packet too short for the
//! common header, a chunk descriptor cut off, bad or bogus chunk lengths,
//! and a chunk past the capture (`[|sctp]`). ForCES payloads are not
//! decoded.

use super::ip::IpInfo;
use super::{Ctx, R, be16, be32, bytes, u8_at};

const HEADER: usize = 12;
const CHUNK_DESCRIPTOR: u16 = 4;
const DATA_PART: u16 = 12;
const INITIATION: u16 = 16;
const SELECTIVE_ACK: u16 = 12;

fn chunk_name(id: u8) -> Option<&'static str> {
    Some(match id {
        0x00 => "DATA",
        0x01 => "INIT",
        0x02 => "INIT ACK",
        0x03 => "SACK",
        0x04 => "HB REQ",
        0x05 => "HB ACK",
        0x06 => "ABORT",
        0x07 => "SHUTDOWN",
        0x08 => "SHUTDOWN ACK",
        0x09 => "OP ERR",
        0x0a => "COOKIE ECHO",
        0x0b => "COOKIE ACK",
        0x0c => "ECN ECHO",
        0x0d => "ECN CWR",
        0x0e => "SHUTDOWN COMPLETE",
        0xc0 => "FOR CUM TSN",
        0xc1 => "REL CTRL",
        0xc2 => "REL CTRL ACK",
        _ => return None,
    })
}

fn payload_protocol(ppid: u32) -> Option<&'static str> {
    const NAMES: [&str; 27] = [
        "ISDN Q.921",
        "M2UA",
        "M3UA",
        "SUA",
        "M2PA",
        "V5.2",
        "H.248",
        "BICC",
        "TALI",
        "DUA",
        "ASAP",
        "ENRP",
        "H.323",
        "Q.IPC",
        "SIMCO",
        "DDPSC",
        "DDPSSC",
        "S1AP",
        "RUA",
        "HNBAP",
        "ForCES HP",
        "ForCES MP",
        "ForCES LP",
        "SBc-AP",
        "NBAP",
        "",
        "X2AP",
    ];
    let name = *NAMES.get(usize::try_from(ppid).ok()?.checked_sub(1)?)?;
    (!name.is_empty()).then_some(name)
}

fn forces_channel(port: u16) -> Option<&'static str> {
    match port {
        6704 => Some("ForCES HP"),
        6705 => Some("ForCES MP"),
        6706 => Some("ForCES LP"),
        _ => None,
    }
}

pub fn sctp(ctx: &mut Ctx, data: &[u8], length: usize, ip: &IpInfo) -> R {
    ctx.proto = "sctp";
    if length < HEADER {
        ctx.f(format_args!(
            "truncated-sctp - {} bytes missing!",
            HEADER - length
        ));
        return Ok(());
    }
    bytes(data, 0, HEADER)?;
    let (source, destination) = (be16(data, 0)?, be16(data, 2)?);
    ip.write_src(ctx.out);
    ctx.f(format_args!(".{source} > "));
    ip.write_dst(ctx.out);
    ctx.f(format_args!(".{destination}: sctp"));
    for port in [source, destination] {
        if let Some(channel) = forces_channel(port) {
            ctx.f(format_args!("[{channel}]"));
        }
    }
    // tcpdump's unsigned arithmetic, wrap-arounds included.
    let mut at = HEADER;
    let mut left = u32::try_from(length - HEADER).unwrap_or(u32::MAX);
    let mut sep = " (";
    let mut count = 0u32;
    while left != 0 {
        count += 1;
        if left < u32::from(CHUNK_DESCRIPTOR) {
            ctx.f(format_args!(
                "{sep}{count}) [chunk descriptor cut off at end of packet]"
            ));
            break;
        }
        bytes(data, at, usize::from(CHUNK_DESCRIPTOR))?;
        let chunk_length = be16(data, at + 2)?;
        if chunk_length < CHUNK_DESCRIPTOR {
            ctx.f(format_args!(
                "{sep}{count}) [Bad chunk length {chunk_length}, < size of chunk descriptor]"
            ));
            break;
        }
        let align = (4 - u32::from(chunk_length) % 4) % 4;
        if left < align {
            ctx.f(format_args!(
                "{sep}{count}) [Bad chunk length {chunk_length}, > remaining data in packet]"
            ));
            break;
        }
        bytes(data, at, usize::from(chunk_length))?;
        let id = u8_at(data, at)?;
        let flags = u8_at(data, at + 1)?;
        at += usize::from(CHUNK_DESCRIPTOR);
        left = left.wrapping_sub(u32::from(CHUNK_DESCRIPTOR));
        let mut chunk_left = chunk_length - CHUNK_DESCRIPTOR;
        ctx.f(format_args!("{sep}{count}) "));
        match chunk_name(id) {
            Some(name) => ctx.f(format_args!("[{name}] ")),
            None => ctx.f(format_args!("[Unknown chunk type: 0x{id:x}] ")),
        }
        let bogus = |ctx: &mut Ctx| ctx.f(format_args!("bogus chunk length {chunk_length}]"));
        match id {
            0x00 => {
                for (bit, mark) in [(4, "(U)"), (2, "(B)"), (1, "(E)")] {
                    if flags & bit != 0 {
                        ctx.s(mark);
                    }
                }
                if flags & 7 != 0 {
                    ctx.s(" ");
                }
                if chunk_left < DATA_PART {
                    bogus(ctx);
                    return Ok(());
                }
                let ppid = be32(data, at + 8)?;
                ctx.f(format_args!("[TSN: {}] ", be32(data, at)?));
                ctx.f(format_args!("[SID: {}] ", be16(data, at + 4)?));
                ctx.f(format_args!("[SSEQ {}] ", be16(data, at + 6)?));
                match payload_protocol(ppid) {
                    Some(name) => ctx.f(format_args!("[PPID {name}] ")),
                    None => ctx.f(format_args!("[PPID 0x{ppid:x}] ")),
                }
                at += usize::from(DATA_PART);
                left = left.wrapping_sub(u32::from(DATA_PART));
                chunk_left -= DATA_PART;
                if chunk_left == 0 {
                    bogus(ctx);
                    return Ok(());
                }
            }
            0x01 | 0x02 => {
                if chunk_left < INITIATION {
                    bogus(ctx);
                    return Ok(());
                }
                ctx.f(format_args!("[init tag: {}] ", be32(data, at)?));
                ctx.f(format_args!("[rwnd: {}] ", be32(data, at + 4)?));
                ctx.f(format_args!("[OS: {}] ", be16(data, at + 8)?));
                ctx.f(format_args!("[MIS: {}] ", be16(data, at + 10)?));
                ctx.f(format_args!("[init TSN: {}] ", be32(data, at + 12)?));
            }
            0x03 => {
                if chunk_left < SELECTIVE_ACK {
                    bogus(ctx);
                    return Ok(());
                }
                let cumulative = be32(data, at)?;
                let gaps = be16(data, at + 8)?;
                let duplicates = be16(data, at + 10)?;
                ctx.f(format_args!("[cum ack {cumulative}] "));
                ctx.f(format_args!("[a_rwnd {}] ", be32(data, at + 4)?));
                ctx.f(format_args!("[#gap acks {gaps}] "));
                ctx.f(format_args!("[#dup tsns {duplicates}] "));
                at += usize::from(SELECTIVE_ACK);
                left = left.wrapping_sub(u32::from(SELECTIVE_ACK));
                chunk_left -= SELECTIVE_ACK;
                let mut gap = 0;
                while chunk_left != 0 && gap < gaps {
                    if chunk_left < 4 {
                        bogus(ctx);
                        return Ok(());
                    }
                    let start = cumulative.wrapping_add(u32::from(be16(data, at)?));
                    let end = cumulative.wrapping_add(u32::from(be16(data, at + 2)?));
                    gap += 1;
                    ctx.f(format_args!(
                        "\n\t\t[gap ack block #{gap}: start = {start}, end = {end}] "
                    ));
                    at += 4;
                    left = left.wrapping_sub(4);
                    chunk_left -= 4;
                }
                let mut duplicate = 0;
                while chunk_left != 0 && duplicate < duplicates {
                    if chunk_left < 4 {
                        bogus(ctx);
                        return Ok(());
                    }
                    duplicate += 1;
                    ctx.f(format_args!(
                        "\n\t\t[dup TSN #{duplicate}: {}] ",
                        be32(data, at)?
                    ));
                    at += 4;
                    left = left.wrapping_sub(4);
                    chunk_left -= 4;
                }
            }
            _ => {}
        }
        // The rest of the chunk (payload, parameters), then its padding.
        at += usize::from(chunk_left);
        left = left.wrapping_sub(u32::from(chunk_left));
        sep = ", (";
        if align != 0 {
            bytes(data, at, align as usize)?;
            at += align as usize;
            left = left.wrapping_sub(align);
        }
    }
    Ok(())
}
