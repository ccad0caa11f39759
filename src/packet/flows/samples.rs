//! Flows as a Sample carries them: one flow's plain data, the busiest
//! flows, and flows summed by host or by service.

use super::Flow;
use super::key::{endpoint, proto_name};
use crate::model::capture::{FlowSample, GroupSample};
use crate::packet::server_name;
use foldhash::{HashMap, HashMapExt};

/// The plain-data view of a flow that a Sample carries.
impl From<&Flow> for FlowSample {
    fn from(f: &Flow) -> Self {
        let (src, dst) = f.endpoints();
        Self {
            proto: f.proto_name(),
            src,
            dst,
            packets: f.packets,
            bytes: f.bytes,
            state: f.state.label().to_string(),
            rtt_ms: f.rtt_ms,
            retransmits: f.retransmits,
            first_seen: f.first_seen,
            last_seen: f.last_seen,
            findings: f.findings(),
            pid: None,
            process: None,
            netns: 0,
            sni: match f.server_name.as_deref() {
                Some(server_name::Found::Tls(name) | server_name::Found::Quic(name)) => {
                    Some(name.clone())
                }
                _ => None,
            },
            http_host: match f.server_name.as_deref() {
                Some(server_name::Found::Http(host)) => Some(host.clone()),
                _ => None,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum GroupKey {
    Host { v6: bool, addr: [u8; 16] },
    Service { proto: u8, v6: bool, port: u16 },
}

/// The `n` biggest groups by bytes (`by_host`: by initiator address, else
/// by protocol and responder port), biggest first.
pub fn group_flows<'a>(
    flows: impl Iterator<Item = &'a Flow>,
    by_host: bool,
    n: usize,
) -> Vec<GroupSample> {
    let mut groups: HashMap<GroupKey, (GroupKey, GroupSample)> = HashMap::new();
    for f in flows {
        let k = &f.key;
        let ((addr, _), (_, port)) = if f.initiator_is_b {
            ((k.b, k.b_port), (k.a, k.a_port))
        } else {
            ((k.a, k.a_port), (k.b, k.b_port))
        };
        let key = if by_host {
            GroupKey::Host { v6: k.v6, addr }
        } else {
            GroupKey::Service {
                proto: k.proto,
                v6: k.v6,
                port,
            }
        };
        let (_, g) = groups.entry(key).or_insert_with(|| {
            (
                key,
                GroupSample {
                    first_seen: f.first_seen,
                    last_seen: f.last_seen,
                    ..Default::default()
                },
            )
        });
        g.flows += 1;
        g.packets += f.packets;
        g.bytes += f.bytes;
        g.retransmits += f.retransmits;
        g.rtt_ms = match (g.rtt_ms, f.rtt_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        g.first_seen = g.first_seen.min(f.first_seen);
        g.last_seen = g.last_seen.max(f.last_seen);
    }
    let mut all: Vec<(GroupKey, GroupSample)> = groups.into_values().collect();
    if all.len() > n {
        all.select_nth_unstable_by(n, |a, b| b.1.bytes.cmp(&a.1.bytes));
        all.truncate(n);
    }
    let mut out: Vec<GroupSample> = all
        .into_iter()
        .map(|(key, mut g)| {
            match key {
                GroupKey::Host { v6, addr } => g.key = endpoint(&addr, 0, v6, 0),
                GroupKey::Service { proto, v6, port } => {
                    g.proto = proto_name(proto, v6);
                    g.key = if matches!(proto, 6 | 17 | 132 | 33) {
                        format!("{}/{port}", g.proto)
                    } else {
                        format!("{}/-", g.proto)
                    };
                }
            }
            g
        })
        .collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
    out
}

/// The `n` busiest flows: half by bytes, the rest by packets, each once.
pub fn top_flows<'a>(flows: impl Iterator<Item = &'a Flow>, n: usize) -> Vec<FlowSample> {
    let mut all: Vec<&Flow> = flows.collect();
    if all.len() > n {
        let half = n / 2;
        all.select_nth_unstable_by(half, |a, b| b.bytes.cmp(&a.bytes));
        let (top, rest) = all.split_at_mut(half);
        let want = n - half;
        if rest.len() > want {
            rest.select_nth_unstable_by(want, |a, b| b.packets.cmp(&a.packets));
        }
        let mut kept: Vec<&Flow> = top.to_vec();
        kept.extend_from_slice(&rest[..want.min(rest.len())]);
        all = kept;
    }
    let mut out: Vec<FlowSample> = all.into_iter().map(FlowSample::from).collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.src.cmp(&b.src)));
    out
}
