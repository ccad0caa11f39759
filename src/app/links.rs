//! Cross-links between the tabs: the findings list (`!`, Enter goes to a
//! finding's evidence) and `x`, which goes from a row to its related rows:
//! an interface to the flows on its addresses, a socket to its flow, a flow
//! to its process's sockets.

use super::App;
use super::flows::Grouping;
use super::tabs::Tab;
use crate::findings::Evidence;
use crate::model::sockets::SocketSample;
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
                self.interfaces.selected = Some(evidence.row.clone());
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
            _ => {}
        }
    }

    /// "local peer" or "local" (a listener): selects that socket, clearing
    /// the filter so it is in the list.
    fn select_socket_by_text(&mut self, row: &str) {
        let mut parts = row.split_whitespace().map(|p| p.parse::<SocketAddr>());
        let (Some(Ok(local)), peer) = (parts.next(), parts.next()) else {
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

    /// `x`: from the selected row to its related rows in another tab.
    pub(super) fn follow_link(&mut self) -> bool {
        let Some((previous, Some(current))) = self.shown_index().map(|i| self.history.pair(i))
        else {
            return false;
        };
        match self.tab {
            Tab::Interfaces => {
                let rows = {
                    self.interfaces.refresh(previous, current);
                    let rows = self.interfaces.rows(current);
                    let index = self.interfaces.selected_index(&rows);
                    index.and_then(|i| rows.get(i)).map(|r| r.iface.clone())
                };
                let Some(iface) = rows else {
                    return false;
                };
                self.tab = Tab::Flows;
                self.flows.grouping = Grouping::Flow;
                self.flows.selected = 0;
                // Flows carry addresses, not interfaces: the flows on an
                // interface are those to or from its addresses.
                let hosts: Vec<String> = iface
                    .addresses
                    .iter()
                    .filter_map(|a| a.split('/').next())
                    .filter_map(|ip| ip.parse::<std::net::IpAddr>().ok())
                    .flat_map(|ip| match ip {
                        // "IP:" before a port, "IP " for a portless (ICMP) flow.
                        std::net::IpAddr::V4(v4) => [format!("{v4}:"), format!("{v4} ")],
                        std::net::IpAddr::V6(v6) => [format!("[{v6}]:"), format!("{v6} ")],
                    })
                    .collect();
                if hosts.is_empty() {
                    self.flows.filter.clear();
                    self.flows.message = Some(format!(
                        "{} has no address: its flows cannot be told apart",
                        iface.name
                    ));
                } else {
                    self.flows.filter = hosts.join("|");
                    self.flows.message = Some(format!("flows on {}", iface.name));
                }
                true
            }
            Tab::Sockets => {
                // The row shown selected, as Enter takes it (nothing may
                // have been chosen with the arrows yet).
                let Some(socket) = self.sockets.selection(current) else {
                    return false;
                };
                let (local, peer, proto) = (socket.local, socket.peer, socket.proto.name());
                self.tab = Tab::Flows;
                self.flows.grouping = Grouping::Flow;
                self.flows.selected = 0;
                self.flows.filter = format!("{local} > {peer}|{peer} > {local}");
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
                true
            }
            Tab::Flows => self.flow_to_sockets(),
            _ => false,
        }
    }

    /// From the selected flow to its process's sockets, or to the socket
    /// with its 5-tuple when no process is known.
    fn flow_to_sockets(&mut self) -> bool {
        if self.flows.grouping != Grouping::Flow {
            self.flows.message = Some("x needs one row per flow (press a)".into());
            return true;
        }
        let rows = self.flow_rows();
        let Some(row) = rows.get(self.flows.selected) else {
            return false;
        };
        let Some((src, dst)) = row.key.split_once(" > ") else {
            return false;
        };
        let (Ok(src), Ok(dst)) = (src.parse::<SocketAddr>(), dst.parse::<SocketAddr>()) else {
            return false;
        };
        let proto = row.proto.clone();
        let Some((_, Some(current))) = self.shown_index().map(|i| self.history.pair(i)) else {
            return false;
        };
        let matches = |s: &&SocketSample| {
            s.proto.name() == proto
                && ((s.local == src && s.peer == dst) || (s.local == dst && s.peer == src))
        };
        let socket = current.sockets.iter().find(matches);
        let key = socket.map(|s| s.key());
        let pid = socket.and_then(|s| s.users.first()).map(|u| u.pid);
        self.tab = Tab::Sockets;
        self.sockets.detail = false;
        self.sockets.selected = key;
        self.sockets.filter = match pid {
            Some(pid) => format!("pid={pid}"),
            None => format!("{proto} {src} {dst}"),
        };
        true
    }
}

/// The Flows filter that shows one flow whichever side spoke first.
fn flow_filter(tuple: &str) -> String {
    match tuple.split_once(" > ") {
        Some((a, b)) => format!("{a} > {b}|{b} > {a}"),
        None => tuple.to_string(),
    }
}
