//! An incident bundle's summary.md: what a person reads first. Built from
//! the samples the bundle holds, as they are written (`Summary::observe`),
//! then rendered section by section (`SECTIONS`): each section is one
//! function of the whole `Summary`, returning None when it has nothing to
//! say.

use super::date_time;
use crate::findings::{Finding, Thresholds, names::NAMES};
use crate::model::Sample;
use crate::model::closed::{ClosedConn, Ending};
use crate::model::socket_table::Socket;
use crate::notify::{Change, Changes};
use std::fmt::Write;

/// Rows in each top list.
const TOP: usize = 10;

/// A finding seen in the bundle: when it started and cleared.
#[derive(Debug, Clone)]
pub struct Span {
    pub finding: Finding,
    pub started: f64,
    pub cleared: Option<f64>,
}

/// What froze the bundle.
#[derive(Debug, Clone)]
pub struct Trigger {
    /// The finding id, or "manual" (the live view's key).
    pub id: String,
    /// Wall-clock time of the start (or of the key press).
    pub t: f64,
}

pub struct Summary {
    pub trigger: Trigger,
    pub host: String,
    changes: Changes,
    limits: Thresholds,
    pub spans: Vec<Span>,
    pub first: Option<Sample>,
    pub at_start: Option<Sample>,
    pub last: Option<Sample>,
    pub samples: u64,
    pub packets: u64,
    /// Whether the source captured packets at all.
    pub capture: bool,
    /// The connection log over the bundle: whether any sample carried one,
    /// how many connections ended, how many badly by ending, and the last
    /// bad ones (at most `TOP_BAD`).
    log_seen: bool,
    ended: u64,
    bad_by_ending: std::collections::BTreeMap<&'static str, u64>,
    bad: std::collections::VecDeque<ClosedConn>,
}

/// Rows in the "ended badly" list: the newest.
const TOP_BAD: usize = 20;

impl Summary {
    pub fn new(trigger: Trigger, host: String, limits: Thresholds, capture: bool) -> Summary {
        Summary {
            trigger,
            host,
            changes: Changes::default(),
            limits,
            spans: Vec::new(),
            first: None,
            at_start: None,
            last: None,
            samples: 0,
            packets: 0,
            capture,
            log_seen: false,
            ended: 0,
            bad_by_ending: Default::default(),
            bad: Default::default(),
        }
    }

    /// Takes the next sample of the bundle.
    pub fn observe(&mut self, previous: Option<&Sample>, sample: &Sample) {
        for (change, finding) in self.changes.step(previous, sample, &self.limits) {
            match change {
                Change::Start => self.spans.push(Span {
                    started: finding.hold.since.min(sample.t),
                    finding,
                    cleared: None,
                }),
                Change::Clear => {
                    if let Some(span) = self.spans.iter_mut().rev().find(|s| {
                        s.cleared.is_none()
                            && s.finding.id == finding.id
                            && s.finding.evidence.row == finding.evidence.row
                    }) {
                        span.cleared = Some(sample.t);
                    }
                }
            }
        }
        self.samples += 1;
        if let Some(closed) = &sample.closed {
            self.log_seen |= closed.error.is_none();
            self.ended += closed.conns.len() as u64 + closed.overflow;
            for conn in closed.conns.iter().filter(|c| c.ending != Ending::Fin) {
                *self.bad_by_ending.entry(conn.ending.name()).or_default() += 1;
                if self.bad.len() == TOP_BAD {
                    self.bad.pop_front();
                }
                self.bad.push_back(conn.clone());
            }
        }
        if self.first.is_none() {
            self.first = Some(without_sockets(sample));
        }
        if self.at_start.is_none() && sample.t >= self.trigger.t {
            self.at_start = Some(sample.clone());
        }
        self.last = Some(without_sockets(sample));
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        for section in SECTIONS {
            if let Some(text) = section(self) {
                out.push_str(&text);
                out.push('\n');
            }
        }
        out
    }
}

/// The sections of summary.md, in order.
const SECTIONS: &[fn(&Summary) -> Option<String>] = &[
    title,
    when,
    findings,
    top_interfaces,
    top_flows,
    top_sockets,
    connections_ended_badly,
    packets,
];

/// Only the first, start and last samples are kept whole; the rest needs
/// no sockets.
fn without_sockets(sample: &Sample) -> Sample {
    let mut copy = Sample {
        sockets: Default::default(),
        ..sample.clone()
    };
    if let Some(capture) = copy.capture.as_mut() {
        capture.flows.clear();
    }
    copy
}

