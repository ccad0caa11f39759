//! Who is using the network: each process that holds sockets, with its
//! TCP bytes per second summed from its sockets' tcp_info counters
//! (bytes_acked sent, bytes_received received) between two samples, as
//! nethogs answers "which process eats the bandwidth", but with no packet
//! copy. Its UDP bytes come from the captured flows it owns when capture is
//! on. Raw data in the sample (`ProcessInfo`), rates here at display time.
//!
//! A socket that closes between two samples is gone from the next dump;
//! its bytes since its last sample come from the connection log (its
//! final tcp_info, `model::closed`), and so do all the bytes of one that
//! opened and closed in between, under the process the eBPF owner program
//! named. A socket listed without an owner (its look-up still running, or
//! its process closed it just before) moves bytes no rate counts then; the
//! sampler keeps them (`ClosedSample::unowned_bytes`) until a dump or the
//! connection log names its owner, and they count in that sample. What is
//! not counted: the traffic of sockets no process is ever known to hold
//! (other users' without root), a closing socket's last bytes when there
//! is no connection log (older recordings), and without the eBPF program
//! the connections that opened and closed between two samples.

use super::Sample;
use super::capture::CaptureRates;
use super::closed::ClosedConn;
use super::rates::sockets_interval;
use super::sockets::{Proto, SocketKey, SocketUser, TCP_ESTABLISHED, TCP_LISTEN};
use crate::model::socket_table::{Socket, SocketTable};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// Said wherever per-process rates are shown.
pub const NOT_COUNTED: &str = "not counted: sockets with no known owner, and without a \
     connection log a closing socket's bytes after its last sample";

/// NOT_COUNTED when no eBPF program names short connections' owners.
pub const NOT_COUNTED_WITHOUT_BPF: &str = "not counted: sockets with no known owner, \
     connections that opened and closed between two samples (their owner needs the \
     eBPF program), and without a connection log a closing socket's bytes after its \
     last sample";

/// Whether `sample`'s short connections went without an owner: its
/// connection log says the eBPF owner program is not there.
pub fn short_connections_unowned(sample: &Sample) -> bool {
    sample
        .closed
        .as_ref()
        .is_none_or(|c| c.error.is_some() || c.owners_unavailable.is_some())
}

/// What the per-process rates of `sample` leave out.
pub fn not_counted(sample: &Sample) -> &'static str {
    if short_connections_unowned(sample) {
        NOT_COUNTED_WITHOUT_BPF
    } else {
        NOT_COUNTED
    }
}

/// One process that held sockets when the sample was taken, as /proc
/// describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: u32,
    /// /proc/PID/comm.
    pub command: String,
    /// The real uid (/proc/PID/status).
    pub uid: u32,
    /// The uid's name from /etc/passwd, else the number.
    pub user: String,
    /// The container or cgroup it runs in ("docker:3f2a1b9c8d7e",
    /// "nginx.service"); None at the cgroup root or when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// The container it runs in, named by its runtime where that could be
    /// read (collect::containers); None outside containers and in older
    /// recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<Container>,
}

/// A container a process runs in, as its runtime names it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    /// "podman", "docker", "containerd", "crio", "k8s" (a kubepods cgroup
    /// of an unknown runtime), "nspawn" or "lxc".
    pub runtime: String,
    /// The runtime's full id (64 hex digits); the machine's name for
    /// nspawn and LXC, which have no other id.
    pub id: String,
    /// The container's name ("web"; Kubernetes' container name in a pod);
    /// None while the runtime has not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The Kubernetes pod and namespace, from the runtime's annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k8s_namespace: Option<String>,
}

impl Container {
    /// Whether its runtime named it (a pod's sandbox has only a pod name).
    pub fn named(&self) -> bool {
        self.name.is_some() || self.pod.is_some()
    }

