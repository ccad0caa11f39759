//! What sockets move while the dumps list them without an owner: a rate
//! counts a socket's bytes under its owner in the sample, so those bytes
//! would count nowhere. Under load the owner look-up misses the sockets of
//! short connections (it had not run by the tick's deadline, or the
//! process closed the socket before it ran); their bytes up to that dump
//! were then lost, as the connection's end subtracts that dump's counters.
//! They are kept here, per socket, until a dump or the connection log
//! names the owner, and counted in that sample
//! (`ClosedSample::unowned_bytes`).

use crate::model::closed::ProcessBytes;
use crate::model::socket_table::Socket;
use crate::model::sockets::SocketUser;
use std::collections::HashMap;

/// tcpi_bytes_acked and tcpi_bytes_received, as the rates read them.
pub type Counters = (u64, u64);

/// The bytes of each socket listed without an owner, by cookie.
#[derive(Default)]
pub struct UnownedBytes {
    held: HashMap<u64, Counters>,
}

impl UnownedBytes {
    /// One dump's sighting of the socket `cookie` (not the first dump's:
    /// no rate counts before it). Without an owner, what it moved since
    /// `previous` (its counters in the previous dump; all it moved when
    /// that dump did not list it, as the rates take it) is kept; with one,
    /// what was kept is added to `named` under it.
    pub fn sighting(
        &mut self,
        cookie: u64,
        socket: &Socket,
        previous: impl FnOnce() -> Option<Counters>,
        named: &mut Vec<ProcessBytes>,
    ) {
        if let Some(user) = socket.users.first() {
            self.named(cookie, Some(user), named);
            return;
        }
        let Some(info) = socket.tcp else {
            return;
        };
        let moved = match previous() {
            None => Some((info.bytes_acked, info.bytes_received)),
            // Counters that went back (a reused cookie cannot, but the
            // rates' rule is kept): nothing moved.
            Some((acked, received)) => info
                .bytes_acked
                .checked_sub(acked)
                .zip(info.bytes_received.checked_sub(received)),
        };
        if let Some((sent, received)) = moved.filter(|m| *m != (0, 0)) {
            let held = self.held.entry(cookie).or_default();
            held.0 += sent;
            held.1 += received;
        }
    }

    /// The socket `cookie` has an owner now (`user`), or ended with none
    /// known: what was kept goes to `named`, or is dropped.
    pub fn named(&mut self, cookie: u64, user: Option<&SocketUser>, named: &mut Vec<ProcessBytes>) {
        if self.held.is_empty() {
            return;
        }
        if let (Some((sent, received)), Some(user)) = (self.held.remove(&cookie), user) {
            ProcessBytes::add(named, user, sent, received);
        }
    }

    /// Forgets the sockets `known` says are gone.
    pub fn retain(&mut self, known: impl Fn(u64) -> bool) {
        if !self.held.is_empty() {
            self.held.retain(|cookie, _| known(*cookie));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::SocketSample;
    use crate::model::sockets::{Proto, TCP_ESTABLISHED, TcpInfoSample};

    fn socket(owner: Option<u32>, acked: u64, received: u64) -> SocketSample {
        SocketSample {
            proto: Proto::Tcp,
            state: TCP_ESTABLISHED,
            local: "198.18.0.1:40000".parse().unwrap(),
            peer: "198.18.0.2:80".parse().unwrap(),
            recv_q: 0,
            send_q: 0,
            uid: 0,
            inode: 9,
            users: owner
                .map(|pid| SocketUser {
                    process: "wrk".into(),
                    pid,
                    fd: 3,
                })
                .into_iter()
                .collect(),
            owner_denied: false,
            owner_pending: owner.is_none(),
            tcp: Some(TcpInfoSample {
                bytes_acked: acked,
                bytes_received: received,
                ..Default::default()
            }),
            drops: None,
            rcvbuf: None,
            queue_streak: 0,
            v6only: false,
            netns: 0,
            limits: None,
        }
    }

    /// A socket listed twice without an owner keeps all it moved (from
    /// zero at its first sighting, as the rates count a new socket), and
    /// gives it to the owner the third dump names, once.
    #[test]
    fn bytes_moved_without_an_owner_go_to_the_owner_named_later() {
        let mut unowned = UnownedBytes::default();
        let mut named = Vec::new();
        unowned.sighting(
            5,
            &(socket(None, 101, 4_000)).as_socket(),
            || None,
            &mut named,
        );
        let second = socket(None, 301, 9_000);
        unowned.sighting(5, &second.as_socket(), || Some((101, 4_000)), &mut named);
        assert!(named.is_empty());
        unowned.sighting(
            5,
            &(socket(Some(7), 501, 9_500)).as_socket(),
            || None,
            &mut named,
        );
        assert_eq!(named.len(), 1);
        assert_eq!(named[0].user.pid, 7);
        assert_eq!((named[0].bytes_sent, named[0].bytes_received), (301, 9_000));
        unowned.sighting(
            5,
            &(socket(Some(7), 601, 9_600)).as_socket(),
            || None,
            &mut named,
        );
        assert_eq!(named.len(), 1, "given once");
        assert_eq!(named[0].conns, 1);
    }

    /// An end with no owner known drops the bytes; a socket gone from the
    /// dumps is forgotten.
    #[test]
    fn an_ownerless_end_and_a_forgotten_socket_leave_nothing() {
        let mut unowned = UnownedBytes::default();
        let mut named = Vec::new();
        unowned.sighting(5, &(socket(None, 10, 10)).as_socket(), || None, &mut named);
        unowned.sighting(6, &(socket(None, 20, 20)).as_socket(), || None, &mut named);
        unowned.named(5, None, &mut named);
        unowned.retain(|cookie| cookie != 6);
        let user = socket(Some(7), 0, 0).users.first().unwrap().clone();
        unowned.named(5, Some(&user), &mut named);
        unowned.named(6, Some(&user), &mut named);
        assert!(named.is_empty());
    }
}
