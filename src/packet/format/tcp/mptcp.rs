//! The MPTCP option (RFC 6824/8684) as tcpdump prints it.

use super::{ACK, SYN};
use crate::packet::format::{Ctx, R, be16, be32, bytes, ipv4, ipv6, u8_at};

/// MPTCP option (RFC 6824/8684). Ok(false) means tcpdump's "[bad opt]".
pub(super) fn mptcp(ctx: &mut Ctx, opt: &[u8], len: usize, flags: u8) -> R<bool> {
    if len < 3 {
        return Ok(false);
    }
    let subtype = (u8_at(opt, 2)? >> 4).min(9);
    let names = [
        "capable",
        "join",
        "dss",
        "add-addr",
        "rem-addr",
        "prio",
        "fail",
        "fast-close",
        "tcprst",
        "unknown",
    ];
    ctx.f(format_args!(" {len} {}", names[usize::from(subtype)]));
    match subtype {
        0 => {
            let syn = flags & SYN != 0;
            let only_ack = flags & (SYN | ACK) == ACK;
            if !((len == 12 && syn)
                || (len == 20 && only_ack)
                || (len == 24 && only_ack)
                || (len == 22 && only_ack)
                || (len == 4 && syn))
            {
                return Ok(false);
            }
            let version = u8_at(opt, 2)? & 0x0f;
            if version > 1 {
                ctx.f(format_args!(" Unknown Version ({version})"));
                return Ok(true);
            }
            ctx.f(format_args!(" v{version}"));
            if u8_at(opt, 3)? & 0x80 != 0 {
                ctx.s(" csum");
            }
            if len == 12 || len >= 20 {
                ctx.f(format_args!(" {{0x{:x}", be64(opt, 4)?));
                if len >= 20 {
                    ctx.f(format_args!(",0x{:x}", be64(opt, 12)?));
                }
                ctx.s("}");
            }
        }
        1 => {
            if !((len == 12 && flags & SYN != 0)
                || (len == 16 && flags & (SYN | ACK) == SYN | ACK)
                || (len == 24 && flags & ACK != 0))
            {
                return Ok(false);
            }
            if len != 24 {
                if u8_at(opt, 2)? & 0x01 != 0 {
                    ctx.s(" backup");
                }
                ctx.f(format_args!(" id {}", u8_at(opt, 3)?));
            }
            match len {
                12 => ctx.f(format_args!(
                    " token 0x{:x} nonce 0x{:x}",
                    be32(opt, 4)?,
                    be32(opt, 8)?
                )),
                16 => ctx.f(format_args!(
                    " hmac 0x{:x} nonce 0x{:x}",
                    be64(opt, 4)?,
                    be32(opt, 12)?
                )),
                _ => {
                    ctx.s(" hmac 0x");
                    for i in 0..20 {
                        ctx.f(format_args!("{:02x}", u8_at(opt, 4 + i)?));
                    }
                }
            }
        }
        2 => {
            if len < 4 {
                return Ok(false);
            }
            let f = u8_at(opt, 3)?;
            if f & 0x10 != 0 {
                ctx.s(" fin");
            }
            let mut p = 4usize;
            let mut left = len - 4;
            if f & 0x01 != 0 {
                ctx.s(" ack ");
                if f & 0x02 != 0 {
                    if left < 8 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be64(opt, p)?));
                    p += 8;
                    left -= 8;
                } else {
                    if left < 4 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be32(opt, p)?));
                    p += 4;
                    left -= 4;
                }
            }
            if f & 0x04 != 0 {
                ctx.s(" seq ");
                if f & 0x08 != 0 {
                    if left < 8 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be64(opt, p)?));
                    p += 8;
                    left -= 8;
                } else {
                    if left < 4 {
                        return Ok(false);
                    }
                    ctx.f(format_args!("{}", be32(opt, p)?));
                    p += 4;
                    left -= 4;
                }
                if left < 4 {
                    return Ok(false);
                }
                ctx.f(format_args!(" subseq {}", be32(opt, p)?));
                p += 4;
                left -= 4;
                if left < 2 {
                    return Ok(false);
                }
                ctx.f(format_args!(" len {}", be16(opt, p)?));
                p += 2;
                left -= 2;
                if left >= 2 {
                    ctx.f(format_args!(" csum 0x{:x}", be16(opt, p)?));
                    left -= 2;
                }
            }
            if left != 0 {
                return Ok(false);
            }
        }
        3 => {
            if ![8, 10, 16, 18, 20, 22, 28, 30].contains(&len) {
                return Ok(false);
            }
            let echo = u8_at(opt, 2)? & 0x0f;
            ctx.s(match echo {
                6 => " v0-ip6",
                4 => " v0-ip4",
                1 => " v1-echo",
                0 => " v1",
                _ => " [bad version/echo]",
            });
            ctx.f(format_args!(" id {}", u8_at(opt, 3)?));
            if len <= 18 {
                ctx.s(" ");
                ipv4(ctx.out, bytes(opt, 4, 4)?);
                if len == 10 || len == 18 {
                    ctx.f(format_args!(":{}", be16(opt, 8)?));
                }
                if len == 16 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 8)?));
                }
                if len == 18 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 10)?));
                }
            } else {
                ctx.s(" ");
                ipv6(ctx.out, bytes(opt, 4, 16)?);
                if len == 22 || len == 30 {
                    ctx.f(format_args!(":{}", be16(opt, 20)?));
                }
                if len == 28 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 20)?));
                }
                if len == 30 {
                    ctx.f(format_args!(" hmac 0x{:x}", be64(opt, 22)?));
                }
            }
        }
        4 => {
            if len < 4 {
                return Ok(false);
            }
            ctx.s(" id");
            for i in 0..len - 3 {
                ctx.f(format_args!(" {}", u8_at(opt, 3 + i)?));
            }
        }
        5 => {
            if len != 3 && len != 4 {
                return Ok(false);
            }
            if u8_at(opt, 2)? & 0x01 != 0 {
                ctx.s(" backup");
            } else {
                ctx.s(" non-backup");
            }
            if len == 4 {
                ctx.f(format_args!(" id {}", u8_at(opt, 3)?));
            }
        }
        6 => {
            if len != 12 {
                return Ok(false);
            }
            ctx.f(format_args!(" seq {}", be64(opt, 4)?));
        }
        7 => {
            if len != 12 {
                return Ok(false);
            }
            ctx.f(format_args!(" key 0x{:x}", be64(opt, 4)?));
        }
        _ => {}
    }
    Ok(true)
}

fn be64(b: &[u8], i: usize) -> R<u64> {
    Ok(u64::from(be32(b, i)?) << 32 | u64::from(be32(b, i + 4)?))
}
