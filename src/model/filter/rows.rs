//! `FilterFields` for the rows of a sample, and the lookups a row's
//! namespace, container and peer names come from: each is one function
//! here (`netns_of`, `container_of`, `InSample::names_of`, `sni_of`), so
//! a source of better answers is plugged in at one place.

use super::{End, FilterFields, KnownNames, Side};
use crate::model::Sample;
use crate::model::capture::FlowSample;
use crate::model::closed::ClosedConn;
use crate::model::conntrack::ConntrackEntry;
use crate::model::processes::ProcessRow;
use crate::model::socket_table::Socket;
use std::net::{IpAddr, SocketAddr};

/// A row with the sample it belongs to (for its namespace, its process's
/// container and user) and, while reverse names are on (N, --resolve),
/// the names known for addresses (for `host:NAME`).
pub struct InSample<'a, T> {
    pub row: &'a T,
    pub sample: &'a Sample,
    pub names: Option<&'a KnownNames>,
}

impl<'a, T> InSample<'a, T> {
    pub fn new(row: &'a T, sample: &'a Sample) -> Self {
        Self {
            row,
            sample,
            names: None,
        }
    }

    /// The same row, its ends also named by `names` (reverse DNS).
    pub fn with_names(self, names: Option<&'a KnownNames>) -> Self {
        Self { names, ..self }
    }

    /// The names known for `ip`: the server names (TLS or QUIC SNI, HTTP
    /// Host) the sample's captured flows sent to it, and its reverse name
    /// when names are on and the cache has it.
    pub fn names_of(&self, ip: IpAddr) -> Vec<&'a str> {
        let ip = ip.to_canonical();
        let mut names = host_names_of(self.sample, ip);
        if let Some(name) = self.names.and_then(|known| known.get(&ip)) {
            names.push(name);
        }
        names
    }

    fn names_of_ends(&self, ends: [Option<End>; 2]) -> Vec<&'a str> {
        ends.iter()
            .flatten()
            .filter_map(|e| e.ip)
            .flat_map(|ip| self.names_of(ip))
            .collect()
    }
}

/// The network namespace of a row of `sample` with namespace id `id`
/// (0, the watched one, for rows that carry none).
pub fn netns_of(sample: &Sample, id: u16) -> &str {
    sample.netns_label(id)
}

/// The container of process `pid`: its name as the runtime gave it (else
/// its Kubernetes pod), else the container or cgroup label the process
/// collector read ("docker:3f2a1b9c8d7e", "nginx.service").
pub fn container_of(sample: &Sample, pid: u32) -> Option<&str> {
    let info = sample.processes.iter().find(|p| p.pid == pid)?;
    let named = info
        .container
        .as_ref()
        .and_then(|c| c.name.as_ref().or(c.pod.as_ref()));
    named.or(info.cgroup.as_ref()).map(String::as_str)
}

/// The names the sample knows for `ip`: the server names (TLS or QUIC
/// SNI, HTTP Host) its captured flows sent to it. Reverse DNS names live in
/// the viewer's cache (`N`), not in samples: `InSample::names_of` adds them.
fn host_names_of(sample: &Sample, ip: IpAddr) -> Vec<&str> {
    let ip = ip.to_canonical();
    captured_flows(sample)
        .filter(|f| {
            parse_end(&f.dst)
                .and_then(|e| e.ip)
                .map(|i| i.to_canonical())
                == Some(ip)
        })
        .flat_map(|f| [f.sni.as_deref(), f.http_host.as_deref()])
        .flatten()
        .collect()
}

/// The server name (TLS or QUIC SNI, else HTTP Host) the captured traffic
/// between two ends carried, in either direction.
pub fn sni_of(sample: &Sample, a: End, b: End) -> Option<&str> {
    captured_flows(sample)
        .filter(|f| f.sni.is_some() || f.http_host.is_some())
        .find(|f| {
            let (src, dst) = (parse_end(&f.src), parse_end(&f.dst));
            (same_end(src, a) && same_end(dst, b)) || (same_end(src, b) && same_end(dst, a))
        })
        .and_then(|f| f.sni.as_deref().or(f.http_host.as_deref()))
}

fn captured_flows(sample: &Sample) -> impl Iterator<Item = &FlowSample> {
    sample
        .capture
        .iter()
        .flat_map(|c| c.flows.iter().map(|f| &**f))
}

