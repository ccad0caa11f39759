//! The bidirectional 5-tuple flow table: packets, bytes, TCP state,
//! handshake RTT, retransmits, first/last seen; bounded memory with idle and
//! LRU eviction. Each flow keeps its last packets in a small ring for the
//! drill-down view.

mod key;
mod samples;

use key::endpoint;
pub use key::{FlowKey, proto_name};
pub use samples::{group_flows, top_flows};

use super::analysis::{Analysis, FlowFinding, Seg};
use super::decode::Summary;
use super::exchanges::Exchanges;
use super::responses::Responses;
use super::server_name;
use serde::{Deserialize, Serialize};
// foldhash: SipHash was a third of the live view's capture CPU (perf).
use foldhash::{HashMap, HashMapExt};
use std::collections::VecDeque;

/// A TCP connection's state as seen on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TcpState {
    #[default]
    None,
    SynSent,
    SynReceived,
    Established,
    FinWait,
    Closed,
    Reset,
}

impl TcpState {
    pub fn label(self) -> &'static str {
        match self {
            TcpState::None => "-",
            TcpState::SynSent => "SYN_SENT",
            TcpState::SynReceived => "SYN_RECV",
            TcpState::Established => "ESTABLISHED",
            TcpState::FinWait => "FIN_WAIT",
            TcpState::Closed => "CLOSED",
            TcpState::Reset => "RESET",
        }
    }
}

/// One packet of a flow, for the drill-down ring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketNote {
    pub t: f64,
    pub reverse: bool,
    pub len: u32,
    pub tcp_flags: u8,
    pub payload: u32,
}

/// The client's payload packets looked at for a server name, per flow.
pub const PEEK_PACKETS: u8 = 3;

/// Packets kept per flow for the drill-down.
pub const NOTES_PER_FLOW: usize = 32;

#[derive(Debug, Clone)]
pub struct Flow {
    pub key: FlowKey,
    /// Which endpoint sent the first packet seen (the "client").
    pub initiator_is_b: bool,
    pub packets: u64,
    pub bytes: u64,
    pub first_seen: f64,
    pub last_seen: f64,
    pub state: TcpState,
    syn_at: Option<f64>,
    pub rtt_ms: Option<f64>,
    pub retransmits: u64,
    /// Highest sequence end seen per direction (a→b, b→a).
    next_seq: [Option<u32>; 2],
    pub notes: VecDeque<PacketNote>,
    /// The TCP analysis (handshake, RTT, retransmits, windows, findings);
    /// None for other protocols.
    pub analysis: Option<Box<Analysis>>,
    /// The server name the client sent (TLS SNI, QUIC SNI, HTTP Host),
    /// once found; see `FlowTable::add_packet`.
    pub server_name: Option<Box<server_name::Found>>,
    /// The client's payload packets looked at for a name so far.
    peeked: u8,
    /// Its requests and their answers (TCP only).
    pub exchanges: Option<Box<Exchanges>>,
}

impl Flow {
    /// The key's two endpoints, a then b.
    pub fn sides(&self) -> [String; 2] {
        let k = &self.key;
        [
            endpoint(&k.a, k.a_port, k.v6, k.proto),
            endpoint(&k.b, k.b_port, k.v6, k.proto),
        ]
    }

    /// The analysis' findings, naming the endpoints.
    pub fn findings(&self) -> Vec<FlowFinding> {
        match &self.analysis {
            Some(a) => {
                let [x, y] = self.sides();
                a.findings([&x, &y])
            }
            None => Vec::new(),
        }
    }

    /// "src" and "dst" as the initiator saw them: "ip:port" / "[v6]:port".
    pub fn endpoints(&self) -> (String, String) {
        let k = &self.key;
        let a = endpoint(&k.a, k.a_port, k.v6, k.proto);
        let b = endpoint(&k.b, k.b_port, k.v6, k.proto);
        if self.initiator_is_b { (b, a) } else { (a, b) }
    }

    pub fn proto_name(&self) -> String {
        proto_name(self.key.proto, self.key.v6)
    }
}

