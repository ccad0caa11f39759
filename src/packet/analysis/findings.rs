//! Findings of one flow from its analysis: nagle-delayed-ack, retransmits
//! (with RTO and backoff), zero-window, syn-unanswered, rst-after-data.
//! The summaries carry the figures that make them believable; the
//! drill-down marks the evidence packets (`evidence`).

use super::{Analysis, EventKind};
pub use crate::model::capture::FlowFinding;

pub const NAGLE_DELAYED_ACK: &str = "nagle-delayed-ack";
pub const RETRANSMITS: &str = "retransmits";
pub const ZERO_WINDOW: &str = "zero-window";
pub const SYN_UNANSWERED: &str = "syn-unanswered";
pub const RST_AFTER_DATA: &str = "rst-after-data";

/// Nagle stalls a flow must show before the finding fires (one could be a
/// coincidence of timing; two in a row are a pattern).
pub const NAGLE_MIN_STALLS: u32 = 2;

/// Every id this module can raise.
pub fn finding_ids() -> [&'static str; 5] {
    [
        NAGLE_DELAYED_ACK,
        RETRANSMITS,
        ZERO_WINDOW,
        SYN_UNANSWERED,
        RST_AFTER_DATA,
    ]
}

fn ms_list(gaps: &[f32]) -> String {
    gaps.iter()
        .map(|g| format!("{g:.0}"))
        .collect::<Vec<_>>()
        .join(" → ")
}

impl Analysis {
    /// The findings, naming the sides: `names[0]` is a, `names[1]` is b.
    pub fn findings(&self, names: [&str; 2]) -> Vec<FlowFinding> {
        let mut found = Vec::new();
        let name = |dir: u8| names[usize::from(dir & 1)];
        let peer = |dir: u8| names[usize::from(1 - (dir & 1))];
        if self.nagle.count >= NAGLE_MIN_STALLS {
            let g = &self.nagle;
            let shown = (g.count as usize).min(g.first_ms.len());
            found.push(FlowFinding {
                id: NAGLE_DELAYED_ACK.into(),
                summary: format!(
                    "{} held a small segment until {}'s delayed ACK {} times: gaps {:.0}-{:.0} ms \
                     (mean {:.0} ms; first: {} ms); set TCP_NODELAY on the sender or TCP_QUICKACK \
                     on the receiver",
                    name(g.dir),
                    peer(g.dir),
                    g.count,
                    g.min_ms,
                    g.max_ms,
                    g.mean_ms(),
                    ms_list(&g.first_ms[..shown]),
                ),
            });
        }
        if self.retransmits > 0 {
            let chain = &self.worst_chain;
            let shown = usize::from(chain.len).min(chain.gaps_ms.len());
            let timing = match chain.len {
                0 => String::new(),
                1 => format!("; RTO {:.0} ms ({})", chain.gaps_ms[0], name(chain.dir)),
                _ => format!(
                    "; RTO {:.0} ms, backoff {} ms ({} retransmitted one segment {} times)",
                    chain.gaps_ms[0],
                    ms_list(&chain.gaps_ms[..shown]),
                    name(chain.dir),
                    chain.len
                ),
            };
            let packets = self.dirs[0].packets + self.dirs[1].packets;
            found.push(FlowFinding {
                id: RETRANSMITS.into(),
                summary: format!(
                    "{} of {packets} packets retransmitted ({} fast, {} by timeout){timing}",
                    self.retransmits,
                    self.fast_retransmits,
                    self.retransmits - self.fast_retransmits,
                ),
            });
        }
        if self.zero_windows > 0 {
            let (dir, secs) = (0..2)
                .map(|d| (d, self.zero_window_s(d, self.last_t)))
                .fold((0, -1.0), |best, x| if x.1 > best.1 { x } else { best });
            found.push(FlowFinding {
                id: ZERO_WINDOW.into(),
                summary: format!(
                    "{} advertised a zero window {} times ({:.1} s closed): it is not reading \
                     what {} sends",
                    name(dir as u8),
                    self.zero_windows,
                    secs,
                    peer(dir as u8)
                ),
            });
        }
        if let Some((client, syns, secs)) = self.syn_unanswered() {
            found.push(FlowFinding {
                id: SYN_UNANSWERED.into(),
                summary: format!(
                    "{} sent SYN {syns} times over {secs:.1} s and {} never answered \
                     (dropped by a firewall, or the host is down)",
                    name(client),
                    peer(client)
                ),
            });
        }
        if let Some((_, dir, bytes)) = self.rst_after_data {
            found.push(FlowFinding {
                id: RST_AFTER_DATA.into(),
                summary: format!(
                    "{} reset the connection after {bytes} bytes of data",
                    name(dir)
                ),
            });
        }
        found
    }

    /// The packets (numbers) that show a finding, from the detail record.
    pub fn evidence(&self, id: &str) -> Vec<u32> {
        let Some(detail) = self.detail.as_ref() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in &detail.events {
            let hit = match (id, e.kind) {
                (NAGLE_DELAYED_ACK, EventKind::NagleStall { .. }) => true,
                (RETRANSMITS, EventKind::Retransmit { .. }) => true,
                (ZERO_WINDOW, EventKind::ZeroWindow) => true,
                (RST_AFTER_DATA, EventKind::Reset) => {
                    self.rst_after_data.is_some_and(|(n, _, _)| n == e.n)
                }
                _ => false,
            };
            if hit {
                out.extend(e.related.iter().flatten());
                out.push(e.n);
            }
        }
        if id == SYN_UNANSWERED && self.syn_unanswered().is_some() {
            out.extend(0..self.n);
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}
