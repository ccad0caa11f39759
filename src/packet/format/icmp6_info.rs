//! ICMPv6 Node Information (RFC 4620, types 139/140) and Router Renumbering
//! (RFC 2894, type 138), as tcpdump 4.99 prints them without -v.
//!
//! tcpdump checks lengths two ways in these printers: a failed ND_TCHECK
//! prints " [|icmp6]" and the line still ends with ", length N"
//! (`checked_trunc`), while a failed field fetch abandons the line
//! (`Err(Trunc)`; the caller adds " [|icmp6]").
//!
//! `data` ends where the capture or the IPv6 payload ends, whichever is
//! first (tcpdump's snapend); `length` is the ICMPv6 length from the IP header.

use super::{Ctx, R, be16, be32, bytes, ipv4, ipv6, print_char, u8_at};

/// The ICMPv6 header plus the 8-byte nonce: where a Node Information
/// message's data starts.
const NI_HEADER: usize = 16;

/// A failed ND_TCHECK: the marker, and the line goes on.
fn checked_trunc(ctx: &mut Ctx) -> R {
    ctx.s(" [|icmp6]");
    Ok(())
}

/// Node Information query (139) or reply (140); the type name is printed.
pub fn node_information(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    if u8_at(data, 0)? == 139 {
        query(ctx, data)
    } else {
        reply(ctx, data, length)
    }
}

fn query(ctx: &mut Ctx, data: &[u8]) -> R {
    // KAME's who-are-you request: the header and a 4-byte nonce only.
    if data.len() == 12 {
        ctx.s(" who-are-you request");
        return Ok(());
    }
    ctx.s(" node information query");
    if data.len() < NI_HEADER {
        return checked_trunc(ctx);
    }
    let qtype = be16(data, 4)?;
    let flags = be16(data, 6)?;
    ctx.s(" (");
    match qtype {
        0 => ctx.s("noop"),
        1 => {
            ctx.s("supported qtypes");
            suptypes_flags(ctx, flags);
        }
        2 => ctx.s("DNS name"),
        3 => {
            ctx.s("node addresses");
            nodeaddr_flags(ctx, flags, false);
        }
        _ => ctx.s("unknown"),
    }
    // NOOP and supported-qtypes queries carry no subject.
    if qtype <= 1 {
        ctx.s(")");
        return Ok(());
    }
    // A query without a subject is icmp-name-lookup-03's form.
    if data.len() == NI_HEADER {
        ctx.s(", 03 draft)");
        return Ok(());
    }
    let subject = &data[NI_HEADER..];
    match u8_at(data, 1)? {
        // An address subject of any other length prints nothing (-v says why).
        0 if subject.len() == 16 => {
            ctx.s(", subject=");
            ipv6(ctx.out, subject);
        }
        1 => {
            ctx.s(", subject=DNS name");
            name(ctx, subject)?;
        }
        2 if subject.len() == 4 => {
            ctx.s(", subject=");
            ipv4(ctx.out, subject);
        }
        0 | 2 => {}
        _ => ctx.s(", unknown subject"),
    }
    ctx.s(")");
    Ok(())
}

