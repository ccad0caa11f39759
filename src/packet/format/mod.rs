//! tcpdump -n lines: one line per packet, as tcpdump 4.99 prints them.
//!
//! Every printer reads the captured bytes through bounds-checked getters that
//! return `Trunc` when the capture ends early; the caller then appends
//! " [|proto]" as tcpdump does, so a truncated or malformed packet prints
//! what tcpdump prints and never panics.

mod arp;
mod dns;
mod dns_name;
mod gre;
mod icmp;
mod icmp6_info;
mod ip;
mod link;
mod sctp;
mod tcp;
mod text;
mod udp;

use foldhash::HashMap;
use std::fmt::Write;

/// The capture ended before a field the printer needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trunc;

pub type R<T = ()> = Result<T, Trunc>;

pub fn u8_at(b: &[u8], i: usize) -> R<u8> {
    b.get(i).copied().ok_or(Trunc)
}

pub fn be16(b: &[u8], i: usize) -> R<u16> {
    match b.get(i..i.checked_add(2).ok_or(Trunc)?) {
        Some(s) => Ok(u16::from_be_bytes([s[0], s[1]])),
        None => Err(Trunc),
    }
}

pub fn be32(b: &[u8], i: usize) -> R<u32> {
    match b.get(i..i.checked_add(4).ok_or(Trunc)?) {
        Some(s) => Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]])),
        None => Err(Trunc),
    }
}

pub fn bytes(b: &[u8], i: usize, n: usize) -> R<&[u8]> {
    b.get(i..i.checked_add(n).ok_or(Trunc)?).ok_or(Trunc)
}

/// The relative sequence-number table tcpdump keeps per TCP connection.
#[derive(Debug, Default)]
pub struct TcpSeqTable {
    map: HashMap<TcpKey, (u32, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TcpKey {
    src: [u8; 16],
    dst: [u8; 16],
    ports: u32,
}

/// Most connections a reader remembers; past this the table starts over
/// (tcpdump never forgets; a live view must stay bounded).
const TCP_TABLE_MAX: usize = 1 << 20;

/// What tcpdump looks up on the host it prints on: the local zone's offset
/// from UTC at a time (for the time of day) and an interface's name by index
/// (for SLL2 headers). packet does no OS I/O, so the caller passes them:
/// `capture::HOST` on this machine, `Host::UTC` for fixed output.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// Seconds east of UTC at a Unix second.
    pub utc_offset: fn(i64) -> i64,
    /// The interface with this index, None when there is none.
    pub ifname: fn(u32) -> Option<String>,
}

impl Host {
    /// UTC and no interface names ("?"), whatever the machine.
    pub const UTC: Host = Host {
        utc_offset: |_| 0,
        ifname: |_| None,
    };
}

/// Prints packets as tcpdump -n does. Holds the per-connection state that
/// relative sequence numbers need, so use one per capture.
#[derive(Debug)]
pub struct Formatter {
    host: Host,
    tcp: TcpSeqTable,
    /// Interface names for SLL2 headers, by index (looked up on this host,
    /// as tcpdump does).
    ifnames: HashMap<u32, String>,
}

/// Where printing is: the output and the protocol a truncation names.
pub(crate) struct Ctx<'a> {
    pub out: &'a mut String,
    pub proto: &'static str,
    pub tcp: &'a mut TcpSeqTable,
    pub ifnames: &'a mut HashMap<u32, String>,
    pub host: Host,
}

impl Ctx<'_> {
    pub fn s(&mut self, text: &str) {
        self.out.push_str(text);
    }
    pub fn f(&mut self, args: std::fmt::Arguments) {
        let _ = self.out.write_fmt(args);
    }
}

impl Formatter {
    /// A printer for packets captured on `host` (local time, interfaces).
    pub fn new(host: Host) -> Self {
        Self {
            host,
            tcp: TcpSeqTable::default(),
            ifnames: HashMap::default(),
        }
    }

    /// Names interface `index` for SLL2 lines instead of looking it up on
    /// this host (replay: the recorded host's interfaces).
    pub fn set_ifname(&mut self, index: u32, name: &str) {
        self.ifnames.insert(index, name.to_string());
    }

    /// The part of the line after the timestamp.
    pub fn body(&mut self, linktype: u32, data: &[u8], wire_len: u32, out: &mut String) {
        if self.tcp.map.len() > TCP_TABLE_MAX {
            self.tcp.map.clear();
        }
        let mut ctx = Ctx {
            out,
            proto: "",
            tcp: &mut self.tcp,
            ifnames: &mut self.ifnames,
            host: self.host,
        };
        let length = (wire_len as usize).max(data.len());
        if let Err(Trunc) = link::print(&mut ctx, linktype, data, length) {
            let proto = ctx.proto;
            ctx.f(format_args!(" [|{proto}]"));
        }
    }

