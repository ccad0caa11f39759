//! The sockets of one sample, packed: at a million sockets the socket table
//! is most of netlens' memory, and a sample's pipeline holds two or three
//! of them (the one shown, the one being prepared, the one the sampler
//! dumps).
//!
//! A socket is a 60-byte row: its IPv4 addresses inline (an IPv6 socket's
//! are indexes into the table's IPv6 addresses), optional numbers behind
//! flag bits, and what only some sockets have kept out of line, each in a
//! list of its own that the row indexes: tcp_info (TCP sockets), what
//! limited a sender (`TcpLimits`: active sockets) and the owners (a socket
//! with an inode). Readers get a `Socket`, a view with the fields of
//! `SocketSample` built from the row on the fly; `SocketSample` is the
//! owned form, for building a table and for serde.

use super::sockets::{
    Owners, Proto, SocketKey, SocketSample, SocketUser, TCP_CLOSE, TCP_ESTABLISHED, TCP_LISTEN,
    TcpInfoSample, TcpLimits, ss_endpoint, tcp_state_name,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, LazyLock};

/// Marks an absent index or number in a row.
const NONE: u32 = u32::MAX;

// Row::flags.
const UDP: u8 = 1;
const LOCAL_V6: u8 = 1 << 1;
const V6ONLY: u8 = 1 << 2;
const OWNER_DENIED: u8 = 1 << 3;
const OWNER_PENDING: u8 = 1 << 4;
const HAS_DROPS: u8 = 1 << 5;
const HAS_RCVBUF: u8 = 1 << 6;
const PEER_V6: u8 = 1 << 7;

/// One socket, packed (60 bytes; `SocketSample` is 224).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    /// An IPv4 address, or (flag LOCAL_V6, PEER_V6) an index into `v6`.
    local: u32,
    peer: u32,
    local_port: u16,
    peer_port: u16,
    recv_q: u32,
    send_q: u32,
    uid: u32,
    inode: u32,
    /// The first of its owners in `users`, and how many.
    users: u32,
    user_count: u32,
    /// Index into `tcp`, `limits`; NONE without.
    tcp: u32,
    limits: u32,
    drops: u32,
    rcvbuf: u32,
    queue_streak: u32,
    netns: u16,
    state: u8,
    flags: u8,
}

/// The sockets of one sample (see the module's comment). A clone shares
/// the lists (the connection log and the recorder keep the last dump's
/// this way); a change to a shared table copies them first.
#[derive(Debug, Clone, Default)]
pub struct SocketTable {
    lists: Arc<Lists>,
}

#[derive(Debug, Clone, Default)]
struct Lists {
    rows: Vec<Row>,
    v6: Vec<Ipv6Addr>,
    tcp: Vec<TcpInfoSample>,
    limits: Vec<TcpLimits>,
    users: Vec<SocketUser>,
}

/// One socket of a `SocketTable`: the fields of `SocketSample` (whose
/// comments say what each is), its lists borrowed from the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Socket<'a> {
    pub proto: Proto,
    pub state: u8,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    pub recv_q: u32,
    pub send_q: u32,
    pub uid: u32,
    pub inode: u32,
    pub users: &'a [SocketUser],
    pub owner_denied: bool,
    pub owner_pending: bool,
    pub tcp: Option<&'a TcpInfoSample>,
    pub limits: Option<&'a TcpLimits>,
    pub drops: Option<u32>,
    pub rcvbuf: Option<u32>,
    pub queue_streak: u32,
    pub v6only: bool,
    pub netns: u16,
}

/// No sockets: what a keyframe's sockets are a delta on.
pub static EMPTY: LazyLock<SocketTable> = LazyLock::new(SocketTable::default);

