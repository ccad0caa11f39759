//! What limited the sending connections over the interval, from the
//! connection catalogue (`catalogue::conns`): tcp_info's busy,
//! rwnd_limited and sndbuf_limited times are cumulative microseconds, so
//! their deltas between two samples say what held each sender during the
//! interval. Connections are judged in groups the way a person reads
//! them, a process and the /24 (IPv6: /64) it sends to in one namespace,
//! never one finding per socket: "PID 812 (rsync) -> 198.18.4.0/24".

use super::catalogue::conns::{APP_LIMITED, Conn, RWND_LIMITED, SNDBUF_LIMITED};
use super::{Evidence, Finding, Hold};
use crate::model::Sample;
use crate::model::netns::PRIMARY;
use crate::model::rates::sockets_interval;
use crate::model::socket_table::Socket;
use crate::model::sockets::{Proto, SocketKey, TcpSample};
use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

mod path;
mod queue;
mod receive;

/// A group counts once its connections were busy (had data in flight)
/// for at least this share of the interval, summed: an idle pool raises
/// nothing.
const MIN_BUSY_SHARE: f64 = 0.2;

/// The destination a group is named by: the peer's /24 or /64, as the
/// network address (kept as an address: a string per socket cost more
/// than the rest of the evaluation at 100,000 sockets).
fn subnet(peer: SocketAddr) -> IpAddr {
    match peer.ip() {
        IpAddr::V4(ip) => {
            let [a, b, c, _] = ip.octets();
            IpAddr::from([a, b, c, 0])
        }
        IpAddr::V6(ip) => {
            let s = ip.segments();
            IpAddr::from([s[0], s[1], s[2], s[3], 0, 0, 0, 0])
        }
    }
}

/// "198.18.4.0/24", "2001:db8:1:2::/64".
fn subnet_text(net: IpAddr) -> String {
    match net {
        IpAddr::V4(ip) => format!("{ip}/24"),
        IpAddr::V6(ip) => format!("{ip}/64"),
    }
}

/// One process's connections to one subnet, over the interval.
#[derive(Default)]
struct Group<'a> {
    owner: Option<Socket<'a>>,
    connections: u32,
    busy_us: u64,
    rwnd_us: u64,
    sndbuf_us: u64,
    app_limited: u32,
    /// Bytes acknowledged over the interval.
    acked: u64,
    /// Segments retransmitted, of them reported needless (D-SACK), and
    /// reorderings seen, over the interval.
    retrans: u64,
    dsack: u64,
    reord: u64,
    /// The highest reordering degree the connections now tolerate.
    degree: u32,
    /// Bytes written and not yet sent, now.
    notsent: u64,
    /// The connections the application capped with SO_MAX_PACING_RATE:
    /// how many, the bytes they had acknowledged, and their caps (bytes
    /// a second) summed, lowest and highest.
    capped: u32,
    capped_acked: u64,
    caps: u64,
    cap_range: (u64, u64),
    /// The connection busiest in the interval: its window and RTT.
    busiest: Option<(u64, Socket<'a>)>,
}

impl Group<'_> {
    fn share(&self, part: u64) -> f64 {
        100.0 * part as f64 / self.busy_us as f64
    }
}

/// What one connection's cumulative counters moved over the interval:
/// the deltas from the same connection in the previous sample, or the
/// whole counts of a connection that is new (its counters started at
/// zero).
#[derive(Default)]
struct Moved {
    busy: u64,
    rwnd: u64,
    sndbuf: u64,
    acked: u64,
    retrans: u64,
    dsack: u64,
    reord: u64,
}

