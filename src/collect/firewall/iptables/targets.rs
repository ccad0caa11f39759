//! The targets' options as iptables-save 1.8.9 prints them (the save
//! functions of extensions/libipt_REJECT.c, libip6t_REJECT.c, libxt_LOG.c,
//! libxt_MARK.c, libxt_CONNMARK.c, libxt_NAT.c), for the revisions
//! iptables 1.8.9 puts in the kernel. Any other target, or revision,
//! prints as `-j NAME` alone: netlens does not decode it.

use std::fmt::Write;
use std::net::Ipv4Addr;

use super::blob::{Ext, Family, be16_at, c_string, u32_at};
use super::render::{ipv6_text, push_quoted};

/// The target's options after ` -j NAME`.
pub(super) fn save(family: Family, t: &Ext, out: &mut String) {
    let mut options = String::new();
    if decode(family, t, &mut options).is_some() {
        out.push_str(&options);
    }
}

/// The options of the targets netlens decodes; None for the others and
/// for data too short or out of range.
fn decode(family: Family, t: &Ext, out: &mut String) -> Option<()> {
    let d = t.data;
    match (t.name.as_str(), t.revision, family) {
        ("REJECT", 0, _) => reject(family, u32_at(d, 0)?, out),
        ("LOG", 0, _) => log(d, out),
        ("MARK", 2, _) => {
            let _ = write!(
                out,
                " --set-xmark 0x{:x}/0x{:x}",
                u32_at(d, 0)?,
                u32_at(d, 4)?
            );
            Some(())
        }
        ("CONNMARK", 1 | 2, _) => connmark(t.revision, d, out),
        ("DNAT", 2, _) => nat(family, Range::v2(d)?, "--to-destination ", false, out),
        ("DNAT", 0, Family::V4) => nat(family, Range::v4(d)?, "--to-destination ", false, out),
        ("SNAT", 0, Family::V4) => nat(family, Range::v4(d)?, "--to-source ", false, out),
        ("DNAT", 1, Family::V6) => nat(family, Range::v1(d)?, "--to-destination ", false, out),
        ("SNAT", 1, Family::V6) => nat(family, Range::v1(d)?, "--to-source ", false, out),
        ("MASQUERADE" | "REDIRECT", 0, Family::V4) => {
            nat(family, Range::v4(d)?, "--to-ports ", true, out)
        }
        ("MASQUERADE" | "REDIRECT", 0, Family::V6) => {
            nat(family, Range::v1(d)?, "--to-ports ", true, out)
        }
        _ => None,
    }
}

/// enum ipt_reject_with / ip6t_reject_with (ECHOREPLY and NOT_NEIGHBOUR
/// are refused by the kernel and unnamed by iptables).
fn reject(family: Family, with: u32, out: &mut String) -> Option<()> {
    const V4: [Option<&str>; 9] = [
        Some("icmp-net-unreachable"),
        Some("icmp-host-unreachable"),
        Some("icmp-proto-unreachable"),
        Some("icmp-port-unreachable"),
        None,
        Some("icmp-net-prohibited"),
        Some("icmp-host-prohibited"),
        Some("tcp-reset"),
        Some("icmp-admin-prohibited"),
    ];
    const V6: [Option<&str>; 9] = [
        Some("icmp6-no-route"),
        Some("icmp6-adm-prohibited"),
        None,
        Some("icmp6-addr-unreachable"),
        Some("icmp6-port-unreachable"),
        None,
        Some("tcp-reset"),
        Some("icmp6-policy-fail"),
        Some("icmp6-reject-route"),
    ];
    let names = match family {
        Family::V4 => V4,
        Family::V6 => V6,
    };
    let name = (*names.get(usize::try_from(with).ok()?)?)?;
    let _ = write!(out, " --reject-with {name}");
    Some(())
}

/// struct xt_log_info: level, logflags, prefix[30].
fn log(d: &[u8], out: &mut String) -> Option<()> {
    let (level, flags) = (*d.first()?, *d.get(1)?);
    let prefix = c_string(d.get(2..32)?);
    if !prefix.is_empty() {
        out.push_str(" --log-prefix");
        push_quoted(out, &prefix);
    }
    // LOG_DEFAULT_LEVEL is LOG_WARNING.
    if level != 4 {
        let _ = write!(out, " --log-level {level}");
    }
    for (bit, option) in [
        (0x01, " --log-tcp-sequence"),
        (0x02, " --log-tcp-options"),
        (0x04, " --log-ip-options"),
        (0x08, " --log-uid"),
        (0x20, " --log-macdecode"),
    ] {
        if flags & bit != 0 {
            out.push_str(option);
        }
    }
    Some(())
}