    /// A whole line: local time of day with microseconds, then the body.
    pub fn line(
        &mut self,
        linktype: u32,
        ts: Timestamp,
        data: &[u8],
        wire_len: u32,
        out: &mut String,
    ) {
        if invalid_header(data.len(), wire_len, out) {
            return;
        }
        ts.write((self.host.utc_offset)(ts.sec), out);
        out.push(' ');
        self.body(linktype, data, wire_len, out);
    }
}

/// tcpdump's sanity checks on a record's lengths: a record that fails them
/// prints as "[Invalid header: len==0]" (each problem, comma-separated),
/// without a time, and nothing else.
fn invalid_header(caplen: usize, len: u32, out: &mut String) -> bool {
    const MAXIMUM_SNAPLEN: usize = crate::packet::pcap::MAXIMUM_SNAPLEN as usize;
    let len = len as usize;
    let mut problems = Vec::new();
    if caplen == 0 {
        problems.push("caplen==0".to_string());
    }
    if len == 0 {
        problems.push("len==0".to_string());
    } else if len < caplen {
        problems.push(format!("len({len}) < caplen({caplen})"));
    }
    if caplen > MAXIMUM_SNAPLEN {
        problems.push(format!("caplen({caplen}) > {MAXIMUM_SNAPLEN}"));
    }
    if len > MAXIMUM_SNAPLEN {
        problems.push(format!("len({len}) > {MAXIMUM_SNAPLEN}"));
    }
    if problems.is_empty() {
        return false;
    }
    out.push_str("[Invalid header: ");
    out.push_str(&problems.join(", "));
    out.push(']');
    true
}

/// A packet timestamp as the file stores it: seconds and a fraction in micro-
/// or nanoseconds. Kept raw so invalid fractions print as tcpdump prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timestamp {
    pub sec: i64,
    pub frac: u32,
    pub nanos: bool,
}

impl Timestamp {
    pub fn from_nanos(ns: u64) -> Self {
        Self {
            sec: (ns / 1_000_000_000) as i64,
            frac: (ns % 1_000_000_000) as u32,
            nanos: true,
        }
    }

    pub fn as_secs_f64(&self) -> f64 {
        let scale = if self.nanos { 1e9 } else { 1e6 };
        self.sec as f64 + f64::from(self.frac) / scale
    }

    /// The fraction in microseconds (tcpdump's default precision).
    pub fn micros(&self) -> u32 {
        if self.nanos {
            // As libpcap scales it: the file's field is a signed 32-bit
            // value, divided in C (towards zero), then printed unsigned, so
            // an invalid fraction prints exactly as tcpdump prints it.
            ((self.frac as i32) / 1000) as u32
        } else {
            self.frac
        }
    }

    /// "HH:MM:SS.uuuuuu" at `utc_offset` seconds east of UTC (local time,
    /// as tcpdump prints it, with the local zone's offset).
    pub fn write(&self, utc_offset: i64, out: &mut String) {
        let day = (self.sec + utc_offset).rem_euclid(86_400);
        let _ = write!(
            out,
            "{:02}:{:02}:{:02}.{:06}",
            day / 3600,
            day % 3600 / 60,
            day % 60,
            self.micros()
        );
    }
}

/// tcpdump's fn_print_char: M- for high bytes, ^X for control characters.
pub(crate) fn print_char(out: &mut String, mut c: u8) {
    if !c.is_ascii() {
        c &= 0x7f;
        out.push_str("M-");
    }
    if !(0x20..0x7f).contains(&c) {
        c ^= 0x40;
        out.push('^');
    }
    out.push(c as char);
}

/// nd_printn: prints up to `n` characters; Err when the capture ends first.
pub(crate) fn printn(out: &mut String, b: &[u8], start: usize, n: usize) -> R {
    for i in 0..n {
        let c = u8_at(b, start + i)?;
        print_char(out, c);
    }
    Ok(())
}