fn when_text(t: f64) -> String {
    format!("{} UTC", date_time(t, 0))
}

fn title(s: &Summary) -> Option<String> {
    let netns = s.last.as_ref().map_or("host", |l| l.netns.as_str());
    Some(format!(
        "# netlens incident: {} on {} (netns {netns}), {}\n",
        s.trigger.id,
        s.host,
        when_text(s.trigger.t)
    ))
}

fn when(s: &Summary) -> Option<String> {
    let mut out = String::from("## When\n\n");
    let trigger = s.spans.iter().find(|span| span.finding.id == s.trigger.id);
    let _ = writeln!(out, "- started: {}", when_text(s.trigger.t));
    let _ = match (trigger, &s.last) {
        (
            Some(Span {
                cleared: Some(t), ..
            }),
            _,
        ) => writeln!(out, "- cleared: {}", when_text(*t)),
        (Some(_), Some(last)) => writeln!(
            out,
            "- cleared: not within the bundle (still raised at {})",
            when_text(last.t)
        ),
        _ => writeln!(out, "- cleared: (frozen by hand)"),
    };
    if let (Some(first), Some(last)) = (&s.first, &s.last) {
        let _ = writeln!(
            out,
            "- the bundle holds {} samples, {} to {}",
            s.samples,
            when_text(first.t),
            when_text(last.t)
        );
    }
    Some(out)
}

fn findings(s: &Summary) -> Option<String> {
    let mut out = String::from("## Findings\n\n");
    if s.spans.is_empty() {
        out.push_str("No finding showed in the bundle's samples.\n");
        return Some(out);
    }
    for span in &s.spans {
        let f = &span.finding;
        let _ = writeln!(
            out,
            "### {} ({}): {}\n",
            f.id,
            f.severity.label(),
            f.summary
        );
        let cleared = span
            .cleared
            .map_or("not within the bundle".into(), when_text);
        let _ = writeln!(
            out,
            "- started: {}; cleared: {cleared}",
            when_text(span.started)
        );
        let _ = writeln!(
            out,
            "- evidence: {} tab, {}",
            f.evidence.tab, f.evidence.row
        );
        if !f.hint.is_empty() {
            let _ = writeln!(out, "- hint: {}", f.hint);
        }
        if let Some(entry) = NAMES.iter().find(|e| e.id == f.id) {
            let _ = writeln!(out, "- what it means: {}", entry.means);
            let _ = writeln!(out, "- fix: {}", entry.fix);
        }
        out.push('\n');
    }
    Some(out)
}

/// Interfaces by bytes moved over the bundle.
fn top_interfaces(s: &Summary) -> Option<String> {
    let (first, last) = (s.first.as_ref()?, s.last.as_ref()?);
    let mut rows: Vec<(u64, u64, &str)> = last
        .interfaces
        .iter()
        .map(|iface| {
            let before = first.interfaces.iter().find(|i| i.name == iface.name);
            let delta = |now: u64, then: Option<u64>| now.saturating_sub(then.unwrap_or(now));
            (
                delta(iface.counters.rx_bytes, before.map(|b| b.counters.rx_bytes)),
                delta(iface.counters.tx_bytes, before.map(|b| b.counters.tx_bytes)),
                iface.name.as_str(),
            )
        })
        .collect();
    rows.sort_by_key(|&(rx, tx, _)| std::cmp::Reverse(rx + tx));
    let mut out = String::from("## Top talkers: interfaces (bytes over the bundle)\n\n");
    out.push_str("| interface | received | sent |\n| --- | ---: | ---: |\n");
    for (rx, tx, name) in rows.iter().take(TOP) {
        let _ = writeln!(out, "| {name} | {rx} | {tx} |");
    }
    Some(out)
}

/// Flows by bytes at the start (from the capture).
fn top_flows(s: &Summary) -> Option<String> {
    let start = s.at_start.as_ref()?;
    let mut flows: Vec<_> = start.capture.as_ref()?.flows.iter().collect();
    if flows.is_empty() {
        return None;
    }
    flows.sort_by_key(|f| std::cmp::Reverse(f.bytes));
    let mut out = String::from("## Top talkers: flows at the start\n\n");
    out.push_str("| proto | source | destination | packets | bytes | retransmits |\n");
    out.push_str("| --- | --- | --- | ---: | ---: | ---: |\n");
    for f in flows.iter().take(TOP) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            f.proto, f.src, f.dst, f.packets, f.bytes, f.retransmits
        );
    }
    Some(out)
}