/// struct xt_connmark_tginfo1 (ctmark, ctmask, nfmask, mode) and
/// tginfo2 (the same, then shift_dir and shift_bits before mode).
fn connmark(revision: u8, d: &[u8], out: &mut String) -> Option<()> {
    let (ctmark, ctmask, nfmask) = (u32_at(d, 0)?, u32_at(d, 4)?, u32_at(d, 8)?);
    let mode = *d.get(if revision == 1 { 12 } else { 14 })?;
    let _ = match mode {
        0 => write!(out, " --set-xmark 0x{ctmark:x}/0x{ctmask:x}"),
        1 => write!(
            out,
            " --save-mark --nfmask 0x{nfmask:x} --ctmask 0x{ctmask:x}"
        ),
        2 => write!(
            out,
            " --restore-mark --nfmask 0x{nfmask:x} --ctmask 0x{ctmask:x}"
        ),
        _ => write!(out, " ERROR: UNKNOWN CONNMARK MODE"),
    };
    if revision == 2 && mode <= 2 {
        let (dir, bits) = (*d.get(12)?, *d.get(13)?);
        let op = match dir {
            0 => "left-shift-mark",
            1 => "right-shift-mark",
            _ => return None,
        };
        if bits != 0 {
            let _ = write!(out, " --{op} {bits}");
        }
    }
    Some(())
}

/// NF_NAT_RANGE_* flags.
const MAP_IPS: u32 = 1 << 0;
const PROTO_SPECIFIED: u32 = 1 << 1;
const PROTO_RANDOM: u32 = 1 << 2;
const PERSISTENT: u32 = 1 << 3;
const PROTO_RANDOM_FULLY: u32 = 1 << 4;
const PROTO_OFFSET: u32 = 1 << 5;

/// struct nf_nat_range2 as libxt_NAT.c makes it of every layout: ports
/// in host order.
struct Range<'a> {
    flags: u32,
    min_addr: &'a [u8],
    max_addr: &'a [u8],
    min_port: u16,
    max_port: u16,
    base_port: u16,
}

impl<'a> Range<'a> {
    /// struct nf_nat_ipv4_multi_range_compat: rangesize, then flags,
    /// min_ip, max_ip, min and max port of the first range.
    fn v4(d: &'a [u8]) -> Option<Range<'a>> {
        Some(Range {
            flags: u32_at(d, 4)?,
            min_addr: d.get(8..12)?,
            max_addr: d.get(12..16)?,
            min_port: be16_at(d, 16)?,
            max_port: be16_at(d, 18)?,
            base_port: 0,
        })
    }

    /// struct nf_nat_range: flags, min_addr, max_addr, min and max port.
    fn v1(d: &'a [u8]) -> Option<Range<'a>> {
        Some(Range {
            flags: u32_at(d, 0)?,
            min_addr: d.get(4..20)?,
            max_addr: d.get(20..36)?,
            min_port: be16_at(d, 36)?,
            max_port: be16_at(d, 38)?,
            base_port: 0,
        })
    }

    /// struct nf_nat_range2: nf_nat_range, then base_proto.
    fn v2(d: &'a [u8]) -> Option<Range<'a>> {
        Some(Range {
            base_port: be16_at(d, 40)?,
            ..Range::v1(d)?
        })
    }
}

/// __NAT_print with sprint_range: `--to-destination [addr-addr]:port-port`,
/// the colon left out of a ports-only `--to-ports`.
fn nat(family: Family, r: Range, option: &str, skip_colon: bool, out: &mut String) -> Option<()> {
    let addr = |bytes: &[u8]| -> Option<String> {
        Some(match family {
            Family::V4 => Ipv4Addr::from(<[u8; 4]>::try_from(bytes.get(..4)?).ok()?).to_string(),
            Family::V6 => ipv6_text(bytes.try_into().ok()?),
        })
    };
    let brackets = family == Family::V6 && r.flags & PROTO_SPECIFIED != 0;
    let mut text = String::new();
    if r.flags & MAP_IPS != 0 {
        if brackets {
            text.push('[');
        }
        text.push_str(&addr(r.min_addr)?);
        if r.min_addr != r.max_addr {
            text.push('-');
            text.push_str(&addr(r.max_addr)?);
        }
        if brackets {
            text.push(']');
        }
    }
    if r.flags & PROTO_SPECIFIED != 0 {
        let _ = write!(text, ":{}", r.min_port);
        if r.max_port != r.min_port {
            let _ = write!(text, "-{}", r.max_port);
        }
        if r.flags & PROTO_OFFSET != 0 {
            let _ = write!(text, "/{}", r.base_port);
        }
    }
    if !text.is_empty() {
        let text = if skip_colon {
            text.strip_prefix(':').unwrap_or(&text)
        } else {
            &text
        };
        let _ = write!(out, " {option}{text}");
    }
    for (bit, flag) in [
        (PROTO_RANDOM, " --random"),
        (PROTO_RANDOM_FULLY, " --random-fully"),
        (PERSISTENT, " --persistent"),
    ] {
        if r.flags & bit != 0 {
            out.push_str(flag);
        }
    }
    Some(())
}