impl SocketTable {
    /// Room for `sockets` sockets, each with tcp_info and an owner: what
    /// is reserved and not used is address space, not memory (a large
    /// block is a mapping of its own, `memory::map_large_blocks`), where
    /// growing by doubling would touch twice the pages.
    pub fn with_capacity(sockets: usize) -> Self {
        Self {
            lists: Arc::new(Lists {
                rows: Vec::with_capacity(sockets),
                tcp: Vec::with_capacity(sockets),
                users: Vec::with_capacity(sockets),
                ..Default::default()
            }),
        }
    }

    pub fn reserve(&mut self, more: usize) {
        let lists = Arc::make_mut(&mut self.lists);
        lists.rows.reserve(more);
    }

    pub fn len(&self) -> usize {
        self.lists.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lists.rows.is_empty()
    }

    /// The socket at `index`; panics past the end, as a slice does.
    #[inline]
    pub fn at(&self, index: usize) -> Socket<'_> {
        self.view(&self.lists.rows[index])
    }

    #[inline]
    pub fn get(&self, index: usize) -> Option<Socket<'_>> {
        self.lists.rows.get(index).map(|row| self.view(row))
    }

    pub fn first(&self) -> Option<Socket<'_>> {
        self.get(0)
    }

    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            table: self,
            rows: self.lists.rows.iter(),
        }
    }

    /// Runs of consecutive sockets of one namespace (a namespace's rows
    /// are together in a sample): its id and their indexes.
    pub fn netns_runs(&self) -> impl Iterator<Item = (u16, std::ops::Range<usize>)> + '_ {
        self.lists
            .rows
            .chunk_by(|a, b| a.netns == b.netns)
            .scan(0, |start, run| {
                let range = *start..*start + run.len();
                *start = range.end;
                Some((run[0].netns, range))
            })
    }

    /// Every socket, owned: for the recording codec and tests.
    pub fn to_vec(&self) -> Vec<SocketSample> {
        self.iter().map(|s| s.to_sample()).collect()
    }

    pub fn push(&mut self, socket: impl std::borrow::Borrow<SocketSample>) {
        let lists = Arc::make_mut(&mut self.lists);
        let row = lists.pack(socket.borrow());
        lists.rows.push(row);
    }

    /// Replaces the socket at `index` by `socket`. Its out-of-line parts
    /// are rewritten in place when they fit, else appended (the old ones
    /// stay unused until the table is rebuilt): for the few sockets a
    /// sample rewrites after the dump, and for tests.
    pub fn set(&mut self, index: usize, socket: &SocketSample) {
        let lists = Arc::make_mut(&mut self.lists);
        let old = lists.rows[index];
        let mut row = lists.pack_fixed(socket);
        row.tcp = place(&mut lists.tcp, socket.tcp, old.tcp);
        row.limits = place(
            &mut lists.limits,
            socket.limits.as_deref().copied(),
            old.limits,
        );
        (row.users, row.user_count) = lists.place_users(&socket.users, &old);
        // An IPv6 address reuses its old slot rather than grow the list.
        row.local = lists.place_v6(
            socket.local,
            row.local,
            old.local,
            old.flags & LOCAL_V6 != 0,
        );
        row.peer = lists.place_v6(socket.peer, row.peer, old.peer, old.flags & PEER_V6 != 0);
        lists.rows[index] = row;
    }

    /// Changes the socket at `index` through its owned form.
    pub fn modify(&mut self, index: usize, change: impl FnOnce(&mut SocketSample)) {
        let mut socket = self.at(index).to_sample();
        change(&mut socket);
        self.set(index, &socket);
    }

    /// Changes every socket through its owned form (tests and fixtures).
    pub fn modify_all(&mut self, mut change: impl FnMut(&mut SocketSample)) {
        for index in 0..self.len() {
            self.modify(index, &mut change);
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Sets the owners of the socket at `index` (the sampler's owner pass).
    pub fn set_users(&mut self, index: usize, users: &[SocketUser]) {
        let lists = Arc::make_mut(&mut self.lists);
        let old = lists.rows[index];
        let placed = lists.place_users(users, &old);
        let row = &mut lists.rows[index];
        (row.users, row.user_count) = placed;
    }

    /// The owners of the socket with `inode` if it is at `cursor` or a few
    /// sockets with a file after (a dump lists sockets in the same order
    /// each time, a few come and go), moving `cursor` past it; None when
    /// it is not there or had no owner.
    pub fn owners_near(&self, cursor: &mut usize, inode: u32) -> Option<&[SocketUser]> {
        const AHEAD: usize = 8;
        let rows = self.lists.rows.get(*cursor..)?;
        let mut with_file = 0;
        let at = rows.iter().position(|r| {
            with_file += usize::from(r.inode != 0);
            r.inode == inode || with_file > AHEAD
        })?;
        let row = rows[at];
        if row.inode != inode {
            return None;
        }
        *cursor += at + 1;
        let users = row.users as usize;
        (row.user_count > 0).then(|| &self.lists.users[users..users + row.user_count as usize])
    }

    /// Marks the socket at `index` as without a found owner: `denied` when
    /// some process's fds could not be read, `pending` while looked for.
    pub fn set_owner_unknown(&mut self, index: usize, denied: bool, pending: bool) {
        let lists = Arc::make_mut(&mut self.lists);
        let flags = &mut lists.rows[index].flags;
        set_flag(flags, OWNER_DENIED, denied);
        set_flag(flags, OWNER_PENDING, pending);
    }

    pub fn set_netns(&mut self, index: usize, netns: u16) {
        let lists = Arc::make_mut(&mut self.lists);
        lists.rows[index].netns = netns;
    }

    /// Keeps the sockets `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(Socket<'_>) -> bool) {
        let kept: Vec<bool> = self.iter().map(&mut keep).collect();
        let mut flags = kept.iter();
        Arc::make_mut(&mut self.lists)
            .rows
            .retain(|_| *flags.next().expect("one flag a row"));
    }

    /// Appends every socket of `other`.
    pub fn append(&mut self, other: &SocketTable) {
        Arc::make_mut(&mut self.lists).rows.reserve(other.len());
        for socket in other.iter() {
            self.push(socket.to_sample());
        }
    }

    /// Gives back the memory reserved beyond what the table holds.
    pub fn shrink_to_fit(&mut self) {
        let lists = Arc::make_mut(&mut self.lists);
        lists.rows.shrink_to_fit();
        lists.v6.shrink_to_fit();
        lists.tcp.shrink_to_fit();
        lists.limits.shrink_to_fit();
        lists.users.shrink_to_fit();
    }

    /// Heap bytes the table holds (its lists' capacities).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.lists.rows.capacity() * size_of::<Row>()
            + self.lists.v6.capacity() * size_of::<Ipv6Addr>()
            + self.lists.tcp.capacity() * size_of::<TcpInfoSample>()
            + self.lists.limits.capacity() * size_of::<TcpLimits>()
            + self.lists.users.capacity() * size_of::<SocketUser>()
    }

    // Inlined into each pass, so that a pass pays only for the fields it
    // reads: left to itself the compiler called it, and building the
    // whole view was most of what the findings' passes over sockets cost.
    #[inline(always)]
    fn view(&self, row: &Row) -> Socket<'_> {
        let address = |packed: u32, port: u16, v6: u8| {
            let ip = if row.flags & v6 != 0 {
                IpAddr::V6(self.lists.v6[packed as usize])
            } else {
                IpAddr::V4(Ipv4Addr::from(packed))
            };
            SocketAddr::new(ip, port)
        };
        let present = |value: u32, flag: u8| (row.flags & flag != 0).then_some(value);
        let users = row.users as usize;
        Socket {
            proto: if row.flags & UDP != 0 {
                Proto::Udp
            } else {
                Proto::Tcp
            },
            state: row.state,
            local: address(row.local, row.local_port, LOCAL_V6),
            peer: address(row.peer, row.peer_port, PEER_V6),
            recv_q: row.recv_q,
            send_q: row.send_q,
            uid: row.uid,
            inode: row.inode,
            users: &self.lists.users[users..users + row.user_count as usize],
            owner_denied: row.flags & OWNER_DENIED != 0,
            owner_pending: row.flags & OWNER_PENDING != 0,
            tcp: (row.tcp != NONE).then(|| &self.lists.tcp[row.tcp as usize]),
            limits: (row.limits != NONE).then(|| &self.lists.limits[row.limits as usize]),
            drops: present(row.drops, HAS_DROPS),
            rcvbuf: present(row.rcvbuf, HAS_RCVBUF),
            queue_streak: row.queue_streak,
            v6only: row.flags & V6ONLY != 0,
            netns: row.netns,
        }
    }
}

