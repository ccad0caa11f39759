//! UDP, and DNS on port 53 / mDNS on 5353.

use super::ip::IpInfo;
use super::{Ctx, R, Trunc, be16, dns};

fn addresses(ctx: &mut Ctx, ip: &IpInfo, ports: Option<(u16, u16)>) {
    if ip.direct {
        match ports {
            None => {
                ip.write_src(ctx.out);
                ctx.s(" > ");
                ip.write_dst(ctx.out);
                ctx.s(": ");
            }
            Some((s, d)) => {
                ip.write_src(ctx.out);
                ctx.f(format_args!(".{s} > "));
                ip.write_dst(ctx.out);
                ctx.f(format_args!(".{d}: "));
            }
        }
    } else if let Some((s, d)) = ports {
        ctx.f(format_args!("{s} > {d}: "));
    }
}

pub fn udp(ctx: &mut Ctx, data: &[u8], length: usize, ip: &IpInfo) -> R {
    ctx.proto = "udp";
    if data.len() < 4 {
        addresses(ctx, ip, None);
        return Err(Trunc);
    }
    let sport = be16(data, 0)?;
    let dport = be16(data, 2)?;
    if length < 8 {
        addresses(ctx, ip, Some((sport, dport)));
        ctx.f(format_args!("truncated-udp {length}"));
        return Ok(());
    }
    if data.len() < 6 {
        addresses(ctx, ip, Some((sport, dport)));
        return Err(Trunc);
    }
    let mut ulen = usize::from(be16(data, 4)?);
    if ulen == 0 && length > 65535 {
        ulen = length;
    }
    if ulen < 8 {
        addresses(ctx, ip, Some((sport, dport)));
        ctx.f(format_args!("truncated-udplength {ulen}"));
        return Ok(());
    }
    ulen -= 8;
    let mut length = length - 8;
    if ulen < length {
        length = ulen;
    }
    if data.len() < 8 {
        addresses(ctx, ip, Some((sport, dport)));
        return Err(Trunc);
    }
    addresses(ctx, ip, Some((sport, dport)));
    let body = &data[8..];
    let port = |p: u16| sport == p || dport == p;
    if port(53) {
        return dns::domain(ctx, body, length, false, false);
    }
    if port(5353) {
        return dns::domain(ctx, body, length, false, true);
    }
    if ulen > length && !ip.fragmented {
        ctx.f(format_args!("UDP, bad length {ulen} > {length}"));
    } else {
        ctx.f(format_args!("UDP, length {ulen}"));
    }
    Ok(())
}
