//! DNS names and type/class names as tcpdump prints them: labels,
//! compression pointers, bit labels and the name length cap.

use super::{Ctx, R, printn, u8_at};

pub(super) const MAXCDNAME: usize = 255;

pub fn type_name(t: u16) -> Option<&'static str> {
    Some(match t {
        1 => "A",
        2 => "NS",
        3 => "MD",
        4 => "MF",
        5 => "CNAME",
        6 => "SOA",
        7 => "MB",
        8 => "MG",
        9 => "MR",
        10 => "NULL",
        11 => "WKS",
        12 => "PTR",
        13 => "HINFO",
        14 => "MINFO",
        15 => "MX",
        16 => "TXT",
        17 => "RP",
        18 => "AFSDB",
        19 => "X25",
        20 => "ISDN",
        21 => "RT",
        22 => "NSAP",
        23 => "NSAP_PTR",
        24 => "SIG",
        25 => "KEY",
        26 => "PX",
        27 => "GPOS",
        28 => "AAAA",
        29 => "LOC",
        30 => "NXT",
        31 => "EID",
        32 => "NIMLOC",
        33 => "SRV",
        34 => "ATMA",
        35 => "NAPTR",
        36 => "KX",
        37 => "CERT",
        38 => "A6",
        39 => "DNAME",
        40 => "SINK",
        41 => "OPT",
        42 => "APL",
        43 => "DS",
        44 => "SSHFP",
        45 => "IPSECKEY",
        46 => "RRSIG",
        47 => "NSEC",
        48 => "DNSKEY",
        49 => "DHCID",
        50 => "NSEC3",
        51 => "NSEC3PARAM",
        52 => "TLSA",
        53 => "SMIMEA",
        55 => "HIP",
        56 => "NINFO",
        57 => "RKEY",
        58 => "TALINK",
        59 => "CDS",
        60 => "CDNSKEY",
        61 => "OPENPGPKEY",
        62 => "CSYNC",
        63 => "ZONEMD",
        64 => "SVCB",
        65 => "HTTPS",
        99 => "SPF",
        100 => "UINFO",
        101 => "UID",
        102 => "GID",
        103 => "UNSPEC",
        104 => "NID",
        105 => "L32",
        106 => "L64",
        107 => "LP",
        108 => "EUI48",
        109 => "EUI64",
        249 => "TKEY",
        250 => "TSIG",
        251 => "IXFR",
        252 => "AXFR",
        253 => "MAILB",
        254 => "MAILA",
        255 => "ANY",
        256 => "URI",
        257 => "CAA",
        258 => "AVC",
        259 => "DOA",
        260 => "AMTRELAY",
        32768 => "TA",
        32769 => "DLV",
        _ => return None,
    })
}

pub(super) fn class_name(c: u16) -> Option<&'static str> {
    Some(match c {
        1 => "IN",
        3 => "CHAOS",
        4 => "HS",
        255 => "ANY",
        _ => return None,
    })
}

/// Skips a domain name; None where tcpdump's ns_nskip gives up.
pub(super) fn nskip(b: &[u8], mut cp: usize) -> Option<usize> {
    let mut i = *b.get(cp)?;
    cp += 1;
    while i != 0 {
        match i & 0xc0 {
            0xc0 => return Some(cp + 1),
            0x40 => {
                if i & 0x3f != 0x01 {
                    return None;
                }
                let mut bitlen = usize::from(*b.get(cp)?);
                if bitlen == 0 {
                    bitlen = 256;
                }
                cp += 1 + bitlen.div_ceil(8);
            }
            0x80 => return None,
            _ => cp += usize::from(i),
        }
        i = *b.get(cp)?;
        cp += 1;
    }
    Some(cp)
}

pub(super) enum LabelLen {
    Len(usize),
    Bad,
}

pub(super) fn labellen(ctx: &mut Ctx, b: &[u8], cp: usize) -> R<LabelLen> {
    let i = u8_at(b, cp)?;
    Ok(match i & 0xc0 {
        0x40 => {
            let elt = i & 0x3f;
            if elt != 0x01 {
                ctx.f(format_args!("<ELT {elt}>"));
                return Ok(LabelLen::Bad);
            }
            let mut bitlen = usize::from(u8_at(b, cp + 1)?);
            if bitlen == 0 {
                bitlen = 256;
            }
            LabelLen::Len(bitlen.div_ceil(8) + 1)
        }
        0x80 => {
            ctx.s("<BAD LABEL TYPE>");
            LabelLen::Bad
        }
        _ => LabelLen::Len(usize::from(i)),
    })
}

