//! TCP options as tcpdump prints them: MSS, window scale, SACK, timestamps,
//! MD5 and AO signatures, fast open, user timeout and the rest; MPTCP's
//! own in `mptcp`.

use super::mptcp::mptcp;
use crate::packet::format::{Ctx, R, Trunc, be16, be32, bytes, u8_at};

pub(super) enum OptError {
    Trunc,
    /// Cut inside an option's value, found by tcpdump's LENCHECK: it jumps
    /// to the printer's own trunc label, which appends '>' after " [|tcp]"
    /// when an option was already printed (true here). A field read past the
    /// capture elsewhere is `Trunc`, which ends the line without it.
    Cut(bool),
    /// "[bad opt]"; true when an option was already printed.
    Bad(bool),
}

impl From<Trunc> for OptError {
    fn from(_: Trunc) -> Self {
        OptError::Trunc
    }
}

/// What the option printers need of the segment besides its bytes.
pub(super) struct Segment {
    pub(super) flags: u8,
    /// SACK blocks are relative to this side's sequence base.
    pub(super) rev: bool,
    pub(super) thseq: u32,
    pub(super) thack: u32,
    /// The whole segment (as the IP length gives it) was captured: the
    /// MD5 signature could be checked if tcpdump had the secret.
    pub(super) whole: bool,
}