impl Lists {
    fn pack(&mut self, socket: &SocketSample) -> Row {
        let mut row = self.pack_fixed(socket);
        row.local = self.place_v6(socket.local, row.local, NONE, false);
        row.peer = self.place_v6(socket.peer, row.peer, NONE, false);
        if let Some(info) = socket.tcp {
            row.tcp = push_index(&mut self.tcp, info);
        }
        if let Some(limits) = socket.limits.as_deref() {
            row.limits = push_index(&mut self.limits, *limits);
        }
        (row.users, row.user_count) = self.push_users(&socket.users);
        row
    }

    /// Where an address goes in a row: an IPv4 one inline (`packed`, from
    /// `pack_fixed`), an IPv6 one in `v6`, in the slot `old` when the row
    /// had one there (`was_v6`).
    fn place_v6(&mut self, address: SocketAddr, packed: u32, old: u32, was_v6: bool) -> u32 {
        match address.ip() {
            IpAddr::V4(_) => packed,
            IpAddr::V6(ip) if was_v6 => {
                self.v6[old as usize] = ip;
                old
            }
            IpAddr::V6(ip) => push_index(&mut self.v6, ip),
        }
    }

    /// The row's inline fields; IPv6 addresses, tcp_info, limits and
    /// owners are left for the caller to place.
    fn pack_fixed(&self, socket: &SocketSample) -> Row {
        let v4 = |address: SocketAddr| match address.ip() {
            IpAddr::V4(ip) => u32::from(ip),
            IpAddr::V6(_) => NONE,
        };
        let mut flags = 0;
        set_flag(&mut flags, UDP, socket.proto == Proto::Udp);
        set_flag(&mut flags, LOCAL_V6, socket.local.is_ipv6());
        set_flag(&mut flags, PEER_V6, socket.peer.is_ipv6());
        set_flag(&mut flags, V6ONLY, socket.v6only);
        set_flag(&mut flags, OWNER_DENIED, socket.owner_denied);
        set_flag(&mut flags, OWNER_PENDING, socket.owner_pending);
        set_flag(&mut flags, HAS_DROPS, socket.drops.is_some());
        set_flag(&mut flags, HAS_RCVBUF, socket.rcvbuf.is_some());
        Row {
            local: v4(socket.local),
            peer: v4(socket.peer),
            local_port: socket.local.port(),
            peer_port: socket.peer.port(),
            recv_q: socket.recv_q,
            send_q: socket.send_q,
            uid: socket.uid,
            inode: socket.inode,
            users: 0,
            user_count: 0,
            tcp: NONE,
            limits: NONE,
            drops: socket.drops.unwrap_or(0),
            rcvbuf: socket.rcvbuf.unwrap_or(0),
            queue_streak: socket.queue_streak,
            netns: socket.netns,
            state: socket.state,
            flags,
        }
    }

