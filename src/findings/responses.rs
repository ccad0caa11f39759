//! conn:slow-response: a server whose own time dominates its answers, from
//! the capture's request/response timing (`model::responses`), named with
//! the process listening there and its slowest recent request.

use super::catalogue::conns::SLOW_RESPONSE;
use super::{Evidence, Finding, Hold};
use crate::model::Sample;
use crate::model::responses::windows;
use crate::text::escape_control;

/// Requests a server must answer in the interval to be judged.
pub const MIN_ANSWERED: u64 = 5;
/// The server's time must be at least this many network round trips.
pub const RTT_FACTOR: f64 = 4.0;

pub fn evaluate(previous: Option<&Sample>, current: &Sample) -> Vec<Finding> {
    let (Some(previous), Some(now)) = (previous, current.capture.as_ref()) else {
        return Vec::new();
    };
    let before = previous.capture.as_ref().map(|c| c.responses.as_slice());
    windows(&now.responses, before, &current.sockets)
        .into_iter()
        .filter(|(_, w, _)| w.answered >= MIN_ANSWERED)
        .filter(|(_, w, _)| w.server_p50_ms >= SLOW_RESPONSE.threshold)
        .filter(|(_, w, _)| {
            w.rtt_ms
                .is_none_or(|rtt| w.server_p50_ms >= RTT_FACTOR * rtt)
        })
        .map(|(s, w, owner)| {
            let who = owner.map_or_else(
                || "a server".to_string(),
                |u| super::pid_name(u.pid, &u.process.to_string()),
            );
            let rtt = w
                .rtt_ms
                .map_or("an unseen".to_string(), |r| format!("a {r:.1} ms"));
            let slowest = s.slowest.as_ref().map_or(String::new(), |x| {
                let what = match (&x.request, x.status) {
                    (Some(request), Some(status)) => format!("{request} ({status})"),
                    (Some(request), None) => request.clone(),
                    _ => "a request".to_string(),
                };
                format!("; slowest {} {:.0} ms", escape_control(&what), x.ms)
            });
            let port = s.server.rsplit(':').next().unwrap_or_default();
            Finding {
                hold: Hold::default(),
                id: SLOW_RESPONSE.finding,
                severity: SLOW_RESPONSE.level.into(),
                summary: format!(
                    "{who} on {}: {} requests answered in {:.0} ms at the median \
                     (p90 {:.0}, p99 {:.0}) against {rtt} network round trip{slowest}",
                    s.server, w.answered, w.server_p50_ms, w.p90_ms, w.p99_ms
                ),
                hint: format!(
                    "the time is {who}'s, not the network's: {}",
                    SLOW_RESPONSE.fix
                ),
                evidence: Evidence {
                    netns: None,
                    tab: "flows",
                    row: format!("port:{port}"),
                },
            }
        })
        .collect()
}
