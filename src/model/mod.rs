//! The Sample: one tick of plain data, raw counters only. Rates are derived
//! from two samples at display time (see `rates`), so a replayed sample shows
//! exactly what the live one showed.

pub mod capture;
pub mod closed;
pub mod conntrack;
pub mod conntrack_rates;
pub mod counters;
pub mod cpu;
pub mod dns;
pub mod drops;
pub mod failed;
pub mod filter;
pub mod firewall;
pub mod flow_counts;
pub mod neigh;
pub mod netdev;
pub mod netns;
pub mod path;
pub mod processes;
pub mod rates;
pub mod responses;
pub mod routes;
pub mod shared;
pub mod snmp;
pub mod socket_table;
pub mod sockets;
pub mod tcp_rates;

pub use conntrack::ConntrackSample;
use serde::{Deserialize, Serialize};

/// Everything collected in one tick.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Wall-clock time, seconds since the Unix epoch.
    pub t: f64,
    /// CLOCK_BOOTTIME seconds: monotonic, used for rate intervals so a wall
    /// clock step never bends a rate.
    pub mono: f64,
    /// Which network namespace was watched ("host" or the name/path given).
    pub netns: String,
    pub interfaces: Vec<InterfaceSample>,
    /// Connection tracking: counters every tick, entries when asked for.
    #[serde(default)]
    pub conntrack: ConntrackSample,
    /// TCP and UDP sockets (sock_diag); empty when not collected.
    #[serde(default)]
    pub sockets: socket_table::SocketTable,
    /// TCP/UDP stack counters, state counts, sockstat and knobs.
    #[serde(default)]
    pub tcp: Option<sockets::TcpSample>,
    /// Packet capture status, totals and the busiest flows; None when
    /// capture is off.
    #[serde(default)]
    pub capture: Option<capture::CaptureSample>,
    /// DNS: resolver configuration, probe results and passive results of
    /// this interval; None when not collected.
    #[serde(default)]
    pub dns: Option<dns::DnsSample>,
    /// Kernel drop reasons counted by the eBPF program; None when not
    /// collected (recordings made before netlens counted them).
    #[serde(default)]
    pub drops: Option<drops::DropsSample>,
    /// The firewall rules that can drop, with their counters; None when
    /// not read (nothing asked and no NETFILTER_DROP drops lately; older
    /// recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firewall: Option<firewall::FirewallSample>,
    /// Per-CPU softirq and backlog counters, their knobs and the NICs'
    /// queues; None when not collected (older recordings).
    #[serde(default)]
    pub cpu: Option<cpu::CpuSample>,
    /// The neighbour (ARP/NDP) tables; None when not collected.
    #[serde(default)]
    pub neighbours: Option<neigh::NeighSample>,
    /// The main routing table, summarized; None when not read (and in
    /// older recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes: Option<routes::RoutesSample>,
    /// The processes holding the sockets: user and cgroup (empty in older
    /// recordings, where the socket's owner name stands in).
    #[serde(default, skip_serializing_if = "shared::Shared::is_empty")]
    pub processes: shared::Shared<Vec<processes::ProcessInfo>>,
    /// TCP connections that ended during the interval (sock_diag destroy
    /// notifications); None when not collected (older recordings).
    #[serde(default)]
    pub closed: Option<closed::ClosedSample>,
    /// `--all-netns`: every network namespace sampled, the watched one
    /// (id 0) first; empty otherwise (then every row is the watched one's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<netns::NamespaceInfo>,
    /// The live view freed `sockets` to bound its memory (`History`): the
    /// list is not the sample's, so no per-socket rate is taken against it.
    /// Never stored nor printed.
    #[serde(skip)]
    pub sockets_dropped: bool,
    /// Per-flow counts from the kernel, folded into `capture` by
    /// `session::fill`; never stored nor printed themselves.
    #[serde(skip)]
    pub flow_counts: Option<flow_counts::KernelFlows>,
    /// The parts that outlasted their deadline this tick: each shows its
    /// last good data, this old (empty in older recordings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late: Vec<LatePart>,
    /// Seconds from when the sample was taken to when it was written to a
    /// recording (None in memory and in older recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<f64>,
    /// CLOCK_BOOTTIME seconds of the read `interfaces` come from, when
    /// that is not this tick's: the link dump was late, and the sample
    /// holds an earlier read's counters. None otherwise and in older
    /// recordings (then `mono` is the read's time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links_mono: Option<f64>,
    /// CLOCK_BOOTTIME seconds at the middle of the watched namespace's
    /// socket dump (not of the owners' look-up after it, which may wait
    /// out the tick), which follows the links by a time that varies with
    /// load and the number of sockets: per-socket rates are taken between
    /// two of these. None in older recordings (then `mono`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets_mono: Option<f64>,
}