    /// Where a row's owners go: over `old`'s when as many, else appended.
    fn place_users(&mut self, users: &[SocketUser], old: &Row) -> (u32, u32) {
        if users.len() as u32 != old.user_count {
            return self.push_users(users);
        }
        let at = old.users as usize;
        self.users[at..at + users.len()].clone_from_slice(users);
        (old.users, old.user_count)
    }

    fn push_users(&mut self, users: &[SocketUser]) -> (u32, u32) {
        let at = self.users.len() as u32;
        self.users.extend_from_slice(users);
        (at, users.len() as u32)
    }
}

fn set_flag(flags: &mut u8, flag: u8, on: bool) {
    if on {
        *flags |= flag;
    } else {
        *flags &= !flag;
    }
}

/// Where an out-of-line part goes: in the row's `old` slot when it had
/// one, else appended; NONE without.
fn place<T>(list: &mut Vec<T>, value: Option<T>, old: u32) -> u32 {
    match (value, old) {
        (Some(value), NONE) => push_index(list, value),
        (Some(value), at) => {
            list[at as usize] = value;
            at
        }
        (None, _) => NONE,
    }
}

fn push_index<T>(list: &mut Vec<T>, value: T) -> u32 {
    list.push(value);
    list.len() as u32 - 1
}

impl SocketSample {
    /// The socket as a table gives it, for the functions that read one.
    pub fn as_socket(&self) -> Socket<'_> {
        Socket {
            proto: self.proto,
            state: self.state,
            local: self.local,
            peer: self.peer,
            recv_q: self.recv_q,
            send_q: self.send_q,
            uid: self.uid,
            inode: self.inode,
            users: &self.users,
            owner_denied: self.owner_denied,
            owner_pending: self.owner_pending,
            tcp: self.tcp.as_ref(),
            limits: self.limits.as_deref(),
            drops: self.drops,
            rcvbuf: self.rcvbuf,
            queue_streak: self.queue_streak,
            v6only: self.v6only,
            netns: self.netns,
        }
    }
}

