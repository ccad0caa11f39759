//! Traces one flow's packets through the nf_tables hooks, as `nft monitor
//! trace` does after `meta nftrace set 1`: a table of our own,
//! `inet netlens_trace_<pid>`, marks the flow's packets at prerouting and
//! output before every other chain (priority -350), and the kernel's
//! NFT_MSG_TRACE events (group NFNLGRP_NFTRACE) tell which rules, returns
//! and policies each marked packet met.
//!
//! Only packets our own rules marked are reported (their trace ids), so
//! nftrace set by the user's rules or by another tracer adds nothing here.
//! The table is owned by our netlink socket (NFT_TABLE_F_OWNER, Linux 5.13)
//! where the kernel allows it: it then goes away with the socket, even when
//! the process is killed, and no other process can change it. Tables of
//! dead netlens processes left by older kernels are removed at start.

use super::nftables::{attributes, be_u32, family_name, string};
use crate::collect::ctnetlink::Ctnetlink;
use crate::collect::link::interface_name;
use crate::text::escape_control;
use netlink_packet_core::{
    NLM_F_ACK, NLM_F_APPEND, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REQUEST, NetlinkHeader,
    NetlinkMessage, NetlinkPayload,
};
use netlink_packet_netfilter::nftables::{
    ChainAttribute, ChainMessage, Cmp, DataAttribute, Expressions, Hook, Immediate, InetHookNumber,
    Meta, MetaKey, NfTablesMessage, Operator, Payload, Register, RuleAttribute, RuleMessage,
    TableAttribute, TableFlags, TableMessage,
};
use netlink_packet_netfilter::none::ControlMessage;
use netlink_packet_netfilter::{NetfilterHeader, NetfilterMessage, NetfilterProtoFamily};
use netlink_sys::{Socket, SocketAddr as NetlinkAddr, protocols::NETLINK_NETFILTER};
use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The flow to trace: both directions are traced. Port 0 is any port, an
/// unspecified address (0.0.0.0, ::) any address; both ends are IPv4 or
/// both IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceFlow {
    /// IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP...
    pub proto: u8,
    pub a: SocketAddr,
    pub b: SocketAddr,
}

/// One trace event: a rule (or a chain's policy, or a return) a traced
/// packet met. Kernel strings are escaped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TraceEvent {
    /// NFTA_TRACE_ID: the same for every event of one packet.
    pub id: u32,
    /// "ip", "ip6", "inet", ...
    pub family: String,
    pub table: String,
    pub chain: String,
    pub handle: Option<u64>,
    /// "rule", "return" or "policy".
    pub kind: String,
    /// "accept", "drop", "continue", "jump CHAIN", "goto CHAIN", "return"...
    pub verdict: Option<String>,
    /// The hook of the base chain the packet was in ("input"...).
    pub hook: Option<String>,
    pub iif: Option<String>,
    pub oif: Option<String>,
    /// "198.18.0.1:40000 > 198.18.0.2:80 tcp", on the first event of each
    /// base chain the packet went through (the kernel sends the headers once).
    pub packet: Option<String>,
}

/// A running trace; dropping it deletes its table.
pub struct Tracer {
    /// Sends the batches and owns the table.
    control: Socket,
    sequence: u32,
    /// Receives the trace events (non-blocking).
    trace: Socket,
    /// For the chain dumps that tell a chain's hook.
    dumps: Ctnetlink,
    table: String,
    buffer: Vec<u8>,
    /// The trace ids our rules marked, with the hook the packet was last
    /// seen at.
    packets: HashMap<u32, Option<&'static str>>,
    /// (family, table, chain) → the base chain's hook number.
    hooks: HashMap<(u8, String, String), Option<u32>>,
}

const TABLE_PREFIX: &str = "netlens_trace_";
const PRIORITY: i32 = -350;
/// Events handled per poll, trace ids and chains remembered: bounds.
const MAX_EVENTS: usize = 10_000;
const MAX_PACKETS: usize = 4096;
const MAX_CHAINS: usize = 1024;