/// The parts of a sample collected under a deadline (`LatePart::part`).
pub const DEADLINED_PARTS: [&str; 5] = [
    "interfaces",
    "neighbours",
    "conntrack",
    "processes",
    "containers",
];

/// A part of a sample whose collector missed its deadline: the sample
/// holds that part's last good data, taken `age_ms` before the sample.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LatePart {
    /// The part: one of `DEADLINED_PARTS`.
    pub part: String,
    pub age_ms: u64,
}

impl Sample {
    /// Seconds since the sample was taken, by the wall clock at `now_t`
    /// (never negative: a clock stepped back reads 0).
    pub fn age_at(&self, now_t: f64) -> f64 {
        (now_t - self.t).max(0.0)
    }

    /// Gives each part that did not change since `before` (the sample
    /// before it) `before`'s copy: the counters' names and unmoved values,
    /// the knobs, idle flows, the processes, routes, neighbour counts and
    /// queue masks. A history of samples then costs what changed between
    /// them, not a whole sample each.
    pub fn share_unchanged(&mut self, before: &Sample) {
        if let (Some(tcp), Some(earlier)) = (self.tcp.as_mut(), before.tcp.as_ref()) {
            tcp.counters.share(&earlier.counters);
            tcp.knobs.share(&earlier.knobs);
        }
        if let (Some(capture), Some(earlier)) = (self.capture.as_mut(), before.capture.as_ref()) {
            capture::share_flows(&mut capture.flows, &earlier.flows);
        }
        self.processes.share(&before.processes);
        if let (Some(routes), Some(earlier)) = (self.routes.as_mut(), before.routes.as_ref()) {
            routes.families.share(&earlier.families);
        }
        if let (Some(neighbours), Some(earlier)) =
            (self.neighbours.as_mut(), before.neighbours.as_ref())
        {
            neighbours.entries.share(&earlier.entries);
        }
        if let (Some(cpu), Some(earlier)) = (self.cpu.as_mut(), before.cpu.as_ref()) {
            cpu.knobs.share(&earlier.knobs);
            for nic in &mut cpu.nics {
                if let Some(old) = earlier.nics.iter().find(|n| n.name == nic.name) {
                    nic.rps_cpus.share(&old.rps_cpus);
                    nic.xps_cpus.share(&old.xps_cpus);
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    Full,
    Half,
    #[default]
    Unknown,
}

/// One network interface as rtnetlink and ethtool report it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct InterfaceSample {
    pub index: u32,
    pub name: String,
    /// Driver kind from IFLA_INFO_KIND (veth, bridge, dummy...), if any.
    pub kind: Option<String>,
    /// IFF_UP: administratively up.
    pub up: bool,
    /// IFF_LOWER_UP: carrier present.
    pub lower_up: bool,
    pub loopback: bool,
    pub mtu: u32,
    pub mac: Option<String>,
    /// "addr/prefix", IPv4 first.
    pub addresses: Vec<String>,
    /// Link speed from the ethtool ioctl; None when the driver does not know.
    pub speed_mbps: Option<u32>,
    pub duplex: Duplex,
    pub counters: LinkCounters,
    /// The root qdisc's statistics (`tc -s qdisc show dev IF`'s root line);
    /// None when not collected (recordings made before netlens read it).
    #[serde(default)]
    pub qdisc: Option<QdiscStats>,
    /// The id of its namespace in `Sample::namespaces` (0: the watched one,
    /// and every interface of an older recording).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub netns: u16,
    /// IFLA_LINK: a veth's peer's index (in the peer's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_index: Option<u32>,
    /// IFLA_LINK_NETNSID: set when the peer is in another namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_netnsid: Option<i32>,
}

/// For `skip_serializing_if` on namespace ids: the watched namespace's
/// rows stay as they were before `--all-netns`.
pub fn is_zero(id: &u16) -> bool {
    *id == 0
}

/// A root qdisc's statistics as `tc -s qdisc show` prints them: sent
/// bytes/packets, dropped, overlimits, requeues (monotonic counters) and the
/// backlog now (a level). An mq root sums its children in the kernel.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct QdiscStats {
    /// "pfifo_fast", "tbf", "noqueue"...
    pub kind: String,
    /// "8001:" as tc prints a handle.
    pub handle: String,
    pub bytes: u64,
    pub packets: u64,
    pub drops: u64,
    pub overlimits: u64,
    pub requeues: u64,
    pub backlog_bytes: u64,
    pub backlog_packets: u64,
}

/// Link kinds (IFLA_INFO_KIND) of software devices: whatever speed their
/// driver reports (veth says 10000, tun 10) is not a link's, so netlens
/// takes their speed as unknown and judges them by drops instead.
pub const VIRTUAL_KINDS: &[&str] = &[
    "veth",
    "bridge",
    "dummy",
    "tun",
    "vxlan",
    "geneve",
    "gre",
    "gretap",
    "ip6gre",
    "ip6gretap",
    "ipip",
    "sit",
    "ip6tnl",
    "wireguard",
    "ifb",
    "vrf",
    "nlmon",
    "vcan",
    "vxcan",
    "netkit",
    "bareudp",
    "openvswitch",
];

impl InterfaceSample {
    /// Loopback or a software device (by its link kind, not its name).
    pub fn is_virtual(&self) -> bool {
        self.loopback
            || self
                .kind
                .as_deref()
                .is_some_and(|k| VIRTUAL_KINDS.contains(&k))
    }

    /// The link speed, None when unknown or the device is virtual (also
    /// for recordings made before netlens dropped a virtual speed).
    pub fn link_speed(&self) -> Option<u32> {
        self.speed_mbps.filter(|_| !self.is_virtual())
    }
}

/// The rtnl_link_stats64 counters netlens uses. All are monotonic in the
/// kernel until the interface is re-created.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LinkCounters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub rx_over_errors: u64,
    pub rx_crc_errors: u64,
    pub rx_frame_errors: u64,
    pub rx_fifo_errors: u64,
    pub rx_missed_errors: u64,
    pub tx_carrier_errors: u64,
    pub tx_fifo_errors: u64,
    pub collisions: u64,
    pub multicast: u64,
}

/// An interface from one sample to the next: its namespace (ids are never
/// reused in a session) and its name. The name alone would confuse every
/// namespace's "lo".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceRef {
    pub netns: u16,
    pub name: String,
}