fn moved(now: &Socket, before: Option<&Socket>) -> Moved {
    let limits = |s: &Socket| s.limits.copied().unwrap_or_default();
    let info = |s: &Socket| s.tcp.copied().unwrap_or_default();
    let (l, i) = (limits(now), info(now));
    let (was, was_info) = before.map_or_else(Default::default, |b| (limits(b), info(b)));
    Moved {
        busy: l.busy_us.saturating_sub(was.busy_us),
        rwnd: l.rwnd_limited_us.saturating_sub(was.rwnd_limited_us),
        sndbuf: l.sndbuf_limited_us.saturating_sub(was.sndbuf_limited_us),
        acked: i.bytes_acked.saturating_sub(was_info.bytes_acked),
        retrans: u64::from(i.total_retrans.saturating_sub(was_info.total_retrans)),
        dsack: u64::from(l.dsack_dups.saturating_sub(was.dsack_dups)),
        reord: u64::from(l.reord_seen.saturating_sub(was.reord_seen)),
    }
}

/// The previous sample's senders, to find each connection's counters of
/// then. Sized to the senders, not the sockets: most of a big host's
/// sockets carry no limits, and a map for all of them was a third of a
/// socket table at the live view's peak. Keyed by the socket's inode
/// (unique on the host, and a u32 hashes in a fraction of the time two
/// addresses take); the few without a file (inode 0) by their endpoints.
struct Earlier<'a> {
    by_inode: HashMap<u32, Socket<'a>>,
    by_key: HashMap<SocketKey, Socket<'a>>,
}

impl<'a> Earlier<'a> {
    fn new(previous: &'a Sample) -> Self {
        let senders = || previous.sockets.iter().filter(|s| s.limits.is_some());
        let mut by_inode = HashMap::with_capacity(senders().count());
        let mut by_key = HashMap::new();
        for socket in senders() {
            match socket.inode {
                0 => by_key.insert(socket.key(), socket),
                inode => by_inode.insert(inode, socket),
            };
        }
        Self { by_inode, by_key }
    }

    /// The same connection then: an inode reused by a new socket since
    /// is not it.
    fn get(&self, socket: &Socket) -> Option<Socket<'a>> {
        match socket.inode {
            0 => self.by_key.get(&socket.key()).copied(),
            inode => self.by_inode.get(&inode).copied().filter(|then| {
                then.proto == socket.proto
                    && then.netns == socket.netns
                    && then.local == socket.local
                    && then.peer == socket.peer
            }),
        }
    }
}

pub fn evaluate(previous: Option<&Sample>, current: &Sample) -> Vec<Finding> {
    let Some(previous) = previous else {
        return Vec::new();
    };
    let seconds = sockets_interval(previous, current);
    if seconds <= 0.0 {
        return Vec::new();
    }
    let before = Earlier::new(previous);
    // Hashed, then ordered once: a tree walk per socket was a tenth of the
    // evaluation at 100,000 senders.
    let mut groups: HashMap<(u16, Option<u32>, IpAddr), Group> = HashMap::new();
    let mut receivers = receive::Groups::default();
    for socket in current.sockets.iter().filter(|s| s.proto == Proto::Tcp) {
        let Some(limits) = socket.limits else {
            continue;
        };
        // Looked up once for both sides: at 100,000 sockets the lookup is
        // most of the catalogue's cost.
        let then = before.get(&socket);
        receivers.add(socket, then.as_ref());
        let moved = moved(&socket, then.as_ref());
        if moved.busy == 0 {
            continue;
        }
        let pid = socket.users.first().map(|u| u.pid);
        let group = groups
            .entry((socket.netns, pid, subnet(socket.peer)))
            .or_default();
        group.owner = group.owner.or(Some(socket));
        group.connections += 1;
        group.busy_us += moved.busy;
        group.rwnd_us += moved.rwnd;
        group.sndbuf_us += moved.sndbuf;
        group.app_limited += u32::from(limits.app_limited);
        group.acked += moved.acked;
        group.retrans += moved.retrans;
        group.dsack += moved.dsack;
        group.reord += moved.reord;
        group.degree = group.degree.max(limits.reordering);
        group.notsent += u64::from(limits.notsent_bytes);
        if let Some(cap) = limits.pacing_cap() {
            group.capped += 1;
            group.capped_acked += moved.acked;
            group.caps = group.caps.saturating_add(cap);
            group.cap_range = match group.cap_range {
                (0, 0) => (cap, cap),
                (low, high) => (low.min(cap), high.max(cap)),
            };
        }
        if group.busiest.is_none_or(|(most, _)| moved.busy > most) {
            group.busiest = Some((moved.busy, socket));
        }
    }
    let groups: BTreeMap<_, _> = groups.into_iter().collect();
    let senders = groups
        .into_iter()
        .filter(|(_, g)| g.busy_us as f64 >= MIN_BUSY_SHARE * seconds * 1e6)
        .filter_map(|((netns, pid, net), group)| {
            let to = subnet_text(net);
            // The settings netlens reads are the watched namespace's.
            let knobs = current.tcp.as_ref().filter(|_| netns == PRIMARY);
            let verdict = judge(&group, previous, current, knobs)?;
            let who = group
                .owner
                .map_or_else(String::new, |s| super::process_of(&s));
            let row = sockets_row(pid, &to);
            Some(Finding {
                hold: Hold::default(),
                id: verdict.entry.finding,
                severity: verdict.entry.level.into(),
                summary: format!("{who} -> {to}: {}", verdict.summary),
                hint: verdict.hint,
                evidence: Evidence {
                    netns: Some(netns),
                    tab: "sockets",
                    row,
                },
            })
        });
    let mut found: Vec<Finding> = senders.collect();
    found.extend(receivers.findings(previous, current, seconds));
    found
}