/// Sockets by queued bytes and by retransmits, at the start.
fn top_sockets(s: &Summary) -> Option<String> {
    let start = s.at_start.as_ref()?;
    if start.sockets.is_empty() {
        return None;
    }
    let mut out = String::from("## Top sockets at the start\n\n");
    let row = |out: &mut String, socket: &Socket, value: u64| {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {value} | {} |",
            socket.proto.name(),
            socket.state_name(),
            socket.local_text(),
            socket.peer_text(),
            crate::findings::process_of(socket)
        );
    };
    let head = |what: &str| {
        format!(
            "| proto | state | local | peer | {what} | process |\n| --- | --- | --- | --- | ---: | --- |\n"
        )
    };
    let mut by_queue: Vec<_> = start
        .sockets
        .iter()
        .filter(|s| s.recv_q + s.send_q > 0)
        .collect();
    by_queue.sort_by_key(|s| std::cmp::Reverse(u64::from(s.recv_q) + u64::from(s.send_q)));
    out.push_str("By queue (Recv-Q + Send-Q):\n\n");
    out.push_str(&head("queued"));
    for socket in by_queue.iter().take(TOP) {
        row(
            &mut out,
            socket,
            u64::from(socket.recv_q) + u64::from(socket.send_q),
        );
    }
    let retrans = |s: &Socket| s.tcp.as_ref().map_or(0, |t| t.total_retrans);
    let mut by_retrans: Vec<_> = start.sockets.iter().filter(|s| retrans(s) > 0).collect();
    by_retrans.sort_by_key(|s| std::cmp::Reverse(retrans(s)));
    out.push_str("\nBy retransmits (TCP, total):\n\n");
    out.push_str(&head("retransmits"));
    for socket in by_retrans.iter().take(TOP) {
        row(&mut out, socket, u64::from(retrans(socket)));
    }
    Some(out)
}

/// Connections that ended badly (reset, timed out, refused) in the
/// bundle's window, from the connection log the samples carry: the count
/// by ending, then the newest of them.
fn connections_ended_badly(s: &Summary) -> Option<String> {
    if !s.log_seen {
        return None;
    }
    let mut out = String::from(
        "## Connections that ended badly

",
    );
    let bad: u64 = s.bad_by_ending.values().sum();
    if bad == 0 {
        let _ = writeln!(
            out,
            "None: all {} TCP connections that ended in the window closed with a FIN.",
            s.ended
        );
        return Some(out);
    }
    let counts: Vec<String> = s
        .bad_by_ending
        .iter()
        .map(|(ending, n)| format!("{ending} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "{bad} of the {} TCP connections that ended in the window did not close with a FIN \
         ({}); the newest {}:\n",
        s.ended,
        counts.join(", "),
        s.bad.len()
    );
    out.push_str(
        "| time | process | local | peer | sent | received | rtt ms | retrans | ending |\n",
    );
    out.push_str("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n");
    let bytes = |b: Option<u64>| b.map_or_else(|| "-".to_string(), |b| b.to_string());
    for conn in s.bad.iter().rev() {
        let process = conn.pid().map_or_else(
            || "-".to_string(),
            |pid| format!("{pid}/{}", conn.process()),
        );
        let _ = writeln!(
            out,
            "| {} | {process} | {} | {} | {} | {} | {:.1} | {} | {} |",
            date_time(conn.t, 0),
            conn.local,
            conn.peer,
            bytes(conn.bytes_sent),
            bytes(conn.bytes_received),
            f64::from(conn.rtt_us) / 1000.0,
            conn.retrans,
            conn.ending.name()
        );
    }
    Some(out)
}

fn packets(s: &Summary) -> Option<String> {
    let mut out = String::from("## Packets\n\n");
    let _ = if s.capture {
        writeln!(
            out,
            "packets.pcapng holds the {} packets captured in the bundle's window \
             (each cut to the capture's snap length, noted with its interface and the \
             process and container it belonged to; open it with tcpdump -n -r packets.pcapng \
             or Wireshark).",
            s.packets
        )
    } else {
        writeln!(
            out,
            "Capture was off (no permission, --no-capture, or netlens export, which does \
             not capture): packets.pcapng is a valid pcapng file with no packets."
        )
    };
    out.push_str(
        "\nThe bundle: recording.nlrec (netlens replay BUNDLE-DIR), packets.pcapng, \
         snapshot.json (the sample at the start, as netlens snapshot --json prints it), \
         this summary.md.\n",
    );
    Some(out)
}