impl Socket<'_> {
    /// The owned form (its owners' names shared, not copied).
    pub fn to_sample(&self) -> SocketSample {
        SocketSample {
            proto: self.proto,
            state: self.state,
            local: self.local,
            peer: self.peer,
            recv_q: self.recv_q,
            send_q: self.send_q,
            uid: self.uid,
            inode: self.inode,
            users: self.users.iter().cloned().collect::<Owners>(),
            owner_denied: self.owner_denied,
            owner_pending: self.owner_pending,
            tcp: self.tcp.copied(),
            limits: self.limits.map(|l| Box::new(*l)),
            drops: self.drops,
            rcvbuf: self.rcvbuf,
            queue_streak: self.queue_streak,
            v6only: self.v6only,
            netns: self.netns,
        }
    }

    /// The local address as `ss` prints it ("0.0.0.0:*", "*:80", "[::]:22").
    pub fn local_text(&self) -> String {
        ss_endpoint(self.local, self.v6only)
    }

    /// The peer as `ss` prints it: a LISTEN or unconnected socket's is
    /// "0.0.0.0:*", "[::]:*", or "*:*" for a dual-stack socket.
    pub fn peer_text(&self) -> String {
        ss_endpoint(self.peer, self.v6only)
    }

    /// The name `ss` prints for the state.
    pub fn state_name(&self) -> &'static str {
        match (self.proto, self.state) {
            (Proto::Udp, TCP_CLOSE) => "UNCONN",
            (Proto::Udp, TCP_ESTABLISHED) => "ESTAB",
            (_, state) => tcp_state_name(state),
        }
    }

    /// A TCP socket its process closed that the kernel still finishes:
    /// no file (inode 0) in FIN-WAIT-1/2, CLOSING or LAST-ACK (what
    /// sockstat's orphan counts, but for this namespace only).
    pub fn is_orphan(&self) -> bool {
        // FIN_WAIT1 4, FIN_WAIT2 5, LAST_ACK 9, CLOSING 11.
        self.proto == Proto::Tcp && self.inode == 0 && matches!(self.state, 4 | 5 | 9 | 11)
    }

    pub fn is_listener(&self) -> bool {
        self.proto == Proto::Tcp && self.state == TCP_LISTEN
    }

    /// The accept queue overflows when its length exceeds the backlog
    /// (sk_acceptq_is_full); the kernel then drops the final ACK.
    pub fn accept_queue_full(&self) -> bool {
        self.is_listener() && self.recv_q > self.send_q
    }

    /// A stable identity across samples: protocol and both endpoints.
    pub fn key(&self) -> SocketKey {
        SocketKey {
            proto: self.proto,
            local: self.local,
            peer: self.peer,
            netns: self.netns,
        }
    }

    /// "nginx" or "nginx,sshd" for several processes.
    pub fn process_names(&self) -> Option<String> {
        let mut names: Vec<&str> = self.users.iter().map(|u| u.process.as_str()).collect();
        names.dedup();
        (!names.is_empty()).then(|| names.join(","))
    }
}