    /// What a cell shows: the name ("web"; "ns/pod/web" in Kubernetes),
    /// else the runtime and short id as `docker ps` prints it.
    pub fn label(&self) -> String {
        match (&self.name, &self.pod, &self.k8s_namespace) {
            (Some(name), Some(pod), Some(ns)) => format!("{ns}/{pod}/{name}"),
            (Some(name), Some(pod), None) => format!("{pod}/{name}"),
            (Some(name), ..) => name.clone(),
            (None, Some(pod), Some(ns)) => format!("{ns}/{pod}"),
            (None, Some(pod), None) => pod.clone(),
            (None, ..) => format!("{}:{}", self.runtime, short_id(&self.id)),
        }
    }
}

/// The first 12 characters of an id, as `docker ps` and `podman ps` print it.
pub fn short_id(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// pid -> the container it runs in, for the processes of a sample that run
/// in one (the Sockets tab and `snapshot --json` label socket owners).
pub fn containers_by_pid(sample: &Sample) -> HashMap<u32, &Container> {
    sample
        .processes
        .iter()
        .filter_map(|p| Some((p.pid, p.container.as_ref()?)))
        .collect()
}

/// The containers of a sample's processes, for the connections its log
/// lists. Their process may have exited by the time its container is
/// looked up (a failed `curl`; the worker a server such as inetd or busybox
/// httpd forks per connection): a connection the eBPF program named has
/// its cgroup's container then (`ClosedConn::cgroup_container`), and an
/// accepted one falls back to the container of the owner of the listener
/// on its port (a forked worker stays in its parent's cgroup).
pub struct ClosedContainers<'a> {
    by_pid: HashMap<u32, &'a Container>,
    /// Local port -> the container of a TCP listener's owner on it.
    by_listener: HashMap<u16, &'a Container>,
}

impl<'a> ClosedContainers<'a> {
    pub fn of(sample: &'a Sample) -> Self {
        let by_pid = containers_by_pid(sample);
        let by_listener = sample
            .sockets
            .iter()
            .filter(|s| s.proto == Proto::Tcp && s.state == TCP_LISTEN)
            .filter_map(|s| Some((s.local.port(), *by_pid.get(&s.users.first()?.pid)?)))
            .collect();
        ClosedContainers {
            by_pid,
            by_listener,
        }
    }

    /// The container of the process `pid`.
    pub fn of_pid(&self, pid: u32) -> Option<&'a Container> {
        self.by_pid.get(&pid).copied()
    }

    /// The container of the process that held `conn`, else of its cgroup,
    /// else of its listener.
    pub fn of_conn<'c>(&'c self, conn: &'c ClosedConn) -> Option<&'c Container> {
        let own = conn.pid().and_then(|pid| self.of_pid(pid));
        let listener = || match conn.accepted {
            true => self.by_listener.get(&conn.local.port()).copied(),
            false => None,
        };
        own.or(conn.cgroup_container.as_deref()).or_else(listener)
    }
}

/// A container as one label, "web (podman)".
pub fn container_label(container: &Container) -> String {
    format!("{} ({})", container.label(), container.runtime)
}

/// One row of the Processes view: a process and its traffic over one
/// interval. Rates are None without an earlier sample to compare with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessRow {
    pub pid: u32,
    pub command: String,
    pub user: String,
    pub cgroup: Option<String>,
    pub container: Option<Container>,
    /// TCP payload bytes per second the peers acknowledged (sent).
    pub tcp_send_per_s: Option<f64>,
    /// TCP payload bytes per second received.
    pub tcp_recv_per_s: Option<f64>,
    /// Captured UDP bytes per second, both ways; None when capture is off.
    pub udp_per_s: Option<f64>,
    /// Sockets it holds by state name as ss prints it ("ESTAB": 3).
    pub states: BTreeMap<&'static str, usize>,
    pub sockets: usize,
    /// TCP segments retransmitted per second (tcpi_total_retrans).
    pub retrans_per_s: Option<f64>,
    /// The largest smoothed RTT of its established TCP sockets.
    pub worst_rtt_us: Option<u32>,
    /// The namespace of its first socket (a process has one network
    /// namespace; its sockets were made there or passed to it).
    pub netns: u16,
}

