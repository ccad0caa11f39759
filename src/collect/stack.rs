//! The sockets and TCP part of a sample: the sock_diag dump with owners,
//! state counts, snmp/netstat counters, sockstat and the knobs.

use super::owners::{Owner, OwnerLookup};
use super::sockets::SockDiag;
use super::{snmp, sysctl};
use crate::model::counters::Counters;
use crate::model::socket_table::SocketTable;
use crate::model::sockets::TcpSample;
use anyhow::Result;

pub struct StackCollector {
    diag: SockDiag,
    owners: OwnerLookup,
    /// `--all-netns`: the sockets of every namespace are dumped, so any
    /// process may hold one.
    all_netns: bool,
    /// Whether the sockets' owners are looked up (`Demand::no_owners`).
    owners_wanted: bool,
    knobs: sysctl::Knobs,
    /// The socket cookies of the last dump, in the order of its sockets.
    cookies: Vec<u64>,
    /// The last dump (shared with its sample): its sockets' owners stand
    /// for this dump's where the owner map has not changed them.
    previous: SocketTable,
}

impl StackCollector {
    /// `host_knobs`: the host-wide knobs, opened in the host's namespace;
    /// `bpf`: socket owners may come from an eBPF iterator, loaded after
    /// the first look-up when `iterator_after_first`.
    pub fn new(
        host_knobs: sysctl::HostKnobs,
        bpf: bool,
        iterator_after_first: bool,
    ) -> Result<Self> {
        Ok(Self {
            diag: SockDiag::new()?,
            owners: OwnerLookup::start(watched_netns(), bpf, iterator_after_first),
            all_netns: false,
            owners_wanted: true,
            knobs: sysctl::Knobs::open(host_knobs),
            cookies: Vec::new(),
            previous: SocketTable::default(),
        })
    }

    /// As `collect`, with the sockets `others` returns (other namespaces'
    /// under `--all-netns`) after this namespace's: one owner scan serves
    /// them all, socket inodes being global. `others` gets this namespace's
    /// counters (snmp and netstat) to label its own namespace with. New
    /// sockets' owners are waited for until `deadline` (the tick's: the
    /// other parts run meanwhile), then left pending. Also returns when
    /// the watched namespace's sockets were read (boottime seconds).
    pub fn collect_with(
        &mut self,
        deadline: std::time::Instant,
        others: impl FnOnce(&Counters, &mut SocketTable) -> Result<()>,
    ) -> Result<(SocketTable, TcpSample, f64)> {
        // When the watched namespace's sockets were read: the middle of
        // their dump alone. The owners' look-up after it may wait up to
        // the deadline, and a rate over a time that included that wait
        // would be off by as much (10% on a paced sender on a loaded box).
        let dump_started = super::boottime_seconds();
        let dump = self.diag.dump()?;
        let dump_mono = (dump_started + super::boottime_seconds()) / 2.0;
        let mut sockets = dump.sockets;
        self.cookies = dump.cookies;
        // Shared with the sample before by `Sample::share_unchanged`.
        let counters = Counters::from(snmp::read_counters()?);
        let primary = sockets.len();
        others(&counters, &mut sockets)?;
        if self.owners_wanted {
            self.name_owners(&mut sockets, deadline);
        }
        let orphans = sockets
            .iter()
            .take(primary)
            .filter(|s| s.is_orphan())
            .count() as u32;
        let tcp = TcpSample {
            states: dump.states,
            counters,
            sockstat: snmp::read_sockstat()?,
            knobs: self.knobs.read().into(),
            unix_sockets: self.diag.unix_count()?,
            orphans,
        };
        // The dump reserves an eighth more than the last count: give the
        // slack back, as this Vec is kept (two samples at least) and at a
        // million sockets an eighth is 26 MB per sample (a big buffer
        // shrinks by mremap, without a copy).
        sockets.shrink_to_fit();
        self.previous = sockets.clone();
        Ok((sockets, tcp, dump_mono))
    }

    /// Sets the sockets' owners: those the owner map knows, waiting for
    /// new sockets' until `deadline`, then marking them pending.
    fn name_owners(&mut self, sockets: &mut SocketTable, deadline: std::time::Instant) {
        let live: super::owners::Inodes = sockets
            .iter()
            .map(|s| s.inode)
            .filter(|i| *i != 0)
            .collect();
        let wait = deadline.saturating_duration_since(std::time::Instant::now());
        self.owners.request(live, self.all_netns, wait);
        let mut owners = self.owners.map();
        let touched = owners.take_touched();
        let denied = owners.denied();
        // A million look-ups in a map of a million inodes miss the cache
        // each time; the last dump, in the same order, is read in step
        // instead, for the sockets whose owners did not change.
        let mut cursor = 0;
        for index in 0..sockets.len() {
            let inode = sockets.at(index).inode;
            if inode == 0 {
                continue;
            }
            if let Some(touched) = &touched
                && !touched.contains(&inode)
                && let Some(users) = self.previous.owners_near(&mut cursor, inode)
            {
                sockets.set_users(index, users);
                continue;
            }
            match owners.owner(inode) {
                Owner::Known(users) => sockets.set_users(index, &users),
                Owner::Unowned => sockets.set_owner_unknown(index, denied, false),
                Owner::Pending => sockets.set_owner_unknown(index, false, true),
            }
        }
    }

    /// Whether the sockets' owners are looked up.
    pub fn set_owners(&mut self, on: bool) {
        self.owners_wanted = on;
    }

    /// Whether the sockets of every namespace are dumped (`--all-netns`).
    pub fn set_all_netns(&mut self, on: bool) {
        self.all_netns = on;
    }

    /// The socket cookies of the last dump, in the order of its sockets.
    pub fn cookies(&self) -> &[u64] {
        &self.cookies
    }
}

/// The nsfs inode of the namespace this thread is in (the watched one, on
/// the sampler thread); None when unreadable: then every process is
/// looked at.
fn watched_netns() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/thread-self/ns/net")
        .ok()
        .map(|m| m.ino())
}