const NLMSG_ERROR: u16 = 2;
const HEADER_LEN: usize = 16;
const NFGENMSG_LEN: usize = 4;
const NFNL_SUBSYS_NFTABLES: u16 = 10;
const NFNLGRP_NFTRACE: u32 = 9;
/// enum nf_tables_msg_types
const NFT_MSG_GETTABLE: u8 = 1;
const NFT_MSG_GETCHAIN: u8 = 4;
const NFT_MSG_TRACE: u8 = 17;
/// NFPROTO_*
const NFPROTO_INET: u8 = 1;
const NFPROTO_IPV4: u8 = 2;
const NFPROTO_ARP: u8 = 3;
const NFPROTO_NETDEV: u8 = 5;
const NFPROTO_IPV6: u8 = 10;
/// Attributes (nf_tables.h) read from replies and events.
const NFTA_TABLE_NAME: u16 = 1;
const NFTA_CHAIN_TABLE: u16 = 1;
const NFTA_CHAIN_NAME: u16 = 3;
const NFTA_CHAIN_HOOK: u16 = 4;
const NFTA_HOOK_HOOKNUM: u16 = 1;
const NFTA_VERDICT_CODE: u16 = 1;
const NFTA_VERDICT_CHAIN: u16 = 2;
const NFTA_TRACE_TABLE: u16 = 1;
const NFTA_TRACE_CHAIN: u16 = 2;
const NFTA_TRACE_RULE_HANDLE: u16 = 3;
const NFTA_TRACE_TYPE: u16 = 4;
const NFTA_TRACE_VERDICT: u16 = 5;
const NFTA_TRACE_ID: u16 = 6;
const NFTA_TRACE_NETWORK_HEADER: u16 = 8;
const NFTA_TRACE_TRANSPORT_HEADER: u16 = 9;
const NFTA_TRACE_IIF: u16 = 10;
const NFTA_TRACE_OIF: u16 = 12;
const NFTA_TRACE_POLICY: u16 = 16;
const NFT_TRACETYPE_POLICY: u32 = 1;
const NFT_TRACETYPE_RETURN: u32 = 2;
const NFT_TRACETYPE_RULE: u32 = 3;
/// enum nft_payload_bases
const NETWORK_HEADER: u32 = 1;
const TRANSPORT_HEADER: u32 = 2;
const NF_ACCEPT: u32 = 1;