impl ProcessRow {
    /// The Processes tab's cgroup cell: the container's name when its
    /// runtime gave one, else the cgroup's label.
    pub fn place(&self) -> Option<String> {
        match &self.container {
            Some(c) if c.named() => Some(c.label()),
            _ => self.cgroup.clone(),
        }
    }

    /// Sent plus received TCP and captured UDP bytes per second.
    pub fn total_per_s(&self) -> Option<f64> {
        let parts = [self.tcp_send_per_s, self.tcp_recv_per_s, self.udp_per_s];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }

    pub fn established(&self) -> usize {
        self.states.get("ESTAB").copied().unwrap_or(0)
    }

    pub fn listening(&self) -> usize {
        self.states.get("LISTEN").copied().unwrap_or(0)
    }
}

/// The TCP counters of one socket that the rates are made of.
#[derive(Clone, Copy)]
struct Counted {
    sent: u64,
    received: u64,
    retrans: u64,
}

fn counted(socket: &Socket) -> Option<Counted> {
    let tcp = socket.tcp.as_ref()?;
    Some(Counted {
        sent: tcp.bytes_acked,
        received: tcp.bytes_received,
        retrans: u64::from(tcp.total_retrans),
    })
}

/// The process a socket is accounted to: its first holder (a socket
/// shared after fork is counted once, under the first pid ss lists).
pub fn owner(socket: &Socket) -> Option<u32> {
    socket.users.first().map(|u| u.pid)
}

/// What one socket moved over the interval: its counters now less those
/// of the previous sample; a socket the previous sample lacked opened in
/// between, so all its counters are new. None when the counters went back
/// (the 4-tuple was reused by a new connection).
fn moved(now: Counted, before: Option<Counted>) -> Option<Counted> {
    let Some(before) = before else {
        return Some(now);
    };
    Some(Counted {
        sent: now.sent.checked_sub(before.sent)?,
        received: now.received.checked_sub(before.received)?,
        retrans: now.retrans.checked_sub(before.retrans)?,
    })
}

/// Sent and received bytes per second over the interval of each socket
/// process `pid` holds (first) in `current`: the detail list under a
/// process, drawn each frame, so not a map of every socket's.
pub fn socket_rates(
    previous: Option<&Sample>,
    current: &Sample,
    pid: u32,
) -> HashMap<SocketKey, (f64, f64)> {
    let Some((seconds, before)) = previous_counters(previous, current) else {
        return HashMap::new();
    };
    current
        .sockets
        .iter()
        .filter(|s| owner(s) == Some(pid))
        .filter_map(|s| {
            let delta = moved(counted(&s)?, before.get(&s.key()))?;
            Some((
                s.key(),
                (delta.sent as f64 / seconds, delta.received as f64 / seconds),
            ))
        })
        .collect()
}

/// The interval and the previous sample's TCP counters by socket, when
/// the previous sample is of the same namespace and earlier, and still has
/// its sockets (the live view frees old samples' lists).
fn previous_counters<'a>(
    previous: Option<&'a Sample>,
    current: &Sample,
) -> Option<(f64, Before<'a>)> {
    let previous = previous.filter(|p| p.netns == current.netns && !p.sockets_dropped)?;
    // Over the socket dumps' own times: the counters are theirs, and the
    // first sample's dump (its owner scan) can come well after its links.
    let seconds = sockets_interval(previous, current);
    if !(seconds > 0.0 && seconds.is_finite()) {
        return None;
    }
    Some((seconds, Before::new(&previous.sockets)))
}