fn same_end(flow_end: Option<End>, end: End) -> bool {
    flow_end.is_some_and(|f| {
        f.port == end.port && f.ip.map(|i| i.to_canonical()) == end.ip.map(|i| i.to_canonical())
    })
}

/// The name of `uid`, from the processes the sample describes.
fn user_of(sample: &Sample, uid: u32) -> Option<&str> {
    let info = sample.processes.iter().find(|p| p.uid == uid)?;
    Some(&info.user)
}

/// A state as the filter compares it: upper case, '-' between words, ss's
/// short "ESTAB" (flows and conntrack say "ESTABLISHED").
pub fn normal_state(state: &str) -> String {
    let state = state.to_ascii_uppercase().replace('_', "-");
    if state == "ESTABLISHED" {
        "ESTAB".into()
    } else {
        state
    }
}

/// "ip:port", "[v6]:port" or a bare address, as flows and interfaces
/// print their ends ("198.18.0.1/24" too: the length is dropped).
pub fn parse_end(text: &str) -> Option<End> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Some(end(addr));
    }
    let ip = text.split('/').next()?.parse::<IpAddr>().ok()?;
    Some(End {
        ip: Some(ip),
        port: None,
    })
}

fn end(addr: SocketAddr) -> End {
    End {
        ip: Some(addr.ip()),
        port: Some(addr.port()),
    }
}

impl FilterFields for InSample<'_, Socket<'_>> {
    fn shown_text(&self) -> String {
        let s = self.row;
        let (local, peer) = (s.local_text(), s.peer_text());
        let mut text = format!("{} {} {local} {peer}", s.proto.name(), s.state_name());
        // ss's "*:80" is also found as "0.0.0.0:80" or "[::]:80".
        for (shown, plain) in [(local, s.local), (peer, s.peer)] {
            if shown != plain.to_string() {
                text.push_str(&format!(" {plain}"));
            }
        }
        for user in s.users {
            text.push_str(&format!(" {} pid={}", user.process, user.pid));
        }
        text
    }

    fn proto(&self) -> Option<&str> {
        Some(self.row.proto.name())
    }

    fn ends(&self, side: Side) -> Vec<End> {
        let s = self.row;
        match side {
            Side::Src => vec![end(s.local)],
            // A listener's or an unconnected socket's peer is no end.
            Side::Dst if s.peer.port() == 0 && s.peer.ip().is_unspecified() => Vec::new(),
            Side::Dst => vec![end(s.peer)],
        }
    }

    fn states(&self) -> Vec<&str> {
        vec![self.row.state_name()]
    }

    fn processes(&self) -> Vec<(&str, u32)> {
        let users = self.row.users.iter();
        users.map(|u| (u.process.as_str(), u.pid)).collect()
    }

    fn uid(&self) -> Option<u32> {
        Some(self.row.uid)
    }

    fn user(&self) -> Option<&str> {
        user_of(self.sample, self.row.uid)
    }

    fn netns(&self) -> Option<&str> {
        Some(netns_of(self.sample, self.row.netns))
    }

    fn container(&self) -> Option<&str> {
        let owner = self.row.users.first()?;
        container_of(self.sample, owner.pid)
    }

    fn host_names(&self) -> Vec<&str> {
        let s = self.row;
        self.names_of_ends([Some(end(s.local)), Some(end(s.peer))])
    }

    fn sni(&self) -> Option<&str> {
        sni_of(self.sample, end(self.row.local), end(self.row.peer))
    }
}

impl FilterFields for InSample<'_, FlowSample> {
    fn shown_text(&self) -> String {
        let f = self.row;
        let process = match (&f.process, f.pid) {
            (Some(name), Some(pid)) => format!("{name}/{pid}"),
            _ => String::new(),
        };
        format!("{} {} > {} {} {process}", f.proto, f.src, f.dst, f.state)
    }

    fn proto(&self) -> Option<&str> {
        Some(&self.row.proto)
    }

    fn ends(&self, side: Side) -> Vec<End> {
        let text = match side {
            Side::Src => &self.row.src,
            Side::Dst => &self.row.dst,
        };
        parse_end(text).into_iter().collect()
    }

    fn states(&self) -> Vec<&str> {
        vec![self.row.state.as_str()]
    }

    fn processes(&self) -> Vec<(&str, u32)> {
        let f = self.row;
        f.process.as_deref().zip(f.pid).into_iter().collect()
    }

    fn netns(&self) -> Option<&str> {
        Some(netns_of(self.sample, self.row.netns))
    }

    fn container(&self) -> Option<&str> {
        container_of(self.sample, self.row.pid?)
    }

    fn host_names(&self) -> Vec<&str> {
        let f = self.row;
        self.names_of_ends([parse_end(&f.src), parse_end(&f.dst)])
    }

    fn sni(&self) -> Option<&str> {
        let f = self.row;
        f.sni.as_deref().or(f.http_host.as_deref())
    }
}

