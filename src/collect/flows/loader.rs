//! Loads ebpf/flows.bpf.o (committed, built by ebpf/build.sh), attaches it
//! at tc ingress and egress of each watched interface and reads its per-CPU
//! per-flow counts.
//!
//! Why tc clsact, and not cgroup_skb or socket hooks: tc sees every packet
//! that crosses an interface of the watched namespace, whether a local
//! socket owns it or not (forwarded by a router namespace, bridged to a
//! container, answered by the kernel itself), and sees it once per
//! interface with its ingress device, so a forwarded packet can be counted
//! once. cgroup_skb sees only local sockets' traffic of one cgroup tree;
//! socket hooks (sock_ops, kprobes on tcp_sendmsg) see only TCP or only
//! payload, not packets on the wire. tc is where AF_PACKET capture taps
//! too, so the two agree on what a flow is.
//!
//! Attaching: TCX links (Linux >= 6.6) first: the link belongs to this
//! process's file descriptor, so it goes away when netlens exits, even
//! killed with SIGKILL, and no qdisc is touched. Older kernels (or
//! NETLENS_TC_ATTACH=netlink): a `clsact` qdisc, ours only if the
//! interface had none, and a direct-action `bpf` filter in it; on drop both
//! filters are removed, and the qdisc too when netlens added it.

use crate::collect::btf::chain;
use crate::collect::rtnl::Rtnl;
use aya::maps::{MapData, PerCpuArray, PerCpuHashMap};
use aya::programs::tc::{self, SchedClassifierLinkId, TcAttachOptions};
use aya::programs::{LinkOrder, SchedClassifier, TcAttachType};
use aya::util::KernelVersion;
use aya::{Ebpf, EbpfLoader};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The object, aligned for the ELF parser.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../ebpf/flows.bpf.o");

/// The map's key, byte for byte the C program's `struct flow_key`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FlowKey {
    pub saddr: [u8; 16],
    pub daddr: [u8; 16],
    /// Network byte order.
    pub sport: u16,
    pub dport: u16,
    pub ifindex: u32,
    pub family: u8,
    pub proto: u8,
    pub egress: u8,
    pub pad: u8,
}

// SAFETY: plain old data, repr(C), no padding (16+16+2+2+4+4 bytes, align
// 4), every bit pattern valid.
unsafe impl aya::Pod for FlowKey {}

/// The map's value, the C program's `struct flow_count`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowCount {
    pub packets: u64,
    pub bytes: u64,
    /// CLOCK_BOOTTIME nanoseconds.
    pub first_ns: u64,
    pub last_ns: u64,
}

// SAFETY: as FlowKey (four u64).
unsafe impl aya::Pod for FlowCount {}

/// The map's size in the C program; at three quarters full, keys that did
/// not move since the last read are folded into user space.
const MAP_ENTRIES: usize = 16384;
const FOLD_AT: usize = MAP_ENTRIES * 3 / 4;
/// Folded (idle) flows kept here at most; the least recent go first.
const MAX_FOLDED: usize = 65536;
/// Interfaces attached to at most (a host with thousands of veths).
pub const MAX_INTERFACES: usize = 256;
const PROGRAMS: [(&str, TcAttachType); 2] = [
    ("flows_ingress", TcAttachType::Ingress),
    ("flows_egress", TcAttachType::Egress),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Tcx,
    Netlink,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tcx => "tcx",
            Mode::Netlink => "tc clsact",
        }
    }
}

/// One interface's two attachments.
struct Attached {
    name: String,
    links: Vec<(usize, SchedClassifierLinkId)>,
    /// Netlink mode: netlens added the clsact qdisc (removed on detach).
    added_clsact: bool,
}

/// The loaded program, its maps and attachments; dropping it detaches.
pub struct Program {
    ebpf: Ebpf,
    flows: PerCpuHashMap<MapData, FlowKey, FlowCount>,
    not_counted: PerCpuArray<MapData, u64>,
    pub mode: Mode,
    attached: HashMap<u32, Attached>,
    /// Interfaces that refused the program: tried again after the others.
    refused: HashSet<u32>,
    folded: HashMap<FlowKey, FlowCount>,
    last: HashMap<FlowKey, u64>,
}

/// Calls `f` on `items` in order until `budget` has passed, after at least
/// one call; returns how many it took.
fn within<T>(items: impl IntoIterator<Item = T>, budget: Duration, mut f: impl FnMut(T)) -> usize {
    let started = Instant::now();
    let mut taken = 0;
    for item in items {
        if taken > 0 && started.elapsed() > budget {
            break;
        }
        f(item);
        taken += 1;
    }
    taken
}

