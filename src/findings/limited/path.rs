//! What the sender's own accounting says about its rate and its path: a
//! pacing cap the application set, retransmits the receiver reports it did
//! not need (D-SACK), and segments the path delivered out of order.

use super::{Context, Group, Verdict, mbit};
use crate::findings::catalogue::conns::{PACING_CAPPED, REORDERING, SPURIOUS_RETRANS};

/// Fewer retransmits than this over the interval are too few to say what
/// share of them was needless.
const MIN_RETRANS: u64 = 10;

/// conn:pacing-capped: the connections the application capped with
/// SO_MAX_PACING_RATE delivered at least the entry's share of their caps
/// over the interval, so the cap is what holds them.
pub(super) fn paced(group: &Group, cx: &Context) -> Option<Verdict> {
    if group.capped == 0 || group.caps == 0 {
        return None;
    }
    let per_s = group.capped_acked as f64 / cx.seconds;
    let share = 100.0 * per_s / group.caps as f64;
    if share < PACING_CAPPED.threshold {
        return None;
    }
    let cap = match group.cap_range {
        (low, high) if low == high => mbit(low as f64),
        (low, high) => format!("{} to {}", mbit(low as f64), mbit(high as f64)),
    };
    let capped = match (group.capped, group.connections) {
        (1, 1) => "1 connection".to_string(),
        (c, n) if c == n => format!("{n} connections"),
        (c, n) => format!("{c} of {n} connections"),
    };
    let who = group.owner.map_or_else(
        || "the application".to_string(),
        |s| crate::findings::process_of(&s),
    );
    Verdict::new(
        &PACING_CAPPED,
        format!(
            "{capped} capped by the application at {cap} each (SO_MAX_PACING_RATE): they \
             delivered {}, {share:.0}% of the cap",
            mbit(per_s)
        ),
        format!(
            "the rate is the one {who} asked for, not the network's: it sets \
             SO_MAX_PACING_RATE to {cap} on these sockets; raise or remove that in its \
             configuration; no network setting makes them faster"
        ),
    )
}

/// conn:spurious-retrans: at least the entry's share of the group's
/// retransmits over the interval were needless, and why: the path
/// reordered segments (reorderings seen) or the timer fired before the
/// ACK came.
pub(super) fn spurious(group: &Group, cx: &Context) -> Option<Verdict> {
    if group.retrans < MIN_RETRANS {
        return None;
    }
    let dsack = group.dsack.min(group.retrans);
    let share = 100.0 * dsack as f64 / group.retrans as f64;
    if share < SPURIOUS_RETRANS.threshold {
        return None;
    }
    let said = format!(
        "{} retransmitted {} segments, {dsack} ({share:.0}%) needlessly: the receiver already \
         had them (D-SACK)",
        cx.connections, group.retrans
    );
    if reorders(group, cx) {
        return Verdict::new(
            &SPURIOUS_RETRANS,
            format!(
                "{said}, because the path reordered segments ({} reorderings; the sender now \
                 waits for {} segments)",
                group.reord, group.degree
            ),
            reorder_fix(cx),
        );
    }
    let timers = group
        .busiest
        .and_then(|(_, s)| s.tcp)
        .map_or(String::new(), |t| {
            format!(
                " (RTO {:.0} ms, RTT {:.1} ms ± {:.1})",
                f64::from(t.rto_us) / 1000.0,
                f64::from(t.rtt_us) / 1000.0,
                f64::from(t.rttvar_us) / 1000.0
            )
        });
    Verdict::new(
        &SPURIOUS_RETRANS,
        format!("{said}, because its timer fired before the ACK came{timers}"),
        "the path's delay jumps past what the retransmission timer allows: find where \
         (netlens trace DEST); a route's rto_min (ip route change ... rto_min 400ms) \
         makes the timer wait longer"
            .to_string(),
    )
}

/// conn:reordering: the path delivered the group's segments out of order
/// at least the entry's rate, further than the sender's starting tolerance
/// (its needless retransmits, if any, too few for conn:spurious-retrans).
pub(super) fn reordering(group: &Group, cx: &Context) -> Option<Verdict> {
    let per_s = group.reord as f64 / cx.seconds;
    if per_s < REORDERING.threshold || !reorders(group, cx) {
        return None;
    }
    Verdict::new(
        &REORDERING,
        format!(
            "{} saw segments out of order {} times ({per_s:.1}/s); the sender now waits for \
             {} segments before it retransmits (retransmitted {}, {} needlessly)",
            cx.connections,
            group.reord,
            group.degree,
            group.retrans,
            group.dsack.min(group.retrans)
        ),
        reorder_fix(cx),
    )
}

/// The path reorders the group's segments: the sender saw reorderings and
/// had to wait for more segments than it starts with
/// (net.ipv4.tcp_reordering, 3 by default). The kernel also counts a few
/// reorderings around losses on paths that keep order (a shaper that
/// drops, on one veth); those leave the degree where it started.
fn reorders(group: &Group, cx: &Context) -> bool {
    let initial = cx
        .knobs
        .and_then(|t| t.knob("net.ipv4.tcp_reordering"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(3);
    group.reord > 0 && group.degree > initial
}

/// Reordering is the path's: name where it comes from and the settings
/// that only hide it.
fn reorder_fix(cx: &Context) -> String {
    format!(
        "the path reorders one connection's packets: per-packet load balancing (a bond in \
         balance-rr, per-packet multipath), or a shaper or NIC that spreads one flow over \
         several queues; fix it there. The sender adapts up to \
         net.ipv4.tcp_max_reordering{}; net.ipv4.tcp_reordering{} is what it starts with",
        cx.value("net.ipv4.tcp_max_reordering"),
        cx.value("net.ipv4.tcp_reordering")
    )
}