impl InterfaceRef {
    /// The watched namespace's interface `name`.
    pub fn primary(name: &str) -> InterfaceRef {
        InterfaceRef {
            netns: netns::PRIMARY,
            name: name.to_string(),
        }
    }

    pub fn of(iface: &InterfaceSample) -> InterfaceRef {
        InterfaceRef {
            netns: iface.netns,
            name: iface.name.clone(),
        }
    }
}

impl Sample {
    /// The interface of this name: the watched namespace's, else the first
    /// other namespace's (the list is in namespace order; `same_interface`
    /// tells namespaces apart).
    pub fn interface(&self, name: &str) -> Option<&InterfaceSample> {
        self.interfaces.iter().find(|i| i.name == name)
    }

    /// The interface `at` names (see `InterfaceRef`).
    pub fn interface_at(&self, at: &InterfaceRef) -> Option<&InterfaceSample> {
        self.interfaces
            .iter()
            .find(|i| i.name == at.name && i.netns == at.netns)
    }

    /// The interface of the same namespace and name as `iface` (another
    /// sample's): two namespaces' "lo" never match.
    /// Looked up by index first (a binary search): findings ask this for
    /// every interface, and comparing names row by row was quadratic
    /// (3,000 interfaces: most of a sample's CPU).
    pub fn same_interface(&self, iface: &InterfaceSample) -> Option<&InterfaceSample> {
        let by_index = self.interface_in(iface.netns, iface.index);
        if let Some(found) = by_index.filter(|i| i.name == iface.name) {
            return Some(found);
        }
        // Re-created (a new index) or renamed: by name.
        self.interfaces
            .iter()
            .find(|i| i.name == iface.name && i.netns == iface.netns)
    }

    /// The watched namespace's interface with this ifindex.
    pub fn interface_by_index(&self, index: u32) -> Option<&InterfaceSample> {
        self.interface_in(netns::PRIMARY, index)
    }

    /// The interface with this ifindex in namespace `netns`. Collectors keep
    /// `interfaces` sorted by (namespace, index), so this is a binary search
    /// (rates for 50k rows stay cheap).
    pub fn interface_in(&self, netns: u16, index: u32) -> Option<&InterfaceSample> {
        match self
            .interfaces
            .binary_search_by_key(&(netns, index), |i| (i.netns, i.index))
        {
            Ok(position) => Some(&self.interfaces[position]),
            Err(_) => self
                .interfaces
                .iter()
                .find(|i| i.index == index && i.netns == netns),
        }
    }
}