impl Tracer {
    /// In the calling thread's network namespace: removes the tables of
    /// dead netlens processes, adds `inet netlens_trace_<pid>` marking the
    /// flow's packets, and subscribes to the trace events. Fails (EEXIST,
    /// or EPERM for an owned table) while another Tracer of this process
    /// runs in the namespace.
    pub fn start(flow: &TraceFlow) -> io::Result<Tracer> {
        if flow.a.is_ipv4() != flow.b.is_ipv4() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "both ends of a traced flow must be IPv4, or both IPv6",
            ));
        }
        let mut dumps = Ctnetlink::new()?;
        let mut control = Socket::new(NETLINK_NETFILTER)?;
        control.bind_auto()?;
        control.connect(&NetlinkAddr::new(0, 0))?;
        // Subscribed before the table exists: no marked packet is missed.
        let mut trace = Socket::new(NETLINK_NETFILTER)?;
        trace.bind_auto()?;
        trace.add_membership(NFNLGRP_NFTRACE)?;
        trace.set_non_blocking(true)?;
        // A bigger queue loses fewer events between polls; the default
        // still works if the limit refuses it.
        let _ = trace.set_rx_buf_sz::<libc::c_int>(1 << 20);

        let mut sequence = 0;
        remove_stale_tables(&mut dumps, &control, &mut sequence);
        let table = format!("{TABLE_PREFIX}{}", std::process::id());
        let requests = |flags| {
            let mut requests = vec![new_table(&table, flags)];
            for (chain, hook) in [
                ("prerouting", InetHookNumber::PreRouting),
                ("output", InetHookNumber::LocalOut),
            ] {
                requests.push(new_chain(&table, chain, hook));
                requests.push(new_rule(&table, chain, mark(flow.proto, flow.a, flow.b)));
                requests.push(new_rule(&table, chain, mark(flow.proto, flow.b, flow.a)));
            }
            requests
        };
        match send_batch(&control, &mut sequence, requests(TableFlags::Owner)) {
            // Kernels before 5.13 refuse the owner flag.
            Err(error) if matches!(error.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EINVAL)) => {
                send_batch(&control, &mut sequence, requests(TableFlags::empty()))?;
            }
            result => result?,
        }
        Ok(Tracer {
            control,
            sequence,
            trace,
            dumps,
            table,
            buffer: vec![0; 64 * 1024],
            packets: HashMap::new(),
            hooks: HashMap::new(),
        })
    }

    /// The name of the tracer's table (family inet).
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The events received since the last call (at most 10,000; the rest
    /// wait for the next call); never blocks. Interface names are looked
    /// up in the calling thread's namespace: call it in the tracer's.
    pub fn poll(&mut self) -> io::Result<Vec<TraceEvent>> {
        let mut events = Vec::new();
        let mut names = HashMap::new();
        let mut budget = MAX_EVENTS;
        while budget > 0 {
            let size = match self
                .trace
                .recv(&mut &mut self.buffer[..], libc::MSG_DONTWAIT)
            {
                Ok(size) => size.min(self.buffer.len()),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                // The queue overflowed and events were lost: read on.
                Err(error) if error.raw_os_error() == Some(libc::ENOBUFS) => {
                    budget -= 1;
                    continue;
                }
                Err(error) => return Err(error),
            };
            let datagram = self.buffer[..size].to_vec();
            for (kind, _, payload) in messages(&datagram) {
                if kind != (NFNL_SUBSYS_NFTABLES << 8) | u16::from(NFT_MSG_TRACE) {
                    continue;
                }
                budget = budget.saturating_sub(1);
                if let Some(event) = decode(payload).and_then(|t| self.event(t, &mut names)) {
                    events.push(event);
                }
            }
        }
        Ok(events)
    }

    /// The event of a decoded trace message, or None for one of our own
    /// table or of a packet our rules did not mark.
    fn event(&mut self, trace: Trace, names: &mut HashMap<u32, String>) -> Option<TraceEvent> {
        let own = trace.family == NFPROTO_INET && trace.table == self.table;
        // Our rules match only the flow: a rule event of our table is a
        // packet of the flow (a policy one may be a packet marked before).
        if own && trace.kind == NFT_TRACETYPE_RULE && !self.packets.contains_key(&trace.id) {
            if self.packets.len() >= MAX_PACKETS {
                self.packets.clear();
            }
            self.packets.insert(trace.id, None);
        }
        if !self.packets.contains_key(&trace.id) {
            return None;
        }
        // A regular chain's events happen at the hook of the base chain
        // the packet was last in.
        let base = self.base_hook(trace.family, &trace.table, &trace.chain);
        let hook = self.packets.get_mut(&trace.id)?;
        if base.is_some() {
            *hook = base;
        }
        let hook = *hook;
        if own {
            return None;
        }
        let mut name = |index: u32| {
            names
                .entry(index)
                .or_insert_with(|| match interface_name(index) {
                    Some(name) => escape_control(&name).into_owned(),
                    None => format!("if{index}"),
                })
                .clone()
        };
        Some(TraceEvent {
            id: trace.id,
            family: family_name(trace.family).to_string(),
            table: escape_control(&trace.table).into_owned(),
            chain: escape_control(&trace.chain).into_owned(),
            handle: trace.handle,
            kind: match trace.kind {
                NFT_TRACETYPE_RULE => "rule".to_string(),
                NFT_TRACETYPE_RETURN => "return".to_string(),
                NFT_TRACETYPE_POLICY => "policy".to_string(),
                other => format!("type {other}"),
            },
            verdict: trace.verdict,
            hook: hook.map(str::to_string),
            iif: trace.iif.map(&mut name),
            oif: trace.oif.map(&mut name),
            packet: trace.packet,
        })
    }

    /// The hook of a base chain, None for a regular one. The table's
    /// chains are dumped once (the kernel answers at once) and remembered.
    fn base_hook(&mut self, family: u8, table: &str, chain: &str) -> Option<&'static str> {
        let key = (family, table.to_string(), chain.to_string());
        if !self.hooks.contains_key(&key) {
            if self.hooks.len() >= MAX_CHAINS {
                self.hooks.clear();
            }
            let mut chains = Vec::new();
            let filter = [(NFTA_CHAIN_TABLE, format!("{table}\0").into_bytes())];
            // A failed dump leaves the hook unknown, not the poll failed.
            let _ = self
                .dumps
                .nft_dump(family, NFT_MSG_GETCHAIN, &filter, |_, payload| {
                    chains.extend(decode_chain(payload));
                });
            for (chain_table, name, hooknum) in chains {
                if chain_table == table {
                    self.hooks.insert((family, chain_table, name), hooknum);
                }
            }
            self.hooks.entry(key.clone()).or_insert(None);
        }
        hook_name(family, self.hooks.get(&key).copied().flatten()?)
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        // Best effort: an owned table also goes when the socket closes.
        let delete = delete_table(&self.table);
        let _ = send_batch(&self.control, &mut self.sequence, vec![delete]);
    }
}

