//! The Sockets table's columns: one row each, with its sort comparison
//! and its cell (app/sockets.rs holds the view, ui/sockets.rs draws it).

use super::format::fit_endpoint;
use super::names::Names;
use super::sockets::{Column, flag};
use super::table::spec;
use super::table::{self, Align, CellText, Hint};
use crate::findings::Thresholds;
use crate::model::Sample;
use crate::model::processes::Container;
use crate::model::socket_table::Socket;
use std::cmp::Ordering;
use std::collections::HashMap;

/// What a cell is drawn with besides its socket.
pub struct SocketCell<'a> {
    pub sample: &'a Sample,
    pub containers: &'a Containers<'a>,
    pub names: &'a Names,
    /// The row's flag (FULL, OVFL, STUCK).
    pub marked: Option<&'static str>,
    /// The flag again when the Flag column is off screen: it leads State.
    pub state_flag: Option<&'static str>,
}

/// A column's sort comparison (the thresholds say what is STUCK), and its
/// cell text in its width.
type Sort = fn(&Socket, &Socket, &Thresholds) -> Ordering;
type Text = fn(&Socket, &SocketCell<'_>, u16) -> CellText;
pub type ColumnSpec = table::ColumnSpec<Column, Sort, Text>;

use Align::{Left, Right};

/// Table order. Priorities: the local endpoint and the queues first (a
/// 40-column pane shows which socket holds how much), then State and Peer,
/// then the process (what an SRE asks next): at 80 columns exactly those six
/// fit, at 50 Local, the queues and State. Net and Flag come back from 90
/// columns (FULL/STUCK rows are highlighted anyway); rtt, cwnd, retr after.
pub const COLUMNS: &[ColumnSpec] = &[
    spec(
        (Column::Netns, "NS", 12, 2),
        Left,
        |a, b, _| a.netns.cmp(&b.netns),
        |s, c, width| super::format::netns_cell(c.sample, s.netns, width).into(),
    ),
    spec(
        (Column::Proto, "Net", 4, 4),
        Left,
        |a, b, _| a.proto.cmp(&b.proto),
        |s, _, _| s.proto.name().into(),
    ),
    // Width 11 for "STUCK ESTAB": the flag leads the state when Flag is off
    // screen.
    spec(
        (Column::State, "State", 11, 2),
        Left,
        |a, b, _| a.state_name().cmp(b.state_name()),
        |s, c, _| CellText {
            flag: c.state_flag,
            ..s.state_name().into()
        },
    ),
    // Ties by the other queue, so the default (RcvQ, largest first) still
    // brings every queued socket up.
    spec(
        (Column::RecvQ, "RcvQ/acc", 9, 1),
        Right,
        |a, b, _| (a.recv_q, queues(a)).cmp(&(b.recv_q, queues(b))),
        |s, _, _| s.recv_q.to_string().into(),
    ),
    spec(
        (Column::SendQ, "SndQ/max", 9, 1),
        Right,
        |a, b, _| (a.send_q, queues(a)).cmp(&(b.send_q, queues(b))),
        |s, _, _| s.send_q.to_string().into(),
    ),
    spec(
        (Column::Local, "Local", 17, 0),
        Left,
        |a, b, _| a.local.cmp(&b.local),
        |s, c, width| fit_endpoint(&local_name(s, c.names), width).into(),
    ),
    spec(
        (Column::Peer, "Peer", 17, 2),
        Left,
        |a, b, _| a.peer.cmp(&b.peer),
        |s, c, width| fit_endpoint(&peer_name(s, c.names), width).into(),
    ),
    spec(
        (Column::Flag, "Flag", 5, 4),
        Left,
        |a, b, limits| flag(a, false, limits).cmp(&flag(b, false, limits)),
        |_, c, _| CellText::styled(c.marked.unwrap_or(""), Hint::Alert),
    ),
    spec(
        (Column::Process, "Process", 11, 3),
        Left,
        |a, b, _| process_bytes(a).cmp(process_bytes(b)),
        |s, c, _| owner_cell(s, c.containers).into(),
    ),
    spec(
        (Column::Rtt, "rtt ms", 7, 4),
        Right,
        |a, b, _| rtt(a).cmp(&rtt(b)),
        |s, _, _| match s.tcp {
            Some(t) => format!("{:.1}", f64::from(t.rtt_us) / 1000.0).into(),
            None => "–".into(),
        },
    ),
    spec(
        (Column::Cwnd, "cwnd", 5, 4),
        Right,
        |a, b, _| cwnd(a).cmp(&cwnd(b)),
        |s, _, _| s.tcp.map_or("–".into(), |t| t.cwnd.to_string()).into(),
    ),
    spec(
        (Column::Retrans, "retr", 5, 4),
        Right,
        |a, b, _| retrans(a).cmp(&retrans(b)),
        |s, _, _| {
            s.tcp
                .map_or("–".into(), |t| t.total_retrans.to_string())
                .into()
        },
    ),
];

fn rtt(s: &Socket) -> u32 {
    s.tcp.map_or(0, |t| t.rtt_us)
}

fn cwnd(s: &Socket) -> u32 {
    s.tcp.map_or(0, |t| t.cwnd)
}

fn retrans(s: &Socket) -> u32 {
    s.tcp.map_or(0, |t| t.total_retrans)
}

fn queues(s: &Socket) -> u64 {
    u64::from(s.recv_q) + u64::from(s.send_q)
}

/// Two sockets by `column` (its descriptor's sort).
pub fn compare(a: &Socket, b: &Socket, column: Column, limits: &Thresholds) -> Ordering {
    let spec = COLUMNS.iter().find(|spec| spec.column == column);
    spec.map_or(Ordering::Equal, |spec| (spec.sort)(a, b, limits))
}

/// The bytes of `process_names` (names joined by commas, repeats
/// dropped), without building the string: a sort compares them ~20 times
/// per socket.
fn process_bytes<'a>(socket: &Socket<'a>) -> impl Iterator<Item = u8> + 'a {
    let mut last = None;
    socket
        .users
        .iter()
        .map(|user| user.process.as_str())
        .filter(move |&name| last.replace(name) != Some(name))
        .enumerate()
        .flat_map(|(i, name)| (i > 0).then_some(b',').into_iter().chain(name.bytes()))
}