/// The previous sample's TCP sockets with counters, found by key: each
/// an index into its table (4 bytes), where a map of its own held each
/// 72-byte key again (38 MB at 200,000 sockets).
struct Before<'a> {
    sockets: &'a SocketTable,
    by_key: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl<'a> Before<'a> {
    fn new(sockets: &'a SocketTable) -> Self {
        let hasher = foldhash::fast::RandomState::default();
        let mut by_key = hashbrown::HashTable::with_capacity(sockets.len());
        let key_at = |i: u32| sockets.at(i as usize).key();
        for (index, socket) in sockets.iter().enumerate() {
            if socket.proto != Proto::Tcp || socket.tcp.is_none() {
                continue;
            }
            let key = socket.key();
            let index = index as u32;
            // Sockets sharing a key: the later one counts, as it did
            // when each was inserted over the one before.
            match by_key.entry(
                hasher.hash_one(key),
                |i| key_at(*i) == key,
                |i| hasher.hash_one(key_at(*i)),
            ) {
                hashbrown::hash_table::Entry::Occupied(mut found) => *found.get_mut() = index,
                hashbrown::hash_table::Entry::Vacant(room) => {
                    room.insert(index);
                }
            }
        }
        Self {
            sockets,
            by_key,
            hasher,
        }
    }

    fn get(&self, key: &SocketKey) -> Option<Counted> {
        let index = self.by_key.find(self.hasher.hash_one(key), |i| {
            self.sockets.at(*i as usize).key() == *key
        })?;
        counted(&self.sockets.at(*index as usize))
    }
}

/// Every process holding a socket in `current`, with its rates over the
/// interval since `previous`; busiest first.
pub fn process_rows(previous: Option<&Sample>, current: &Sample) -> Vec<ProcessRow> {
    let info: HashMap<u32, &ProcessInfo> = current.processes.iter().map(|p| (p.pid, p)).collect();
    let counters = previous_counters(previous, current);
    let mut rows: BTreeMap<u32, ProcessRow> = BTreeMap::new();
    for socket in &current.sockets {
        let Some(first) = socket.users.first() else {
            continue;
        };
        let row = rows
            .entry(first.pid)
            .or_insert_with(|| new_row(first, socket.uid.to_string(), &info));
        if row.sockets == 0 {
            row.netns = socket.netns;
        }
        row.sockets += 1;
        *row.states.entry(socket.state_name()).or_default() += 1;
        if socket.proto != Proto::Tcp {
            continue;
        }
        if socket.state == TCP_ESTABLISHED
            && let Some(tcp) = &socket.tcp
        {
            row.worst_rtt_us = row.worst_rtt_us.max(Some(tcp.rtt_us));
        }
        let Some((seconds, before)) = &counters else {
            continue;
        };
        // A listener's counters are its own handshakes, not traffic.
        let delta = counted(&socket)
            .filter(|_| socket.state != TCP_LISTEN)
            .and_then(|now| moved(now, before.get(&socket.key())));
        if let Some(delta) = delta {
            add(&mut row.tcp_send_per_s, delta.sent as f64 / seconds);
            add(&mut row.tcp_recv_per_s, delta.received as f64 / seconds);
            add(&mut row.retrans_per_s, delta.retrans as f64 / seconds);
        } else if socket.state != TCP_LISTEN {
            // Known to move nothing countable this interval: still a rate.
            add(&mut row.tcp_send_per_s, 0.0);
            add(&mut row.tcp_recv_per_s, 0.0);
            add(&mut row.retrans_per_s, 0.0);
        }
    }
    if let Some((seconds, before)) = &counters {
        add_closed(&mut rows, current, &info, *seconds, before);
    }
    add_udp(&mut rows, previous, current);
    let mut rows: Vec<ProcessRow> = rows.into_values().collect();
    rows.sort_by(|a, b| {
        b.total_per_s()
            .unwrap_or(0.0)
            .total_cmp(&a.total_per_s().unwrap_or(0.0))
            .then(a.pid.cmp(&b.pid))
    });
    rows
}

/// A new row for `owner`: named from /proc when the sample read it, else
/// by the owner's command and `user` as the socket gives it.
fn new_row(owner: &SocketUser, user: String, info: &HashMap<u32, &ProcessInfo>) -> ProcessRow {
    let known = info.get(&owner.pid);
    ProcessRow {
        pid: owner.pid,
        command: known.map_or_else(|| owner.process.to_string(), |p| p.command.clone()),
        user: known.map_or(user, |p| p.user.clone()),
        cgroup: known.and_then(|p| p.cgroup.clone()),
        container: known.and_then(|p| p.container.clone()),
        ..ProcessRow::default()
    }
}