/// Deletes the `netlens_trace_<pid>` tables whose process is gone.
fn remove_stale_tables(dumps: &mut Ctnetlink, control: &Socket, sequence: &mut u32) {
    let mut stale = Vec::new();
    let _ = dumps.nft_dump(NFPROTO_INET, NFT_MSG_GETTABLE, &[], |_, payload| {
        for (kind, value) in attributes(payload.get(NFGENMSG_LEN..).unwrap_or_default()) {
            if kind == NFTA_TABLE_NAME && is_stale(&string(value)) {
                stale.push(string(value));
            }
        }
    });
    for table in stale {
        let _ = send_batch(control, sequence, vec![delete_table(&table)]);
    }
}

fn is_stale(table: &str) -> bool {
    let Some(pid) = table.strip_prefix(TABLE_PREFIX) else {
        return false;
    };
    !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && !std::path::Path::new("/proc").join(pid).exists()
}

/// One request of a batch: the message and its netlink flags.
type Request = (NetfilterMessage, u16);

/// Sends `requests` as one nf_tables batch (all or nothing) and waits for
/// each one's ACK; the first error comes back as its errno.
fn send_batch(socket: &Socket, sequence: &mut u32, requests: Vec<Request>) -> io::Result<()> {
    let boundary = |message: ControlMessage| {
        let header = NetfilterHeader::new(NetfilterProtoFamily::Unspec, 0, NFNL_SUBSYS_NFTABLES);
        (NetfilterMessage::new(header, message), 0)
    };
    let count = requests.len();
    let mut out = Vec::new();
    let mut pending = Vec::new();
    let all = std::iter::once(boundary(ControlMessage::BatchBegin))
        .chain(requests)
        .chain([boundary(ControlMessage::BatchEnd)]);
    for (index, (message, flags)) in all.enumerate() {
        *sequence = sequence.wrapping_add(1);
        if (1..=count).contains(&index) {
            pending.push(*sequence);
        }
        out.extend(serialize(message, flags, *sequence));
    }
    socket.send(&out, 0)?;
    let mut buffer = vec![0; 16 * 1024];
    while !pending.is_empty() {
        let size = match socket.recv(&mut &mut buffer[..], libc::MSG_DONTWAIT) {
            Ok(size) => size.min(buffer.len()),
            // The kernel answers a batch while it is sent: what is not
            // there yet will not come.
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                return Err(io::Error::other("nf_tables did not acknowledge the batch"));
            }
            Err(error) => return Err(error),
        };
        for (kind, reply_sequence, payload) in messages(&buffer[..size]) {
            if kind != NLMSG_ERROR || !pending.contains(&reply_sequence) {
                continue;
            }
            let code = payload
                .get(..4)
                .map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
            if code < 0 {
                return Err(io::Error::from_raw_os_error(-code));
            }
            pending.retain(|s| *s != reply_sequence);
        }
    }
    Ok(())
}

fn serialize(message: NetfilterMessage, flags: u16, sequence: u32) -> Vec<u8> {
    let mut packet = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(message));
    packet.header.flags = NLM_F_REQUEST | flags;
    packet.header.sequence_number = sequence;
    packet.finalize();
    let mut out = vec![0; packet.buffer_len()];
    packet.serialize(&mut out);
    out
}

/// An nf_tables request of family inet, acknowledged.
fn request(message: NfTablesMessage, flags: u16) -> Request {
    let header = NetfilterHeader::new(NetfilterProtoFamily::Inet, 0, 0);
    (NetfilterMessage::new(header, message), flags | NLM_F_ACK)
}

fn new_table(table: &str, flags: TableFlags) -> Request {
    let attributes = vec![
        TableAttribute::Name(table.into()),
        TableAttribute::Flags(flags),
    ];
    let message = NfTablesMessage::NewTable(TableMessage { attributes });
    request(message, NLM_F_CREATE | NLM_F_EXCL)
}

fn delete_table(table: &str) -> Request {
    let attributes = vec![TableAttribute::Name(table.into())];
    request(NfTablesMessage::DeleteTable(TableMessage { attributes }), 0)
}

fn new_chain(table: &str, chain: &str, hook: InetHookNumber) -> Request {
    let attributes = vec![
        ChainAttribute::Table(table.into()),
        ChainAttribute::Name(chain.into()),
        ChainAttribute::Type("filter".into()),
        ChainAttribute::Policy(NF_ACCEPT),
        ChainAttribute::Hook(vec![
            Hook::Number(hook.into()),
            Hook::Priority(PRIORITY as u32),
        ]),
    ];
    request(
        NfTablesMessage::NewChain(ChainMessage { attributes }),
        NLM_F_CREATE,
    )
}