impl FilterFields for InSample<'_, ProcessRow> {
    fn shown_text(&self) -> String {
        let r = self.row;
        let cgroup = r.cgroup.as_deref().unwrap_or("");
        format!("{} {} {} {cgroup} pid={}", r.pid, r.command, r.user, r.pid)
    }

    fn states(&self) -> Vec<&str> {
        self.row.states.keys().copied().collect()
    }

    fn processes(&self) -> Vec<(&str, u32)> {
        vec![(self.row.command.as_str(), self.row.pid)]
    }

    fn uid(&self) -> Option<u32> {
        let pid = self.row.pid;
        let info = self.sample.processes.iter().find(|p| p.pid == pid)?;
        Some(info.uid)
    }

    fn user(&self) -> Option<&str> {
        Some(&self.row.user)
    }

    fn netns(&self) -> Option<&str> {
        Some(netns_of(self.sample, self.row.netns))
    }

    fn container(&self) -> Option<&str> {
        container_of(self.sample, self.row.pid)
    }

    /// The names of its sockets' ends: a process has no ends of its own
    /// (`port:` matches none), but `host:NAME` finds who talks to NAME.
    fn host_names(&self) -> Vec<&str> {
        let pid = self.row.pid;
        let mut names: Vec<&str> = Vec::new();
        let own = |s: &Socket| s.users.iter().any(|u| u.pid == pid);
        for socket in self.sample.sockets.iter().filter(own) {
            let ends = [Some(end(socket.local)), Some(end(socket.peer))];
            for name in self.names_of_ends(ends) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }
}

/// A conntrack entry answers without its sample: the tab's entries are
/// all of the shown namespace, so `ns:` is not asked of them.
impl FilterFields for ConntrackEntry {
    fn shown_text(&self) -> String {
        let e = self;
        format!(
            "{} {} {} {} {} {}",
            e.proto_name(),
            e.state_name(),
            e.flow_text(),
            e.reply.src_text(),
            e.reply.dst_text(),
            e.nat().label().unwrap_or("")
        )
    }

    fn proto(&self) -> Option<&str> {
        // conntrack::proto_name's names, borrowed.
        Some(match self.proto {
            1 => "icmp",
            2 => "igmp",
            6 => "tcp",
            17 => "udp",
            33 => "dccp",
            47 => "gre",
            58 => "icmp6",
            132 => "sctp",
            136 => "udplite",
            _ => return None,
        })
    }

    /// The original direction's ends and, after NAT, the reply's.
    fn ends(&self, side: Side) -> Vec<End> {
        let (orig, reply) = (&self.orig, &self.reply);
        let pair = match side {
            Side::Src => [(orig.src, orig.sport), (reply.dst, reply.dport)],
            Side::Dst => [(orig.dst, orig.dport), (reply.src, reply.sport)],
        };
        let mut ends: Vec<End> = pair
            .iter()
            .map(|&(ip, port)| End { ip: Some(ip), port })
            .collect();
        ends.dedup();
        ends
    }

    fn states(&self) -> Vec<&str> {
        vec![self.state_name()]
    }
}

impl FilterFields for InSample<'_, ClosedConn> {
    fn shown_text(&self) -> String {
        let c = self.row;
        let mut text = format!("tcp {} {} {}", c.ending.name(), c.local, c.peer);
        for user in &c.users {
            text.push_str(&format!(" {} pid={}", user.process, user.pid));
        }
        text
    }

    fn proto(&self) -> Option<&str> {
        Some("tcp")
    }

    fn ends(&self, side: Side) -> Vec<End> {
        vec![end(match side {
            Side::Src => self.row.local,
            Side::Dst => self.row.peer,
        })]
    }

    fn processes(&self) -> Vec<(&str, u32)> {
        let users = self.row.users.iter();
        users.map(|u| (u.process.as_str(), u.pid)).collect()
    }

    fn netns(&self) -> Option<&str> {
        Some(netns_of(self.sample, 0))
    }

    fn container(&self) -> Option<&str> {
        container_of(self.sample, self.row.pid()?)
    }
}
