//! How a sample is stored (format 2): the sample without its sockets as
//! MessagePack with field names, then the sockets as columns of deltas
//! against the previous sample of the same segment.
//!
//! Sockets are the bulk of a busy host's sample (10k sockets: ~1.5 MB of
//! MessagePack), and from one second to the next most of them persist with
//! a few counters moved. So each socket names the previous sample's socket
//! with the same protocol and endpoints (or is new), and each numeric field
//! is stored as its difference from that socket's, column by column: an
//! unchanged socket is a row of zeros, which zstd then reduces to almost
//! nothing. The first sample of a segment (the keyframe) has no previous
//! sample, so every socket in it is new, and a segment decodes on its own.
//!
//! ```text
//! record   = len u32 | msgpack(sample, sockets empty)[len] | sockets
//! sockets  = n | new | refs[n] | keys[new] | column[n] * FIELDS | users[n]
//!            | column[n] * LATER_FIELDS | column[n] * NETNS_FIELDS
//!            | column[n] * LIMIT_FIELDS | column[n] * PACING_FIELDS
//!            | column[n] * RECEIVE_FIELDS
//! ref      = 0 for a new socket, else zigzag(i - expected) + 1, where i is
//!            its position in the previous sample and expected is one past
//!            the previous ref (sockets listed in the same order cost 1 each)
//! key      = proto u8 | addr local | addr peer
//! addr     = 4 | ip[4] | port u16   or   6 | ip[16] | port u16 | flowinfo u32 | scope u32
//! column   = one varint per socket: zigzag(value - referenced value), or the
//!            value itself for a new socket
//! users    = 0: as the referenced socket; else count + 1, then per user
//!            len | process | pid | fd
//! ```
//! Integers are LEB128 varints unless sized; sized ones are little-endian.

use crate::model::Sample;
use crate::model::socket_table::{Socket, SocketTable};
use crate::model::sockets::{
    Owners, ProcessName, Proto, SocketKey, SocketSample, SocketUser, TcpInfoSample, TcpLimits,
};
use anyhow::{Context, Result, bail};
use std::collections::{HashMap, VecDeque};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Keeps the previous sample's sockets, the reference for the next one.
#[derive(Default)]
pub struct SampleEncoder {
    previous: SocketTable,
}

impl SampleEncoder {
    /// Encodes `sample`; `keyframe` when it starts a segment. Its sockets
    /// are taken out while the rest is serialized, and put back.
    pub fn encode(&mut self, sample: &mut Sample, keyframe: bool) -> Vec<u8> {
        if keyframe {
            self.previous = SocketTable::default();
        }
        let sockets = std::mem::take(&mut sample.sockets);
        let head = super::encode(&*sample);
        sample.sockets = sockets;
        let mut out = Vec::with_capacity(head.len() + 16 + sample.sockets.len() * 8);
        out.extend_from_slice(&(head.len() as u32).to_le_bytes());
        out.extend_from_slice(&head);
        let previous: Vec<Socket> = self.previous.iter().collect();
        let sockets: Vec<Socket> = sample.sockets.iter().collect();
        encode_sockets(&previous, &sockets, &mut out);
        drop((previous, sockets));
        self.previous.clone_from(&sample.sockets);
        out
    }
}

/// Decodes a samples record; `previous` is the sockets of the record
/// before it in its segment (empty for a keyframe, `self_contained`): a
/// delta's unchanged sockets are copied from there. The callers keep the
/// samples they decode, so no copy of the table is kept here as well.
pub fn decode(previous: &SocketTable, record: &[u8]) -> Result<Sample> {
    let mut sample = decode_head(record)?;
    let len = u32::from_le_bytes(record[..4].try_into().expect("4 bytes")) as usize;
    let mut input = Input::new(&record[4 + len..], "the socket table");
    sample.sockets = decode_sockets(previous, &mut input)?;
    Ok(sample)
}