/// The connections that ended during the interval: what each moved since
/// the previous sample (all of it when it opened in between), from its
/// final counters, under the process that held it, which may hold no
/// socket any more.
fn add_closed(
    rows: &mut BTreeMap<u32, ProcessRow>,
    current: &Sample,
    info: &HashMap<u32, &ProcessInfo>,
    seconds: f64,
    before: &Before,
) {
    let Some(closed) = &current.closed else {
        return;
    };
    for conn in &closed.conns {
        let (Some(user), Some(sent), Some(received)) =
            (conn.users.first(), conn.bytes_sent, conn.bytes_received)
        else {
            continue;
        };
        // The connection log follows the watched namespace only.
        let key = SocketKey {
            proto: Proto::Tcp,
            local: conn.local,
            peer: conn.peer,
            netns: super::netns::PRIMARY,
        };
        // The final counts leave out the SYN and FIN the live ones include:
        // a delta below zero is those, not traffic.
        let (sent, received) = match before.get(&key) {
            Some(then) => (
                sent.saturating_sub(then.sent),
                received.saturating_sub(then.received),
            ),
            None => (sent, received),
        };
        let row = rows
            .entry(user.pid)
            .or_insert_with(|| new_row(user, "-".into(), info));
        add(&mut row.tcp_send_per_s, sent as f64 / seconds);
        add(&mut row.tcp_recv_per_s, received as f64 / seconds);
    }
    // Beyond the list, and what sockets moved while no owner was known.
    for folded in closed.overflow_bytes.iter().chain(&closed.unowned_bytes) {
        let row = rows
            .entry(folded.user.pid)
            .or_insert_with(|| new_row(&folded.user, "-".into(), info));
        add(&mut row.tcp_send_per_s, folded.bytes_sent as f64 / seconds);
        add(
            &mut row.tcp_recv_per_s,
            folded.bytes_received as f64 / seconds,
        );
    }
}

fn add(total: &mut Option<f64>, value: f64) {
    *total = Some(total.unwrap_or(0.0) + value);
}