fn new_rule(table: &str, chain: &str, expressions: Vec<Expressions>) -> Request {
    let attributes = vec![
        RuleAttribute::Table(table.into()),
        RuleAttribute::Chain(chain.into()),
        RuleAttribute::Expressions(expressions.into_iter().map(Into::into).collect()),
    ];
    let message = NfTablesMessage::NewRule(RuleMessage { attributes });
    request(message, NLM_F_CREATE | NLM_F_APPEND)
}

/// `meta l4proto P meta nfproto F [ip|ip6 saddr S] [daddr D] [th sport]
/// [th dport] meta nftrace set 1`, from `src` to `dst`.
fn mark(proto: u8, src: SocketAddr, dst: SocketAddr) -> Vec<Expressions> {
    let (nfproto, src_offset, dst_offset) = match src {
        SocketAddr::V4(_) => (NFPROTO_IPV4, 12, 16),
        SocketAddr::V6(_) => (NFPROTO_IPV6, 8, 24),
    };
    let mut expressions = vec![
        meta_load(MetaKey::L4Proto),
        cmp_eq(vec![proto]),
        meta_load(MetaKey::Nfproto),
        cmp_eq(vec![nfproto]),
    ];
    for (ip, offset) in [(src.ip(), src_offset), (dst.ip(), dst_offset)] {
        let bytes = match ip {
            _ if ip.is_unspecified() => continue,
            IpAddr::V4(ip) => ip.octets().to_vec(),
            IpAddr::V6(ip) => ip.octets().to_vec(),
        };
        expressions.push(payload_load(NETWORK_HEADER, offset, bytes.len() as u32));
        expressions.push(cmp_eq(bytes));
    }
    for (port, offset) in [(src.port(), 0), (dst.port(), 2)] {
        if port != 0 {
            expressions.push(payload_load(TRANSPORT_HEADER, offset, 2));
            expressions.push(cmp_eq(port.to_be_bytes().to_vec()));
        }
    }
    // meta nftrace set 1: an immediate into a register, then set.
    expressions.push(Expressions::Immediate(vec![
        Immediate::DestinationRegister(Register::Reg1),
        Immediate::Data(DataAttribute::Value(vec![1])),
    ]));
    expressions.push(Expressions::Meta(vec![
        Meta::Key(MetaKey::NftraceBit),
        Meta::SourceRegister(Register::Reg1),
    ]));
    expressions
}

fn meta_load(key: MetaKey) -> Expressions {
    Expressions::Meta(vec![
        Meta::Key(key),
        Meta::DestinationRegister(Register::Reg1),
    ])
}

fn payload_load(base: u32, offset: u32, length: u32) -> Expressions {
    Expressions::Payload(vec![
        Payload::DestinationRegister(Register::Reg1),
        Payload::Base(base),
        Payload::Offset(offset),
        Payload::Len(length),
    ])
}

fn cmp_eq(value: Vec<u8>) -> Expressions {
    Expressions::Cmp(vec![
        Cmp::SourceRegister(Register::Reg1),
        Cmp::Op(Operator::Equal),
        Cmp::Data(DataAttribute::Value(value)),
    ])
}

/// The (type, sequence, payload) of each netlink message in a datagram,
/// up to the first malformed one.
fn messages(datagram: &[u8]) -> impl Iterator<Item = (u16, u32, &[u8])> {
    let mut rest = datagram;
    std::iter::from_fn(move || {
        let length = u32::from_ne_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        let message = rest.get(..length).filter(|_| length >= HEADER_LEN)?;
        let kind = u16::from_ne_bytes(message.get(4..6)?.try_into().ok()?);
        let sequence = u32::from_ne_bytes(message.get(8..12)?.try_into().ok()?);
        rest = rest.get(length.next_multiple_of(4)..).unwrap_or_default();
        Some((kind, sequence, message.get(HEADER_LEN..)?))
    })
}

fn be_u16(value: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes(value.get(..2)?.try_into().ok()?))
}

/// One NFT_MSG_TRACE message; table and chain raw, the rest ready.
struct Trace {
    family: u8,
    table: String,
    chain: String,
    id: u32,
    handle: Option<u64>,
    kind: u32,
    verdict: Option<String>,
    iif: Option<u32>,
    oif: Option<u32>,
    packet: Option<String>,
}