/// What a group's finding says: the entry that explains it, the summary's
/// words after the group's name, and the fix.
struct Verdict {
    entry: &'static Conn,
    summary: String,
    hint: String,
}

impl Verdict {
    fn new(entry: &'static Conn, summary: String, hint: String) -> Option<Verdict> {
        Some(Verdict {
            entry,
            summary,
            hint,
        })
    }
}

/// What the judges read besides the group: the interval's samples, the
/// seconds between their socket dumps, the group's namespace's settings
/// (when netlens read them) and "N connections".
struct Context<'a> {
    previous: &'a Sample,
    current: &'a Sample,
    seconds: f64,
    knobs: Option<&'a TcpSample>,
    connections: String,
}

impl Context<'_> {
    /// ", here VALUE" for a setting of the group's namespace, or nothing.
    fn value(&self, name: &str) -> String {
        self.knobs
            .and_then(|t| t.knob(name))
            .map_or(String::new(), |v| format!(", here {v}"))
    }
}

/// The entry that explains the group, in this order: the application's own
/// pacing cap (the rate it asked for, whatever else holds), the receiver's
/// window (the sender can do nothing about it, and a slow reader's late
/// ACKs stretch the RTT too), the send buffer, needless retransmits, a
/// queue on the way, segments out of order, data waiting in the
/// socket, then the application writing too little.
fn judge(
    group: &Group,
    previous: &Sample,
    current: &Sample,
    knobs: Option<&TcpSample>,
) -> Option<Verdict> {
    let cx = Context {
        previous,
        current,
        seconds: sockets_interval(previous, current),
        knobs,
        connections: connections(group.connections),
    };
    path::paced(group, &cx)
        .or_else(|| window(group, &cx))
        .or_else(|| send_buffer(group, &cx))
        .or_else(|| path::spurious(group, &cx))
        .or_else(|| {
            let (_, busiest) = group.busiest?;
            queue::queueing(&busiest, &cx)
        })
        .or_else(|| path::reordering(group, &cx))
        .or_else(|| queue::unsent(group, &cx))
        .or_else(|| application(group, &cx))
}

