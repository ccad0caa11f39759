//! Reverse names for the hops, only with --resolve: the same resolver as
//! the live view's N (dns::reverse: PTR queries to the first nameserver of
//! /etc/resolv.conf, rate-capped, cached), so a slow server never holds the
//! probing up. A lookup still unanswered `WAIT_AT_END` after probing is
//! over is left out.

use crate::dns::reverse::{Options, ReverseNames, server};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::time::Duration;

/// How long the end of a trace waits for lookups still under way.
const WAIT_AT_END: Duration = Duration::from_secs(2);

pub struct Resolver {
    reverse: Option<ReverseNames>,
    asked: HashSet<IpAddr>,
    known: HashMap<IpAddr, String>,
}

impl Resolver {
    /// With `on`, starts the resolver; without a nameserver (or a socket)
    /// the hops stay numbers and one line says why.
    pub fn new(on: bool) -> Self {
        let reverse = on.then(|| {
            server(&[])
                .map_err(anyhow::Error::msg)
                .and_then(|s| Ok(ReverseNames::start(Options::new(s))?))
                .map_err(|e| eprintln!("netlens: no hop names: {e:#}"))
                .ok()
        });
        Resolver {
            reverse: reverse.flatten(),
            asked: HashSet::new(),
            known: HashMap::new(),
        }
    }

    /// Starts a lookup of `addr` unless one was started already.
    pub fn want(&mut self, addr: IpAddr) {
        if let Some(reverse) = &self.reverse
            && self.asked.insert(addr)
        {
            let _ = reverse.lookup(addr);
        }
    }

    /// Every name known so far.
    pub fn take(&mut self) -> &HashMap<IpAddr, String> {
        if let Some(reverse) = &self.reverse {
            for addr in &self.asked {
                if !self.known.contains_key(addr)
                    && let Some(name) = reverse.lookup(*addr)
                {
                    self.known.insert(*addr, name);
                }
            }
        }
        &self.known
    }

    /// Waits (a bounded time) for the lookups under way.
    pub fn finish(&mut self) {
        if let Some(reverse) = &self.reverse {
            let asked: Vec<IpAddr> = self.asked.iter().copied().collect();
            self.known.extend(reverse.wait_for(&asked, WAIT_AT_END));
        }
    }
}
