//! Where a connection's data waits: in a queue on the way (its RTT above
//! the lowest seen), this host's qdisc's share of that, or the socket's
//! own unsent bytes before they reach the network.

use super::{Context, Group, Verdict, mbit};
use crate::findings::backlog_size;
use crate::findings::catalogue::conns::{QUEUEING, UNSENT_WAIT};
use crate::model::rates::links_interval;
use crate::model::socket_table::Socket;
use crate::model::{InterfaceSample, Sample};

/// conn:queueing for the group's busiest connection: its queueing delay
/// (srtt - min_rtt), and where the wait is: this host's qdisc on the
/// interface holding the connection's local address when that qdisc's
/// backlog, drained at the rate the qdisc sent over the interval, is at
/// least half the delay; else further on the path.
pub(super) fn queueing(socket: &Socket, cx: &Context) -> Option<Verdict> {
    let srtt_ms = f64::from(socket.tcp.as_ref()?.rtt_us) / 1000.0;
    let min_ms = f64::from(socket.limits?.min_rtt_us) / 1000.0;
    let wait_ms = srtt_ms - min_ms;
    if min_ms <= 0.0 || wait_ms < QUEUEING.threshold || wait_ms < srtt_ms / 2.0 {
        return None;
    }
    let unsent = socket.limits.map_or(0, |l| l.notsent_bytes);
    let unsent = if unsent > 0 {
        format!(
            "; {} more wait unsent in the socket",
            backlog_size(u64::from(unsent))
        )
    } else {
        String::new()
    };
    let summary = format!(
        "{} waiting in a queue: RTT {srtt_ms:.1} ms against {min_ms:.2} ms at best",
        cx.connections
    );
    let here = egress(cx.current, socket).and_then(|iface| {
        let seconds = links_interval(cx.previous, cx.current, iface.netns);
        qdisc_wait(cx.previous, seconds, iface)
    });
    match here {
        Some((iface, kind, backlog, qdisc_ms)) if qdisc_ms >= wait_ms / 2.0 => Verdict::new(
            &QUEUEING,
            format!(
                "{summary}, {wait_ms:.0} ms of it in this host's {kind} qdisc on {iface} \
                 (backlog {}, about {qdisc_ms:.0} ms at its rate){unsent}",
                backlog_size(backlog)
            ),
            format!(
                "the queue is this host's: shorten it with the qdisc's limit or a shaper's \
                 latency or burst (tc -s qdisc show dev {iface}), or an AQM qdisc such as \
                 fq_codel; more buffer only adds delay"
            ),
        ),
        _ => Verdict::new(
            &QUEUEING,
            format!(
                "{summary}: {wait_ms:.0} ms queued further on the path (this host's qdisc \
                 holds no such backlog){unsent}"
            ),
            format!(
                "a buffer between here and {}: netlens trace {} shows the hop where the \
                 delay begins",
                socket.peer.ip(),
                socket.peer.ip()
            ),
        ),
    }
}

/// The interface holding the socket's local address, in its namespace.
fn egress<'a>(current: &'a Sample, socket: &Socket) -> Option<&'a InterfaceSample> {
    let local = socket.local.ip().to_string();
    current.interfaces.iter().find(|i| {
        i.netns == socket.netns
            && i.addresses
                .iter()
                .any(|a| a.split('/').next() == Some(local.as_str()))
    })
}

/// The interface's root qdisc: its name, kind, backlog in bytes and how
/// many milliseconds that backlog takes at the rate the qdisc sent over
/// the `seconds` since `previous`.
fn qdisc_wait<'a>(
    previous: &Sample,
    seconds: f64,
    iface: &'a InterfaceSample,
) -> Option<(&'a str, &'a str, u64, f64)> {
    let now = iface.qdisc.as_ref()?;
    let before = previous
        .interfaces
        .iter()
        .find(|i| i.netns == iface.netns && i.index == iface.index)?
        .qdisc
        .as_ref()?;
    let per_s = now.bytes.checked_sub(before.bytes)? as f64 / seconds;
    (per_s > 0.0).then(|| {
        let ms = now.backlog_bytes as f64 / per_s * 1000.0;
        (
            iface.name.as_str(),
            now.kind.as_str(),
            now.backlog_bytes,
            ms,
        )
    })
}

/// conn:unsent-wait: what the application writes now waits this long in
/// the socket before it is sent, its unsent bytes at the rate the group
/// delivered over the interval. A queue of the application's own making:
/// the RTT does not show it.
pub(super) fn unsent(group: &Group, cx: &Context) -> Option<Verdict> {
    let per_s = group.acked as f64 / cx.seconds;
    if group.notsent == 0 || per_s <= 0.0 {
        return None;
    }
    let wait_ms = group.notsent as f64 / per_s * 1000.0;
    if wait_ms < UNSENT_WAIT.threshold {
        return None;
    }
    Verdict::new(
        &UNSENT_WAIT,
        format!(
            "what the application writes now waits {wait_ms:.0} ms in the socket before it is \
             sent ({} unsent at the {} {} delivered)",
            backlog_size(group.notsent),
            mbit(per_s),
            cx.connections
        ),
        format!(
            "the wait is in the application's own send buffer, not the network: it writes \
             as far ahead as the buffer lets it (its SO_SNDBUF, or net.ipv4.tcp_wmem's \
             default{}). For data that must not wait behind it, TCP_NOTSENT_LOWAT on the \
             socket or net.ipv4.tcp_notsent_lowat{} keeps the unsent part short",
            cx.value("net.ipv4.tcp_wmem"),
            cx.value("net.ipv4.tcp_notsent_lowat")
        ),
    )
}
