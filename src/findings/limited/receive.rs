//! conn:rcvbuf-limited, the receiver's side of a window-limited
//! connection: a host that only receives sees no rwnd_limited (that is the
//! sender's count), but its own tcp_info says the same. The largest window
//! it advertises (rcv_ssthresh) at the RTT it measured (rcv_rtt) is the
//! most the sender may deliver; a group that received nearly that much
//! while its application kept up (a short Recv-Q) is held by this host's
//! receive buffer.

use super::{
    Context, Verdict, connections, local_receiver, mbit, sockets_row, subnet, subnet_text,
};
use crate::findings::catalogue::conns::RCVBUF_LIMITED;
use crate::findings::{Evidence, Finding, Hold, backlog_size, process_of};
use crate::model::Sample;
use crate::model::netns::PRIMARY;
use crate::model::socket_table::Socket;
use foldhash::HashMap;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// A group's connections received at least this many windows over the
/// interval: the window was full round after round, not once.
const MIN_WINDOWS: u64 = 4;

/// One process's receiving connections from one subnet, over the
/// interval.
#[derive(Default)]
struct Receivers<'a> {
    connections: u32,
    /// Bytes received over the interval.
    received: u64,
    /// What the windows let through, bytes a second: the sum of each
    /// connection's rcv_ssthresh / rcv_rtt.
    cap_per_s: f64,
    /// Their windows and their unread bytes (Recv-Q), summed.
    windows: u64,
    unread: u64,
    /// The connection that received the most: its window, RTT and buffer
    /// are the ones named.
    busiest: Option<(u64, Socket<'a>)>,
}

/// The receiving groups of one evaluation, keyed as the senders' are.
#[derive(Default)]
pub(super) struct Groups<'a> {
    groups: HashMap<(u16, Option<u32>, IpAddr), Receivers<'a>>,
}

impl<'a> Groups<'a> {
    /// Counts `socket` (with its state at the previous sample, `then`)
    /// when it received over the interval.
    pub(super) fn add(&mut self, socket: Socket<'a>, then: Option<&Socket>) {
        let (Some(limits), Some(info)) = (socket.limits, socket.tcp.as_ref()) else {
            return;
        };
        if limits.rcv_rtt_us == 0 || limits.rcv_ssthresh == 0 {
            return;
        }
        // Only a connection that was receiving at the previous sample too:
        // one that was idle then keeps no limits, and its whole count
        // since it began is not this interval's.
        let Some(then) = then.and_then(|s| s.tcp.as_ref()) else {
            return;
        };
        let received = info.bytes_received.saturating_sub(then.bytes_received);
        if received == 0 {
            return;
        }
        let pid = socket.users.first().map(|u| u.pid);
        let group = self
            .groups
            .entry((socket.netns, pid, subnet(socket.peer)))
            .or_default();
        group.connections += 1;
        group.received += received;
        group.cap_per_s += f64::from(limits.rcv_ssthresh) / (f64::from(limits.rcv_rtt_us) / 1e6);
        group.windows += u64::from(limits.rcv_ssthresh);
        group.unread += u64::from(socket.recv_q);
        if group.busiest.is_none_or(|(most, _)| received > most) {
            group.busiest = Some((received, socket));
        }
    }

    pub(super) fn findings(
        self,
        previous: &Sample,
        current: &Sample,
        seconds: f64,
    ) -> Vec<Finding> {
        findings(self.groups, previous, current, seconds)
    }
}

fn findings(
    groups: HashMap<(u16, Option<u32>, IpAddr), Receivers>,
    previous: &Sample,
    current: &Sample,
    seconds: f64,
) -> Vec<Finding> {
    let groups: BTreeMap<_, _> = groups.into_iter().collect();
    groups
        .into_iter()
        .filter_map(|((netns, pid, net), group)| {
            let knobs = current.tcp.as_ref().filter(|_| netns == PRIMARY);
            let cx = Context {
                previous,
                current,
                seconds,
                knobs,
                connections: connections(group.connections),
            };
            let verdict = judge(&group, &cx)?;
            let (_, busiest) = group.busiest?;
            let from = subnet_text(net);
            let row = sockets_row(pid, &from);
            Some(Finding {
                hold: Hold::default(),
                id: verdict.entry.finding,
                severity: verdict.entry.level.into(),
                summary: format!("{} <- {from}: {}", process_of(&busiest), verdict.summary),
                hint: verdict.hint,
                evidence: Evidence {
                    netns: Some(netns),
                    tab: "sockets",
                    row,
                },
            })
        })
        .collect()
}

fn judge(group: &Receivers, cx: &Context) -> Option<Verdict> {
    let (_, busiest) = group.busiest?;
    let per_s = group.received as f64 / cx.seconds;
    let share = 100.0 * per_s / group.cap_per_s;
    if share < RCVBUF_LIMITED.threshold
        || group.received < MIN_WINDOWS * group.windows
        // A Recv-Q of half the window or more: the application is slow to
        // read, which is its own finding (the window closes for it).
        || 2 * group.unread >= group.windows
        // The sender is this host's own socket: its conn:rwnd-limited
        // names this receiver and the fix, once.
        || local_receiver(cx.current, &busiest).is_some()
    {
        return None;
    }
    let limits = busiest.limits?;
    let rtt_ms = f64::from(limits.rcv_rtt_us) / 1000.0;
    let summary = format!(
        "this host's receive window holds the sender: {} received {}, {share:.0}% of what \
         the window lets through (window {} at {rtt_ms:.1} ms RTT caps it near {})",
        cx.connections,
        mbit(per_s),
        backlog_size(u64::from(limits.rcv_ssthresh)),
        mbit(f64::from(limits.rcv_ssthresh) / (rtt_ms / 1000.0)),
    );
    Verdict::new(&RCVBUF_LIMITED, summary, fix(&busiest, cx))
}

/// Which setting holds the buffer: the application's SO_RCVBUF when the
/// buffer is below autotuning's ceiling (autotuning would have grown it),
/// else that ceiling, net.ipv4.tcp_rmem's maximum.
fn fix(socket: &Socket, cx: &Context) -> String {
    let rmem = cx.knobs.and_then(|t| t.knob("net.ipv4.tcp_rmem"));
    let ceiling = rmem
        .and_then(|v| v.split_whitespace().nth(2))
        .and_then(|max| max.parse::<u32>().ok());
    let rmem = cx.value("net.ipv4.tcp_rmem");
    match (socket.rcvbuf, ceiling) {
        (Some(rb), Some(max)) if rb < max => format!(
            "its receive buffer is {} (ss's rb), below net.ipv4.tcp_rmem's maximum{rmem}: \
             the application set SO_RCVBUF, which turns autotuning off for the socket; \
             raise it, or leave it unset for autotuning to grow the buffer",
            backlog_size(u64::from(rb))
        ),
        (Some(rb), Some(_)) => format!(
            "autotuning grew the receive buffer to net.ipv4.tcp_rmem's maximum{rmem} ({} \
             rb): raise that maximum, the third value",
            backlog_size(u64::from(rb))
        ),
        _ => format!(
            "a larger receive buffer on this host: the application's SO_RCVBUF, else \
             net.ipv4.tcp_rmem's maximum{rmem}"
        ),
    }
}
