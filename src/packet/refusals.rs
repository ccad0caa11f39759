//! Refused connection attempts seen on the wire: a SYN answered by an RST
//! from the side it was sent to, with no SYN-ACK between (the flow table
//! calls `add` when it sees one). Counted per refusing address:port with
//! the peers refused; cumulative, so rates come from two samples like the
//! other capture counters. Bounded: at most `PORTS` ports, each with at
//! most `PEERS` peers; when full, the least recently refused one makes
//! room (its count starts again from zero if it comes back).

use crate::model::capture::{RefusedPeer, RefusedSample};

/// Refusing ports and peers per port kept.
pub const PORTS: usize = 16;
pub const PEERS: usize = 8;

struct Counted {
    name: String,
    count: u64,
    last: f64,
}

struct Port {
    port: Counted,
    peers: Vec<Counted>,
}

#[derive(Default)]
pub struct Refusals {
    ports: Vec<Port>,
}

/// Bumps `name`'s count in `list`, making room by the least recently seen
/// when it is full; returns its index.
fn bump(list: &mut Vec<Counted>, name: &str, t: f64, cap: usize) -> usize {
    let i = match list.iter().position(|c| c.name == name) {
        Some(i) => i,
        None => {
            let fresh = Counted {
                name: name.to_string(),
                count: 0,
                last: t,
            };
            if list.len() < cap {
                list.push(fresh);
                list.len() - 1
            } else {
                let oldest = (0..list.len())
                    .min_by(|&a, &b| list[a].last.total_cmp(&list[b].last))
                    .unwrap_or(0);
                list[oldest] = fresh;
                oldest
            }
        }
    };
    list[i].count += 1;
    list[i].last = t;
    i
}

impl Refusals {
    /// One refusal: `refuser` ("198.18.0.2:8080") refused `peer`
    /// ("198.18.0.1") at time `t`.
    pub fn add(&mut self, refuser: &str, peer: &str, t: f64) {
        let i = match self.ports.iter().position(|p| p.port.name == refuser) {
            Some(i) => i,
            None => {
                let fresh = Port {
                    port: Counted {
                        name: refuser.to_string(),
                        count: 0,
                        last: t,
                    },
                    peers: Vec::new(),
                };
                if self.ports.len() < PORTS {
                    self.ports.push(fresh);
                    self.ports.len() - 1
                } else {
                    let oldest = (0..self.ports.len())
                        .min_by(|&a, &b| {
                            self.ports[a].port.last.total_cmp(&self.ports[b].port.last)
                        })
                        .unwrap_or(0);
                    self.ports[oldest] = fresh;
                    oldest
                }
            }
        };
        let port = &mut self.ports[i];
        port.port.count += 1;
        port.port.last = t;
        bump(&mut port.peers, peer, t, PEERS);
    }

    /// The plain data a sample carries: every port kept, most refused
    /// first, each with its peers, most refused first.
    pub fn sample(&self) -> Vec<RefusedSample> {
        let mut out: Vec<RefusedSample> = self
            .ports
            .iter()
            .map(|p| {
                let mut peers: Vec<RefusedPeer> = p
                    .peers
                    .iter()
                    .map(|c| RefusedPeer {
                        addr: c.name.clone(),
                        count: c.count,
                    })
                    .collect();
                peers.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.addr.cmp(&b.addr)));
                RefusedSample {
                    port: p.port.name.clone(),
                    count: p.port.count,
                    peers,
                }
            })
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.port.cmp(&b.port)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_port_and_peer_and_stays_bounded() {
        let mut r = Refusals::default();
        for i in 0..5 {
            r.add("198.18.0.2:8080", "198.18.0.1", f64::from(i));
        }
        r.add("198.18.0.2:8080", "198.18.0.3", 5.0);
        r.add("198.18.0.2:22", "198.18.0.1", 6.0);
        let s = r.sample();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].port.as_str(), s[0].count), ("198.18.0.2:8080", 6));
        assert_eq!(
            s[0].peers,
            vec![
                RefusedPeer {
                    addr: "198.18.0.1".into(),
                    count: 5
                },
                RefusedPeer {
                    addr: "198.18.0.3".into(),
                    count: 1
                }
            ]
        );
        // Many ports and peers: the kept lists stay at their caps, the
        // most recent kept.
        for i in 0..100u16 {
            r.add(
                &format!("198.18.0.9:{i}"),
                &format!("198.18.1.{i}"),
                10.0 + f64::from(i),
            );
            r.add(
                "198.18.0.9:99",
                &format!("198.18.2.{i}"),
                10.0 + f64::from(i),
            );
        }
        let s = r.sample();
        assert_eq!(s.len(), PORTS);
        assert!(s.iter().all(|p| p.peers.len() <= PEERS));
        assert_eq!(s[0].port, "198.18.0.9:99");
    }
}
