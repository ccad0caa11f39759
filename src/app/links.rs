//! Cross-links between the tabs: the findings list (`!`, Enter goes to a
//! finding's evidence) and `x`, which goes from a row to its related rows:
//! an interface to the flows on its addresses, a socket to its flow, a flow
//! to its process's sockets.

use super::App;
use super::flows::Grouping;
use super::tabs::Tab;
use crate::findings::Evidence;
use crate::model::socket_table::Socket;
use crate::model::sockets::SocketKey;
use crate::model::{InterfaceRef, Sample, netns};
use std::net::SocketAddr;

/// The findings list's state while it is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FindingsList {
    pub selected: usize,
}

impl App {
    /// Opens the tab of `evidence` with its row selected (or marked).
    pub fn go_to_evidence(&mut self, evidence: &Evidence) {
        self.close_help();
        match evidence.tab {
            "interfaces" => {
                self.tab = Tab::Interfaces;
                self.interfaces.filter.clear();
                self.interfaces.detail = false;
                self.interfaces.selected = Some(InterfaceRef {
                    netns: evidence.netns.unwrap_or(netns::PRIMARY),
                    name: evidence.row.clone(),
                });
            }
            "sockets" => {
                self.tab = Tab::Sockets;
                self.select_socket_by_text(&evidence.row);
            }
            "tcp" => {
                self.tab = Tab::Tcp;
                self.tcp.mark(&evidence.row);
            }
            "flows" => {
                self.tab = Tab::Flows;
                self.flows.grouping = Grouping::Flow;
                // A flow's row is "proto src > dst"; a capture-wide finding
                // names the capture interface, which is not a flow.
                self.flows.filter = match evidence.row.split_once(' ') {
                    Some((_, tuple)) if tuple.contains(" > ") => flow_filter(tuple),
                    _ => String::new(),
                };
                self.flows.selected = 0;
            }
            "conntrack" => self.tab = Tab::Conntrack,
            "drops" => {
                self.tab = Tab::Drops;
                self.drops.mark_reason(&evidence.row);
            }
            _ => {}
        }
    }

    /// "local peer" or "local" (a listener): selects that socket, clearing
    /// the filter so it is in the list. Any other row is a filter that
    /// shows a finding's group of sockets ("close-wait pid=2231 :8443").
    fn select_socket_by_text(&mut self, row: &str) {
        let mut parts = row.split_whitespace().map(|p| p.parse::<SocketAddr>());
        let (Some(Ok(local)), peer) = (parts.next(), parts.next()) else {
            self.sockets.filter = row.to_string();
            self.sockets.detail = false;
            self.sockets.selected = None;
            self.sockets.selected_position = 0;
            return;
        };
        let peer = peer.and_then(Result::ok);
        let Some((_, Some(current))) = self.shown_index().map(|i| self.history.pair(i)) else {
            return;
        };
        let found = current
            .sockets
            .iter()
            .find(|s| s.local == local && peer.is_none_or(|p| s.peer == p));
        if let Some(socket) = found {
            self.sockets.filter.clear();
            self.sockets.detail = false;
            self.sockets.selected = Some(socket.key());
        }
    }

    /// `x`: shows the rows `link` points to, in their tab.
    pub(super) fn follow_link(&mut self, link: Link) {
        match link {
            Link::FlowsOnInterface { name, addresses } => {
                self.show_flows();
                // Flows carry addresses, not interfaces: the flows on an
                // interface are those to or from its addresses.
                let hosts: Vec<String> = addresses
                    .iter()
                    .filter_map(|a| a.split('/').next())
                    .filter_map(|ip| ip.parse::<std::net::IpAddr>().ok())
                    .map(|ip| format!("host:{ip}"))
                    .collect();
                if hosts.is_empty() {
                    self.flows.filter.clear();
                    self.flows.message = Some(format!(
                        "{name} has no address: its flows cannot be told apart"
                    ));
                } else {
                    self.flows.filter = hosts.join(" or ");
                    self.flows.message = Some(format!("flows on {name}"));
                }
            }
            Link::FlowOfSocket { local, peer, proto } => {
                self.show_flows();
                self.flows.filter = format!("proto:{proto} host:{local} host:{peer}");
                self.flows.message = Some(if self.flows.capture.is_some() {
                    format!("{proto} flow of socket {local}")
                } else if self.replay.is_some() {
                    format!(
                        "no packets in this recording: the {proto} flow of {local} cannot be shown"
                    )
                } else {
                    format!(
                        "no packets captured (--no-capture): the {proto} flow of {local} cannot be shown"
                    )
                });
            }
            Link::Interface { name } => {
                self.tab = Tab::Interfaces;
                self.interfaces.filter.clear();
                self.interfaces.detail = false;
                self.interfaces.selected = Some(InterfaceRef::primary(&name));
            }
            Link::Sockets { selected, filter } => {
                self.tab = Tab::Sockets;
                self.sockets.detail = false;
                self.sockets.selected = selected;
                self.sockets.filter = filter;
            }
        }
    }

    /// The Flows tab, one row per flow, from the top.
    fn show_flows(&mut self) {
        self.tab = Tab::Flows;
        self.flows.grouping = Grouping::Flow;
        self.flows.selected = 0;
    }
}

/// Where `x` goes from a row: the related rows in another tab.
pub enum Link {
    /// An interface's flows: those to or from its addresses.
    FlowsOnInterface {
        name: String,
        addresses: Vec<String>,
    },
    /// A socket's flow.
    FlowOfSocket {
        local: SocketAddr,
        peer: SocketAddr,
        proto: &'static str,
    },
    /// The watched namespace's interface, selected in the Interfaces tab.
    Interface { name: String },
    /// A flow's process's sockets, or the socket with its 5-tuple.
    Sockets {
        selected: Option<SocketKey>,
        filter: String,
    },
}

/// The Sockets rows of the flow `src > dst` of `proto` in `current`: its
/// process's sockets, or the socket with its 5-tuple when no process is
/// known.
pub fn sockets_of_flow(current: &Sample, proto: &str, src: SocketAddr, dst: SocketAddr) -> Link {
    let matches = |s: &Socket| {
        s.proto.name() == proto
            && ((s.local == src && s.peer == dst) || (s.local == dst && s.peer == src))
    };
    let socket = current.sockets.iter().find(matches);
    let pid = socket.and_then(|s| s.users.first()).map(|u| u.pid);
    Link::Sockets {
        selected: socket.map(|s| s.key()),
        filter: match pid {
            Some(pid) => format!("pid:{pid}"),
            None => format!("proto:{proto} host:{src} host:{dst}"),
        },
    }
}

/// The Flows filter that shows one flow whichever side spoke first.
fn flow_filter(tuple: &str) -> String {
    match tuple.split_once(" > ") {
        Some((a, b)) => format!("host:{a} host:{b}"),
        None => tuple.to_string(),
    }
}