fn reply(ctx: &mut Ctx, data: &[u8], length: usize) -> R {
    if length > data.len() || data.len() < NI_HEADER {
        return checked_trunc(ctx);
    }
    ctx.s(" node information reply (");
    // Success is only named with -v; other codes end the reply.
    match u8_at(data, 1)? {
        0 => {}
        code => {
            match code {
                1 => ctx.s("refused"),
                2 => ctx.s("unknown"),
                _ => {}
            }
            ctx.s(")");
            return Ok(());
        }
    }
    let qtype = be16(data, 4)?;
    let flags = be16(data, 6)?;
    match qtype {
        0 => ctx.s("noop"),
        1 => {
            ctx.s("supported qtypes");
            suptypes_flags(ctx, flags);
        }
        2 => {
            ctx.s("DNS name");
            // A 4-byte TTL precedes the name.
            name(ctx, data.get(NI_HEADER + 4..).unwrap_or_default())?;
            if flags & 0x01 != 0 {
                ctx.f(format_args!(" [TTL={}]", be32(data, NI_HEADER)?));
            }
        }
        3 => {
            ctx.s("node addresses");
            // Each address follows its 4-byte TTL; a partial entry is skipped.
            for entry in data[NI_HEADER..].chunks_exact(20) {
                ctx.s(" ");
                ipv6(ctx.out, &entry[4..]);
                ctx.f(format_args!("({})", be32(entry, 0)?));
            }
            nodeaddr_flags(ctx, flags, true);
        }
        _ => ctx.s("unknown"),
    }
    ctx.s(")");
    Ok(())
}

/// The supported-qtypes flags: C (compressed bitmap), if any flag is set.
fn suptypes_flags(ctx: &mut Ctx, flags: u16) {
    if flags != 0 {
        ctx.s(if flags & 0x01 != 0 { " [C]" } else { " []" });
    }
}

/// The node-addresses flags as tcpdump letters them, if any flag is set.
/// The truncate flag (T) is undefined in a query, so only a reply names it.
fn nodeaddr_flags(ctx: &mut Ctx, flags: u16, is_reply: bool) {
    if flags == 0 {
        return;
    }
    ctx.s(" [");
    let letters = [
        (0x40, 'a'), // anycast (experimental)
        (0x20, 'G'), // global
        (0x10, 'S'), // site-local
        (0x08, 'L'), // link-local
        (0x04, 'C'), // IPv4-compatible
        (0x02, 'A'), // all
        (0x01, 'T'), // truncated
    ];
    for (bit, letter) in letters {
        if flags & bit != 0 && (is_reply || letter != 'T') {
            ctx.out.push(letter);
        }
    }
    ctx.s("]");
}

/// A subject or reply name: a length-prefixed string (icmp-name-lookup-03)
/// when the first byte counts the rest, else DNS labels.
fn name(ctx: &mut Ctx, b: &[u8]) -> R {
    if usize::from(u8_at(b, 0)?) == b.len() - 1 {
        ctx.s(", \"");
        for &c in &b[1..] {
            print_char(ctx.out, c);
        }
        ctx.s("\"");
    } else {
        dns_labels(ctx, b);
    }
    Ok(())
}

/// tcpdump's dnsname_print: uncompressed labels, "???" where they break.
fn dns_labels(ctx: &mut Ctx, b: &[u8]) {
    ctx.s(", \"");
    let mut at = 0;
    while at < b.len() {
        let label = usize::from(b[at]);
        at += 1;
        if label == 0 {
            if at == b.len() {
                // The root label ends the data: a fully qualified name.
                ctx.s(".");
            } else if !(at + 1 == b.len() && b[at] == 0) {
                // Anything but one trailing pad byte is invalid.
                ctx.s("???");
            }
            break;
        }
        if label > b.len() - at {
            ctx.s("???");
            break;
        }
        for &c in &b[at..at + label] {
            print_char(ctx.out, c);
        }
        at += label;
        if at + 1 < b.len() && b[at] != 0 {
            ctx.s(".");
        }
    }
    ctx.s("\"");
}