/// Prints a domain name; returns the offset after it in the record, or
/// None where tcpdump's fqdn_print returns NULL (the caller truncates).
/// `bp` is the DNS message (offsets are relative to it).
pub(super) fn fqdn(ctx: &mut Ctx, bp: &[u8], mut cp: usize) -> R<Option<usize>> {
    let mut l = match labellen(ctx, bp, cp)? {
        LabelLen::Len(l) => l,
        LabelLen::Bad => return Ok(None),
    };
    let mut max_offset = cp;
    let mut i = u8_at(bp, cp)?;
    cp += 1;
    let mut compress = false;
    let mut rp = 0usize;
    if i & 0xc0 != 0xc0 {
        rp = cp + l;
    }
    let mut name_chars = 0usize;
    if i != 0 {
        while i != 0 && cp < bp.len() {
            match i & 0xc0 {
                0xc0 => {
                    if !compress {
                        rp = cp + 1;
                        compress = true;
                    }
                    let offset = (usize::from(i) << 8 | usize::from(u8_at(bp, cp)?)) & 0x3fff;
                    if offset >= max_offset {
                        ctx.s("<BAD PTR>");
                        return Ok(None);
                    }
                    max_offset = offset;
                    cp = offset;
                    i = u8_at(bp, cp)?;
                    l = match labellen(ctx, bp, cp)? {
                        LabelLen::Len(l) => l,
                        LabelLen::Bad => return Ok(None),
                    };
                    cp += 1;
                    continue;
                }
                0x40 => {
                    if i & 0x3f != 0x01 {
                        ctx.f(format_args!("<ELT {}>", i & 0x3f));
                        return Ok(None);
                    }
                    blabel(ctx, bp, cp)?;
                }
                0x80 => {
                    ctx.s("<BAD LABEL TYPE>");
                    return Ok(None);
                }
                _ => {
                    if name_chars + l <= MAXCDNAME {
                        printn(ctx.out, bp, cp, l)?;
                    } else if name_chars < MAXCDNAME {
                        printn(ctx.out, bp, cp, MAXCDNAME - name_chars)?;
                    }
                    name_chars += l;
                }
            }
            cp += l;
            if name_chars <= MAXCDNAME {
                ctx.s(".");
            }
            name_chars += 1;
            i = u8_at(bp, cp)?;
            l = match labellen(ctx, bp, cp)? {
                LabelLen::Len(l) => l,
                LabelLen::Bad => return Ok(None),
            };
            cp += 1;
            if !compress {
                rp += l + 1;
            }
        }
        if name_chars > MAXCDNAME {
            ctx.s("<DOMAIN NAME TOO LONG>");
        }
    } else {
        ctx.s(".");
    }
    Ok(Some(rp))
}

pub(super) fn blabel(ctx: &mut Ctx, bp: &[u8], cp: usize) -> R {
    let mut bitlen = usize::from(u8_at(bp, cp)?);
    if bitlen == 0 {
        bitlen = 256;
    }
    let slen = bitlen.div_ceil(4);
    let lim = cp + 1 + slen;
    ctx.s("\\[x");
    let mut bitp = cp + 1;
    let mut b = bitlen;
    while bitp < lim && b > 7 {
        ctx.f(format_args!("{:02x}", u8_at(bp, bitp)?));
        b -= 8;
        bitp += 1;
    }
    if b > 4 {
        let tc = u8_at(bp, bitp)?;
        ctx.f(format_args!("{:02x}", tc & (0xffu8 << (8 - b))));
    } else if b > 0 {
        let tc = u8_at(bp, bitp)?;
        ctx.f(format_args!(
            "{:1x}",
            ((tc >> 4) & 0x0f) & (0x0f << (4 - b))
        ));
    }
    ctx.f(format_args!("/{bitlen}]"));
    Ok(())
}
