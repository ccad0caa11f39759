//! The sockets and TCP part of a sample: the sock_diag dump with owners,
//! state counts, snmp/netstat counters, sockstat and the knobs.

use super::owners::OwnerCache;
use super::sockets::SockDiag;
use super::{snmp, sysctl};
use crate::model::sockets::{SocketSample, TcpSample};
use anyhow::Result;
use std::collections::{BTreeMap, HashSet};

pub struct StackCollector {
    diag: SockDiag,
    owners: OwnerCache,
    host_knobs: sysctl::HostKnobs,
    /// The socket cookies of the last dump, in the order of its sockets.
    cookies: Vec<u64>,
}

impl StackCollector {
    /// `host_knobs`: the host-wide knobs, opened in the host's namespace.
    pub fn new(host_knobs: sysctl::HostKnobs) -> Result<Self> {
        Ok(Self {
            diag: SockDiag::new()?,
            owners: OwnerCache::default(),
            host_knobs,
            cookies: Vec::new(),
        })
    }

    pub fn collect(&mut self) -> Result<(Vec<SocketSample>, TcpSample)> {
        self.collect_with(|_, _| Ok(()))
    }

    /// As `collect`, with the sockets `others` returns (other namespaces'
    /// under `--all-netns`) after this namespace's: one owner scan serves
    /// them all, socket inodes being global. `others` gets this namespace's
    /// counters (snmp and netstat) to label its own namespace with.
    pub fn collect_with(
        &mut self,
        others: impl FnOnce(&BTreeMap<String, u64>, &mut Vec<SocketSample>) -> Result<()>,
    ) -> Result<(Vec<SocketSample>, TcpSample)> {
        let dump = self.diag.dump()?;
        let mut sockets = dump.sockets;
        self.cookies = dump.cookies;
        let counters = snmp::read_counters()?;
        let primary = sockets.len();
        others(&counters, &mut sockets)?;
        let live: HashSet<u32> = sockets
            .iter()
            .map(|s| s.inode)
            .filter(|i| *i != 0)
            .collect();
        self.owners.update(&live);
        let denied = self.owners.denied();
        for socket in &mut sockets {
            if socket.inode == 0 {
                continue;
            }
            socket.users = self.owners.users(socket.inode).iter().cloned().collect();
            socket.owner_denied = socket.users.is_empty() && denied;
        }
        let orphans = sockets[..primary].iter().filter(|s| s.is_orphan()).count() as u32;
        let tcp = TcpSample {
            states: dump.states,
            counters,
            sockstat: snmp::read_sockstat()?,
            knobs: sysctl::read_knobs(&self.host_knobs),
            unix_sockets: self.diag.unix_count()?,
            orphans,
        };
        // The dump reserves an eighth more than the last count: give the
        // slack back, as this Vec is kept (two samples at least) and at a
        // million sockets an eighth is 26 MB per sample (a big buffer
        // shrinks by mremap, without a copy).
        sockets.shrink_to_fit();
        Ok((sockets, tcp))
    }

    /// The socket cookies of the last dump, in the order of its sockets.
    pub fn cookies(&self) -> &[u64] {
        &self.cookies
    }
}