/// "users:(("web",pid=42,fd=3))" text for a socket, or why there is none.
pub fn owner_text(socket: &Socket) -> String {
    if let Some(names) = socket.process_names() {
        let pids: Vec<String> = socket.users.iter().map(|u| u.pid.to_string()).collect();
        format!("{names}/{}", pids.join(","))
    } else if socket.owner_denied {
        "unknown (no permission)".into()
    } else if socket.owner_pending {
        "(looking)".into()
    } else {
        "–".into()
    }
}

/// The sample's containers by pid (model::processes::containers_by_pid).
pub type Containers<'a> = HashMap<u32, &'a Container>;

/// The container of the socket's owner (its first user).
pub fn container_of<'a>(socket: &Socket, containers: &Containers<'a>) -> Option<&'a Container> {
    containers.get(&socket.users.first()?.pid).copied()
}

/// The Process cell: the owner, led by its container's name in brackets
/// ("[web] httpd/42") so a narrow cell still says where it runs.
pub fn owner_cell(socket: &Socket, containers: &Containers) -> String {
    match container_of(socket, containers) {
        Some(c) => format!("[{}] {}", c.label(), owner_text(socket)),
        None => owner_text(socket),
    }
}

/// The local end, named when names are on (N).
pub fn local_name(socket: &Socket, names: &Names) -> String {
    names.endpoint(socket.proto.name(), &socket.local_text())
}

/// The peer, named when names are on (N).
pub fn peer_name(socket: &Socket, names: &Names) -> String {
    names.endpoint(socket.proto.name(), &socket.peer_text())
}