/// Loads both programs (attaching nothing yet), or says in one line why not.
pub fn load() -> Result<Program, String> {
    let mut ebpf = EbpfLoader::new()
        .load(OBJECT)
        .map_err(|e| why(&chain(&e)))?;
    for (name, _) in PROGRAMS {
        let program: &mut SchedClassifier = ebpf
            .program_mut(name)
            .ok_or(format!("the flow program has no {name}"))?
            .try_into()
            .map_err(|e| why(&chain(&e)))?;
        program.load().map_err(|e| why(&chain(&e)))?;
    }
    let flows = ebpf
        .take_map("FLOWS")
        .ok_or("the flow program has no FLOWS map")?;
    let not_counted = ebpf
        .take_map("NOT_COUNTED")
        .ok_or("the flow program has no NOT_COUNTED map")?;
    let tcx = KernelVersion::current().is_ok_and(|v| v >= KernelVersion::new(6, 6, 0));
    let forced_netlink = std::env::var("NETLENS_TC_ATTACH").as_deref() == Ok("netlink");
    Ok(Program {
        flows: PerCpuHashMap::try_from(flows).map_err(|e| e.to_string())?,
        not_counted: PerCpuArray::try_from(not_counted).map_err(|e| e.to_string())?,
        ebpf,
        mode: if tcx && !forced_netlink {
            Mode::Tcx
        } else {
            Mode::Netlink
        },
        attached: HashMap::new(),
        refused: HashSet::new(),
        folded: HashMap::new(),
        last: HashMap::new(),
    })
}

fn why(cause: &str) -> String {
    let lockdown = std::fs::read_to_string("/sys/kernel/security/lockdown").unwrap_or_default();
    if lockdown.contains("[confidentiality]") {
        return format!("the kernel is in lockdown, which forbids eBPF ({cause})");
    }
    if cause.contains("Operation not permitted") || cause.contains("os error 1)") {
        return format!("needs CAP_BPF and CAP_NET_ADMIN (run as root) ({cause})");
    }
    format!("cannot load the flow-count program: {cause}")
}

impl Program {
    /// Attaches to the interfaces not yet attached and forgets those gone;
    /// returns the last failure, if any. Attaching stops once `budget` has
    /// passed (after at least one try): each attach takes the RTNL lock, and
    /// on a host with thousands of interfaces all of them at once would hold
    /// the sample for seconds. The rest are attached on the next ticks.
    pub fn attach_to(&mut self, interfaces: &[(u32, String)], budget: Duration) -> Option<String> {
        let present: Vec<u32> = interfaces.iter().map(|(index, _)| *index).collect();
        let gone: Vec<u32> = self
            .attached
            .keys()
            .filter(|index| !present.contains(index))
            .copied()
            .collect();
        self.refused.retain(|index| present.contains(index));
        for index in gone {
            // Its device is gone with its filters; only forget the links.
            if let Some(attached) = self.attached.remove(&index) {
                self.detach_links(attached);
            }
        }
        let room = MAX_INTERFACES.saturating_sub(self.attached.len());
        let (fresh, refused): (Vec<_>, Vec<_>) = interfaces
            .iter()
            .filter(|(index, _)| !self.attached.contains_key(index))
            .partition(|(index, _)| !self.refused.contains(index));
        let mut failure = None;
        let pending = fresh.into_iter().chain(refused).take(room);
        within(pending, budget, |(index, name)| match self.attach(name) {
            Ok(attached) => {
                self.refused.remove(index);
                self.attached.insert(*index, attached);
            }
            Err(e) => {
                self.refused.insert(*index);
                failure = Some(format!("{name}: {e}"));
            }
        });
        failure
    }

    pub fn attached(&self) -> Vec<(u32, String)> {
        let mut out: Vec<(u32, String)> = self
            .attached
            .iter()
            .map(|(index, a)| (*index, a.name.clone()))
            .collect();
        out.sort();
        out
    }

    fn attach(&mut self, name: &str) -> Result<Attached, String> {
        let mut attached = Attached {
            name: name.to_string(),
            links: Vec::new(),
            added_clsact: false,
        };
        if self.mode == Mode::Netlink {
            attached.added_clsact = match tc::qdisc_add_clsact(name) {
                Ok(()) => true,
                Err(e) if e.to_string().contains("exists") || already_exists(&e) => false,
                Err(e) => return Err(format!("cannot add a clsact qdisc: {e}")),
            };
        }
        for (slot, (program, direction)) in PROGRAMS.iter().enumerate() {
            let options = match self.mode {
                // First: a program before ours that redirects or drops
                // would hide the packet from the count.
                Mode::Tcx => TcAttachOptions::TcxOrder(LinkOrder::first()),
                Mode::Netlink => TcAttachOptions::Netlink(Default::default()),
            };
            let result = self.classifier(slot).and_then(|p| {
                p.attach_with_options(name, *direction, options)
                    .map_err(|e| chain(&e))
            });
            match result {
                Ok(link) => attached.links.push((slot, link)),
                Err(e) => {
                    self.detach_links(attached);
                    return Err(format!("cannot attach {program}: {e}"));
                }
            }
        }
        Ok(attached)
    }