fn window(group: &Group, cx: &Context) -> Option<Verdict> {
    let rwnd = group.share(group.rwnd_us);
    if rwnd < RWND_LIMITED.threshold {
        return None;
    }
    let cap = group.busiest.and_then(|(_, s)| window_cap(&s));
    let local = group
        .busiest
        .and_then(|(_, s)| local_receiver(cx.current, &s));
    let receiver = local.map_or_else(
        || "the receiver".to_string(),
        |r| format!("the receiver, {},", super::process_of(&r)),
    );
    // The receiver's setting: known only when it is in this namespace.
    let rmem = if local.is_some() {
        cx.value("net.ipv4.tcp_rmem")
    } else {
        String::new()
    };
    Verdict::new(
        &RWND_LIMITED,
        format!(
            "{} limited by the receiver's window {rwnd:.0}% of the busy time{}",
            cx.connections,
            cap.map_or(String::new(), |c| format!(" ({c})"))
        ),
        format!(
            "{receiver} does not open its window: raise its receive buffer (its SO_RCVBUF, \
             or net.ipv4.tcp_rmem's maximum{rmem}) or make it read faster; nothing on this \
             sender or the path helps",
        ),
    )
}

fn send_buffer(group: &Group, cx: &Context) -> Option<Verdict> {
    let sndbuf = group.share(group.sndbuf_us);
    if sndbuf < SNDBUF_LIMITED.threshold {
        return None;
    }
    Verdict::new(
        &SNDBUF_LIMITED,
        format!(
            "{} held by the send buffer {sndbuf:.0}% of the busy time",
            cx.connections
        ),
        format!(
            "raise the sender's send buffer: its SO_SNDBUF, or net.ipv4.tcp_wmem's maximum{}",
            cx.value("net.ipv4.tcp_wmem")
        ),
    )
}

fn application(group: &Group, cx: &Context) -> Option<Verdict> {
    let app = 100.0 * f64::from(group.app_limited) / f64::from(group.connections);
    if app < APP_LIMITED.threshold {
        return None;
    }
    Verdict::new(
        &APP_LIMITED,
        format!(
            "{} application-limited (window {:.0}%, send buffer {:.0}% of the busy time): \
             the application wrote less than they carry",
            cx.connections,
            group.share(group.rwnd_us),
            group.share(group.sndbuf_us),
        ),
        "the time is the application's, not the network's: look at the sender (its CPU, \
         its own upstream, how it writes)"
            .to_string(),
    )
}

/// "1 connection", "3 connections".
fn connections(n: u32) -> String {
    match n {
        1 => "1 connection".to_string(),
        n => format!("{n} connections"),
    }
}

/// The Sockets tab's filter for a group: "pid:812 dst:198.18.4.0/24
/// state:estab" (no pid when the owner is unknown).
fn sockets_row(pid: Option<u32>, subnet: &str) -> String {
    let pid = pid.map_or(String::new(), |pid| format!("pid:{pid} "));
    format!("{pid}dst:{subnet} state:estab")
}

/// A rate in bytes a second as "12.3 Mbit/s".
fn mbit(bytes_per_s: f64) -> String {
    format!("{:.1} Mbit/s", bytes_per_s * 8.0 / 1e6)
}

/// "window 64 KB at 40 ms RTT caps it near 13 Mbit/s", from the peer's
/// advertised window and the smoothed RTT of the connection.
fn window_cap(socket: &Socket) -> Option<String> {
    let window = socket.limits?.snd_wnd;
    let rtt_us = socket.tcp.as_ref()?.rtt_us;
    if window == 0 {
        return Some("window 0: the receiver stopped reading".to_string());
    }
    if rtt_us == 0 {
        return None;
    }
    let mbit_per_s = f64::from(window) * 8.0 / f64::from(rtt_us);
    Some(format!(
        "window {} at {:.1} ms RTT caps it near {mbit_per_s:.1} Mbit/s",
        super::backlog_size(u64::from(window)),
        f64::from(rtt_us) / 1000.0,
    ))
}

/// The socket of this host at the other end of `socket` (same
/// namespace), if there is one: the local receiver of a sender, the local
/// sender of a receiver.
fn local_receiver<'a>(current: &'a Sample, socket: &Socket) -> Option<Socket<'a>> {
    current.sockets.iter().find(|s| {
        s.proto == Proto::Tcp
            && s.netns == socket.netns
            && s.local == socket.peer
            && s.peer == socket.local
    })
}

#[cfg(test)]
mod tests;
