//! Connection tracking as one tick sees it: raw counters, the table size and,
//! when a dump was asked for, the entries. Plain data; the rate math and the
//! aggregates (top sources, counts by state) are in `conntrack_rates`.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// Where the counters came from.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StatsSource {
    /// Nothing could be read.
    #[default]
    None,
    /// ctnetlink GET_STATS_CPU / GET_STATS.
    Netlink,
    /// /proc/net/stat/nf_conntrack and /proc/sys/net/netfilter (no
    /// CAP_NET_ADMIN, or ctnetlink missing).
    Proc,
}

/// The per-CPU conntrack statistics, summed over CPUs. Monotonic until the
/// namespace goes away (each CPU's counter is 32 bits in the kernel, so a sum
/// can wrap; rates treat a backwards step as unknown).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ConntrackStats {
    pub found: u64,
    pub invalid: u64,
    pub insert: u64,
    pub insert_failed: u64,
    pub drop: u64,
    pub early_drop: u64,
    pub error: u64,
    pub search_restart: u64,
    pub clash_resolve: u64,
    pub chaintoolong: u64,
}

/// One direction of a connection: addresses and, for TCP/UDP/SCTP/…, ports.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct Tuple {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: Option<u16>,
    pub dport: Option<u16>,
}

impl Tuple {
    /// "198.18.0.1:40000", "[2001:db8::1]:443", or the bare address when the
    /// protocol has no ports (ICMP).
    pub fn src_text(&self) -> String {
        endpoint(self.src, self.sport)
    }

    pub fn dst_text(&self) -> String {
        endpoint(self.dst, self.dport)
    }

    /// Source and destination as socket addresses (canonical: v4-mapped
    /// v6 as v4); None for a protocol without ports.
    pub fn ends(&self) -> Option<(SocketAddr, SocketAddr)> {
        let end = |ip: IpAddr, port| SocketAddr::new(ip.to_canonical(), port);
        Some((end(self.src, self.sport?), end(self.dst, self.dport?)))
    }
}

/// "ip:port" / "[v6]:port" / "ip".
pub fn endpoint(ip: IpAddr, port: Option<u16>) -> String {
    match (ip, port) {
        (IpAddr::V4(v4), Some(port)) => format!("{v4}:{port}"),
        (IpAddr::V6(v6), Some(port)) => format!("[{v6}]:{port}"),
        (ip, None) => ip.to_string(),
    }
}

/// What network address translation did to a connection, read from its two
/// tuples: without NAT the reply tuple is the original one reversed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NatKind {
    None,
    Snat,
    Dnat,
    Both,
}

impl NatKind {
    pub fn label(self) -> Option<&'static str> {
        match self {
            NatKind::None => None,
            NatKind::Snat => Some("snat"),
            NatKind::Dnat => Some("dnat"),
            NatKind::Both => Some("snat+dnat"),
        }
    }
}

/// One conntrack entry, as `conntrack -L` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ConntrackEntry {
    /// IP protocol number (6 TCP, 17 UDP, 1 ICMP…).
    pub proto: u8,
    /// TCP state number (enum tcp_conntrack), None for other protocols.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_state: Option<u8>,
    pub orig: Tuple,
    pub reply: Tuple,
    /// IPS_* status bits.
    pub status: u32,
    /// Seconds until the entry expires.
    pub timeout: u32,
    #[serde(default)]
    pub mark: u32,
    #[serde(default)]
    pub zone: u16,
    /// (original, reply) packets and bytes; None when nf_conntrack_acct is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<(u64, u64)>,
}

/// IPS_* bits netlens reads.
pub const IPS_SEEN_REPLY: u32 = 1 << 1;
pub const IPS_ASSURED: u32 = 1 << 2;
pub const IPS_SRC_NAT: u32 = 1 << 4;
pub const IPS_DST_NAT: u32 = 1 << 5;

impl ConntrackEntry {
    pub fn proto_name(&self) -> String {
        proto_name(self.proto)
    }