/// An IPv4 address, dotted quad.
pub fn ipv4(out: &mut String, a: &[u8]) {
    let _ = write!(out, "{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
}

/// An IPv6 address as tcpdump's addrtostr6 (BIND inet_ntop6) writes it.
pub fn ipv6(out: &mut String, a: &[u8]) {
    let mut words = [0u16; 8];
    for (i, w) in words.iter_mut().enumerate() {
        *w = u16::from_be_bytes([a[2 * i], a[2 * i + 1]]);
    }
    let (mut best_base, mut best_len) = (None::<usize>, 0usize);
    let (mut cur_base, mut cur_len) = (None::<usize>, 0usize);
    for (i, w) in words.iter().enumerate() {
        if *w == 0 {
            if cur_base.is_none() {
                cur_base = Some(i);
                cur_len = 1;
            } else {
                cur_len += 1;
            }
        } else if let Some(base) = cur_base {
            if best_base.is_none() || cur_len > best_len {
                best_base = Some(base);
                best_len = cur_len;
            }
            cur_base = None;
        }
    }
    if let Some(base) = cur_base
        && (best_base.is_none() || cur_len > best_len)
    {
        best_base = Some(base);
        best_len = cur_len;
    }
    if best_len < 2 {
        best_base = None;
    }
    let mut i = 0;
    while i < 8 {
        if let Some(base) = best_base
            && i >= base
            && i < base + best_len
        {
            if i == base {
                out.push(':');
            }
            i += 1;
            continue;
        }
        if i != 0 {
            out.push(':');
        }
        if i == 6
            && best_base == Some(0)
            && (best_len == 6
                || (best_len == 7 && words[7] != 0x0001)
                || (best_len == 5 && words[5] == 0xffff))
        {
            ipv4(out, &a[12..16]);
            return;
        }
        let _ = write!(out, "{:x}", words[i]);
        i += 1;
    }
    if let Some(base) = best_base
        && base + best_len == 8
    {
        out.push(':');
    }
}

/// A MAC or other link address: lower-case hex bytes joined by ':'.
pub(crate) fn linkaddr(out: &mut String, a: &[u8]) {
    for (i, byte) in a.iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        let _ = write!(out, "{byte:02x}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(text: &str) -> String {
        let addr: std::net::Ipv6Addr = text.parse().unwrap();
        let mut out = String::new();
        ipv6(&mut out, &addr.octets());
        out
    }

    /// tcpdump's record sanity checks, worded as tcpdump 4.99 prints them.
    #[test]
    fn invalid_headers_print_as_tcpdump_does() {
        let line = |data: &[u8], len: u32| {
            let mut out = String::new();
            Formatter::new(Host::UTC).line(1, Timestamp::default(), data, len, &mut out);
            out
        };
        assert_eq!(line(&[], 60), "[Invalid header: caplen==0]");
        assert_eq!(line(&[], 0), "[Invalid header: caplen==0, len==0]");
        assert_eq!(line(&[0; 10], 0), "[Invalid header: len==0]");
        assert_eq!(line(&[0; 35], 34), "[Invalid header: len(34) < caplen(35)]");
        assert_eq!(
            line(&[0; 10], 300_000),
            "[Invalid header: len(300000) > 262144]"
        );
        assert!(!line(&[0; 60], 60).starts_with('['));
    }

    #[test]
    fn ipv6_like_inet_ntop() {
        assert_eq!(v6("::1"), "::1");
        assert_eq!(v6("::"), "::");
        assert_eq!(v6("2000:0:0:40::"), "2000:0:0:40::");
        assert_eq!(v6("fe80::5054:ff:fe43:2ca8"), "fe80::5054:ff:fe43:2ca8");
        assert_eq!(v6("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
        assert_eq!(v6("::1.2.3.4"), "::1.2.3.4");
        assert_eq!(v6("1:0:1:0:1:0:1:0"), "1:0:1:0:1:0:1:0");
        assert_eq!(v6("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
    }

    #[test]
    fn control_and_high_bytes_are_escaped() {
        let mut out = String::new();
        for c in [b'a', 0x01, 0x7f, 0xe9] {
            print_char(&mut out, c);
        }
        assert_eq!(out, "a^A^?M-i");
    }

    #[test]
    fn an_invalid_nanosecond_fraction_prints_as_tcpdump_prints_it() {
        // tcpdump's timestamp_invalid_nano test: 2^31 ns.
        let ts = Timestamp {
            sec: 0,
            frac: 2_147_483_648,
            nanos: true,
        };
        assert_eq!(ts.micros(), 4_292_819_813);
        let ts = Timestamp {
            frac: 999_999_999,
            ..ts
        };
        assert_eq!(ts.micros(), 999_999);
    }

    #[test]
    fn timestamp_prints_micros() {
        let mut out = String::new();
        Timestamp {
            sec: 3661 - 7200,
            frac: 5,
            nanos: false,
        }
        .write(7200, &mut out);
        assert_eq!(out, "01:01:01.000005");
    }
}