pub(super) fn options(
    ctx: &mut Ctx,
    data: &[u8],
    mut hlen: usize,
    seg: &Segment,
) -> Result<(), OptError> {
    let Segment {
        flags,
        rev,
        thseq,
        thack,
        whole,
    } = *seg;
    let mut cp = 20usize;
    let mut first = true;
    while hlen > 0 {
        if !first {
            ctx.s(",");
        }
        let printed = !first;
        let opt = u8_at(data, cp)?;
        cp += 1;
        let len = if opt == 0 || opt == 1 {
            1
        } else {
            let len = usize::from(u8_at(data, cp)?);
            cp += 1;
            if len < 2 || len > hlen {
                return Err(OptError::Bad(printed));
            }
            hlen -= 1;
            len
        };
        hlen -= 1;
        let mut datalen = 0usize;
        let check = |l: usize, hlen: usize| -> Result<(), OptError> {
            if l > hlen {
                return Err(OptError::Bad(printed));
            }
            match bytes(data, cp, l) {
                Ok(_) => Ok(()),
                Err(Trunc) => Err(OptError::Cut(printed)),
            }
        };
        let name = match opt {
            0 => "eol",
            1 => "nop",
            2 => "mss",
            3 => "wscale",
            4 => "sackOK",
            5 => "sack",
            6 => "echo",
            7 => "echoreply",
            8 => "TS",
            11 => "cc",
            12 => "ccnew",
            13 => "",
            19 => "md5",
            20 => "scps",
            28 => "uto",
            29 => "tcp-ao",
            30 => "mptcp",
            34 => "tfo",
            254 => "exp",
            _ => "",
        };
        if name.is_empty() && opt != 13 {
            ctx.f(format_args!("unknown-{opt}"));
        } else {
            ctx.s(name);
        }
        match opt {
            2 => {
                datalen = 2;
                check(datalen, hlen)?;
                ctx.f(format_args!(" {}", be16(data, cp)?));
            }
            3 => {
                datalen = 1;
                check(datalen, hlen)?;
                ctx.f(format_args!(" {}", u8_at(data, cp)?));
            }
            5 => {
                datalen = len - 2;
                if !datalen.is_multiple_of(8) {
                    ctx.s(" invalid sack");
                } else {
                    ctx.f(format_args!(" {} ", datalen / 8));
                    let mut i = 0;
                    while i < datalen {
                        check(i + 4, hlen)?;
                        let mut s = be32(data, cp + i)?;
                        check(i + 8, hlen)?;
                        let mut e = be32(data, cp + i + 4)?;
                        let base = if rev { thseq } else { thack };
                        s = s.wrapping_sub(base);
                        e = e.wrapping_sub(base);
                        ctx.f(format_args!("{{{s}:{e}}}"));
                        i += 8;
                    }
                }
            }
            11 | 12 | 13 | 6 | 7 => {
                datalen = 4;
                check(datalen, hlen)?;
                ctx.f(format_args!(" {}", be32(data, cp)?));
            }
            8 => {
                datalen = 8;
                check(datalen, hlen)?;
                ctx.f(format_args!(
                    " val {} ecr {}",
                    be32(data, cp)?,
                    be32(data, cp + 4)?
                ));
            }
            19 => {
                datalen = 16;
                check(datalen, hlen)?;
                // tcpdump (built with libcrypto, as Debian's is) says why it
                // cannot verify the signature before printing it.
                ctx.s(if whole {
                    " shared secret not supplied with -M, can't check - "
                } else {
                    " snaplen too short, can't check - "
                });
                for i in 0..16 {
                    ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
                }
            }
            20 => {
                datalen = 2;
                check(datalen, hlen)?;
                ctx.f(format_args!(
                    " cap {:02x} id {}",
                    u8_at(data, cp)?,
                    u8_at(data, cp + 1)?
                ));
            }
            29 => {
                datalen = len - 2;
                if datalen < 2 {
                    ctx.s(" (invalid)");
                } else {
                    check(1, hlen)?;
                    ctx.f(format_args!(" keyid {}", u8_at(data, cp)?));
                    check(2, hlen)?;
                    ctx.f(format_args!(" rnextkeyid {}", u8_at(data, cp + 1)?));
                    if datalen > 2 {
                        ctx.s(" mac 0x");
                        for i in 2..datalen {
                            check(i + 1, hlen)?;
                            ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
                        }
                    }
                }
            }
            0 | 1 | 4 => {}
            28 => {
                datalen = 2;
                check(datalen, hlen)?;
                let raw = be16(data, cp)?;
                let value = if raw & 1 != 0 {
                    u32::from(raw >> 1) * 60
                } else {
                    u32::from(raw >> 1)
                };
                ctx.f(format_args!(" 0x{raw:x} {value}"));
            }
            30 => {
                datalen = len - 2;
                check(datalen, hlen)?;
                let end = (cp - 2 + len).min(data.len());
                if !mptcp(ctx, &data[cp - 2..end], len, flags)? {
                    return Err(OptError::Bad(printed));
                }
            }
            34 => {
                datalen = len - 2;
                check(datalen, hlen)?;
                ctx.s(" ");
                fastopen(ctx, data, cp, datalen, false)?;
            }
            254 => {
                datalen = len - 2;
                check(datalen, hlen)?;
                if datalen < 2 {
                    return Err(OptError::Bad(printed));
                }
                let magic = be16(data, cp)?;
                ctx.s("-");
                if magic == 0xf989 {
                    fastopen(ctx, data, cp + 2, datalen - 2, true)?;
                } else {
                    ctx.f(format_args!("{magic:04x}"));
                }
            }
            _ => {
                datalen = len - 2;
                if datalen > 0 {
                    ctx.s(" 0x");
                }
                for i in 0..datalen {
                    check(i + 1, hlen)?;
                    ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
                }
            }
        }
        cp += datalen;
        hlen -= datalen;
        let mut spec = datalen + 1;
        if opt != 0 && opt != 1 {
            spec += 1;
        }
        if spec != len {
            ctx.f(format_args!("[len {len}]"));
        }
        first = false;
        if opt == 0 {
            break;
        }
    }
    Ok(())
}

fn fastopen(ctx: &mut Ctx, data: &[u8], cp: usize, datalen: usize, exp: bool) -> R {
    if exp {
        ctx.s("tfo");
    }
    if datalen == 0 {
        ctx.s(" cookiereq");
    } else if !datalen.is_multiple_of(2) || !(4..=16).contains(&datalen) {
        ctx.s(" (invalid)");
    } else {
        ctx.s(" cookie ");
        for i in 0..datalen {
            ctx.f(format_args!("{:02x}", u8_at(data, cp + i)?));
        }
    }
    Ok(())
}
