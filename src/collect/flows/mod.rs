//! Per-flow bytes and packets counted in the kernel: an eBPF program at tc
//! ingress and egress of every interface of the watched namespace (see
//! `loader` for why tc, and how it attaches and detaches). Each tick this
//! attaches to new interfaces and reads the counts; `session::fill` puts
//! them in place of the capture's, which drops packets under load.

mod loader;

use crate::model::InterfaceSample;
use crate::model::flow_counts::{KernelFlows, OneWay};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// What `--no-bpf` leaves in every sample.
pub const DISABLED: &str = "disabled by --no-bpf: flow counts come from the capture";
/// Why a session without a capture counts no flows: nothing would show them.
pub const NO_CAPTURE: &str = "not counted: no capture (--no-capture)";

pub struct FlowCounter {
    program: Result<loader::Program, String>,
    /// The last attach failure (an interface that refused the program).
    failure: Option<String>,
}

impl FlowCounter {
    /// Loads the program unless `enabled` is false; never fails (the
    /// reason stays in each sample). Call on the sampler thread, inside
    /// the watched namespace: attaching happens there.
    pub fn new(enabled: bool) -> Self {
        if !enabled {
            return Self::off(DISABLED);
        }
        Self {
            program: loader::load(),
            failure: None,
        }
    }

    /// Counts nothing, for `why`: no program is loaded or attached.
    pub fn off(why: &str) -> Self {
        Self {
            program: Err(why.to_string()),
            failure: None,
        }
    }

    /// Attaches to `interfaces` (the watched namespace's) not yet
    /// attached, for at most `attach_budget` (the rest on the next ticks),
    /// then reads every flow's counts.
    pub fn collect(
        &mut self,
        interfaces: &[InterfaceSample],
        attach_budget: Duration,
    ) -> KernelFlows {
        let program = match &mut self.program {
            Ok(program) => program,
            Err(why) => {
                return KernelFlows {
                    unavailable: Some(why.clone()),
                    ..KernelFlows::default()
                };
            }
        };
        let wanted: Vec<(u32, String)> = interfaces
            .iter()
            .map(|i| (i.index, i.name.clone()))
            .collect();
        if let Some(failure) = program.attach_to(&wanted, attach_budget) {
            self.failure = Some(failure);
        }
        let attached = program.attached();
        if attached.is_empty() {
            let why = self
                .failure
                .clone()
                .unwrap_or_else(|| "no interface".into());
            return KernelFlows {
                unavailable: Some(format!("the flow-count program attached nowhere ({why})")),
                ..KernelFlows::default()
            };
        }
        let (counts, (not_packets, not_bytes)) = program.read();
        KernelFlows {
            unavailable: None,
            attach: program.mode.name().to_string(),
            interfaces: attached,
            flows: counts
                .iter()
                .filter_map(|(key, count)| one_way(key, count))
                .collect(),
            not_counted_packets: not_packets,
            not_counted_bytes: not_bytes,
        }
    }
}

/// A map entry as plain data; None for a family that is neither IPv4 nor
/// IPv6 (never written by the program).
fn one_way(key: &loader::FlowKey, count: &loader::FlowCount) -> Option<OneWay> {
    let ip = |bytes: &[u8; 16]| -> Option<IpAddr> {
        match i32::from(key.family) {
            libc::AF_INET => Some(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).into()),
            libc::AF_INET6 => Some(Ipv6Addr::from(*bytes).into()),
            _ => None,
        }
    };
    let port = |p: u16| u16::from_be(p);
    Some(OneWay {
        ifindex: key.ifindex,
        proto: key.proto,
        src: SocketAddr::new(ip(&key.saddr)?, port(key.sport)),
        dst: SocketAddr::new(ip(&key.daddr)?, port(key.dport)),
        packets: count.packets,
        bytes: count.bytes,
        first: count.first_ns as f64 / 1e9,
        last: count.last_ns as f64 / 1e9,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_becomes_addresses_and_host_order_ports() {
        let mut key = loader::FlowKey {
            family: libc::AF_INET as u8,
            proto: 17,
            sport: 53u16.to_be(),
            dport: 40000u16.to_be(),
            ifindex: 2,
            ..Default::default()
        };
        key.saddr[..4].copy_from_slice(&[198, 18, 0, 1]);
        key.daddr[..4].copy_from_slice(&[198, 18, 0, 2]);
        let count = loader::FlowCount {
            packets: 3,
            bytes: 300,
            first_ns: 1_500_000_000,
            last_ns: 2_000_000_000,
        };
        let flow = one_way(&key, &count).unwrap();
        assert_eq!(flow.src, "198.18.0.1:53".parse().unwrap());
        assert_eq!(flow.dst, "198.18.0.2:40000".parse().unwrap());
        assert_eq!((flow.first, flow.last), (1.5, 2.0));
        key.family = 0;
        assert_eq!(one_way(&key, &count), None);
    }

    #[test]
    fn without_the_program_each_sample_says_why() {
        let mut counter = FlowCounter::new(false);
        let flows = counter.collect(&[], Duration::ZERO);
        assert_eq!(flows.unavailable.as_deref(), Some(DISABLED));
    }
}