/// Whether a samples record decodes without the records before it: every
/// socket in it is new (n = new). A segment's first record is such a
/// keyframe, and so is every `writer::SOCKET_KEY_EVERY`th (format 2.1):
/// a seek decodes from the newest one at or before the sample it wants.
/// A record that does not parse is not one (its decode reports why).
pub fn self_contained(record: &[u8]) -> bool {
    let Some(len) = record.get(..4) else {
        return false;
    };
    let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
    let Some(sockets) = record.get(4 + len..) else {
        return false;
    };
    let mut input = Input::new(sockets, "the socket table");
    matches!((input.count(), input.count()), (Ok(n), Ok(new)) if n == new)
}

/// The part of an encoded samples record that holds its head (the length
/// and the sample without its sockets): the heads stream's record, which
/// `decode_head` reads as it reads a whole one.
pub fn head_part(record: &[u8]) -> &[u8] {
    let len = u32::from_le_bytes(record[..4].try_into().expect("4 bytes")) as usize;
    &record[..4 + len]
}

/// A samples record's sample without its sockets: the head alone, which
/// does not depend on the records before it.
pub fn decode_head(record: &[u8]) -> Result<Sample> {
    let len = record
        .get(..4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
        .context("the record is too short")?;
    if len > MAX_HEAD_BYTES {
        bail!("the sample's head is over {} MiB", MAX_HEAD_BYTES >> 20);
    }
    let head = record.get(4..4 + len).context("the record is cut short")?;
    Ok(rmp_serde::from_slice(head)?)
}

/// A numeric field of a socket as a u64, and back (the value always fits:
/// it came from that field).
type Field = (fn(&Socket) -> u64, fn(&mut SocketSample, u64));

fn tcp(s: &Socket) -> TcpInfoSample {
    s.tcp.copied().unwrap_or_default()
}

fn tcp_mut(s: &mut SocketSample) -> &mut TcpInfoSample {
    s.tcp.get_or_insert_with(TcpInfoSample::default)
}

/// Declares the column groups below, each a `&[Field]` in file order,
/// and `get_all` and `set_all`, which call every column's getter or setter
/// in line: the decoder runs them for each socket, where a call through
/// each `Field` pointer cost more than the column's work.
macro_rules! columns {
    ($($(#[$doc:meta])* $group:ident = [$(($get:expr, $set:expr $(,)?)),* $(,)?];)*) => {
        $($(#[$doc])* const $group: &[Field] = &[$(($get, $set)),*];)*

        /// How many columns there are, in all the groups.
        const COLUMNS: usize = 0 $($(+ columns!(@one $get))*)*;

        /// Every column's value for `s`, in file order.
        fn get_all(s: &Socket) -> [u64; COLUMNS] {
            [$($(get_with($get, s)),*),*]
        }

        /// Sets every column of `s` from `values`, in file order (a
        /// presence column before the fields it guards).
        fn set_all(s: &mut SocketSample, values: &[u64; COLUMNS]) {
            let mut values = values.iter().copied();
            $($(set_with($set, s, values.next().unwrap_or(0));)*)*
        }
    };
    (@one $x:expr) => {
        1
    };
}

#[inline(always)]
fn get_with(get: impl Fn(&Socket) -> u64, s: &Socket) -> u64 {
    get(s)
}

#[inline(always)]
fn set_with(set: impl Fn(&mut SocketSample, u64), s: &mut SocketSample, value: u64) {
    set(s, value)
}

columns! {
/// The columns, in file order. A field added later goes at the end (and
/// bumps the minor version).
FIELDS = [
    (|s| u64::from(s.state), |s, v| s.state = v as u8),
    (|s| u64::from(s.recv_q), |s, v| s.recv_q = v as u32),
    (|s| u64::from(s.send_q), |s, v| s.send_q = v as u32),
    (|s| u64::from(s.uid), |s, v| s.uid = v as u32),
    (|s| u64::from(s.inode), |s, v| s.inode = v as u32),
    // Flags: bit 0 owner_denied, bit 1 v6only, bit 2 owner_pending
    // (recordings made before either have 0 or 1 here, so theirs read
    // as false).
    (
        |s| u64::from(s.owner_denied) | u64::from(s.v6only) << 1 | u64::from(s.owner_pending) << 2,
        |s, v| {
            s.owner_denied = v & 1 != 0;
            s.v6only = v & 2 != 0;
            s.owner_pending = v & 4 != 0;
        },
    ),
    (
        |s| s.drops.map_or(0, |d| u64::from(d) + 1),
        |s, v| s.drops = v.checked_sub(1).map(|d| d as u32),
    ),
    (
        |s| u64::from(s.queue_streak),
        |s, v| s.queue_streak = v as u32,
    ),
    // tcp_info: present, then its fields (0 when absent).
    (
        |s| u64::from(s.tcp.is_some()),
        |s, v| s.tcp = (v != 0).then(TcpInfoSample::default),
    ),
    (
        |s| u64::from(tcp(s).rtt_us),
        |s, v| set_tcp(s, v, |t| &mut t.rtt_us),
    ),
    (
        |s| u64::from(tcp(s).rttvar_us),
        |s, v| set_tcp(s, v, |t| &mut t.rttvar_us),
    ),
    (
        |s| u64::from(tcp(s).cwnd),
        |s, v| set_tcp(s, v, |t| &mut t.cwnd),
    ),
    (
        |s| u64::from(tcp(s).ssthresh),
        |s, v| set_tcp(s, v, |t| &mut t.ssthresh),
    ),
    (
        |s| u64::from(tcp(s).mss),
        |s, v| set_tcp(s, v, |t| &mut t.mss),
    ),
    (
        |s| u64::from(tcp(s).rto_us),
        |s, v| set_tcp(s, v, |t| &mut t.rto_us),
    ),
    (
        |s| u64::from(tcp(s).retrans),
        |s, v| set_tcp(s, v, |t| &mut t.retrans),
    ),
    (
        |s| u64::from(tcp(s).total_retrans),
        |s, v| set_tcp(s, v, |t| &mut t.total_retrans),
    ),
    (
        |s| tcp(s).bytes_acked,
        |s, v| {
            if let Some(t) = s.tcp.as_mut() {
                t.bytes_acked = v;
            }
        },
    ),
    (
        |s| tcp(s).bytes_received,
        |s, v| {
            if let Some(t) = s.tcp.as_mut() {
                t.bytes_received = v;
            }
        },
    ),
    (
        |s| u64::from(tcp(s).last_send_ms),
        |s, v| set_tcp(s, v, |t| &mut t.last_send_ms),
    ),
    (
        |s| u64::from(tcp(s).last_recv_ms),
        |s, v| set_tcp(s, v, |t| &mut t.last_recv_ms),
    ),
    (
        |s| u64::from(tcp(s).last_ack_ms),
        |s, v| set_tcp(s, v, |t| &mut t.last_ack_ms),
    ),
];

/// Columns added since format 2.0, after the users: a recording made
/// before them ends at the users (its new sockets read None here) and an
/// older netlens stops reading before them, so both still read each other.
LATER_FIELDS = [(
    |s| s.rcvbuf.map_or(0, |b| u64::from(b) + 1),
    |s, v| s.rcvbuf = v.checked_sub(1).map(|b| b as u32),
)];

/// The socket's namespace id (`--all-netns`), added after the later
/// columns in the same way: a recording without it ends before it and its
/// sockets read namespace 0.
NETNS_FIELDS = [(|s| u64::from(s.netns), |s, v| s.netns = v as u16)];

/// What limited a sending socket (`TcpLimits`), added after the namespace
/// in the same way: present, then its fields (0 when absent). A recording
/// without them ends before them and its sockets read None.
LIMIT_FIELDS = [
    (
        |s| u64::from(s.limits.is_some()),
        |s, v| s.limits = (v != 0).then(Box::default),
    ),
    (
        |s| limits(s).busy_us,
        |s, v| set_limit(s, v, |l, v| l.busy_us = v),
    ),
    (
        |s| limits(s).rwnd_limited_us,
        |s, v| set_limit(s, v, |l, v| l.rwnd_limited_us = v),
    ),
    (
        |s| limits(s).sndbuf_limited_us,
        |s, v| set_limit(s, v, |l, v| l.sndbuf_limited_us = v),
    ),
    (
        |s| limits(s).delivery_rate,
        |s, v| set_limit(s, v, |l, v| l.delivery_rate = v),
    ),
    (
        |s| u64::from(limits(s).app_limited),
        |s, v| set_limit(s, v, |l, v| l.app_limited = v != 0),
    ),
    (
        |s| u64::from(limits(s).min_rtt_us),
        |s, v| set_limit(s, v, |l, v| l.min_rtt_us = v as u32),
    ),
    (
        |s| u64::from(limits(s).notsent_bytes),
        |s, v| set_limit(s, v, |l, v| l.notsent_bytes = v as u32),
    ),
    (
        |s| u64::from(limits(s).snd_wnd),
        |s, v| set_limit(s, v, |l, v| l.snd_wnd = v as u32),
    ),
    (
        |s| u64::from(limits(s).reord_seen),
        |s, v| set_limit(s, v, |l, v| l.reord_seen = v as u32),
    ),
    (
        |s| u64::from(limits(s).dsack_dups),
        |s, v| set_limit(s, v, |l, v| l.dsack_dups = v as u32),
    ),
];

/// Pacing and the reordering degree (`TcpLimits`), added after the limits
/// in the same way: a recording without them ends before them and its
/// sockets read 0.
PACING_FIELDS = [
    (
        |s| limits(s).pacing_rate,
        |s, v| set_limit(s, v, |l, v| l.pacing_rate = v),
    ),
    (
        |s| limits(s).max_pacing_rate,
        |s, v| set_limit(s, v, |l, v| l.max_pacing_rate = v),
    ),
    (
        |s| u64::from(limits(s).reordering),
        |s, v| set_limit(s, v, |l, v| l.reordering = v as u32),
    ),
];

/// The receiver's side (`TcpLimits`), added after the pacing in the same
/// way: a recording without them ends before them and its sockets read 0.
RECEIVE_FIELDS = [
    (
        |s| u64::from(limits(s).rcv_rtt_us),
        |s, v| set_limit(s, v, |l, v| l.rcv_rtt_us = v as u32),
    ),
    (
        |s| u64::from(limits(s).rcv_ssthresh),
        |s, v| set_limit(s, v, |l, v| l.rcv_ssthresh = v as u32),
    ),
    (
        |s| u64::from(limits(s).rcv_space),
        |s, v| set_limit(s, v, |l, v| l.rcv_space = v as u32),
    ),
];
}

fn limits(s: &Socket) -> TcpLimits {
    s.limits.copied().unwrap_or_default()
}

/// Sets a field of the socket's limits, when it has them (the presence
/// column comes first).
fn set_limit(s: &mut SocketSample, v: u64, field: fn(&mut TcpLimits, u64)) {
    if let Some(limits) = s.limits.as_deref_mut() {
        field(limits, v);
    }
}

/// Sets a u32 field of tcp_info, when the socket has one (the presence
/// column comes first).
fn set_tcp(s: &mut SocketSample, v: u64, field: fn(&mut TcpInfoSample) -> &mut u32) {
    if s.tcp.is_some() {
        *field(tcp_mut(s)) = v as u32;
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

use super::bytes::{Input, put_varint as put};

fn put_addr(out: &mut Vec<u8>, addr: &SocketAddr) {
    match addr {
        SocketAddr::V4(a) => {
            out.push(4);
            out.extend_from_slice(&a.ip().octets());
            out.extend_from_slice(&a.port().to_le_bytes());
        }
        SocketAddr::V6(a) => {
            out.push(6);
            out.extend_from_slice(&a.ip().octets());
            out.extend_from_slice(&a.port().to_le_bytes());
            out.extend_from_slice(&a.flowinfo().to_le_bytes());
            out.extend_from_slice(&a.scope_id().to_le_bytes());
        }
    }
}

fn encode_sockets(previous: &[Socket], sockets: &[Socket], out: &mut Vec<u8>) {
    // Previous positions by key; several sockets can share one (UDP
    // sockets bound with SO_REUSEPORT), matched in order.
    let mut by_key: HashMap<SocketKey, VecDeque<usize>> = HashMap::with_capacity(previous.len());
    for (i, s) in previous.iter().enumerate() {
        by_key.entry(s.key()).or_default().push_back(i);
    }
    let refs: Vec<Option<usize>> = sockets
        .iter()
        .map(|s| by_key.get_mut(&s.key()).and_then(VecDeque::pop_front))
        .collect();
    put(out, sockets.len() as u64);
    put(out, refs.iter().filter(|r| r.is_none()).count() as u64);
    let mut expected = 0i64;
    for r in &refs {
        match r {
            Some(i) => {
                put(out, zigzag(*i as i64 - expected) + 1);
                expected = *i as i64 + 1;
            }
            None => put(out, 0),
        }
    }
    for (s, r) in sockets.iter().zip(&refs) {
        if r.is_none() {
            out.push(match s.proto {
                Proto::Tcp => 6,
                Proto::Udp => 17,
            });
            put_addr(out, &s.local);
            put_addr(out, &s.peer);
        }
    }
    put_columns(FIELDS, previous, sockets, &refs, out);
    for (s, r) in sockets.iter().zip(&refs) {
        if r.is_some_and(|i| previous[i].users == s.users) {
            put(out, 0);
            continue;
        }
        put(out, s.users.len() as u64 + 1);
        for user in s.users {
            put(out, user.process.len() as u64);
            out.extend_from_slice(user.process.as_bytes());
            put(out, u64::from(user.pid));
            put(out, u64::from(user.fd));
        }
    }
    put_columns(LATER_FIELDS, previous, sockets, &refs, out);
    put_columns(NETNS_FIELDS, previous, sockets, &refs, out);
    put_columns(LIMIT_FIELDS, previous, sockets, &refs, out);
    put_columns(PACING_FIELDS, previous, sockets, &refs, out);
    put_columns(RECEIVE_FIELDS, previous, sockets, &refs, out);
}

fn put_columns(
    fields: &[Field],
    previous: &[Socket],
    sockets: &[Socket],
    refs: &[Option<usize>],
    out: &mut Vec<u8>,
) {
    for (get, _) in fields {
        for (s, r) in sockets.iter().zip(refs) {
            let value = get(s);
            match r {
                Some(i) => put(out, zigzag(value.wrapping_sub(get(&previous[*i])) as i64)),
                None => put(out, value),
            }
        }
    }
}

/// Reads the socket addresses `put_addr` wrote; damage is an error, never
/// a panic.
impl Input<'_> {
    fn addr(&mut self) -> Result<SocketAddr> {
        let family = self.take(1)?[0];
        let u16_at = |b: &[u8]| u16::from_le_bytes([b[0], b[1]]);
        let u32_at = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        Ok(match family {
            4 => {
                let b = self.take(6)?;
                SocketAddr::V4(SocketAddrV4::new(
                    Ipv4Addr::new(b[0], b[1], b[2], b[3]),
                    u16_at(&b[4..]),
                ))
            }
            6 => {
                let b = self.take(26)?;
                let ip: [u8; 16] = b[..16].try_into().expect("16 bytes");
                SocketAddr::V6(SocketAddrV6::new(
                    Ipv6Addr::from(ip),
                    u16_at(&b[16..]),
                    u32_at(&b[18..]),
                    u32_at(&b[22..]),
                ))
            }
            other => bail!("unknown address family {other} in the socket table"),
        })
    }
}

/// No sample holds more sockets than this (the man page's RECORDING FILES
/// says so): twice the million netlens is tuned to watch. A larger count
/// is damage, refused before anything is allocated for it.
pub const MAX_SOCKETS: usize = 1 << 21;

/// Nor is a sample's head (all but its sockets: interfaces, processes,
/// conntrack entries...) stored in more than this (a busy host's is a few
/// MB); replay charges it at that size (`lazy::decoded_bytes`).
pub const MAX_HEAD_BYTES: usize = 64 << 20;

/// Nor does a sample's socket table decode to more than this in memory
/// (each socket's `SocketSample`, its users beyond the inline one, and
/// their names): the budget a crafted table is charged against.
pub const MAX_SAMPLE_BYTES: usize = 512 << 20;

/// What a socket table has cost so far, against `MAX_SAMPLE_BYTES`.
struct Budget(usize);

impl Budget {
    fn charge(&mut self, bytes: usize) -> Result<()> {
        self.0 = self.0.saturating_add(bytes);
        if self.0 > MAX_SAMPLE_BYTES {
            bail!(
                "the socket table decodes to over {} MiB",
                MAX_SAMPLE_BYTES >> 20
            );
        }
        Ok(())
    }
}

/// Decodes a socket table `encode_sockets` wrote, a delta on `previous`.
/// The columns are stored one after another; a first pass finds where
/// each starts (and checks every value and user list is whole), then each
/// socket is built in one go, reading its value from every column.
fn decode_sockets(previous: &SocketTable, input: &mut Input) -> Result<SocketTable> {
    let n = input.count()?;
    let new = input.count()?;
    if n > MAX_SOCKETS {
        bail!("the socket table claims {n} sockets, more than the {MAX_SOCKETS} a sample may hold");
    }
    // The encoder refers to each previous socket at most once, so a table
    // is as large as the sockets before it and its new ones, no larger:
    // a reference repeated (1 byte, a 216-byte copy each) is damage.
    if n > previous.len().saturating_add(new) {
        bail!("the socket table claims more sockets than it and the previous sample hold");
    }
    let mut budget = Budget(0);
    budget.charge(n.saturating_mul(size_of::<SocketSample>()))?;
    let mut referred = vec![false; previous.len()];
    let mut refs = Vec::with_capacity(n);
    let mut expected = 0i64;
    for _ in 0..n {
        let r = input.varint()?;
        if r == 0 {
            refs.push(None);
            continue;
        }
        let i = expected.saturating_add(unzigzag(r - 1));
        if i < 0 || i as usize >= previous.len() {
            bail!("a socket refers to one the previous sample does not have");
        }
        if std::mem::replace(&mut referred[i as usize], true) {
            bail!("two sockets refer to the same one of the previous sample");
        }
        refs.push(Some(i as usize));
        expected = i + 1;
    }
    drop(referred);
    if refs.iter().filter(|r| r.is_none()).count() != new {
        bail!("the socket table's count of new sockets is wrong");
    }
    let mut endpoints = Vec::with_capacity(new);
    for _ in 0..new {
        let proto = match input.take(1)?[0] {
            6 => Proto::Tcp,
            17 => Proto::Udp,
            other => bail!("unknown protocol {other} in the socket table"),
        };
        endpoints.push((proto, input.addr()?, input.addr()?));
    }
    // Where each column starts; a group a recording ends before has none
    // (its sockets keep the previous value, or read 0 when new).
    let mut columns = Vec::with_capacity(COLUMNS);
    for _ in FIELDS {
        columns.push(input.skip_varints(n)?);
    }
    let users = input.bytes;
    skip_users(input, n, &mut budget)?;
    for group in [
        LATER_FIELDS,
        NETNS_FIELDS,
        LIMIT_FIELDS,
        PACING_FIELDS,
        RECEIVE_FIELDS,
    ] {
        if input.bytes.is_empty() {
            break;
        }
        for _ in group {
            columns.push(input.skip_varints(n)?);
        }
    }
    // The limits' boxes are charged before any is made.
    let limits_present = FIELDS.len() + LATER_FIELDS.len() + NETNS_FIELDS.len();
    if let Some(column) = columns.get(limits_present) {
        let limited = count_nonzero(column, n);
        budget.charge(limited.saturating_mul(size_of::<TcpLimits>()))?;
    }
    let mut columns: [Column; COLUMNS] =
        std::array::from_fn(|k| Column(columns.get(k).copied().unwrap_or_default()));
    let mut users = Input::new(users, "the socket table");
    let mut endpoints = endpoints.into_iter();
    let mut table = SocketTable::with_capacity(n);
    let mut values = [0u64; COLUMNS];
    // Sockets of one process come together: its name is read once.
    let mut name = None;
    for r in &refs {
        let before = r.map(|i| previous.at(i));
        let (mut socket, base) = match &before {
            Some(before) => {
                budget.charge(spilled_users(before.users))?;
                let socket = bare(before.proto, before.local, before.peer);
                (socket, Some(get_all(before)))
            }
            None => {
                let (proto, local, peer) = endpoints.next().expect("one endpoint a new socket");
                (bare(proto, local, peer), None)
            }
        };
        match &base {
            Some(base) => {
                for ((value, column), base) in values.iter_mut().zip(&mut columns).zip(base) {
                    *value = base.wrapping_add(unzigzag(column.next()) as u64);
                }
            }
            None => {
                for (value, column) in values.iter_mut().zip(&mut columns) {
                    *value = column.next();
                }
            }
        }
        set_all(&mut socket, &values);
        // The owners go straight into the table (a delta's are the
        // previous socket's unless it lists new ones).
        let read = read_users(&mut users, &mut name)?;
        table.push(&socket);
        let owners = read.as_deref().or(before.map(|b| b.users));
        if let Some(owners) = owners.filter(|o| !o.is_empty()) {
            table.set_users(table.len() - 1, owners);
        }
    }
    Ok(table)
}

/// A column the first pass found whole: its values read without a check,
/// and 0 past its end (a group the recording ends before).
struct Column<'a>(&'a [u8]);

impl Column<'_> {
    #[inline(always)]
    fn next(&mut self) -> u64 {
        match self.0.split_first() {
            Some((&byte, rest)) if byte < 0x80 => {
                self.0 = rest;
                u64::from(byte)
            }
            _ => self.next_long(),
        }
    }

    #[cold]
    fn next_long(&mut self) -> u64 {
        let mut input = Input::new(self.0, "a column");
        let value = input.varint().unwrap_or(0);
        self.0 = input.bytes;
        value
    }
}

/// A socket with its protocol and addresses, every column still to set.
fn bare(proto: Proto, local: SocketAddr, peer: SocketAddr) -> SocketSample {
    SocketSample {
        proto,
        local,
        peer,
        ..SocketSample::default()
    }
}

/// How many of a column's first `n` values are not 0.
fn count_nonzero(column: &[u8], n: usize) -> usize {
    let mut input = Input::new(column, "the socket table");
    (0..n)
        .filter(|_| input.varint().is_ok_and(|v| v != 0))
        .count()
}

/// Checks the user lists of `n` sockets are whole, charging what they
/// will take, and moves past them.
fn skip_users(input: &mut Input, n: usize, budget: &mut Budget) -> Result<()> {
    for _ in 0..n {
        let count = input.varint()?;
        if count == 0 {
            continue;
        }
        let count = (count - 1) as usize;
        if count > input.bytes.len() {
            bail!("the socket table's user list is too long");
        }
        budget.charge(count.saturating_mul(size_of::<SocketUser>()))?;
        for _ in 0..count {
            let len = input.count()?;
            budget.charge(len)?;
            input.take(len)?;
            u32::try_from(input.varint()?).context("a pid out of range")?;
            u32::try_from(input.varint()?).context("an fd out of range")?;
        }
    }
    Ok(())
}

/// The next socket's user list, None when it is the previous one's (or a
/// new socket's: none).
fn read_users(input: &mut Input, last: &mut Option<ProcessName>) -> Result<Option<Owners>> {
    let count = input.varint()?;
    if count == 0 {
        return Ok(None);
    }
    let count = (count - 1) as usize;
    let mut users = Owners::with_capacity(count);
    for _ in 0..count {
        let len = input.count()?;
        let bytes = input.take(len)?;
        let process = match last {
            Some(known) if known.as_str().as_bytes() == bytes => known.clone(),
            _ => last
                .insert(String::from_utf8_lossy(bytes).into_owned().into())
                .clone(),
        };
        let pid = u32::try_from(input.varint()?).context("a pid out of range")?;
        let fd = u32::try_from(input.varint()?).context("an fd out of range")?;
        users.push(SocketUser { process, pid, fd });
    }
    Ok(Some(users))
}

/// The heap a copy of `users` takes: one user is kept inline.
fn spilled_users(users: &[SocketUser]) -> usize {
    if users.len() > 1 {
        std::mem::size_of_val(users)
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