    fn classifier(&mut self, slot: usize) -> Result<&mut SchedClassifier, String> {
        let name = PROGRAMS[slot].0;
        self.ebpf
            .program_mut(name)
            .ok_or(format!("no program {name}"))?
            .try_into()
            .map_err(|e: aya::programs::ProgramError| e.to_string())
    }

    /// Removes an interface's filters (links), then the clsact qdisc if
    /// netlens added it. Errors are ignored: the device may be gone.
    fn detach_links(&mut self, attached: Attached) {
        for (slot, link) in attached.links {
            if let Ok(program) = self.classifier(slot) {
                let _ = program.detach(link);
            }
        }
        if attached.added_clsact {
            let _ = delete_clsact(&attached.name);
        }
    }
}

fn already_exists(error: &tc::TcError) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.raw_os_error() == Some(libc::EEXIST)
        {
            return true;
        }
        source = e.source();
    }
    false
}

/// `tc qdisc del dev NAME clsact`, through netlens' own route socket.
fn delete_clsact(name: &str) -> anyhow::Result<()> {
    use netlink_packet_route::RouteNetlinkMessage;
    use netlink_packet_route::tc::{TcHandle, TcMessage};
    let name = std::ffi::CString::new(name)?;
    // SAFETY: reads the NUL-terminated name only.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    anyhow::ensure!(index != 0, "no such interface");
    let mut message = TcMessage::with_index(i32::try_from(index)?);
    message.header.parent = TcHandle::CLSACT;
    message.header.handle = TcHandle {
        major: 0xffff,
        minor: 0,
    };
    Rtnl::new()?.request(RouteNetlinkMessage::DelQueueDiscipline(message))
}

impl Drop for Program {
    fn drop(&mut self) {
        let all: Vec<Attached> = self.attached.drain().map(|(_, a)| a).collect();
        for attached in all {
            self.detach_links(attached);
        }
    }
}

/// One key's counts summed over the CPUs.
fn summed(values: &[FlowCount]) -> FlowCount {
    let mut out = FlowCount::default();
    for v in values.iter().filter(|v| v.packets > 0) {
        out.packets += v.packets;
        out.bytes += v.bytes;
        if out.first_ns == 0 || v.first_ns < out.first_ns {
            out.first_ns = v.first_ns;
        }
        out.last_ns = out.last_ns.max(v.last_ns);
    }
    out
}

impl Program {
    /// Every key's counts (folded keys included) and what was not counted
    /// (packets, bytes).
    pub fn read(&mut self) -> (HashMap<FlowKey, FlowCount>, (u64, u64)) {
        let mut counts = self.folded.clone();
        let mut now = HashMap::with_capacity(self.last.len());
        for (key, values) in self.flows.iter().flatten() {
            let count = summed(&values);
            now.insert(key, count.packets);
            let entry = counts.entry(key).or_default();
            entry.packets += count.packets;
            entry.bytes += count.bytes;
            entry.first_ns = match entry.first_ns {
                0 => count.first_ns,
                first => first.min(count.first_ns),
            };
            entry.last_ns = entry.last_ns.max(count.last_ns);
        }
        if now.len() > FOLD_AT {
            self.fold(&now, &counts);
        }
        self.last = now;
        let total = |index: u32| {
            self.not_counted
                .get(&index, 0)
                .map(|values| values.iter().sum())
                .unwrap_or(0)
        };
        (counts, (total(0), total(1)))
    }

    /// Deletes the keys that did not move since the last read, keeping
    /// their counts here (bounded: the least recent go), so new flows
    /// still find room. A packet counted between the read and the delete
    /// is lost; such a flow was idle.
    fn fold(&mut self, now: &HashMap<FlowKey, u64>, counts: &HashMap<FlowKey, FlowCount>) {
        for (key, packets) in now {
            if self.last.get(key) == Some(packets)
                && self.flows.remove(key).is_ok()
                && let Some(count) = counts.get(key)
            {
                self.folded.insert(*key, *count);
            }
        }
        if self.folded.len() > MAX_FOLDED {
            let mut by_age: Vec<(u64, FlowKey)> =
                self.folded.iter().map(|(k, c)| (c.last_ns, *k)).collect();
            by_age.sort_unstable_by_key(|(last, _)| *last);
            for (_, key) in by_age.iter().take(self.folded.len() - MAX_FOLDED) {
                self.folded.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attaching_within_a_budget_tries_one_at_least_and_all_given_time() {
        let mut tried = Vec::new();
        assert_eq!(within(1..=5, Duration::ZERO, |i| tried.push(i)), 1);
        assert_eq!(tried, [1]);
        let slow = |_| std::thread::sleep(Duration::from_millis(20));
        assert!(within(0..100, Duration::from_millis(50), slow) < 100);
        assert_eq!(within(0..100, Duration::from_secs(3600), |_| ()), 100);
    }
}