/// The table. `max_flows` bounds memory; flows idle longer than
/// `idle_timeout` seconds go first, then the least recently seen.
///
/// Flows sit in a Vec with a key → slot index beside it, so the previous
/// packet's slot can be reused without hashing: packets come in bursts of
/// one flow, and the hash lookup was a third of the live capture thread's
/// CPU (perf, 200k pps).
pub struct FlowTable {
    slots: Vec<Flow>,
    index: HashMap<FlowKey, usize>,
    /// The previous packet's flow and its slot.
    last: Option<(FlowKey, usize)>,
    pub max_flows: usize,
    pub idle_timeout: f64,
    pub evicted: u64,
    pub packets: u64,
    pub bytes: u64,
    /// Non-IP packets (ARP and others): counted, not tracked as flows.
    pub other_packets: u64,
    /// SYNs answered by an RST, per refusing port and peer.
    pub refusals: super::refusals::Refusals,
    /// Response times per server (of unsampled TCP flows).
    pub responses: Responses,
    /// Packets the next `add` stands for (a sampled capture keeps one in
    /// so many): packet, byte and retransmit counts grow by this much.
    pub weight: u64,
}

impl FlowTable {
    pub fn new(max_flows: usize, idle_timeout: f64) -> Self {
        Self {
            slots: Vec::with_capacity(max_flows.min(4096)),
            index: HashMap::with_capacity(max_flows.min(4096)),
            last: None,
            max_flows: max_flows.max(1),
            idle_timeout,
            evicted: 0,
            packets: 0,
            bytes: 0,
            other_packets: 0,
            refusals: Default::default(),
            responses: Responses::new(),
            weight: 1,
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn flows(&self) -> impl Iterator<Item = &Flow> {
        self.slots.iter()
    }

    pub fn get(&self, key: &FlowKey) -> Option<&Flow> {
        self.index.get(key).map(|&i| &self.slots[i])
    }

    /// Accounts one packet seen at time `t` (seconds).
    pub fn add(&mut self, s: &Summary, t: f64) {
        self.account(s, t);
    }

    /// `add`, returning the packet's flow slot and whether it went b → a
    /// (None: not an IP flow).
    fn account(&mut self, s: &Summary, t: f64) -> Option<(usize, bool)> {
        let weight = self.weight;
        self.packets += weight;
        self.bytes += weight * u64::from(s.wire_len);
        let Some((key, reverse)) = FlowKey::of(s) else {
            self.other_packets += weight;
            return None;
        };
        let slot = match self.last {
            Some((last, slot)) if last == key => slot,
            _ => self.slot(key, reverse, t),
        };
        self.last = Some((key, slot));
        let flow = &mut self.slots[slot];
        flow.packets += weight;
        flow.bytes += weight * u64::from(s.wire_len);
        flow.last_seen = t;
        if flow.notes.len() == NOTES_PER_FLOW {
            flow.notes.pop_front();
        }
        flow.notes.push_back(PacketNote {
            t,
            reverse,
            len: s.wire_len,
            tcp_flags: s.tcp_flags,
            payload: s.payload_len,
        });
        if key.proto == 6 && s.tl.is_some() {
            // A refusal: an RST from the side the SYN went to, before any
            // SYN-ACK (the flow is still SYN_SENT).
            let refused = s.tcp_flags & 4 != 0
                && flow.state == TcpState::SynSent
                && reverse != flow.initiator_is_b;
            tcp(flow, s, reverse, t, weight);
            if let Some(analysis) = flow.analysis.as_mut() {
                analysis.add(&Seg::of(s, reverse, t));
            }
            if refused {
                let v6 = key.v6;
                let refuser = endpoint(&s.src, s.sport, v6, 6);
                let peer = endpoint(&s.dst, 0, v6, 0);
                self.refusals.add(&refuser, &peer, t);
            }
        }
        Some((slot, reverse))
    }

    /// Accounts one packet as `add` does, times its flow's exchanges, then
    /// looks for the server name in the first payloads the client sends
    /// (`data`: the captured bytes, perhaps cut short). Only `PEEK_PACKETS`
    /// payloads per flow are looked at, so a long flow costs nothing more.
    pub fn add_packet(&mut self, s: &Summary, data: &[u8], t: f64) {
        let Some((slot, reverse)) = self.account(s, t) else {
            return;
        };
        let proto = self.slots[slot].key.proto;
        let payload = s.payload(data);
        // A sampled capture misses segments: no exchange is timed then.
        if proto == 6 && s.tl.is_some() && self.weight <= 1 {
            self.time_exchange(slot, &Seg::of(s, reverse, t), payload);
        }
        if s.payload_len == 0 || !matches!(proto, 6 | 17) {
            return;
        }
        let flow = &mut self.slots[slot];
        // The cheap tests first: most packets belong to flows done peeking.
        if flow.server_name.is_some() || flow.peeked >= PEEK_PACKETS {
            return;
        }
        if reverse != flow.initiator_is_b {
            return;
        }
        flow.peeked += 1;
        if let Some(found) = server_name::find(proto, payload) {
            flow.server_name = Some(Box::new(found));
        }
    }

    /// Feeds a TCP segment to its flow's exchanges; an answered request
    /// counts for its server.
    fn time_exchange(&mut self, slot: usize, seg: &Seg, payload: &[u8]) {
        let flow = &mut self.slots[slot];
        let (Some(exchanges), Some(analysis)) = (flow.exchanges.as_mut(), flow.analysis.as_ref())
        else {
            return;
        };
        let k = &flow.key;
        // The client: the SYN's sender, else the higher (ephemeral) port.
        let client = match analysis.client {
            Some(dir) => usize::from(dir),
            None if k.a_port != k.b_port => usize::from(k.b_port > k.a_port),
            None => usize::from(flow.initiator_is_b),
        };
        let Some(x) = exchanges.add(seg, client, payload) else {
            return;
        };
        // The handshake's round trip counts once per connection.
        let rtt = (exchanges.answered == 1)
            .then(|| analysis.handshake.total_ms())
            .flatten();
        let server = if client == 0 {
            endpoint(&k.b, k.b_port, k.v6, 6)
        } else {
            endpoint(&k.a, k.a_port, k.v6, 6)
        };
        self.responses
            .add(&server, &x, analysis.handshake.at_server(), rtt);
    }

    /// The slot of `key`'s flow, made (evicting when full) if new.
    fn slot(&mut self, key: FlowKey, reverse: bool, t: f64) -> usize {
        if let Some(&slot) = self.index.get(&key) {
            return slot;
        }
        if self.slots.len() >= self.max_flows {
            self.evict(t);
        }
        self.slots.push(Flow {
            key,
            initiator_is_b: reverse,
            packets: 0,
            bytes: 0,
            first_seen: t,
            last_seen: t,
            state: TcpState::None,
            syn_at: None,
            rtt_ms: None,
            retransmits: 0,
            next_seq: [None, None],
            notes: VecDeque::with_capacity(4),
            analysis: (key.proto == 6).then(Box::default),
            server_name: None,
            peeked: 0,
            exchanges: (key.proto == 6).then(Box::default),
        });
        let slot = self.slots.len() - 1;
        self.index.insert(key, slot);
        slot
    }

    /// Removes the flows `gone` picks (in slot order); returns how many.
    fn remove_where(&mut self, mut gone: impl FnMut(&Flow) -> bool) -> usize {
        self.last = None;
        let mut removed = 0;
        let mut i = 0;
        while i < self.slots.len() {
            if !gone(&self.slots[i]) {
                i += 1;
                continue;
            }
            let flow = self.slots.swap_remove(i);
            self.index.remove(&flow.key);
            if let Some(moved) = self.slots.get(i)
                && let Some(slot) = self.index.get_mut(&moved.key)
            {
                *slot = i;
            }
            removed += 1;
        }
        removed
    }

    fn evict(&mut self, now: f64) {
        let idle = self.idle_timeout;
        let mut removed = self.remove_where(|f| now - f.last_seen > idle);
        if self.slots.len() >= self.max_flows {
            // Least recently seen eighth goes at once, so eviction is rare.
            let mut seen: Vec<f64> = self.slots.iter().map(|f| f.last_seen).collect();
            let cut = (seen.len() / 8).max(1);
            seen.select_nth_unstable_by(cut - 1, |a, b| a.total_cmp(b));
            let threshold = seen[cut - 1];
            let mut taken = 0;
            removed += self.remove_where(|f| {
                let take = taken < cut && f.last_seen <= threshold;
                taken += usize::from(take);
                take
            });
        }
        self.evicted += removed as u64;
    }

    /// Drops flows idle for longer than the timeout; returns how many.
    pub fn expire(&mut self, now: f64) -> usize {
        let idle = self.idle_timeout;
        let gone = self.remove_where(|f| now - f.last_seen > idle);
        self.evicted += gone as u64;
        gone
    }
}

fn tcp(flow: &mut Flow, s: &Summary, reverse: bool, t: f64, weight: u64) {
    const FIN: u8 = 1;
    const SYN: u8 = 2;
    const RST: u8 = 4;
    const ACK: u8 = 16;
    let f = s.tcp_flags;
    if f & RST != 0 {
        flow.state = TcpState::Reset;
    } else if f & SYN != 0 && f & ACK == 0 {
        flow.state = TcpState::SynSent;
        flow.syn_at = Some(t);
        flow.initiator_is_b = reverse;
    } else if f & SYN != 0 {
        flow.state = TcpState::SynReceived;
    } else if f & FIN != 0 {
        flow.state = match flow.state {
            TcpState::FinWait => TcpState::Closed,
            _ => TcpState::FinWait,
        };
    } else if f & ACK != 0 {
        match flow.state {
            TcpState::SynReceived => {
                flow.state = TcpState::Established;
                if let Some(syn) = flow.syn_at.take() {
                    flow.rtt_ms = Some((t - syn) * 1000.0);
                }
            }
            TcpState::None => flow.state = TcpState::Established,
            _ => {}
        }
    }
    // Retransmit: a data segment that ends at or before what this
    // direction already sent.
    let dir = usize::from(reverse);
    let len = s.payload_len + u32::from(f & (SYN | FIN) != 0);
    if len > 0 {
        let end = s.tcp_seq.wrapping_add(len);
        match flow.next_seq[dir] {
            Some(high) if (end.wrapping_sub(high) as i32) <= 0 => flow.retransmits += weight,
            Some(high) if (end.wrapping_sub(high) as i32) > 0 => flow.next_seq[dir] = Some(end),
            _ => flow.next_seq[dir] = Some(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::capture::FlowSample;
    use crate::packet::decode::L3;

    fn tcp_summary(
        src: u8,
        sport: u16,
        dst: u8,
        dport: u16,
        flags: u8,
        seq: u32,
        payload: u32,
    ) -> Summary {
        let mut s = Summary {
            l3: L3::V4,
            proto: 6,
            sport,
            dport,
            tcp_flags: flags,
            tcp_seq: seq,
            payload_len: payload,
            wire_len: 54 + payload,
            tl: Some(34),
            ethertype: 0x0800,
            ..Default::default()
        };
        s.src[..4].copy_from_slice(&[198, 18, 0, src]);
        s.dst[..4].copy_from_slice(&[198, 18, 0, dst]);
        s
    }

    #[test]
    fn handshake_data_retransmit_reset() {
        let mut table = FlowTable::new(100, 60.0);
        table.add(&tcp_summary(2, 40000, 1, 9000, 0x02, 100, 0), 1.000);
        table.add(&tcp_summary(1, 9000, 2, 40000, 0x12, 500, 0), 1.010);
        table.add(&tcp_summary(2, 40000, 1, 9000, 0x10, 101, 0), 1.020);
        table.add(&tcp_summary(2, 40000, 1, 9000, 0x18, 101, 10), 1.030);
        table.add(&tcp_summary(2, 40000, 1, 9000, 0x18, 101, 10), 1.040);
        table.add(&tcp_summary(1, 9000, 2, 40000, 0x04, 501, 0), 1.050);
        assert_eq!(table.len(), 1);
        let flow = table.flows().next().unwrap();
        assert_eq!(flow.packets, 6);
        assert_eq!(flow.retransmits, 1);
        assert_eq!(flow.state, TcpState::Reset);
        let rtt = flow.rtt_ms.unwrap();
        assert!((rtt - 20.0).abs() < 1e-6, "{rtt}");
        let (src, dst) = flow.endpoints();
        assert_eq!(
            (src.as_str(), dst.as_str()),
            ("198.18.0.2:40000", "198.18.0.1:9000")
        );
        assert_eq!(flow.notes.len(), 6);
    }

    #[test]
    fn a_syn_answered_by_rst_is_a_refusal() {
        let mut table = FlowTable::new(100, 60.0);
        // Refused: SYN, RST|ACK back.
        table.add(&tcp_summary(1, 40000, 2, 8080, 0x02, 100, 0), 1.0);
        table.add(&tcp_summary(2, 8080, 1, 40000, 0x14, 0, 0), 1.001);
        // Accepted then reset: not a refusal; nor an RST from the client.
        table.add(&tcp_summary(1, 40001, 2, 8080, 0x02, 100, 0), 2.0);
        table.add(&tcp_summary(2, 8080, 1, 40001, 0x12, 500, 0), 2.001);
        table.add(&tcp_summary(2, 8080, 1, 40001, 0x14, 501, 0), 2.002);
        table.add(&tcp_summary(1, 40002, 2, 8080, 0x02, 100, 0), 3.0);
        table.add(&tcp_summary(1, 40002, 2, 8080, 0x04, 101, 0), 3.001);
        let refused = table.refusals.sample();
        assert_eq!(refused.len(), 1);
        assert_eq!(
            (refused[0].port.as_str(), refused[0].count),
            ("198.18.0.2:8080", 1)
        );
        assert_eq!(refused[0].peers[0].addr, "198.18.0.1");
    }

    #[test]
    fn table_stays_bounded_and_counts_evictions() {
        let mut table = FlowTable::new(64, 1e9);
        for i in 0..1000u32 {
            table.add(
                &tcp_summary(1, (i % 60000) as u16 + 1, 2, 80, 0x02, 0, 0),
                f64::from(i),
            );
        }
        assert!(table.len() <= 64);
        assert_eq!(table.evicted as usize + table.len(), 1000);
        // The newest flow survived.
        assert!(
            table
                .flows()
                .any(|f| f.key.a_port == 1000 || f.key.b_port == 1000)
        );
    }

    #[test]
    fn slots_stay_consistent_when_flows_go() {
        let mut table = FlowTable::new(1000, 10.0);
        // Ports 1..=20; the odd ones go idle.
        for port in 1..=20u16 {
            let t = if port % 2 == 1 { 0.0 } else { 15.0 };
            table.add(&tcp_summary(1, port, 2, 80, 0x18, 0, 10), t);
        }
        // The previous packet's flow goes too: its cached slot must not be
        // reused for another flow.
        table.add(&tcp_summary(1, 19, 2, 80, 0x18, 10, 10), 0.0);
        assert_eq!(table.expire(20.0), 10);
        for port in 1..=20u16 {
            let (key, _) = FlowKey::of(&tcp_summary(1, port, 2, 80, 0, 0, 0)).unwrap();
            let flow = table.get(&key);
            assert_eq!(flow.is_some(), port % 2 == 0, "port {port}");
            if let Some(flow) = flow {
                assert_eq!(flow.key, key);
            }
        }
        table.add(&tcp_summary(1, 19, 2, 80, 0x18, 20, 10), 21.0);
        table.add(&tcp_summary(1, 4, 2, 80, 0x18, 10, 10), 21.0);
        let (key, _) = FlowKey::of(&tcp_summary(1, 4, 2, 80, 0, 0, 0)).unwrap();
        assert_eq!(table.get(&key).unwrap().packets, 2);
        let (key, _) = FlowKey::of(&tcp_summary(1, 19, 2, 80, 0, 0, 0)).unwrap();
        assert_eq!(table.get(&key).unwrap().packets, 1);
        assert_eq!(table.len(), 11);
        assert_eq!(table.flows().map(|f| f.packets).sum::<u64>(), 12);
    }

    #[test]
    fn groups_sum_every_flow_by_initiator_and_by_service() {
        let mut table = FlowTable::new(10_000, 1e9);
        for port in 1..=500u16 {
            // 198.18.0.2 opens each flow to 198.18.0.1:80.
            table.add(&tcp_summary(2, port + 1000, 1, 80, 0x02, 0, 0), 1.0);
            table.add(&tcp_summary(1, 80, 2, port + 1000, 0x12, 0, 0), 1.0);
            table.add(&tcp_summary(2, port + 1000, 1, 80, 0x18, 1, 100), 1.0);
        }
        let hosts = group_flows(table.flows(), true, 16);
        assert_eq!(hosts.len(), 1);
        assert_eq!(hosts[0].key, "198.18.0.2");
        assert_eq!(
            (hosts[0].flows, hosts[0].packets, hosts[0].bytes),
            (500, 1500, table.bytes)
        );
        let services = group_flows(table.flows(), false, 16);
        assert_eq!(services[0].key, "tcp/80");
        assert_eq!(services[0].bytes, table.bytes);
    }

    #[test]
    fn the_clients_first_payloads_name_the_flow_the_servers_do_not() {
        let request = b"GET / HTTP/1.1\r\nHost: web.test\r\n\r\n";
        let packet = |src, sport, dst, dport| {
            let mut s = tcp_summary(src, sport, dst, dport, 0x18, 1, request.len() as u32);
            s.payload_at = 54;
            let mut data = vec![0u8; 54];
            data.extend_from_slice(request);
            (s, data)
        };
        let mut table = FlowTable::new(100, 60.0);
        table.add(&tcp_summary(2, 40000, 1, 80, 0x02, 0, 0), 1.0);
        // The server's bytes (even an HTTP-looking payload) are not looked at.
        let (s, data) = packet(1, 80, 2, 40000);
        table.add_packet(&s, &data, 1.1);
        assert!(table.flows().next().unwrap().server_name.is_none());
        let (s, data) = packet(2, 40000, 1, 80);
        table.add_packet(&s, &data, 1.2);
        let sample = FlowSample::from(table.flows().next().unwrap());
        assert_eq!(sample.http_host.as_deref(), Some("web.test"));
        assert_eq!(sample.sni, None);
        // A flow whose first payloads name nothing stops being looked at.
        let mut table = FlowTable::new(100, 60.0);
        table.add(&tcp_summary(2, 40001, 1, 80, 0x02, 0, 0), 1.0);
        for i in 0..PEEK_PACKETS {
            let (s, mut data) = packet(2, 40001, 1, 80);
            data[54] = b'x';
            table.add_packet(&s, &data, 2.0 + f64::from(i));
        }
        let (s, data) = packet(2, 40001, 1, 80);
        table.add_packet(&s, &data, 9.0);
        assert!(table.flows().next().unwrap().server_name.is_none());
    }

    #[test]
    fn idle_flows_expire() {
        let mut table = FlowTable::new(64, 10.0);
        table.add(&tcp_summary(1, 1, 2, 2, 0x02, 0, 0), 0.0);
        table.add(&tcp_summary(1, 3, 2, 4, 0x02, 0, 0), 20.0);
        assert_eq!(table.expire(25.0), 1);
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn top_flows_keeps_big_and_busy_flows_bounded() {
        let mut table = FlowTable::new(10_000, 1e9);
        // 1000 flows of one 1500-byte packet, one flow of 20 tiny packets
        // (fewer bytes than any of them, more packets).
        for port in 1..=1000u16 {
            table.add(&tcp_summary(1, port, 2, 53, 0x10, 0, 1446), 1.0);
        }
        for _ in 0..20 {
            table.add(&tcp_summary(1, 5000, 2, 53, 0x10, 0, 6), 1.0);
        }
        let top = top_flows(table.flows(), 16);
        assert_eq!(top.len(), 16);
        assert!(top.iter().any(|f| f.src == "198.18.0.1:5000"));
        assert!(top.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
}
