//! A traced path: one row per TTL with what its probes met, as mtr's report
//! shows it. Filled by `path::Prober`, judged by `findings::path`, drawn by
//! the Path view and printed by `netlens trace`.

use serde::Serialize;
use std::collections::VecDeque;
use std::net::IpAddr;

/// How many of a hop's latest round-trip times the sparkline keeps.
pub const RECENT_RTTS: usize = 32;

/// The kind of probe sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    /// A TCP SYN: the destination answers SYN-ACK (open) or RST (closed).
    Tcp,
    /// A UDP datagram: the destination answers ICMP port unreachable.
    Udp,
    /// An ICMP echo request: the destination answers echo reply.
    Icmp,
}

impl ProbeKind {
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Tcp => "tcp",
            ProbeKind::Udp => "udp",
            ProbeKind::Icmp => "icmp",
        }
    }
}

/// One TTL of the path.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Hop {
    pub ttl: u8,
    /// Who answered the probes of this TTL (the last to answer; None when
    /// nobody did).
    pub addr: Option<IpAddr>,
    /// Its reverse name, only with --resolve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Other addresses that answered at this TTL (load-balanced paths).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_addrs: Vec<IpAddr>,
    /// Probes whose fate is known: answered or timed out.
    pub sent: u32,
    pub received: u32,
    /// Probes sent and still within their timeout (not counted in `sent`).
    #[serde(skip)]
    pub pending: u32,
    pub last_ms: Option<f64>,
    pub best_ms: Option<f64>,
    pub worst_ms: Option<f64>,
    #[serde(skip)]
    pub sum_ms: f64,
    #[serde(skip)]
    pub sum_sq_ms: f64,
    /// The latest round-trip times, oldest first (for the sparkline).
    pub recent_ms: VecDeque<f64>,
    /// "host unreachable" etc. when a router answered destination
    /// unreachable, as traceroute's !H, !N, !P, !X.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<&'static str>,
}

impl Hop {
    pub fn new(ttl: u8) -> Self {
        Hop {
            ttl,
            ..Default::default()
        }
    }

    /// Counts an answered probe.
    pub fn answered(&mut self, from: IpAddr, rtt_ms: f64) {
        match self.addr {
            Some(addr) if addr != from => {
                if !self.other_addrs.contains(&addr) {
                    self.other_addrs.push(addr);
                }
                self.other_addrs.retain(|a| *a != from);
            }
            _ => {}
        }
        self.addr = Some(from);
        self.sent += 1;
        self.received += 1;
        self.last_ms = Some(rtt_ms);
        self.best_ms = Some(self.best_ms.map_or(rtt_ms, |b| b.min(rtt_ms)));
        self.worst_ms = Some(self.worst_ms.map_or(rtt_ms, |w| w.max(rtt_ms)));
        self.sum_ms += rtt_ms;
        self.sum_sq_ms += rtt_ms * rtt_ms;
        if self.recent_ms.len() == RECENT_RTTS {
            self.recent_ms.pop_front();
        }
        self.recent_ms.push_back(rtt_ms);
    }

    /// Counts a probe that timed out.
    pub fn lost(&mut self) {
        self.sent += 1;
    }

    /// Share of the probes with a known fate that went unanswered, in %.
    pub fn loss_percent(&self) -> f64 {
        if self.sent == 0 {
            return 0.0;
        }
        100.0 * f64::from(self.sent - self.received) / f64::from(self.sent)
    }

    pub fn avg_ms(&self) -> Option<f64> {
        (self.received > 0).then(|| self.sum_ms / f64::from(self.received))
    }

    /// The figures mtr prints, as text: host (name, else address, else
    /// ???), loss %, sent, last, avg, best, worst, stddev (ms, one decimal;
    /// "-" when none).
    pub fn columns(&self) -> [String; 8] {
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let host = match (&self.name, self.addr) {
            (Some(name), _) => name.clone(),
            (None, Some(addr)) => addr.to_string(),
            (None, None) => "???".into(),
        };
        let loss = match self.sent {
            0 => "-".to_string(),
            _ => format!("{:.1}%", self.loss_percent()),
        };
        [
            host,
            loss,
            self.sent.to_string(),
            ms(self.last_ms),
            ms(self.avg_ms()),
            ms(self.best_ms),
            ms(self.worst_ms),
            ms(self.stddev_ms()),
        ]
    }

    /// Population standard deviation of the round-trip times, as mtr's StDev.
    pub fn stddev_ms(&self) -> Option<f64> {
        let avg = self.avg_ms()?;
        let n = f64::from(self.received);
        Some((self.sum_sq_ms / n - avg * avg).max(0.0).sqrt())
    }
}

/// The path to one destination as probed so far.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathReport {
    /// The destination as given (a name or an address).
    pub target: String,
    pub addr: IpAddr,
    /// The destination port (TCP and UDP probes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    pub probe: ProbeKind,
    pub netns: String,
    /// Rounds sent so far (each sends one probe per TTL).
    pub rounds: u32,
    /// True once the destination itself answered.
    pub reached: bool,
    /// One row per TTL up to the destination (or the last TTL probed).
    pub hops: Vec<Hop>,
    /// True once probing has stopped (count or duration reached, or stopped).
    pub done: bool,
    /// Why probing stopped early, when it did (a send error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PathReport {
    pub fn new(target: String, addr: IpAddr, port: Option<u16>, probe: ProbeKind) -> Self {
        PathReport {
            target,
            addr,
            port,
            probe,
            netns: String::new(),
            rounds: 0,
            reached: false,
            hops: Vec::new(),
            done: false,
            error: None,
        }
    }

    /// The row for a TTL, made when first needed.
    pub fn hop_mut(&mut self, ttl: u8) -> &mut Hop {
        while self.hops.len() < usize::from(ttl) {
            let next = self.hops.len() as u8 + 1;
            self.hops.push(Hop::new(next));
        }
        &mut self.hops[usize::from(ttl) - 1]
    }

    /// The destination's row: the last, once reached.
    pub fn destination(&self) -> Option<&Hop> {
        self.hops.last().filter(|_| self.reached)
    }

    /// "198.18.3.2:80 (tcp)": what the header and the findings call it.
    pub fn label(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port} ({})", self.addr, self.probe.name()),
            None => format!("{} ({})", self.addr, self.probe.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_figures_are_mtrs() {
        let mut hop = Hop::new(1);
        let a: IpAddr = "198.18.1.1".parse().unwrap();
        for rtt in [1.0, 3.0] {
            hop.answered(a, rtt);
        }
        hop.lost();
        hop.lost();
        assert_eq!((hop.sent, hop.received), (4, 2));
        assert_eq!(hop.loss_percent(), 50.0);
        assert_eq!(hop.avg_ms(), Some(2.0));
        assert_eq!(hop.stddev_ms(), Some(1.0));
        assert_eq!(
            (hop.best_ms, hop.worst_ms, hop.last_ms),
            (Some(1.0), Some(3.0), Some(3.0))
        );
        let b: IpAddr = "198.18.1.2".parse().unwrap();
        hop.answered(b, 2.0);
        assert_eq!((hop.addr, hop.other_addrs.clone()), (Some(b), vec![a]));
        assert_eq!(Hop::new(2).loss_percent(), 0.0);
    }
}