/// Captured UDP flows' bytes per second, both ways, under the process that
/// owns their local end. Only when capture is on; flows the sample does
/// not carry (beyond the busiest) are not counted.
fn add_udp(rows: &mut BTreeMap<u32, ProcessRow>, previous: Option<&Sample>, current: &Sample) {
    let Some(capture) = current.capture.as_ref().filter(|c| c.active) else {
        return;
    };
    let rates = CaptureRates::new(previous, current);
    for row in rows.values_mut() {
        row.udp_per_s = (rates.interval > 0.0).then_some(0.0);
    }
    for flow in capture.flows.iter().filter(|f| f.proto == "udp") {
        let (Some(pid), (_, Some(bytes))) = (flow.pid, rates.flow(flow)) else {
            continue;
        };
        if let Some(row) = rows.get_mut(&pid) {
            add(&mut row.udp_per_s, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::{SocketUser, TcpInfoSample};

    fn tcp_socket(port: u16, pid: u32, sent: u64, received: u64) -> SocketSample {
        SocketSample {
            proto: Proto::Tcp,
            state: TCP_ESTABLISHED,
            local: format!("198.18.0.1:{port}").parse().unwrap(),
            peer: "198.18.0.2:5201".parse().unwrap(),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: u32::from(port),
            users: vec![SocketUser {
                process: format!("p{pid}").into(),
                pid,
                fd: 3,
            }]
            .into(),
            owner_denied: false,
            owner_pending: false,
            tcp: Some(TcpInfoSample {
                bytes_acked: sent,
                bytes_received: received,
                rtt_us: u32::from(port),
                ..TcpInfoSample::default()
            }),
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        }
    }

    fn sample(mono: f64, sockets: Vec<SocketSample>) -> Sample {
        Sample {
            mono,
            sockets: sockets.into(),
            ..Sample::default()
        }
    }

    #[test]
    fn rates_sum_each_processes_sockets_over_the_interval() {
        let before = sample(
            10.0,
            vec![tcp_socket(1000, 7, 1_000, 50), tcp_socket(1001, 7, 0, 0)],
        );
        let after = sample(
            12.0,
            vec![
                tcp_socket(1000, 7, 5_000, 250),
                tcp_socket(1001, 7, 2_000, 0),
                // Opened in between: all its bytes are this interval's.
                tcp_socket(1002, 8, 600, 0),
            ],
        );
        let rows = process_rows(Some(&before), &after);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].pid, 7, "busiest first");
        assert_eq!(rows[0].tcp_send_per_s, Some(3_000.0));
        assert_eq!(rows[0].tcp_recv_per_s, Some(100.0));
        assert_eq!(rows[0].sockets, 2);
        assert_eq!(rows[0].established(), 2);
        assert_eq!(rows[0].worst_rtt_us, Some(1001));
        assert_eq!(rows[1].tcp_send_per_s, Some(300.0));
        assert_eq!(rows[1].command, "p8", "the owner's name without /proc info");
        // A process's detail: its own sockets' rates, and only those.
        let rates = socket_rates(Some(&before), &after, 8);
        let at = |port: u16| rates[&after.sockets.at(usize::from(port - 1000)).key()];
        assert_eq!(rates.len(), 1, "pid 7's sockets are not pid 8's");
        assert_eq!(at(1002), (300.0, 0.0), "opened in between: all of it");
        let rates = socket_rates(Some(&before), &after, 7);
        let at = |port: u16| rates[&after.sockets.at(usize::from(port - 1000)).key()];
        assert_eq!(rates.len(), 2, "pid 8's socket is not pid 7's");
        assert_eq!(at(1000), (2_000.0, 100.0));
    }

    #[test]
    fn no_rates_without_a_previous_sample_of_the_same_namespace() {
        let now = sample(5.0, vec![tcp_socket(1000, 7, 5_000, 0)]);
        assert_eq!(process_rows(None, &now)[0].tcp_send_per_s, None);
        let mut other = sample(4.0, vec![tcp_socket(1000, 7, 0, 0)]);
        other.netns = "other".into();
        assert_eq!(process_rows(Some(&other), &now)[0].tcp_send_per_s, None);
        // The live view freed the previous sample's list: no socket of it
        // counts as new (all its bytes in one interval), none has a rate.
        let mut freed = sample(4.0, Vec::new());
        freed.sockets_dropped = true;
        assert_eq!(process_rows(Some(&freed), &now)[0].tcp_send_per_s, None);
        assert!(socket_rates(Some(&freed), &now, 7).is_empty());
    }

    #[test]
    fn a_reused_four_tuple_counts_nothing_not_a_negative_spike() {
        let before = sample(1.0, vec![tcp_socket(1000, 7, 9_000, 9_000)]);
        let after = sample(2.0, vec![tcp_socket(1000, 7, 10, 10)]);
        let rows = process_rows(Some(&before), &after);
        assert_eq!(rows[0].tcp_send_per_s, Some(0.0));
        assert_eq!(rows[0].tcp_recv_per_s, Some(0.0));
    }

    #[test]
    fn a_connection_that_closed_in_the_interval_counts_its_last_bytes() {
        use crate::model::closed::{ClosedConn, ClosedSample, Ending};
        let before = sample(
            1.0,
            vec![tcp_socket(1000, 7, 1_000, 0), tcp_socket(1001, 7, 0, 0)],
        );
        let closing = tcp_socket(1000, 7, 0, 0);
        let mut after = sample(2.0, vec![tcp_socket(1001, 7, 0, 0)]);
        let conn = |local: &str, pid: u32, sent: u64| ClosedConn {
            t: 2.0,
            cookie: 1,
            local: local.parse().unwrap(),
            peer: closing.peer,
            users: vec![SocketUser {
                process: format!("p{pid}").into(),
                pid,
                fd: 3,
            }],
            cgroup: None,
            cgroup_container: None,
            accepted: false,
            bytes_sent: Some(sent),
            bytes_received: Some(0),
            duration_s: None,
            rtt_us: 0,
            retrans: 0,
            ending: Ending::Fin,
        };
        after.closed = Some(ClosedSample {
            // Seen before with 1,000 sent: 4,000 more since.
            // Never seen: opened and closed in between, all 700 count,
            // under a process that holds no socket now.
            conns: vec![
                conn("198.18.0.1:1000", 7, 5_000),
                conn("198.18.0.1:1002", 9, 700),
            ],
            ..ClosedSample::default()
        });
        let rows = process_rows(Some(&before), &after);
        let row = |pid| rows.iter().find(|r| r.pid == pid).unwrap();
        assert_eq!(row(7).tcp_send_per_s, Some(4_000.0));
        assert_eq!(row(9).tcp_send_per_s, Some(700.0));
        assert_eq!(row(9).sockets, 0);
    }

    #[test]
    fn connections_beyond_the_list_still_count_every_byte() {
        use crate::model::closed::{ClosedConn, ClosedSample, Ending, MAX_PER_SAMPLE};
        let before = sample(1.0, vec![tcp_socket(1000, 7, 1_000, 0)]);
        let mut after = sample(2.0, Vec::new());
        let conn = |port: u16, pid: u32, sent: u64, seen: bool| ClosedConn {
            t: 2.0,
            cookie: u64::from(port),
            local: format!("198.18.0.1:{port}").parse().unwrap(),
            peer: tcp_socket(1000, 7, 0, 0).peer,
            users: vec![SocketUser {
                process: format!("p{pid}").into(),
                pid,
                fd: 3,
            }],
            cgroup: None,
            cgroup_container: None,
            accepted: false,
            bytes_sent: Some(sent),
            bytes_received: Some(sent / 2),
            duration_s: seen.then_some(1.0),
            rtt_us: 0,
            retrans: 0,
            ending: Ending::Fin,
        };
        // 5,000 short connections of pid 9, then the long one of pid 7
        // (seen before with 1,000 sent), last in the kernel's order.
        let short = 5_000u16;
        let mut conns: Vec<ClosedConn> = (0..short)
            .map(|i| conn(10_000 + i, 9, 100 + u64::from(i % 3), false))
            .collect();
        conns.push(conn(1000, 7, 5_000, true));
        let sent_by_9: u64 = conns
            .iter()
            .filter(|c| c.users[0].pid == 9)
            .map(|c| c.bytes_sent.unwrap())
            .sum();
        let received_by_9: u64 = conns
            .iter()
            .filter(|c| c.users[0].pid == 9)
            .map(|c| c.bytes_received.unwrap())
            .sum();
        let mut closed = ClosedSample::default();
        closed.list(conns);
        assert_eq!(closed.conns.len(), MAX_PER_SAMPLE);
        assert_eq!(
            closed.overflow,
            u64::from(short) + 1 - MAX_PER_SAMPLE as u64
        );
        assert_eq!(closed.conns[0].users[0].pid, 7, "the long one is listed");
        assert_eq!(closed.overflow_bytes.len(), 1);
        assert_eq!(closed.overflow_bytes[0].conns, closed.overflow);
        after.closed = Some(closed);
        let rows = process_rows(Some(&before), &after);
        let row = |pid| rows.iter().find(|r| r.pid == pid).unwrap();
        assert_eq!(row(7).tcp_send_per_s, Some(4_000.0));
        assert_eq!(row(9).tcp_send_per_s, Some(sent_by_9 as f64));
        assert_eq!(row(9).tcp_recv_per_s, Some(received_by_9 as f64));
    }

    #[test]
    fn bytes_moved_while_unowned_count_under_the_owner_named_since() {
        use crate::model::closed::{ClosedSample, ProcessBytes};
        let before = sample(1.0, vec![tcp_socket(1000, 7, 100, 0)]);
        let mut after = sample(2.0, vec![tcp_socket(1000, 7, 300, 0)]);
        let user = after.sockets.at(0).users.first().unwrap().clone();
        let mut closed = ClosedSample::default();
        closed.add_unowned(vec![ProcessBytes {
            user,
            conns: 1,
            bytes_sent: 50,
            bytes_received: 40,
        }]);
        after.closed = Some(closed);
        let rows = process_rows(Some(&before), &after);
        assert_eq!(rows[0].tcp_send_per_s, Some(250.0));
        assert_eq!(rows[0].tcp_recv_per_s, Some(40.0));
    }

    #[test]
    fn process_info_names_the_user_and_the_cgroup() {
        let mut now = sample(2.0, vec![tcp_socket(1000, 7, 10, 10)]);
        now.processes = vec![ProcessInfo {
            pid: 7,
            command: "nginx".into(),
            uid: 33,
            user: "www-data".into(),
            cgroup: Some("nginx.service".into()),
            container: None,
        }]
        .into();
        let row = &process_rows(None, &now)[0];
        assert_eq!(
            (row.command.as_str(), row.user.as_str()),
            ("nginx", "www-data")
        );
        assert_eq!(row.cgroup.as_deref(), Some("nginx.service"));
        assert_eq!(row.place().as_deref(), Some("nginx.service"));
    }

    #[test]
    fn a_named_container_replaces_the_cgroup_label() {
        let mut container = Container {
            runtime: "podman".into(),
            id: "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a".into(),
            ..Container::default()
        };
        assert_eq!(container.label(), "podman:3f2a1b9c8d7e");
        container.name = Some("web".into());
        assert_eq!(container.label(), "web");
        container.pod = Some("shop-7d9f".into());
        container.k8s_namespace = Some("prod".into());
        assert_eq!(container.label(), "prod/shop-7d9f/web");
        let mut now = sample(2.0, vec![tcp_socket(1000, 7, 10, 10)]);
        now.processes = vec![ProcessInfo {
            pid: 7,
            command: "nginx".into(),
            cgroup: Some("podman:3f2a1b9c8d7e".into()),
            container: Some(container.clone()),
            ..ProcessInfo::default()
        }]
        .into();
        let row = &process_rows(None, &now)[0];
        assert_eq!(row.place().as_deref(), Some("prod/shop-7d9f/web"));
        assert_eq!(containers_by_pid(&now).get(&7), Some(&&container));
    }

    #[test]
    fn a_gone_process_has_its_cgroups_container_a_running_one_its_own() {
        use crate::model::closed::{ClosedConn, ClosedSample, Ending};
        let container = |id: &str| Container {
            runtime: "docker".into(),
            id: id.repeat(64),
            ..Container::default()
        };
        let mut gone = crate::model::failed::tests::conn(1.0, Ending::Refused, 8, "198.18.0.2:80");
        gone.cgroup_container = Some(Box::new(container("a")));
        let mut running = gone.clone();
        running.users[0].pid = 7;
        let mut now = sample(2.0, Vec::new());
        now.processes = vec![ProcessInfo {
            pid: 7,
            container: Some(container("b")),
            ..ProcessInfo::default()
        }]
        .into();
        now.closed = Some(ClosedSample {
            conns: vec![gone.clone(), running.clone()],
            ..ClosedSample::default()
        });
        let containers = ClosedContainers::of(&now);
        let label = |conn: &ClosedConn| containers.of_conn(conn).map(container_label);
        assert_eq!(
            label(&gone).as_deref(),
            Some("docker:aaaaaaaaaaaa (docker)")
        );
        assert_eq!(
            label(&running).as_deref(),
            Some("docker:bbbbbbbbbbbb (docker)")
        );
    }

    #[test]
    fn a_recording_without_containers_still_loads() {
        let old = r#"{"pid":7,"command":"nginx","uid":33,"user":"www-data","cgroup":"docker:3f2a1b9c8d7e"}"#;
        let info: ProcessInfo = serde_json::from_str(old).unwrap();
        assert_eq!(info.container, None);
        assert_eq!(info.cgroup.as_deref(), Some("docker:3f2a1b9c8d7e"));
    }
}