/// Decodes an NFT_MSG_TRACE payload (nfgenmsg and attributes); None
/// without table, chain or id.
fn decode(payload: &[u8]) -> Option<Trace> {
    let family = *payload.first()?;
    let (mut table, mut chain, mut id, mut handle, mut kind) = (None, None, None, None, 0);
    let (mut verdict, mut policy, mut iif, mut oif) = (None, None, None, None);
    let (mut network, mut transport): (&[u8], &[u8]) = (&[], &[]);
    for (attribute, value) in attributes(payload.get(NFGENMSG_LEN..)?) {
        match attribute {
            NFTA_TRACE_TABLE => table = Some(string(value)),
            NFTA_TRACE_CHAIN => chain = Some(string(value)),
            NFTA_TRACE_RULE_HANDLE => {
                handle = value
                    .get(..8)
                    .and_then(|b| Some(u64::from_be_bytes(b.try_into().ok()?)));
            }
            NFTA_TRACE_TYPE => kind = be_u32(value).unwrap_or(0),
            NFTA_TRACE_VERDICT => verdict = decode_verdict(value),
            NFTA_TRACE_ID => id = be_u32(value),
            NFTA_TRACE_NETWORK_HEADER => network = value,
            NFTA_TRACE_TRANSPORT_HEADER => transport = value,
            NFTA_TRACE_IIF => iif = be_u32(value),
            NFTA_TRACE_OIF => oif = be_u32(value),
            NFTA_TRACE_POLICY => policy = be_u32(value),
            _ => {}
        }
    }
    Some(Trace {
        family,
        table: table?,
        chain: chain?,
        id: id?,
        handle,
        kind,
        verdict: verdict.or_else(|| Some(verdict_name(policy? as i32, None))),
        iif,
        oif,
        packet: summary(network, transport),
    })
}

fn decode_verdict(nested: &[u8]) -> Option<String> {
    let (mut code, mut chain) = (None, None);
    for (attribute, value) in attributes(nested) {
        match attribute {
            NFTA_VERDICT_CODE => code = be_u32(value).map(|c| c as i32),
            NFTA_VERDICT_CHAIN => chain = Some(escape_control(&string(value)).into_owned()),
            _ => {}
        }
    }
    Some(verdict_name(code?, chain.as_deref()))
}

/// nft's words for a verdict code (enum nft_verdicts, then NF_* whose low
/// byte is the verdict, the rest an errno or a queue number).
fn verdict_name(code: i32, chain: Option<&str>) -> String {
    let word = match code {
        -5..=-1 => ["return", "goto", "jump", "break", "continue"][(code + 5) as usize],
        0.. => match ["drop", "accept", "stolen", "queue", "repeat", "stop"]
            .get((code & 0xff) as usize)
        {
            Some(word) => word,
            None => return format!("verdict {code}"),
        },
        _ => return format!("verdict {code}"),
    };
    match (code, chain) {
        (-4 | -3, Some(chain)) => format!("{word} {chain}"),
        _ => word.to_string(),
    }
}

/// "198.18.0.1:40000 > 198.18.0.2:80 tcp" from the headers the kernel sent.
fn summary(network: &[u8], transport: &[u8]) -> Option<String> {
    let (src, dst, proto): (IpAddr, IpAddr, u8) = match network.first()? >> 4 {
        4 => (
            Ipv4Addr::from(<[u8; 4]>::try_from(network.get(12..16)?).ok()?).into(),
            Ipv4Addr::from(<[u8; 4]>::try_from(network.get(16..20)?).ok()?).into(),
            *network.get(9)?,
        ),
        6 => (
            Ipv6Addr::from(<[u8; 16]>::try_from(network.get(8..24)?).ok()?).into(),
            Ipv6Addr::from(<[u8; 16]>::try_from(network.get(24..40)?).ok()?).into(),
            *network.get(6)?,
        ),
        _ => return None,
    };
    let name = match proto {
        1 => "icmp".into(),
        6 => "tcp".into(),
        17 => "udp".into(),
        58 => "icmpv6".into(),
        132 => "sctp".into(),
        136 => "udplite".into(),
        other => format!("proto {other}"),
    };
    let ports = match proto {
        6 | 17 | 132 | 136 => be_u16(transport).zip(transport.get(2..).and_then(be_u16)),
        _ => None,
    };
    Some(match ports {
        Some((sport, dport)) => format!(
            "{} > {} {name}",
            SocketAddr::new(src, sport),
            SocketAddr::new(dst, dport)
        ),
        None => format!("{src} > {dst} {name}"),
    })
}

/// (table, chain, hook number if a base chain) of a NEWCHAIN dump reply.
fn decode_chain(payload: &[u8]) -> Option<(String, String, Option<u32>)> {
    let (mut table, mut chain, mut hook) = (None, None, None);
    for (attribute, value) in attributes(payload.get(NFGENMSG_LEN..)?) {
        match attribute {
            NFTA_CHAIN_TABLE => table = Some(string(value)),
            NFTA_CHAIN_NAME => chain = Some(string(value)),
            NFTA_CHAIN_HOOK => {
                hook = attributes(value)
                    .find(|(kind, _)| *kind == NFTA_HOOK_HOOKNUM)
                    .and_then(|(_, value)| be_u32(value));
            }
            _ => {}
        }
    }
    Some((table?, chain?, hook))
}