/// Router Renumbering (138); the type name is printed.
pub fn router_renumbering(ctx: &mut Ctx, data: &[u8]) -> R {
    // The 16-byte header: ICMPv6 header, segment, flags, max delay, reserved.
    if data.len() < 16 {
        return checked_trunc(ctx);
    }
    let code = u8_at(data, 1)?;
    match code {
        0 => ctx.s(", command"),
        1 => ctx.s(", result"),
        255 => ctx.s(", sequence number reset"),
        _ => ctx.f(format_args!(", code-#{code}")),
    }
    ctx.f(format_args!(", seq={}", be32(data, 4)?));
    if code != 0 {
        return Ok(());
    }
    // A command's match-prefix part: 24 bytes after the header.
    const MATCH: usize = 16;
    const USES: usize = MATCH + 24;
    if data.len() < USES {
        return checked_trunc(ctx);
    }
    ctx.s(" match(");
    match u8_at(data, MATCH)? {
        1 => ctx.s("add"),
        2 => ctx.s("change"),
        3 => ctx.s("setglobal"),
        op => ctx.f(format_args!("#{op}")),
    }
    ctx.s(",");
    ipv6(ctx.out, bytes(data, MATCH + 8, 16)?);
    ctx.f(format_args!("/{})", u8_at(data, MATCH + 3)?));
    // The part's length in 8-byte units: 3 for itself, 4 per use-prefix part.
    let units = i32::from(u8_at(data, MATCH + 1)?) - 3;
    if units % 4 != 0 {
        return checked_trunc(ctx);
    }
    for i in 0..units.max(0) as usize / 4 {
        let at = USES + 32 * i;
        let Some(part) = data.get(at..at + 32) else {
            return checked_trunc(ctx);
        };
        ctx.s(" use(");
        // The first byte of the flags word: decrement valid/preferred time.
        let flags = part[12];
        if flags != 0 {
            if flags & 0x80 != 0 {
                ctx.s("V");
            }
            if flags & 0x40 != 0 {
                ctx.s("P");
            }
            ctx.s(",");
        }
        ipv6(ctx.out, &part[16..32]);
        ctx.f(format_args!("/{}/{})", part[0], part[1]));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::packet::format::{Formatter, Host};

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    /// The line for a raw IPv6 packet ::1 > ::2 carrying `icmp6`, of which
    /// only the first `captured` bytes were captured.
    fn line_captured(icmp6: &[u8], captured: usize) -> String {
        let mut packet = vec![0x60, 0, 0, 0];
        packet.extend_from_slice(&(icmp6.len() as u16).to_be_bytes());
        packet.extend_from_slice(&[58, 64]);
        packet.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
        packet.extend_from_slice(&"::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
        let wire_len = (packet.len() + icmp6.len()) as u32;
        packet.extend_from_slice(&icmp6[..captured]);
        let mut out = String::new();
        Formatter::new(Host::UTC).body(101, &packet, wire_len, &mut out);
        out.strip_prefix("IP6 ::1 > ::2: ").unwrap().to_string()
    }

    fn line(icmp6: &[u8]) -> String {
        line_captured(icmp6, icmp6.len())
    }

    // The expected lines are what tcpdump 4.99.3 prints for the same bytes.

    #[test]
    fn node_information_query_names_its_flags_and_subject() {
        // tcpdump's icmpv6-ni-flags.pcap: node addresses, flag A, IPv6 subject.
        let query = hex("8b00 630d 0003 0002 0001 8b56 bbf6 472f
                         fe80 0000 0000 0000 5054 00ff fe2c 3629");
        assert_eq!(
            line(&query),
            "ICMP6, who-are-you request node information query \
             (node addresses [A], subject=fe80::5054:ff:fe2c:3629), length 32"
        );
        // icmpv6_nodeinfo_queryipv4.pcap: an unknown qtype, IPv4 subject.
        let query = hex("8b02 7b23 0004 0002 3a93 59e0 b3af ef5e c000 0201");
        assert_eq!(
            line(&query),
            "ICMP6, who-are-you request node information query \
             (unknown, subject=192.0.2.1), length 20"
        );
        // A DNS-name subject as a length-prefixed string.
        let mut query = hex("8b01 0000 0002 0000 0102 0304 0506 0708");
        query.extend_from_slice(b"\x04host");
        assert_eq!(
            line(&query),
            "ICMP6, who-are-you request node information query \
             (DNS name, subject=DNS name, \"host\"), length 21"
        );
        // KAME's who-are-you: a 4-byte nonce.
        let query = hex("8b00 0000 0000 0000 0102 0304");
        assert_eq!(
            line(&query),
            "ICMP6, who-are-you request who-are-you request, length 12"
        );
    }

    #[test]
    fn node_information_reply_lists_addresses_and_names() {
        // icmpv6_nodeinfo_replyipv6.pcap: three addresses with their TTLs.
        let reply = hex("8c00 4a14 0003 0002 6e0a 44c1 688e b28d
                         0000 0000 0000 0000 0000 0000 0000 0000 0000 0001
                         0000 0000 2001 0db8 0000 0000 0000 0000 0000 0001
                         0000 0000 2002 0db8 0000 0000 0000 0000 0000 0001");
        assert_eq!(
            line(&reply),
            "ICMP6, who-are-you reply node information reply (node addresses \
             ::1(0) 2001:db8::1(0) 2002:db8::1(0) [A]), length 76"
        );
        // A DNS name in labels, with a valid TTL.
        let mut reply = hex("8c00 0000 0002 0001 0102 0304 0506 0708 0000 012c");
        reply.extend_from_slice(b"\x03www\x07example\x00");
        assert_eq!(
            line(&reply),
            "ICMP6, who-are-you reply node information reply \
             (DNS name, \"www.example.\" [TTL=300]), length 33"
        );
        let refused = hex("8c01 0000 0003 0000 0102 0304 0506 0708");
        assert_eq!(
            line(&refused),
            "ICMP6, who-are-you reply node information reply (refused), length 16"
        );
    }

    #[test]
    fn truncated_node_information_prints_tcpdumps_markers() {
        // A reply captured short: the check fails, the length still prints.
        let reply = hex("8c00 4a14 0003 0002 6e0a 44c1 688e b28d
                         0000 0000 0000 0000 0000 0000 0000 0000 0000 0001");
        assert_eq!(
            line_captured(&reply, 30),
            "ICMP6, who-are-you reply [|icmp6], length 36"
        );
        // A DNS-name reply that ends inside its TTL: the fetch ends the line.
        let reply = hex("8c00 0000 0002 0001 0102 0304 0506 0708 0000");
        assert_eq!(
            line(&reply),
            "ICMP6, who-are-you reply node information reply (DNS name [|icmp6]"
        );
    }

    /// tcpdump's icmpv6-RFC2894-RR.pcap, first packet.
    const RR_COMMAND: &str = "8a00 df3a 0000 0000 0010 0000 0000 0000
                              0107 0030 0080 0000 fec0 0000 0000 0000 0000 0000 0000 0000
                              3010 0000 0027 8d00 0009 3a80 0000 0000
                              3ffe 0501 fffe 0000 0000 0000 0000 0000";

    #[test]
    fn router_renumbering_command_prints_match_and_use_prefixes() {
        assert_eq!(
            line(&hex(RR_COMMAND)),
            "ICMP6, router renumbering, command, seq=0 match(add,fec0::/48) \
             use(3ffe:501:fffe::/48/16), length 72"
        );
        // A result carries no prefixes to print.
        let mut result = hex(RR_COMMAND);
        result[1] = 1;
        assert_eq!(
            line(&result),
            "ICMP6, router renumbering, result, seq=0, length 72"
        );
    }

    #[test]
    fn truncated_router_renumbering_prints_what_was_captured() {
        let command = hex(RR_COMMAND);
        assert_eq!(
            line_captured(&command, 50),
            "ICMP6, router renumbering, command, seq=0 match(add,fec0::/48) [|icmp6], length 72"
        );
        assert_eq!(
            line_captured(&command, 30),
            "ICMP6, router renumbering, command, seq=0 [|icmp6], length 72"
        );
        assert_eq!(
            line_captured(&command, 1),
            "ICMP6, router renumbering [|icmp6]"
        );
    }
}
