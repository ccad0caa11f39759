//! Reverse names for the hops, only with --resolve: through the system
//! resolver (getnameinfo: /etc/hosts, then the nameservers of
//! /etc/resolv.conf), one lookup per address on its own thread so a slow
//! resolver never holds the probing up. A lookup still unanswered after
//! `WAIT_AT_END` once probing is over is left out.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the end of a trace waits for lookups still under way.
const WAIT_AT_END: Duration = Duration::from_secs(2);

/// An address and its name, if it has one.
type Lookup = (IpAddr, Option<String>);

pub struct Resolver {
    on: bool,
    asked: HashSet<IpAddr>,
    known: HashMap<IpAddr, String>,
    results: (mpsc::Sender<Lookup>, mpsc::Receiver<Lookup>),
}

impl Resolver {
    pub fn new(on: bool) -> Self {
        Resolver {
            on,
            asked: HashSet::new(),
            known: HashMap::new(),
            results: mpsc::channel(),
        }
    }

    /// Starts a lookup of `addr` unless one was started already.
    pub fn want(&mut self, addr: IpAddr) {
        if !self.on || !self.asked.insert(addr) {
            return;
        }
        let sender = self.results.0.clone();
        let _ = std::thread::Builder::new()
            .name("netlens-ptr".into())
            .spawn(move || {
                let _ = sender.send((addr, reverse_name(addr)));
            });
    }

    /// Every name known so far.
    pub fn take(&mut self) -> &HashMap<IpAddr, String> {
        while let Ok((addr, name)) = self.results.1.try_recv() {
            if let Some(name) = name {
                self.known.insert(addr, name);
            }
        }
        &self.known
    }

    /// Waits (a bounded time) for the lookups under way.
    pub fn finish(&mut self) {
        let deadline = Instant::now() + WAIT_AT_END;
        let mut answered = self.known.len();
        while answered < self.asked.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.results.1.recv_timeout(left) {
                Ok((addr, name)) => {
                    answered += 1;
                    if let Some(name) = name {
                        self.known.insert(addr, name);
                    }
                }
                Err(_) => break,
            }
        }
    }
}

/// The address's name by getnameinfo(NI_NAMEREQD), or None.
fn reverse_name(addr: IpAddr) -> Option<String> {
    let IpAddr::V4(v4) = addr else { return None };
    let sin = super::socket::sockaddr(v4);
    let mut host = [0 as libc::c_char; 256];
    // SAFETY: the address and the output buffer live across the call, with
    // their true lengths; no service name is asked for.
    let rc = unsafe {
        libc::getnameinfo(
            (&raw const sin).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            host.as_mut_ptr(),
            host.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NAMEREQD,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: getnameinfo wrote a NUL-terminated string into host.
    let name = unsafe { std::ffi::CStr::from_ptr(host.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}