    /// The TCP state as `conntrack -L` names it; for other protocols what its
    /// flags say: UNREPLIED, REPLIED or ASSURED.
    pub fn state_name(&self) -> &'static str {
        match self.tcp_state {
            Some(state) => tcp_state_name(state),
            None if self.status & IPS_ASSURED != 0 => "ASSURED",
            None if self.status & IPS_SEEN_REPLY != 0 => "REPLIED",
            None => "UNREPLIED",
        }
    }

    /// NAT read from the tuples: the reply comes from somewhere other than
    /// where the original went (DNAT), or goes back to somewhere other than
    /// where it came from (SNAT, masquerade).
    pub fn nat(&self) -> NatKind {
        let dnat = self.reply.src != self.orig.dst || self.reply.sport != self.orig.dport;
        let snat = self.reply.dst != self.orig.src || self.reply.dport != self.orig.sport;
        match (snat, dnat) {
            (false, false) => NatKind::None,
            (true, false) => NatKind::Snat,
            (false, true) => NatKind::Dnat,
            (true, true) => NatKind::Both,
        }
    }

    /// Where the connection really goes after DNAT ("198.18.0.3:80").
    pub fn nat_dst(&self) -> Option<String> {
        matches!(self.nat(), NatKind::Dnat | NatKind::Both).then(|| self.reply.src_text())
    }

    /// What the source was rewritten to by SNAT/masquerade.
    pub fn nat_src(&self) -> Option<String> {
        matches!(self.nat(), NatKind::Snat | NatKind::Both).then(|| self.reply.dst_text())
    }

    /// The connection on one line, NAT decoded:
    /// `198.18.0.1:40000 → 198.18.0.2:8080 ⇒ 198.18.0.3:80`, and for SNAT
    /// `198.18.0.1:40000 (⇒ 198.18.0.9:61000) → 198.18.0.2:80`.
    pub fn flow_text(&self) -> String {
        let mut text = self.orig.src_text();
        if let Some(src) = self.nat_src() {
            text.push_str(&format!(" (⇒ {src})"));
        }
        text.push_str(" → ");
        text.push_str(&self.orig.dst_text());
        if let Some(dst) = self.nat_dst() {
            text.push_str(" ⇒ ");
            text.push_str(&dst);
        }
        text
    }
}

pub fn proto_name(proto: u8) -> String {
    match proto {
        1 => "icmp".into(),
        2 => "igmp".into(),
        6 => "tcp".into(),
        17 => "udp".into(),
        33 => "dccp".into(),
        47 => "gre".into(),
        58 => "icmpv6".into(),
        132 => "sctp".into(),
        136 => "udplite".into(),
        other => other.to_string(),
    }
}

/// enum tcp_conntrack, named as conntrack(8) prints it.
pub fn tcp_state_name(state: u8) -> &'static str {
    match state {
        0 => "NONE",
        1 => "SYN_SENT",
        2 => "SYN_RECV",
        3 => "ESTABLISHED",
        4 => "FIN_WAIT",
        5 => "CLOSE_WAIT",
        6 => "LAST_ACK",
        7 => "TIME_WAIT",
        8 => "CLOSE",
        9 => "SYN_SENT2",
        _ => "UNKNOWN",
    }
}

/// Connection tracking in the watched namespace for one tick.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConntrackSample {
    /// Conntrack runs here and its counters were read.
    pub available: bool,
    /// Why not, or what is missing (no CAP_NET_ADMIN for the entry list…),
    /// in words for the tab and the JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: StatsSource,
    /// nf_conntrack_count of this namespace.
    pub count: Option<u64>,
    /// nf_conntrack_max.
    pub max: Option<u64>,
    /// nf_conntrack_buckets (hash table size).
    pub buckets: Option<u64>,
    /// nf_conntrack_acct: packets and bytes per entry are counted.
    pub acct: Option<bool>,
    /// Summed per-CPU statistics.
    pub stats: Option<ConntrackStats>,
    /// The entry list, only on ticks that dumped it (the tab is open or a
    /// snapshot asked): None means "not dumped this tick", not "empty".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<ConntrackEntry>>,
    /// Why the entries could not be listed, when stats could.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_error: Option<String>,
    /// CLOCK_BOOTTIME seconds of the read these counters come from, when
    /// not this tick's (the part was late: an earlier read's counters).
    /// None otherwise and in older recordings (then the sample's `mono`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_mono: Option<f64>,
}

/// The seconds between the two reads of the conntrack counters of
/// `previous` and `current`: 0 (no rate) when a late part repeats the same
/// read, the whole time since it when the next read comes.
pub fn stats_interval(previous: &super::Sample, current: &super::Sample) -> f64 {
    let read_at = |s: &super::Sample| s.conntrack.read_mono.unwrap_or(s.mono);
    read_at(current) - read_at(previous)
}

impl ConntrackSample {
    /// count / max in percent.
    pub fn usage_percent(&self) -> Option<f64> {
        let max = self.max.filter(|m| *m > 0)?;
        Some(self.count? as f64 * 100.0 / max as f64)
    }
}

/// How long a conntrack dump still names the NAT of the flows shown after
/// it, seconds: the entries are dumped at most once a second.
pub const NAT_DUMP_MAX_AGE_S: f64 = 5.0;