/// The sockets of a table, in order.
#[derive(Clone)]
pub struct Iter<'a> {
    table: &'a SocketTable,
    rows: std::slice::Iter<'a, Row>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Socket<'a>;
    #[inline(always)]
    fn next(&mut self) -> Option<Socket<'a>> {
        self.rows.next().map(|row| self.table.view(row))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
    #[inline]
    fn nth(&mut self, n: usize) -> Option<Socket<'a>> {
        self.rows.nth(n).map(|row| self.table.view(row))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.rows.next_back().map(|row| self.table.view(row))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a SocketTable {
    type Item = Socket<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Extend<SocketSample> for SocketTable {
    fn extend<I: IntoIterator<Item = SocketSample>>(&mut self, sockets: I) {
        for socket in sockets {
            self.push(&socket);
        }
    }
}

impl From<Vec<SocketSample>> for SocketTable {
    fn from(sockets: Vec<SocketSample>) -> Self {
        sockets.iter().collect()
    }
}

impl<'a> FromIterator<&'a SocketSample> for SocketTable {
    fn from_iter<I: IntoIterator<Item = &'a SocketSample>>(sockets: I) -> Self {
        let sockets = sockets.into_iter();
        let mut table = Self::with_capacity(sockets.size_hint().0);
        for socket in sockets {
            table.push(socket);
        }
        table
    }
}

impl FromIterator<SocketSample> for SocketTable {
    fn from_iter<I: IntoIterator<Item = SocketSample>>(sockets: I) -> Self {
        let sockets = sockets.into_iter();
        let mut table = Self::with_capacity(sockets.size_hint().0);
        for socket in sockets {
            table.push(&socket);
        }
        table
    }
}

/// Two tables are equal when their sockets are, however they are packed.
impl PartialEq for SocketTable {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// Stored and printed as the list of `SocketSample`s it was before.
impl Serialize for SocketTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(|s| s.to_sample()))
    }
}