fn hook_name(family: u8, hook: u32) -> Option<&'static str> {
    let names: &[&'static str] = match family {
        NFPROTO_ARP => &["input", "output", "forward"],
        NFPROTO_NETDEV => &["ingress", "egress"],
        // NF_INET_* (the bridge family numbers its hooks alike).
        _ => &[
            "prerouting",
            "input",
            "forward",
            "output",
            "postrouting",
            "ingress",
        ],
    };
    names.get(usize::try_from(hook).ok()?).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_the_flow_in_either_family() {
        let a: SocketAddr = "198.18.0.1:40000".parse().unwrap();
        let b: SocketAddr = "198.18.0.2:7001".parse().unwrap();
        let nftrace = mark(6, a, b).split_off(12);
        let set = "[Immediate([DestinationRegister(Reg1), Data(Value([1]))]), \
            Meta([Key(NftraceBit), SourceRegister(Reg1)])]";
        assert_eq!(format!("{nftrace:?}"), set);
        let mut expected = vec![
            meta_load(MetaKey::L4Proto),
            cmp_eq(vec![6]),
            meta_load(MetaKey::Nfproto),
            cmp_eq(vec![NFPROTO_IPV4]),
            payload_load(NETWORK_HEADER, 12, 4),
            cmp_eq(vec![198, 18, 0, 1]),
            payload_load(NETWORK_HEADER, 16, 4),
            cmp_eq(vec![198, 18, 0, 2]),
            payload_load(TRANSPORT_HEADER, 0, 2),
            cmp_eq(40000u16.to_be_bytes().to_vec()),
            payload_load(TRANSPORT_HEADER, 2, 2),
            cmp_eq(7001u16.to_be_bytes().to_vec()),
        ];
        expected.extend(nftrace.clone());
        assert_eq!(mark(6, a, b), expected);

        // IPv6, any source port, any destination address.
        let a: SocketAddr = "[2001:db8::1]:0".parse().unwrap();
        let b: SocketAddr = "[::]:53".parse().unwrap();
        let mut expected = vec![
            meta_load(MetaKey::L4Proto),
            cmp_eq(vec![17]),
            meta_load(MetaKey::Nfproto),
            cmp_eq(vec![NFPROTO_IPV6]),
            payload_load(NETWORK_HEADER, 8, 16),
            cmp_eq(
                Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)
                    .octets()
                    .to_vec(),
            ),
            payload_load(TRANSPORT_HEADER, 2, 2),
            cmp_eq(vec![0, 53]),
        ];
        expected.extend(nftrace);
        assert_eq!(mark(17, a, b), expected);
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn chains_match_what_nft_sends() {
        // From `nft --debug=mnl` (1.0.6): add chain inet t p
        // { type filter hook prerouting priority -350; policy accept; }.
        let (message, flags) = new_chain("t", "p", InetHookNumber::PreRouting);
        let bytes = serialize(message, flags, 1);
        let mut expected = vec![
            1, 0, 0, 0, 6, 0, 1, 0, b't', 0, 0, 0, 6, 0, 3, 0, b'p', 0, 0, 0,
        ];
        expected.extend_from_slice(&[11, 0, 7, 0, b'f', b'i', b'l', b't', b'e', b'r', 0, 0]);
        expected.extend_from_slice(&[8, 0, 5, 0, 0, 0, 0, 1, 20, 0, 4, 0x80]);
        expected.extend_from_slice(&[8, 0, 1, 0, 0, 0, 0, 0, 8, 0, 2, 0, 0xff, 0xff, 0xfe, 0xa2]);
        assert_eq!(bytes[HEADER_LEN..], expected);
        assert_eq!(
            bytes[4..6],
            [3, 10],
            "NFT_MSG_NEWCHAIN of NFNL_SUBSYS_NFTABLES"
        );
    }

    fn attr(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut out = [(4 + value.len() as u16).to_ne_bytes(), kind.to_ne_bytes()].concat();
        out.extend_from_slice(value);
        out.resize(out.len().next_multiple_of(4), 0);
        out
    }

    #[test]
    fn trace_messages_decode() {
        let ip = [
            0x45, 0, 0, 60, 0, 0, 0x40, 0, 64, 6, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
        ];
        let mut tcp = vec![0x9c, 0x40, 0x1b, 0x59];
        tcp.resize(20, 0);
        let verdict = [
            attr(NFTA_VERDICT_CODE, &(-3i32).to_be_bytes()),
            attr(NFTA_VERDICT_CHAIN, b"block\x1bed\0"),
        ];
        let payload = [
            vec![NFPROTO_INET, 0, 0, 0],
            attr(15, &2u32.to_be_bytes()), // NFTA_TRACE_NFPROTO
            attr(NFTA_TRACE_TYPE, &NFT_TRACETYPE_RULE.to_be_bytes()),
            attr(NFTA_TRACE_ID, &0xdead_beefu32.to_be_bytes()),
            attr(NFTA_TRACE_CHAIN, b"input\0"),
            attr(NFTA_TRACE_TABLE, b"filter\0"),
            attr(NFTA_TRACE_RULE_HANDLE, &4u64.to_be_bytes()),
            attr(NFTA_TRACE_VERDICT | 0x8000, &verdict.concat()),
            attr(NFTA_TRACE_IIF, &2u32.to_be_bytes()),
            attr(NFTA_TRACE_NETWORK_HEADER, &ip),
            attr(NFTA_TRACE_TRANSPORT_HEADER, &tcp),
        ]
        .concat();
        let trace = decode(&payload).unwrap();
        assert_eq!(
            (trace.family, trace.table.as_str(), trace.chain.as_str()),
            (1, "filter", "input")
        );
        assert_eq!(
            (trace.id, trace.handle, trace.kind),
            (0xdead_beef, Some(4), NFT_TRACETYPE_RULE)
        );
        assert_eq!(trace.verdict.as_deref(), Some("jump block\\x1bed"));
        assert_eq!((trace.iif, trace.oif), (Some(2), None));
        assert_eq!(
            trace.packet.as_deref(),
            Some("198.18.0.1:40000 > 198.18.0.2:7001 tcp")
        );

        // Truncated or garbled, a message decodes to something or nothing,
        // never a panic.
        for end in 0..payload.len() {
            let _ = decode(&payload[..end]);
            let _ = messages(&payload[..end]).count();
        }
        let mut garbled = payload.clone();
        garbled[4] = 0xff;
        assert!(
            decode(&garbled).is_none(),
            "no attribute after a bad length"
        );

        // A policy event of an IPv6 ICMP packet.
        let mut ip6 = vec![0x60, 0, 0, 0, 0, 8, 58, 64];
        ip6.extend_from_slice(
            &[Ipv6Addr::LOCALHOST.octets(), Ipv6Addr::LOCALHOST.octets()].concat(),
        );
        let payload = [
            vec![NFPROTO_IPV6, 0, 0, 0],
            attr(NFTA_TRACE_TYPE, &NFT_TRACETYPE_POLICY.to_be_bytes()),
            attr(NFTA_TRACE_ID, &1u32.to_be_bytes()),
            attr(NFTA_TRACE_CHAIN, b"output\0"),
            attr(NFTA_TRACE_TABLE, b"t\0"),
            attr(NFTA_TRACE_POLICY, &0u32.to_be_bytes()),
            attr(NFTA_TRACE_OIF, &1u32.to_be_bytes()),
            attr(NFTA_TRACE_NETWORK_HEADER, &ip6),
        ]
        .concat();
        let trace = decode(&payload).unwrap();
        assert_eq!(
            (trace.verdict.as_deref(), trace.oif),
            (Some("drop"), Some(1))
        );
        assert_eq!(trace.packet.as_deref(), Some("::1 > ::1 icmpv6"));
        assert_eq!(family_name(trace.family), "ip6");
    }

    #[test]
    fn names() {
        assert_eq!(verdict_name(1, None), "accept");
        assert_eq!(verdict_name(-4, Some("c")), "goto c");
        assert_eq!(verdict_name(-1, None), "continue");
        assert_eq!(verdict_name(-5, None), "return");
        assert_eq!(verdict_name(0x0003_0003, None), "queue");
        assert_eq!(verdict_name(-9, None), "verdict -9");
        assert_eq!(hook_name(NFPROTO_INET, 1), Some("input"));
        assert_eq!(hook_name(NFPROTO_NETDEV, 0), Some("ingress"));
        assert_eq!(hook_name(NFPROTO_ARP, 3), None);
        assert!(is_stale("netlens_trace_4000000000"), "beyond pid_max");
        for live in [
            "netlens_trace_1",
            "netlens_trace_",
            "netlens_trace_1x",
            "filter",
        ] {
            assert!(!is_stale(live), "{live}");
        }
    }
}