/// The Flows tab asks for the conntrack entries (each flow's NAT) only
/// while the table holds at most this many: a dump and its parse cost
/// about 1.3 µs of CPU per entry (docs/performance.md, a million in 1.3
/// s), so 20,000 entries once a second are under 3% of a core. The
/// Conntrack tab dumps whatever the size.
pub const NAT_DUMP_MAX_ENTRIES: u64 = 20_000;

/// The NAT'd conntrack entries of one dump by the two ways their packets
/// look on the wire: before translation (the original tuple) and after it
/// (the reply tuple reversed). A capture on `any` of a host that
/// translates sees both (the DNAT'd request on its way in, then out to the
/// real server). It holds positions in the dump, not the entries, so a
/// view can keep it for as long as it shows that dump.
#[derive(Debug, Default)]
pub struct NatIndex {
    /// Ends -> (the entry's position in the dump, the translated side).
    by_ends: HashMap<(u8, SocketAddr, SocketAddr), (u32, bool)>,
}

/// A flow's conntrack entry, and which side of the translation the flow is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowNat<'a> {
    pub entry: &'a ConntrackEntry,
    /// The flow's packets are the translated ones (after DNAT or SNAT).
    pub translated: bool,
}

impl NatIndex {
    pub fn of(entries: &[ConntrackEntry]) -> Self {
        let mut by_ends = HashMap::new();
        for (position, entry) in entries.iter().enumerate() {
            if entry.nat() == NatKind::None {
                continue;
            }
            let (Some(before), Some(after)) = (entry.orig.ends(), entry.reply.ends()) else {
                continue;
            };
            let position = u32::try_from(position).unwrap_or(u32::MAX);
            by_ends.insert((entry.proto, before.0, before.1), (position, false));
            by_ends.insert((entry.proto, after.1, after.0), (position, true));
        }
        NatIndex { by_ends }
    }

    /// The NAT of the flow `src` > `dst` of `proto` ("tcp"), either way
    /// round, in `entries` (the dump this index was built from); None when
    /// conntrack did not translate it (or it is unknown).
    pub fn of_flow<'a>(
        &self,
        entries: &'a [ConntrackEntry],
        (proto, src, dst): (&str, &str, &str),
    ) -> Option<FlowNat<'a>> {
        if self.by_ends.is_empty() {
            return None;
        }
        let number = match proto {
            "tcp" => 6,
            "udp" => 17,
            "sctp" => 132,
            "dccp" => 33,
            "udplite" => 136,
            _ => return None,
        };
        let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
        let src = canonical(src.parse().ok()?);
        let dst = canonical(dst.parse().ok()?);
        let found = self.by_ends.get(&(number, src, dst));
        let (position, translated) = *found.or_else(|| self.by_ends.get(&(number, dst, src)))?;
        let entry = entries.get(position as usize)?;
        Some(FlowNat { entry, translated })
    }
}