impl<'de> Deserialize<'de> for SocketTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<SocketSample>::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(pid: u32) -> SocketUser {
        SocketUser {
            process: "nginx".into(),
            pid,
            fd: 6,
        }
    }

    fn sockets() -> Vec<SocketSample> {
        vec![
            SocketSample {
                local: "127.0.0.1:80".parse().unwrap(),
                peer: "198.18.0.2:40000".parse().unwrap(),
                state: TCP_ESTABLISHED,
                recv_q: 3,
                inode: 9,
                users: [user(1)].into_iter().collect(),
                tcp: Some(TcpInfoSample {
                    rtt_us: 50,
                    bytes_acked: 1 << 40,
                    ..Default::default()
                }),
                limits: Some(Box::new(TcpLimits {
                    busy_us: 7,
                    ..Default::default()
                })),
                drops: Some(0),
                queue_streak: 2,
                ..Default::default()
            },
            SocketSample {
                proto: Proto::Udp,
                state: TCP_CLOSE,
                local: "[::]:53".parse().unwrap(),
                peer: "[::]:0".parse().unwrap(),
                v6only: true,
                rcvbuf: Some(212_992),
                owner_denied: true,
                netns: 3,
                ..Default::default()
            },
            SocketSample {
                local: "[::ffff:127.0.0.1]:8080".parse().unwrap(),
                peer: "[2001:db8::1]:5000".parse().unwrap(),
                users: [user(1), user(2)].into_iter().collect(),
                owner_pending: true,
                ..Default::default()
            },
        ]
    }

    #[test]
    fn a_table_gives_back_every_field_of_every_socket() {
        let owned = sockets();
        let table = SocketTable::from(owned.clone());
        assert_eq!(table.len(), 3);
        assert_eq!(table.to_vec(), owned);
        assert_eq!(table.at(1).local_text(), "[::]:53");
        assert_eq!(table.at(0).tcp.unwrap().bytes_acked, 1 << 40);
        assert_eq!(table.at(2).users.len(), 2);
        // Through serde, as recordings and JSON carry it.
        let json = serde_json::to_string(&table).unwrap();
        let back: SocketTable = serde_json::from_str(&json).unwrap();
        assert_eq!(back, table);
        assert_eq!(json, serde_json::to_string(&owned).unwrap());
    }

    #[test]
    fn owners_are_found_near_where_they_were() {
        let owned = |inode: u32, pid| SocketSample {
            inode,
            users: (pid > 0).then(|| user(pid)).into_iter().collect(),
            ..Default::default()
        };
        let before = SocketTable::from(vec![
            owned(10, 1),
            owned(0, 0),
            owned(11, 2),
            owned(12, 0),
            owned(13, 3),
        ]);
        let mut cursor = 0;
        let pid = |users: Option<&[SocketUser]>| users.map(|u| u[0].pid);
        assert_eq!(pid(before.owners_near(&mut cursor, 10)), Some(1));
        // A new socket: not there, the cursor stays.
        assert_eq!(pid(before.owners_near(&mut cursor, 99)), None);
        assert_eq!(cursor, 1);
        assert_eq!(pid(before.owners_near(&mut cursor, 11)), Some(2));
        // 12 went; 13 is found after it. One without an owner is None.
        assert_eq!(pid(before.owners_near(&mut cursor, 13)), Some(3));
        assert_eq!(cursor, 5);
        let mut cursor = 0;
        assert_eq!(pid(before.owners_near(&mut cursor, 12)), None);
    }

    #[test]
    fn a_row_is_60_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 60);
    }

    #[test]
    fn a_socket_changes_in_place() {
        let mut table = SocketTable::from(sockets());
        let lists = (
            table.lists.tcp.len(),
            table.lists.users.len(),
            table.lists.v6.len(),
        );
        table.modify(0, |s| {
            s.recv_q = 0;
            s.tcp.as_mut().unwrap().rtt_us = 70;
            s.users[0].pid = 44;
        });
        table.modify(2, |s| s.peer = "[2001:db8::2]:5000".parse().unwrap());
        assert_eq!(
            (
                table.lists.tcp.len(),
                table.lists.users.len(),
                table.lists.v6.len()
            ),
            lists
        );
        let mut expected = sockets();
        expected[0].recv_q = 0;
        expected[0].tcp.as_mut().unwrap().rtt_us = 70;
        expected[0].users[0].pid = 44;
        expected[2].peer = "[2001:db8::2]:5000".parse().unwrap();
        assert_eq!(table.to_vec(), expected);
        // A part it did not have is appended; a count that changes too.
        table.modify(1, |s| s.users = [user(9)].into_iter().collect());
        table.set_owner_unknown(1, false, false);
        table.set_netns(1, 0);
        expected[1].users = [user(9)].into_iter().collect();
        expected[1].owner_denied = false;
        expected[1].netns = 0;
        assert_eq!(table.to_vec(), expected);
        table.retain(|s| s.proto == Proto::Tcp);
        expected.remove(1);
        assert_eq!(table.to_vec(), expected);
    }
}