impl FlowNat<'_> {
    /// The other side of the translation, for a table cell: "dnat ⇒
    /// 198.18.1.2:8080" on the flow before DNAT (where it really goes),
    /// "dnat ⇐ 198.18.0.2:80" on the flow after it (what the client
    /// asked for); for SNAT the source it became or came from.
    pub fn cell(&self) -> String {
        let e = self.entry;
        let dnat = matches!(e.nat(), NatKind::Dnat | NatKind::Both);
        let kind = e.nat().label().unwrap_or_default();
        match (dnat, self.translated) {
            (true, false) => format!("{kind} ⇒ {}", e.reply.src_text()),
            (true, true) => format!("{kind} ⇐ {}", e.orig.dst_text()),
            (false, false) => format!("{kind} ⇒ {}", e.reply.dst_text()),
            (false, true) => format!("{kind} ⇐ {}", e.orig.src_text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(src: &str, sport: u16, dst: &str, dport: u16) -> Tuple {
        Tuple {
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            sport: Some(sport),
            dport: Some(dport),
        }
    }

    fn entry(orig: Tuple, reply: Tuple) -> ConntrackEntry {
        ConntrackEntry {
            proto: 6,
            tcp_state: Some(3),
            orig,
            reply,
            status: 0,
            timeout: 100,
            mark: 0,
            zone: 0,
            packets: None,
            bytes: None,
        }
    }

    #[test]
    fn plain_connection_has_no_nat() {
        let e = entry(
            tuple("198.18.0.1", 40000, "198.18.0.2", 80),
            tuple("198.18.0.2", 80, "198.18.0.1", 40000),
        );
        assert_eq!(e.nat(), NatKind::None);
        assert_eq!(e.flow_text(), "198.18.0.1:40000 → 198.18.0.2:80");
        assert_eq!(e.state_name(), "ESTABLISHED");
    }

    #[test]
    fn dnat_shows_the_real_destination() {
        let e = entry(
            tuple("198.18.0.1", 40000, "198.18.0.2", 8080),
            tuple("198.18.0.3", 80, "198.18.0.1", 40000),
        );
        assert_eq!(e.nat(), NatKind::Dnat);
        assert_eq!(
            e.flow_text(),
            "198.18.0.1:40000 → 198.18.0.2:8080 ⇒ 198.18.0.3:80"
        );
        assert_eq!(e.nat_dst().as_deref(), Some("198.18.0.3:80"));
        assert_eq!(e.nat_src(), None);
    }

    #[test]
    fn snat_and_both() {
        let snat = entry(
            tuple("198.18.0.1", 40000, "198.18.1.2", 80),
            tuple("198.18.1.2", 80, "198.18.1.1", 61000),
        );
        assert_eq!(snat.nat(), NatKind::Snat);
        assert_eq!(
            snat.flow_text(),
            "198.18.0.1:40000 (⇒ 198.18.1.1:61000) → 198.18.1.2:80"
        );
        let both = entry(
            tuple("198.18.0.1", 40000, "198.18.0.2", 8080),
            tuple("198.18.0.3", 80, "198.18.0.2", 40000),
        );
        assert_eq!(both.nat(), NatKind::Both);
        assert_eq!(both.nat().label(), Some("snat+dnat"));
    }

    #[test]
    fn udp_state_comes_from_status_and_v6_is_bracketed() {
        let mut e = entry(
            tuple("2001:db8::1", 5353, "2001:db8::2", 53),
            tuple("2001:db8::2", 53, "2001:db8::1", 5353),
        );
        e.proto = 17;
        e.tcp_state = None;
        assert_eq!(e.state_name(), "UNREPLIED");
        e.status = IPS_SEEN_REPLY;
        assert_eq!(e.state_name(), "REPLIED");
        e.status |= IPS_ASSURED;
        assert_eq!(e.state_name(), "ASSURED");
        assert_eq!(e.orig.src_text(), "[2001:db8::1]:5353");
        assert_eq!(e.proto_name(), "udp");
    }

    #[test]
    fn usage_needs_both_numbers() {
        let mut s = ConntrackSample {
            count: Some(50),
            max: Some(200),
            ..Default::default()
        };
        assert_eq!(s.usage_percent(), Some(25.0));
        s.max = Some(0);
        assert_eq!(s.usage_percent(), None);
    }

    #[test]
    fn a_flow_finds_its_nat_on_either_side_of_the_translation() {
        let dnat = entry(
            tuple("198.18.0.1", 40000, "198.18.0.2", 80),
            tuple("198.18.1.2", 8080, "198.18.0.1", 40000),
        );
        let snat = entry(
            tuple("198.18.1.2", 5000, "198.18.9.9", 443),
            tuple("198.18.9.9", 443, "198.18.0.2", 61000),
        );
        let plain = entry(
            tuple("198.18.0.1", 40001, "198.18.0.2", 22),
            tuple("198.18.0.2", 22, "198.18.0.1", 40001),
        );
        let entries = [dnat, snat, plain];
        let index = NatIndex::of(&entries);
        let cell = |src, dst| index.of_flow(&entries, ("tcp", src, dst)).map(|n| n.cell());
        // The request as it came in, and as it went on to the server.
        let before = cell("198.18.0.1:40000", "198.18.0.2:80");
        assert_eq!(before.as_deref(), Some("dnat ⇒ 198.18.1.2:8080"));
        let after = cell("198.18.0.1:40000", "198.18.1.2:8080");
        assert_eq!(after.as_deref(), Some("dnat ⇐ 198.18.0.2:80"));
        // Written the other way round (server first), the same entry.
        let reversed = cell("198.18.1.2:8080", "198.18.0.1:40000");
        assert_eq!(reversed, after);
        let masqueraded = cell("198.18.0.2:61000", "198.18.9.9:443");
        assert_eq!(masqueraded.as_deref(), Some("snat ⇐ 198.18.1.2:5000"));
        assert_eq!(
            cell("198.18.1.2:5000", "198.18.9.9:443").as_deref(),
            Some("snat ⇒ 198.18.0.2:61000")
        );
        assert_eq!(cell("198.18.0.1:40001", "198.18.0.2:22"), None);
        let udp = ("udp", "198.18.0.1:40000", "198.18.0.2:80");
        assert_eq!(index.of_flow(&entries, udp), None);
    }
}
